//! What every guarantee test shares: the configurations it runs under, the `system()` helper, the
//! `mix` checksum and the `Stoppable` actor. Add each new engine, policy and variant here (an
//! engine joins by being in `EngineKind::ALL`) and every guarantee is checked under it.

#![allow(dead_code)]

use loka::{
    Actor, ActorRef, Config, Context, EngineKind, ExecMode, PlacementStrategy, PolicyKind,
    QueueKind, System, VictimSelection,
};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;

/// (label, configuration) for every engine × policy the engine supports × variant, at several
/// worker counts. Labels start with `engine/policy`, e.g. `actor-centric/cls workers=2
/// lifo_slot=true`.
pub fn configurations() -> Vec<(String, Config)> {
    let mut out = Vec::new();
    for &engine in EngineKind::ALL {
        for &policy in PolicyKind::ALL {
            if !engine.supports(policy) {
                continue;
            }
            if engine == EngineKind::MessageCentric {
                // Its variants are the victim selections and the queue kind (no next slot).
                for workers in [1, 2, 4] {
                    for &victims in VictimSelection::ALL {
                        for queue in [QueueKind::Copy, QueueKind::List] {
                            if queue == QueueKind::List && victims != VictimSelection::Longest {
                                continue;
                            }
                            let mut config = Config {
                                workers,
                                policy,
                                engine,
                                topology: topology_for(workers),
                                ..Config::default()
                            };
                            config.message_centric.victims = victims;
                            config.message_centric.queue = queue;
                            // Few queues at 4 workers: more queues per gulp, more stealing.
                            if workers == 4 {
                                config.message_centric.queues_per_worker = 2;
                            }
                            // Cforall's own binding as well: actors that never follow.
                            if workers == 2
                                && victims == VictimSelection::Longest
                                && queue == QueueKind::Copy
                            {
                                let mut fixed = config.clone();
                                fixed.message_centric.follow = false;
                                out.push((
                                    format!(
                                        "{engine}/{policy} workers={workers} victims={victims} queue={queue:?} follow=false"
                                    ),
                                    fixed,
                                ));
                            }
                            out.push((
                                format!(
                                    "{engine}/{policy} workers={workers} victims={victims} queue={queue:?}"
                                ),
                                config,
                            ));
                        }
                    }
                }
                continue;
            }
            for workers in [1, 2, 4] {
                for lifo_slot in [true, false] {
                    let config = Config {
                        workers,
                        policy,
                        engine,
                        lifo_slot,
                        topology: topology_for(workers),
                        ..Config::default()
                    };
                    out.push((
                        format!("{engine}/{policy} workers={workers} lifo_slot={lifo_slot}"),
                        config,
                    ));
                }
            }
        }
    }
    // LASSI's mode A (a shared queue per place) needs two places: a synthetic two-package machine.
    for engine in [EngineKind::ActorCentric, EngineKind::Sim] {
        for workers in [2, 4] {
            let config = Config {
                workers,
                engine,
                policy: PolicyKind::Places(loka::policy::PlacesMode::Shared),
                topology: format!("synthetic:package:2 core:{} pu:1", workers / 2),
                ..Config::default()
            };
            out.push((
                format!("{engine}/places:a workers={workers} two packages"),
                config,
            ));
        }
    }
    // Every execution mode (docs/exec-policies.md) on the engine that runs them, under a policy
    // that runs actors where they are woken (`cls`) and one that routes them away (`places`).
    for &mode in &ExecMode::ALL {
        if mode == ExecMode::AllTask {
            continue; // every configuration above
        }
        for policy in [
            PolicyKind::Cls,
            PolicyKind::Places(loka::policy::PlacesMode::PerWorker),
        ] {
            for workers in [1, 2, 4] {
                let config = Config {
                    workers,
                    policy,
                    exec: mode,
                    topology: topology_for(workers),
                    ..Config::default()
                };
                out.push((
                    format!("actor-centric/{policy} workers={workers} exec={mode}"),
                    config,
                ));
            }
        }
    }
    // Hub-aware scheduling under every placement strategy (for regular actors and hubs alike),
    // on every engine that runs it.
    for &engine in EngineKind::ALL {
        for &strategy in PlacementStrategy::ALL {
            for &policy in PolicyKind::ALL {
                if let PolicyKind::Hierarchical { .. } = policy {
                    if !engine.supports(policy) {
                        continue;
                    }
                    let config = Config {
                        workers: 4,
                        policy,
                        engine,
                        placement: strategy,
                        hub_placement: strategy,
                        topology: topology_for(4),
                        ..Config::default()
                    };
                    out.push((
                        format!("{engine}/{policy} workers=4 placement={strategy}"),
                        config,
                    ));
                }
            }
        }
    }
    out
}

