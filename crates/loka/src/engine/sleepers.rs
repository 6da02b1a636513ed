//! Parking idle workers without losing wake-ups (every engine with worker threads).
//!
//! A worker that found no work announces itself asleep, *then* looks at every queue once more, and
//! only parks if that last look is empty. A thread that makes work visible (pushes to a queue)
//! *then* checks for sleepers and claims one to wake. With a sequentially consistent fence on both
//! sides (the Dekker pattern), at least one of the two sees the other: either the sleeper sees the
//! new work and stays up, or the pusher sees the sleeper and wakes it. The waker decrements the
//! sleeper count on the sleeper's behalf, so `num_sleeping` counts exactly the parked workers that
//! nobody has claimed, which is what quiescence detection needs.
//!
//! **Searchers.** A worker looking for work to steal (spinning or yielding before it parks) is a
//! *searcher*. Work that any worker may steal wakes a sleeper only when nobody searches
//! ([`notify_stealable`](Sleepers::notify_stealable)): a searcher will take it. Without this rule
//! every push woke a parked worker whenever one existed, so at 16 workers a stream of messages
//! to other workers' queues cost a futex wake-up per message, paid by the sender (tokio's
//! scheduler and Go's have the same rule; docs/decisions/0070-searchers-spare-wake-ups.md). Two
//! duties keep it from losing work, both Dekker pairs with the pusher's fence:
//! a searcher leaving to park gives up its searcher count *before* announcing itself asleep and
//! re-checking every queue; the last searcher leaving because it found work looks once more and
//! wakes a sleeper for whatever else is queued ([`end_search`](Sleepers::end_search)). The
//! sleeper count and the searcher count share one word, so the pusher reads both in one load.

use crate::sync::{fence, AtomicU8, AtomicUsize};
use crossbeam_utils::CachePadded;
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::Ordering::{Acquire, Relaxed, SeqCst};
use std::time::{Duration, Instant};

/// One searcher in the shared word (the low half counts sleepers).
const SEARCHER: usize = 1 << (usize::BITS / 2);
/// The sleepers' half of the shared word.
const SLEEPERS: usize = SEARCHER - 1;

const AWAKE: u8 = 0;
const SLEEPING: u8 = 1;
const NOTIFIED: u8 = 2;

/// Which workers are parked.
pub(crate) struct Sleepers {
    /// Parked workers nobody has claimed (the low half) and searchers (the high half, in units
    /// of [`SEARCHER`]).
    num_sleeping: CachePadded<AtomicUsize>,
    /// Every searcher may take from every queue a stealable push fills, so such a push need not
    /// wake anyone while one searches. Not under `places:a`, whose thieves take only from the
    /// places' shared queues: there the stealable notifications wake as [`notify`](Self::notify).
    searchers_reach_all: bool,
    /// Wake-ups so far: bumped by every worker leaving its parking protocol (`cancel`, which a
    /// claimed worker also runs before doing anything). Quiescence reads it around its two
    /// checks (`wait_quiescent`).
    wakes: CachePadded<AtomicUsize>,
    states: Box<[CachePadded<AtomicU8>]>,
    /// Workers `0..active` take stealable work; the others are retired by `auto`'s gathering
    /// (`engine/gather.rs`): stealable work wakes none of them, since an active worker takes it
    /// (a retired worker re-checks only its own queues before it parks). Work for a named worker
    /// ([`notify`](Self::notify)'s `prefer`, [`notify_target`](Self::notify_target)'s target)
    /// wakes it whether retired or not. Relaxed: a stale count wakes a retired worker once (it
    /// hands the work on) or leaves a just-activated one asleep until its activation's own
    /// wake-up ([`claim_one`](Self::claim_one) by whoever spread the work).
    active: CachePadded<AtomicUsize>,
    /// Signalled by the last worker to park (quiescence waiters wait on it).
    quiet_lock: Mutex<()>,
    quiet: Condvar,
}

impl Sleepers {
    pub(crate) fn new(workers: usize) -> Self {
        assert!(
            workers < SLEEPERS,
            "{workers} workers do not fit the sleeper count"
        );
        Sleepers {
            num_sleeping: CachePadded::new(AtomicUsize::new(0)),
            searchers_reach_all: true,
            wakes: CachePadded::new(AtomicUsize::new(0)),
            states: (0..workers)
                .map(|_| CachePadded::new(AtomicU8::new(AWAKE)))
                .collect(),
            active: CachePadded::new(AtomicUsize::new(workers)),
            quiet_lock: Mutex::new(()),
            quiet: Condvar::new(),
        }
    }

