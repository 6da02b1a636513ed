//! `loka bench`: run and list benchmarks.

use anyhow::{Context as _, Result};
use loka::{Config, PolicyKind};
use loka_bench::record::Record;
use loka_bench::{runner, Size};
use std::io::Write;
use std::path::PathBuf;

/// `loka bench` subcommands.
#[derive(clap::Subcommand)]
pub enum BenchCommand {
    /// Run benchmarks and print one line (or JSON object) per run.
    Run(RunArgs),
    /// List the benchmarks.
    List,
}

/// Where a run's configuration comes from: defaults < `--config` file < `LOKA_*` < flags.
#[derive(clap::Args, Clone)]
pub struct SystemArgs {
    /// Worker threads (default: the machine's parallelism, or the topology's PU count).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Scheduler policy.
    #[arg(long)]
    pub policy: Option<String>,
    /// Topology: host, preset:NAME, synthetic:DESC, xml:FILE.
    #[arg(long)]
    pub topology: Option<String>,
    /// Cost matrix file overriding the topology's hierarchical costs.
    #[arg(long)]
    pub cost: Option<PathBuf>,
    /// A TOML configuration file.
    #[arg(long)]
    pub config: Option<PathBuf>,
}

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
        if let Some(cost) = &self.cost {
            config.cost = Some(cost.clone());
        }
        config.validate("the command line")?;
        loka::Machine::load(&config)?;
        Ok(config)
    }
}

/// `loka bench run` arguments.
#[derive(clap::Args)]
pub struct RunArgs {
    /// Benchmark names (see `loka bench list`), or `all`.
    #[arg(required = true)]
    pub names: Vec<String>,
    /// Problem size: quick or full.
    #[arg(long, default_value = "quick")]
    pub size: String,
    /// Runs per benchmark.
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
    /// Print one JSON object per run instead of a table line.
    #[arg(long)]
    pub json: bool,
    /// Also append each record as a JSON line to this file (written as runs finish).
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub system: SystemArgs,
}

/// Runs `loka bench`.
pub fn run(command: BenchCommand) -> Result<()> {
    match command {
        BenchCommand::List => {
            for b in loka_bench::all() {
                println!("{:<12} {:<8} {}", b.name, b.suite, b.about);
            }
            Ok(())
        }
        BenchCommand::Run(args) => run_benches(&args),
    }
}

fn run_benches(args: &RunArgs) -> Result<()> {
    // Validate everything before running anything.
    let benches = loka_bench::find(&args.names)?;
    let size: Size = args.size.parse()?;
    anyhow::ensure!(
        args.repeat >= 1,
        "--repeat must be at least 1, got {}",
        args.repeat
    );
    let config = args.system.resolve()?;
    let mut out = match &args.out {
        Some(path) => Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("cannot open results file {}", path.display()))?,
        ),
        None => None,
    };
    let mut failed = Vec::new();
    for bench in &benches {
        for repeat in 0..args.repeat {
            let record = runner::run_once(bench, size, &config, repeat)?;
            emit(&record, args.json, out.as_mut())?;
            if !record.verified {
                failed.push(format!("{} (run {repeat})", bench.name));
            }
        }
    }
    anyhow::ensure!(
        failed.is_empty(),
        "verification failed: {}",
        failed.join(", ")
    );
    Ok(())
}

/// Prints a record (JSON or a table line) and appends it to the results file.
pub fn emit(record: &Record, json: bool, out: Option<&mut std::fs::File>) -> Result<()> {
    let line = serde_json::to_string(record)?;
    if json {
        println!("{line}");
    } else {
        println!(
            "{:<12} {:<8} {:<10} workers={:<3} {:>12.0} msgs/s {:>9.4} s  {}",
            record.bench,
            record.runtime,
            record.policy,
            record.workers,
            record.msgs_per_sec,
            record.seconds,
            if record.verified {
                "verified"
            } else {
                "NOT VERIFIED"
            }
        );
    }
    if let Some(file) = out {
        writeln!(file, "{line}").context("writing the results file")?;
        file.flush()?;
    }
    Ok(())
}
