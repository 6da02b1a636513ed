//! Quiescence: `run_until_idle` waits for actors that spawn actors and returns quickly on an empty
//! system; idle workers park and stop polling, and wake for new work. Runs under every
//! configuration of `common::configurations()` (every engine in `loka::EngineKind::ALL` × every
//! policy it supports × worker counts and variants), the spawn tree under the heavy subset.

use crate::common::{configurations, heavy_configurations, stoppable, system, StopMsg};
use loka::{Actor, Context};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

// --------------------------------------------------------------------------------- quiescence

struct Spawner {
    depth: u32,
    fanout: u32,
    started: Arc<AtomicU64>,
}

impl Actor for Spawner {
    type Msg = ();
    fn started(&mut self, ctx: &mut Context<Self>) {
        self.started.fetch_add(1, SeqCst);
        if self.depth > 0 {
            for _ in 0..self.fanout {
                ctx.spawn(Spawner {
                    depth: self.depth - 1,
                    fanout: self.fanout,
                    started: Arc::clone(&self.started),
                });
            }
        }
        ctx.stop();
    }
    fn handle(&mut self, _ctx: &mut Context<Self>, _: ()) {}
}

/// Under the heavy subset of the configurations (each engine, policy and variant once, with real
/// parallelism): its 21,845 spawns under each of them took 31 s of `make test`.
#[test]
fn quiescence_waits_for_actors_that_spawn_actors() {
    for (label, config) in heavy_configurations() {
        let system = system(&config);
        let started = Arc::new(AtomicU64::new(0));
        // 1 + 4 + 16 + ... + 4^7 actors
        drop(system.spawn(Spawner {
            depth: 7,
            fanout: 4,
            started: Arc::clone(&started),
        }));
        system.run_until_idle();
        let expected = (4u64.pow(8) - 1) / 3;
        assert_eq!(started.load(SeqCst), expected, "{label}");
        let stats = system.stats();
        assert_eq!(stats.actors_spawned, expected, "{label}");
        assert_eq!(stats.actors_live(), 0, "{label}: all stopped themselves");
    }
}

#[test]
fn idle_system_is_quiescent_quickly() {
    for (label, config) in configurations() {
        let system = system(&config);
        assert!(
            system.run_until_idle_timeout(Duration::from_secs(5)),
            "{label}: an empty system never became quiescent"
        );
    }
}

/// A timeout too long for the clock to count (`Duration::MAX`, which panicked with "overflow when
/// adding duration to instant") means no deadline: it waits for quiescence as `run_until_idle`.
#[test]
fn a_timeout_too_long_for_the_clock_waits_without_a_deadline() {
    for (label, config) in configurations() {
        let system = system(&config);
        let started = Arc::new(AtomicU64::new(0));
        drop(system.spawn(Spawner {
            depth: 3,
            fanout: 4,
            started: Arc::clone(&started),
        }));
        assert!(system.run_until_idle_timeout(Duration::MAX), "{label}");
        assert_eq!(started.load(SeqCst), (4u64.pow(4) - 1) / 3, "{label}");
    }
}

/// A zero timeout is a poll: it looks once and says whether the system is quiet now. Polling is
/// how a thread that also waits on something else (a benchmark's driver reading a channel) learns
/// that nothing more will come; it must see quiescence once it holds, and, under the simulation,
/// a message sent from this thread must still be delivered to an actor while this thread polls.
#[test]
fn a_zero_timeout_polls_and_sees_quiescence() {
    for (label, config) in configurations() {
        let system = system(&config);
        let (actor, handled, _) = stoppable(&system);
        actor.send(StopMsg::Work).unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !system.run_until_idle_timeout(Duration::ZERO) {
            assert!(
                std::time::Instant::now() < deadline,
                "{label}: polling never saw the system quiet"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(
            handled.load(SeqCst),
            1,
            "{label}: quiet before the message was handled"
        );
    }
}

// ------------------------------------------------------------------------------- idle workers

#[test]
fn idle_workers_park_and_stop_polling() {
    for (label, config) in configurations() {
        let system = system(&config);
        let (actor, _, _) = stoppable(&system);
        for _ in 0..1_000 {
            actor.send(StopMsg::Work).unwrap();
        }
        system.run_until_idle();
        let before = system.stats().total;
        std::thread::sleep(Duration::from_millis(100));
        let after = system.stats().total;
        assert_eq!(
            after.steal_attempts, before.steal_attempts,
            "{label}: a quiescent system keeps polling"
        );
        assert!(
            after.parks >= config.workers as u64,
            "{label}: every worker parked"
        );
        // And it wakes up promptly for new work.
        actor.send(StopMsg::Work).unwrap();
        assert!(
            system.run_until_idle_timeout(Duration::from_secs(5)),
            "{label}"
        );
    }
}
