//! The simulation engine (`engine = "sim"`): the same actors and policies on a virtual machine of
//! any size, in virtual time, reproducibly.
//!
//! One driver thread runs N virtual workers (N = `workers`, up to the topology's PUs). A
//! discrete-event loop always advances the worker with the earliest virtual clock (ties broken
//! by a fresh draw from the seed at every tie); that worker does what a real worker of the actor-centric engine
//! does — takes local work in the same order, or steals from the victims its policy names, or
//! parks — calling the same `policy/` functions, and runs one activation of a real actor: the
//! user's handler, real messages, real results. The activation's *virtual* cost comes from the
//! cost model ([`cost`], `docs/simulation.md`): a fixed part, a part per message priced by where
//! the message's cache lines come from, the actor's footprint priced by where it lies in the
//! caches and memory ([`memory`]), and the compute the handler declared (`Context::charge`) or,
//! optionally, its measured CPU time.
//!
//! | file | concern |
//! |---|---|
//! | `mod.rs` | the engine, the runtime's boundary (`EngineCore`, `TaskQueues`), waiting for quiescence, stopping |
//! | `driver.rs` | the event loop: choosing a worker, stealing, running and pricing activations |
//! | `routing.rs` | where woken and spawned actors are queued (the policies' decisions) |
//! | `worker.rs` | a virtual worker's queues and clock |
//! | `adaptive.rs` | the adaptive `auto`'s windows in virtual time, and moving the workers between its policies |
//! | `balance.rs` | `hierarchical`'s periodic load balancing (migration limits and paths) |
//! | `cost.rs` | the cost model and the distance classes |
//! | `memory.rs` | actor footprints in LRU caches and on their home node's memory |
//! | `contention.rs` | shared memory controllers and links under load |
//! | `mailbox_tail.rs` | a mailbox's claim word written by several senders in turn |
//!
//! **Plain threads.** A wake-up or spawn from a thread that is not the driver (a test's main
//! thread, a benchmark's driver) is buffered and folded into the simulation only when it is
//! quiescent, at the latest virtual time reached, and only once a thread waits on the system
//! (`run_until_idle`, a [`crate::Pending`] reply, shutdown) or no such input arrived for
//! `[sim] quiet_ms` (programs that wait some other way; 0: never): so a program that sets up
//! its actors and then waits runs the same way every time. Unplaced, such work goes round robin
//! over the workers relabelled by a seeded symmetry of the machine (`routing.rs`).
//! Messages from plain threads to actors that are already scheduled are taken as they come (they are in the mailbox at once); a program that keeps
//! sending from a plain thread while the simulation runs is correct but not reproducible.
//!
//! **Contention** ([`contention`], [`mailbox_tail`]): a fetch waits behind the other workers'
//! transfers on the memory controller and link it uses, and senders that write one mailbox at
//! the same time hand its claim word's line to one another.
//!
//! **Not modelled yet**: per-message sender distances (sends to a scheduled actor never reach the
//! engine), contention in shared caches and on the on-chip network (docs/simulation.md).
//!
//! **Timers** run on virtual time (`driver.rs`): one due before the next step fires first; with
//! nothing runnable, a pending one-shot timer fires at once (virtual time jumps to it), and a
//! periodic one after its delay in real time, as in the real engines (docs/timers.md).

mod adaptive;
mod balance;
mod contention;
mod cost;
mod driver;
mod mailbox_tail;
mod memory;
mod routing;
mod worker;

pub(crate) use cost::CostModel;

use crate::engine::choices::{Routing, Victims};
use crate::engine::placement;
use crate::policy::cls::Cls;
use crate::policy::placement::PlacementStrategy;
use crate::policy::Route;
use crate::runtime::options::SpawnOptions;
use crate::runtime::{Boundary, EngineCore, Exec, Header, Runtime, Shared, TaskQueues, TaskRef};
use crate::sync::AtomicU8;
use crate::telemetry::{SimStats, MAX_LEVELS};
use cost::Distances;
use parking_lot::{Condvar, Mutex};
use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use worker::VirtualWorker;

thread_local! {
    /// The sim engine whose driver runs on this thread (null elsewhere).
    static DRIVER: Cell<*const Engine> = const { Cell::new(std::ptr::null()) };
    /// The context of the activation the driver on this thread runs now (null between
    /// activations and elsewhere): what it has declared so far dates its sends
    /// ([`Engine::running_now`]).
    static RUNNING_EXEC: Cell<*const Exec> = const { Cell::new(std::ptr::null()) };
}

