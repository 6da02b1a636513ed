//! Hubs and hierarchical scheduling: a hub stays on its worker under `hierarchical` (every
//! hierarchical configuration of `common::configurations()`, i.e. every engine in
//! `loka::EngineKind::ALL` that supports it × worker counts × variants × placement strategies);
//! toggling the hub flag of a stopped actor is an error (every engine); hierarchical load
//! balancing pulls actors along migration paths, locally and between NUMA nodes (every engine that
//! supports `hierarchical`).

use crate::common::{configurations, stoppable, system, StopMsg};
use loka::{Actor, ActorRef, Context, EngineKind};
use std::sync::{Arc, Mutex};
use std::time::Duration;

// ------------------------------------------------------------------------------------------ hubs

struct Hub {
    workers_seen: Arc<Mutex<std::collections::HashSet<usize>>>,
}

impl Actor for Hub {
    type Msg = u32;
    fn handle(&mut self, ctx: &mut Context<Self>, _: u32) {
        if let Some(w) = ctx.worker_index() {
            self.workers_seen.lock().unwrap().insert(w);
        }
    }
}

struct Chatter {
    hub: ActorRef<u32>,
    left: u32,
}

impl Actor for Chatter {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _: ()) {
        for _ in 0..50 {
            self.hub.send(1).unwrap();
        }
        self.left -= 1;
        if self.left > 0 {
            ctx.myself().send(()).unwrap();
        } else {
            ctx.stop();
        }
    }
}

#[test]
fn hubs_stay_on_their_worker_under_hierarchical() {
    for (label, config) in configurations() {
        if !matches!(config.policy, loka::PolicyKind::Hierarchical { .. }) || config.workers < 2 {
            continue;
        }
        let system = system(&config);
        let workers_seen = Arc::new(Mutex::new(std::collections::HashSet::new()));
        let hub = system.spawn_with(
            Hub {
                workers_seen: Arc::clone(&workers_seen),
            },
            loka::SpawnOptions::new().hub(true),
        );
        for _ in 0..64 {
            system
                .spawn(Chatter {
                    hub: hub.clone(),
                    left: 20,
                })
                .send(())
                .unwrap();
        }
        system.run_until_idle();
        let seen = workers_seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 1, "{label}: the hub ran on workers {seen:?}");
        assert!(system.stats().hubs >= 1, "{label}");
    }
}

#[test]
fn hub_toggle_on_a_stopped_actor_is_an_error() {
    for &engine in EngineKind::ALL {
        let system = system(&loka::Config {
            workers: 1,
            engine,
            ..loka::Config::default()
        });
        let (actor, _, _) = stoppable(&system);
        actor.set_hub(true).unwrap();
        actor.send(StopMsg::StopNow).unwrap();
        system.run_until_idle();
        let err = actor.set_hub(false).unwrap_err();
        assert_eq!(err.actor, actor.id(), "{engine}");
        assert!(err.to_string().contains("stopped"), "{engine}: {err}");
    }
}

// -------------------------------------------------------------------------------- load balancing

struct Busy {
    left: u32,
}

impl Actor for Busy {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _: ()) {
        // A few µs of work per message, so queues stay long enough to be balanced.
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_micros(5) {
            std::hint::spin_loop();
        }
        self.left -= 1;
        if self.left == 0 {
            ctx.stop();
        } else {
            ctx.myself().send(()).unwrap();
        }
    }
}

#[test]
fn hierarchical_load_balancing_pulls_actors_along_migration_paths() {
    let policy = loka::PolicyKind::Hierarchical { auto_hubs: false };
    // One node (local rounds only) and four nodes (a global round must happen: all work starts
    // on node 0), on every engine that runs `hierarchical` and models its balancing.
    for &engine in EngineKind::ALL
        .iter()
        .filter(|e| e.supports(policy) && e.balances())
    {
        for (topology, workers) in [
            ("synthetic:package:1 core:4 pu:1", 4),
            ("preset:xeon-x7560", 32),
        ] {
            if workers == 32 && !engine.is_real() {
                // A global round moves work only to nodes whose workers looked for work since
                // the previous round (Alg. 4.1's availability): on real threads the wake-ups of
                // the spawns make idle workers search; the simulation's deterministic schedule
                // keeps the other nodes parked, so their limits are 0 and no path leads there
                // (docs/simulation.md, *hierarchical's balancing*).
                continue;
            }
            let label = format!("{engine}/{policy} {topology}");
            let config = loka::Config {
                workers,
                policy,
                engine,
                topology: topology.to_owned(),
                balance_interval: 20,
                ..loka::Config::default()
            };
            let system = system(&config);
            let layout = system.machine().layout.clone();
            let remote_pulls = |stats: &loka::Stats| -> u64 {
                (0..workers)
                    .filter(|&w| layout.node_of(w) != layout.node_of(0))
                    .map(|w| stats.workers[w].balance_migrations)
                    .sum()
            };
            // Balancing rounds run on the clock of the workers' activations: on a loaded host
            // (32 threads on 2 cores) one batch can end before a global round comes. Up to five
            // batches; a policy that never balances fails all of them.
            for _batch in 0..5 {
                for _ in 0..200 {
                    system
                        .spawn_with(
                            Busy { left: 20 },
                            loka::SpawnOptions::new().placement(loka::Placement::Worker(0)),
                        )
                        .send(())
                        .unwrap();
                }
                system.run_until_idle();
                if workers < 32 || remote_pulls(&system.stats()) > 0 {
                    break;
                }
            }
            let stats = system.stats();
            assert_eq!(stats.actors_live(), 0, "{label}: every actor finished");
            assert!(
                stats.total.balance_rounds > 0,
                "{label}: no balancing round ran"
            );
            assert!(
                stats.total.balance_migrations > 0,
                "{label}: no actor was pulled along a migration path: {:?}",
                stats.total
            );
            if workers == 32 {
                // Workers outside node 0 can only pull through a global round (their own nodes
                // hold nothing to balance locally).
                assert!(
                    remote_pulls(&stats) > 0,
                    "{label}: no global round moved work off node 0"
                );
            }
        }
    }
}
