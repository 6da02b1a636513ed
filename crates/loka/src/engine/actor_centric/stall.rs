//! The stall guard: what a worker publishes so that, while it stays in one handler, others can
//! take the actors only it could run (its *hostages*: the next slot and the held actor) and notice
//! a handler that blocks. The rules and their thresholds: `docs/stalls.md`.
//!
//! ## Why a protocol
//! The next slot and the hold (`worker/`) are what make a ping-pong pair or a ring cheap: the
//! owner puts a woken actor in a slot no thief can take, and reads it back with plain loads and
//! stores. Their cost is that an actor woken into the slot by a handler waits for the *end* of
//! that handler; a handler that then computes or sleeps for 250 ms holds it hostage for 250 ms
//! while other workers sit idle (tokio has the same problem with its LIFO slot).
//!
//! Making the slots stealable with a read-modify-write on every access would cost a locked
//! instruction per message, as much as the rest of a send. Instead the owner marks when it runs
//! *user code* (an activation's handlers), and a rescuer takes the slots only while the owner is
//! there, which is exactly when the owner does not touch them.
//!
//! ## The protocol
//! * `state = word | IN_USER`, written only by the owner, `word` new (even) for each activation.
//!   [`StallWatch::enter_user`] stores it with `IN_USER` (`Release`: the slots' contents written
//!   before are visible to a rescuer that reads this state with `Acquire`) before an activation,
//!   and again when a handler's wake-up is done with the slot. [`StallWatch::leave_user`] stores the word without
//!   `IN_USER`, then a *light* barrier, then loads `claim`; if a rescuer is at work it waits for it.
//!   Between `leave_user` and the next `enter_user` the owner uses the slots with plain accesses.
//! * A rescuer ([`StallWatch::rescue`]) that saw the same `IN_USER` state for longer than the
//!   slot bound claims `claim` (compare-and-swap 0 → `RESCUING`: one rescuer at a time), runs a
//!   *heavy* barrier, and loads `state` again. If it is still the state it saw, it takes both
//!   slots and stores `claim = 0` (`Release`); otherwise it gives the claim back untouched.
//!
//! **Why no actor runs twice.** The light and heavy barriers pair as two `SeqCst` fences would
//! (`sync::asymmetric`): of the owner's store to `state` then load of `claim`, and the rescuer's
//! store to `claim` then load of `state`, at least one load sees the other side's store. If the
//! rescuer's load misses the owner's `leave_user`, the owner's load sees `RESCUING` and it waits
//! until the rescuer is done, then (by the `Release`/`Acquire` pair on `claim`) sees the emptied
//! slots. If the owner's load misses the claim, the rescuer's load sees the state changed, and it
//! backs off without touching a slot. A rescuer that sees the same state finds the owner in user
//! code: the owner's next slot access comes after a `leave_user`, which waits for the claim.
//! A state seen twice, `slot_us` apart, is one activation that lasted that long: words never
//! repeat (a word naming the running actor did, across a ping-pong pair's activations, and the
//! rescues it caused tore the pair every few ms). Safety does not rest on it: what makes a rescue
//! safe is that the owner is in user code when the rescuer checks after its barrier.
//!
//! **Why nothing is lost.** A rescuer takes a slot's actor together with its schedule (the
//! mailbox protocol: whoever holds a runnable actor is the only one who may run it), so it must
//! run or queue it: an idle worker runs the next slot's actor itself; the monitor queues it where
//! any worker may steal it. A held actor is drained and still scheduled: the rescuer ends its hold
//! ([`crate::runtime::TaskRef::release`]) and queues it if a message came.
//!
//! * A handler's first wake-up in an activation does not step out of user code: the owner
//!   publishes it in `pending` with one `Release` store ([`StallWatch::publish_pending`]) and
//!   writes `pending` no more until the activation is over; a rescuer takes it with a swap, so the
//!   store and the swap cannot both keep it. After `leave_user` the owner takes what is left and
//!   puts it in the next slot. A second wake-up in the same activation steps out of user code
//!   for the slot, as above.
//!
//! The owner's cost: per activation two plain stores of `state`, a compiler fence and one load of
//! `claim` from a line it owns, and one test of a flag; per wake-up made by a handler a load of
//! `state`, a test and a store (a second one in the same activation: the step out and back). Without the guard (one worker, or `stall.guard = false`) a wake-up pays the load of
//! `state` only. No locked
//! instruction (docs/decisions/0049-stall-guard.md has the A/B). `crate::engine::actor_centric::loom_tests`
//! checks the protocol on this code.