/// Runs `f`, an activation on `exec`, with `exec` as this thread's running context.
fn running_on<R>(exec: &Exec, f: impl FnOnce() -> R) -> R {
    RUNNING_EXEC.with(|e| e.set(exec));
    let out = f();
    RUNNING_EXEC.with(|e| e.set(std::ptr::null()));
    out
}

/// The compute the activation running on this thread has declared so far (`Context::charge`),
/// in ns; 0 between activations and off the driver.
fn charged_so_far() -> u64 {
    RUNNING_EXEC.with(|e| {
        let exec = e.get();
        if exec.is_null() {
            return 0;
        }
        // SAFETY: `running_on` set it to one of the driver's own contexts for the length of one
        // activation on this thread, and resets it before returning (an activation's panic is
        // caught inside `TaskRef::run`); the contexts live as long as the driver's loop, and a
        // context is only ever used by the thread that owns it, this one.
        unsafe { (*exec).charged() }
    })
}

/// Work from a plain thread, waiting for the simulation to be quiescent.
enum External {
    /// A new actor and the route chosen for it when it was spawned.
    Spawned(TaskRef, Route),
    /// An actor a send made runnable.
    Woken(TaskRef),
}

/// The simulation's state, behind one lock: the driver holds it except while an activation runs
/// (activations call back into the engine to queue the actors they wake or spawn).
struct State {
    workers: Vec<VirtualWorker>,
    external: VecDeque<External>,
    last_external: Instant,
    run_requested: bool,
    shutdown: bool,
    /// The driver is waiting: nothing runnable (external input may be buffered).
    idle: bool,
    /// The worker running an activation, and the virtual time its pushes happen at.
    running: Option<(usize, u64)>,
    /// The running activation's clock for its gulp (`EngineCore::activation_clock_ns`): when it
    /// started plus its fixed costs, ns per envelope taken, and the model's scale for declared
    /// compute.
    activation_clock: (u64, f64, f64),
    /// What the running activation spent waking sleeping workers (`wake_call` each): part of
    /// its cost, added when it ends.
    waking: f64,
    /// The actor of that activation, as a waker (`placement::waker_id`; `NO_WAKER` while timers
    /// fire): the partner the hub rules count.
    waker: u32,
    /// Whether that actor is a hub (`placement::Waker::hub`).
    waker_hub: bool,
    /// The worker that woke each queued actor (by actor id), to price its messages.
    woken_by: rustc_hash::FxHashMap<u64, usize>,
    /// The worker whose send last woke each actor, and the sending actor's waker id (by actor
    /// id; kept across its activations, removed when it stops): taken as the sender of every
    /// message the actor handles, which pays the sender's share of them (`driver.rs`).
    sender_of: rustc_hash::FxHashMap<u64, (usize, u32)>,
    /// Where each actor (by waker id, `placement::waker_id`) runs or ran last: the sender's
    /// share of a batch goes to the worker its sender is on now, not the one it woke the
    /// receiver from (docs/decisions/0096-sim-senders-charged-where-they-run.md).
    ran_on: rustc_hash::FxHashMap<u32, usize>,
    /// When each actor's latest activation ends in virtual time (by actor id; removed when
    /// it stops): a send before then finds it still running.
    busy_until: rustc_hash::FxHashMap<u64, u64>,
    /// Breaks ties between workers with equal clocks: a fresh draw at every tie, from the seed
    /// (a fixed order would make the same worker win every tie of a run; on 2 workers the seeds
    /// then gave two schedules at most).
    ties: fastrand::Rng,
    /// Where plain threads' spawns and wake-ups go (`routing.rs`).
    external_order: routing::ExternalOrder,
    tickets: [usize; 2],
    /// `places:a`: one shared queue per place (empty under every other policy).
    place_queues: Vec<VecDeque<TaskRef>>,
    /// Where every actor's state lies in the caches and memory (`memory.rs`).
    memory: memory::Memory,
    /// The transfers in progress on memory controllers and links (`contention.rs`).
    contention: contention::Contention,
    /// Who wrote each mailbox's tail lately (`mailbox_tail.rs`).
    tails: mailbox_tail::Tails,
    /// The mailboxes of requeued actors, whose senders the engine does not see (`mailbox_tail.rs`).
    watch: mailbox_tail::Watch,
    /// `hierarchical`'s balancing rounds: the workers' recent activations (`balance.rs`).
    balance: crate::engine::balance_round::BalanceHistory,
    stats: SimStats,
    /// The adaptive `auto`'s controller and its current window (`adaptive.rs`).
    adaptive: Option<crate::engine::adapt::Meter>,
}

