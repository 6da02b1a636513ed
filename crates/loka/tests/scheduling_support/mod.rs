//! A system for the scheduling tests: one engine, one machine, one policy, a fixed seed, and
//! under the simulation no quiet period (`run_until_idle` returns as soon as nothing is queued).

use loka::{Config, EngineKind, PolicyKind, System};

/// A system of `workers` workers on `topology` under `policy`, run by `engine`, with `seed`.
pub fn system(
    engine: EngineKind,
    topology: &str,
    workers: usize,
    policy: &str,
    seed: u64,
) -> System {
    let mut config = Config {
        engine,
        topology: topology.to_owned(),
        workers,
        policy: policy.parse::<PolicyKind>().unwrap(),
        seed,
        ..Config::default()
    };
    config.sim.quiet_ms = 0;
    System::from_config(config).unwrap()
}