use crate::runtime::{Header, TaskRef};
use crate::sync::asymmetric::{heavy_barrier, light_barrier};
use crate::sync::{AtomicPtr, AtomicU64, AtomicU8};
use std::ptr::{self, NonNull};
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::time::{Duration, Instant};

/// `state`: the owner is in user code (a handler) since it stored this word.
pub(crate) const IN_USER: u64 = 1;
/// `claim`: a rescuer owns the slots until it clears this bit.
const RESCUING: u8 = 1;
/// `claim`: the monitor saw the activation the owner is leaving block in the kernel.
const BLOCKED: u8 = 2;

/// What a rescuer took from a stalled worker: each with its schedule.
#[derive(Debug, Default)]
pub(crate) struct Hostages {
    /// The actor in the next slot: runnable, to be run or queued.
    pub(crate) next: Option<TaskRef>,
    /// The held actor: drained and still scheduled; its hold must be ended.
    pub(crate) held: Option<TaskRef>,
    /// The actor a handler of the stalled activation woke: runnable, to be run or queued.
    pub(crate) pending: Option<TaskRef>,
}

/// What [`StallWatch::rescue_unless_fed`] did.
#[derive(Debug)]
pub(crate) enum Rescue {
    /// It took the hostages, each with its schedule.
    Taken(Hostages),
    /// It left them: the handler is still feeding one, which has this many messages queued.
    Fed(usize),
}

impl Hostages {
    /// The most messages any hostage has queued.
    fn most_queued(&self, queued: impl Fn(TaskRef) -> usize) -> usize {
        [self.next, self.held, self.pending]
            .into_iter()
            .flatten()
            .map(queued)
            .max()
            .unwrap_or(0)
    }
}

/// A rescuer's memory of one worker's stretch of user code: the state word it saw and since
/// when, and, once it found the hostages of that stretch still fed ([`Rescue::Fed`]), how many
/// messages they had queued and when to look again.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sighting {
    /// The worker's state word.
    pub(crate) state: u64,
    /// When this rescuer first saw it.
    pub(crate) since: Instant,
    /// The most messages a hostage had queued at the last look that found it fed.
    pub(crate) fed: Option<usize>,
    /// No rescue before this (a stretch found feeding its hostages is looked at again later).
    pub(crate) not_before: Instant,
}

impl Sighting {
    /// A first sight of `state` at `now`.
    pub(crate) fn new(state: u64, now: Instant) -> Sighting {
        Sighting {
            state,
            since: now,
            fed: None,
            not_before: now,
        }
    }

    /// Records a look at `state` at `now`: whether the worker has stayed in one stretch of user
    /// code for `bound` and a rescue may be tried now.
    pub(crate) fn stalled(&mut self, state: u64, now: Instant, bound: Duration) -> bool {
        if self.state != state {
            *self = Sighting::new(state, now);
            return false;
        }
        state & IN_USER != 0
            && now.saturating_duration_since(self.since) >= bound
            && now >= self.not_before
    }

    /// The hostages were found fed with `queued` messages at `now`: look again after as long
    /// as the stretch has lasted (a doubling back-off: a producer's slice is left alone after a
    /// few looks, each of which costs the stalled worker a barrier's interrupt).
    pub(crate) fn found_fed(&mut self, queued: usize, now: Instant) {
        self.fed = Some(queued);
        self.not_before = now + now.saturating_duration_since(self.since);
    }
}

