//! System configuration from code, a TOML file and `LOKA_*` environment variables.
//!
//! Precedence: defaults < TOML file < environment < builder calls made after loading.
//!
//! ```toml
//! workers = 4          # default: available parallelism
//! throughput = 128     # messages per activation (and sends into queues)
//! backlog_gulp = 16384 # an activation finding more queued goes on, up to this many in all
//! policy = "auto"     # or cls, lgs[:VARIANTS], hierarchical[:auto]
//! engine = "actor-centric"
//! topology = "host"   # or preset:NAME, synthetic:DESC, xml:FILE
//! # cost = "cost.txt"  # optional cost matrix override
//! pin = true           # pin workers to PUs on the real machine
//! lifo_slot = true
//! seed = 42
//! placement = "default"      # regular actors: default|compact|scatter|circular|random
//! hub_placement = "scatter"  # hubs
//! balance_interval = 20000   # hierarchical: activations between load-balancing rounds (0 = off)
//! balance_threshold = 0.5    # hierarchical: node imbalance that triggers a global round
//! place_level = "package"    # places policies: a place per package, l3 or numa node
//! exec = "all-task"          # execution policies: all-task | all-thread | auto
//! failure_window = 1000      # actor failures System::failures keeps (the most recent)
//! panic_report = "hook"      # or "tracing": an actor's panic as one tracing::error! event
//! # observe = "/run/app/loka.sock" # serve snapshots on this Unix socket (`loka top`)
//! [idle]
//! spin_us = 50         # spin (stealing) this long before yielding
//! yield_us = 50        # then yield (stealing) this long before parking
//! [sim]                # the simulation engine (engine = "sim"; docs/simulation.md)
//! # cost = "cost.toml" # cost model keys replacing the built-in ones
//! compute = "fixed"    # or "measured": add handlers' measured CPU time (not reproducible)
//! quiet_ms = 200       # fold plain threads' input after this long without any (0: only on a wait)
//! [message_centric]    # the message-centric engine (engine = "message-centric"; docs/message-centric.md)
//! queues_per_worker = 16 # 1..=1024
//! # queues = 64        # total queues instead (1 to 1024 per worker)
//! victims = "longest"  # random | longest | none | nearest
//! queue = "copy"       # or "list" (ablation: one allocation per message)
//! ```

mod message_centric;
mod observe_error;
mod panic_report;
mod stall;

use crate::policy::placement::PlacementStrategy;
use crate::policy::PolicyKind;
pub use message_centric::{MessageCentricConfig, QueueKind, VictimSelection};
pub use observe_error::ObserveError;
pub use panic_report::{PanicReport, UnknownPanicReport};
use serde::{Deserialize, Serialize};
pub use stall::StallGuard;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A configuration problem; every variant names the offending input and says what is wrong. The
/// message is complete in itself (the cause of an I/O or topology failure included), and no
/// variant repeats that cause as its [`source`](std::error::Error::source): a printer that walks
/// the chain (`anyhow`'s `{:#}`) shows each cause once.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A configuration file could not be read.
    #[error("cannot read configuration file {}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
    /// The simulation engine's cost file could not be read or has a bad key or value.
    #[error("{message}")]
    SimCost {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the file and the key.
        message: String,
    },
    /// A configuration file is not valid TOML or has unknown/mistyped keys.
    #[error("invalid configuration in {source_name}: {message}")]
    Toml {
        /// The file (or `<string>`).
        source_name: String,
        /// The parser's message, with line and column.
        message: String,
    },
    /// The topology (or cost file) could not be loaded or does not fit the workers.
    #[error("topology `{spec}`: {error}")]
    Topology {
        /// The topology spec.
        spec: String,
        /// What went wrong.
        error: loka_topology::TopologyError,
    },
    /// The engine cannot run the policy (see [`EngineKind::supports`]).
    #[error("engine `{engine}` does not support policy `{policy}` (in {source_name})")]
    Unsupported {
        /// The engine.
        engine: EngineKind,
        /// The policy it cannot run.
        policy: PolicyKind,
        /// Where the pair came from.
        source_name: String,
    },
    /// The `observe` socket could not be opened (docs/observability.md, "Live view"): its path
    /// exists, its directory is missing or not writable, or the serving thread did not start.
    /// Nothing of the system was started.
    #[cfg(unix)]
    #[error("{0}")]
    Observe(ObserveError),
    /// A value is out of range or unknown.
    #[error("invalid {key} = `{value}` in {source_name}: {reason}")]
    Invalid {
        /// The key, e.g. `workers`.
        key: &'static str,
        /// The value given.
        value: String,
        /// Where it came from: a file, an environment variable, or the builder.
        source_name: String,
        /// What is wrong.
        reason: String,
    },
}

