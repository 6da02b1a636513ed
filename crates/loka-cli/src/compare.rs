//! `loka bench compare`: loka and the peer runtimes (`peers/`) on the same workloads,
//! alternating A B A B, with medians, min–max and loka/peer ratios. This file finds and runs the
//! peers; `compare/summary.rs` turns the repetitions into medians, ratios and table lines.

mod summary;
pub use summary::*;

use crate::args::{check_repeat, CommonArgs, SystemArgs};
use crate::output::Output;
use anyhow::Result;
use loka_bench::record::Record;
use loka_bench::report::NOISY_NOTE;
use loka_bench::{runner, Size};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Every peer runtime `peers/` builds (docs/internals/benchmarks.md, peers/README.md).
pub const PEERS: &[&str] = &[
    "actix",
    "actix-1thread",
    "ractor",
    "kameo",
    "tokio",
    "tokio-current-thread",
    "caf",
];

/// The peers whose handlers are async by construction (an `async fn` or an awaiting task loop per
/// message: kameo, ractor, the tokio programs): the only ones loka's async-handler benchmarks
/// (`async-pingpong`, `async-counting`) are compared with. actix's and CAF's handlers are sync, so
/// loka's sync benchmarks already compare with them.
pub const ASYNC_PEERS: &[&str] = &["ractor", "kameo", "tokio", "tokio-current-thread"];

/// The workload `peer` is asked to run as the counterpart of loka's benchmark `bench`: the same
/// name, except for loka's async-handler benchmarks, which the async peers run under their sync
/// workload's name (`loka_bench::async_handlers::peer_workload`); `None`: the peer has none.
pub fn peer_bench<'a>(peer: &str, bench: &'a str) -> Option<&'a str> {
    match loka_bench::async_handlers::peer_workload(bench) {
        Some(workload) => ASYNC_PEERS.contains(&peer).then_some(workload),
        None if bench.starts_with("async-") => None,
        None => Some(bench),
    }
}

/// `loka bench compare` arguments.
#[derive(clap::Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Repetitions per benchmark and runtime; runtimes alternate within each repetition.
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    /// Peer runtimes, comma-separated: actix, actix-1thread, ractor, kameo, tokio,
    /// tokio-current-thread, caf, `all` (the default) or `none`.
    #[arg(long, value_delimiter = ',')]
    pub peers: Option<Vec<String>>,
    /// The directory with run-peers.sh and the peers' builds (default: ./peers, else the
    /// peers/ directory of the checkout the loka binary was built in).
    #[arg(long)]
    pub peers_dir: Option<PathBuf>,
    /// Seconds one peer run may take before it is stopped and counted as failed.
    #[arg(long, default_value_t = 300)]
    pub timeout: u64,
    /// A time cap for each peer on each benchmark. A peer run still going after SECS seconds is
    /// stopped as too slow (not a failure, no figure; it counts as slower than every finished
    /// run, and the median is shown while fewer than half the runs were stopped, `too slow (>
    /// SECS s)` otherwise), and no repetition is started that the runs before it say would end
    /// past SECS seconds in all: the table shows the runs made. docs/guide.md, "Command line".
    /// Default: no cap.
    #[arg(long, value_name = "SECS")]
    pub peer_cap: Option<u64>,
    /// loka's configuration; the peers get as many threads as loka has workers.
    #[command(flatten)]
    pub system: SystemArgs,
}

/// Checks peer names: `all` (every peer), `none`, or known names; duplicates are dropped.
pub fn validate_peers(names: Option<&[String]>) -> Result<Vec<String>> {
    let Some(names) = names else {
        return Ok(PEERS.iter().map(|p| p.to_string()).collect());
    };
    let mut out: Vec<String> = Vec::new();
    for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let expanded: Vec<&str> = match name {
            "all" => PEERS.to_vec(),
            "none" => Vec::new(),
            _ if PEERS.contains(&name) => vec![name],
            _ => anyhow::bail!(
                "unknown peer runtime `{name}` (known: {}, or `all`, `none`)",
                PEERS.join(", ")
            ),
        };
        for p in expanded {
            if !out.iter().any(|o| o == p) {
                out.push(p.to_owned());
            }
        }
    }
    Ok(out)
}

