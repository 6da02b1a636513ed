//! The sending side of a cell, as an [`crate::ActorRef`] sees it ([`Deliver`]): queueing a user
//! message, and for a bounded mailbox reserving its place first and applying the overflow rule
//! (docs/bounded-mailboxes.md); and the places an async actor's stash keeps counted (`actor/async_actor/`).

use super::bound::{self, Room, SharedBound};
use super::{ActorCell, Behavior, Envelope, Watchable};
use crate::runtime::errors::TrySendError;
use crate::runtime::options::Overflow;
use crate::runtime::{ActorId, Runtime};
use std::any::type_name;
use std::sync::Arc;
use std::task::Waker;

/// How a send to a full bounded mailbox behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `send`: the overflow rule decides.
    Send,
    /// `try_send`: answer `Full`, counted in `mailbox_full`.
    Try,
    /// `send_async`: answer `Full` (the caller waits for room), not counted.
    Wait,
}

/// The type-erased receiving side of an actor, as an [`crate::ActorRef`] sees it.
pub(crate) trait Deliver<M>: Send + Sync {
    /// Queues a message (`send`): a full bounded mailbox applies its overflow rule. Hands the
    /// message back if the actor has stopped, or if the mailbox is full under `Reject` (the
    /// caller tells which by [`is_stopped`](Self::is_stopped): the same `Result<(), M>` as before
    /// bounded mailboxes existed keeps the unbounded send as lean as it was).
    fn deliver(&self, msg: M) -> Result<(), M>;
    /// Queues a message if there is room (`try_send` when `counted`, `send_async` otherwise);
    /// never drops it.
    fn try_deliver(&self, msg: M, counted: bool) -> Result<(), TrySendError<M>>;
    /// The mailbox's capacity (`None`: unbounded).
    fn capacity(&self) -> Option<usize>;
    /// User messages queued (exact when bounded; otherwise the mailbox's best-effort reading).
    fn mailbox_len(&self) -> usize;
    /// `send_async` found the mailbox full: wait for room (see [`Bound::register`]); `false`
    /// means there is room now (or the mailbox is unbounded), try again.
    fn register_waiter(&self, key: &mut Option<u64>, waker: &Waker) -> bool;
    /// A waiting `send_async` is done or gave up (see [`Bound::unregister`]).
    fn unregister_waiter(&self, key: u64, pass_on: bool);
    /// Queues the stop signal; `false` if the actor has stopped.
    fn stop_signal(&self) -> bool;
    fn id(&self) -> ActorId;
    fn is_stopped(&self) -> bool;
    /// Sets or clears the hub mark from a plain thread; `false` if the actor has stopped.
    fn set_hub(&self, hub: bool) -> bool;
    fn acquire_handle(&self);
    fn release_handle(&self);
    /// The runtime of the actor's system.
    fn system_runtime(&self) -> &Arc<Runtime>;
    /// The actor as death watch and links see it.
    fn watchable(self: Arc<Self>) -> Arc<dyn Watchable>;
    /// Marks the actor registered under a name, so that `terminate` frees the name. Only with
    /// the live registry's shard lock of the actor held, and only while the actor is registered
    /// there (not yet stopped): see `actor/names.rs`.
    fn mark_registered(&self);
    /// Where the actor lives if it is on another node (feature `remote`): its node and its id
    /// there. A reference to it travels as that address instead of being exported again.
    #[cfg(feature = "remote")]
    fn wire_address(&self) -> Option<(u128, u64)> {
        None
    }
}

/// The message inside an envelope that `enqueue` handed back.
pub(super) fn message<B: Behavior>(envelope: Envelope<B>) -> B::Msg {
    match envelope {
        Envelope::Msg(message) => message,
        _ => unreachable!("enqueue hands back what it was given"),
    }
}

impl<B: Behavior> ActorCell<B> {
    /// A user message to a bounded mailbox: reserve its place (or apply the overflow rule), then
    /// queue it. Out of line: unbounded actors never call it.
    #[inline(never)]
    fn deliver_bounded(
        &self,
        bound: &SharedBound,
        msg: B::Msg,
        mode: Mode,
    ) -> Result<(), TrySendError<B::Msg>> {
        let overflow = bound.overflow();
        let room = match mode {
            Mode::Send if overflow == Overflow::DropOldest => bound.make_room(),
            // The thread's places reserved ahead are spent (`deliver`, `try_deliver`): more of
            // them, or one (`bound/credit.rs`).
            Mode::Send | Mode::Try => bound::reserve_more(bound),
            // `send_async` may wait for room: one exact place.
            Mode::Wait => bound.reserve(),
        };
        if room == Room::Full {
            // A stopped actor's mailbox is refused as stopped, whatever its count says.
            if self.mailbox.is_closed() {
                return Err(TrySendError::Stopped(msg));
            }
            let shared = &self.runtime.shared;
            match (mode, overflow) {
                (Mode::Send, Overflow::DropNewest) => {
                    shared.note_overflow_dropped(self.id(), 1, type_name::<B::Msg>(), self.named);
                    return Ok(());
                }
                (Mode::Wait, _) => {}
                _ => shared.note_mailbox_full(),
            }
            if self.runtime.wants_wait_notice() {
                // A thread that finds a mailbox full waits for the actor one way or another:
                // an engine that runs only when someone waits (the simulation) runs now.
                self.runtime.core().waiting();
            }
            return Err(TrySendError::Full(msg));
        }
        self.enqueue(Envelope::Msg(msg)).map_err(|envelope| {
            bound.unreserve(room);
            TrySendError::Stopped(message(envelope))
        })
    }
}

