//! Places a sending activation reserves ahead in a bounded mailbox: its *credit*
//! (docs/decisions/0075-bounded-send-credit.md).
//!
//! A sender's reservation is a read-modify-write of the mailbox's one word ([`Bound::reserve`]).
//! One producer actor streaming into a bounded consumer paid it per message: a locked
//! instruction, and the word's cache line pulled back from the consumer's core after each of its
//! releases. So a send made on a thread that runs activations reserves [`Bound::batch`] places
//! at once ([`Bound::reserve_chunk`]) and spends them one per message with a plain decrement of
//! this thread's credit; what is left goes back to the word when the activation ends
//! ([`give_back_reserved`], called where an activation ends in `runtime/exec.rs`), when a batch
//! of timers has fired (their actions are the sends a runtime thread makes outside any
//! activation: `runtime/timer/mod.rs`), or when the credit is used up and the thread reserves
//! for another mailbox. Like the
//! permits of tokio's bounded channel or credit-based flow control, a place is never used twice
//! and the capacity is never exceeded: a credit is a reservation already counted in the word.
//!
//! What becomes approximate, and its bound: while a sending activation runs, the word (what
//! `mailbox_len` reads and what a sender tests for `Full`) counts up to `batch − 1` places it has
//! reserved and not used yet. A chunk is granted only while it leaves the mailbox at most half
//! full, so the unused credits of all senders together never exceed half the capacity, and
//! near full every reservation is exact (one place, as before). All of it comes back when the
//! activations end, waking waiting `send_async` senders as a release does.
//!
//! Only the threads that run activations take credit (workers, the simulation's driver, thread
//! actors' own threads: [`mark_runtime_thread`]): a plain thread has no end at which to give it
//! back, so its sends reserve one place each, as do `send_async` (which may wait for room) and
//! `DropOldest` mailboxes (batch 1: which message a full send dooms is decided per place). The
//! thread is marked once, not each activation: a mark set at every activation's start cost
//! pingpong at one worker 4% (decision 0075); the test at an activation's end is one load of a
//! thread-local word.

use super::{Bound, Room, SharedBound};
use std::cell::Cell;
use std::ptr;

/// This thread's credit: the places reserved ahead for one mailbox, and whether the thread runs
/// activations (so that the credit will be given back).
struct Credit {
    /// The mailbox the credit is for: a reference of its [`SharedBound`] ([`SharedBound::keep`]), which keeps the
    /// bookkeeping alive (even if the actor and every reference to it go) until the credit is
    /// given back. Null: no credit.
    bound: Cell<*const Bound>,
    /// Places reserved ahead and not used yet (0 while `bound` is null).
    left: Cell<u32>,
    /// This thread runs activations ([`mark_runtime_thread`]): credit taken here is given back
    /// when the activation, or the timer batch, that took it ends.
    runtime: Cell<bool>,
}

thread_local! {
    /// This thread's credit. `const` and without a destructor: an access is an offset from the
    /// thread pointer, no lazy initialisation. (A thread never ends holding credit: every
    /// activation gives its credit back before it returns, panicking handlers included.)
    static CREDIT: Credit = const {
        Credit {
            bound: Cell::new(ptr::null()),
            left: Cell::new(0),
            runtime: Cell::new(false),
        }
    };
}

/// This thread runs activations (a worker, the simulation's driver, a thread actor's own thread):
/// its sends may reserve ahead. Set once, when the thread starts.
pub(crate) fn mark_runtime_thread() {
    CREDIT.with(|c| c.runtime.set(true));
}

/// An activation, or a batch of timer actions, ended on this thread: gives back its unused
/// credit (waking waiting senders as a release does). One load when it has none.
#[inline(always)]
pub(crate) fn give_back_reserved() {
    CREDIT.with(|c| {
        if !c.bound.get().is_null() {
            c.give_back();
        }
    });
}

