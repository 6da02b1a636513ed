//! The cell at the end: terminating an actor at shutdown once no worker runs
//! ([`Vtable::shutdown`]), the type-erased handle a graceful shutdown stops and describes actors
//! with ([`Control`](crate::runtime::task::Control)), the stopped cell a spawn gets once the system has shut down, and the dead
//! letters a cell reports (to the end: those its `Drop` finds).
//!
//! [`Vtable::shutdown`]: crate::runtime::task::Vtable

use super::{ActorCell, Behavior, CellBase, Envelope, Life};
use crate::mailbox::Pop;
use crate::runtime::task::{Control, Header};
use std::ptr::NonNull;
use std::sync::Arc;

impl<B: Behavior> Control for ActorCell<B> {
    fn stop_signal(&self) -> bool {
        self.enqueue_after_queued(Envelope::Stop).is_ok()
    }

    fn describe(&self) -> (Option<String>, &'static str) {
        (
            self.name().map(|n| n.to_string()),
            std::any::type_name::<B>(),
        )
    }

    fn start_signal(&self) -> bool {
        self.enqueue_after_queued(Envelope::Start).is_ok()
    }

    fn child_failed(&self, failure: crate::runtime::ActorFailure) -> bool {
        self.enqueue(Envelope::Call(Box::new(move |actor, ctx| {
            actor.child_failed(ctx, failure)
        })))
        .is_ok()
    }
}

impl<B: Behavior> ActorCell<B> {
    /// `n` user messages to this actor will never be handled (none if `n` is 0): counted and
    /// recorded (`runtime/dead_letters.rs`). Every stopping actor and every dropped cell reports
    /// its count, nearly always 0: tested here, inline, so that they do not pay a call into the
    /// recording code (callgrind, Savina fib: ~40 instructions per actor).
    #[inline]
    pub(crate) fn dead_letters(&self, n: u64) {
        if n == 0 {
            return;
        }
        self.runtime.shared.note_dead_letters(
            self.id(),
            n,
            std::any::type_name::<B::Msg>(),
            self.named,
        );
    }

    pub(super) unsafe fn shutdown_raw(ptr: NonNull<Header>) {
        // SAFETY: the header is at offset 0 of a live `ActorCell<B>` (the first field of its
        // `CellBase`, itself the first field; both repr(C)); no activation runs (the caller's
        // contract).
        let cell = unsafe { ptr.cast::<Self>().as_ref() };
        // SAFETY: no activation runs, so we have exclusive access to `inner`.
        let inner = unsafe { &mut *cell.inner.get() };
        cell.terminate(inner, crate::runtime::stop_reason::StopReason::Killed, None);
    }

    pub(super) unsafe fn control_raw(ptr: NonNull<Header>) -> Arc<dyn Control> {
        let cell = ptr.cast::<Self>().as_ptr() as *const Self;
        // SAFETY: cells always live in an `Arc`, and this one is alive (the caller's contract), so
        // its strong count is at least one while we add ours.
        unsafe {
            Arc::increment_strong_count(cell);
            Arc::from_raw(cell)
        }
    }

    /// A spawn the shut-down system refused (its registry is closed): the actor never runs. Its
    /// mailbox is closed (a direct mailbox's engine refuses its letters too), so every send fails
    /// with `Stopped` (and an ask at once), and its state is dropped now. Nothing was counted as
    /// spawned or stopped.
    pub(super) fn stillborn(&self) {
        self.mailbox.close();
        if self.mailbox.is_direct() {
            // No life reference was taken yet: no release letter.
            self.runtime.letters().close(self.task(), None);
        }
        if let Some(bound) = &self.bound {
            bound.close();
        }
        self.runtime.shared.forget_name(self.id(), self.named);
        // SAFETY: the cell was neither registered nor scheduled: no other thread can reach its
        // state.
        let inner = unsafe { &mut *self.inner.get() };
        inner.life = Life::Gone;
    }
}

impl CellBase {
    /// Whether this actor's system is shutting down past its graceful part (its workers are
    /// stopping) or has shut down: a spawn now would never run.
    pub(crate) fn system_stopping(&self) -> bool {
        self.runtime.shared.lifecycle.phase() >= crate::runtime::lifecycle::STOPPING
    }
}

impl<B: Behavior> Drop for ActorCell<B> {
    fn drop(&mut self) {
        // Messages claimed before the close but written after the final drain: never lost silently.
        let mut dropped = 0;
        // SAFETY: `&mut self`: nobody else touches the mailbox.
        while let Pop::Item(envelope) = unsafe { self.mailbox.pop() } {
            if matches!(envelope, Envelope::Msg(_)) {
                dropped += 1;
            }
        }
        self.dead_letters(dropped);
    }
}
