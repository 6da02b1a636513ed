//! Who the simulation wakes for stealable work, against the real engine's rule
//! (`Sleepers::notify_stealable`, docs/decisions/0070-searchers-spare-wake-ups.md): nobody sleeping
//! while a worker searches, spinning or stealing; a searcher takes the work without a wake-up.
//! Virtual time and counted wake-ups: no host load changes them.
//!
//! Each round a driver, woken by its timer every millisecond, wakes two sinks and a partner
//! that computes for 950 µs: each wake-up after the first displaces the previous one from the
//! driver's next slot into its deque, where thieves look. When the round starts, the worker that
//! ran the partner has polled for 50 µs of the 100 µs it polls before it sleeps, and the workers
//! that ran the sinks have slept for most of a millisecond. The real rule pays two wake-ups a
//! round: the timer's, of the driver's worker, and one handed on by the searcher that takes the
//! first sink while the second still waits (`end_search`); the polling worker takes the rest.
//! Until 2026-12-07 the simulation woke the lowest-numbered parked worker, a sleeper, for each
//! displaced sink as well: five a round (docs/decisions/0100-sim-searchers-spare-wake-ups.md).

use loka::{Actor, ActorRef, Config, Context, EngineKind, PolicyKind, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

const ROUNDS: u32 = 100;

/// Counts the messages it handles.
struct Sink(Arc<AtomicU64>);

impl Actor for Sink {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _: ()) {
        ctx.charge(Duration::from_micros(2));
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// Computes for 950 µs a message.
struct Partner;

impl Actor for Partner {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _: ()) {
        ctx.charge(Duration::from_micros(950));
    }
}

struct Driver {
    partner: ActorRef<()>,
    sinks: [ActorRef<()>; 2],
}

impl Actor for Driver {
    type Msg = u32;
    fn handle(&mut self, ctx: &mut Context<Self>, round: u32) {
        if round == 0 {
            return;
        }
        for sink in &self.sinks {
            sink.send(()).unwrap();
        }
        self.partner.send(()).unwrap();
        ctx.myself().send_after(Duration::from_millis(1), round - 1);
    }
}

/// Runs the rounds under `policy` on a one-node machine of 8 workers; returns the sinks'
/// messages and the wake-ups of sleeping workers.
fn rounds(policy: PolicyKind) -> (u64, u64) {
    let mut config = Config {
        engine: EngineKind::Sim,
        topology: "synthetic:package:1 numa:1 core:8 pu:1".to_owned(),
        workers: 8,
        policy,
        seed: 1,
        ..Config::default()
    };
    config.sim.quiet_ms = 0;
    let system = System::from_config(config).unwrap();
    let handled = Arc::new(AtomicU64::new(0));
    let sinks = [0, 1].map(|_| system.spawn(Sink(Arc::clone(&handled))));
    let partner = system.spawn(Partner);
    let driver = system.spawn(Driver { partner, sinks });
    system.run_until_idle();
    let before = system.stats().unparks;
    driver.send(ROUNDS).unwrap();
    system.run_until_idle();
    let wakes = system.stats().unparks - before;
    system.shutdown();
    (handled.load(Ordering::Relaxed), wakes)
}

#[test]
fn a_searching_worker_takes_stealable_work_and_no_sleeper_wakes() {
    for policy in [
        PolicyKind::Cls,
        PolicyKind::Lgs(loka::policy::LgsVariants::NONE),
    ] {
        let (handled, wakes) = rounds(policy);
        assert_eq!(handled, 2 * ROUNDS as u64, "{policy}");
        // Two a round, and a few as the rounds start.
        assert!(
            wakes < 3 * ROUNDS as u64,
            "{policy}: {wakes} wake-ups of sleeping workers in {ROUNDS} rounds"
        );
    }
}
