//! `loka top`: one snapshot as JSON from a live system's `observe` socket, bad input as one
//! line, and the live view driven in tmux (header and worker rows shown, `q` quits, the system
//! going away ends it with one line). The system observed runs in this test process.
#![cfg(unix)]

use loka::{Actor, Context, System};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

struct Sink;
impl Actor for Sink {
    type Msg = u32;
    fn handle(&mut self, _ctx: &mut Context<Self>, _msg: u32) {}
}

fn loka(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loka"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("the loka binary runs")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("loka-top-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A system serving `path`, with a registered actor that has handled 1,000 messages.
fn observed(path: &Path) -> System {
    let system = System::builder().workers(2).observe(path).build().unwrap();
    let sink = system.spawn(Sink);
    system.register("sink", &sink).unwrap();
    for i in 0..1_000 {
        sink.send(i).unwrap();
    }
    system.run_until_idle();
    system
}

/// Exit status 1 and exactly one `error: ...` line on stderr with every needle.
fn assert_one_line_error(out: &Output, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line expected: {stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    for needle in needles {
        assert!(lines[0].contains(needle), "no {needle:?} in {stderr}");
    }
}

#[test]
fn top_json_prints_the_systems_snapshot_on_one_line() {
    let dir = scratch("json");
    let path = dir.join("s.sock");
    let system = observed(&path);
    let out = loka(&["top", "--json", "--socket", path.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        json["total"]["messages"], 1_001,
        "1,000 and the start envelope"
    );
    assert_eq!(json["registered"][0]["name"], "sink");
    assert_eq!(json["workers"].as_array().unwrap().len(), 2);
    assert_eq!(json["policy"], system.snapshot().stats.policy.as_str());
}

#[test]
fn bad_input_is_one_line_and_leaves_the_system_alone() {
    let dir = scratch("bad");
    let missing = dir.join("nobody.sock");
    let out = loka(&["top", "--json", "--socket", missing.to_str().unwrap()]);
    assert_one_line_error(&out, &["cannot connect", "nobody.sock"]);
    // A plain file is no socket.
    let file = dir.join("plain");
    std::fs::write(&file, "x").unwrap();
    let out = loka(&["top", "--socket", file.to_str().unwrap()]);
    assert_one_line_error(&out, &["cannot connect", "plain"]);
    let path = dir.join("s.sock");
    let system = observed(&path);
    let out = loka(&["top", "--refresh", "10", "--socket", path.to_str().unwrap()]);
    assert_one_line_error(&out, &["--refresh", "50"]);
    // A benchmark asked to serve on a path that exists: refused, naming it; the file stays.
    let out = loka(&[
        "bench",
        "run",
        "pingpong",
        "--workers",
        "1",
        "--observe",
        file.to_str().unwrap(),
    ]);
    assert_one_line_error(&out, &["observe socket", "plain", "exists"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    // The system observed served all that unaffected.
    let json: serde_json::Value = serde_json::from_str(&String::from_utf8_lossy(
        &loka(&["top", "--json", "--socket", path.to_str().unwrap()]).stdout,
    ))
    .unwrap();
    assert_eq!(json["total"]["messages"], 1_001);
    assert_eq!(system.stats().total.messages, 1_001);
}

/// A tmux server of this test's own.
struct Tmux(String);

impl Tmux {
    fn cmd(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.0)
            .args(args)
            .output()
            .expect("tmux runs")
    }
    /// Runs `command` in a detached session `top`, 160 columns by `rows`.
    fn start(&self, command: &str, rows: u32) {
        let rows = rows.to_string();
        let out = self.cmd(&[
            "new-session",
            "-d",
            "-s",
            "top",
            "-x",
            "160",
            "-y",
            &rows,
            command,
        ]);
        assert!(out.status.success(), "{out:?}");
    }
    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-t", "top"]).stdout).into_owned()
    }
    /// Waits up to 20 s for the screen to contain every needle; returns the screen.
    fn wait_for(&self, needles: &[&str]) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if needles.iter().all(|n| screen.contains(n)) {
                return screen;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "no {needles:?} on the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

#[test]
fn the_live_view_in_tmux_shows_the_workers_quits_on_q_and_ends_when_the_system_stops() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("tmux is not installed (make deps installs it): skipped");
        return;
    }
    let dir = scratch("tmux");
    let path = dir.join("s.sock");
    let system = observed(&path);
    let tmux = Tmux(format!("loka-top-test-{}", std::process::id()));
    let run = format!(
        "{} top --socket {} --refresh 200; echo EXITED $?; sleep 60",
        env!("CARGO_BIN_EXE_loka"),
        path.display()
    );
    let start = |tmux: &Tmux| tmux.start(&run, 40);
    start(&tmux);
    let screen = tmux.wait_for(&["loka top", "policy", "workers 2", "w0", "w1", "sink"]);
    assert!(screen.contains("msgs/s"), "{screen}");
    // Built with `observe` alone: no handler time, and the panel says how to turn it on.
    assert!(screen.contains("handler time is off"), "{screen}");
    tmux.cmd(&["send-keys", "-t", "top", "q"]);
    let screen = tmux.wait_for(&["EXITED 0"]);
    assert!(!screen.contains("panicked"), "{screen}");
    tmux.cmd(&["kill-session", "-t", "top"]);
    // Again, and the system goes away under it. On a tmux server of its own: the first one
    // exits with its last session, and a session started meanwhile can find it exiting
    // ("server exited unexpectedly", seen once under a loaded CI).
    let tmux = Tmux(format!("loka-top-test-{}-again", std::process::id()));
    start(&tmux);
    tmux.wait_for(&["w0"]);
    drop(system);
    let screen = tmux.wait_for(&["EXITED 0"]);
    assert!(screen.contains("stopped (connection closed)"), "{screen}");
}

/// `loka bench run --top`: the view of the runs in the same terminal, connected to each run in
/// turn and naming it, then the records once the runs are over (exit 0); without a terminal,
/// one line and nothing run.
#[test]
fn bench_run_top_shows_the_runs_then_prints_their_records() {
    let out = loka(&["bench", "run", "counting", "--size", "quick", "--top"]);
    assert_one_line_error(&out, &["--top", "not one"]);
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("tmux is not installed (make deps installs it): skipped");
        return;
    }
    let dir = scratch("bench-top");
    let results = dir.join("runs.jsonl");
    let tmux = Tmux(format!("loka-bench-top-test-{}", std::process::id()));
    let run = format!(
        "{} bench run counting --size quick --workers 2 --repeat 30 --top --out {}; echo EXITED $?; sleep 60",
        env!("CARGO_BIN_EXE_loka"),
        results.display()
    );
    tmux.start(&run, 50);
    let screen = tmux.wait_for(&["loka top", "bench run: counting (run", "of 30)", "w0", "w1"]);
    assert!(screen.contains("msgs/s"), "{screen}");
    // `--top` samples handler time: the counting benchmark's counter is among the busiest.
    tmux.wait_for(&[
        "busiest actors by handler time (sampled every 10.00 ms",
        "Counter",
    ]);
    let screen = tmux.wait_for(&["EXITED 0"]);
    assert!(!screen.contains("panicked"), "{screen}");
    assert!(
        screen.contains("counting") && screen.contains("verified"),
        "the records are printed after the view: {screen}"
    );
    let records = std::fs::read_to_string(&results).unwrap();
    assert_eq!(records.lines().count(), 30, "{records}");
}
