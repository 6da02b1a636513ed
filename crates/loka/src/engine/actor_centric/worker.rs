//! One worker thread: run local actors, otherwise steal, otherwise park.

use super::{Engine, EngineHandle, Routing};
use crate::actor::cell::{RunOutcome, TaskRef};
use crate::actor::ActorId;
use crate::policy::cls::Cls;
use crate::policy::hierarchical::{self, StealStep};
use crate::policy::lgs::{self, LgsVariants, WeightedVictims};
use crate::policy::{PolicyKind, Route};
use crate::telemetry::{WorkerCounters, MAX_LEVELS};
use std::cell::Cell;
use std::ptr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Every this-many activations the worker looks at its inbox first, so actors pushed there by
/// other threads cannot be starved by a busy local deque.
const INBOX_CHECK_INTERVAL: u32 = 61;
/// Consecutive activations from the next slot before queued actors get a turn: a ping-pong pair
/// keeps its locality without starving everyone else on a single worker.
const NEXT_SLOT_STREAK_LIMIT: u32 = 32;
/// `spin_loop` hints between two steal rounds in the spin phase.
const SPIN_PAUSES: u32 = 32;
/// One wake-up in this many gets its queue wait measured (two clock reads).
const QUEUE_WAIT_SAMPLE_INTERVAL: u32 = 16;
/// How long an `lgs:nosleep` worker keeps polling before it parks after all.
const NOSLEEP_POLL: Duration = Duration::from_millis(10);

thread_local! {
    /// The worker running on this thread, if any (set for the whole life of a worker thread).
    static CURRENT: Cell<*const Worker> = const { Cell::new(ptr::null()) };
}

/// How a thief picks victims.
#[derive(Debug, Clone)]
enum Victims {
    /// `cls`: uniformly random other worker.
    Random(Cls),
    /// `lgs`: weighted over nested groups.
    Weighted(WeightedVictims),
    /// `hierarchical`: Alg. 4.4's plan.
    Plan(Vec<StealStep>),
}

/// A worker's thread-local state. Shared by reference with the activations it runs.
pub(crate) struct Worker {
    index: usize,
    engine: Arc<Engine>,
    /// What actors spawned here clone to keep the engine alive (see [`EngineHandle`]).
    handle: Arc<EngineHandle>,
    deque: crossbeam_deque::Worker<TaskRef>,
    next_slot: Cell<Option<TaskRef>>,
    next_streak: Cell<u32>,
    tick: Cell<u32>,
    sample_tick: Cell<u32>,
    next_id: Cell<u64>,
    policy: Cls,
    /// How runnable actors are routed (the engine's decision, kept at hand).
    routing: Routing,
    /// Group level of each other worker as seen from this one (for steals-by-level).
    level_of: Vec<u8>,
    /// Activations since this worker last tried a load-balancing round (hierarchical).
    since_balance: Cell<u64>,
}

