//! The actor-centric engine: per-worker queues of runnable actors (SPEC §3).
//!
//! Each worker owns
//! * a *next slot* (owner only, not stealable): the actor woken last by this worker's actors;
//! * a Chase-Lev deque (crossbeam): the owner pushes and pops at the head (CAF's internal enqueue);
//!   thieves take one actor from the other end;
//! * an *inbox* (crossbeam `Injector`): the tail where other threads push (CAF's external enqueue),
//!   and where the owner re-queues actors that used up their throughput budget.
//!
//! The scheduling *decisions* (where a woken or spawned actor goes, whom to steal from) come from
//! [`crate::policy`]; this module only carries them out.

mod idle;
mod worker;

pub(crate) use worker::Worker;

use crate::actor::cell::TaskRef;
use crate::actor::{ActorFailure, ActorId, SpawnOptions};
use crate::config::Config;
use crate::machine::Machine;
use crate::policy::placement::PlacementStrategy;
use crate::policy::{balance, cls, hierarchical, lgs, LgsVariants, PolicyKind, Route};
use crate::telemetry::{Stats, SystemCounters, WorkerCounters};
use crossbeam_deque::{Injector, Stealer};
use crossbeam_utils::CachePadded;
use idle::Sleepers;
use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::sync::atomic::{
    AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering::Relaxed, Ordering::SeqCst,
};
use std::sync::{Arc, OnceLock};
use std::thread::{JoinHandle, Thread};
use std::time::{Duration, Instant};

/// Registry shards: spawns and terminations on different workers rarely meet on one lock.
const REGISTRY_SHARDS: usize = 64;

/// Live actors whose ids hash to one shard. Fx hashing: ids are unique integers made by loka, not
/// attacker-chosen keys, and SipHash's flood resistance cost a spawn–stop pair ~15% of its time.
type RegistryShard = HashMap<ActorId, TaskRef, rustc_hash::FxBuildHasher>;

/// The part of a worker other threads see.
pub(crate) struct WorkerShared {
    inbox: Injector<TaskRef>,
    /// Wake-ups other workers push at this worker's *head* (LGS-DFS); the owner takes these first.
    urgent: Injector<TaskRef>,
    /// Actors only this worker may run (hubs under `hierarchical`); thieves never look here.
    pinned: Injector<TaskRef>,
    /// Per home NUMA node: actors runnable here that live away from home (`hierarchical`), where
    /// thieves of that node look first to bring them home.
    foreign: Box<[Injector<TaskRef>]>,
    stealer: Stealer<TaskRef>,
    thread: OnceLock<Thread>,
    counters: CachePadded<WorkerCounters>,
    /// Load balancing (hierarchical): the migration path this worker follows (pull-based).
    migration: Migration,
    /// Set when the worker went idle since the last balancing round (Erlang's `OutOfWork`).
    out_of_work: AtomicBool,
}

/// A pull-based migration assignment (Alg. 4.2): take up to `left` actors from `from` (a worker,
/// or with `global` a NUMA node).
#[derive(Default)]
struct Migration {
    from: AtomicUsize,
    left: AtomicUsize,
    global: AtomicBool,
}

/// How runnable actors are routed, decided once from the scheduler policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Routing {
    /// `cls`, and `lgs:tp` (pinned workers, free actors): a woken actor runs on the sender's
    /// worker.
    Local,
    /// `lgs` other than `tp`: wake-ups follow home PUs (Listing 5.3).
    Lgs(LgsVariants),
    /// `hierarchical`: pinned hubs, home nodes, foreign queues.
    Hierarchical {
        /// Mark hubs online (`hierarchical:auto`).
        auto_hubs: bool,
    },
}

impl Routing {
    fn of(policy: PolicyKind) -> Routing {
        match policy {
            PolicyKind::Cls => Routing::Local,
            PolicyKind::Lgs(v) if v.tp => Routing::Local,
            PolicyKind::Lgs(v) => Routing::Lgs(v),
            PolicyKind::Hierarchical { auto_hubs } => Routing::Hierarchical { auto_hubs },
        }
    }
}

