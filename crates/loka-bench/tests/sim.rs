//! Every benchmark under the simulation engine: verified, and reproducible to the bit (same
//! virtual time and trace hash in two runs), so its predictions can be compared across policies;
//! the sweeps' benchmarks under a second policy too.

use loka::{Config, EngineKind, PolicyKind};
use loka_bench::runner::{run_once, run_once_as};
use loka_bench::{Run, Size};
use std::time::Duration;

/// The benchmarks also run under `hierarchical:auto` (the hub-aware policy, with online hubs
/// and migrations): the set the worker and policy sweeps of `make bench` run, read
/// from the Makefile's `SWEEP_BENCHES` (the eight micro benchmarks and a workload of each
/// suite), so the two cannot drift apart. Under every benchmark it took 45 s of every CI run's
/// 20 minutes; the repeat check below stays on every benchmark.
fn sweep_benches() -> Vec<String> {
    let makefile = concat!(env!("CARGO_MANIFEST_DIR"), "/../../Makefile");
    let text = std::fs::read_to_string(makefile).expect("the workspace's Makefile");
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("SWEEP_BENCHES :="))
        .expect("the Makefile defines SWEEP_BENCHES");
    line.split_whitespace().map(str::to_owned).collect()
}

#[test]
fn every_benchmark_verifies_and_repeats_its_trace_under_the_simulation() {
    let config = |policy: &str| Config {
        engine: EngineKind::Sim,
        topology: "preset:opteron6376".to_owned(),
        workers: 8,
        policy: policy.parse::<PolicyKind>().unwrap(),
        ..Config::default()
    };
    let (cls, hierarchical) = (config("cls"), config("hierarchical:auto"));
    let all = loka_bench::all();
    let sweep = sweep_benches();
    assert!(sweep.len() >= 8, "SWEEP_BENCHES lists {sweep:?}");
    for name in &sweep {
        assert!(all.iter().any(|b| b.name == name), "no benchmark {name}");
    }
    for bench in all {
        // The runs of a benchmark side by side (a simulation runs on one thread): `cls` twice,
        // for the repeated trace, and `hierarchical:auto` once for those of `SWEEP_BENCHES`.
        // This test took 408 s of a CI run when they ran one after another.
        // A simulation's time limit is the process's CPU time (`loka_bench::limit`), which the
        // runs and this file's other test spend together: each gets three quick runs'
        // limit (cforall-balance-multi, ~20 s of CPU alone in a release build, went over a
        // shared 60 s in a loaded CI run).
        let run = || Run::new(Size::Quick).with_timeout(Duration::from_secs(180));
        let (a, b, h) = std::thread::scope(|s| {
            let a = s.spawn(|| run_once_as(&bench, run(), &cls, 0).unwrap());
            let b = s.spawn(|| run_once_as(&bench, run(), &cls, 1).unwrap());
            let h = sweep
                .iter()
                .any(|name| name == bench.name)
                .then(|| s.spawn(|| run_once_as(&bench, run(), &hierarchical, 0).unwrap()));
            (
                a.join().unwrap(),
                b.join().unwrap(),
                h.map(|h| h.join().unwrap()),
            )
        });
        let mut runs = vec![(&a, "cls"), (&b, "cls")];
        runs.extend(h.as_ref().map(|h| (h, "hierarchical:auto")));
        for (m, policy) in runs {
            assert!(
                m.verified,
                "{} under sim/{policy}: {}",
                bench.name, m.telemetry["check"]
            );
            assert!(
                m.virtual_seconds.unwrap() > 0.0,
                "{} under sim/{policy}",
                bench.name
            );
        }
        if bench.name.ends_with("-rr") {
            // Matrix Search's round-robin variants dispatch every job from a plain thread
            // while the actors run: correct under the simulation, but when a job arrives
            // depends on that thread's timing (docs/simulation.md, *What it does*).
            continue;
        }
        let label = format!("{} under sim/cls", bench.name);
        assert_eq!(
            a.telemetry["sim_trace_hash"], b.telemetry["sim_trace_hash"],
            "{label}: two runs took different schedules"
        );
        assert_eq!(a.virtual_seconds, b.virtual_seconds, "{label}");
    }
}

