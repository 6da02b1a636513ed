//! Under LGS a home that is behind yields (docs/decisions/0078-a-home-that-is-behind-yields.md):
//! a wake-up whose home PU's queue is longer than the waking worker's runs on the waking worker
//! instead, and the actor keeps its home. Run under the simulation engine (deterministic) on an
//! 8-PU preset with `lgs:alt`, where only the home PU itself counts as local.

use loka::{Actor, ActorRef, Config, Context, EngineKind, Placement, PolicyKind, SpawnOptions};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const SINKS: usize = 16;
const ROUNDS: u64 = 20;

/// Counts the messages it handled into a shared total.
struct Sink {
    handled: Arc<AtomicU64>,
}

impl Actor for Sink {
    type Msg = u64;
    fn handle(&mut self, _ctx: &mut Context<Self>, _msg: u64) {
        self.handled.fetch_add(1, Ordering::SeqCst);
    }
}

/// Each round, one message to every sink, then the next round through its own mailbox.
struct Driver {
    sinks: Vec<ActorRef<u64>>,
}

impl Actor for Driver {
    type Msg = u64;
    fn handle(&mut self, ctx: &mut Context<Self>, round: u64) {
        for s in &self.sinks {
            s.send(round).unwrap();
        }
        if round + 1 < ROUNDS {
            ctx.myself().send(round + 1).unwrap();
        }
    }
}

/// Sixteen sinks homed on worker 1, woken round after round by a driver on worker 0: one
/// worker's inbox takes every wake-up. Returns the stats and the messages the sinks handled.
fn sinks_homed_on_one_worker() -> (loka::Stats, u64) {
    let mut config = Config {
        engine: EngineKind::Sim,
        topology: "preset:nehalem-2x4".to_owned(),
        workers: 8,
        policy: "lgs:alt".parse::<PolicyKind>().unwrap(),
        seed: 5,
        ..Config::default()
    };
    config.sim.quiet_ms = 0;
    let system = loka::System::from_config(config).unwrap();
    let at = |w: usize| SpawnOptions::default().placement(Placement::Worker(w));
    let handled = Arc::new(AtomicU64::new(0));
    let sinks: Vec<ActorRef<u64>> = (0..SINKS)
        .map(|_| {
            let handled = Arc::clone(&handled);
            // With data (4 KiB declared): an actor without any runs where it is woken under
            // LGS, and its home never takes a wake-up
            // (docs/decisions/0098-lgs-small-actors-run-where-woken.md).
            system.spawn_with(Sink { handled }, at(1).footprint(4096))
        })
        .collect();
    // Every sink runs its first activation and goes idle: the driver's sends wake them.
    system.run_until_idle();
    let driver = system.spawn_with(Driver { sinks }, at(0));
    driver.send(0).unwrap();
    system.run_until_idle();
    let stats = system.stats();
    let total = handled.load(Ordering::SeqCst);
    system.shutdown();
    (stats, total)
}

#[test]
fn a_home_whose_queue_is_longer_leaves_the_wake_up_to_the_waking_worker() {
    let (stats, handled) = sinks_homed_on_one_worker();
    assert_eq!(handled, SINKS as u64 * ROUNDS, "every message handled once");
    // The sinks' home takes wake-ups while its inbox is no longer than the driver's worker's
    // queues, and leaves the rest to the driver's worker: both happen.
    assert!(
        stats.total.hpu_yields > 0,
        "a home with the longer queue yields (pushes {}, yields {})",
        stats.total.hpu_pushes,
        stats.total.hpu_yields
    );
    assert!(
        stats.total.hpu_pushes > 0,
        "a home that keeps up still gets its actors (pushes {}, yields {})",
        stats.total.hpu_pushes,
        stats.total.hpu_yields
    );
    // Yielded wake-ups ran away from the home, and the actors kept it: activations on the home PU
    // and elsewhere both.
    assert!(stats.total.exec_home_pu > 0 && stats.total.exec_home_node > 0);
}