/// One worker's part of the stall guard, shared with idle workers and the monitor.
pub(crate) struct StallWatch {
    state: AtomicU64,
    claim: AtomicU8,
    /// The next slot (see `worker/`): the owner's while it is not in user code.
    next: AtomicPtr<Header>,
    /// The held actor (see `Worker::hold`): the owner's while it is not in user code.
    held: AtomicPtr<Header>,
    /// The first actor a handler of the running activation woke (see
    /// [`StallWatch::publish_pending`]): written once by the owner in user code, taken by a
    /// rescuer with a swap or by the owner once user code is over.
    pending: AtomicPtr<Header>,
}

impl Default for StallWatch {
    fn default() -> Self {
        StallWatch {
            state: AtomicU64::new(0),
            claim: AtomicU8::new(0),
            next: AtomicPtr::new(ptr::null_mut()),
            held: AtomicPtr::new(ptr::null_mut()),
            pending: AtomicPtr::new(ptr::null_mut()),
        }
    }
}

fn to_ptr(task: Option<TaskRef>) -> *mut Header {
    task.map_or(ptr::null_mut(), |t| t.as_ptr().as_ptr())
}

fn from_ptr(p: *mut Header) -> Option<TaskRef> {
    NonNull::new(p).map(TaskRef::from_ptr)
}

/// The owner's take of a slot outside user code: a plain load and, if it held an actor, a plain
/// store (no rescuer is at work then, `StallWatch::leave_user`).
#[inline(always)]
fn take(slot: &AtomicPtr<Header>) -> Option<TaskRef> {
    let p = slot.load(Relaxed);
    if p.is_null() {
        return None;
    }
    slot.store(ptr::null_mut(), Relaxed);
    from_ptr(p)
}

/// The owner's replacement of a slot's actor outside user code (as [`take`]).
#[inline(always)]
fn replace(slot: &AtomicPtr<Header>, task: TaskRef) -> Option<TaskRef> {
    let old = slot.load(Relaxed);
    slot.store(to_ptr(Some(task)), Relaxed);
    from_ptr(old)
}

impl StallWatch {
    // ------------------------------------------------------------------ the owner's side

    /// Owner: user code starts (an activation, or a handler resumes after a wake-up). `word` is
    /// even and new for each activation (a handler resuming keeps its activation's word).
    #[inline(always)]
    pub(crate) fn enter_user(&self, word: u64) {
        // Release: the slots as the owner left them are visible to a rescuer that reads this.
        self.state.store(word | IN_USER, Release);
    }

    /// Owner: user code is over; until the next [`enter_user`](Self::enter_user) the slots are
    /// the owner's. Returns whether the monitor saw the user code that just ended block in the
    /// kernel (see [`rescue`](Self::rescue)).
    #[inline(always)]
    #[must_use = "a blocked activation is reported to the caller once"]
    pub(crate) fn leave_user(&self, word: u64) -> bool {
        // Relaxed: the pair of barriers orders this store before the load below (module docs).
        self.state.store(word & !IN_USER, Relaxed);
        light_barrier();
        if self.claim.load(Acquire) != 0 {
            return self.after_claim();
        }
        false
    }

    /// Owner: its own state word (whether it is in user code now: a wake-up made by a handler
    /// must step out of it to use the slot). A load of a line only the owner writes.
    #[inline(always)]
    pub(crate) fn own_state(&self) -> u64 {
        self.state.load(Relaxed)
    }

    /// A rescuer was seen at work: wait until it is done (a few loads and stores, unless it was
    /// preempted), then take the note it may have left.
    #[cold]
    #[inline(never)]
    fn after_claim(&self) -> bool {
        let mut spins = 0u32;
        loop {
            let claim = self.claim.load(Acquire);
            if claim & RESCUING == 0 {
                // A later rescuer only ever sets and clears `RESCUING` (and backs off: we are out
                // of user code), so the note is taken exactly once.
                return claim & BLOCKED != 0
                    && self.claim.fetch_and(!BLOCKED, Relaxed) & BLOCKED != 0;
            }
            spins += 1;
            if spins < 64 {
                crate::sync::spin_hint();
            } else {
                // The rescuer lost its core mid-rescue: give it ours.
                crate::sync::yield_now();
            }
        }
    }

