//! The actor-centric engine: per-worker queues of runnable actors, as in CAF and Erlang.
//!
//! A worker dequeues an *actor* and runs a batch of its messages (up to the throughput budget).
//! The scheduling *decisions* (where a woken or spawned actor goes, whom to steal from) come from
//! [`crate::policy`]; this engine carries them out. One file per concern:
//!
//! | file | concern |
//! |---|---|
//! | `queues.rs` | a worker's queues (deque, inbox, urgent, pinned, foreign) |
//! | `worker/` | the worker loop: activation, holding, re-queueing (`mod.rs`); where the next actor comes from without stealing (`local_work.rs`) |
//! | `user_code.rs` | the stall guard's bracket around activations, blocked activations, `exec = "auto"`'s timed ones |
//! | `routing.rs` | where a woken or spawned actor is queued (cls, LGS Listing 5.3, hierarchical) |
//! | `steal.rs` | idle workers stealing (random, weighted groups, Alg. 4.4 plan), spin/yield/park |
//! | `adaptive.rs` | the adaptive `auto`: closing its windows, workers following the policy it runs |
//! | `gather.rs` | `auto` gathering the work on fewer workers: retired workers hand their queues on and park |
//! | `balance.rs` | hierarchical load balancing (Alg. 4.1/4.2) |
//! | `idle.rs` | what "work" means when a worker parks (the protocol: `engine/sleepers.rs`) |
//! | `stall.rs` | the stall guard's protocol: taking a busy worker's next slot and held actor |
//! | `monitor.rs` | the stall guard's monitor thread: rescues, timers and blocking while workers stall |
//! | `quiescence.rs` | waiting until nothing is runnable (via `Sleepers::wait_quiescent`) |
//! | `shutdown.rs` | stopping the workers |
//!
//! `docs/internals/architecture.md` states the park/wake and quiescence protocols and why no wake-up is lost.

mod adaptive;
mod balance;
#[cfg(test)]
mod flood_tests;
mod gather;
#[cfg(test)]
mod held_tests;
mod idle;
#[cfg(all(test, loom))]
mod loom_tests;
mod monitor;
mod queues;
mod quiescence;
mod routing;
mod shutdown;
mod stall;
mod steal;
mod user_code;
mod worker;

use super::choices::Routing;
use super::placement;
use super::sleepers::Sleepers;
use crate::engine::balance_round::BalanceHistory;
use crate::policy::placement::PlacementStrategy;
use crate::runtime::clock::monotonic_ns;
use crate::runtime::options::SpawnOptions;
use crate::runtime::{Boundary, EngineCore, Exec, Header, Runtime, Shared, TaskQueues, TaskRef};
use crate::sync::{AtomicBool, AtomicU8, AtomicUsize};
use crossbeam_utils::CachePadded;
use parking_lot::Mutex;
use queues::WorkerQueues;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, OnceLock};
use std::thread::{JoinHandle, Thread};
use worker::Worker;

/// The part of a worker other threads see.
struct WorkerShared {
    queues: WorkerQueues,
    thread: OnceLock<Thread>,
    /// Load balancing (hierarchical): the migration path this worker follows (pull-based).
    migration: balance::Migration,
    /// Set when the worker went idle since the last balancing round (Erlang's `OutOfWork`).
    out_of_work: AtomicBool,
    /// Set while the worker searches for work or sleeps (`steal.rs`): a routing hint, written
    /// by its owner only when it starts and stops searching (beside `out_of_work`, which the
    /// start of a search writes too), read by a waker deciding whether a push there would buy
    /// any parallelism (`Engine::is_idle`).
    idle: AtomicBool,
    /// The stall guard's view of this worker: its next slot, held actor and user-code state.
    watch: CachePadded<stall::StallWatch>,
    /// The worker thread's kernel thread id (the monitor reads whether it sleeps in the kernel).
    tid: OnceLock<i32>,
}