/// A reference to the engine with its own reference count.
///
/// Every actor cell keeps the engine alive. If all cells cloned one `Arc<Engine>`, every spawn and
/// every stop would be a locked read-modify-write on one cache line shared by all workers; instead
/// each worker (and the `System`) owns a handle, and cells clone the handle of the worker that
/// spawned them, so the count they touch mostly stays in that worker's cache.
pub(crate) struct EngineHandle(pub(crate) Arc<Engine>);

impl std::ops::Deref for EngineHandle {
    type Target = Engine;
    #[inline]
    fn deref(&self) -> &Engine {
        &self.0
    }
}

/// State shared by all workers of one system.
pub(crate) struct Engine {
    config: Config,
    routing: Routing,
    machine: Machine,
    workers: Box<[WorkerShared]>,
    /// Deques waiting for their worker thread to take them.
    deques: Mutex<Vec<Option<crossbeam_deque::Worker<TaskRef>>>>,
    sleepers: Sleepers,
    round_robin: CachePadded<AtomicUsize>,
    next_external_id: AtomicU64,
    /// Live actors, so shutdown can stop every one of them.
    registry: Box<[CachePadded<Mutex<RegistryShard>>]>,
    shutdown: CachePadded<AtomicBool>,
    counters: SystemCounters,
    failures: Mutex<Vec<ActorFailure>>,
    quiet_lock: Mutex<()>,
    quiet: Condvar,
    /// Origin of the queue-wait timestamps.
    clock: Instant,
    /// Load-balancing history, held by the worker computing a round (others skip the round).
    balance: Mutex<BalanceHistory>,
    /// Placement strategies for regular actors [0] and hubs [1], changeable at run time.
    strategies: [AtomicU8; 2],
    /// Spawns placed by each strategy slot so far (their round-robin position).
    tickets: [CachePadded<AtomicUsize>; 2],
}

