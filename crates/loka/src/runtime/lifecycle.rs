//! Where a system is in its life — running, draining (a graceful shutdown stops its actors one
//! tree level at a time), stopping (the workers are told to stop), terminated — and which threads
//! are its own.
//!
//! Only shutdown and the few places that must know about it read this: the dead-letter record
//! (a letter that dies while the system shuts down is a `Shutdown` dead letter), the termination
//! of an actor while a graceful shutdown waits for it (one relaxed load per terminated actor
//! otherwise), and `System::shutdown`, which must not join the thread it runs on.

use crate::sync::AtomicU8;
use parking_lot::{Condvar, Mutex};
use std::cell::Cell;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release, SeqCst};
use std::time::Instant;

/// The system runs.
pub(crate) const RUNNING: u8 = 0;
/// A graceful shutdown stops the actors, children first; they still run on the workers.
pub(crate) const DRAINING: u8 = 1;
/// The workers are told to stop; what is left is terminated where the shutdown runs.
pub(crate) const STOPPING: u8 = 2;
/// Every worker and dedicated thread has been joined and every actor terminated.
pub(crate) const TERMINATED: u8 = 3;

thread_local! {
    /// The system whose activations this thread runs (its `Shared`'s address; 0 elsewhere): its
    /// workers, its simulation driver, the dedicated threads of its `thread` actors. Set once per
    /// thread, when it starts.
    static OWNER: Cell<usize> = const { Cell::new(0) };
}

/// Marks this thread as one of the threads that run the activations of the system whose shared
/// state lives at `shared` (see [`is_own_thread`](Lifecycle::is_own_thread)).
pub(crate) fn mark_thread(shared: *const super::Shared) {
    OWNER.with(|o| o.set(shared as usize));
    // Its sends to bounded mailboxes may reserve places ahead (`cell/bound/credit.rs`).
    super::cell::mark_runtime_thread();
}

/// A system's place in its life, and the waits that go with it.
pub(crate) struct Lifecycle {
    phase: AtomicU8,
    /// Actors terminated while `phase` was `DRAINING` (the graceful shutdown waits on it), under
    /// the lock `changed` waits with.
    terminations: Mutex<u64>,
    /// Signalled on every such termination and when the phase becomes `TERMINATED`.
    changed: Condvar,
}

impl Lifecycle {
    pub(crate) fn new() -> Self {
        Lifecycle {
            phase: AtomicU8::new(RUNNING),
            terminations: Mutex::new(0),
            changed: Condvar::new(),
        }
    }

    /// The phase now (`Acquire`: a thread that sees `TERMINATED` sees everything the shutdown did).
    pub(crate) fn phase(&self) -> u8 {
        self.phase.load(Acquire)
    }

    /// Whether a shutdown, graceful or not, has begun. `Relaxed`: a hint (which reason a dead
    /// letter gets, whether a waiter stops waiting for quiescence); nothing read after it depends
    /// on what the shutdown wrote, and the waits that do go through the lock.
    #[inline]
    pub(crate) fn is_shutting_down(&self) -> bool {
        self.phase.load(Relaxed) != RUNNING
    }

    /// Moves from phase `from` to `to`; `false` (and nothing changes) if the phase was not `from`.
    /// `SeqCst` compare-and-swap: of two threads beginning a shutdown exactly one wins.
    /// Wakes the threads waiting on the phase (a graceful shutdown overtaken by a plain one
    /// stops waiting for terminations at once).
    pub(crate) fn advance(&self, from: u8, to: u8) -> bool {
        let _guard = self.terminations.lock();
        let moved = self
            .phase
            .compare_exchange(from, to, SeqCst, SeqCst)
            .is_ok();
        if moved {
            self.changed.notify_all();
        }
        moved
    }

    /// The shutdown is complete: wakes every thread waiting for it.
    pub(crate) fn set_terminated(&self) {
        let _guard = self.terminations.lock();
        self.phase.store(TERMINATED, Release);
        self.changed.notify_all();
    }

    /// Waits until the shutdown is complete, or `deadline`; returns whether it is.
    pub(crate) fn wait_terminated(&self, deadline: Option<Instant>) -> bool {
        let mut guard = self.terminations.lock();
        while self.phase() != TERMINATED {
            match deadline {
                Some(d) => {
                    if self.changed.wait_until(&mut guard, d).timed_out() {
                        return self.phase() == TERMINATED;
                    }
                }
                None => self.changed.wait(&mut guard),
            }
        }
        true
    }

    /// An actor terminated: a graceful shutdown waiting for it hears of it. One relaxed load
    /// while the system runs. A termination that reads a stale `RUNNING` just after the drain
    /// began goes uncounted: the drain then looks again at its next wave (at most `WAVE_LOOK`
    /// later), it never waits for a count alone.
    #[inline]
    pub(crate) fn note_terminated(&self) {
        if self.phase.load(Relaxed) == DRAINING {
            self.count_termination();
        }
    }

    #[cold]
    fn count_termination(&self) {
        let mut count = self.terminations.lock();
        *count += 1;
        self.changed.notify_all();
    }

    /// Terminations counted while draining.
    pub(crate) fn terminations(&self) -> u64 {
        *self.terminations.lock()
    }

    /// Waits until `target` terminations were counted, the phase leaves `DRAINING`, or `until`.
    pub(crate) fn wait_terminations(&self, target: u64, until: Instant) {
        let mut count = self.terminations.lock();
        while *count < target && self.phase() == DRAINING {
            if self.changed.wait_until(&mut count, until).timed_out() {
                return;
            }
        }
    }

    /// Whether the calling thread runs the activations of the system whose shared state is at
    /// `shared` (one of its workers, its simulation driver, a dedicated thread of one of its
    /// actors). Such a thread cannot wait for the workers to stop: it is one of them, or an
    /// actor on it may hold one.
    pub(crate) fn is_own_thread(shared: *const super::Shared) -> bool {
        OWNER.with(|o| o.get() == shared as usize)
    }
}
