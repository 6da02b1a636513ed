//! Loom models of the engine's parking protocol (`idle.rs`): the real `Sleepers::park`, driven
//! with loom's threads and atomics.

use crate::engine::sleepers::Sleepers;
use crate::sync::AtomicBool;
use loom::sync::Arc;
use loom::thread;
use std::sync::atomic::Ordering::{Relaxed, SeqCst};

/// A worker going to sleep while another thread publishes work: the worker either sees the work
/// in its re-check or is woken; it never sleeps with work pending (no lost wake-up).
#[test]
fn no_lost_wakeup() {
    loom::model(|| {
        let sleepers = Arc::new(Sleepers::new(1));
        let work = Arc::new(AtomicBool::new(false));
        let worker = {
            let (sleepers, work) = (sleepers.clone(), work.clone());
            thread::spawn(move || {
                sleepers.park(
                    0,
                    || work.load(Relaxed),
                    || false,
                    || {},
                    || {
                        thread::park();
                        false
                    },
                );
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

/// Shutdown racing a worker that is going to sleep: the worker always returns (loom reports a
/// deadlock if it could park forever), and the sleeper count ends balanced.
#[test]
fn shutdown_wakes_every_sleeper() {
    // Two sleepers and the shutdown thread; bounded at 2 preemptions (the unbounded search takes
    // minutes and found nothing more).
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(2);
    builder.check(|| {
        let sleepers = Arc::new(Sleepers::new(2));
        let shutdown = Arc::new(AtomicBool::new(false));
        let workers: Vec<_> = (0..2)
            .map(|w| {
                let (sleepers, shutdown) = (sleepers.clone(), shutdown.clone());
                thread::spawn(move || {
                    sleepers.park(
                        w,
                        || false,
                        || shutdown.load(Relaxed),
                        || {},
                        || {
                            thread::park();
                            false
                        },
                    );
                })
            })
            .collect();
        // The engine's shutdown: flag first, then claim every sleeper, then unpark every thread.
        shutdown.swap(true, SeqCst);
        sleepers.notify_all();
        for worker in &workers {
            worker.thread().unpark();
        }
        for worker in workers {
            worker.join().unwrap();
        }
        assert!(!sleepers.all_asleep());
        assert_eq!(sleepers.notify(None), None, "no sleeper left counted");
    });
}

/// Quiescence racing a worker whose last look before parking finds work: the worker counts as
/// asleep from its announcement, then leaves the count, takes the work and runs it. The waiter's
/// look must never call that quiescent, whatever the interleaving (without the wake-up count it
/// did: "all asleep" read before the worker left, "no work" read after it took the work).
#[test]
fn quiescence_is_not_seen_while_a_worker_takes_work() {
    loom::model(|| {
        let sleepers = Arc::new(Sleepers::new(1));
        let work = Arc::new(AtomicBool::new(true));
        let worker = {
            let (sleepers, work) = (sleepers.clone(), work.clone());
            thread::spawn(move || {
                sleepers.announce(0);
                if work.load(SeqCst) {
                    sleepers.cancel(0);
                    // Takes the work; it runs from here on, and never parks again in this model.
                    work.store(false, SeqCst);
                }
            })
        };
        assert!(
            !sleepers.quiescent_now(|| !work.load(SeqCst)),
            "quiescent while the worker runs what it took"
        );
        worker.join().unwrap();
    });
}