impl<B: Behavior> ActorCell<B> {
    /// `Deliver::deliver` to a bounded actor without a place reserved ahead (`deliver` spent
    /// those), or to a direct mailbox. A direct mailbox (the message-centric engine) queues
    /// nothing: the message goes straight to the engine, its envelope made where the letter is
    /// written (`post_message`). Out of line: the plain send stays as short as it was.
    #[inline(never)]
    fn deliver_other(&self, msg: B::Msg) -> Result<(), B::Msg> {
        if let Some(bound) = &self.bound {
            return self
                .deliver_bounded(bound, msg, Mode::Send)
                .map_err(TrySendError::into_inner);
        }
        self.post_message(msg)
    }

    /// Pushes a user message whose place, if the mailbox is bounded, is already spent (a place
    /// this thread reserved ahead, `bound/credit.rs`). A stopped actor hands the message back
    /// and the place is returned. The one push of both sends, inlined into each: `deliver`'s
    /// fast path and `try_deliver`'s.
    #[inline(always)]
    fn push_counted(&self, msg: B::Msg) -> Result<(), B::Msg> {
        self.enqueue_inlined(Envelope::Msg(msg))
            .map_err(|envelope| {
                if let Some(bound) = &self.bound {
                    bound.unreserve(Room::Reserved);
                }
                message(envelope)
            })
    }

    /// A message an async actor stashed counts against its mailbox's capacity (nothing for an
    /// unbounded actor): see `Bound::hold`.
    pub(crate) fn hold_place(&self) {
        if let Some(bound) = &self.bound {
            bound.hold();
        }
    }

    /// A stashed message left the stash: its place is free (see `Bound::release_held`).
    pub(crate) fn release_place(&self) {
        if let Some(bound) = &self.bound {
            bound.release_held();
        }
    }
}

impl<B: Behavior> Deliver<B::Msg> for ActorCell<B> {
    /// An unbounded actor's send tests `plain_send` and pushes. A bounded one's spends a place
    /// this thread reserved ahead (`bound/credit.rs`) and pushes through the same inlined push:
    /// through the out-of-line `deliver_other`, the call and the message's copy into its frame
    /// cost a bound never reached a quarter of counting's throughput at 2 workers
    /// (docs/decisions/0089-bounded-send-credit-inline.md). Everything else goes out of line.
    #[inline]
    fn deliver(&self, msg: B::Msg) -> Result<(), B::Msg> {
        if !self.plain_send {
            match &self.bound {
                Some(bound) if bound::spend_reserved(bound) => {}
                _ => return self.deliver_other(msg),
            }
        }
        self.push_counted(msg)
    }

    /// `try_send` (`counted`) and `send_async`'s attempts: a place reserved ahead is spent as in
    /// `deliver` (never for `send_async`, which may wait for room: one exact place).
    fn try_deliver(&self, msg: B::Msg, counted: bool) -> Result<(), TrySendError<B::Msg>> {
        if let Some(bound) = &self.bound {
            if !(counted && bound::spend_reserved(bound)) {
                let mode = if counted { Mode::Try } else { Mode::Wait };
                return self.deliver_bounded(bound, msg, mode);
            }
        }
        self.push_counted(msg).map_err(TrySendError::Stopped)
    }

    fn capacity(&self) -> Option<usize> {
        self.bound.as_ref().map(|bound| bound.capacity())
    }

    fn mailbox_len(&self) -> usize {
        match &self.bound {
            Some(bound) => bound.len(),
            None => self.mailbox.len_estimate(),
        }
    }

    fn register_waiter(&self, key: &mut Option<u64>, waker: &Waker) -> bool {
        self.bound
            .as_ref()
            .is_some_and(|bound| bound.register(key, waker))
    }

    fn unregister_waiter(&self, key: u64, pass_on: bool) {
        if let Some(bound) = &self.bound {
            bound.unregister(key, pass_on);
        }
    }

    fn stop_signal(&self) -> bool {
        self.enqueue_after_queued(Envelope::Stop).is_ok()
    }

    fn id(&self) -> ActorId {
        self.header.id
    }

    fn is_stopped(&self) -> bool {
        self.mailbox.is_closed()
    }

    fn set_hub(&self, hub: bool) -> bool {
        ActorCell::set_hub(self, hub, None)
    }

    fn acquire_handle(&self) {
        self.handles.acquire();
    }

    fn release_handle(&self) {
        ActorCell::release_handle(self);
    }

    fn system_runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }

    fn watchable(self: Arc<Self>) -> Arc<dyn Watchable> {
        self
    }

    fn mark_registered(&self) {
        // Relaxed: the caller holds the lock `terminate` takes before it reads the mark.
        self.registered
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }
}
