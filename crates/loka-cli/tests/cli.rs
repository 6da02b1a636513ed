//! The `loka` command's argument checks, `loka report` on fixtures (a corrupted line
//! included), `loka bench compare` without peers, and `loka bench scale --peers` with stand-in
//! peers.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn loka(args: &[&str]) -> Output {
    loka_with_env(args, &[])
}

/// `loka` with extra environment variables (and no inherited `LOKA_*` nor backtrace settings).
fn loka_with_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_loka"));
    for (key, _) in std::env::vars() {
        if key.starts_with("LOKA_") {
            command.env_remove(key);
        }
    }
    command
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("the loka binary runs")
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("loka-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny.jsonl")
}

#[test]
fn report_on_the_fixture() {
    let dir = scratch("report");
    let out = loka(&[
        "report",
        "--input",
        fixture().to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    let md = std::fs::read_to_string(dir.join("index.md")).unwrap();
    for needle in [
        "## Machine",
        "nproc",
        "`loka bench compare pingpong fib --repeat 2 --out report/compare.jsonl`",
        "## Runtimes",
        "| pingpong | caf |",
        "## Scheduler policies",
        "## Scaling: speed-up over 1 worker",
        "## Locality: where activations ran",
        "| bench | cls | lgs |",
        "### Telemetry counters",
        "`steal_attempts`",
    ] {
        assert!(md.contains(needle), "missing {needle:?}");
    }
    for chart in ["runtimes.svg", "scale.svg", "policies.svg", "locality.svg"] {
        assert!(dir.join(chart).is_file(), "{chart}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_corrupted_results_file_is_named_with_its_line_and_the_rest_is_reported() {
    let dir = scratch("corrupt");
    let bad = dir.join("bad.jsonl");
    let good = std::fs::read_to_string(fixture()).unwrap();
    let mut lines: Vec<&str> = good.lines().collect();
    lines.insert(2, "{\"bench\":\"pingpong\",\"runtime\":\"lo"); // a run cut off mid-write
    std::fs::write(&bad, lines.join("\n")).unwrap();
    let out = loka(&[
        "report",
        "--input",
        bad.to_str().unwrap(),
        "--out",
        dir.join("r").to_str().unwrap(),
    ]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("error: ") && stderr.contains(&format!("{}:3:", bad.display())),
        "{stderr}"
    );
    let md = std::fs::read_to_string(dir.join("r/index.md")).unwrap();
    assert!(md.contains(&format!("{}:3:", bad.display())));
    assert!(
        md.contains("| pingpong | caf |"),
        "the valid records are reported"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn report_without_input_says_so() {
    let out = loka(&["report", "--input", "/nonexistent/results.jsonl"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("/nonexistent/results.jsonl"), "{stderr}");
}

#[test]
fn bad_arguments_are_refused_before_anything_runs() {
    let dir = scratch("args");
    let results = dir.join("r.jsonl");
    let r = results.to_str().unwrap();
    for (args, expected) in [
        (
            vec!["bench", "compare", "pingpnog", "--out", r],
            "unknown benchmark `pingpnog`",
        ),
        (
            vec![
                "bench", "compare", "pingpong", "--peers", "akka", "--out", r,
            ],
            "unknown peer runtime `akka`",
        ),
        (
            vec!["bench", "compare", "pingpong", "--repeat", "0", "--out", r],
            "--repeat must be at least 1",
        ),
        (
            vec!["bench", "compare", "pingpong", "--size", "huge", "--out", r],
            "unknown size `huge`",
        ),
        (
            vec!["bench", "run", "pingpong", "--timeout", "0", "--out", r],
            "--timeout must be at least 1 second",
        ),
        (
            vec!["bench", "scale", "pingpong", "--workers", "2", "--out", r],
            "--max-workers",
        ),
        (
            vec![
                "bench",
                "scale",
                "pingpong",
                "--max-workers",
                "0",
                "--out",
                r,
            ],
            "at least 1",
        ),
        (
            vec![
                "bench", "policies", "pingpong", "--policy", "cls", "--out", r,
            ],
            "drop --policy",
        ),
        (
            vec!["bench", "policies", "nosuch", "--out", r],
            "unknown benchmark `nosuch`",
        ),
        (
            vec!["bench", "run", "pingpong", "--policy", "nosuch", "--out", r],
            "nosuch",
        ),
    ] {
        let out = loka(&args);
        let (_, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(expected),
            "{args:?}: {stderr}"
        );
        assert!(!results.exists(), "{args:?} wrote results");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn compare_without_peers_says_how_to_get_them_and_runs_loka() {
    let dir = scratch("nopeers");
    let results = dir.join("compare.jsonl");
    let out = loka(&[
        "bench",
        "compare",
        "pingpong",
        "--repeat",
        "2",
        "--workers",
        "2",
        "--peers-dir",
        dir.to_str().unwrap(),
        "--out",
        results.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stderr.contains("peer toolchain/script missing") && stderr.contains("run-peers.sh"),
        "{stderr}"
    );
    assert!(
        stdout.contains("pingpong") && stdout.contains("loka"),
        "{stdout}"
    );
    let lines = std::fs::read_to_string(&results).unwrap();
    assert_eq!(lines.lines().count(), 2, "{lines}");
    assert!(
        lines.contains("\"command\":\"loka bench compare pingpong"),
        "{lines}"
    );

    // --json: one record per (benchmark, runtime) with the median.
    let out = loka(&[
        "bench",
        "compare",
        "pingpong",
        "--repeat",
        "1",
        "--workers",
        "2",
        "--peers",
        "none",
        "--json",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let record: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(record["runtime"], "loka");
    assert!(record["msgs_per_sec_median"].as_f64().unwrap() > 0.0);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn engine_flag_is_recorded_in_the_json() {
    let out = loka(&[
        "bench",
        "run",
        "pingpong",
        "--engine",
        "actor-centric",
        "--json",
        "--size",
        "quick",
        "--workers",
        "2",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("\"engine\":\"actor-centric\""), "{stdout}");
    let record: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(record["engine"], "actor-centric");
    assert_eq!(record["workers"], 2);
}

/// A refused command: exit status 1 and exactly one `error: ...` line on stderr (no backtrace,
/// no progress bar), containing every `needle`.
fn assert_one_line_error(out: &Output, what: &str, needles: &[&str]) {
    let (_, stderr) = text(out);
    assert_eq!(out.status.code(), Some(1), "{what}: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{what}: one line expected: {stderr}");
    assert!(lines[0].starts_with("error: "), "{what}: {stderr}");
    for needle in needles {
        assert!(
            lines[0].contains(needle),
            "{what}: no {needle:?} in {stderr}"
        );
    }
}

#[test]
fn unknown_engine_flag_is_one_error_line_on_every_bench_command() {
    let dir = scratch("engine");
    let results = dir.join("r.jsonl");
    let r = results.to_str().unwrap();
    for command in ["run", "compare", "scale", "policies"] {
        let args = [
            "bench",
            command,
            "pingpong",
            "--engine",
            "warp-drive",
            "--out",
            r,
        ];
        let out = loka_with_env(&args, &[("RUST_BACKTRACE", "1")]);
        assert_one_line_error(&out, command, &["warp-drive", "actor-centric"]);
        assert!(!results.exists(), "{command} wrote results");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unknown_engine_in_the_environment_names_the_variable() {
    let out = loka_with_env(
        &["bench", "run", "pingpong"],
        &[("LOKA_ENGINE", "warp-drive"), ("RUST_BACKTRACE", "1")],
    );
    assert_one_line_error(&out, "LOKA_ENGINE", &["LOKA_ENGINE", "warp-drive"]);
}

#[test]
fn an_unreadable_cost_file_is_one_line_with_its_reason_once() {
    let path = "/nonexistent/loka-cost.txt";
    let cause = std::fs::read_to_string(path).unwrap_err().to_string();
    let out = loka_with_env(
        &["topo", "--topology", "preset:ring-4x2", "--cost", path],
        &[("RUST_BACKTRACE", "1")],
    );
    assert_one_line_error(&out, "missing cost file", &[path, &cause]);
    let (_, stderr) = text(&out);
    assert_eq!(stderr.matches(&cause).count(), 1, "{stderr}");
}

#[test]
fn a_machine_beyond_the_pu_limit_is_one_line_naming_it_and_its_count() {
    let spec = "synthetic:pack:1000 pu:1000";
    let out = loka_with_env(&["topo", "--topology", spec], &[("RUST_BACKTRACE", "1")]);
    assert_one_line_error(&out, spec, &[spec, "1000000 PUs", "at most 4096"]);
}

/// A message-centric queue count past 1024 per worker (each queue is allocated at start: these
/// were a "capacity overflow" panic, an abort on a 128 GB allocation and a run that never
/// finished) is one line naming the key and the allowed range, and nothing runs.
#[test]
fn too_many_message_centric_queues_is_one_line_naming_the_key_and_its_range() {
    let dir = scratch("queues");
    let results = dir.join("r.jsonl");
    let r = results.to_str().unwrap();
    for queues in ["18446744073709551615", "1000000000", "1000000"] {
        let args = [
            "bench",
            "run",
            "pingpong",
            "--engine",
            "message-centric",
            "--workers",
            "1",
            "--queues",
            queues,
            "--out",
            r,
        ];
        let out = loka_with_env(&args, &[("RUST_BACKTRACE", "1")]);
        let value = format!("message_centric.queues = `{queues}`");
        assert_one_line_error(&out, queues, &[&value, "(allowed: 1..=1024)"]);
        assert!(!results.exists(), "--queues {queues} wrote results");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The same counts from the environment: one line naming the key and the range.
#[test]
fn too_many_message_centric_queues_in_the_environment_is_one_line() {
    for (name, key, range) in [
        ("LOKA_MC_QUEUES", "message_centric.queues", "1..=1024"),
        (
            "LOKA_MC_QUEUES_PER_WORKER",
            "message_centric.queues_per_worker",
            "1..=1024",
        ),
    ] {
        let out = loka_with_env(
            &["bench", "run", "pingpong", "--engine", "message-centric"],
            &[
                ("LOKA_WORKERS", "1"),
                (name, "18446744073709551615"),
                ("RUST_BACKTRACE", "1"),
            ],
        );
        let value = format!("{key} = `18446744073709551615` in the environment");
        let range = format!("(allowed: {range})");
        assert_one_line_error(&out, name, &[&value, &range]);
    }
}

/// `--timeout` too large for the clock to count (it panicked with "overflow when adding duration
/// to instant") means no limit: the run completes and is verified.
#[test]
fn a_timeout_too_large_for_the_clock_means_no_limit() {
    let out = loka_with_env(
        &[
            "bench",
            "run",
            "pingpong",
            "--workers",
            "1",
            "--timeout",
            "18446744073709551615",
        ],
        &[("RUST_BACKTRACE", "1")],
    );
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("pingpong") && stdout.contains("verified"),
        "{stdout}"
    );
}

/// A stand-in peer: prints a verified record for the benchmark it is asked for, on the threads
/// it is given (`--bench B --size S --threads N --repeat 1`), as the real peers do.
#[cfg(unix)]
fn stand_in_peer(dir: &Path, name: &str) {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("rust/target/release");
    std::fs::create_dir_all(&bin).unwrap();
    let path = bin.join(format!("peer-{name}"));
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\nprintf '{{\"bench\":\"%s\",\"runtime\":\"{name}\",\"engine\":\"e\",\
             \"policy\":\"p\",\"topology\":\"host\",\"workers\":%s,\"size\":\"%s\",\
             \"messages\":1000,\"seconds\":0.001,\"msgs_per_sec\":1000000.0,\"verified\":true,\
             \"telemetry\":{{}}}}\\n' \"$2\" \"$6\" \"$4\"\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `scale --peers`: every worker count runs loka and the peers that take that many threads,
/// side by side; the one-thread peers only at one worker; the speed-up table still follows.
#[cfg(unix)]
#[test]
fn scale_with_peers_runs_each_peer_at_every_worker_count_it_takes() {
    let dir = scratch("scalepeers");
    std::fs::write(dir.join("run-peers.sh"), "#!/bin/sh\n").unwrap();
    stand_in_peer(&dir, "tokio");
    stand_in_peer(&dir, "tokio-current-thread");
    let results = dir.join("scale.jsonl");
    let out = loka(&[
        "bench",
        "scale",
        "pingpong",
        "--max-workers",
        "2",
        "--peers",
        "tokio,tokio-current-thread",
        "--peers-dir",
        dir.to_str().unwrap(),
        "--out",
        results.to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    let mut seen: Vec<(String, u64)> = std::fs::read_to_string(&results)
        .unwrap()
        .lines()
        .map(|l| {
            let r: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(r["bench"], "pingpong", "{l}");
            assert_eq!(r["verified"], true, "{l}");
            (
                r["runtime"].as_str().unwrap().to_owned(),
                r["workers"].as_u64().unwrap(),
            )
        })
        .collect();
    seen.sort();
    let want: Vec<(String, u64)> = [
        ("loka", 1),
        ("loka", 2),
        ("tokio", 1),
        ("tokio", 2),
        ("tokio-current-thread", 1),
    ]
    .iter()
    .map(|(r, w)| (r.to_string(), *w))
    .collect();
    assert_eq!(seen, want);
    assert!(
        stdout.contains("1 worker(s)") && stdout.contains("2 worker(s)"),
        "{stdout}"
    );
    assert!(stdout.contains("speed-up"), "{stdout}");
    // An unknown peer is refused before anything runs.
    let out = loka(&[
        "bench",
        "scale",
        "pingpong",
        "--max-workers",
        "1",
        "--peers",
        "akka",
    ]);
    let (_, stderr) = text(&out);
    assert!(
        !out.status.success() && stderr.contains("`akka`"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `loka bench remote` (built with the `remote` feature in `make test`): zero rounds are refused
/// in one line before any process starts; without the feature, the one line says how to build it.
#[test]
fn bench_remote_refuses_zero_rounds_or_says_what_is_missing() {
    let out = loka(&["bench", "remote", "--rounds", "0"]);
    if cfg!(feature = "remote") {
        assert_one_line_error(&out, "bench remote --rounds 0", &["--rounds", "at least 1"]);
        let out = loka(&["bench", "remote", "--link-frames", "17"]);
        assert_one_line_error(
            &out,
            "bench remote --link-frames 17",
            &["link_frames", "17", "1..=16"],
        );
    } else {
        assert_one_line_error(&out, "bench remote", &["--features remote"]);
    }
}
