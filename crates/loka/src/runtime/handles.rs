//! Counting an actor's live references, and the stop-when-unreferenced rule.
//!
//! An actor stops by itself once no [`crate::ActorRef`] to it exists and nothing is queued in its
//! mailbox: it can never receive anything again. The count is of handles (references and pending
//! ask continuations), not of `Arc` strong counts, which also include the runtime's own references.
//!
//! The protocol: the last handle's drop ([`Handles::release`] returning `true`) queues an
//! `Unreferenced` signal *after* every send made through that handle. The activation that receives
//! the signal stops only if [`Handles::can_stop`] holds: no handle exists (one may have been made
//! since, e.g. by `ctx.myself()`) and nothing is queued behind the signal. Every reference's last
//! drop queues a new signal after that reference's sends, so the final signal always finds an
//! empty mailbox. The loom model in `runtime/loom_tests.rs` checks that no message is lost.

use crate::mailbox::Mailbox;
use crate::sync::AtomicUsize;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed};

/// Live handles to one actor.
pub(crate) struct Handles(AtomicUsize);

impl Handles {
    /// A count of `n` handles.
    pub(crate) fn new(n: usize) -> Self {
        Handles(AtomicUsize::new(n))
    }

    /// One more handle, made from an existing one or by the actor itself. Relaxed: creating a
    /// reference needs no ordering (as `Arc::clone`).
    #[inline]
    pub(crate) fn acquire(&self) {
        self.0.fetch_add(1, Relaxed);
    }

    /// One handle fewer; `true` when it was the last, and the caller must then queue the
    /// `Unreferenced` signal. AcqRel: the handle's earlier sends (claims in the mailbox) happen
    /// before the decrement, and the last dropper sees every other handle's sends.
    #[must_use = "the last release must queue the Unreferenced signal"]
    #[inline]
    pub(crate) fn release(&self) -> bool {
        self.0.fetch_sub(1, AcqRel) == 1
    }

    /// Whether no handle exists (Acquire: every send made through a dropped handle is visible).
    #[inline]
    pub(crate) fn none_left(&self) -> bool {
        self.0.load(Acquire) == 0
    }

    /// Whether an actor that received the `Unreferenced` signal may stop.
    ///
    /// Order matters: handles first, then the queue. A sender finishes its claim before it drops
    /// its handle (AcqRel decrement), so once this has read 0 with Acquire, every claim made
    /// through a handle is visible to `has_more`. The other order loses a reply whose sender sends
    /// and drops its handle between the two reads.
    ///
    /// # Safety
    /// The caller holds the actor's schedule (it is the mailbox's single consumer).
    #[inline]
    pub(crate) unsafe fn can_stop<T>(&self, mailbox: &Mailbox<T>) -> bool {
        if self.0.load(Acquire) != 0 {
            return false;
        }
        // SAFETY: single consumer, the caller's contract.
        !unsafe { mailbox.has_more() }
    }
}