/// The simulation engine of one system.
pub(crate) struct Engine {
    shared: Arc<Shared>,
    /// How runnable actors are routed under plain stealing [0] and the configured policy [1]
    /// (by [`Mechanism::index`](crate::policy::adaptive::Mechanism::index)); the configured one
    /// unless `auto` adapts ([`Self::routing`]).
    routings: [Routing; 2],
    cost: CostModel,
    distances: Distances,
    state: Mutex<State>,
    /// The driver waits here for input, a run request or shutdown.
    work: Condvar,
    /// `wait_quiescent` waits here.
    quiet_cv: Condvar,
    /// Input from plain threads is folded in once none arrived for this long, even if nobody
    /// waits (`None`: only when someone waits).
    quiet: Option<Duration>,
    /// Placement strategies for regular actors [0] and hubs [1], changeable at run time.
    strategies: [AtomicU8; 2],
    measured: bool,
    /// `places`: the homes given so far in each place (the round robin inside it).
    place_tickets: crate::engine::choices::PlaceTickets,
    /// How long an idle worker polls before it parks, in virtual ns (the real worker's spin and
    /// yield phases; `lgs:nosleep` polls far longer).
    polling_ns: u64,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Engine {
    /// Builds the engine and starts its driver thread.
    pub(crate) fn start(shared: Arc<Shared>, cost: CostModel) -> (Arc<Engine>, Arc<Runtime>) {
        let config = &shared.config;
        let n = config.workers;
        let layout = &shared.machine.layout;
        let nodes = layout.node_count();
        let workers = (0..n)
            .map(|index| {
                let cls = Cls::new(index, n, config.lifo_slot);
                let mut level_of = vec![0u8; n];
                for (level, group) in layout.groups(index).iter().enumerate().rev() {
                    for &w in group {
                        level_of[w] = level.min(MAX_LEVELS - 1) as u8;
                    }
                }
                VirtualWorker {
                    clock: 0,
                    parked: true,
                    polling_until: 0,
                    busy_until: 0,
                    resumed_poll: false,
                    home_turn: 0,
                    next: None,
                    next_streak: 0,
                    deque: VecDeque::new(),
                    inbox: VecDeque::new(),
                    yielded: VecDeque::new(),
                    urgent: VecDeque::new(),
                    pinned: VecDeque::new(),
                    foreign: (0..nodes).map(|_| VecDeque::new()).collect(),
                    tick: 0,
                    victims: Victims::new(config.policy, index, &cls, layout),
                    cls,
                    rng: fastrand::Rng::with_seed(
                        config
                            .seed
                            .wrapping_add((index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
                    ),
                    level_of,
                    helped: Routing::of(config.policy).helped(index, layout),
                    help_turn: 0,
                    since_balance: 0,
                    out_of_work: false,
                    migration: None,
                }
            })
            .collect();
        let distances = Distances::new(&shared.machine.topology, layout, &cost);
        let memory = memory::Memory::new(&shared.machine.topology, layout, &distances);
        let external_order = routing::ExternalOrder::new(layout, &distances, config.seed);
        let engine = Arc::new(Engine {
            routings: [Routing::Local, Routing::of(config.policy)],
            distances,
            cost,
            state: Mutex::new(State {
                workers,
                external: VecDeque::new(),
                last_external: Instant::now(),
                run_requested: false,
                shutdown: false,
                idle: true,
                running: None,
                activation_clock: (0, 0.0, 0.0),
                waking: 0.0,
                waker: placement::NO_WAKER,
                waker_hub: false,
                woken_by: Default::default(),
                sender_of: Default::default(),
                ran_on: Default::default(),
                busy_until: Default::default(),
                ties: fastrand::Rng::with_seed(config.seed ^ 0x51u64),
                external_order,
                tickets: [0; 2],
                place_queues: (0..layout.place_count()).map(|_| VecDeque::new()).collect(),
                memory,
                contention: contention::Contention::new(shared.machine.topology.numa_node_count()),
                tails: Default::default(),
                watch: Default::default(),
                balance: crate::engine::balance_round::BalanceHistory::new(n),
                stats: SimStats::default(),
                adaptive: shared.adapt.as_ref().map(|adapt| adapt.meter()),
            }),
            work: Condvar::new(),
            quiet_cv: Condvar::new(),
            quiet: (config.sim.quiet_ms > 0).then(|| Duration::from_millis(config.sim.quiet_ms)),
            strategies: [
                AtomicU8::new(strategy_index(config.placement)),
                AtomicU8::new(strategy_index(config.hub_placement)),
            ],
            measured: config.sim.compute == crate::config::SimCompute::Measured,
            place_tickets: crate::engine::choices::PlaceTickets::new(
                Routing::of(config.policy),
                layout,
            ),
            polling_ns: {
                let nosleep = matches!(config.policy, crate::PolicyKind::Lgs(v) if v.nosleep);
                let extra = if nosleep { 10_000_000 } else { 0 };
                config.idle.spin_and_yield().as_nanos() as u64 + extra
            },
            thread: Mutex::new(None),
            shared: Arc::clone(&shared),
        });
        let runtime = Arc::new(Runtime::new(
            Boundary::tasks(engine.clone()),
            Arc::clone(&shared),
        ));
        // Every virtual worker starts parked, as every real one parks when it finds no work.
        for w in 0..n {
            shared.counters.worker(w).parks.bump(1);
        }
        let driver = {
            let engine = Arc::clone(&engine);
            let runtime = Arc::clone(&runtime);
            std::thread::Builder::new()
                .name("loka-sim".to_owned())
                .spawn(move || {
                    crate::runtime::lifecycle::mark_thread(Arc::as_ptr(&engine.shared));
                    let execs: Vec<Exec> = (0..engine.shared.config.workers)
                        .map(|i| Exec::new(i, Arc::clone(&runtime)))
                        .collect();
                    DRIVER.with(|d| d.set(Arc::as_ptr(&engine)));
                    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        engine.drive(&execs)
                    }));
                    DRIVER.with(|d| d.set(std::ptr::null()));
                    if run.is_err() {
                        eprintln!("loka: the simulation driver panicked outside any actor handler (a bug in loka); aborting");
                        std::process::abort();
                    }
                })
                .expect("spawning the simulation driver thread")
        };
        *engine.thread.lock() = Some(driver);
        (engine, runtime)
    }