    /// Whether searchers can take every stealable push (`true` unless set otherwise here).
    pub(crate) fn searchers_reach_all(mut self, reach_all: bool) -> Self {
        self.searchers_reach_all = reach_all;
        self
    }

    /// Workers `0..active` take stealable work from now on (see the field).
    pub(crate) fn set_active(&self, active: usize) {
        self.active
            .store(active.clamp(1, self.states.len()), Relaxed);
    }

    /// The workers that take stealable work (`0..` this).
    #[inline]
    pub(crate) fn active(&self) -> usize {
        self.active.load(Relaxed)
    }

    /// Step 1 of parking: announce. The caller must then re-check every queue and either
    /// [`cancel`](Self::cancel) or park until [`is_notified`](Self::is_notified).
    pub(crate) fn announce(&self, worker: usize) {
        self.states[worker].store(SLEEPING, SeqCst);
        self.num_sleeping.fetch_add(1, SeqCst);
        // Pairs with the fence in `notify`: our later queue loads see any push that the notifier
        // made before its fence, or the notifier sees our announcement.
        fence(SeqCst);
    }

    /// The re-check found work, or the worker woke up: stay awake, off the sleeper count.
    pub(crate) fn cancel(&self, worker: usize) {
        if self.states[worker]
            .compare_exchange(SLEEPING, AWAKE, SeqCst, SeqCst)
            .is_ok()
        {
            self.num_sleeping.fetch_sub(1, SeqCst);
        } else {
            // A notifier claimed us meanwhile (and already decremented the count for us).
            self.states[worker].store(AWAKE, Relaxed);
        }
        // After leaving the count, before the worker does anything awake (`wait_quiescent`).
        self.wakes.fetch_add(1, SeqCst);
    }

    /// Whether a notifier has claimed `worker` (so it may stop parking).
    pub(crate) fn is_notified(&self, worker: usize) -> bool {
        self.states[worker].load(Acquire) != SLEEPING
    }

    /// Called after making work visible. Claims a sleeping worker (`prefer` first) and returns it;
    /// the caller must unpark that worker's thread.
    #[must_use = "a claimed worker must be unparked, or it sleeps with work pending"]
    pub(crate) fn notify(&self, prefer: Option<usize>) -> Option<usize> {
        // Pairs with the fence in `announce`.
        fence(SeqCst);
        if self.num_sleeping.load(SeqCst) & SLEEPERS == 0 {
            return None;
        }
        self.claim_from(prefer, self.states.len())
    }

    /// [`notify`](Self::notify) for work that any worker may steal: nobody is woken while a
    /// worker searches (it will find the work, or hand the search on in
    /// [`end_search`](Self::end_search)).
    #[must_use = "a claimed worker must be unparked, or it sleeps with work pending"]
    pub(crate) fn notify_stealable(&self, prefer: Option<usize>) -> Option<usize> {
        if !self.searchers_reach_all {
            return self.notify(prefer);
        }
        // Pairs with the fences in `announce` and `end_search`.
        fence(SeqCst);
        let state = self.num_sleeping.load(SeqCst);
        if state >= SEARCHER || state & SLEEPERS == 0 {
            return None;
        }
        self.claim_from(prefer, self.active())
    }

    /// [`notify_stealable`](Self::notify_stealable) for work queued for worker `w` (a woken
    /// actor routed to `w`'s inbox or urgent queue): `w` itself if it sleeps, since the policy
    /// chose it; otherwise a sleeper only while nobody searches, as for any stealable work.
    #[must_use = "a claimed worker must be unparked, or it sleeps with work pending"]
    pub(crate) fn notify_target(&self, w: usize) -> Option<usize> {
        if !self.searchers_reach_all {
            return self.notify(Some(w));
        }
        // Pairs with the fences in `announce` and `end_search`.
        fence(SeqCst);
        let state = self.num_sleeping.load(SeqCst);
        if state & SLEEPERS == 0 {
            // Nobody sleeps (the common case on a busy machine): one load. A `w` announcing
            // sleep after this load re-checks the queues and sees the push.
            return None;
        }
        if self.states[w].load(SeqCst) == SLEEPING && self.claim(w) {
            return Some(w);
        }
        if state >= SEARCHER {
            return None;
        }
        self.claim_from(Some(w), self.active())
    }

    /// A worker starts looking for work to steal.
    pub(crate) fn begin_search(&self) {
        self.num_sleeping.fetch_add(SEARCHER, SeqCst);
    }

