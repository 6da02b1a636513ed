//! `loka bench`: run, compare, sweep and list benchmarks.

use crate::args::{check_repeat, CommonArgs, SystemArgs};
use crate::output::Output;
use crate::{compare, sweep};
use anyhow::{Context as _, Result};
use loka_bench::runner;
use std::io::Write;

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

/// `loka bench run` arguments.
#[derive(clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Runs per benchmark.
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
    /// Seconds a run may take before it counts as failed (default 60 quick, 600 full; under
    /// `--engine sim`, seconds of the process's CPU time). At least 1; a count too large for the
    /// clock (up to 18446744073709551615) means no limit.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,
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

fn run_benches(args: &RunArgs) -> Result<()> {
    // Validate everything before running anything.
    let (benches, size) = args.common.resolve()?;
    check_repeat(args.repeat)?;
    if let Some(timeout) = args.timeout {
        anyhow::ensure!(
            timeout >= 1,
            "--timeout must be at least 1 second, got {timeout}"
        );
    }
    let config = args.system.resolve()?;
    let mut out = Output::open(&args.common, true)?;
    out.start((benches.len() * args.repeat) as u64, "run");
    let mut failed = Vec::new();
    for bench in &benches {
        for repeat in 0..args.repeat {
            out.progress_message(bench.name);
            let mut run = loka_bench::Run::new(size);
            if let Some(timeout) = args.timeout {
                run = run.with_timeout(std::time::Duration::from_secs(timeout));
            }
            let record = runner::run_once_as(bench, run, &config, repeat)?;
            out.record(&record)?;
            if !record.verified {
                // The check's own words: a rare failure (in CI, say) is diagnosable from its log.
                let check = record.telemetry["check"]
                    .as_str()
                    .unwrap_or("no check recorded");
                failed.push(format!("{} (run {repeat}: {check})", bench.name));
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