/// Idle strategy of the actor-centric engine's workers.
///
/// An idle worker steals actively for `spin_us`, then keeps stealing while yielding its core for
/// `yield_us`, then parks until work arrives (a wake-up costs ~20 µs on a VM; a cross-core cache-line
/// round trip ~100 ns, so the spin phase is long enough that request/response traffic never pays a
/// wake-up per message). Parked workers use no CPU. Each phase is at most
/// [`MAX_US`](Self::MAX_US) long. The two together are the *longest* an idle worker steals: a
/// worker whose searches keep ending in a park longer than that shortens its own window (to
/// nothing), and goes back to the full one when a search finds work within it
/// (`docs/decisions/0054-adaptive-idle-window.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IdleStrategy {
    /// Microseconds of busy stealing before yielding (≤ [`MAX_US`](Self::MAX_US)).
    pub spin_us: u64,
    /// Microseconds of stealing with `yield` before parking (≤ [`MAX_US`](Self::MAX_US)).
    pub yield_us: u64,
}

impl Default for IdleStrategy {
    fn default() -> Self {
        IdleStrategy {
            spin_us: 50,
            yield_us: 50,
        }
    }
}

impl IdleStrategy {
    /// The longest accepted phase, in microseconds: one second. Staying awake only pays while
    /// the next message is a wake-up's cost away (~20 µs); a phase longer than a second saves no
    /// wake-up worth having and keeps an idle worker burning its core (at `u64::MAX` it never
    /// sleeps), so [`Config::validate`] refuses it ([`ConfigError::Invalid`] naming the key).
    pub const MAX_US: u64 = 1_000_000;

    pub(crate) fn spin(&self) -> Duration {
        Duration::from_micros(self.spin_us)
    }
    pub(crate) fn spin_and_yield(&self) -> Duration {
        Duration::from_micros(self.spin_us.saturating_add(self.yield_us))
    }
}

pub use crate::engine::kind::{EngineKind, UnknownEngine};

/// The shortest accepted `handler_sample_us`, in microseconds. A round's own work is small (a word
/// per worker, one lock), but the thread's timed wake-up is not: 15–40 µs of CPU on a VM
/// (docs/results/observability.md, "Handler time"), so every 100 µs the sampler already takes
/// about a seventh of a core. The longest is one second.
pub const MIN_HANDLER_SAMPLE_US: u64 = 100;
/// The longest accepted `handler_sample_us` (see [`MIN_HANDLER_SAMPLE_US`]).
pub const MAX_HANDLER_SAMPLE_US: u64 = 1_000_000;