    /// Owner, in user code: the first wake-up a handler of this activation makes, published
    /// without stepping out of user code (one store): a rescuer may take it from now on. The
    /// owner must not write `pending` again before [`take_pending`](Self::take_pending) (after
    /// [`leave_user`](Self::leave_user)); a second wake-up in the activation steps out of user
    /// code instead (`Worker::push_next_from_handler`).
    #[inline(always)]
    pub(crate) fn publish_pending(&self, task: TaskRef) {
        // Release: the woken actor's state (its schedule, taken by the send) is visible to the
        // rescuer that takes it with `Acquire`. A plain store: the modification order of
        // `pending` is total, so either the rescuer's swap comes after it and takes the actor,
        // or it comes before (and finds nothing) and this store is the latest, which the owner's
        // own later load reads. Loom keeps the modification order of stores from threads that
        // do not synchronise only partial (by happens-before), and lets the owner's load read
        // the swap's null after its own store, which the memory model forbids; under loom the
        // store is a swap, which loom orders (minimal case: `loom_tests`,
        // `loom_orders_a_plain_store_after_a_concurrent_swap_only_partially`).
        #[cfg(not(loom))]
        self.pending.store(to_ptr(Some(task)), Release);
        #[cfg(loom)]
        self.pending.swap(to_ptr(Some(task)), Release);
    }

    /// Owner, outside user code: the actor published with
    /// [`publish_pending`](Self::publish_pending), unless a rescuer took it.
    #[inline(always)]
    pub(crate) fn take_pending(&self) -> Option<TaskRef> {
        // No rescuer is at work (the owner is out of user code): a plain load and store.
        take(&self.pending)
    }

    /// Owner, outside user code: takes the next slot's actor.
    #[inline(always)]
    pub(crate) fn take_next(&self) -> Option<TaskRef> {
        take(&self.next)
    }

    /// Owner, outside user code: puts an actor in the next slot, returning the one it displaces.
    #[inline(always)]
    pub(crate) fn replace_next(&self, task: TaskRef) -> Option<TaskRef> {
        replace(&self.next, task)
    }

    /// Owner, outside user code: whether the next slot is empty.
    #[inline(always)]
    pub(crate) fn next_is_empty(&self) -> bool {
        self.next.load(Relaxed).is_null()
    }

    /// Owner, outside user code: holds `task`, returning the actor held before.
    #[inline(always)]
    pub(crate) fn replace_held(&self, task: TaskRef) -> Option<TaskRef> {
        replace(&self.held, task)
    }

    /// Owner, outside user code: ends the hold, returning the held actor.
    #[inline(always)]
    pub(crate) fn take_held(&self) -> Option<TaskRef> {
        take(&self.held)
    }

    /// Owner, in user code: keeps a note that [`leave_user`](Self::leave_user) took in the middle
    /// of an activation (a handler that blocked, then woke an actor), so that the activation's
    /// end reports it. One read-modify-write, on that rare path only: rescuers change only the
    /// `RESCUING` bit, with read-modify-writes too.
    #[cold]
    pub(crate) fn note_blocked_again(&self) {
        self.claim.fetch_or(BLOCKED, Relaxed);
    }

    // ------------------------------------------------------------------ a rescuer's side

    /// Any thread: the owner's state word (compare two reads to see it stay in one handler).
    #[inline]
    pub(crate) fn state(&self) -> u64 {
        self.state.load(Acquire)
    }

