//! Parking idle workers without losing wake-ups.
//!
//! A worker that found no work announces itself asleep, *then* looks at every queue once more, and
//! only parks if that last look is empty. A thread that makes work visible (pushes to a queue)
//! *then* checks for sleepers and claims one to wake. With a sequentially consistent fence on both
//! sides (the Dekker pattern), at least one of the two sees the other: either the sleeper sees the
//! new work and stays up, or the pusher sees the sleeper and wakes it. The waker decrements the
//! sleeper count on the sleeper's behalf, so `num_sleeping` counts exactly the parked workers that
//! nobody has claimed, which is what quiescence detection needs.

use crate::sync::{fence, AtomicU8, AtomicUsize};
use crossbeam_utils::CachePadded;
use std::sync::atomic::Ordering::{Acquire, Relaxed, SeqCst};

const AWAKE: u8 = 0;
const SLEEPING: u8 = 1;
const NOTIFIED: u8 = 2;

/// Which workers are parked.
pub(crate) struct Sleepers {
    num_sleeping: CachePadded<AtomicUsize>,
    states: Box<[CachePadded<AtomicU8>]>,
}

impl Sleepers {
    pub(crate) fn new(workers: usize) -> Self {
        Sleepers {
            num_sleeping: CachePadded::new(AtomicUsize::new(0)),
            states: (0..workers)
                .map(|_| CachePadded::new(AtomicU8::new(AWAKE)))
                .collect(),
        }
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

    /// The re-check found work: stay awake.
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
    }

    /// Whether a notifier has claimed `worker` (so it may stop parking).
    pub(crate) fn is_notified(&self, worker: usize) -> bool {
        self.states[worker].load(Acquire) != SLEEPING
    }

    /// After waking up.
    pub(crate) fn awake(&self, worker: usize) {
        self.states[worker].store(AWAKE, Relaxed);
    }

    /// Called after making work visible. Claims a sleeping worker (`prefer` first) and returns it;
    /// the caller must unpark that worker's thread.
    pub(crate) fn notify(&self, prefer: Option<usize>) -> Option<usize> {
        // Pairs with the fence in `announce`.
        fence(SeqCst);
        if self.num_sleeping.load(SeqCst) == 0 {
            return None;
        }
        let n = self.states.len();
        let start = prefer.unwrap_or(0);
        (0..n).map(|i| (start + i) % n).find(|&w| self.claim(w))
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
            self.num_sleeping.fetch_sub(1, SeqCst);
        }
        claimed
    }

    /// Whether every worker is parked and unclaimed.
    pub(crate) fn all_asleep(&self) -> bool {
        self.num_sleeping.load(SeqCst) == self.states.len()
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

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::sync::AtomicBool;
    use loom::sync::Arc;
    use loom::thread;

    /// A worker going to sleep while another thread publishes work: the worker either sees the
    /// work in its re-check or is woken; it never sleeps with work pending (no lost wake-up).
    #[test]
    fn no_lost_wakeup() {
        loom::model(|| {
            let sleepers = Arc::new(Sleepers::new(1));
            let work = Arc::new(AtomicBool::new(false));
            let worker = {
                let (sleepers, work) = (sleepers.clone(), work.clone());
                thread::spawn(move || {
                    sleepers.announce(0);
                    if work.load(Relaxed) {
                        sleepers.cancel(0);
                    } else {
                        while !sleepers.is_notified(0) {
                            thread::park();
                        }
                        sleepers.awake(0);
                    }
                    assert!(work.load(Relaxed), "woke up without work");
                })
            };
            work.store(true, Relaxed);
            if let Some(w) = sleepers.notify(None) {
                assert_eq!(w, 0);
                worker.thread().unpark();
            }
            worker.join().unwrap();
        });
    }
}