/// Everything a [`crate::System`] is built from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Worker threads (≥ 1).
    pub workers: usize,
    /// An activation's budget before the actor yields its worker (≥ 1): messages taken, and sends
    /// that add to the queue of an actor already scheduled (docs/configuration.md).
    pub throughput: usize,
    /// The most messages an activation that finds a backlog takes in all: when its budget runs
    /// out with more than `throughput` messages queued, and went more to messages taken than to
    /// sends, it goes on with them, with as many sends into queues allowed (≤ `throughput`:
    /// never; docs/configuration.md).
    pub backlog_gulp: usize,
    /// Scheduler policy.
    pub policy: PolicyKind,
    /// Engine.
    pub engine: EngineKind,
    /// Topology source: `host`, `preset:NAME`, `synthetic:DESC` or `xml:FILE`.
    pub topology: String,
    /// A cost matrix file overriding the topology's hierarchical costs (docs/topology.md).
    pub cost: Option<std::path::PathBuf>,
    /// Pin worker `i` to PU `i` on the real machine (ignored on synthetic/preset topologies and
    /// for a single worker, which pinning cannot help: [`crate::Machine::pins_workers`]).
    pub pin: bool,
    /// Use the non-stealable next slot for woken actors (see [`crate::policy::cls`]).
    pub lifo_slot: bool,
    /// Seed of the workers' random number generators (victim choice), for reproducible runs.
    pub seed: u64,
    /// Idle strategy.
    pub idle: IdleStrategy,
    /// The stall guard (actor-centric engine).
    pub stall: StallGuard,
    /// Initial placement of regular actors (changeable at run time: `System::set_placement`).
    pub placement: PlacementStrategy,
    /// Initial placement of hubs: spread over the NUMA nodes in turn (`scatter`) unless set
    /// (docs/decisions/0104-hierarchical-homes-at-spawn.md).
    pub hub_placement: PlacementStrategy,
    /// `hierarchical` load balancing: activations the busiest worker runs between two balancing
    /// rounds (Erlang's reduction trigger: 2000 time slices of reductions, an activation counting
    /// at least a tenth of one, so 20,000 short activations); 0 turns balancing off.
    pub balance_interval: u64,
    /// `hierarchical` load balancing: a global round (between NUMA nodes) runs when
    /// `(max − min) / min` of the nodes' migration limits exceeds this (> 0).
    pub balance_threshold: f64,
    /// What a place is for the `places` policies (LASSI): one per package (default), L3 or NUMA
    /// node.
    pub place_level: loka_topology::PlaceLevel,
    /// How actors get their execution policy (docs/exec-policies.md).
    pub exec: crate::exec_policy::ExecMode,
    /// How many actor failures [`crate::System::failures`] keeps: the most recent ones (default
    /// 1,000, a few hundred KiB). Older ones are dropped, so a program whose actors keep
    /// failing runs in bounded memory; `stats().panics` still counts every failure. 0 keeps none.
    pub failure_window: usize,
    /// Where a panic in an actor's code is reported: the process's panic hook (default) or a
    /// `tracing` event (docs/observability.md).
    pub panic_report: PanicReport,
    /// A Unix socket path the system binds at build time and serves its
    /// [`Snapshot`](crate::Snapshot)s on, as JSON lines, to `loka top` and other clients
    /// (docs/observability.md, "Live view"). `None` (the default): no socket, no thread.
    pub observe: Option<PathBuf>,
    /// Handler time per actor (docs/observability.md, "Handler time"): every this many
    /// microseconds a sampling thread notes which actor each worker runs, and
    /// [`Snapshot::handler_time`](crate::Snapshot::handler_time) and `loka top` list the busiest
    /// actors. Under the simulation every activation's virtual time is recorded instead (no
    /// thread). 0 (the default): off, no thread, nothing recorded. Otherwise
    /// 100..=1,000,000 ([`MIN_HANDLER_SAMPLE_US`]).
    pub handler_sample_us: u64,
    /// The simulation engine's settings.
    pub sim: SimConfig,
    /// The message-centric engine's settings.
    pub message_centric: MessageCentricConfig,
}

/// How the simulation engine charges handler code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SimCompute {
    /// Only the cost model: the same program gives the same virtual time, bit for bit.
    #[default]
    Fixed,
    /// Also each activation's measured CPU time on this host (× the model's `compute_scale`):
    /// closer to a real run of compute-heavy handlers, not reproducible.
    Measured,
}

