//! The `loka` command: inspect the topology, run benchmarks, write reports.

mod args;
mod bench;
mod compare;
mod output;
mod progress;
mod report;
mod sweep;
mod topo;

use clap::{Parser, Subcommand};

/// loka: an actor runtime that knows the machine it runs on.
#[derive(Parser)]
#[command(name = "loka", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show the machine model: tree, distances, worker groups, node order, places.
    Topo(topo::TopoArgs),
    /// Run and list benchmarks.
    #[command(subcommand)]
    Bench(Box<bench::BenchCommand>),
    /// Turn result files (JSON lines) into report/index.md with tables and SVG charts.
    Report(report::ReportArgs),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Topo(args) => topo::run(args),
        Command::Bench(command) => bench::run(*command),
        Command::Report(args) => report::run(&args),
    };
    if let Err(err) = result {
        // Errors are printed as a cause chain, never with a backtrace.
        eprintln!("error: {err:#}");
        std::process::exit(1);
    }
}
