//! `loka bench`: run, compare, sweep and list benchmarks.

use crate::args::{check_repeat, CommonArgs, SystemArgs};
use crate::output::Output;
use crate::{compare, sweep};
use anyhow::{Context as _, Result};
use loka_bench::runner;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

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
    /// loka-remote against raw Zenoh: round trips, one way, pairs, a large message beside small
    /// ones; two processes over 127.0.0.1 (needs the `remote` feature of loka-cli).
    Remote(RemoteArgs),
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
    /// Show the live view (`loka top`) of the runs in this terminal while they run, refreshed
    /// every second; their records are printed when the runs are over. `q` closes the view
    /// (the runs go on). Serves on `--observe PATH` if given, else on a socket in the
    /// temporary directory.
    #[arg(long)]
    pub top: bool,
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
        BenchCommand::Remote(args) => remote(&args),
    }
}

#[cfg(feature = "remote")]
use crate::remote::RemoteArgs;

#[cfg(feature = "remote")]
fn remote(args: &RemoteArgs) -> Result<()> {
    crate::remote::run(args)
}

/// `loka bench remote` arguments, in a build without loka-remote: any are taken, so that the
/// command can say what is missing.
#[cfg(not(feature = "remote"))]
#[derive(clap::Args)]
pub struct RemoteArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    _args: Vec<String>,
}

#[cfg(not(feature = "remote"))]
fn remote(_: &RemoteArgs) -> Result<()> {
    anyhow::bail!(
        "this loka was built without loka-remote (Zenoh); build it with \
         `cargo build --release -p loka-cli --features remote`, or run `make bench-remote`"
    )
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
    let mut config = args.system.resolve()?;
    let mut out = Output::open(&args.common, true)?;
    if !args.top {
        out.start((benches.len() * args.repeat) as u64, "run");
        let (failed, _) = run_all(args, &benches, size, &config, &mut out, None)?;
        out.finish();
        return verified(&failed);
    }
    anyhow::ensure!(
        std::io::stdout().is_terminal(),
        "--top draws the live view on the terminal, and stdout is not one (drop --top, or use --observe PATH and `loka top --socket PATH` elsewhere)"
    );
    let socket = config
        .observe
        .get_or_insert_with(|| {
            std::env::temp_dir().join(format!("loka-bench-top-{}.sock", std::process::id()))
        })
        .clone();
    args.system.sample_when_observed(&mut config);
    // The records wait until the view has given the terminal back.
    out.set_echo(false);
    let label = Arc::new(Mutex::new(String::from("starting")));
    let done = AtomicBool::new(false);
    let (runs, view) = std::thread::scope(|s| {
        let runner = s.spawn(|| {
            let runs = run_all(args, &benches, size, &config, &mut out, Some(&label));
            done.store(true, SeqCst);
            (runs, out)
        });
        let view = crate::top::watch_runs(&socket, 1000, Arc::clone(&label), &done);
        if view.is_ok() && !done.load(SeqCst) {
            eprintln!("loka top closed; the runs go on and their records follow when they end");
        }
        let (runs, out) = runner
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (runs.map(|failed| (failed, out)), view)
    });
    let ((failed, records), out) = runs?;
    for record in &records {
        out.print(record)?;
    }
    view?;
    verified(&failed)
}

/// Runs every benchmark `args.repeat` times, recording each run in `out`; with `label`, names
/// the run under way there and keeps the records to print later (for `--top`). Returns the
/// runs that failed their check, and the records kept.
fn run_all(
    args: &RunArgs,
    benches: &[loka_bench::Bench],
    size: loka_bench::Size,
    config: &loka::Config,
    out: &mut Output,
    label: Option<&Mutex<String>>,
) -> Result<(Vec<String>, Vec<loka_bench::record::Record>)> {
    let mut failed = Vec::new();
    let mut kept = Vec::new();
    for bench in benches {
        for repeat in 0..args.repeat {
            out.progress_message(bench.name);
            if let Some(label) = label {
                *label.lock().unwrap_or_else(|e| e.into_inner()) =
                    format!("{} (run {} of {})", bench.name, repeat + 1, args.repeat);
            }
            let mut run = loka_bench::Run::new(size);
            if let Some(timeout) = args.timeout {
                run = run.with_timeout(std::time::Duration::from_secs(timeout));
            }
            let record = runner::run_once_as(bench, run, config, repeat)?;
            out.record(&record)?;
            if label.is_some() {
                kept.push(record.clone());
            }
            if !record.verified {
                // The check's own words: a rare failure (in CI, say) is diagnosable from its log.
                let check = record.telemetry["check"]
                    .as_str()
                    .unwrap_or("no check recorded");
                failed.push(format!("{} (run {repeat}: {check})", bench.name));
            }
        }
    }
    Ok((failed, kept))
}

/// `Ok` if every run verified, else the error naming the ones that did not.
fn verified(failed: &[String]) -> Result<()> {
    anyhow::ensure!(
        failed.is_empty(),
        "verification failed: {}",
        failed.join(", ")
    );
    Ok(())
}