/// The real machine where it has enough PUs (workers get pinned), else a synthetic machine of
/// `workers` PUs (decisions only, no pinning), so tests run on any machine.
pub fn topology_for(workers: usize) -> String {
    let host_pus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if workers <= host_pus {
        "host".to_owned()
    } else {
        format!("synthetic:package:2 core:{} pu:1", workers.div_ceil(2))
    }
}

/// A smaller set for the heaviest tests: each engine, policy and variant once, with real
/// parallelism.
pub fn heavy_configurations() -> Vec<(String, Config)> {
    configurations()
        .into_iter()
        .filter(|(_, c)| {
            c.workers == 4
                || (c.workers == 2
                    && c.lifo_slot
                    && c.message_centric.victims == loka::VictimSelection::Longest)
        })
        .collect()
}

/// Starts a system from a test configuration.
pub fn system(config: &Config) -> System {
    System::from_config(config.clone()).expect("valid test configuration")
}

/// Ends the test process with a failure naming `what` if the returned guard is still alive after
/// `secs` seconds: a test whose fault shows as a wait that never ends (a lost wake-up, a count
/// gone wrong) then fails in minutes instead of running into the CI's time limit.
pub fn watchdog(what: String, secs: u64) -> Watchdog {
    let done = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&done);
    std::thread::spawn(move || {
        let start = std::time::Instant::now();
        while !flag.load(SeqCst) {
            if start.elapsed().as_secs() >= secs {
                // Straight to the process's stderr: the test harness captures `eprintln!`, and
                // the exit below would lose what it captured.
                let _ = writeln!(std::io::stderr(), "{what}: not finished after {secs} s");
                std::process::exit(101);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    });
    Watchdog(done)
}

/// Stops its [`watchdog`] when dropped.
pub struct Watchdog(Arc<AtomicBool>);

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.0.store(true, SeqCst);
    }
}

/// A 64-bit mix (SplitMix64 finaliser) for order-independent checksums.
pub fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d049bb133111eb);
    x ^ (x >> 31)
}

// ------------------------------------------- an actor that counts its work and can be stopped

/// Counts `Work` messages in `seen`; sets `stopped` when its `stopped` hook runs.
pub struct Stoppable {
    seen: Arc<AtomicU64>,
    stopped: Arc<AtomicBool>,
}

/// `Stoppable`'s messages.
pub enum StopMsg {
    Work,
    StopNow,
}

impl Actor for Stoppable {
    type Msg = StopMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: StopMsg) {
        match msg {
            StopMsg::Work => {
                self.seen.fetch_add(1, SeqCst);
            }
            StopMsg::StopNow => ctx.stop(),
        }
    }
    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.stopped.store(true, SeqCst);
    }
}

/// Spawns a `Stoppable`: (its reference, its `Work` count, whether its `stopped` hook ran).
pub fn stoppable(system: &System) -> (ActorRef<StopMsg>, Arc<AtomicU64>, Arc<AtomicBool>) {
    let seen = Arc::new(AtomicU64::new(0));
    let stopped = Arc::new(AtomicBool::new(false));
    let actor = system.spawn(Stoppable {
        seen: Arc::clone(&seen),
        stopped: Arc::clone(&stopped),
    });
    (actor, seen, stopped)
}