/// Spends one place of this thread's credit for `bound`, if it holds some (`true`): the send's
/// fast path, inlined where the message is pushed.
#[inline(always)]
pub(crate) fn spend_reserved(bound: &SharedBound) -> bool {
    CREDIT.with(|c| {
        let left = c.left.get();
        let ours = left > 0 && ptr::eq(c.bound.get(), &**bound);
        if ours {
            c.left.set(left - 1);
        }
        ours
    })
}

/// Reserves a place for one user message to the bounded mailbox `bound` once
/// [`spend_reserved`] found no credit for it here: on a thread that runs activations, a new
/// chunk of credit ([`Bound::reserve_chunk`]); else, or while this thread's credit is for
/// another mailbox, one place ([`Bound::reserve`]). [`Room::Reserved`] or [`Room::Full`].
#[inline]
pub(crate) fn reserve_more(bound: &SharedBound) -> Room {
    if bound.batch == 1 {
        return bound.reserve();
    }
    CREDIT.with(|c| c.reserve_more(bound))
}

impl Credit {
    #[inline]
    fn reserve_more(&self, bound: &SharedBound) -> Room {
        let same = ptr::eq(self.bound.get(), &**bound);
        debug_assert!(!same || self.left.get() == 0, "spend_reserved comes first");
        // On a plain thread nobody would give credit back. With credit left for another
        // mailbox, keep it (a sender alternating between two bounded mailboxes would otherwise
        // give back and reserve per message) and reserve this one place alone.
        if !self.runtime.get() || (!same && self.left.get() > 0) {
            return bound.reserve();
        }
        self.refill(bound, same)
    }

    /// Takes a new chunk of credit for `bound` (the old credit, for `bound` when `same`, is used
    /// up), spending one place of it now.
    #[cold]
    fn refill(&self, bound: &SharedBound, same: bool) -> Room {
        let got = bound.reserve_chunk();
        if got == 0 {
            return Room::Full;
        }
        self.left.set(got - 1);
        if !same {
            // The new credit is in place before the old mailbox is let go of: dropping it may
            // run other code (its waiters' wakers), which may send on this thread.
            let old = self.bound.replace(bound.keep());
            Self::let_go(old);
        }
        Room::Reserved
    }

    /// Gives the unused places back and lets go of the mailbox.
    #[cold]
    #[inline(never)]
    fn give_back(&self) {
        // Taken out first: the release wakes waiting senders, whose wakers may run code that
        // sends on this thread and takes credit anew (an inline run): that credit is left alone.
        let held = self.bound.replace(ptr::null());
        let left = self.left.replace(0);
        if left > 0 && !held.is_null() {
            // SAFETY: a non-null `bound` is a reference `SharedBound::keep` gave us, still ours
            // until `let_go` below.
            unsafe { &*held }.release(left);
        }
        Self::let_go(held);
    }

