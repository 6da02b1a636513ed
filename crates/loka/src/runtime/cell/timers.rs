//! An actor's own timers: the ones it armed through its context (cancelled when it stops, so a
//! stopped actor's timers never fire and hold no memory), and its receive timeout (docs/timers.md).
//!
//! Kept in the cell's extras (`extras.rs`), null for actors that never arm a timer: they pay one
//! null test per user message (the receive timeout's "a message came" mark), nothing else. Only
//! the activation holding the actor's schedule touches it, like the actor's state.

use super::{ActorCell, Behavior, CellContext, Envelope};
use crate::runtime::timer::{TimerId, Timers};
use std::sync::Arc;

/// What an actor that armed timers keeps.
#[derive(Default)]
pub(crate) struct OwnTimers {
    /// Timers armed through the context; pruned of finished ones as it grows.
    armed: Vec<TimerId>,
    /// Length after the last pruning (prune again once it doubled).
    pruned_at: usize,
    /// The receive timeout, if one is set.
    pub(crate) receive: Option<ReceiveTimeout>,
    /// Receive timeout checks armed so far (each check's generation).
    pub(crate) checks: u64,
}

/// A receive timeout (see `Context::set_receive_timeout`): the time it is measured from, and one
/// timer armed for the deadline that time gave when it was armed. A message only moves `since`
/// (no timer is touched on the message path); the check, when it comes, sees the deadline moved
/// and re-arms for the remainder.
pub(crate) struct ReceiveTimeout {
    /// The armed check: a periodic timer of period `after` (periodic so that quiescence does not
    /// wait for it, as for any interval), re-armed whenever the deadline moved.
    pub(crate) check: TimerId,
    /// Which check is the current one (`OwnTimers::checks` when it was armed): a call queued by
    /// one replaced since is ignored.
    pub(crate) generation: u64,
    /// The timeout asked for.
    pub(crate) after: std::time::Duration,
    /// `after` in nanoseconds, saturated: a deadline past `u64::MAX` ns (584 years) is never.
    pub(crate) after_ns: u64,
    /// Nanoseconds on the timer clock of the later of: the last user message's handling (read
    /// before its handler), the end of the previous timeout's handler, the setting.
    pub(crate) since: u64,
}

impl ReceiveTimeout {
    /// When the timeout is due (ns on the timer clock; `u64::MAX`: never).
    pub(crate) fn due(&self) -> u64 {
        self.since.saturating_add(self.after_ns)
    }
}

impl OwnTimers {
    /// Records a timer armed through the context; `true` when the list has doubled since it was
    /// last pruned: then call [`prune`](Self::prune).
    pub(crate) fn add(&mut self, timer: TimerId) -> bool {
        self.armed.push(timer);
        self.armed.len() > 2 * self.pruned_at.max(16)
    }

    /// Forgets the timers that fired or were cancelled (`timers`: the service they were armed
    /// in).
    pub(crate) fn prune(&mut self, timers: &Timers) {
        timers.retain_pending(&mut self.armed);
        self.pruned_at = self.armed.len();
    }
}

impl OwnTimers {
    /// Cancels every timer (the actor is terminating).
    pub(super) fn cancel_all(&self, timers: &Timers) {
        for timer in self
            .armed
            .iter()
            .chain(self.receive.as_ref().map(|r| &r.check))
        {
            timers.cancel(timer);
        }
    }
}

impl<B: Behavior> ActorCell<B> {
    /// A user message is being handled: note it for the receive timeout. One null test for an
    /// actor without timers or futures; the rest out of line.
    #[inline(always)]
    pub(super) fn note_message(&self) {
        // SAFETY: our caller is the activation holding the schedule.
        if let Some(extras) = unsafe { self.extras_if_any() } {
            note_heard(extras, &self.runtime);
        }
    }
}

impl<B: Behavior> CellContext<B> {
    /// A strong reference to the running actor that also counts as a handle (it keeps the actor
    /// from stopping as unreferenced): what a pending timer or continuation of the actor holds.
    /// One strong count taken, not a clone of a clone that is then dropped (two atomic updates
    /// fewer on the cell's count, a line the actor's senders also touch, per timer armed).
    pub(crate) fn hold(&self) -> Hold<B> {
        let cell = self.cell_arc();
        cell.acquire_handle();
        Hold(cell)
    }

    /// The running actor's own timers, created on first use.
    pub(crate) fn own_timers(&mut self) -> &mut OwnTimers {
        // SAFETY: a context exists only during an activation of its actor, which holds the
        // schedule; `&mut self` keeps this the only reference handed out.
        unsafe { &mut self.cell().extras().timers }
    }
}

/// An actor held by a pending timer or continuation: a strong reference plus a handle, released
/// when dropped.
pub(crate) struct Hold<B: Behavior>(Arc<ActorCell<B>>);

impl<B: Behavior> Hold<B> {
    /// Queues a closure to run with the actor's state, like a message; `false` if the actor has
    /// stopped (the closure is dropped).
    pub(crate) fn call(&self, f: impl FnOnce(&mut B, &mut B::Ctx) + Send + 'static) -> bool {
        self.0.enqueue(Envelope::Call(Box::new(f))).is_ok()
    }

    /// Whether the actor has stopped.
    pub(crate) fn is_stopped(&self) -> bool {
        self.0.mailbox.is_closed()
    }
}

impl<B: Behavior> Drop for Hold<B> {
    fn drop(&mut self) {
        self.0.release_handle();
    }
}

/// The receive timeout's "a message came now" mark (an actor that uses a feature): one clock
/// read, and only with a receive timeout set; the armed check is left alone (re-arming it here
/// would cost every such message a lock of the timer shard). A timeout long enough reads the
/// coarse clock, as a long timer does: the mark is then later than the message by up to two
/// kernel ticks, never earlier (docs/decisions/0088-long-timers-read-the-coarse-clock.md).
#[cold]
#[inline(never)]
fn note_heard(extras: &mut super::Extras, runtime: &crate::runtime::Runtime) {
    if let Some(receive) = &mut extras.timers.receive {
        receive.since = runtime.timer_stamp_ns(receive.after_ns);
    }
}