/// A peer ready to run.
#[derive(Debug, Clone)]
pub struct Peer {
    /// Its runtime name.
    pub name: String,
    /// Its binary.
    pub binary: PathBuf,
    /// `--threads`.
    pub threads: usize,
}

/// The peers directory: the one given, `./peers`, or the one next to the loka binary's
/// `target/` directory; it must hold `run-peers.sh`.
fn peers_dir(explicit: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(dir) = explicit {
        return if dir.join("run-peers.sh").is_file() {
            Ok(dir.to_owned())
        } else {
            Err(format!(
                "{} has no run-peers.sh (--peers-dir must be the peers/ directory of the loka \
                 repository)",
                dir.display()
            ))
        };
    }
    let mut candidates = vec![PathBuf::from("peers")];
    if let Ok(exe) = std::env::current_exe() {
        // target/release/loka → the checkout's peers/.
        candidates.extend(exe.ancestors().skip(1).map(|a| a.join("peers")));
    }
    candidates
        .into_iter()
        .find(|d| d.join("run-peers.sh").is_file())
        .ok_or_else(|| {
            "peers/run-peers.sh not found (looked in ./peers and above the loka binary); run \
             from the loka checkout, or pass --peers-dir DIR"
                .to_owned()
        })
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// Whether peer `name` takes part at `workers` threads in a sweep over worker counts
/// (`scale --peers`): `actix` from 2 threads (on one it is `actix-1thread`), `actix-1thread` and
/// `tokio-current-thread` on one only (one thread by construction), every other peer at any count.
pub fn runs_at(name: &str, workers: usize) -> bool {
    match name {
        "actix" => workers >= 2,
        "actix-1thread" | "tokio-current-thread" => workers == 1,
        _ => true,
    }
}

/// Finds a peer's binary, or says what is missing and how to build it.
pub fn locate(name: &str, dir: &Path, workers: usize) -> Result<Peer, String> {
    let (binary, threads) = match name {
        "caf" => (dir.join("caf/build/peer-caf"), workers),
        "actix-1thread" => (dir.join("rust/target/release/peer-actix"), 1),
        // One thread by construction: the binary refuses any other `--threads`.
        "tokio-current-thread" => (dir.join("rust/target/release/peer-tokio-current-thread"), 1),
        _ => (
            dir.join(format!("rust/target/release/peer-{name}")),
            workers,
        ),
    };
    if binary.is_file() {
        return Ok(Peer {
            name: name.to_owned(),
            binary,
            threads,
        });
    }
    let how = if name == "caf" {
        let mut missing = Vec::new();
        if !on_path("cmake") {
            missing.push("cmake");
        }
        if !on_path("c++") && !on_path("g++") {
            missing.push("g++");
        }
        if !Path::new("/usr/include/caf/all.hpp").is_file() {
            missing.push("libcaf-dev");
        }
        let build = format!(
            "`make peers` (or `cmake -S {0}/caf -B {0}/caf/build -DCMAKE_BUILD_TYPE=Release && \
             cmake --build {0}/caf/build`)",
            dir.display()
        );
        if missing.is_empty() {
            format!("build it with {build}")
        } else {
            format!(
                "install the toolchain with `apt-get install {}`, then {build}",
                missing.join(" ")
            )
        }
    } else {
        let build = format!(
            "`make peers` (or `cd {}/rust && cargo build --release`)",
            dir.display()
        );
        if on_path("cargo") {
            format!("build it with {build}")
        } else {
            format!("install Rust from https://rustup.rs (cargo is not on PATH), then {build}")
        }
    };
    Err(format!("{} is not built; {how}", binary.display()))
}

/// What one peer run gave.
#[derive(Debug)]
pub enum PeerOutcome {
    /// A record (verified or not); `Some(problem)` when the process still failed.
    Ran(Box<Record>, Option<String>),
    /// The peer does not implement this benchmark.
    Unsupported,
    /// No record: the process could not start, crashed, or ran out of time.
    Failed(String),
    /// Stopped at the cap (`--peer-cap`) before it finished: slower than that.
    Stopped(Duration),
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(3)..].join(" / ")
}