/// The simulation engine's settings (`[sim]` in TOML; docs/simulation.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SimConfig {
    /// A TOML file of cost-model keys replacing the built-in values.
    pub cost: Option<PathBuf>,
    /// How handler code is charged.
    pub compute: SimCompute,
    /// Input from plain threads is folded into the simulation when a thread waits on the system
    /// (`run_until_idle`, a `Pending` reply), or once none arrived for this many milliseconds
    /// (for programs that wait some other way); 0: only when a thread waits, which keeps a
    /// slow setup from being split (benchmarks and `loka::sim` use 0).
    pub quiet_ms: u64,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            cost: None,
            compute: SimCompute::Fixed,
            quiet_ms: 200,
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            throughput: 128,
            backlog_gulp: 16_384,
            policy: PolicyKind::default(),
            engine: EngineKind::default(),
            topology: "host".to_owned(),
            cost: None,
            pin: true,
            lifo_slot: true,
            seed: 0x5eed,
            idle: IdleStrategy::default(),
            stall: StallGuard::default(),
            placement: PlacementStrategy::Default,
            hub_placement: PlacementStrategy::Scatter,
            balance_interval: 20_000,
            balance_threshold: 0.5,
            place_level: loka_topology::PlaceLevel::default(),
            exec: crate::exec_policy::ExecMode::default(),
            failure_window: 1_000,
            panic_report: PanicReport::Hook,
            observe: None,
            handler_sample_us: 0,
            sim: SimConfig::default(),
            message_centric: MessageCentricConfig::default(),
        }
    }
}

