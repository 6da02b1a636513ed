//! The result record, one JSON object per run (`docs/benchmarks.md`).

use serde::{Deserialize, Serialize};

/// One run of one benchmark on one runtime.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// `loka`, `actix`, `actix-1thread`, `ractor`, `kameo`, `caf`.
    pub runtime: String,
    /// The benchmark.
    pub bench: String,
    /// The engine (`actor-centric`, or the peer framework's default).
    pub engine: String,
    /// The scheduler policy.
    pub policy: String,
    /// The topology source.
    pub topology: String,
    /// Worker threads.
    pub workers: usize,
    /// `quick` or `full`.
    pub size: String,
    /// Messages delivered.
    pub messages: u64,
    /// Wall time of the measured part.
    pub seconds: f64,
    /// `messages / seconds`.
    pub msgs_per_sec: f64,
    /// Whether the workload's result check passed.
    pub verified: bool,
    /// Scheduler counters (`System::stats()` totals and system-wide counters).
    #[serde(default)]
    pub telemetry: serde_json::Value,
    /// 0-based repetition index.
    #[serde(default)]
    pub repeat: usize,
}
