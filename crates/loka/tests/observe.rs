//! The `observe` socket (docs/observability.md, "Live view"): snapshots as JSON lines, exact
//! after a known workload, fresh at each `watch` tick, several clients at once, bad paths as
//! typed errors naming the path, a client hanging up leaving the system alone, and the socket
//! file removed at shutdown.
#![cfg(unix)]

use loka::{Actor, ConfigError, Context, ObserveError, System};
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

struct Sink;
impl Actor for Sink {
    type Msg = u32;
    fn handle(&mut self, _ctx: &mut Context<Self>, _msg: u32) {}
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("loka-observe-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn system(path: &Path) -> System {
    System::builder()
        .workers(2)
        .observe(path)
        .build()
        .expect("the system binds its socket")
}

/// Sends `request`, returns the reader over the answer's lines.
fn ask(path: &Path, request: &str) -> BufReader<UnixStream> {
    let mut stream = UnixStream::connect(path).expect("the socket accepts");
    writeln!(stream, "{request}").unwrap();
    BufReader::new(stream)
}

fn next(reader: &mut BufReader<UnixStream>) -> Option<Value> {
    let mut line = String::new();
    (reader.read_line(&mut line).unwrap() > 0).then(|| serde_json::from_str(&line).unwrap())
}

#[test]
fn a_snapshot_over_the_socket_is_the_systems_own_and_exact() {
    let dir = scratch("exact");
    let path = dir.join("s.sock");
    let system = system(&path);
    assert_eq!(system.observe_path(), Some(path.as_path()));
    let sink = system.spawn(Sink);
    system.register("sink", &sink).unwrap();
    for i in 0..10_000 {
        sink.send(i).unwrap();
    }
    system.run_until_idle();
    let got = next(&mut ask(&path, "snapshot")).expect("one snapshot");
    let own = serde_json::to_value(system.snapshot()).unwrap();
    // Quiescent: every counter agrees with the system's own snapshot (uptime apart).
    for key in [
        "total",
        "workers",
        "dead_letters",
        "actors_spawned",
        "registered",
        "topology",
    ] {
        assert_eq!(got[key], own[key], "{key}");
    }
    // 10,000 messages and the start envelope, all handled.
    assert_eq!(got["total"]["messages"], 10_001);
    assert_eq!(got["actors_spawned"], 1);
    assert_eq!(got["registered"][0]["name"], "sink");
    assert_eq!(got["registered"][0]["mailbox_len"], 0);
    assert_eq!(got["engine"], "actor-centric");
    assert_eq!(got["queue_lengths"], serde_json::json!([0, 0]));
    assert_eq!(got["topology"]["workers"].as_array().unwrap().len(), 2);
    // The server closed the connection after the one snapshot.
    let mut reader = ask(&path, "snapshot");
    assert!(next(&mut reader).is_some());
    assert!(next(&mut reader).is_none());
    // A bad request is one JSON error line.
    let answer = next(&mut ask(&path, "stop")).unwrap();
    assert!(
        answer["error"].as_str().unwrap().contains("`stop`"),
        "{answer}"
    );
}

#[test]
fn watch_serves_fresh_snapshots_to_several_clients_and_a_client_hanging_up_changes_nothing() {
    let dir = scratch("watch");
    let path = dir.join("s.sock");
    let system = system(&path);
    let sink = system.spawn(Sink);
    system.run_until_idle();
    let mut a = ask(&path, "watch 50");
    let mut b = ask(&path, "watch 50");
    let first = next(&mut a).unwrap();
    assert!(next(&mut b).is_some(), "a second client is served too");
    for i in 0..500 {
        sink.send(i).unwrap();
    }
    system.run_until_idle();
    let second = next(&mut a).unwrap();
    assert!(second["uptime_ns"].as_u64() > first["uptime_ns"].as_u64());
    assert_eq!(
        second["total"]["messages"].as_u64().unwrap(),
        first["total"]["messages"].as_u64().unwrap() + 500,
        "each tick reads the counters anew"
    );
    // Both clients hang up mid-stream; the system goes on as before.
    drop(a);
    drop(b);
    std::thread::sleep(std::time::Duration::from_millis(150));
    for i in 0..500 {
        sink.send(i).unwrap();
    }
    system.run_until_idle();
    assert_eq!(system.stats().total.messages, 1_001);
    assert!(next(&mut ask(&path, "snapshot")).is_some(), "still serving");
}

#[test]
fn the_socket_is_removed_at_shutdown_and_watchers_see_the_end() {
    let dir = scratch("removed");
    let path = dir.join("s.sock");
    let system = system(&path);
    let mut watcher = ask(&path, "watch 50");
    assert!(next(&mut watcher).is_some());
    system.shutdown();
    assert!(!path.exists(), "the socket file is gone");
    assert_eq!(system.observe_path(), None);
    // The watcher reads what was in flight, then the end of the stream.
    while next(&mut watcher).is_some() {}
    drop(system);
    // Dropping a system (no explicit shutdown) removes it too.
    let system = self::system(&path);
    assert!(path.exists());
    drop(system);
    assert!(!path.exists());
}

#[test]
fn bad_paths_are_typed_errors_naming_the_path_and_touch_nothing() {
    let dir = scratch("bad");
    // A file that is not ours: refused, left as it was.
    let file = dir.join("taken");
    std::fs::write(&file, "keep me").unwrap();
    let err = System::builder()
        .workers(1)
        .observe(&file)
        .build()
        .unwrap_err();
    assert!(
        matches!(&err, ConfigError::Observe(ObserveError::Exists { path }) if *path == file),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(
        message.contains(&file.display().to_string()) && !message.contains('\n'),
        "{message}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
    // A directory that does not exist.
    let missing = dir.join("no-such-dir").join("s.sock");
    let err = System::builder()
        .workers(1)
        .observe(&missing)
        .build()
        .unwrap_err();
    assert!(
        matches!(&err, ConfigError::Observe(ObserveError::Bind { path, .. }) if *path == missing),
        "{err:?}"
    );
    assert!(err.to_string().contains("no-such-dir"), "{err}");
    // A second system on a live system's socket: refused; the first one keeps serving it.
    let path = dir.join("s.sock");
    let first = system(&path);
    let err = System::builder()
        .workers(1)
        .observe(&path)
        .build()
        .unwrap_err();
    assert!(
        matches!(err, ConfigError::Observe(ObserveError::Exists { .. })),
        "{err:?}"
    );
    assert!(next(&mut ask(&path, "snapshot")).is_some());
    drop(first);
    assert!(!path.exists());
}

#[test]
fn observe_comes_from_toml_and_the_environment() {
    let config = loka::Config::from_toml_str("observe = \"/tmp/x.sock\"", "t.toml").unwrap();
    assert_eq!(config.observe, Some(PathBuf::from("/tmp/x.sock")));
    let mut config = loka::Config::default();
    config
        .apply_vars(|k| (k == "LOKA_OBSERVE").then(|| "/tmp/y.sock".to_owned()))
        .unwrap();
    assert_eq!(config.observe, Some(PathBuf::from("/tmp/y.sock")));
    assert_eq!(loka::Config::default().observe, None, "off by default");
    let err = loka::Config::from_toml_str("observe = \"\"", "t.toml").unwrap_err();
    assert!(err.to_string().contains("observe"), "{err}");
}
