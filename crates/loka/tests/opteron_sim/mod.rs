//! The simulated machine of the tests that need many NUMA nodes: the 4-socket, 8-node Opteron
//! 6376 preset at all of its 64 PUs, seed 1, and no quiet-time wait (the tests drive it with
//! `run_until_idle`).

use loka::{Config, EngineKind, PolicyKind, System};

/// Workers of the preset: one per PU.
pub const WORKERS: usize = 64;

/// A system on the simulated Opteron under `policy`.
pub fn system(policy: PolicyKind) -> System {
    let mut config = Config {
        engine: EngineKind::Sim,
        topology: "preset:opteron6376".to_owned(),
        workers: WORKERS,
        policy,
        seed: 1,
        ..Config::default()
    };
    config.sim.quiet_ms = 0;
    System::from_config(config).unwrap()
}