    /// Whether this thread is this engine's driver.
    fn on_driver(&self) -> bool {
        DRIVER.with(|d| std::ptr::eq(d.get(), self))
    }

    /// Blocks until the simulation is quiescent (nothing runnable, no buffered input, no
    /// one-shot timer pending) or
    /// `timeout` passes; asks the driver to fold in buffered input at once.
    pub(crate) fn wait_quiescent(&self, timeout: Option<Duration>) -> bool {
        // A timeout too long for the clock is no deadline (as `Sleepers::wait_quiescent`).
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        let mut st = self.state.lock();
        loop {
            // A pending one-shot timer is a message in flight (the driver fires it at once).
            if st.idle && st.external.is_empty() && self.shared.timers.pending_once() == 0 {
                return true;
            }
            if !st.run_requested {
                st.run_requested = true;
                self.work.notify_one();
            }
            match deadline {
                Some(d) if Instant::now() >= d => return false,
                Some(d) => {
                    self.quiet_cv.wait_until(&mut st, d);
                }
                None => self.quiet_cv.wait(&mut st),
            }
        }
    }

    /// Stops the driver; `false` if that had already been done. Queued actors are dropped as
    /// plain pointers: the runtime stops every actor afterwards.
    pub(crate) fn stop_workers(&self) -> bool {
        let Some(thread) = self.thread.lock().take() else {
            return false;
        };
        {
            let mut st = self.state.lock();
            st.shutdown = true;
            self.work.notify_all();
        }
        let _ = thread.join();
        let mut st = self.state.lock();
        st.workers.iter_mut().for_each(VirtualWorker::clear);
        // Its tasks were queued, and are no longer: the runtime stops and frees them now.
        st.watch = Default::default();
        st.place_queues.iter_mut().for_each(VecDeque::clear);
        st.external.clear();
        st.idle = true;
        self.quiet_cv.notify_all();
        true
    }

    /// Changes the initial placement strategy of hubs or regular actors from now on.
    pub(crate) fn set_placement(&self, hubs: bool, strategy: PlacementStrategy) {
        self.strategies[usize::from(hubs)].store(strategy_index(strategy), Relaxed);
    }

    fn placement_strategy(&self, hub: bool) -> PlacementStrategy {
        PlacementStrategy::ALL[self.strategies[usize::from(hub)].load(Relaxed) as usize]
    }

    /// What the simulation has done so far.
    pub(crate) fn sim_stats(&self) -> SimStats {
        let st = self.state.lock();
        SimStats {
            virtual_ns: st.frontier(),
            ..st.stats
        }
    }
}