impl Worker {
    pub(super) fn new(
        index: usize,
        engine: Arc<Engine>,
        deque: crossbeam_deque::Worker<TaskRef>,
    ) -> Self {
        let config = engine.config();
        let policy = Cls::new(index, config.workers, config.lifo_slot);
        let groups = engine.machine().layout.groups(index);
        let mut level_of = vec![0u8; config.workers];
        for (level, group) in groups.iter().enumerate().rev() {
            for &w in group {
                level_of[w] = level.min(MAX_LEVELS - 1) as u8;
            }
        }
        let routing = engine.routing();
        Worker {
            index,
            handle: Arc::new(EngineHandle(Arc::clone(&engine))),
            deque,
            next_slot: Cell::new(None),
            next_streak: Cell::new(0),
            tick: Cell::new(0),
            sample_tick: Cell::new(0),
            next_id: Cell::new(1),
            policy,
            routing,
            level_of,
            since_balance: Cell::new(0),
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

    fn is_hierarchical(&self) -> bool {
        matches!(self.routing, Routing::Hierarchical { .. })
    }

    /// This worker's engine handle, for cells spawned here.
    pub(crate) fn handle(&self) -> &Arc<EngineHandle> {
        &self.handle
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

    /// Routes an actor woken by a message from an actor running here.
    #[inline]
    pub(crate) fn schedule_woken(&self, task: TaskRef) {
        let local = self.policy.route_woken();
        let route = match self.routing {
            Routing::Local => local,
            Routing::Lgs(variants) => self.lgs_route(variants, task, local),
            Routing::Hierarchical { auto_hubs } => self.hierarchical_route(auto_hubs, task),
        };
        self.sample_queue_wait(task);
        self.schedule(route, task);
    }

    /// Listing 5.3, plus the bookkeeping of the hub rule.
    fn lgs_route(&self, variants: LgsVariants, task: TaskRef, local: Route) -> Route {
        let placement = task.placement();
        let home = placement.pinned_home();
        let layout = &self.engine.machine().layout;
        let route = lgs::route_woken(
            variants,
            Some(self.index),
            home,
            |a, b| layout.same_group0(a, b),
            local,
        );
        match route {
            Route::Tail(_) | Route::Head(_) => {
                self.counters().hpu_pushes.bump(1);
                if variants.auto && placement.note_remote_wake() {
                    self.counters().hubs_released.bump(1);
                    // Released: from now on it runs where its partners are.
                    return local;
                }
            }
            Route::LocalNext | Route::LocalHead => {
                if variants.auto && home.is_some() {
                    placement.note_local_wake();
                }
            }
            Route::Pinned(_) | Route::Foreign { .. } => {
                unreachable!("LGS routes only locally or to a home PU's head or tail")
            }
        }
        route
    }

    /// `hierarchical` routing, plus the online hub detection of `hierarchical:auto`: an actor woken
    /// again and again from other workers than its own talks with many partners spread over the
    /// machine, so it becomes a hub and stays put.
    fn hierarchical_route(&self, auto_hubs: bool, task: TaskRef) -> Route {
        let placement = task.placement();
        if auto_hubs && !placement.is_hub() {
            match placement.last() {
                Some(last) if last != self.index && placement.note_foreign_sender() => {
                    self.counters().hubs.bump(1);
                }
                Some(last) if last != self.index => {}
                Some(_) => placement.note_local_wake(),
                None => {}
            }
        }
        self.engine
            .hierarchical_route(task, Some(self.index))
            .unwrap_or(Route::LocalNext)
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
            Route::Head(w) if w == self.index => self.push_head(task),
            Route::Head(w) => self.engine.push_urgent(w, task),
            Route::Pinned(w) => self.engine.push_pinned(w, task),
            Route::Foreign { worker, home_node } => {
                self.engine.push_foreign(worker, home_node, task)
            }
        }
    }

    fn push_head(&self, task: TaskRef) {
        self.deque.push(task);
        self.engine.notify(None);
    }

    /// Every few wake-ups, stamps the actor so its queue wait is measured when it runs.
    #[inline]
    fn sample_queue_wait(&self, task: TaskRef) {
        let tick = self.sample_tick.get().wrapping_add(1);
        self.sample_tick.set(tick);
        if tick % QUEUE_WAIT_SAMPLE_INTERVAL == 0 {
            task.placement()
                .enqueued_at
                .store(self.engine.now_ns(), std::sync::atomic::Ordering::Relaxed);
        }
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
        let mut victims = match self.engine.config().policy {
            PolicyKind::Cls => Victims::Random(self.policy.clone()),
            PolicyKind::Lgs(_) => Victims::Weighted(WeightedVictims::new(
                self.engine.machine().layout.groups(self.index),
            )),
            PolicyKind::Hierarchical { .. } => Victims::Plan(hierarchical::steal_plan(
                self.index,
                &self.engine.machine().layout,
            )),
        };
        loop {
            let task = match self.next_local() {
                Some(task) => task,
                None => match self.search(&mut victims, &mut rng) {
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
        let counters = self.counters();
        counters.activations.bump(1);
        if self.is_hierarchical() {
            // Alg. 4.2 lines 16–18: enough work done since the last round → try one.
            let interval = self.engine.config().balance_interval;
            let since = self.since_balance.get() + 1;
            if interval > 0 && since >= interval {
                self.since_balance.set(0);
                self.engine.balance(self);
            } else {
                self.since_balance.set(since);
            }
        }
        self.account_locality(task);
        // SAFETY: the task came out of a run queue (or the next slot) of this system, so this
        // worker now holds its schedule.
        match unsafe { task.run(self) } {
            RunOutcome::Idle | RunOutcome::Stopped => {}
            RunOutcome::Requeue => {
                counters.requeues.bump(1);
                if self.is_hierarchical() {
                    // Hubs stay pinned here; foreign actors stay findable by their home node.
                    if let Some(route @ (Route::Pinned(_) | Route::Foreign { .. })) =
                        self.engine.hierarchical_route(task, Some(self.index))
                    {
                        let route = match route {
                            Route::Pinned(_) => Route::Pinned(self.index),
                            other => other,
                        };
                        self.schedule(route, task);
                        return;
                    }
                }
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

    /// Before an activation: the first-activation home rule (Listing 5.2; under `cls` the first
    /// worker to run an actor is its home), where it runs relative to its home, its queue wait.
    #[inline]
    fn account_locality(&self, task: TaskRef) {
        let placement = task.placement();
        let layout = &self.engine.machine().layout;
        if placement.first_run() {
            let home = lgs::first_activation_home(placement.home(), self.index, |a, b| {
                layout.same_group0(a, b)
            });
            placement.set_home(home);
        }
        let counters = self.counters();
        if placement
            .swap_last(self.index)
            .is_some_and(|last| last != self.index)
        {
            counters.migrations.bump(1);
        }
        match placement.home() {
            Some(home) if home == self.index => counters.exec_home_pu.bump(1),
            Some(home) if layout.node_of(home) == layout.node_of(self.index) => {
                counters.exec_home_node.bump(1)
            }
            Some(_) => counters.exec_remote_node.bump(1),
            None => {}
        }
        let stamped = placement
            .enqueued_at
            .load(std::sync::atomic::Ordering::Relaxed);
        if stamped != 0 {
            placement
                .enqueued_at
                .store(0, std::sync::atomic::Ordering::Relaxed);
            counters.queue_wait_samples.bump(1);
            counters.record_queue_wait(self.engine.now_ns().saturating_sub(stamped));
        }
    }

    /// Local work: urgent head pushes (LGS-DFS), the inbox now and then, the next slot, the
    /// deque's head, the inbox.
    fn next_local(&self) -> Option<TaskRef> {
        if self.is_hierarchical() {
            if let Some(task) = self.engine.pop_pinned(self.index) {
                return Some(task);
            }
            // Alg. 4.2 lines 3–15: follow a migration path before anything else.
            if let Some(task) = self.engine.pull_migration(self) {
                return Some(task);
            }
        }
        if matches!(self.routing, Routing::Lgs(v) if v.dfs) {
            if let Some(task) = self.engine.pop_urgent(self.index) {
                return Some(task);
            }
        }
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
            if streak < NEXT_SLOT_STREAK_LIMIT || !self.has_local_work() {
                self.next_streak.set(streak + 1);
                self.counters().lifo_runs.bump(1);
                return Some(task);
            }
            // Queued actors wait behind a long chain: let them run; the chain continues from the
            // tail. No wake-up: an idle thief would only tear the chain across cores.
            self.next_streak.set(0);
            self.engine.push_tail_quietly(self.index, task);
        } else {
            self.next_streak.set(0);
        }
        self.deque
            .pop()
            .or_else(|| self.engine.pop_inbox(self.index))
            .or_else(|| {
                if self.is_hierarchical() {
                    self.engine.pop_own_foreign(self.index)
                } else {
                    None
                }
            })
    }

    /// One pass over Alg. 4.4's plan.
    fn follow_plan(&self, plan: &[StealStep]) -> Option<TaskRef> {
        let layout = &self.engine.machine().layout;
        let my_node = layout.node_of(self.index);
        for step in plan {
            let counters = self.counters();
            counters.steal_attempts.bump(1);
            let (task, victim) = match step {
                StealStep::Foreign { victim, node } => {
                    let task = self.engine.steal_foreign(*victim, *node);
                    if task.is_some() && *node == my_node {
                        counters.bring_home_steals.bump(1);
                    }
                    (task, *victim)
                }
                StealStep::Worker { victim } => (self.engine.steal_from(*victim), *victim),
                StealStep::LongestOf { workers } => match self.engine.longest_of(workers) {
                    Some(victim) => (self.engine.steal_from(victim), victim),
                    None => (None, 0),
                },
            };
            if let Some(task) = task {
                counters.steals.bump(1);
                counters.steals_by_level[(self.level_of[victim] as usize).min(MAX_LEVELS - 1)]
                    .bump(1);
                return Some(task);
            }
        }
        None
    }

    /// Whether anything besides the next slot waits on this worker.
    fn has_local_work(&self) -> bool {
        !self.deque.is_empty() || self.engine.has_inbox_work(self.index)
    }

    /// Idle phase: steal (spinning, then yielding), then park. `None` after a wake-up or at
    /// shutdown; the caller looks at its local queues again.
    fn search(&self, victims: &mut Victims, rng: &mut fastrand::Rng) -> Option<TaskRef> {
        let idle = self.engine.config().idle;
        let nosleep = matches!(self.engine.config().policy, PolicyKind::Lgs(v) if v.nosleep);
        let spin_until = idle.spin();
        let yield_until = if nosleep {
            idle.spin_and_yield() + NOSLEEP_POLL
        } else {
            idle.spin_and_yield()
        };
        if let Victims::Weighted(w) = victims {
            w.restart();
            self.counters().backoff_resets.bump(1);
        }
        self.engine.note_out_of_work(self.index);
        let start = Instant::now();
        loop {
            if let Victims::Plan(plan) = victims {
                if let Some(task) = self.follow_plan(plan) {
                    return Some(task);
                }
            }
            let victim = match victims {
                Victims::Random(p) => p.next_victim(rng).map(|v| (v, self.level_of[v] as usize)),
                Victims::Weighted(w) => w.next_victim(rng),
                Victims::Plan(_) => None,
            };
            if let Some((victim, level)) = victim {
                self.counters().steal_attempts.bump(1);
                if let Some(task) = self.engine.steal_from(victim) {
                    self.counters().steals.bump(1);
                    self.counters().steals_by_level[level.min(MAX_LEVELS - 1)].bump(1);
                    return Some(task);
                }
            }
            if let Some(task) = self
                .engine
                .pop_inbox(self.index)
                .or_else(|| self.engine.pop_urgent(self.index))
                .or_else(|| self.engine.pop_pinned(self.index))
                .or_else(|| self.engine.pop_own_foreign(self.index))
            {
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