    /// Any thread: whether a slot looks occupied (a hint; [`rescue`](Self::rescue) decides).
    #[inline]
    pub(crate) fn has_hostages(&self) -> bool {
        !self.next.load(Relaxed).is_null()
            || !self.held.load(Relaxed).is_null()
            || !self.pending.load(Relaxed).is_null()
    }

    /// Takes the slots if the owner is still in the user code it was in when `observed` was read
    /// (an `IN_USER` state). With `blocked`, also leaves the note that this user code blocked,
    /// which the owner's [`leave_user`](Self::leave_user) reports. `None`: nothing was taken (the
    /// owner moved on, another rescuer is at work, or the heavy barrier is not available).
    #[cfg(any(test, loom))]
    pub(crate) fn rescue(&self, observed: u64, blocked: bool) -> Option<Hostages> {
        match self.rescue_unless_fed(observed, blocked, None, |_| 0) {
            Some(Rescue::Taken(hostages)) => Some(hostages),
            _ => None,
        }
    }

    /// [`rescue_unless_fed`](Self::rescue_unless_fed) reading the hostages' real mailboxes.
    pub(crate) fn rescue_if_waiting(
        &self,
        observed: u64,
        blocked: bool,
        fed_before: Option<usize>,
    ) -> Option<Rescue> {
        self.rescue_unless_fed(observed, blocked, fed_before, |task| {
            // SAFETY: `rescue_unless_fed` calls this only on the hostages it holds under its
            // claim, with their schedules: scheduled actors, which are not freed.
            unsafe { task.queued() }
        })
    }

