//! `loka bench compare`: loka and the peer runtimes (`peers/`) on the same workloads,
//! alternating A B A B, with medians, min–max and loka/peer ratios.

use crate::args::{check_repeat, CommonArgs, SystemArgs};
use crate::output::Output;
use anyhow::Result;
use loka_bench::record::Record;
use loka_bench::report::charts::human;
use loka_bench::report::{median_index, ratio, Summary, NOISY_NOTE};
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
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(3)..].join(" / ")
}

/// Runs one benchmark once on a peer (a subprocess) and reads its JSON record.
pub fn run_peer(peer: &Peer, bench: &str, size: Size, timeout: Duration) -> PeerOutcome {
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
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if Instant::now() >= deadline => {
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
    /// msgs/s over the repetitions.
    pub msgs: Summary,
    /// Median seconds.
    pub seconds_median: f64,
    /// Verified runs.
    pub verified: usize,
    /// The run closest to the median msgs/s (its record's keys go into `--json` output).
    pub representative: Record,
}

/// Summarises one runtime's runs of one benchmark; `None` without runs.
pub fn summarize(runtime: &str, records: &[Record]) -> Option<RuntimeSummary> {
    let msgs: Vec<f64> = records.iter().map(|r| r.msgs_per_sec).collect();
    let secs: Vec<f64> = records.iter().map(|r| r.seconds).collect();
    Some(RuntimeSummary {
        runtime: runtime.to_owned(),
        msgs: Summary::of(&msgs)?,
        seconds_median: Summary::of(&secs)?.median,
        verified: records.iter().filter(|r| r.verified).count(),
        representative: records[median_index(&msgs)?].clone(),
    })
}

/// loka's median msgs/s over the other runtime's (above 1: loka is faster).
pub fn loka_over(loka: &RuntimeSummary, other: &RuntimeSummary) -> Option<f64> {
    ratio(loka.msgs.median, other.msgs.median)
}

/// The `--json` record of a summary: the keys of `loka bench run --json` (from the median
/// run) plus `msgs_per_sec_median`, `msgs_per_sec_min`, `msgs_per_sec_max`,
/// `seconds_median`, `runs`, `verified_runs` and `loka_over_runtime`.
pub fn summary_json(s: &RuntimeSummary, loka_ratio: Option<f64>) -> serde_json::Value {
    let mut value = serde_json::to_value(&s.representative).unwrap_or_default();
    if let serde_json::Value::Object(map) = &mut value {
        map.insert("verified".into(), (s.verified == s.msgs.n).into());
        map.insert("msgs_per_sec_median".into(), s.msgs.median.into());
        map.insert("msgs_per_sec_min".into(), s.msgs.min.into());
        map.insert("msgs_per_sec_max".into(), s.msgs.max.into());
        map.insert("seconds_median".into(), s.seconds_median.into());
        map.insert("runs".into(), s.msgs.n.into());
        map.insert("verified_runs".into(), s.verified.into());
        map.insert("loka_over_runtime".into(), loka_ratio.into());
        map.insert("msgs_per_sec_spread".into(), s.msgs.spread().into());
        map.insert("noisy".into(), s.msgs.noisy().into());
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

/// One table line.
pub fn table_row(bench: &str, s: &RuntimeSummary, loka_ratio: Option<f64>) -> String {
    let ratio = match (s.runtime.as_str(), loka_ratio) {
        ("loka", _) => "—".to_owned(),
        (_, Some(r)) => format!("{r:.2}×"),
        (_, None) => "n/a".to_owned(),
    };
    let mut line = format!(
        "{:<22} {:<14} {:>4} {:>13} {:>21} {:>12}",
        bench,
        s.runtime,
        s.msgs.n,
        format!("{}{}", human(s.msgs.median), s.msgs.flag_aligned()),
        if s.msgs.n > 1 {
            format!("{} – {}", human(s.msgs.min), human(s.msgs.max))
        } else {
            human(s.msgs.min)
        },
        ratio
    );
    if s.verified < s.msgs.n {
        line.push_str(&format!("  NOT VERIFIED ({}/{})", s.verified, s.msgs.n));
    }
    line
}

/// Runs `loka bench compare`.
pub fn run(args: &CompareArgs) -> Result<()> {
    // Validate everything before running anything.
    let (benches, size) = args.common.resolve()?;
    check_repeat(args.repeat)?;
    let names = validate_peers(args.peers.as_deref())?;
    anyhow::ensure!(args.timeout >= 1, "--timeout must be at least 1 second");
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
                if unsupported[i] {
                    continue;
                }
                out.progress_message(format!("{} {}", bench.name, peer.name));
                match run_peer(peer, bench.name, size, timeout) {
                    PeerOutcome::Ran(mut record, problem) => {
                        record.repeat = repeat;
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
