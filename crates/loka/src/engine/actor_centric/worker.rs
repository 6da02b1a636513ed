//! One worker thread: run local actors, otherwise steal, otherwise park.

use super::Engine;
use crate::actor::cell::{RunOutcome, TaskRef};
use crate::actor::ActorId;
use crate::policy::cls::Cls;
use crate::policy::Route;
use crate::telemetry::WorkerCounters;
use std::cell::Cell;
use std::ptr;
use std::sync::Arc;
use std::time::Instant;

/// Every this-many activations the worker looks at its inbox first, so actors pushed there by
/// other threads cannot be starved by a busy local deque.
const INBOX_CHECK_INTERVAL: u32 = 61;
/// Consecutive activations from the next slot before queued actors get a turn: a ping-pong pair
/// keeps its locality without starving everyone else on a single worker.
const NEXT_SLOT_STREAK_LIMIT: u32 = 32;
/// `spin_loop` hints between two steal rounds in the spin phase.
const SPIN_PAUSES: u32 = 32;

thread_local! {
    /// The worker running on this thread, if any (set for the whole life of a worker thread).
    static CURRENT: Cell<*const Worker> = const { Cell::new(ptr::null()) };
}

/// A worker's thread-local state. Shared by reference with the activations it runs.
pub(crate) struct Worker {
    index: usize,
    engine: Arc<Engine>,
    deque: crossbeam_deque::Worker<TaskRef>,
    next_slot: Cell<Option<TaskRef>>,
    next_streak: Cell<u32>,
    tick: Cell<u32>,
    next_id: Cell<u64>,
    policy: Cls,
}

impl Worker {
    pub(super) fn new(
        index: usize,
        engine: Arc<Engine>,
        deque: crossbeam_deque::Worker<TaskRef>,
    ) -> Self {
        let config = engine.config();
        let policy = Cls::new(index, config.workers, config.lifo_slot);
        Worker {
            index,
            deque,
            next_slot: Cell::new(None),
            next_streak: Cell::new(0),
            tick: Cell::new(0),
            next_id: Cell::new(1),
            policy,
            engine,
        }
    }

    /// The worker of `engine` running on this thread, if any.
    #[inline]
    pub(crate) fn current_of(engine: &Engine) -> Option<&Worker> {
        CURRENT.with(|c| {
            let w = c.get();
            // SAFETY: `CURRENT` is set only while the worker is alive on this thread (see `run`).
            (!w.is_null())
                .then(|| unsafe { &*w })
                .filter(|w| ptr::eq(Arc::as_ptr(&w.engine), engine))
        })
    }

    pub(crate) fn index(&self) -> usize {
        self.index
    }

    #[inline]
    pub(crate) fn counters(&self) -> &WorkerCounters {
        self.engine.worker_counters(self.index)
    }

    pub(crate) fn policy(&self) -> &Cls {
        &self.policy
    }

    pub(crate) fn next_actor_id(&self) -> ActorId {
        let n = self.next_id.get();
        self.next_id.set(n + 1);
        ActorId(((self.index as u64 + 1) << 48) | n)
    }

    /// Carries out a routing decision for a runnable actor.
    #[inline]
    pub(crate) fn schedule(&self, route: Route, task: TaskRef) {
        match route {
            Route::LocalNext => {
                if let Some(displaced) = self.next_slot.replace(Some(task)) {
                    self.push_head(displaced);
                }
            }
            Route::LocalHead => self.push_head(task),
            Route::Tail(w) => self.engine.push_tail(w, task),
        }
    }

    fn push_head(&self, task: TaskRef) {
        self.deque.push(task);
        self.engine.notify(None);
    }

    /// The worker loop.
    pub(super) fn run(self) {
        CURRENT.with(|c| c.set(&self));
        let mut rng = fastrand::Rng::with_seed(
            self.engine
                .config()
                .seed
                .wrapping_add((self.index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        );
        let mut policy = self.policy.clone();
        loop {
            let task = match self.next_local() {
                Some(task) => task,
                None => match self.search(&mut policy, &mut rng) {
                    Some(task) => task,
                    None if self.engine.is_shutdown() => break,
                    None => continue,
                },
            };
            self.run_task(task);
        }
        CURRENT.with(|c| c.set(ptr::null()));
        // Whatever is still queued here is dropped as plain pointers; shutdown stops the actors.
    }

    fn run_task(&self, task: TaskRef) {
        self.counters().activations.bump(1);
        // SAFETY: the task came out of a run queue (or the next slot) of this system, so this
        // worker now holds its schedule.
        match unsafe { task.run(self) } {
            RunOutcome::Idle | RunOutcome::Stopped => {}
            RunOutcome::Requeue => {
                self.counters().requeues.bump(1);
                let alone = self.next_slot.get().is_none() && self.deque.is_empty();
                if alone {
                    // Nothing else to run here: keep going with this actor.
                    self.next_slot.set(Some(task));
                } else {
                    // Fairness: behind everything else (CAF's `resume_later`).
                    self.engine.push_tail(self.index, task);
                }
            }
        }
    }

    /// Local work: the inbox now and then, the next slot, the deque's head, the inbox.
    fn next_local(&self) -> Option<TaskRef> {
        let tick = self.tick.get().wrapping_add(1);
        self.tick.set(tick);
        if tick % INBOX_CHECK_INTERVAL == 0 {
            if let Some(task) = self.engine.pop_inbox(self.index) {
                return Some(task);
            }
            if self.engine.is_shutdown() {
                return None;
            }
        }
        if let Some(task) = self.next_slot.take() {
            let streak = self.next_streak.get();
            if streak < NEXT_SLOT_STREAK_LIMIT {
                self.next_streak.set(streak + 1);
                self.counters().lifo_runs.bump(1);
                return Some(task);
            }
            // Let queued actors run; the chain continues from the tail.
            self.next_streak.set(0);
            self.engine.push_tail(self.index, task);
        } else {
            self.next_streak.set(0);
        }
        self.deque
            .pop()
            .or_else(|| self.engine.pop_inbox(self.index))
    }

    /// Idle phase: steal (spinning, then yielding), then park. `None` after a wake-up or at
    /// shutdown; the caller looks at its local queues again.
    fn search(&self, policy: &mut Cls, rng: &mut fastrand::Rng) -> Option<TaskRef> {
        let idle = self.engine.config().idle;
        let (spin_until, yield_until) = (idle.spin(), idle.spin_and_yield());
        let start = Instant::now();
        loop {
            if let Some(victim) = policy.next_victim(rng) {
                self.counters().steal_attempts.bump(1);
                if let Some(task) = self.engine.steal_from(victim) {
                    self.counters().steals.bump(1);
                    return Some(task);
                }
            }
            if let Some(task) = self.engine.pop_inbox(self.index) {
                return Some(task);
            }
            if self.engine.is_shutdown() {
                return None;
            }
            let idle_for = start.elapsed();
            if idle_for < spin_until {
                for _ in 0..SPIN_PAUSES {
                    std::hint::spin_loop();
                }
            } else if idle_for < yield_until {
                std::thread::yield_now();
            } else {
                self.engine.park(self.index);
                return None;
            }
        }
    }
}
