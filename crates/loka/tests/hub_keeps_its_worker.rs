//! Under `hierarchical` an actor a hub wakes does not take the hub's worker's next slot
//! (docs/decisions/0106-a-hub-keeps-its-worker.md): the hub is pinned to that worker, so the
//! woken actor goes to the worker's stealable deque, where an idle node-mate takes it while the
//! hub still runs. In the next slot it waited for the hub's activation to end (and for the hub's
//! later activations, which its worker runs first), out of every thief's reach.
//!
//! A hub sends a job to a regular actor of its own node and then keeps busy; the job must run on
//! another worker meanwhile. Under the simulation engine (deterministic, virtual time) on one
//! node and on the 4-node Xeon preset, and on real threads on two workers (one node, and two
//! nodes of one worker each).

mod scheduling_support;

use loka::{Actor, ActorRef, Context, EngineKind, Placement, SpawnOptions};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// No worker yet (the job has not run).
const NOT_RUN: usize = usize::MAX;

/// Runs one job: records the worker it ran on, after `search` of declared compute.
struct Seeker {
    ran_on: Arc<AtomicUsize>,
    search: Duration,
}

impl Actor for Seeker {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _job: ()) {
        ctx.charge(self.search);
        let worker = ctx.worker_index().expect("on a worker");
        self.ran_on.store(worker, SeqCst);
    }
}

/// How the hub keeps busy after sending the job.
#[derive(Clone, Copy)]
enum Busy {
    /// Declared compute (the simulation's virtual time).
    Charge(Duration),
    /// Spins on the real clock until the job has run, at most this long.
    SpinUntilRun(Duration),
}

/// The hub: on `()`, sends the seeker its job and keeps busy; says whether the job ran while it
/// was still busy.
struct Hub {
    seeker: ActorRef<()>,
    ran_on: Arc<AtomicUsize>,
    busy: Busy,
    ran_meanwhile: Arc<AtomicUsize>,
}

impl Actor for Hub {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _go: ()) {
        self.seeker.send(()).unwrap();
        match self.busy {
            Busy::Charge(time) => ctx.charge(time),
            Busy::SpinUntilRun(limit) => {
                let start = Instant::now();
                while self.ran_on.load(SeqCst) == NOT_RUN && start.elapsed() < limit {
                    std::hint::spin_loop();
                }
                let ran = self.ran_on.load(SeqCst) != NOT_RUN;
                self.ran_meanwhile.store(ran as usize, SeqCst);
            }
        }
    }
}

/// What one run showed.
struct Run {
    /// The worker the job ran on.
    seeker_worker: usize,
    /// Whether the job had run when the hub's busy activation ended (real threads).
    ran_meanwhile: bool,
    /// Virtual time from the hub's message to the end of both (simulation).
    virtual_ns: Option<u64>,
    stats: loka::Stats,
}

/// A `hierarchical` system on `topology` with `workers`; a hub pinned on worker 0 and a regular
/// actor started there too (its home is worker 0's node), then the hub's one busy activation.
fn hub_sends_then_keeps_busy(
    engine: EngineKind,
    topology: &str,
    workers: usize,
    busy: Busy,
    search: Duration,
) -> Run {
    let system = scheduling_support::system(engine, topology, workers, "hierarchical", 1);
    let at_worker_0 = SpawnOptions::default().placement(Placement::Worker(0));
    let ran_on = Arc::new(AtomicUsize::new(NOT_RUN));
    let seeker = system.spawn_with(
        Seeker {
            ran_on: Arc::clone(&ran_on),
            search,
        },
        at_worker_0.clone(),
    );
    let ran_meanwhile = Arc::new(AtomicUsize::new(0));
    let hub = system.spawn_with(
        Hub {
            seeker: seeker.clone(),
            ran_on: Arc::clone(&ran_on),
            busy,
            ran_meanwhile: Arc::clone(&ran_meanwhile),
        },
        at_worker_0.hub(true),
    );
    // Both placed on worker 0: the seeker's home node is the hub's.
    system.run_until_idle();
    let before = system.stats().sim.map(|s| s.virtual_ns);
    hub.send(()).unwrap();
    system.run_until_idle();
    let stats = system.stats();
    let virtual_ns = stats.sim.as_ref().map(|s| s.virtual_ns - before.unwrap());
    system.shutdown();
    Run {
        seeker_worker: ran_on.load(SeqCst),
        ran_meanwhile: ran_meanwhile.load(SeqCst) == 1,
        virtual_ns,
        stats,
    }
}

const HUB_BUSY: Duration = Duration::from_millis(2);
const SEARCH: Duration = Duration::from_millis(1);

fn simulated(topology: &str, workers: usize) {
    let run = hub_sends_then_keeps_busy(
        EngineKind::Sim,
        topology,
        workers,
        Busy::Charge(HUB_BUSY),
        SEARCH,
    );
    assert_ne!(run.seeker_worker, NOT_RUN, "the job ran");
    assert_ne!(
        run.seeker_worker, 0,
        "{topology}: the job woken by the hub ran on the hub's worker"
    );
    // In parallel with the hub: about the hub's 2 ms, not its 2 ms and then the 1 ms search.
    let elapsed = run.virtual_ns.unwrap();
    let parallel = HUB_BUSY.as_nanos() as u64;
    assert!(
        elapsed < parallel + parallel / 5,
        "{topology}: the hub's 2 ms and a 1 ms job it woke took {elapsed} ns of virtual time"
    );
}

#[test]
fn simulated_one_node_a_job_a_hub_wakes_runs_beside_it() {
    simulated("synthetic:package:1 numa:1 core:4 pu:1", 4);
}

#[test]
fn simulated_xeon_a_job_a_hub_wakes_runs_beside_it() {
    simulated("preset:xeon-x7560", 32);
}

fn threads(topology: &str) {
    let run = hub_sends_then_keeps_busy(
        EngineKind::ActorCentric,
        topology,
        2,
        Busy::SpinUntilRun(Duration::from_secs(10)),
        Duration::ZERO,
    );
    assert!(
        run.ran_meanwhile,
        "{topology}: the job the hub woke waited for the hub's activation (ran on {})",
        run.seeker_worker
    );
    assert_eq!(run.seeker_worker, 1, "{topology}");
    // Taken by a thief from the deque, not rescued out of a stalled next slot by the stall
    // guard (by an idle worker, or queued by the monitor), as it was in the next slot.
    assert_eq!(
        (run.stats.total.slot_rescues, run.stats.stall_rescues),
        (0, 0),
        "{topology}"
    );
}

#[test]
fn on_threads_one_node_a_job_a_hub_wakes_runs_beside_it() {
    threads("synthetic:package:1 numa:1 core:2 pu:1");
}

#[test]
fn on_threads_two_nodes_a_job_a_hub_wakes_runs_beside_it() {
    threads("synthetic:package:2 numa:1 core:1 pu:1");
}