/// The Savina workloads whose handlers compute declare it (`ctx.charge`, constants measured on
/// this host): their predictions are mostly that compute, so with it priced at nothing
/// (`compute_scale = 0`) the virtual time falls to a fraction.
#[test]
fn compute_heavy_workloads_declare_their_compute() {
    let dir = std::env::temp_dir().join(format!("loka-bench-charge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let free = dir.join("free-compute.toml");
    std::fs::write(&free, "compute_scale = 0\n").unwrap();
    let config = Config {
        engine: EngineKind::Sim,
        topology: "preset:opteron6376".to_owned(),
        workers: 8,
        policy: "cls".parse::<PolicyKind>().unwrap(),
        ..Config::default()
    };
    let mut uncharged = config.clone();
    uncharged.sim.cost = Some(free);
    for name in [
        "recmatmul",
        "apsp",
        "nqueens",
        "trapezoid",
        "quicksort",
        "sieve",
        "concsll",
    ] {
        let bench = loka_bench::all()
            .into_iter()
            .find(|b| b.name == name)
            .unwrap();
        let charged = run_once(&bench, Size::Quick, &config, 0).unwrap();
        let plain = run_once(&bench, Size::Quick, &uncharged, 0).unwrap();
        let (charged, plain) = (
            charged.virtual_seconds.unwrap(),
            plain.virtual_seconds.unwrap(),
        );
        assert!(
            charged > 3.0 * plain,
            "{name}: {charged} s of virtual time with its compute, {plain} s without"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `name`'s virtual seconds at the quick size under `policy` on the simulated Xeon X7560 preset
/// at its 32 workers; the run must verify.
fn xeon_virtual_seconds(name: &str, policy: &str) -> f64 {
    virtual_seconds(name, policy, "preset:xeon-x7560", 32)
}

/// The virtual seconds of `name`'s quick size under `policy` on `topology` with `workers`.
fn virtual_seconds(name: &str, policy: &str, topology: &str, workers: usize) -> f64 {
    record(name, policy, topology, workers)
        .virtual_seconds
        .expect("the simulation reports virtual time")
}

/// fjthrput's driver wakes its actors from the worker it starts on and then runs on another
/// (a thief took it); its actors, never idle again, are not woken again. The senders' share of
/// their batches goes to the worker the driver runs on now. Charged to the worker it woke them
/// from, that worker's clock ran hundreds of milliseconds ahead of its work and the actor queued
/// there waited for it: `lgs` took 477 ms of virtual time on the Xeon preset against `cls`'s 124
/// (docs/decisions/0096-sim-senders-charged-where-they-run.md).
#[test]
fn a_sender_that_moved_is_charged_where_it_runs() {
    let time = |policy| xeon_virtual_seconds("fjthrput", policy);
    let (cls, lgs) = (time("cls"), time("lgs"));
    assert!(
        lgs < 1.5 * cls,
        "lgs {lgs} s against cls {cls} s of virtual time"
    );
}

/// One actor's sends are serial, wherever it runs: fjthrput's driver sends every message, each
/// into a mailbox read on another core, so the run takes at least `messages × (send + line)` of
/// virtual time (the cost file below fixes both; no core shares a cache with another). Charged
/// per worker it had sent from, a driver that thieves moved left part of its share on workers it
/// no longer ran on, and `cls` finished in 19 ms where the sends alone take 117
/// (docs/decisions/0101-sim-senders-are-actors.md).
#[test]
fn a_lone_sender_pays_for_every_send_wherever_it_ran() {
    let bench = loka_bench::all()
        .into_iter()
        .find(|b| b.name == "fjthrput")
        .unwrap();
    let dir = std::env::temp_dir().join(format!("loka-sim-lone-sender-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let costs = dir.join("costs.toml");
    let (send, line) = (7.5, 25.0);
    std::fs::write(
        &costs,
        format!("send = {send}\nline_l3 = {line}\nline_node = {line}\n"),
    )
    .unwrap();
    let mut config = Config {
        engine: EngineKind::Sim,
        topology: "synthetic:package:1 numa:1 core:16 pu:1".to_owned(),
        workers: 16,
        policy: PolicyKind::Cls,
        ..Config::default()
    };
    config.sim.cost = Some(costs);
    let run = Run::new(Size::Quick).with_timeout(Duration::from_secs(180));
    let measured = run_once_as(&bench, run, &config, 0).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(measured.verified, "{measured:?}");
    let sends = measured.messages as f64 * (send + line) * 1e-9;
    let virtual_s = measured.virtual_seconds.unwrap();
    // A few of its actors ran on the driver's own worker (no line): a tenth of slack.
    assert!(
        virtual_s >= 0.9 * sends,
        "{virtual_s} s of virtual time for {} messages, whose sends take {sends} s",
        measured.messages
    );
}

/// `auto`'s probes into plain stealing leave `hierarchical`'s placement in place: BenchErl's big
/// on the simulated Xeon X7560 (32 workers) runs under `hierarchical` at 1.44× of `cls`, a gain
/// that builds over its first milliseconds as each worker's actors settle in its cache. When
/// every probe released the foreign queues to thieves, each one scattered the actors and the
/// gain had to build again: `auto` never left `hierarchical` and still ran at 0.87× of `cls`
/// (docs/decisions/0102-a-probe-leaves-locality-in-place.md).
#[test]
fn auto_keeps_what_hierarchical_placed_while_it_probes() {
    let time = |policy| xeon_virtual_seconds("bencherl-big", policy);
    let (cls, auto) = (time("cls"), time("auto"));
    assert!(
        auto < cls,
        "auto {auto} s against cls {cls} s of virtual time"
    );
}

/// Back from a probe of plain stealing, `auto` sends the hubs home at once: plain stealing
/// requeued them like any actor, and a hub that always has mail is never woken, so it went home
/// only when its new worker's periodic look ran it and it was requeued. BenchErl's big on the
/// simulated Altix UV 2000 (192 workers): 1.31× of `hierarchical`'s virtual time with the hubs
/// gathered home at the switch, 1.79× without (1.17× and 1.43× before `hierarchical` placed hubs
/// node by node; docs/decisions/0103-hubs-go-home-at-requeue.md,
/// docs/decisions/0104-hierarchical-homes-at-spawn.md).
#[test]
fn auto_sends_the_hubs_home_when_it_returns_from_a_probe() {
    let time = |policy| virtual_seconds("bencherl-big", policy, "preset:altix-uv2000", 192);
    let (hierarchical, auto) = (time("hierarchical"), time("auto"));
    assert!(
        auto < 1.5 * hierarchical,
        "auto {auto} s against hierarchical {hierarchical} s of virtual time"
    );
}

/// The record of `name`'s quick size under `policy` on `topology` with `workers`; it must verify.
fn record(name: &str, policy: &str, topology: &str, workers: usize) -> loka_bench::record::Record {
    let bench = loka_bench::all()
        .into_iter()
        .find(|b| b.name == name)
        .unwrap();
    let config = Config {
        engine: EngineKind::Sim,
        topology: topology.to_owned(),
        workers,
        policy: policy.parse::<PolicyKind>().unwrap(),
        ..Config::default()
    };
    let run = Run::new(Size::Quick).with_timeout(Duration::from_secs(180));
    let record = run_once_as(&bench, run, &config, 0).unwrap();
    assert!(record.verified, "{name} under {policy}: {record:?}");
    record
}

/// Whether `auto`'s run detected hubs at its end (its controller's answer to the hubs question).
fn auto_detects_hubs(record: &loka_bench::record::Record) -> bool {
    record.telemetry["adaptive"]["hubs"]
        .as_bool()
        .expect("auto adapts on several nodes")
}

/// `auto` asks whether detected hubs pay (docs/decisions/0109-auto-asks-whether-hubs-pay.md):
/// Savina's big on the simulated Opteron runs at 1.43× of `cls` with `hierarchical:auto`'s
/// detection and at 1.0× without it, so `auto` turns the detection on; the Cforall executor on
/// the simulated Xeon runs at 0.50× of `cls` with it and 1.06× without it (every actor of its
/// groups becomes a hub and is pinned), so `auto` leaves it off.
#[test]
fn auto_detects_hubs_where_they_pay_and_not_where_they_cost() {
    let opteron = |policy| record("big", policy, "preset:opteron6376", 64);
    let (hierarchical, auto) = (opteron("hierarchical"), opteron("auto"));
    assert!(
        auto_detects_hubs(&auto),
        "big: {:?}",
        auto.telemetry["adaptive"]
    );
    assert!(
        auto.seconds < 0.9 * hierarchical.seconds,
        "big: auto {} s against hierarchical {} s of virtual time",
        auto.seconds,
        hierarchical.seconds
    );
    let xeon = |policy| record("cforall-executor", policy, "preset:xeon-x7560", 32);
    let (detecting, auto) = (xeon("hierarchical:auto"), xeon("auto"));
    assert!(
        !auto_detects_hubs(&auto),
        "executor: {:?}",
        auto.telemetry["adaptive"]
    );
    assert!(
        auto.seconds < 0.8 * detecting.seconds,
        "executor: auto {} s against hierarchical:auto {} s of virtual time",
        auto.seconds,
        detecting.seconds
    );
}