/// Runs one benchmark once on a peer (a subprocess) and reads its JSON record. The process is
/// stopped after `cap` (when shorter than `timeout`: [`PeerOutcome::Stopped`]) or `timeout` (a
/// failure).
pub fn run_peer(
    peer: &Peer,
    bench: &str,
    size: Size,
    timeout: Duration,
    cap: Option<Duration>,
) -> PeerOutcome {
    let Some(asked) = peer_bench(&peer.name, bench) else {
        return PeerOutcome::Unsupported;
    };
    let spawn = || {
        Command::new(&peer.binary)
            .args(["--bench", asked, "--size", &size.to_string()])
            .args(["--threads", &peer.threads.to_string(), "--repeat", "1"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
    };
    // A binary written a moment ago ("text file busy") may still be open for writing in a child
    // that another thread of this process forked and that has not exec'd yet; the exec closes
    // it, so a short wait is enough (a CI run saw it with a test's peer script).
    let mut busy = 0;
    let mut child = loop {
        match spawn() {
            Ok(child) => break child,
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && busy < 100 => {
                busy += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => {
                return PeerOutcome::Failed(format!("cannot start {}: {e}", peer.binary.display()))
            }
        }
    };
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_string(&mut text);
            }
            text
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let cap = cap.filter(|c| *c < timeout);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if cap.is_some_and(|c| start.elapsed() >= c) => {
                let _ = child.kill();
                let _ = child.wait();
                // The pipes close with the process: the readers end.
                let _ = (stdout.join(), stderr.join());
                return PeerOutcome::Stopped(cap.unwrap_or(timeout));
            }
            Ok(None) if start.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break Err(format!("stopped after {} s (--timeout)", timeout.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => break Err(format!("waiting for it: {e}")),
        }
    };
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    let status = match status {
        Ok(status) => status,
        Err(e) => return PeerOutcome::Failed(e),
    };
    if status.code() == Some(2) && stderr.contains("unknown bench") {
        return PeerOutcome::Unsupported;
    }
    let record = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Record>(l.trim()).ok())
        .find(|r| r.bench == asked);
    match record {
        Some(mut record) => {
            record.runtime = peer.name.clone();
            if asked != bench {
                // Filed under loka's benchmark, saying what the peer ran.
                record.bench = bench.to_owned();
                record.telemetry["peer_workload"] = asked.into();
            }
            // Peers print no execution mode: their framework schedules.
            record.exec = loka_bench::record::PEER_EXEC.to_owned();
            let problem = (!status.success() && record.verified)
                .then(|| format!("exited with {status}: {}", tail(&stderr)));
            PeerOutcome::Ran(Box::new(record), problem)
        }
        None => PeerOutcome::Failed(format!(
            "exited with {status} without a result record{}",
            match tail(&stderr) {
                t if t.is_empty() => String::new(),
                t => format!(": {t}"),
            }
        )),
    }
}

/// Whether another repetition of a peer on a benchmark fits the cap (`--peer-cap`): the wall
/// time its runs so far took (`spent`) plus the longest of them (what the next may take) stays
/// within `cap`. Always true without a cap. A run that goes past the cap anyway is stopped, so
/// a peer spends less than twice the cap on one benchmark.
pub fn next_run_fits(cap: Option<Duration>, spent: Duration, longest: Duration) -> bool {
    cap.is_none_or(|c| spent + longest <= c)
}

/// The record of a peer run stopped at the cap: no measurement ([`Record::stopped_after`]).
pub fn stopped_record(peer: &Peer, bench: &str, size: Size, engine: &str, cap: Duration) -> Record {
    Record {
        runtime: peer.name.clone(),
        bench: bench.to_owned(),
        engine: engine.to_owned(),
        policy: "default".to_owned(),
        exec: loka_bench::record::PEER_EXEC.to_owned(),
        topology: "host".to_owned(),
        workers: peer.threads,
        size: size.to_string(),
        messages: 0,
        seconds: 0.0,
        msgs_per_sec: 0.0,
        verified: false,
        telemetry: serde_json::json!({}),
        repeat: 0,
        virtual_seconds: None,
        host_seconds: None,
        stopped_after: Some(cap.as_secs_f64()),
    }
}

/// The peers of `names` that can run on `workers` threads, located in `dir` (else found as
/// [`peers_dir`] does); a note for each that cannot (toolchain or build missing).
pub fn find_peers(names: &[String], dir: Option<&Path>, workers: usize, out: &Output) -> Vec<Peer> {
    let mut peers = Vec::new();
    if !names.is_empty() {
        match peers_dir(dir) {
            Ok(dir) => {
                for name in names {
                    match locate(name, &dir, workers) {
                        Ok(peer) => peers.push(peer),
                        Err(how) => out.note(&format!(
                            "note: peer toolchain/script missing for `{name}`: {how}; going on \
                             without it"
                        )),
                    }
                }
            }
            Err(how) => out.note(&format!(
                "note: peer toolchain/script missing: {how}; going on with loka alone"
            )),
        }
    }
    peers
}

/// loka and the peers on the same benchmarks under one configuration, alternating A B A B
/// within each repetition: what `compare` runs once and `scale --peers` at every worker count.
pub struct SideBySide<'a> {
    /// The problem size.
    pub size: Size,
    /// loka's configuration.
    pub config: &'a loka::Config,
    /// The peers, each with its thread count.
    pub peers: &'a [Peer],
    /// Repetitions per benchmark and runtime.
    pub repeat: usize,
    /// A peer run still going after this fails.
    pub timeout: Duration,
    /// A peer run still going after this is stopped as too slow (`--peer-cap`).
    pub cap: Option<Duration>,
}