/// State shared by all workers of one actor-centric system.
pub(crate) struct Engine {
    shared: Arc<Shared>,
    /// How runnable actors are routed under plain stealing [0] and the configured policy [1]
    /// (by [`Mechanism::index`](crate::policy::adaptive::Mechanism::index)); the configured one
    /// unless `auto` adapts ([`Self::routing`]).
    routings: [Routing; 2],
    /// The adaptive `auto`'s windows (`adaptive.rs`); `None` unless `auto` adapts.
    adaptive: Option<adaptive::Windows>,
    workers: Box<[WorkerShared]>,
    /// Deques waiting for their worker thread to take them.
    deques: Mutex<Vec<Option<crossbeam_deque::Worker<TaskRef>>>>,
    sleepers: Sleepers,
    round_robin: CachePadded<AtomicUsize>,
    shutdown: CachePadded<AtomicBool>,
    /// Origin of the queue-wait timestamps ([`monotonic_ns`] when the engine started).
    clock: u64,
    /// Load-balancing history, held by the worker computing a round (others skip the round).
    balance: Mutex<BalanceHistory>,
    /// Balancing rounds computed so far: a worker that sees it change restarts its count of
    /// activations, so the interval is the system's, not each worker's (`balance.rs`).
    balance_epoch: CachePadded<AtomicUsize>,
    /// Placement strategies for regular actors [0] and hubs [1], changeable at run time.
    strategies: [AtomicU8; 2],
    /// Spawns placed by each strategy slot so far (their round-robin position).
    tickets: [CachePadded<AtomicUsize>; 2],
    /// `places:a`: one shared queue per place (empty under every other policy).
    place_queues: Box<[crossbeam_deque::Injector<TaskRef>]>,
    /// `hierarchical`: actors waiting in foreign queues, per home node.
    foreign_waiting: queues::ForeignWaiting,
    /// `places`: the homes given so far in each place (the round robin inside it).
    place_tickets: crate::engine::choices::PlaceTickets,
    threads: Mutex<Vec<JoinHandle<()>>>,
    /// The stall guard runs (configured on, and the heavy barrier available).
    guarded: bool,
    /// The stall guard's monitor thread.
    monitor: monitor::Monitor,
    /// Which worker is pinned to each OS CPU (index: the CPU's OS index; `usize::MAX`: none);
    /// empty when workers are not pinned.
    worker_on_cpu: Box<[usize]>,
}

impl Engine {
    /// Builds the engine and starts its worker threads. Returns the engine and the runtime handle
    /// for plain threads (the `System`'s).
    pub(crate) fn start(shared: Arc<Shared>) -> (Arc<Engine>, Arc<Runtime>) {
        let config = &shared.config;
        let n = config.workers;
        let deques: Vec<_> = (0..n)
            .map(|_| crossbeam_deque::Worker::new_lifo())
            .collect();
        let nodes = shared.machine.layout.node_count();
        let workers = deques
            .iter()
            .map(|d| WorkerShared {
                queues: WorkerQueues::new(d.stealer(), nodes),
                thread: OnceLock::new(),
                migration: balance::Migration::default(),
                out_of_work: AtomicBool::new(false),
                idle: AtomicBool::new(false),
                watch: CachePadded::new(stall::StallWatch::default()),
                tid: OnceLock::new(),
            })
            .collect();
        let engine = Arc::new(Engine {
            workers,
            deques: Mutex::new(deques.into_iter().map(Some).collect()),
            // `places:a`'s thieves take only from the places' queues (`Sleepers`).
            sleepers: Sleepers::new(n).searchers_reach_all(!matches!(
                config.policy,
                crate::policy::PolicyKind::Places(mode) if mode.shared_queues()
            )),
            round_robin: CachePadded::new(AtomicUsize::new(0)),
            shutdown: CachePadded::new(AtomicBool::new(false)),
            clock: monotonic_ns(),
            balance: Mutex::new(BalanceHistory::new(n)),
            balance_epoch: CachePadded::new(AtomicUsize::new(0)),
            strategies: [
                AtomicU8::new(strategy_index(config.placement)),
                AtomicU8::new(strategy_index(config.hub_placement)),
            ],
            tickets: [
                CachePadded::new(AtomicUsize::new(0)),
                CachePadded::new(AtomicUsize::new(0)),
            ],
            routings: [Routing::Local, Routing::of(config.policy)],
            adaptive: shared.adapt.as_ref().map(adaptive::Windows::new),
            place_queues: (0..shared.machine.layout.place_count())
                .map(|_| crossbeam_deque::Injector::new())
                .collect(),
            foreign_waiting: queues::ForeignWaiting::new(nodes),
            place_tickets: crate::engine::choices::PlaceTickets::new(
                Routing::of(config.policy),
                &shared.machine.layout,
            ),
            threads: Mutex::new(Vec::new()),
            // One worker: nowhere else to run a hostage (docs/stalls.md).
            guarded: config.stall.runs(n),
            monitor: monitor::Monitor::default(),
            worker_on_cpu: worker_on_cpu(&shared),
            shared: Arc::clone(&shared),
        });
        let for_workers = Arc::clone(&engine);
        let (threads, root) = super::workers::start_workers(
            &shared,
            Boundary::tasks(engine.clone()),
            "loka-worker",
            move |exec, ready| {
                let engine = Arc::clone(&for_workers);
                let index = exec.index();
                let _ = engine.workers[index].thread.set(std::thread::current());
                let _ = engine.workers[index].tid.set(monitor::current_tid());
                let deque = engine.deques.lock()[index]
                    .take()
                    .expect("each worker's deque is taken once");
                ready();
                Worker::new(exec, engine, deque).run();
            },
        );
        *engine.threads.lock() = threads;
        if engine.guarded {
            monitor::start(&engine);
        }
        (engine, root)
    }

