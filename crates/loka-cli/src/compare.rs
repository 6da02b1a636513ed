//! `loka bench compare`: loka and the peer runtimes (`peers/`) on the same workloads,
//! alternating A B A B, with medians, min–max and loka/peer ratios.

use crate::args::{check_repeat, CommonArgs, SystemArgs};
use crate::output::Output;
use anyhow::Result;
use loka_bench::record::Record;
use loka_bench::report::charts::human;
use loka_bench::report::{censored_median, median_index, ratio, Summary, NOISY_NOTE};
use loka_bench::{runner, Size};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Every peer runtime `peers/` builds (docs/benchmarks.md, peers/README.md).
pub const PEERS: &[&str] = &["actix", "actix-1thread", "ractor", "kameo", "caf"];

/// `loka bench compare` arguments.
#[derive(clap::Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Repetitions per benchmark and runtime; runtimes alternate within each repetition.
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    /// Peer runtimes, comma-separated: actix, actix-1thread, ractor, kameo, caf, `all`
    /// (the default) or `none`.
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

/// Finds a peer's binary, or says what is missing and how to build it.
pub fn locate(name: &str, dir: &Path, workers: usize) -> Result<Peer, String> {
    let (binary, threads) = match name {
        "caf" => (dir.join("caf/build/peer-caf"), workers),
        "actix-1thread" => (dir.join("rust/target/release/peer-actix"), 1),
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
    let mut child = match Command::new(&peer.binary)
        .args(["--bench", bench, "--size", &size.to_string()])
        .args(["--threads", &peer.threads.to_string(), "--repeat", "1"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            return PeerOutcome::Failed(format!("cannot start {}: {e}", peer.binary.display()))
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
        .find(|r| r.bench == bench);
    match record {
        Some(mut record) => {
            record.runtime = peer.name.clone();
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

/// The repetitions of one runtime on one benchmark.
#[derive(Debug, Clone)]
pub struct RuntimeSummary {
    /// The runtime.
    pub runtime: String,
    /// msgs/s over the finished repetitions (`n` = 0 when every run was stopped).
    pub msgs: Summary,
    /// The median msgs/s over every repetition, a stopped run counting as slower than every
    /// finished one ([`censored_median`]); `None` when at least half were stopped: too slow to
    /// tell. Without stopped runs, `msgs.median`.
    pub median: Option<f64>,
    /// Median seconds of the finished runs (NaN when none finished).
    pub seconds_median: f64,
    /// Verified runs.
    pub verified: usize,
    /// Runs stopped at the cap (`--peer-cap`).
    pub stopped: usize,
    /// The cap they were stopped at, in seconds.
    pub stopped_after: Option<f64>,
    /// The finished run closest to the median msgs/s, else a stopped one (its record's keys go
    /// into `--json` output).
    pub representative: Record,
}

/// Summarises one runtime's runs of one benchmark, the records of stopped runs
/// ([`Record::stopped_after`]) included; `None` without runs.
pub fn summarize(runtime: &str, records: &[Record]) -> Option<RuntimeSummary> {
    let (stopped, finished): (Vec<&Record>, Vec<&Record>) =
        records.iter().partition(|r| r.stopped_after.is_some());
    let msgs: Vec<f64> = finished.iter().map(|r| r.msgs_per_sec).collect();
    let secs: Vec<f64> = finished.iter().map(|r| r.seconds).collect();
    let representative = match median_index(&msgs) {
        Some(i) => finished[i].clone(),
        None => (*stopped.first()?).clone(),
    };
    Some(RuntimeSummary {
        runtime: runtime.to_owned(),
        msgs: Summary::of(&msgs).unwrap_or(Summary {
            n: 0,
            median: f64::NAN,
            min: f64::NAN,
            max: f64::NAN,
        }),
        median: censored_median(&msgs, stopped.len()),
        seconds_median: Summary::of(&secs).map_or(f64::NAN, |s| s.median),
        verified: finished.iter().filter(|r| r.verified).count(),
        stopped: stopped.len(),
        stopped_after: stopped
            .iter()
            .filter_map(|r| r.stopped_after)
            .reduce(f64::min),
        representative,
    })
}

/// loka's median msgs/s over the other runtime's (above 1: loka is faster); `None` when either
/// median is unknown (a runtime too slow for the cap).
pub fn loka_over(loka: &RuntimeSummary, other: &RuntimeSummary) -> Option<f64> {
    ratio(loka.median?, other.median?)
}

/// The `--json` record of a summary: the keys of `loka bench run --json` (from the median
/// run) plus `msgs_per_sec_median`, `msgs_per_sec_min`, `msgs_per_sec_max`,
/// `seconds_median`, `runs`, `verified_runs` and `loka_over_runtime`; with runs stopped at the
/// cap also `stopped_runs` and `stopped_after` (`msgs_per_sec_median` is null when too slow to
/// tell; min and max are those of the finished runs).
pub fn summary_json(s: &RuntimeSummary, loka_ratio: Option<f64>) -> serde_json::Value {
    let mut value = serde_json::to_value(&s.representative).unwrap_or_default();
    if let serde_json::Value::Object(map) = &mut value {
        let finite = |v: f64| v.is_finite().then_some(v);
        map.insert(
            "verified".into(),
            (s.stopped == 0 && s.verified == s.msgs.n).into(),
        );
        map.insert("msgs_per_sec_median".into(), s.median.into());
        map.insert("msgs_per_sec_min".into(), finite(s.msgs.min).into());
        map.insert("msgs_per_sec_max".into(), finite(s.msgs.max).into());
        map.insert("seconds_median".into(), finite(s.seconds_median).into());
        map.insert("runs".into(), (s.msgs.n + s.stopped).into());
        map.insert("verified_runs".into(), s.verified.into());
        map.insert("loka_over_runtime".into(), loka_ratio.into());
        map.insert("msgs_per_sec_spread".into(), s.msgs.spread().into());
        map.insert("noisy".into(), s.msgs.noisy().into());
        if s.stopped > 0 {
            map.insert("stopped_runs".into(), s.stopped.into());
            map.insert("stopped_after".into(), s.stopped_after.into());
        } else {
            map.remove("stopped_after");
        }
    }
    value
}

/// The table's header line.
pub fn table_header() -> String {
    format!(
        "{:<22} {:<14} {:>4} {:>13} {:>21} {:>12}",
        "bench", "runtime", "runs", "median msgs/s", "min–max msgs/s", "loka/runtime"
    )
}

/// One table line; runs stopped at the cap are named after it, and a runtime too slow to tell
/// shows `too slow` for its median.
pub fn table_row(bench: &str, s: &RuntimeSummary, loka_ratio: Option<f64>) -> String {
    let ratio = match (s.runtime.as_str(), loka_ratio) {
        ("loka", _) => "—".to_owned(),
        (_, Some(r)) => format!("{r:.2}×"),
        (_, None) => "n/a".to_owned(),
    };
    let median = match s.median {
        Some(m) => format!("{}{}", human(m), s.msgs.flag_aligned()),
        None => "too slow  ".to_owned(),
    };
    let range = match s.msgs.n {
        0 => "—".to_owned(),
        1 => human(s.msgs.min),
        _ => format!("{} – {}", human(s.msgs.min), human(s.msgs.max)),
    };
    let mut line = format!(
        "{:<22} {:<14} {:>4} {:>13} {:>21} {:>12}",
        bench,
        s.runtime,
        s.msgs.n + s.stopped,
        median,
        range,
        ratio
    );
    if s.verified < s.msgs.n {
        line.push_str(&format!("  NOT VERIFIED ({}/{})", s.verified, s.msgs.n));
    }
    if s.stopped > 0 {
        let cap = s.stopped_after.unwrap_or(f64::NAN);
        line.push_str(&format!(
            "  {} of {} run(s) stopped after {cap} s (--peer-cap){}",
            s.stopped,
            s.msgs.n + s.stopped,
            if s.median.is_none() {
                format!(": too slow (> {cap} s)")
            } else {
                String::new()
            }
        ));
    }
    line
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

    let mut peers = Vec::new();
    if !names.is_empty() {
        match peers_dir(args.peers_dir.as_deref()) {
            Ok(dir) => {
                for name in &names {
                    match locate(name, &dir, config.workers) {
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
    let timeout = Duration::from_secs(args.timeout);
    let cap = args.peer_cap.map(Duration::from_secs);
    // Each peer's `engine` as its records give it, for the records of stopped runs.
    let mut engines: Vec<Option<String>> = vec![None; peers.len()];
    let per_bench = (args.repeat * (1 + peers.len())) as u64;
    out.start(benches.len() as u64 * per_bench, "compare");
    if !out.json() {
        out.println(&table_header())?;
    }
    let mut failures: Vec<String> = Vec::new();
    let mut missing: Vec<Vec<&str>> = vec![Vec::new(); peers.len()];
    for bench in &benches {
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
        for repeat in 0..args.repeat {
            out.progress_message(format!("{} loka", bench.name));
            let record = runner::run_once(bench, size, &config, repeat)?;
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
                    let left = args.repeat - repeat;
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
                        out.advance((args.repeat - repeat) as u64);
                    }
                    PeerOutcome::Stopped(after) => {
                        let engine = engines[i].as_deref().unwrap_or("unknown");
                        let mut record = stopped_record(peer, bench.name, size, engine, after);
                        record.repeat = repeat;
                        let left = args.repeat - repeat - 1;
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
                        let text = format!("{} on {}, run {repeat}: {text}", bench.name, peer.name);
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
mod tests {
    use super::*;

    fn record(runtime: &str, msgs: f64, verified: bool) -> Record {
        Record {
            runtime: runtime.into(),
            bench: "pingpong".into(),
            engine: "e".into(),
            policy: "p".into(),
            exec: "all-task".into(),
            topology: "host".into(),
            workers: 2,
            size: "quick".into(),
            messages: 1000,
            seconds: 1000.0 / msgs,
            msgs_per_sec: msgs,
            verified,
            telemetry: serde_json::json!({}),
            repeat: 0,
            virtual_seconds: None,
            host_seconds: None,
            stopped_after: None,
        }
    }

    #[test]
    fn medians_ranges_and_ratios() {
        let loka = summarize(
            "loka",
            &[
                record("loka", 30.0, true),
                record("loka", 10.0, true),
                record("loka", 20.0, true),
            ],
        )
        .unwrap();
        let caf = summarize(
            "caf",
            &[
                record("caf", 5.0, true),
                record("caf", 15.0, false),
                record("caf", 10.0, true),
            ],
        )
        .unwrap();
        assert_eq!(
            (loka.msgs.median, loka.msgs.min, loka.msgs.max),
            (20.0, 10.0, 30.0)
        );
        assert_eq!(loka.representative.msgs_per_sec, 20.0);
        assert_eq!(loka.seconds_median, 50.0);
        assert_eq!(loka_over(&loka, &caf), Some(2.0));
        assert_eq!(loka_over(&loka, &loka), Some(1.0));
        assert_eq!(caf.verified, 2);

        let json = summary_json(&caf, Some(2.0));
        assert_eq!(json["runtime"], "caf");
        assert_eq!(json["msgs_per_sec_median"], 10.0);
        assert_eq!(json["msgs_per_sec_min"], 5.0);
        assert_eq!(json["loka_over_runtime"], 2.0);
        assert_eq!(json["verified"], false);
        for key in [
            "bench",
            "engine",
            "policy",
            "topology",
            "workers",
            "size",
            "messages",
            "seconds",
            "msgs_per_sec",
            "telemetry",
        ] {
            assert!(json.get(key).is_some(), "{key}");
        }
        assert_eq!(json["noisy"], true);
        assert_eq!(json["msgs_per_sec_spread"], 1.0);
        let row = table_row("pingpong", &caf, Some(2.0));
        assert!(
            row.contains("2.00×") && row.contains("NOT VERIFIED (2/3)"),
            "{row}"
        );
        assert!(table_row("pingpong", &loka, Some(1.0)).contains('—'));
        assert!(summarize("x", &[]).is_none());
    }

    #[test]
    fn a_median_with_a_spread_over_ten_percent_is_flagged_in_the_table() {
        let runs = |msgs: [f64; 3]| {
            let records: Vec<Record> = msgs.iter().map(|&m| record("caf", m, true)).collect();
            summarize("caf", &records).unwrap()
        };
        // Median 100M: 95M–104M is a 9% spread, 94M–105M an 11% one.
        let calm = table_row("pingpong", &runs([95e6, 100e6, 104e6]), Some(1.0));
        let noisy = table_row("pingpong", &runs([94e6, 100e6, 105e6]), Some(1.0));
        assert!(!calm.contains('±'), "{calm}");
        assert!(noisy.contains("100M ±"), "{noisy}");
        // The columns stay aligned: the flag fits in the median column.
        assert_eq!(calm.chars().count(), noisy.chars().count());
        assert_eq!(table_header().chars().count(), noisy.chars().count());
        assert!(NOISY_NOTE.starts_with('±') && NOISY_NOTE.contains("10%"));
    }

    fn stopped(cap: f64) -> Record {
        let peer = Peer {
            name: "actix".into(),
            binary: "peer-actix".into(),
            threads: 2,
        };
        stopped_record(
            &peer,
            "pingpong",
            Size::Quick,
            "arbiters",
            Duration::from_secs_f64(cap),
        )
    }

    #[test]
    fn runs_stopped_at_the_cap_count_as_slower_than_every_finished_one() {
        let loka = summarize("loka", &[record("loka", 40.0, true)]).unwrap();
        // Three runs, the last stopped: the median is the slower finished run.
        let two_of_three = summarize(
            "actix",
            &[
                record("actix", 20.0, true),
                record("actix", 10.0, true),
                stopped(20.0),
            ],
        )
        .unwrap();
        assert_eq!((two_of_three.msgs.n, two_of_three.stopped), (2, 1));
        assert_eq!(two_of_three.median, Some(10.0));
        assert_eq!(loka_over(&loka, &two_of_three), Some(4.0));
        let row = table_row("pingpong", &two_of_three, Some(4.0));
        assert!(
            row.contains("4.00×") && row.contains("1 of 3 run(s) stopped after 20 s"),
            "{row}"
        );
        assert!(!row.contains("too slow"), "{row}");
        // The first run stopped: nothing else ran, too slow to tell.
        let all_stopped = summarize("actix", &[stopped(20.0)]).unwrap();
        assert_eq!(all_stopped.median, None);
        assert_eq!(loka_over(&loka, &all_stopped), None);
        let row = table_row("pingpong", &all_stopped, None);
        assert!(
            row.contains("too slow") && row.contains("(> 20 s)") && !row.contains("NOT VERIFIED"),
            "{row}"
        );
        assert_eq!(
            table_header().chars().count(),
            row.find("  1 of 1")
                .map(|i| row[..i].chars().count())
                .unwrap()
        );
        // One finished, then one stopped: half the sample unknown, too slow to tell.
        let half = summarize("actix", &[record("actix", 30.0, true), stopped(20.0)]).unwrap();
        assert_eq!(half.median, None);
        let json = summary_json(&half, None);
        assert_eq!(json["msgs_per_sec_median"], serde_json::Value::Null);
        assert_eq!(json["stopped_runs"], 1);
        assert_eq!(json["stopped_after"], 20.0);
        assert_eq!(json["runs"], 2);
        assert_eq!(json["verified"], false);
        // The record of a stopped run says so, and holds no measurement.
        let r = stopped(20.0);
        assert_eq!((r.msgs_per_sec, r.seconds, r.messages), (0.0, 0.0, 0));
        assert_eq!((r.exec.as_str(), r.workers), ("default", 2));
    }

    #[test]
    fn a_repetition_starts_only_when_it_should_end_within_the_cap() {
        let s = Duration::from_secs;
        // No cap: always.
        assert!(next_run_fits(None, s(1000), s(500)));
        // 30 s cap: 4-s runs repeat; after one 25-s run a second would end at 50 s.
        assert!(next_run_fits(Some(s(30)), s(0), s(0)));
        assert!(next_run_fits(Some(s(30)), s(8), s(4)));
        assert!(next_run_fits(Some(s(30)), s(24), s(6)));
        assert!(!next_run_fits(Some(s(30)), s(25), s(25)));
        assert!(!next_run_fits(Some(s(30)), s(24), s(12)));
    }

    /// A peer that never finishes is stopped at the cap, well before the timeout.
    #[cfg(unix)]
    #[test]
    fn a_peer_run_past_the_cap_is_stopped_as_too_slow() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("loka-cap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let binary = dir.join("peer-sleepy");
        std::fs::write(&binary, "#!/bin/sh\nexec sleep 60\n").unwrap();
        std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
        let peer = Peer {
            name: "sleepy".into(),
            binary,
            threads: 2,
        };
        let start = Instant::now();
        let outcome = run_peer(
            &peer,
            "pingpong",
            Size::Quick,
            Duration::from_secs(60),
            Some(Duration::from_millis(300)),
        );
        assert!(
            matches!(outcome, PeerOutcome::Stopped(d) if d == Duration::from_millis(300)),
            "{outcome:?}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{:?}",
            start.elapsed()
        );
        // Without a cap shorter than the timeout, the timeout decides: a failure.
        let outcome = run_peer(
            &peer,
            "pingpong",
            Size::Quick,
            Duration::from_millis(300),
            Some(Duration::from_secs(5)),
        );
        assert!(
            matches!(&outcome, PeerOutcome::Failed(t) if t.contains("--timeout")),
            "{outcome:?}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn peer_names_are_checked_up_front() {
        assert_eq!(validate_peers(None).unwrap(), PEERS);
        let some = validate_peers(Some(&["caf".into(), "ractor".into(), "caf".into()])).unwrap();
        assert_eq!(some, ["caf", "ractor"]);
        assert!(validate_peers(Some(&["none".into()])).unwrap().is_empty());
        let err = validate_peers(Some(&["caf".into(), "akka".into()]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`akka`") && err.contains("actix-1thread"),
            "{err}"
        );
    }

    #[test]
    fn a_missing_peer_build_says_how_to_build_it() {
        let dir = Path::new("/nonexistent-peers");
        let err = locate("kameo", dir, 2).unwrap_err();
        assert!(
            err.contains("peer-kameo") && err.contains("make peers"),
            "{err}"
        );
        let err = locate("caf", dir, 2).unwrap_err();
        assert!(err.contains("peer-caf") && err.contains("cmake"), "{err}");
        assert!(peers_dir(Some(dir)).unwrap_err().contains("run-peers.sh"));
    }
}