impl TaskQueues for Engine {
    fn schedule_spawned(&self, task: TaskRef, options: &SpawnOptions, from: Option<&Exec>) {
        let mut st = self.state.lock();
        match (from, Self::running_now(&st)) {
            (Some(exec), Some((w, now))) if self.on_driver() => {
                debug_assert_eq!(exec.index(), w);
                self.place_spawned(&mut st, task, options, Some(w), now);
            }
            _ => {
                st.memory
                    .spawned(task.header().id.as_u64(), options.footprint as u64, None);
                let route = self.place_route(&mut st, task, options, None);
                st.external.push_back(External::Spawned(task, route));
                st.last_external = Instant::now();
                self.work.notify_one();
            }
        }
    }

    fn schedule_woken(&self, task: TaskRef) {
        let mut st = self.state.lock();
        match Self::running_now(&st) {
            Some((w, now)) if self.on_driver() => self.route_woken(&mut st, w, now, task),
            _ => {
                self.shared.counters.system.external_sends.add_shared(1);
                st.external.push_back(External::Woken(task));
                st.last_external = Instant::now();
                self.work.notify_one();
            }
        }
    }

    fn woken_waiting(&self) -> bool {
        // The running activation's worker, as its queues stand at the activation's time.
        let st = self.state.lock();
        match st.running {
            Some((w, _)) if self.on_driver() => st.workers[w].has_fresh_work(),
            _ => false,
        }
    }
}

impl Engine {
    /// The worker running an activation (or firing timers) and the virtual time its sends
    /// happen at now: the time its first message was handled (`State::running`) plus the
    /// compute its handler declared before the send. A reply sent after a long search leaves
    /// when the search is done, not when it began: before 2026-12-07 every send of an activation
    /// left at its start, and a controller gave a Matrix Search seeker its next job while the
    /// seeker's home was still busy with the last one
    /// (docs/decisions/0105-an-idle-home-takes-its-own.md).
    fn running_now(st: &State) -> Option<(usize, u64)> {
        let (w, at) = st.running?;
        let scale = st.activation_clock.2;
        Some((w, at + (charged_so_far() as f64 * scale) as u64))
    }

    /// How runnable actors are routed now: under an adaptive `auto`, by the policy it runs.
    #[inline]
    fn routing(&self) -> Routing {
        crate::engine::choices::routing_now(&self.routings, &self.shared.adapt)
    }
}

impl EngineCore for Engine {
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

    fn wants_wait_notice(&self) -> bool {
        true
    }

    fn activation_clock_ns(&self, processed: usize, charged_ns: u64) -> Option<u64> {
        let st = self.state.lock();
        if st.running.is_none() || !self.on_driver() {
            return None;
        }
        let (from, per_message, scale) = st.activation_clock;
        Some(from + (processed as f64 * per_message + charged_ns as f64 * scale) as u64)
    }

    fn virtual_now_ns(&self) -> Option<u64> {
        // The activation running now (its sends' time), else the latest time reached.
        let st = self.state.lock();
        Some(match Self::running_now(&st) {
            Some((_, now)) => now,
            None => st.frontier(),
        })
    }

    fn locate(&self, task: TaskRef) -> crate::runtime::location::Location {
        crate::engine::placement::of(&task).locate()
    }

    fn timer_armed(&self, _shard: usize) {
        // The driver may be sleeping in real time until a periodic timer (`driver.rs`).
        self.work.notify_one();
    }

    fn waiting(&self) {
        // Also called on the driver, by an actor that found a bounded mailbox full (activations
        // run with the state unlocked): its receiver may be runnable only through a plain
        // thread's send still buffered, which the driver then folds in at its next step.
        let mut st = self.state.lock();
        if !st.run_requested {
            st.run_requested = true;
            self.work.notify_one();
        }
    }
}

impl State {
    /// The latest virtual time any worker reached.
    fn frontier(&self) -> u64 {
        self.workers.iter().map(|w| w.clock).max().unwrap_or(0)
    }
}

fn strategy_index(strategy: PlacementStrategy) -> u8 {
    PlacementStrategy::ALL
        .iter()
        .position(|s| *s == strategy)
        .expect("every strategy is listed") as u8
}

/// A topology and its worker layout from a spec (`preset:NAME`): the fixture of the cost and
/// memory models' unit tests.
#[cfg(test)]
pub(crate) fn test_machine(spec: &str) -> (loka_topology::Topology, loka_topology::WorkerLayout) {
    use loka_topology::{CostMatrix, LayoutOptions, Topology, WorkerLayout};
    let topo = Topology::load(&spec.parse().unwrap()).unwrap();
    let cost = CostMatrix::hierarchical(&topo);
    let layout = WorkerLayout::new(&topo, &cost, &LayoutOptions::default()).unwrap();
    (topo, layout)
}