    /// A worker stops looking for work to steal: it found some, or it is about to park. Returns
    /// whether it was the last searcher while some worker slept: one that found work must then
    /// look at every queue and, if work is left, [`notify_stealable`](Self::notify_stealable),
    /// since a push it made someone skip may still wait there; one about to park needs nothing
    /// more (its re-check comes after this, the same Dekker pair as `announce`). With nobody
    /// asleep at this instant there is nobody to wake: a worker that announces sleep later
    /// re-checks every queue after a push that read this worker searching (that push's read
    /// precedes this update, and so the later announcement, in the one order of `SeqCst`
    /// operations), so the look is skipped, which keeps it off a busy machine's idle path.
    pub(crate) fn end_search(&self) -> bool {
        let before = self.num_sleeping.fetch_sub(SEARCHER, SeqCst);
        // Pairs with the fence in `notify_stealable`: the caller's next queue loads see a push
        // whose pusher read this worker still searching.
        fence(SeqCst);
        before < 2 * SEARCHER && before & SLEEPERS != 0
    }

    /// Claims a sleeping worker among the first `n`, `prefer` first (if it is one of them).
    fn claim_from(&self, prefer: Option<usize>, n: usize) -> Option<usize> {
        let start = prefer.filter(|&w| w < n).unwrap_or(0);
        (0..n).map(|i| (start + i) % n).find(|&w| self.claim(w))
    }

    /// Whether worker `w` has announced that it goes to sleep and nobody has claimed it, without
    /// a fence: exact for a caller holding a lock that `w`'s re-check also takes (the lock orders
    /// the announcement and the caller's work; then [`claim_one`](Self::claim_one) it), a hint
    /// that may be stale either way for anyone else (a routing choice that would rather not wake
    /// a sleeper; the push that follows still wakes whoever must wake).
    #[inline]
    pub(crate) fn is_asleep_locked(&self, w: usize) -> bool {
        self.states[w].load(Relaxed) == SLEEPING
    }

    /// Whether worker `w` is neither parked nor woken and on its way back (a hint, stale either
    /// way: a thief choosing a victim reads it, `choices::steal_once`).
    #[inline]
    pub(crate) fn is_awake(&self, w: usize) -> bool {
        self.states[w].load(Relaxed) == AWAKE
    }

    /// Claims worker `w` if it is still parked (after [`is_asleep_locked`](Self::is_asleep_locked)
    /// said so); returns whether it did, and the caller must then unpark it. Other sleepers stay
    /// asleep.
    #[must_use = "a claimed worker must be unparked, or it sleeps with work pending"]
    pub(crate) fn claim_one(&self, w: usize) -> bool {
        self.claim(w)
    }

    /// Claims every sleeper (shutdown); the caller then unparks every worker thread.
    pub(crate) fn notify_all(&self) {
        fence(SeqCst);
        for w in 0..self.states.len() {
            self.claim(w);
        }
    }

    fn claim(&self, worker: usize) -> bool {
        let claimed = self.states[worker]
            .compare_exchange(SLEEPING, NOTIFIED, SeqCst, Relaxed)
            .is_ok();
        if claimed {
            // The claimed worker counts its own wake-up in `cancel`, before it does anything.
            self.num_sleeping.fetch_sub(1, SeqCst);
        }
        claimed
    }

    /// Whether every worker is parked and unclaimed.
    pub(crate) fn all_asleep(&self) -> bool {
        self.num_sleeping.load(SeqCst) & SLEEPERS == self.states.len()
    }

    /// The whole parking protocol of worker `w`: announce, re-check (`has_work`, `is_shutdown`),
    /// then `park` until a notifier claims `w`, shutdown begins, or `park` returns `true` (a
    /// timer of the worker is due: it leaves to fire it). `parked` runs once the worker is
    /// committed to sleep. Returns whether it slept. Shutdown sets its flag *before*
    /// [`notify_all`](Self::notify_all), so a worker either sees the flag in its re-check or is
    /// claimed by `notify_all` (the same Dekker argument as for work).
    pub(crate) fn park(
        &self,
        w: usize,
        has_work: impl Fn() -> bool,
        is_shutdown: impl Fn() -> bool,
        parked: impl FnOnce(),
        park: impl Fn() -> bool,
    ) -> bool {
        self.announce(w);
        if has_work() || is_shutdown() {
            self.cancel(w);
            return false;
        }
        parked();
        if self.all_asleep() {
            let _guard = self.quiet_lock.lock();
            self.quiet.notify_all();
        }
        while !self.is_notified(w) && !is_shutdown() {
            if park() {
                break;
            }
        }
        // Woken by a notifier (who already took us off the count), or left because shutdown began
        // or a timer is due before anyone claimed us: then we take ourselves off, exactly as a
        // cancelled park does.
        self.cancel(w);
        true
    }