impl Config {
    /// Parses TOML text; `source_name` names it in errors.
    pub fn from_toml_str(text: &str, source_name: &str) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|e| ConfigError::Toml {
            source_name: source_name.to_owned(),
            message: toml_message(text, &e),
        })?;
        config.validate(source_name)?;
        Ok(config)
    }

    /// Reads a TOML file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Config, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Io {
            path: path.to_owned(),
            error,
        })?;
        Self::from_toml_str(&text, &path.display().to_string())
    }

    /// Applies `LOKA_WORKERS`, `LOKA_THROUGHPUT`, `LOKA_POLICY`, `LOKA_ENGINE`, `LOKA_TOPOLOGY`, `LOKA_LIFO_SLOT`, `LOKA_PIN`,
    /// `LOKA_SEED`, `LOKA_IDLE_SPIN_US`, `LOKA_IDLE_YIELD_US`, `LOKA_PANIC_REPORT`, `LOKA_OBSERVE` (and the
    /// other `LOKA_*` variables of docs/configuration.md) from the process environment.
    pub fn apply_env(&mut self) -> Result<(), ConfigError> {
        self.apply_vars(|name| std::env::var(name).ok())
    }

    /// [`apply_env`](Self::apply_env) with an explicit lookup (testable without touching the
    /// process environment). On error `self` is unchanged.
    pub fn apply_vars(&mut self, var: impl Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
        let mut next = self.clone();
        fn parse<T: std::str::FromStr>(
            key: &'static str,
            name: &str,
            value: &str,
        ) -> Result<T, ConfigError>
        where
            T::Err: std::fmt::Display,
        {
            value
                .trim()
                .parse()
                .map_err(|e: T::Err| ConfigError::Invalid {
                    key,
                    value: value.to_owned(),
                    source_name: format!("environment variable {name}"),
                    reason: e.to_string(),
                })
        }
        macro_rules! env_field {
            ($name:literal, $key:literal, $($field:ident).+) => {
                if let Some(value) = var($name) {
                    next.$($field).+ = parse($key, $name, &value)?;
                }
            };
        }
        env_field!("LOKA_WORKERS", "workers", workers);
        env_field!("LOKA_THROUGHPUT", "throughput", throughput);
        env_field!("LOKA_BACKLOG_GULP", "backlog_gulp", backlog_gulp);
        env_field!("LOKA_POLICY", "policy", policy);
        env_field!("LOKA_ENGINE", "engine", engine);
        env_field!("LOKA_LIFO_SLOT", "lifo_slot", lifo_slot);
        env_field!("LOKA_PIN", "pin", pin);
        env_field!("LOKA_PLACEMENT", "placement", placement);
        env_field!("LOKA_HUB_PLACEMENT", "hub_placement", hub_placement);
        env_field!(
            "LOKA_BALANCE_INTERVAL",
            "balance_interval",
            balance_interval
        );
        env_field!(
            "LOKA_BALANCE_THRESHOLD",
            "balance_threshold",
            balance_threshold
        );
        env_field!("LOKA_SEED", "seed", seed);
        env_field!("LOKA_PLACE_LEVEL", "place_level", place_level);
        env_field!("LOKA_EXEC", "exec", exec);
        env_field!("LOKA_PANIC_REPORT", "panic_report", panic_report);
        env_field!(
            "LOKA_HANDLER_SAMPLE_US",
            "handler_sample_us",
            handler_sample_us
        );
        env_field!("LOKA_IDLE_SPIN_US", "idle.spin_us", idle.spin_us);
        env_field!("LOKA_IDLE_YIELD_US", "idle.yield_us", idle.yield_us);
        env_field!("LOKA_STALL_GUARD", "stall.guard", stall.guard);
        env_field!("LOKA_STALL_SLOT_US", "stall.slot_us", stall.slot_us);
        env_field!("LOKA_STALL_TICK_US", "stall.tick_us", stall.tick_us);
        env_field!("LOKA_STALL_PROMOTE", "stall.promote", stall.promote);
        env_field!(
            "LOKA_MC_VICTIMS",
            "message_centric.victims",
            message_centric.victims
        );
        env_field!(
            "LOKA_MC_QUEUES_PER_WORKER",
            "message_centric.queues_per_worker",
            message_centric.queues_per_worker
        );
        env_field!(
            "LOKA_MC_QUEUE",
            "message_centric.queue",
            message_centric.queue
        );
        env_field!(
            "LOKA_MC_FOLLOW",
            "message_centric.follow",
            message_centric.follow
        );
        if let Some(value) = var("LOKA_MC_QUEUES") {
            next.message_centric.queues =
                Some(parse("message_centric.queues", "LOKA_MC_QUEUES", &value)?);
        }
        if let Some(value) = var("LOKA_OBSERVE") {
            // Set and empty: no socket (turns off one a file asked for).
            next.observe = (!value.is_empty()).then(|| PathBuf::from(value));
        }
        if let Some(value) = var("LOKA_TOPOLOGY") {
            next.topology = value;
        }
        next.validate("the environment")?;
        *self = next;
        Ok(())
    }

    /// Checks ranges; `source_name` names the origin in the error.
    pub fn validate(&self, source_name: &str) -> Result<(), ConfigError> {
        let invalid = |key, value: String, reason: &str| ConfigError::Invalid {
            key,
            value,
            source_name: source_name.to_owned(),
            reason: reason.to_owned(),
        };
        if self.workers == 0 {
            return Err(invalid(
                "workers",
                "0".into(),
                "at least one worker is needed",
            ));
        }
        // As many workers as a topology may have PUs.
        let max_workers = loka_topology::Topology::MAX_PUS;
        if self.workers > max_workers {
            return Err(invalid(
                "workers",
                self.workers.to_string(),
                &format!("more than {max_workers} workers is not supported"),
            ));
        }
        for (key, us) in [
            ("idle.spin_us", self.idle.spin_us),
            ("idle.yield_us", self.idle.yield_us),
        ] {
            if us > IdleStrategy::MAX_US {
                return Err(invalid(
                    key,
                    us.to_string(),
                    &format!(
                        "at most {} µs (1 s): an idle worker that long without work should sleep",
                        IdleStrategy::MAX_US
                    ),
                ));
            }
        }
        let sample = self.handler_sample_us;
        let (least, most) = (MIN_HANDLER_SAMPLE_US, MAX_HANDLER_SAMPLE_US);
        if sample != 0 && !(least..=most).contains(&sample) {
            return Err(invalid(
                "handler_sample_us",
                sample.to_string(),
                &format!(
                    "0 (off) or {least}..={most} µs: more often, the sampling thread itself \
                     becomes a load; less often than once a second, it learns nothing"
                ),
            ));
        }
        if let Some((key, value, reason)) = self.stall.out_of_range() {
            return Err(invalid(key, value, &reason));
        }
        if !(self.balance_threshold > 0.0 && self.balance_threshold.is_finite()) {
            return Err(invalid(
                "balance_threshold",
                self.balance_threshold.to_string(),
                "the imbalance threshold must be a positive number",
            ));
        }
        if !self.engine.supports(self.policy) {
            return Err(ConfigError::Unsupported {
                engine: self.engine,
                policy: self.policy,
                source_name: source_name.to_owned(),
            });
        }
        if self.exec != crate::exec_policy::ExecMode::AllTask && !self.engine.runs_exec_policies() {
            return Err(invalid(
                "exec",
                self.exec.to_string(),
                &format!(
                    "engine `{}` runs every actor on its workers; execution modes other than \
                     all-task need the actor-centric engine",
                    self.engine
                ),
            ));
        }
        let mc = &self.message_centric;
        // Every queue is allocated at start and passed over by its worker: bounded per worker
        // (`MessageCentricConfig::MAX_QUEUES_PER_WORKER` says why).
        let per_worker = MessageCentricConfig::MAX_QUEUES_PER_WORKER;
        if mc.queues_per_worker == 0 {
            return Err(invalid(
                "message_centric.queues_per_worker",
                "0".into(),
                &format!("each worker needs at least one queue (allowed: 1..={per_worker})"),
            ));
        }
        if mc.queues_per_worker > per_worker {
            return Err(invalid(
                "message_centric.queues_per_worker",
                mc.queues_per_worker.to_string(),
                &format!(
                    "at most {per_worker} queues per worker (allowed: 1..={per_worker}): a \
                     worker passes over all its queues, so more only slow it down"
                ),
            ));
        }
        if let Some(queues) = mc.queues {
            let most = self.workers.saturating_mul(per_worker);
            if queues == 0 {
                return Err(invalid(
                    "message_centric.queues",
                    "0".into(),
                    &format!(
                        "at least one queue per worker is needed (allowed: {}..={most})",
                        self.workers
                    ),
                ));
            }
            if queues < self.workers {
                return Err(invalid(
                    "message_centric.queues",
                    queues.to_string(),
                    &format!(
                        "fewer queues than the {} workers: every worker must own at least one \
                         (allowed: {}..={most})",
                        self.workers, self.workers
                    ),
                ));
            }
            if queues > most {
                return Err(invalid(
                    "message_centric.queues",
                    queues.to_string(),
                    &format!(
                        "more than {per_worker} queues per worker for the {} workers \
                         (allowed: {}..={most}): a worker passes over all its queues, so more \
                         only slow it down",
                        self.workers, self.workers
                    ),
                ));
            }
        }
        if self
            .observe
            .as_ref()
            .is_some_and(|p| p.as_os_str().is_empty())
        {
            return Err(invalid(
                "observe",
                String::new(),
                "the socket path is empty (leave `observe` out for no socket)",
            ));
        }
        if self.throughput == 0 {
            return Err(invalid(
                "throughput",
                "0".into(),
                "an activation must handle at least one message",
            ));
        }
        Ok(())
    }
}

/// The TOML parser's error on one line: where (line, column and the line's text, which names
/// the key) and what, e.g. ``line 2, column 16 (`panic_report = "stderr"`): unknown
/// panic_report `stderr` (known: hook, tracing)``. The parser's own `Display` draws the line and
/// a caret under it over several lines, which an error printed as one line cannot carry.
fn toml_message(text: &str, e: &toml::de::Error) -> String {
    let what = e
        .message()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ");
    let Some(span) = e.span() else {
        return what;
    };
    let before = &text[..span.start.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before[before.rfind('\n').map_or(0, |i| i + 1)..]
        .chars()
        .count()
        + 1;
    let source = text.lines().nth(line - 1).unwrap_or("").trim();
    format!("line {line}, column {column} (`{source}`): {what}")
}

#[cfg(test)]
mod tests;
