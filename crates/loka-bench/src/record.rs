//! The result record, one JSON object per run (`docs/internals/benchmarks.md`).

use serde::{Deserialize, Serialize};

/// The `exec` of a peer's record: peers have no execution modes, their framework schedules.
pub const PEER_EXEC: &str = "default";

/// The `exec` a record without the key ran under: loka's only mode before execution modes
/// existed (every actor a task on the workers, `all-task`), and [`PEER_EXEC`] for a peer.
pub fn implied_exec(runtime: &str) -> &'static str {
    if runtime == "loka" {
        loka::ExecMode::AllTask.name()
    } else {
        PEER_EXEC
    }
}

fn default_exec() -> String {
    loka::ExecMode::AllTask.name().to_owned()
}

/// One run of one benchmark on one runtime.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// `loka`, `actix`, `actix-1thread`, `ractor`, `kameo`, `tokio`, `tokio-current-thread`,
    /// `caf`.
    pub runtime: String,
    /// The benchmark.
    pub bench: String,
    /// The engine (`actor-centric`, or the peer framework's default).
    pub engine: String,
    /// The scheduler policy.
    pub policy: String,
    /// The execution mode (`loka::ExecMode` by name: `all-task`, `all-thread`, `auto`, …;
    /// docs/exec-policies.md); peers: `default`, their framework's own scheduling. A line without
    /// the key was written before execution modes existed, when every loka actor ran as a task:
    /// it reads as `all-task` ([`implied_exec`] says what a results file's reader assumes).
    #[serde(default = "default_exec")]
    pub exec: String,
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
    /// Set on the record of a peer run that `loka bench compare --peer-cap SECS` stopped after
    /// that many seconds (wall time of the process) because it had not finished: the run is
    /// slower than the cap and the record holds no measurement (`messages`, `seconds` and
    /// `msgs_per_sec` are 0, `verified` false). Readers count it as slower than every finished
    /// run of the same runtime and benchmark ([`crate::report::censored_median`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_after: Option<f64>,
}
