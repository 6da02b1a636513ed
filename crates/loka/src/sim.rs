//! Deterministic testing of actor programs: run a test under the simulation engine once per seed,
//! find the first seed whose schedule breaks it, and replay that seed as often as needed.
//!
//! Under the simulation engine (docs/simulation.md) a program's schedule is a function of its
//! seed: which virtual worker runs first when clocks tie, whom idle workers steal from, and which
//! of two interchangeable workers gets each actor a plain thread spawns or wakes. A test
//! that passes on one seed and fails on another depends on an ordering that actors do not
//! guarantee (only per sender→receiver FIFO is guaranteed). This is how to find such bugs
//! before a real machine's timing finds them:
//!
//! ```
//! use loka::sim;
//! use loka::{Config, System};
//!
//! let config = Config { workers: 4, topology: "preset:opteron6376".into(), ..Config::default() };
//! let found = sim::find_failing_seed(&config, 0..16, |system: &System| {
//!     // spawn actors, send, system.run_until_idle(), then check the outcome:
//!     let _ = system;
//!     Ok(())
//! });
//! assert!(found.is_none());
//! ```

use crate::{Config, ConfigError, EngineKind, System};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A seed whose schedule made the test fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedFailure {
    /// The seed (replay it with [`run_seed`]).
    pub seed: u64,
    /// The test's error, or its panic message.
    pub message: String,
    /// The simulation's trace hash when the test returned (equal on every replay).
    pub trace_hash: u64,
}

/// Runs `test` on a fresh system built from `config` with the simulation engine and `seed`, then
/// shuts it down. `Err` with the test's error or panic message if it failed.
///
/// # Errors
/// The test's failure; a configuration error is returned as its message.
pub fn run_seed<F>(config: &Config, seed: u64, test: F) -> Result<(), SeedFailure>
where
    F: Fn(&System) -> Result<(), String>,
{
    let fail = |message: String, trace_hash| SeedFailure {
        seed,
        message,
        trace_hash,
    };
    let system = system_for(config, seed).map_err(|e| fail(e.to_string(), 0))?;
    let outcome = catch_unwind(AssertUnwindSafe(|| test(&system)));
    let trace_hash = system.stats().sim.map_or(0, |s| s.trace_hash);
    system.shutdown();
    match outcome {
        Ok(Ok(())) => Ok(()),
        Ok(Err(message)) => Err(fail(message, trace_hash)),
        Err(panic) => Err(fail(panic_message(&*panic), trace_hash)),
    }
}

/// Runs `test` under each seed in order ([`run_seed`]) and returns the first failure, or `None`
/// if every seed passed.
pub fn find_failing_seed<F>(
    config: &Config,
    seeds: impl IntoIterator<Item = u64>,
    test: F,
) -> Option<SeedFailure>
where
    F: Fn(&System) -> Result<(), String>,
{
    seeds
        .into_iter()
        .find_map(|seed| run_seed(config, seed, &test).err())
}

fn system_for(config: &Config, seed: u64) -> Result<System, ConfigError> {
    let mut config = Config {
        engine: EngineKind::Sim,
        seed,
        ..config.clone()
    };
    // Only the test's own waits run the simulation: a slow setup is never split.
    config.sim.quiet_ms = 0;
    System::from_config(config)
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "the test panicked".to_owned())
}