    /// [`rescue`](Self::rescue), unless the running handler is still feeding its hostages.
    ///
    /// A hostage with more than one message queued was sent them by the stalled handler (the
    /// first woke it; nobody else can run it meanwhile, but other senders may also write to it):
    /// moving it to another core now would make every message the handler still sends it cross
    /// cores, for a wait that ends with the handler's slice (a producer's batch to its consumer:
    /// counting at 2 workers lost 15% to such rescues, docs/results/stalls.md). So, under the
    /// claim, the rescuer reads the most messages any hostage has queued (`queued`, normally
    /// [`TaskRef::queued`]); if that is more than one
    /// and more than `fed_before` (what it read at its previous look at this same stretch of user
    /// code, `None` at the first), it puts every hostage back and returns [`Rescue::Fed`] with
    /// the count, to look again later. A hostage whose queue stopped growing is not fed any more
    /// and is taken. A blocked handler (`blocked`) feeds nobody: its hostages are always taken.
    ///
    /// Putting back is as safe as taking: the claim keeps the owner out of the slots until it
    /// ends (`Release`), and the owner's `leave_user` reads the claim with `Acquire`, so it
    /// finds the slots as they were. `pending` was published by the owner's one store of this
    /// activation (the owner writes it no more before `take_pending`), so storing it back cannot
    /// overwrite a later publication.
    pub(crate) fn rescue_unless_fed(
        &self,
        observed: u64,
        blocked: bool,
        fed_before: Option<usize>,
        queued: impl Fn(TaskRef) -> usize,
    ) -> Option<Rescue> {
        if observed & IN_USER == 0 {
            return None;
        }
        // Acquire: a previous rescuer's takes are visible before ours. An RMW on the one bit,
        // so the owner's clearing of `BLOCKED` is never undone by a rescuer that backs off.
        if self.claim.fetch_or(RESCUING, Acquire) & RESCUING != 0 {
            return None;
        }
        // The heavy barrier pairs with the owner's light one (module docs).
        if !heavy_barrier() || self.state.load(Acquire) != observed {
            self.claim.fetch_and(!RESCUING, Release);
            return None;
        }
        // The claim keeps the owner out (it waits in `leave_user`): plain takes, as the owner's.
        let next = take(&self.next);
        let held = take(&self.held);
        // A swap: the owner, in user code, may publish its first wake-up at this very moment;
        // either the swap takes it or the owner's store comes after and the owner keeps it.
        // Acquire: pairs with `publish_pending`'s Release.
        let pending = self.pending.swap(ptr::null_mut(), Acquire);
        let hostages = Hostages {
            next,
            held,
            pending: from_ptr(pending),
        };
        if !blocked {
            let queued = hostages.most_queued(queued);
            if queued > 1 && fed_before.is_none_or(|before| queued > before) {
                let Hostages {
                    next,
                    held,
                    pending,
                } = hostages;
                self.next.store(to_ptr(next), Relaxed);
                self.held.store(to_ptr(held), Relaxed);
                if pending.is_some() {
                    self.pending.store(to_ptr(pending), Relaxed);
                }
                // Release: the owner sees the slots as they were once it sees the claim end.
                self.claim.fetch_and(!RESCUING, Release);
                return Some(Rescue::Fed(queued));
            }
        }
        if blocked {
            // Before the claim ends: the owner, waiting for the claim, then sees the note.
            self.claim.fetch_or(BLOCKED, Relaxed);
        }
        // Release: the owner sees the emptied slots (and the note) once it sees the claim end.
        self.claim.fetch_and(!RESCUING, Release);
        Some(Rescue::Taken(hostages))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Distinct fake tasks: the watch stores and compares pointers, never follows them.
    fn task(n: usize) -> TaskRef {
        TaskRef::from_ptr(NonNull::new((n * 8) as *mut Header).unwrap())
    }

    #[test]
    fn the_owner_alone_gets_back_what_it_put() {
        let watch = StallWatch::default();
        assert!(!watch.has_hostages());
        assert_eq!(watch.replace_next(task(1)), None);
        assert_eq!(watch.replace_next(task(2)), Some(task(1)), "displaced");
        assert_eq!(watch.replace_held(task(3)), None);
        watch.enter_user(2);
        assert_eq!(watch.own_state(), 2 | IN_USER);
        watch.publish_pending(task(4));
        assert!(!watch.leave_user(2));
        assert_eq!(watch.own_state(), 2);
        assert_eq!(watch.take_pending(), Some(task(4)));
        assert_eq!(watch.take_next(), Some(task(2)));
        assert_eq!(watch.take_held(), Some(task(3)));
        assert!(watch.next_is_empty() && !watch.has_hostages());
    }

    #[test]
    fn a_rescue_takes_every_slot_only_while_the_owner_is_in_user_code() {
        let watch = StallWatch::default();
        let _ = watch.replace_next(task(1));
        let _ = watch.replace_held(task(2));
        // Not in user code: nothing to take, the owner may be using the slots.
        assert!(watch.rescue(watch.state(), false).is_none());
        watch.enter_user(4);
        watch.publish_pending(task(3));
        // A stale word (an earlier activation): the owner moved on, nothing taken.
        assert!(watch.rescue(2 | IN_USER, false).is_none());
        let taken = watch.rescue(watch.state(), true).expect("in user code");
        assert_eq!(
            (taken.next, taken.held, taken.pending),
            (Some(task(1)), Some(task(2)), Some(task(3)))
        );
        assert!(!watch.has_hostages());
        // The note reaches the owner once, when the activation ends.
        assert!(watch.leave_user(4));
        watch.enter_user(6);
        assert!(!watch.leave_user(6));
        assert_eq!(watch.take_pending(), None);
    }

    #[test]
    fn a_fed_hostage_is_put_back_until_its_queue_stops_growing() {
        let watch = StallWatch::default();
        let _ = watch.replace_next(task(1));
        watch.enter_user(2);
        watch.publish_pending(task(2));
        let state = watch.state();
        // The handler keeps sending to task 2: 40 messages queued, then 90.
        let queued = |n: usize| move |t: TaskRef| if t == task(2) { n } else { 1 };
        match watch.rescue_unless_fed(state, false, None, queued(40)) {
            Some(Rescue::Fed(40)) => {}
            other => panic!("a first look at a fed hostage leaves it: {other:?}"),
        }
        assert!(watch.has_hostages(), "both put back");
        match watch.rescue_unless_fed(state, false, Some(40), queued(90)) {
            Some(Rescue::Fed(90)) => {}
            other => panic!("still growing: {other:?}"),
        }
        // The owner, out of user code, finds its slots as they were.
        assert!(!watch.leave_user(2));
        assert_eq!(watch.take_pending(), Some(task(2)));
        assert_eq!(watch.take_next(), Some(task(1)));
        // Another stretch: the queue stopped growing, so the hostages are taken.
        let _ = watch.replace_next(task(1));
        watch.enter_user(4);
        watch.publish_pending(task(2));
        let state = watch.state();
        match watch.rescue_unless_fed(state, false, Some(90), queued(90)) {
            Some(Rescue::Taken(h)) => {
                assert_eq!((h.next, h.pending), (Some(task(1)), Some(task(2))))
            }
            other => panic!("not fed any more: {other:?}"),
        }
        // A blocked handler's hostages are taken even while their queue grows.
        let _ = watch.leave_user(4);
        let _ = watch.replace_next(task(3));
        watch.enter_user(6);
        let state = watch.state();
        assert!(matches!(
            watch.rescue_unless_fed(state, true, None, |_| 1_000),
            Some(Rescue::Taken(h)) if h.next == Some(task(3))
        ));
        // One message each (a reply): taken at the first look.
        let _ = watch.leave_user(6);
        let _ = watch.replace_next(task(4));
        watch.enter_user(8);
        let state = watch.state();
        assert!(matches!(
            watch.rescue_unless_fed(state, false, None, |_| 1),
            Some(Rescue::Taken(h)) if h.next == Some(task(4))
        ));
    }

    /// Owner and rescuer on two threads, many rounds: every task the owner publishes is taken
    /// exactly once, by one of them. This runs the real barrier (`membarrier`), and under Miri
    /// checks the code for data races; it rarely hits the narrow windows a broken protocol opens
    /// (removing the rescuer's second read did not turn it red in three runs): the loom models
    /// in `loom_tests.rs` check every interleaving of a round.
    #[test]
    fn owner_and_rescuer_on_two_threads_never_both_take_a_task() {
        let rounds: usize = if cfg!(miri) { 20 } else { 50_000 };
        let watch = Arc::new(StallWatch::default());
        let done = Arc::new(crate::sync::AtomicBool::new(false));
        let rescuer = {
            let (watch, done) = (Arc::clone(&watch), Arc::clone(&done));
            std::thread::spawn(move || {
                let mut taken = Vec::new();
                while !done.load(Acquire) {
                    let state = watch.state();
                    if let Some(h) = watch.rescue(state, false) {
                        taken.extend([h.next, h.held, h.pending].into_iter().flatten());
                    }
                    std::thread::yield_now();
                }
                taken
            })
        };
        // Work between the accesses, so that a rescuer acting at the wrong moment has a window.
        let pause = |n: usize| (0..n).for_each(|_| std::hint::spin_loop());
        let mut owner = Vec::new();
        for round in 1..=rounds {
            let word = (round as u64) << 1;
            owner.extend(watch.replace_next(task(3 * round)));
            watch.enter_user(word);
            pause(200);
            watch.publish_pending(task(3 * round + 1));
            pause(200);
            let _ = watch.leave_user(word);
            let next = watch.take_next();
            pause(200);
            owner.extend(next);
            owner.extend(watch.take_pending());
            owner.extend(watch.replace_held(task(3 * round + 2)));
        }
        owner.extend(watch.take_next());
        owner.extend(watch.take_held());
        done.store(true, Release);
        let mut all: Vec<usize> = owner
            .into_iter()
            .chain(rescuer.join().unwrap())
            .map(|t| t.as_ptr().as_ptr() as usize / 8)
            .collect();
        all.sort_unstable();
        let expected: Vec<usize> = (3..3 * rounds + 3).collect();
        assert_eq!(all, expected, "every task taken exactly once");
    }
}
