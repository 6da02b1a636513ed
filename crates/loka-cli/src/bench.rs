//! `loka bench`: run, compare, sweep and list benchmarks.

use crate::{compare, progress, sweep};
use anyhow::{Context as _, Result};
use indicatif::ProgressBar;
use loka::{Config, EngineKind, PolicyKind};
use loka_bench::record::Record;
use loka_bench::report::record_line;
use loka_bench::{runner, Bench, Size};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `loka bench` subcommands.
#[derive(clap::Subcommand)]
pub enum BenchCommand {
    /// Run benchmarks and print one line (or JSON object) per run.
    Run(RunArgs),
    /// Run loka and the peer runtimes alternately (A B A B) and compare their msgs/s.
    Compare(compare::CompareArgs),
    /// Run benchmarks on 1, 2, … workers up to the machine's processing units.
    Scale(sweep::ScaleArgs),
    /// Run benchmarks under every scheduler policy and engine.
    Policies(sweep::PoliciesArgs),
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
    /// Engine running the actors: actor-centric (the default). `loka bench policies` sweeps
    /// every engine unless this names one.
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
        if let Some(engine) = &self.engine {
            config.engine = engine.parse::<EngineKind>()?;
        }
        if let Some(cost) = &self.cost {
            config.cost = Some(cost.clone());
        }
        config.validate("the command line")?;
        loka::Machine::load(&config)?;
        Ok(config)
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

/// `loka bench run` arguments.
#[derive(clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Runs per benchmark.
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
    #[command(flatten)]
    pub system: SystemArgs,
}

/// Runs `loka bench`.
pub fn run(command: BenchCommand) -> Result<()> {
    match command {
        BenchCommand::List => {
            let mut out = std::io::stdout().lock();
            for b in loka_bench::all() {
                writeln!(out, "{:<22} {:<8} {}", b.name, b.suite, b.about)
                    .context("writing to stdout")?;
            }
            Ok(())
        }
        BenchCommand::Run(args) => run_benches(&args),
        BenchCommand::Compare(args) => compare::run(&args),
        BenchCommand::Scale(args) => sweep::scale(&args),
        BenchCommand::Policies(args) => sweep::policies(&args),
    }
}

/// Checks a `--repeat` value.
pub fn check_repeat(repeat: usize) -> Result<()> {
    anyhow::ensure!(repeat >= 1, "--repeat must be at least 1, got {repeat}");
    Ok(())
}

fn run_benches(args: &RunArgs) -> Result<()> {
    // Validate everything before running anything.
    let (benches, size) = args.common.resolve()?;
    check_repeat(args.repeat)?;
    let config = args.system.resolve()?;
    let mut out = Output::open(&args.common, true)?;
    out.start((benches.len() * args.repeat) as u64, "run");
    let mut failed = Vec::new();
    for bench in &benches {
        for repeat in 0..args.repeat {
            out.progress_message(bench.name);
            let record = runner::run_once(bench, size, &config, repeat)?;
            out.record(&record)?;
            if !record.verified {
                failed.push(format!("{} (run {repeat})", bench.name));
            }
        }
    }
    out.finish();
    anyhow::ensure!(
        failed.is_empty(),
        "verification failed: {}",
        failed.join(", ")
    );
    Ok(())
}

/// Where records go: stdout (a table line or JSON) and the `--out` file, with a progress bar on
/// stderr.
pub struct Output {
    json: bool,
    echo: bool,
    file: Option<(PathBuf, std::fs::File)>,
    command: String,
    bar: ProgressBar,
}

impl Output {
    /// Opens (creates or appends to) the `--out` file. `echo`: print every record on stdout.
    pub fn open(args: &CommonArgs, echo: bool) -> Result<Output> {
        let file = match &args.out {
            Some(path) => Some((path.clone(), open_results(path)?)),
            None => None,
        };
        Ok(Output {
            json: args.json,
            echo,
            file,
            command: invocation(),
            bar: ProgressBar::hidden(),
        })
    }

    /// Whether stdout gets JSON.
    pub fn json(&self) -> bool {
        self.json
    }

    /// Starts the progress bar for `total` runs.
    pub fn start(&mut self, total: u64, prefix: &'static str) {
        self.bar = progress::bar(total, prefix);
    }

    /// Says what runs now, next to the bar.
    pub fn progress_message(&self, message: impl Into<String>) {
        self.bar.set_message(message.into());
    }

    /// Counts `n` steps that ran nothing (skipped or failed runs).
    pub fn advance(&self, n: u64) {
        self.bar.inc(n);
    }

    /// Removes the progress bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    /// One run finished: appends it to the results file, prints it (when echoing) and advances
    /// the bar.
    pub fn record(&mut self, record: &Record) -> Result<()> {
        if let Some((path, file)) = &mut self.file {
            writeln!(file, "{}", record_line(record, Some(&self.command)))
                .and_then(|()| file.flush())
                .with_context(|| format!("writing the results file {}", path.display()))?;
        }
        if self.echo {
            let line = if self.json {
                serde_json::to_string(record)?
            } else {
                table_line(record)
            };
            self.println(&line)?;
        }
        self.bar.inc(1);
        Ok(())
    }

    /// Prints a line on stdout without tearing the progress bar.
    pub fn println(&self, line: &str) -> Result<()> {
        self.bar
            .suspend(|| {
                let mut out = std::io::stdout().lock();
                writeln!(out, "{line}").and_then(|()| out.flush())
            })
            .context("writing to stdout")
    }

    /// Prints a note on stderr without tearing the progress bar.
    pub fn note(&self, line: &str) {
        self.bar.suspend(|| eprintln!("{line}"));
    }
}

/// Opens a results file for appending (creating it and its directory).
pub fn open_results(path: &Path) -> Result<std::fs::File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the directory of {}", path.display()))?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open results file {}", path.display()))
}

/// One run as a table line.
pub fn table_line(record: &Record) -> String {
    format!(
        "{:<22} {:<8} {:<10} workers={:<3} {:>12.0} msgs/s {:>9.4} s  {}",
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
    )
}

/// This command line, as recorded next to its results: `loka` and the arguments, quoted
/// where a shell would need it.
pub fn invocation() -> String {
    let quote = |a: String| {
        if !a.is_empty()
            && a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c))
        {
            a
        } else {
            format!("'{}'", a.replace('\'', r"'\''"))
        }
    };
    std::iter::once("loka".to_owned())
        .chain(std::env::args().skip(1).map(quote))
        .collect::<Vec<_>>()
        .join(" ")
}