    /// One look of [`wait_quiescent`](Self::wait_quiescent): every worker asleep, no work, and
    /// no worker woke in between (its documentation says why the last part is needed).
    pub(crate) fn quiescent_now(&self, is_empty: impl Fn() -> bool) -> bool {
        let wakes = self.wakes.load(SeqCst);
        self.all_asleep() && is_empty() && self.wakes.load(SeqCst) == wakes
    }

    /// Blocks until every worker is parked and `is_empty` (no queue holds work), or `timeout`
    /// passes; returns whether that happened.
    ///
    /// Every worker parks only after a last look found every queue empty, and every push wakes a
    /// parked worker (taking it off the count) before the pusher can go idle itself; so "all
    /// workers asleep and no queue holds work" means nothing is runnable and no send made by an
    /// actor is half-done. The last worker to park signals the condition variable; the waiter also
    /// re-checks every millisecond, which bounds the cost of a signal racing its check.
    ///
    /// The two checks are not one atomic look: a worker counts as asleep from its announcement,
    /// *before* its last look, and that look may find work, take it and run it. Read in either
    /// order, "all asleep" and "no work" could then both hold at their own instants while that
    /// worker runs an actor (seen in CI: a report sent by a panicking child was not yet handled
    /// when `run_until_idle` returned). So the waiter also reads the wake-up count before and
    /// after: every worker leaving the protocol bumps it after the count drops and before it
    /// does anything, so an unchanged count means every worker stayed announced, doing
    /// nothing but its last look, over the whole check, and the empty queues were the state of a
    /// quiescent system.
    pub(crate) fn wait_quiescent(
        &self,
        is_empty: impl Fn() -> bool,
        timeout: Option<Duration>,
    ) -> bool {
        // Past the end of the clock (`Duration::MAX`): no deadline, not an overflow panic.
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        let mut guard = self.quiet_lock.lock();
        loop {
            if self.quiescent_now(&is_empty) {
                return true;
            }
            let step = Instant::now() + Duration::from_millis(1);
            let until = deadline.map_or(step, |d| d.min(step));
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return false;
            }
            self.quiet.wait_until(&mut guard, until);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn notify_claims_the_preferred_sleeper_once() {
        let s = Sleepers::new(3);
        assert_eq!(s.notify(None), None, "nobody asleep");
        s.announce(1);
        s.announce(2);
        assert!(!s.all_asleep());
        assert_eq!(s.notify(Some(2)), Some(2));
        assert!(s.is_notified(2));
        assert_eq!(
            s.notify(Some(2)),
            Some(1),
            "2 already claimed: next sleeper"
        );
        assert_eq!(s.notify(None), None);
    }

    #[test]
    fn a_worker_that_wakes_during_the_check_is_not_quiescence() {
        let s = Sleepers::new(2);
        s.announce(0);
        s.announce(1);
        // Worker 1's last look found work: it leaves the count and takes the work between the
        // waiter's "all asleep" and its "no work" (the queue is empty again by then).
        let raced = std::cell::Cell::new(false);
        let is_empty = || {
            if !raced.replace(true) {
                s.cancel(1);
            }
            true
        };
        assert!(
            !s.wait_quiescent(is_empty, Some(Duration::from_millis(20))),
            "worker 1 is running what it took"
        );
        s.announce(1);
        assert!(s.wait_quiescent(|| true, Some(Duration::from_millis(20))));
    }

    /// A wait of `Duration::MAX` has no deadline (it panicked with "overflow when adding
    /// duration to instant"); a zero wait on a busy engine gives up at once.
    #[test]
    fn a_wait_too_long_for_the_clock_has_no_deadline_and_zero_gives_up_at_once() {
        let s = Sleepers::new(1);
        s.announce(0);
        assert!(s.wait_quiescent(|| true, Some(Duration::MAX)));
        assert!(!s.wait_quiescent(|| false, Some(Duration::ZERO)));
    }

    #[test]
    fn cancel_after_claim_keeps_count_right() {
        let s = Sleepers::new(2);
        s.announce(0);
        assert_eq!(s.notify(None), Some(0));
        s.cancel(0);
        s.announce(0);
        s.announce(1);
        assert!(s.all_asleep());
    }
}
