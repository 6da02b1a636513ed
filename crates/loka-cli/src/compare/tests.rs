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

/// A peer binary made of `script`, in a directory of its own named after `tag` (remove it
/// when done): returns the directory and the binary's path.
#[cfg(unix)]
fn script_peer(tag: &str, script: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("loka-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let binary = dir.join(format!("peer-{tag}"));
    std::fs::write(&binary, script).unwrap();
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, binary)
}

/// A peer that prints a record for the workload it was asked for (`--bench NAME`).
#[cfg(unix)]
const ECHO_PEER: &str = "#!/bin/sh\nprintf '{\"bench\":\"%s\",\"runtime\":\"x\",\"engine\":\"e\",\"policy\":\"p\",\"topology\":\"host\",\"workers\":1,\"size\":\"quick\",\"messages\":10,\"seconds\":1.0,\"msgs_per_sec\":10.0,\"verified\":true,\"telemetry\":{}}\\n' \"$2\"\n";

/// A peer that never finishes is stopped at the cap, well before the timeout.
#[cfg(unix)]
#[test]
fn a_peer_run_past_the_cap_is_stopped_as_too_slow() {
    let (dir, binary) = script_peer("cap", "#!/bin/sh\nexec sleep 60\n");
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
    let err = locate("tokio-current-thread", dir, 2).unwrap_err();
    assert!(err.contains("peer-tokio-current-thread"), "{err}");
    let err = locate("caf", dir, 2).unwrap_err();
    assert!(err.contains("peer-caf") && err.contains("cmake"), "{err}");
    assert!(peers_dir(Some(dir)).unwrap_err().contains("run-peers.sh"));
}

#[test]
fn single_thread_peers_get_one_thread_whatever_the_workers() {
    let dir = std::env::temp_dir().join(format!("loka-locate-{}", std::process::id()));
    let release = dir.join("rust/target/release");
    std::fs::create_dir_all(&release).unwrap();
    for bin in ["peer-tokio", "peer-tokio-current-thread", "peer-actix"] {
        std::fs::write(release.join(bin), "").unwrap();
    }
    let threads = |name: &str| locate(name, &dir, 4).map(|p| (p.binary, p.threads));
    assert_eq!(threads("tokio"), Ok((release.join("peer-tokio"), 4)));
    assert_eq!(
        threads("tokio-current-thread"),
        Ok((release.join("peer-tokio-current-thread"), 1))
    );
    assert_eq!(
        threads("actix-1thread"),
        Ok((release.join("peer-actix"), 1))
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// loka's async-handler benchmarks run on the async peers as their sync-named workload, filed
/// under loka's name; the sync peers and the `-ready` variants have no counterpart; every other
/// benchmark keeps its name.
#[test]
fn async_benchmarks_meet_only_the_async_peers() {
    assert_eq!(peer_bench("kameo", "async-pingpong"), Some("pingpong"));
    assert_eq!(peer_bench("ractor", "async-counting"), Some("counting"));
    assert_eq!(peer_bench("tokio", "async-counting"), Some("counting"));
    assert_eq!(peer_bench("actix", "async-pingpong"), None);
    assert_eq!(peer_bench("caf", "async-counting"), None);
    assert_eq!(peer_bench("kameo", "async-pingpong-ready"), None);
    assert_eq!(peer_bench("actix", "pingpong"), Some("pingpong"));
    assert_eq!(peer_bench("caf", "fjthrput"), Some("fjthrput"));
    // Every async peer is a peer, and every async benchmark with a counterpart names a workload
    // the sync suite has too.
    assert!(ASYNC_PEERS.iter().all(|p| PEERS.contains(p)));
    let names: Vec<_> = loka_bench::all().iter().map(|b| b.name).collect();
    for bench in loka_bench::async_handlers::all() {
        if let Some(w) = loka_bench::async_handlers::peer_workload(bench.name) {
            assert!(names.contains(&w), "{} -> {w}", bench.name);
        }
    }
}

/// A peer that prints its sync workload's record: the record comes back under loka's async
/// benchmark's name, saying what the peer ran; a sync peer is not even started.
#[cfg(unix)]
#[test]
fn an_async_peer_runs_its_sync_workload_filed_under_loka_s_name() {
    let (dir, binary) = script_peer("async-peer", ECHO_PEER);
    let run = |name: &str, bench: &str| {
        let peer = Peer {
            name: name.into(),
            binary: binary.clone(),
            threads: 1,
        };
        run_peer(&peer, bench, Size::Quick, Duration::from_secs(30), None)
    };
    match run("kameo", "async-pingpong") {
        PeerOutcome::Ran(record, None) => {
            assert_eq!(record.bench, "async-pingpong");
            assert_eq!(record.runtime, "kameo");
            assert_eq!(record.telemetry["peer_workload"], "pingpong");
        }
        other => panic!("{other:?}"),
    }
    match run("kameo", "pingpong") {
        PeerOutcome::Ran(record, None) => {
            assert_eq!(record.bench, "pingpong");
            assert!(record.telemetry.get("peer_workload").is_none());
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        run("actix", "async-pingpong"),
        PeerOutcome::Unsupported
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A peer binary still open for writing somewhere ("text file busy": here this test's own
/// handle, in a CI run a child another test's thread had forked) is started once the writer
/// lets go, not reported as a failure.
#[cfg(unix)]
#[test]
fn a_peer_binary_busy_for_a_moment_is_started_once_it_is_free() {
    let (dir, binary) = script_peer("busy-peer", ECHO_PEER);
    // Held open for writing for 100 ms: every exec meanwhile fails with ETXTBSY.
    let writer = std::fs::OpenOptions::new()
        .append(true)
        .open(&binary)
        .unwrap();
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        drop(writer);
    });
    let peer = Peer {
        name: "tokio".into(),
        binary,
        threads: 1,
    };
    let outcome = run_peer(
        &peer,
        "pingpong",
        Size::Quick,
        Duration::from_secs(30),
        None,
    );
    release.join().unwrap();
    assert!(matches!(outcome, PeerOutcome::Ran(_, None)), "{outcome:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