impl SideBySide<'_> {
    /// Runs every benchmark, prints the table (or JSON lines), and returns loka's records per
    /// benchmark and the runs that failed (the other results are kept).
    pub fn run(
        &self,
        out: &mut Output,
        benches: &[loka_bench::Bench],
    ) -> Result<(Vec<Vec<Record>>, Vec<String>)> {
        let (size, config, peers, timeout, cap) =
            (self.size, self.config, self.peers, self.timeout, self.cap);
        let repeat_count = self.repeat;
        let mut loka_runs = Vec::new();
        // Each peer's `engine` as its records give it, for the records of stopped runs.
        let mut engines: Vec<Option<String>> = vec![None; peers.len()];
        let per_bench = (repeat_count * (1 + peers.len())) as u64;
        out.start(benches.len() as u64 * per_bench, "compare");
        if !out.json() {
            out.println(&table_header())?;
        }
        let mut failures: Vec<String> = Vec::new();
        let mut missing: Vec<Vec<&str>> = vec![Vec::new(); peers.len()];
        for bench in benches {
            let mut runs: Vec<(String, Vec<Record>)> = std::iter::once("loka".to_owned())
                .chain(peers.iter().map(|p| p.name.clone()))
                .map(|name| (name, Vec::new()))
                .collect();
            let mut unsupported = vec![false; peers.len()];
            // Per peer on this benchmark, under `--peer-cap`: whether its repetitions are over (a
            // run was stopped, or the next would end past the cap), the wall time its runs took,
            // and the longest of them.
            let mut capped = vec![false; peers.len()];
            let mut spent = vec![Duration::ZERO; peers.len()];
            let mut longest = vec![Duration::ZERO; peers.len()];
            for repeat in 0..repeat_count {
                out.progress_message(format!("{} loka", bench.name));
                let record = runner::run_once(bench, size, config, repeat)?;
                if !record.verified {
                    failures.push(format!(
                        "{} on loka, run {repeat}: not verified",
                        bench.name
                    ));
                }
                out.record(&record)?;
                runs[0].1.push(record);
                for (i, peer) in peers.iter().enumerate() {
                    if unsupported[i] || capped[i] {
                        continue;
                    }
                    if !next_run_fits(cap, spent[i], longest[i]) {
                        let left = repeat_count - repeat;
                        out.note(&format!(
                                "note: {} on {}: {repeat} run(s) took {:.1} s, the longest {:.1} s; the \
                                 next would end past the {} s cap (--peer-cap): its other {left} run(s) \
                                 of this benchmark are skipped",
                                bench.name,
                                peer.name,
                                spent[i].as_secs_f64(),
                                longest[i].as_secs_f64(),
                                cap.unwrap_or_default().as_secs()
                            ));
                        capped[i] = true;
                        out.advance(left as u64);
                        continue;
                    }
                    out.progress_message(format!("{} {}", bench.name, peer.name));
                    let started = Instant::now();
                    let outcome = run_peer(peer, bench.name, size, timeout, cap);
                    spent[i] += started.elapsed();
                    longest[i] = longest[i].max(started.elapsed());
                    match outcome {
                        PeerOutcome::Ran(mut record, problem) => {
                            record.repeat = repeat;
                            engines[i].get_or_insert_with(|| record.engine.clone());
                            if !record.verified {
                                failures.push(format!(
                                    "{} on {}, run {repeat}: not verified",
                                    bench.name, peer.name
                                ));
                            }
                            if let Some(problem) = problem {
                                failures.push(format!(
                                    "{} on {}, run {repeat}: {problem}",
                                    bench.name, peer.name
                                ));
                            }
                            out.record(&record)?;
                            runs[i + 1].1.push(*record);
                        }
                        PeerOutcome::Unsupported => {
                            // Said once at the end, for all benchmarks together.
                            unsupported[i] = true;
                            missing[i].push(bench.name);
                            out.advance((repeat_count - repeat) as u64);
                        }
                        PeerOutcome::Stopped(after) => {
                            let engine = engines[i].as_deref().unwrap_or("unknown");
                            let mut record = stopped_record(peer, bench.name, size, engine, after);
                            record.repeat = repeat;
                            let left = repeat_count - repeat - 1;
                            out.note(&format!(
                                    "note: {} on {}, run {repeat}: stopped after {} s (--peer-cap): too \
                                     slow{}",
                                    bench.name,
                                    peer.name,
                                    after.as_secs(),
                                    if left > 0 {
                                        format!("; its other {left} run(s) of this benchmark are skipped")
                                    } else {
                                        String::new()
                                    }
                                ));
                            out.record(&record)?;
                            runs[i + 1].1.push(record);
                            capped[i] = true;
                            out.advance(left as u64);
                        }
                        PeerOutcome::Failed(text) => {
                            let text =
                                format!("{} on {}, run {repeat}: {text}", bench.name, peer.name);
                            out.note(&format!("error: {text}"));
                            failures.push(text);
                            out.advance(1);
                        }
                    }
                }
            }
            let summaries: Vec<RuntimeSummary> = runs
                .iter()
                .filter_map(|(name, records)| summarize(name, records))
                .collect();
            let loka = summaries.iter().find(|s| s.runtime == "loka");
            for s in &summaries {
                let r = loka.and_then(|l| loka_over(l, s));
                let line = if out.json() {
                    summary_json(s, r).to_string()
                } else {
                    table_row(bench.name, s, r)
                };
                out.println(&line)?;
            }
            loka_runs.push(std::mem::take(&mut runs[0].1));
        }
        out.finish();
        if !out.json() {
            out.println(NOISY_NOTE)?;
        }
        for (peer, benches) in peers.iter().zip(&missing) {
            if !benches.is_empty() {
                out.note(&format!(
                    "note: {} does not implement {} (loka alone there)",
                    peer.name,
                    benches.join(", ")
                ));
            }
        }
        Ok((loka_runs, failures))
    }
}

/// Runs `loka bench compare`.
pub fn run(args: &CompareArgs) -> Result<()> {
    // Validate everything before running anything.
    let (benches, size) = args.common.resolve()?;
    check_repeat(args.repeat)?;
    let names = validate_peers(args.peers.as_deref())?;
    anyhow::ensure!(args.timeout >= 1, "--timeout must be at least 1 second");
    anyhow::ensure!(
        args.peer_cap != Some(0),
        "--peer-cap must be at least 1 second"
    );
    let config = args.system.resolve()?;
    let mut out = Output::open(&args.common, false)?;

    let peers = find_peers(&names, args.peers_dir.as_deref(), config.workers, &out);
    let timeout = Duration::from_secs(args.timeout);
    let cap = args.peer_cap.map(Duration::from_secs);
    let side_by_side = SideBySide {
        size,
        config: &config,
        peers: &peers,
        repeat: args.repeat,
        timeout,
        cap,
    };
    let (_, failures) = side_by_side.run(&mut out, &benches)?;
    if !failures.is_empty() {
        anyhow::bail!(
            "{} run(s) failed (the other results are kept):\n  {}",
            failures.len(),
            failures.join("\n  ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests;