impl Engine {
    /// Builds the engine and starts its worker threads.
    pub(crate) fn start(config: Config, machine: Machine) -> (Arc<Engine>, Vec<JoinHandle<()>>) {
        let n = config.workers;
        let deques: Vec<_> = (0..n)
            .map(|_| crossbeam_deque::Worker::new_lifo())
            .collect();
        let workers = deques
            .iter()
            .map(|d| WorkerShared {
                inbox: Injector::new(),
                urgent: Injector::new(),
                pinned: Injector::new(),
                foreign: (0..machine.layout.node_count())
                    .map(|_| Injector::new())
                    .collect(),
                stealer: d.stealer(),
                thread: OnceLock::new(),
                counters: CachePadded::new(WorkerCounters::default()),
                migration: Migration::default(),
                out_of_work: AtomicBool::new(false),
            })
            .collect();
        let engine = Arc::new(Engine {
            workers,
            deques: Mutex::new(deques.into_iter().map(Some).collect()),
            sleepers: Sleepers::new(n),
            round_robin: CachePadded::new(AtomicUsize::new(0)),
            next_external_id: AtomicU64::new(1),
            registry: (0..REGISTRY_SHARDS)
                .map(|_| CachePadded::new(Mutex::new(HashMap::default())))
                .collect(),
            shutdown: CachePadded::new(AtomicBool::new(false)),
            counters: SystemCounters::default(),
            failures: Mutex::new(Vec::new()),
            quiet_lock: Mutex::new(()),
            quiet: Condvar::new(),
            clock: Instant::now(),
            balance: Mutex::new(BalanceHistory::new(n)),
            strategies: [
                AtomicU8::new(strategy_index(config.placement)),
                AtomicU8::new(strategy_index(config.hub_placement)),
            ],
            tickets: [
                CachePadded::new(AtomicUsize::new(0)),
                CachePadded::new(AtomicUsize::new(0)),
            ],
            routing: Routing::of(config.policy),
            config,
            machine,
        });
        let ready = Arc::new(std::sync::Barrier::new(n + 1));
        let threads = (0..n)
            .map(|index| {
                let engine = Arc::clone(&engine);
                let ready = Arc::clone(&ready);
                std::thread::Builder::new()
                    .name(format!("loka-worker-{index}"))
                    .spawn(move || {
                        let _ = engine.workers[index].thread.set(std::thread::current());
                        engine.machine.pin_worker(&engine.config, index);
                        let deque = engine.deques.lock()[index]
                            .take()
                            .expect("each worker's deque is taken once");
                        ready.wait();
                        // Handler panics are caught per actor. A panic here is a bug in loka itself:
                        // its invariants no longer hold, and a dead worker would leave its actors
                        // stranded and the system hung, so fail loudly instead.
                        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            Worker::new(index, engine, deque).run()
                        }));
                        if run.is_err() {
                            eprintln!("loka: worker {index} panicked outside any actor handler (a bug in loka); aborting");
                            std::process::abort();
                        }
                    })
                    .expect("spawning a worker thread")
            })
            .collect();
        // Every worker has published its thread handle before anyone can try to wake it.
        ready.wait();
        (engine, threads)
    }

    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    pub(crate) fn machine(&self) -> &Machine {
        &self.machine
    }

    #[inline]
    pub(crate) fn throughput(&self) -> usize {
        self.config.throughput
    }

    pub(crate) fn is_shutdown(&self) -> bool {
        self.shutdown.load(Relaxed)
    }

    pub(crate) fn worker_counters(&self, worker: usize) -> &WorkerCounters {
        &self.workers[worker].counters
    }

    /// A fresh actor id: `(worker + 1) << 48 | n` from workers, `n` from plain threads.
    pub(crate) fn next_actor_id(&self, from: Option<&Worker>) -> ActorId {
        match from {
            Some(worker) => worker.next_actor_id(),
            None => ActorId(self.next_external_id.fetch_add(1, Relaxed)),
        }
    }

    fn registry_shard(&self, id: ActorId) -> &Mutex<RegistryShard> {
        // Ids are sequential per worker; mixing in the worker bits spreads workers over shards.
        let h = id.0 ^ (id.0 >> 48).wrapping_mul(0x9E37_79B9);
        &self.registry[(h as usize) % REGISTRY_SHARDS]
    }

    pub(crate) fn register(&self, id: ActorId, task: TaskRef, from: Option<&Worker>) {
        self.registry_shard(id).lock().insert(id, task);
        match from {
            Some(worker) => worker.counters().spawned.bump(1),
            None => self.counters.external_spawns.add_shared(1),
        }
    }

    pub(crate) fn unregister(&self, id: ActorId) {
        self.registry_shard(id).lock().remove(&id);
    }

    pub(crate) fn note_stopped(&self, worker: Option<&Worker>) {
        match worker {
            Some(worker) => worker.counters().stopped.bump(1),
            None => self.counters.actors_stopped.add_shared(1),
        }
    }

    pub(crate) fn note_dead_letters(&self, actor: ActorId, n: u64) {
        if n > 0 {
            self.counters.dead_letters.add_shared(n);
            tracing::debug!(%actor, dropped = n, "messages to a stopped actor dropped (dead letters)");
        }
    }

    pub(crate) fn record_failure(&self, failure: ActorFailure) {
        self.counters.panics.add_shared(1);
        self.failures.lock().push(failure);
    }

    pub(crate) fn failures(&self) -> Vec<ActorFailure> {
        self.failures.lock().clone()
    }

    /// Queues an actor woken by a send.
    #[inline]
    pub(crate) fn schedule_woken(&self, task: TaskRef) {
        match Worker::current_of(self) {
            Some(worker) => worker.schedule_woken(task),
            None => {
                self.counters.external_sends.add_shared(1);
                if let Routing::Hierarchical { .. } = self.routing {
                    match self.hierarchical_route(task, None) {
                        Some(route) => self.push_route_external(route, task),
                        None => self.schedule_external(task, crate::actor::Placement::Default),
                    }
                    return;
                }
                // LGS, Listing 5.3: from a plain thread, to the tail of the actor's home.
                match (self.lgs_routing(), task.placement().pinned_home()) {
                    (Some(variants), Some(home)) => {
                        let neighbours = |a, b| self.machine.layout.same_group0(a, b);
                        let route = lgs::route_woken(
                            variants,
                            None,
                            Some(home),
                            neighbours,
                            Route::LocalHead,
                        );
                        self.push_route_external(route, task);
                    }
                    _ => self.schedule_external(task, crate::actor::Placement::Default),
                }
            }
        }
    }

    /// Where a woken actor goes under `hierarchical` (see [`hierarchical::wake_target`]): a hub to
    /// its worker's pinned queue, an actor away from its home node to a foreign queue, others back
    /// where they last ran. `None` when the actor never ran and no sender worker is known.
    pub(crate) fn hierarchical_route(&self, task: TaskRef, sender: Option<usize>) -> Option<Route> {
        let placement = task.placement();
        let hub = placement.is_hub();
        let layout = &self.machine.layout;
        let sender_on_home_node = match (sender, placement.home()) {
            (Some(s), Some(home)) => layout.node_of(s) == layout.node_of(home),
            (Some(_), None) => true,
            (None, _) => false,
        };
        let target = hierarchical::wake_target(
            hub,
            placement.home(),
            placement.last(),
            sender,
            sender_on_home_node,
        )?;
        let here = Some(target) == sender;
        if hub {
            // Even on its own worker a hub skips the next slot, which spills into stealable
            // queues; the owner looks at its pinned queue first anyway.
            return Some(Route::Pinned(target));
        }
        if let Some(home) = placement.home() {
            let home_node = layout.node_of(home);
            if home_node != layout.node_of(target) {
                return Some(Route::Foreign {
                    worker: target,
                    home_node,
                });
            }
        }
        Some(if here {
            Route::LocalNext
        } else {
            Route::Tail(target)
        })
    }

    /// How runnable actors are routed.
    #[inline]
    pub(crate) fn routing(&self) -> Routing {
        self.routing
    }

    /// The LGS variant switches when wake-ups follow home PUs (`lgs`, not `lgs:tp`).
    #[inline]
    fn lgs_routing(&self) -> Option<LgsVariants> {
        match self.routing {
            Routing::Lgs(v) => Some(v),
            _ => None,
        }
    }

    /// Queues a freshly spawned actor for its first activation: an explicit `Placement` wins,
    /// then the placement strategy for its kind (hub or regular). Under LGS the worker it is placed
    /// on becomes its home PU; under `hierarchical` a hub is pinned there.
    pub(crate) fn schedule_spawned(
        &self,
        task: TaskRef,
        options: &SpawnOptions,
        from: Option<&Worker>,
    ) {
        let hub = task.placement().is_hub();
        let strategy = self.placement_strategy(hub);
        let explicit = options.placement != crate::actor::Placement::Default;
        let route = if explicit || strategy == PlacementStrategy::Default {
            match from {
                Some(worker) => worker.policy().route_spawned(options.placement),
                None => self.external_route(options.placement),
            }
        } else {
            let ticket = self.tickets[usize::from(hub)].fetch_add(1, Relaxed);
            let mut rng = fastrand::Rng::with_seed(self.config.seed ^ ticket as u64);
            let parent = from.map(Worker::index);
            match strategy.place(parent, ticket, &mut rng, &self.machine.layout) {
                w if Some(w) == parent => Route::LocalHead,
                w => Route::Tail(w),
            }
        };
        let placed = match route {
            Route::LocalNext | Route::LocalHead => from.map(Worker::index),
            Route::Tail(w) | Route::Head(w) | Route::Pinned(w) => Some(w),
            Route::Foreign { worker, .. } => Some(worker),
        };
        if self.lgs_routing().is_some() {
            task.placement().set_home(placed);
        }
        let route = match (self.routing, placed) {
            // A hub lives on the worker it was placed on, out of every thief's reach.
            (Routing::Hierarchical { .. }, Some(w)) if hub => Route::Pinned(w),
            _ => route,
        };
        match from {
            Some(worker) => worker.schedule(route, task),
            None => self.push_route_external(route, task),
        }
    }

    fn placement_strategy(&self, hub: bool) -> PlacementStrategy {
        PlacementStrategy::ALL[self.strategies[usize::from(hub)].load(Relaxed) as usize]
    }

    /// Changes the placement strategy for hubs or regular actors from now on.
    pub(crate) fn set_placement(&self, hubs: bool, strategy: PlacementStrategy) {
        self.strategies[usize::from(hubs)].store(strategy_index(strategy), Relaxed);
    }

    /// Counts an actor marked as a hub.
    pub(crate) fn note_hub(&self, worker: Option<&Worker>) {
        match worker {
            Some(worker) => worker.counters().hubs.bump(1),
            None => self.counters.external_hubs.add_shared(1),
        }
    }

    fn schedule_external(&self, task: TaskRef, placement: crate::actor::Placement) {
        self.push_route_external(self.external_route(placement), task);
    }

    /// Where work from a plain thread goes (`cls`: round robin unless placed).
    fn external_route(&self, placement: crate::actor::Placement) -> Route {
        let ticket = self.round_robin.fetch_add(1, Relaxed);
        cls::route_external(placement, ticket, self.workers.len())
    }

    /// Carries out a route decided for a plain thread (no local queue of its own).
    pub(crate) fn push_route_external(&self, route: Route, task: TaskRef) {
        match route {
            Route::Tail(w) => self.push_tail(w, task),
            Route::Head(w) => self.push_urgent(w, task),
            Route::Pinned(w) => self.push_pinned(w, task),
            Route::Foreign { worker, home_node } => self.push_foreign(worker, home_node, task),
            Route::LocalNext | Route::LocalHead => {
                unreachable!("plain threads have no local queue: {route:?}")
            }
        }
    }

    /// The head of worker `w`'s queue from elsewhere (LGS-DFS).
    pub(crate) fn push_urgent(&self, w: usize, task: TaskRef) {
        self.workers[w].urgent.push(task);
        self.notify(Some(w));
    }

    /// Worker `w`'s pinned queue (only `w` runs it).
    pub(crate) fn push_pinned(&self, w: usize, task: TaskRef) {
        self.workers[w].pinned.push(task);
        self.notify(Some(w));
    }

    /// Worker `w`'s foreign queue for home node `node`.
    pub(crate) fn push_foreign(&self, w: usize, node: usize, task: TaskRef) {
        self.workers[w].foreign[node].push(task);
        self.notify(Some(w));
    }

    /// Pops from worker `w`'s pinned queue (owner only).
    pub(crate) fn pop_pinned(&self, w: usize) -> Option<TaskRef> {
        steal_one(|| self.workers[w].pinned.steal())
    }

    /// Takes one actor of home node `node` from worker `victim`'s foreign queue.
    pub(crate) fn steal_foreign(&self, victim: usize, node: usize) -> Option<TaskRef> {
        steal_one(|| self.workers[victim].foreign[node].steal())
    }

    /// Pops from any of worker `w`'s own foreign queues.
    pub(crate) fn pop_own_foreign(&self, w: usize) -> Option<TaskRef> {
        self.workers[w]
            .foreign
            .iter()
            .find_map(|q| steal_one(|| q.steal()))
    }

    /// The worker among `workers` with the most stealable work.
    pub(crate) fn longest_of(&self, workers: &[usize]) -> Option<usize> {
        workers
            .iter()
            .copied()
            .map(|w| {
                (
                    self.workers[w].stealer.len() + self.workers[w].inbox.len(),
                    w,
                )
            })
            .filter(|&(len, _)| len > 0)
            .max()
            .map(|(_, w)| w)
    }

    /// Alg. 4.1: computes migration limits and paths, locally for `me`'s NUMA node or globally
    /// between nodes when they are out of balance, and hands out pull assignments. Skipped if
    /// another worker is computing a round.
    pub(crate) fn balance(&self, me: &Worker) {
        let Some(mut history) = self.balance.try_lock() else {
            return;
        };
        me.counters().balance_rounds.bump(1);
        let layout = &self.machine.layout;
        let lengths: Vec<usize> = self
            .workers
            .iter()
            .map(|w| w.stealer.len() + w.inbox.len())
            .collect();
        let out_of_work: Vec<bool> = self
            .workers
            .iter()
            .map(|w| w.out_of_work.swap(false, Relaxed))
            .collect();
        let slot = history.round % 8;
        history.round += 1;
        let history = &mut *history;
        let avg_work: Vec<f64> = self
            .workers
            .iter()
            .zip(history.last_activations.iter_mut())
            .zip(history.recent.iter_mut())
            .map(|((worker, last), recent)| {
                let now = worker.counters.activations.get();
                recent[slot] = now - *last;
                *last = now;
                recent.iter().sum::<u64>() as f64 / 8.0
            })
            .collect();
        let avail = balance::availability(&out_of_work, &avg_work);
        // Node limits: every node's queues as one (Alg. 4.1 line 7).
        let nodes = layout.node_count();
        let node_len: Vec<usize> = (0..nodes)
            .map(|node| {
                layout
                    .workers_of_node(node)
                    .iter()
                    .map(|&w| lengths[w])
                    .sum()
            })
            .collect();
        let node_avail: Vec<f64> = (0..nodes)
            .map(|node| layout.workers_of_node(node).iter().map(|&w| avail[w]).sum())
            .collect();
        let node_limits = balance::migration_limits(&node_len, &node_avail);
        if nodes > 1 && balance::needs_global_round(&node_limits, self.config.balance_threshold) {
            let d: Vec<i64> = node_len
                .iter()
                .zip(&node_limits)
                .map(|(&len, &lim)| len as i64 - lim as i64)
                .collect();
            for path in balance::migration_paths(&d) {
                let pullers = layout.workers_of_node(path.to);
                let share = path.count.div_ceil(pullers.len().max(1));
                for &w in pullers {
                    self.assign(w, path.from, share, true);
                }
            }
        } else {
            let local = layout.workers_of_node(layout.node_of(me.index()));
            let lens: Vec<usize> = local.iter().map(|&w| lengths[w]).collect();
            let ooo: Vec<bool> = local.iter().map(|&w| out_of_work[w]).collect();
            let work: Vec<f64> = local.iter().map(|&w| avg_work[w]).collect();
            for path in balance::plan(&lens, &ooo, &work) {
                self.assign(local[path.to], local[path.from], path.count, false);
            }
        }
    }

    fn assign(&self, worker: usize, from: usize, count: usize, global: bool) {
        let m = &self.workers[worker].migration;
        m.from.store(from, Relaxed);
        m.global.store(global, Relaxed);
        // Release: a puller that sees `left` sees `from` and `global`.
        m.left.store(count, std::sync::atomic::Ordering::Release);
        self.notify(Some(worker));
    }

    /// Alg. 4.2: follows `me`'s migration path, if any: one actor per call. A global path takes
    /// actors of `me`'s node home first (Alg. 4.3), then from the longest queue of the source
    /// node; hubs are never taken (they are never in stealable queues).
    pub(crate) fn pull_migration(&self, me: &Worker) -> Option<TaskRef> {
        let m = &self.workers[me.index()].migration;
        let left = m.left.load(std::sync::atomic::Ordering::Acquire);
        if left == 0 {
            return None;
        }
        let from = m.from.load(Relaxed);
        let task = if m.global.load(Relaxed) {
            let layout = &self.machine.layout;
            let my_node = layout.node_of(me.index());
            let members = layout.workers_of_node(from);
            members
                .iter()
                .find_map(|&w| self.steal_foreign(w, my_node))
                .or_else(|| self.longest_of(members).and_then(|w| self.steal_from(w)))
        } else {
            self.steal_from(from)
        };
        match task {
            Some(task) => {
                m.left.store(left - 1, Relaxed);
                me.counters().balance_migrations.bump(1);
                Some(task)
            }
            None => {
                // Nothing left to take: the path is done (Alg. 4.2 line 7).
                m.left.store(0, Relaxed);
                None
            }
        }
    }

    /// Notes that worker `w` ran out of work in this interval.
    pub(crate) fn note_out_of_work(&self, w: usize) {
        let flag = &self.workers[w].out_of_work;
        if !flag.load(Relaxed) {
            flag.store(true, Relaxed);
        }
    }

    /// Pops from worker `w`'s urgent queue.
    pub(crate) fn pop_urgent(&self, w: usize) -> Option<TaskRef> {
        steal_one(|| self.workers[w].urgent.steal())
    }

    /// Nanoseconds since the engine started (never 0), for queue-wait samples.
    #[inline]
    pub(crate) fn now_ns(&self) -> u64 {
        self.clock.elapsed().as_nanos() as u64 + 1
    }

    /// External enqueue: the tail of worker `w`'s queue, then wake someone (`w` first).
    pub(crate) fn push_tail(&self, w: usize, task: TaskRef) {
        self.workers[w].inbox.push(task);
        self.notify(Some(w));
    }

    /// The tail of worker `w`'s own queue without waking anyone (the owner is awake and busy).
    pub(crate) fn push_tail_quietly(&self, w: usize, task: TaskRef) {
        self.workers[w].inbox.push(task);
    }

    /// Whether worker `w`'s inbox holds work.
    pub(crate) fn has_inbox_work(&self, w: usize) -> bool {
        !self.workers[w].inbox.is_empty()
    }

    /// Wakes a parked worker (`prefer` first) if any: call after making work visible.
    pub(crate) fn notify(&self, prefer: Option<usize>) {
        if let Some(w) = self.sleepers.notify(prefer) {
            self.counters.unparks.add_shared(1);
            if let Some(thread) = self.workers[w].thread.get() {
                thread.unpark();
            }
        }
    }

    /// Steals one actor from worker `victim`: its inbox (oldest, external work) first, then its
    /// deque's tail.
    pub(crate) fn steal_from(&self, victim: usize) -> Option<TaskRef> {
        let shared = &self.workers[victim];
        steal_one(|| shared.urgent.steal())
            .or_else(|| steal_one(|| shared.inbox.steal()))
            .or_else(|| steal_one(|| shared.stealer.steal()))
    }

    /// Pops from worker `w`'s own inbox.
    pub(crate) fn pop_inbox(&self, w: usize) -> Option<TaskRef> {
        steal_one(|| self.workers[w].inbox.steal())
    }

    /// Whether any queue holds an actor (next slots excepted: their owners are awake).
    fn has_visible_work(&self) -> bool {
        self.workers.iter().any(|w| {
            !w.inbox.is_empty()
                || !w.urgent.is_empty()
                || !w.stealer.is_empty()
                || !w.pinned.is_empty()
                || w.foreign.iter().any(|q| !q.is_empty())
        })
    }

    /// Parks worker `w` until work arrives or shutdown. Returns at once if the final re-check
    /// finds work.
    pub(crate) fn park(&self, w: usize) {
        self.sleepers.announce(w);
        if self.has_visible_work() || self.is_shutdown() {
            self.sleepers.cancel(w);
            return;
        }
        self.workers[w].counters.parks.bump(1);
        if self.sleepers.all_asleep() {
            let _guard = self.quiet_lock.lock();
            self.quiet.notify_all();
        }
        while !self.sleepers.is_notified(w) && !self.is_shutdown() {
            std::thread::park();
        }
        self.sleepers.awake(w);
    }

    /// Blocks until no actor is runnable and no message is in flight, or `timeout` passes.
    /// Returns whether the system became quiescent.
    pub(crate) fn wait_quiescent(&self, timeout: Option<Duration>) -> bool {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut guard = self.quiet_lock.lock();
        loop {
            // Every worker parked after a last look found all queues empty, and every push wakes a
            // parked worker (decrementing the count) before the pusher can go idle itself; so "all
            // asleep" means nothing is runnable and no send is half-done on a worker.
            if self.sleepers.all_asleep() && !self.has_visible_work() {
                return true;
            }
            // Polling bound: a notify racing our check is caught within a millisecond.
            let step = Instant::now() + Duration::from_millis(1);
            let until = deadline.map_or(step, |d| d.min(step));
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return false;
            }
            self.quiet.wait_until(&mut guard, until);
        }
    }

    /// Stops the workers, then every live actor (their `stopped` hooks run on this thread).
    pub(crate) fn shutdown(&self, threads: Vec<JoinHandle<()>>) {
        if self.shutdown.swap(true, SeqCst) {
            return;
        }
        // Claim every sleeper (so none stays counted as asleep), then wake every thread.
        self.sleepers.notify_all();
        for w in self.workers.iter() {
            if let Some(thread) = w.thread.get() {
                thread.unpark();
            }
        }
        for t in threads {
            let _ = t.join();
        }
        // Queued tasks are plain pointers: drop them without touching the actors.
        for w in self.workers.iter() {
            for q in [&w.inbox, &w.urgent, &w.pinned]
                .into_iter()
                .chain(w.foreign.iter())
            {
                while !q.steal().is_empty() {}
            }
        }
        // Stopping an actor may spawn or release others: repeat until none is left.
        loop {
            let live: Vec<TaskRef> = self
                .registry
                .iter()
                .flat_map(|shard| shard.lock().drain().map(|(_, t)| t).collect::<Vec<_>>())
                .collect();
            if live.is_empty() {
                break;
            }
            for task in live {
                // SAFETY: every worker has been joined, and each task was registered (alive) and is
                // shut down once because the registry handed it out once.
                unsafe { task.shutdown() };
            }
        }
    }

    pub(crate) fn stats(&self) -> Stats {
        let workers: Vec<_> = self.workers.iter().map(|w| w.counters.snapshot()).collect();
        let mut total = crate::telemetry::WorkerStats::default();
        for w in &workers {
            total.accumulate(w);
        }
        Stats {
            actors_spawned: total.spawned + self.counters.external_spawns.get(),
            actors_stopped: total.stopped + self.counters.actors_stopped.get(),
            external_sends: self.counters.external_sends.get(),
            dead_letters: self.counters.dead_letters.get(),
            panics: self.counters.panics.get(),
            unparks: self.counters.unparks.get(),
            hubs: total.hubs + self.counters.external_hubs.get(),
            workers,
            total,
        }
    }
}

fn steal_one(mut steal: impl FnMut() -> crossbeam_deque::Steal<TaskRef>) -> Option<TaskRef> {
    loop {
        match steal() {
            crossbeam_deque::Steal::Success(task) => return Some(task),
            crossbeam_deque::Steal::Empty => return None,
            crossbeam_deque::Steal::Retry => crate::sync::spin_hint(),
        }
    }
}

/// Per-worker work (activations) over the last intervals, for Erlang's availability (Eq. B.3).
struct BalanceHistory {
    last_activations: Vec<u64>,
    recent: Vec<[u64; 8]>,
    round: usize,
}

impl BalanceHistory {
    fn new(workers: usize) -> Self {
        BalanceHistory {
            last_activations: vec![0; workers],
            recent: vec![[0; 8]; workers],
            round: 0,
        }
    }
}

fn strategy_index(strategy: PlacementStrategy) -> u8 {
    PlacementStrategy::ALL
        .iter()
        .position(|s| *s == strategy)
        .expect("every strategy is listed") as u8
}