    /// Whether the stall guard runs (`stall.rs`).
    pub(super) fn guarded(&self) -> bool {
        self.guarded
    }

    /// How runnable actors are routed now: under an adaptive `auto`, by the policy it runs.
    /// Workers keep their own copy, which they refresh now and then (`adaptive.rs`).
    #[inline]
    fn routing(&self) -> Routing {
        crate::engine::choices::routing_now(&self.routings, &self.shared.adapt)
    }

    fn is_shutdown(&self) -> bool {
        self.shutdown.load(Relaxed)
    }

    /// Nanoseconds since the engine started (never 0), for queue-wait samples.
    #[inline]
    fn now_ns(&self) -> u64 {
        monotonic_ns().wrapping_sub(self.clock) + 1
    }

    /// Changes the placement strategy for hubs or regular actors from now on.
    /// Each worker's stealable queue length (`System::snapshot`'s `queue_lengths`).
    pub(crate) fn queue_lengths(&self) -> Vec<usize> {
        self.workers
            .iter()
            .map(|w| w.queues.stealable_len())
            .collect()
    }

    pub(crate) fn set_placement(&self, hubs: bool, strategy: PlacementStrategy) {
        self.strategies[usize::from(hubs)].store(strategy_index(strategy), Relaxed);
    }

    fn placement_strategy(&self, hub: bool) -> PlacementStrategy {
        PlacementStrategy::ALL[self.strategies[usize::from(hub)].load(Relaxed) as usize]
    }
}

/// The OS CPU → pinned worker table (`Engine::worker_on_cpu`).
fn worker_on_cpu(shared: &Shared) -> Box<[usize]> {
    let machine = &shared.machine;
    if !machine.pins_workers(&shared.config) {
        return Box::default();
    }
    let os = |w: usize| machine.topology.pu_os_index(machine.layout.pu_of(w));
    let len = (0..shared.config.workers)
        .map(|w| os(w) + 1)
        .max()
        .unwrap_or(0);
    let mut table = vec![usize::MAX; len];
    for w in 0..shared.config.workers {
        table[os(w)] = w;
    }
    table.into_boxed_slice()
}

impl TaskQueues for Engine {
    fn schedule_spawned(&self, task: TaskRef, options: &SpawnOptions, from: Option<&Exec>) {
        let worker = from.and_then(|_| Worker::current_of(self));
        self.place_spawned(task, options, worker);
    }

    #[inline]
    fn schedule_woken(&self, task: TaskRef) {
        match Worker::current_of(self) {
            Some(worker) => worker.schedule_woken(task),
            None => self.schedule_woken_external(task),
        }
    }

    fn woken_waiting(&self) -> bool {
        Worker::current_of(self).is_some_and(Worker::has_fresh_work)
    }
}

impl EngineCore for Engine {
    fn timer_armed(&self, shard: usize) {
        self.wake_for_timer(shard);
    }

    unsafe fn init_task(&self, header: &Header, options: &SpawnOptions, _from: Option<&Exec>) {
        let placement = crate::engine::choices::initial_placement(
            self.routings[1],
            &self.place_tickets,
            &self.shared.machine.layout,
            header,
            options,
        );
        // SAFETY: the runtime calls this once, before the task is shared (the trait's contract).
        unsafe { header.sched.init(placement) }
    }

    fn set_hub(&self, task: TaskRef, hub: bool) -> bool {
        placement::of(&task).set_hub(hub)
    }

    fn is_hub(&self, task: TaskRef) -> bool {
        placement::of(&task).is_hub()
    }

    fn locate(&self, task: TaskRef) -> crate::runtime::location::Location {
        placement::of(&task).locate()
    }
}

fn strategy_index(strategy: PlacementStrategy) -> u8 {
    PlacementStrategy::ALL
        .iter()
        .position(|s| *s == strategy)
        .expect("every strategy is listed") as u8
}
