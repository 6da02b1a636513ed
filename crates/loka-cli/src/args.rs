//! The arguments every running `loka bench` subcommand shares: what to run, where results go,
//! and the system configuration.

use anyhow::Result;
use loka::{Config, EngineKind, PolicyKind};
use loka_bench::{Bench, Size};
use std::path::PathBuf;

/// Where a run's configuration comes from: defaults < `--config` file < `LOKA_*` < flags.
#[derive(clap::Args, Clone)]
pub struct SystemArgs {
    /// Worker threads (default: the machine's parallelism, or the topology's PU count).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Scheduler policy.
    #[arg(long)]
    pub policy: Option<String>,
    /// Engine running the actors: actor-centric (the default), message-centric
    /// (docs/message-centric.md) or sim (docs/simulation.md). `loka bench policies` sweeps every
    /// real engine unless this names one (`sim`: the simulation engine alone).
    #[arg(long, value_name = "NAME")]
    pub engine: Option<String>,
    /// Topology: host, preset:NAME, synthetic:DESC, xml:FILE.
    #[arg(long)]
    pub topology: Option<String>,
    /// Cost matrix file overriding the topology's hierarchical costs.
    #[arg(long)]
    pub cost: Option<PathBuf>,
    /// A TOML configuration file.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Message-centric engine: whom an idle worker steals a queue from (random, longest, none,
    /// nearest).
    #[arg(long, value_name = "NAME")]
    pub victims: Option<String>,
    /// Message-centric engine: total sharded queues (default 16 per worker; at least one and at
    /// most 1024 per worker).
    #[arg(long, value_name = "N")]
    pub queues: Option<usize>,
    /// Message-centric engine: the queue data structure, copy or list.
    #[arg(long, value_name = "KIND")]
    pub queue_kind: Option<String>,
    /// Message-centric engine: whether actors follow the worker that posts to them (true, the
    /// default) or keep the queue they were bound to at spawn (false, Cforall's binding).
    #[arg(long, value_name = "BOOL")]
    pub follow: Option<bool>,
    /// Execution mode: all-task (the default), all-thread or auto (docs/exec-policies.md).
    #[arg(long, value_name = "MODE")]
    pub exec: Option<String>,
    /// What a place is for the `places` policies: package (the default), l3 or numa.
    #[arg(long, value_name = "LEVEL")]
    pub place_level: Option<String>,
    /// Serve each run's snapshots on this Unix socket, for `loka top --socket PATH` in another
    /// terminal (docs/observability.md, "Live view"). Runs are one after another, so is the
    /// socket: it is bound at each run's start and removed at its end.
    #[arg(long, value_name = "PATH")]
    pub observe: Option<PathBuf>,
    /// Handler time per actor: sample what each worker runs every US microseconds (50 to
    /// 1,000,000; 0: off). With `--observe` or `--top` it defaults to 10,000 (the live view lists
    /// the busiest actors); otherwise to the configuration's `handler_sample_us` (0).
    #[arg(long, value_name = "US")]
    pub handler_sample_us: Option<u64>,
}

/// The sampling interval `--observe` and `--top` turn handler time on at, unless told otherwise:
/// 10 ms, 100 samples a second per busy worker. A timed wake-up of the sampling thread costs 20–40
/// µs of CPU on a VM (docs/results/observability.md, "Handler time"): at 1 ms that was 2–4% of a
/// core, at 10 ms it is 0.3–0.5%.
pub const OBSERVED_SAMPLE_US: u64 = 10_000;

impl SystemArgs {
    /// Resolves the configuration, validating it without starting anything.
    pub fn resolve(&self) -> Result<Config> {
        let mut config = match &self.config {
            Some(path) => Config::from_file(path)?,
            None => Config::default(),
        };
        config.apply_env()?;
        if let Some(topology) = &self.topology {
            config.topology = topology.clone();
            // A synthetic or preset machine decides for all its PUs unless told otherwise.
            if self.workers.is_none() && topology != "host" {
                config.workers = loka::topology::Topology::load(&topology.parse()?)?.pu_count();
            }
        }
        if let Some(workers) = self.workers {
            config.workers = workers;
        }
        if let Some(policy) = &self.policy {
            config.policy = policy.parse::<PolicyKind>()?;
        }
        if let Some(engine) = &self.engine {
            config.engine = engine.parse::<EngineKind>()?;
        }
        if let Some(cost) = &self.cost {
            config.cost = Some(cost.clone());
        }
        if let Some(victims) = &self.victims {
            config.message_centric.victims = victims
                .parse::<loka::VictimSelection>()
                .map_err(anyhow::Error::msg)?;
        }
        if let Some(queues) = self.queues {
            config.message_centric.queues = Some(queues);
        }
        if let Some(kind) = &self.queue_kind {
            config.message_centric.queue = kind
                .parse::<loka::QueueKind>()
                .map_err(anyhow::Error::msg)?;
        }
        if let Some(follow) = self.follow {
            config.message_centric.follow = follow;
        }
        if let Some(mode) = &self.exec {
            config.exec = mode.parse::<loka::ExecMode>()?;
        }
        if let Some(level) = &self.place_level {
            config.place_level = level.parse::<loka::topology::PlaceLevel>()?;
        }
        if let Some(path) = &self.observe {
            config.observe = Some(path.clone());
        }
        if let Some(us) = self.handler_sample_us {
            config.handler_sample_us = us;
        }
        self.sample_when_observed(&mut config);
        config.validate("the command line")?;
        loka::Machine::load(&config)?;
        Ok(config)
    }
}

impl SystemArgs {
    /// A system served to `loka top` records handler time: at [`OBSERVED_SAMPLE_US`] unless
    /// `--handler-sample-us` is given (0 keeps it off) or the configuration already samples.
    pub fn sample_when_observed(&self, config: &mut Config) {
        if config.observe.is_some()
            && self.handler_sample_us.is_none()
            && config.handler_sample_us == 0
        {
            config.handler_sample_us = OBSERVED_SAMPLE_US;
        }
    }
}

/// The arguments every running subcommand shares.
#[derive(clap::Args, Clone)]
pub struct CommonArgs {
    /// Benchmark names (see `loka bench list`), or `all`.
    #[arg(required = true)]
    pub names: Vec<String>,
    /// Problem size: quick or full.
    #[arg(long, default_value = "quick")]
    pub size: String,
    /// Print JSON objects instead of table lines.
    #[arg(long)]
    pub json: bool,
    /// Also append each record as a JSON line to this file, written as each run finishes (an
    /// interrupted run keeps the finished ones).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

impl CommonArgs {
    /// The benchmarks and the size, validated.
    pub fn resolve(&self) -> Result<(Vec<Bench>, Size)> {
        Ok((loka_bench::find(&self.names)?, self.size.parse()?))
    }
}

/// Checks a `--repeat` value.
pub fn check_repeat(repeat: usize) -> Result<()> {
    anyhow::ensure!(repeat >= 1, "--repeat must be at least 1, got {repeat}");
    Ok(())
}
