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
    /// Wall time of the measured part; under the simulation engine, its virtual time (the
    /// prediction), equal to `virtual_seconds`.
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
    /// Under the simulation engine: the run's virtual time (setup from plain threads takes none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub virtual_seconds: Option<f64>,
    /// Under the simulation engine: the wall time the simulation took on this host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_seconds: Option<f64>,
}
