//! The `loka` command: inspect the topology, run benchmarks, write reports.

mod args;
mod bench;
mod compare;
mod output;
mod progress;
#[cfg(feature = "remote")]
mod remote;
mod report;
mod sweep;
#[cfg(unix)]
mod top;
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
    /// Live view of a running system, read from its `observe` socket (or one snapshot as JSON).
    #[cfg(unix)]
    Top(top::TopArgs),
}

fn main() {
    let cli = Cli::parse();
    // Feature `trace-activations`: a subscriber only when `RUST_LOG` asks for one (e.g.
    // `RUST_LOG=loka::activation=trace`); without it none is installed and the spans are not built.
    #[cfg(feature = "trace-activations")]
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .init();
    }
    let result = match cli.command {
        Command::Topo(args) => topo::run(args),
        Command::Bench(command) => bench::run(*command),
        Command::Report(args) => report::run(&args),
        #[cfg(unix)]
        Command::Top(args) => top::run(&args),
    };
    if let Err(err) = result {
        // Errors are printed as a cause chain, never with a backtrace.
        eprintln!("error: {err:#}");
        std::process::exit(1);
    }
}