    /// Lets go of a mailbox credit was held for (null: none); its places are given back or used.
    fn let_go(held: *const Bound) {
        if !held.is_null() {
            // SAFETY: `held` came from `SharedBound::keep` in `refill` and was taken out of the
            // credit by the caller, so this is the one place that lets it go.
            unsafe { SharedBound::let_go(held) };
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::runtime::options::Overflow;

    fn bound(capacity: usize) -> SharedBound {
        SharedBound::new(Bound::new(capacity, Overflow::Reject))
    }

    /// A place for one message, as a send takes it (`deliver.rs`).
    fn reserve_ahead(bound: &SharedBound) -> Room {
        if spend_reserved(bound) {
            return Room::Reserved;
        }
        reserve_more(bound)
    }

    #[test]
    fn a_runtime_thread_reserves_a_batch_ahead_and_gives_back_what_it_did_not_use() {
        let b = bound(1024); // batch 32
        mark_runtime_thread();
        for _ in 0..5 {
            assert_eq!(reserve_ahead(&b), Room::Reserved);
        }
        assert_eq!(b.len(), 32, "one chunk reserved ahead");
        for _ in 0..28 {
            assert_eq!(reserve_ahead(&b), Room::Reserved);
        }
        assert_eq!(b.len(), 64, "the 33rd send took a second chunk");
        give_back_reserved();
        assert_eq!(b.len(), 33, "the unused 31 came back");
        assert_eq!(b.references(), 1, "the credit let go of the mailbox");
    }

    #[test]
    fn a_plain_thread_reserves_one_place_per_message() {
        let b = bound(1024);
        for _ in 0..3 {
            assert_eq!(reserve_ahead(&b), Room::Reserved);
        }
        assert_eq!(b.len(), 3);
        assert_eq!(b.references(), 1);
    }

    #[test]
    fn past_half_full_every_reservation_is_exact_and_the_capacity_holds() {
        let b = bound(64); // batch 8
        mark_runtime_thread();
        let mut reserved = 0;
        while reserve_ahead(&b) == Room::Reserved {
            reserved += 1;
            assert!(b.len() <= 64);
        }
        assert_eq!(reserved, 64, "every place could be used, none twice");
        give_back_reserved();
        assert_eq!(b.len(), 64, "nothing left unused to give back");
        // Half full and below: chunks; above: one place at a time.
        let c = bound(64);
        for _ in 0..30 {
            assert_eq!(c.reserve(), Room::Reserved);
        }
        mark_runtime_thread();
        assert_eq!(reserve_ahead(&c), Room::Reserved);
        assert_eq!(c.len(), 31, "30 + 8 > 32: one place only");
        give_back_reserved();
    }

    #[test]
    fn credit_for_one_mailbox_is_kept_while_another_is_sent_to() {
        let (a, b) = (bound(1024), bound(1024));
        mark_runtime_thread();
        assert_eq!(reserve_ahead(&a), Room::Reserved);
        assert_eq!(reserve_ahead(&b), Room::Reserved);
        assert_eq!(reserve_ahead(&a), Room::Reserved);
        assert_eq!((a.len(), b.len()), (32, 1));
        give_back_reserved();
        assert_eq!((a.len(), b.len()), (2, 1));
        // The next activation: credit again, given back at its end.
        assert_eq!(reserve_ahead(&b), Room::Reserved);
        assert_eq!(b.len(), 33);
        give_back_reserved();
        assert_eq!(b.len(), 2);
    }

    #[test]
    fn giving_credit_back_wakes_a_waiting_sender() {
        let b = bound(64);
        mark_runtime_thread();
        assert_eq!(reserve_ahead(&b), Room::Reserved); // 8 reserved, 7 unused
        while b.reserve() == Room::Reserved {}
        let (count, waker) = super::super::tests::waker();
        assert!(b.register(&mut None, &waker), "full: the sender waits");
        give_back_reserved();
        assert_eq!(b.len(), 57);
        assert_eq!(count.0.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    /// Wakes by sending to `to` on the waking thread (as an actor run inline would).
    struct SendOnWake(std::sync::Arc<SharedBound>);
    impl std::task::Wake for SendOnWake {
        fn wake(self: std::sync::Arc<Self>) {
            assert_eq!(reserve_ahead(&self.0), Room::Reserved);
        }
    }

    #[test]
    fn credit_taken_while_credit_is_given_back_is_kept() {
        let (a, b) = (bound(64), std::sync::Arc::new(bound(1024)));
        mark_runtime_thread();
        assert_eq!(reserve_ahead(&a), Room::Reserved); // 8 reserved, 7 unused
        while a.reserve() == Room::Reserved {}
        let waker = std::task::Waker::from(std::sync::Arc::new(SendOnWake(b.clone())));
        assert!(a.register(&mut None, &waker), "full: the sender waits");
        // Giving A's 7 places back wakes the waiter, which takes a chunk of B on this thread.
        give_back_reserved();
        assert_eq!(a.len(), 57);
        assert_eq!(b.len(), 32, "B's chunk, reserved from inside the give-back");
        give_back_reserved();
        assert_eq!(
            b.len(),
            1,
            "B's unused 31 came back: the credit was not lost"
        );
        assert_eq!(b.references(), 1);
    }
}
