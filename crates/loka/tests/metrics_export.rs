//! The metrics export (feature `metrics`; docs/observability.md): a known workload — messages to
//! one registered actor, spawns, a panic under a supervisor, dead letters behind a stop, a
//! `thread` actor — published through a recorder, and every figure checked exactly: each counter
//! of `System::stats` equals its metric, per worker and system-wide; publishing twice counts
//! nothing twice; the queue-wait histogram holds each sample once. Then the exporter thread into
//! a Prometheus recorder, rendered to text.

use loka::exec_policy::ExecPolicy;
use loka::supervisor::{ChildSpec, Strategy, SupervisorSpec};
use loka::{Actor, Context, ExportError, MetricsCollector, Snapshot, SpawnOptions, System};
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

const WORKERS: usize = 2;

/// Counts what it is sent.
struct Sink(Arc<AtomicU64>);

impl Actor for Sink {
    type Msg = u64;
    fn handle(&mut self, _ctx: &mut Context<Self>, _msg: u64) {
        self.0.fetch_add(1, SeqCst);
    }
}

/// Panics when told to.
struct Fragile;

impl Actor for Fragile {
    type Msg = bool;
    fn handle(&mut self, _ctx: &mut Context<Self>, panic: bool) {
        assert!(!panic, "asked to panic");
    }
}

/// Waits at its first message until the test lets go, then stops: what was queued behind it
/// becomes dead letters.
struct Stopper(mpsc::Receiver<()>);

impl Actor for Stopper {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _msg: ()) {
        let _ = self.0.recv_timeout(Duration::from_secs(30));
        ctx.stop();
    }
}

/// One of two players passing a ball back and forth: every pass wakes the other from a worker,
/// the wake-ups whose queue wait the runtime samples.
struct Player(Option<loka::ActorRef<Pass>>);

enum Pass {
    Partner(loka::ActorRef<Pass>),
    Ball(u64),
}

impl Actor for Player {
    type Msg = Pass;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: Pass) {
        match msg {
            Pass::Partner(partner) => self.0 = Some(partner),
            Pass::Ball(0) => self.0 = None, // game over: let go of the partner
            Pass::Ball(n) => {
                if let Some(partner) = &self.0 {
                    partner.send(Pass::Ball(n - 1)).unwrap();
                }
            }
        }
    }
}

/// Series name and sorted labels.
type Series = (String, Vec<(String, String)>);

/// What the recorder holds: counters and gauges as numbers, histograms as their values.
struct Published(BTreeMap<Series, DebugValue>);

impl Published {
    /// Takes what `snapshotter`'s recorder holds (counters and gauges read back as zero and
    /// histograms empty until the next publication).
    fn take(snapshotter: &Snapshotter) -> Published {
        let mut map = BTreeMap::new();
        for (key, _, _, value) in snapshotter.snapshot().into_vec() {
            let key = key.key();
            let mut labels: Vec<(String, String)> = key
                .labels()
                .map(|l| (l.key().to_owned(), l.value().to_owned()))
                .collect();
            labels.sort();
            map.insert((key.name().to_owned(), labels), value);
        }
        Published(map)
    }

    /// The counter `name` with exactly `labels`, if published.
    fn counter(&self, name: &str, labels: &[(&str, &str)]) -> Option<u64> {
        let mut labels: Vec<(String, String)> = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        labels.sort();
        match self.0.get(&(name.to_owned(), labels)) {
            Some(DebugValue::Counter(n)) => Some(*n),
            Some(other) => panic!("{name} is not a counter: {other:?}"),
            None => None,
        }
    }

    /// The counter `name` with exactly `labels`; fails if it was not published.
    fn count(&self, name: &str, labels: &[(&str, &str)]) -> u64 {
        self.counter(name, labels)
            .unwrap_or_else(|| panic!("{name}{labels:?} was not published"))
    }

    /// The sum of counter `name` over every label set.
    fn sum(&self, name: &str) -> u64 {
        self.0
            .iter()
            .filter(|((n, _), _)| n == name)
            .map(|(_, v)| match v {
                DebugValue::Counter(n) => *n,
                other => panic!("{name} is not a counter: {other:?}"),
            })
            .sum()
    }

    fn gauge(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let labels = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        match self.0.get(&(name.to_owned(), labels)) {
            Some(DebugValue::Gauge(g)) => g.into_inner(),
            other => panic!("{name}: {other:?}"),
        }
    }

    /// Values of every histogram `name`, over all label sets.
    fn histogram_values(&self, name: &str) -> usize {
        self.0
            .iter()
            .filter(|((n, _), _)| n == name)
            .map(|(_, v)| match v {
                DebugValue::Histogram(values) => values.len(),
                other => panic!("{name} is not a histogram: {other:?}"),
            })
            .sum()
    }

    /// Every counter of `System::snapshot` is published, between its value in `lo` (read just
    /// before the publication) and in `hi` (just after): each numeric field `f` of a worker's
    /// entry as `loka_worker_f_total{worker}`, of `dedicated` the same with
    /// `worker="dedicated"`, each numeric top-level field `f` as `loka_f_total`. Exact for every
    /// counter the two reads agree on; on a quiescent system only the idle workers' own counters
    /// (parks, steal attempts) may still move between them.
    fn assert_between(&self, lo: &Snapshot, hi: &Snapshot) {
        let within = |name: &str, got: u64, lo: u64, hi: u64| {
            assert!(
                (lo..=hi).contains(&got),
                "{name}: published {got}, read {lo} then {hi}"
            );
        };
        let mut series = Vec::new();
        for (w, (lo, hi)) in lo.stats.workers.iter().zip(&hi.stats.workers).enumerate() {
            series.push((w.to_string(), lo, hi));
        }
        if lo.stats.dedicated_threads > 0 {
            series.push(("dedicated".to_owned(), &lo.dedicated, &hi.dedicated));
        }
        for (worker, lo, hi) in series {
            let lo_json = serde_json::to_value(lo).unwrap();
            let hi_json = serde_json::to_value(hi).unwrap();
            for (field, value) in lo_json.as_object().unwrap() {
                if field.starts_with("queue_wait_ns_") {
                    continue; // percentiles, derived from the histogram
                }
                if let Some(low) = value.as_u64() {
                    let high = hi_json[field].as_u64().unwrap();
                    let name = format!("loka_worker_{field}_total");
                    within(
                        &format!("{name}{{worker={worker}}}"),
                        self.count(&name, &[("worker", &worker)]),
                        low,
                        high,
                    );
                }
            }
            for (level, (&low, &high)) in lo
                .steals_by_level
                .iter()
                .zip(&hi.steals_by_level)
                .enumerate()
            {
                let level = level.to_string();
                let labels = [("worker", worker.as_str()), ("level", level.as_str())];
                match self.counter("loka_worker_steals_by_level_total", &labels) {
                    Some(n) => within(
                        &format!("steals at level {level}, worker {worker}"),
                        n,
                        low,
                        high,
                    ),
                    None => assert_eq!(high, 0, "level {level} has steals but no series"),
                }
            }
        }
        let lo_json = serde_json::to_value(&lo.stats).unwrap();
        let hi_json = serde_json::to_value(&hi.stats).unwrap();
        for (field, value) in lo_json.as_object().unwrap() {
            if let Some(low) = value.as_u64() {
                let name = format!("loka_{field}_total");
                let high = hi_json[field].as_u64().unwrap();
                within(&name, self.count(&name, &[]), low, high);
            }
        }
    }
}

#[test]
fn every_counter_is_published_exactly_once_per_worker() {
    const MESSAGES: u64 = 10_000;
    const SPAWNS: u64 = 7;
    const THREAD_MESSAGES: u64 = 50;
    const PASSES: u64 = 4_000;

    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let system = System::builder().workers(WORKERS).build().unwrap();
    let collector = MetricsCollector::new(&system);
    let publish = || metrics::with_local_recorder(&recorder, || assert!(collector.collect()));
    metrics::with_local_recorder(&recorder, || collector.describe());
    let mut wait_values = 0;

    let seen = Arc::new(AtomicU64::new(0));
    let sink = system.spawn(Sink(Arc::clone(&seen)));
    system.register("sink", &sink).unwrap();
    system.run_until_idle();
    publish();
    let before = Published::take(&snapshotter);
    wait_values += before.histogram_values("loka_worker_queue_wait_seconds");
    let messages_before = before.sum("loka_worker_messages_total");
    let activations_before = before.sum("loka_worker_activations_total");
    for w in 0..WORKERS {
        let w = w.to_string();
        before.count("loka_worker_messages_total", &[("worker", w.as_str())]);
        before.count("loka_worker_activations_total", &[("worker", w.as_str())]);
        before.count("loka_worker_parks_total", &[("worker", w.as_str())]);
        before.count("loka_worker_exec_home_pu_total", &[("worker", w.as_str())]);
        before.count(
            "loka_worker_steals_by_level_total",
            &[("worker", w.as_str()), ("level", "0")],
        );
    }
    assert_eq!(
        before.counter("loka_worker_messages_total", &[("worker", "dedicated")]),
        None
    );
    assert_eq!(before.counter("loka_worker_messages_total", &[]), None);

    // N messages to one actor: exactly N more messages handled, in at least N / (the most one
    // activation takes) activations. Published twice: still counted once.
    for i in 0..MESSAGES {
        sink.send(i).unwrap();
    }
    system.run_until_idle();
    assert_eq!(seen.load(SeqCst), MESSAGES);
    publish();
    publish();
    let after = Published::take(&snapshotter);
    wait_values += after.histogram_values("loka_worker_queue_wait_seconds");
    assert_eq!(
        after.sum("loka_worker_messages_total") - messages_before,
        MESSAGES
    );
    let activations = after.sum("loka_worker_activations_total") - activations_before;
    // An activation that finds a backlog gulps up to `backlog_gulp` messages
    // (docs/configuration.md), else at most `throughput`.
    let most = system.config().throughput.max(system.config().backlog_gulp) as u64;
    assert!(
        (MESSAGES.div_ceil(most)..=MESSAGES).contains(&activations),
        "{activations} activations for {MESSAGES} messages, at most {most} each"
    );
    // Wake-ups by a plain thread's sends: at least one, at most one per message.
    let woken = after.count("loka_external_sends_total", &[])
        - before.count("loka_external_sends_total", &[]);
    assert!((1..=MESSAGES).contains(&woken), "{woken} external wake-ups");
    assert_eq!(
        after.gauge("loka_actor_mailbox_depth", &[("actor", "sink")]),
        0.0
    );

    // Spawns, a panic under a supervisor, two dead letters, a `thread` actor.
    let spawned_before = after.count("loka_actors_spawned_total", &[]);
    for _ in 0..SPAWNS {
        system.spawn(Sink(Arc::new(AtomicU64::new(0))));
    }
    system.run_until_idle();
    publish();
    let spawned = Published::take(&snapshotter);
    wait_values += spawned.histogram_values("loka_worker_queue_wait_seconds");
    assert_eq!(
        spawned.count("loka_actors_spawned_total", &[]) - spawned_before,
        SPAWNS
    );

    let spec = SupervisorSpec::new(Strategy::OneForOne)
        .child(ChildSpec::new("fragile", || Fragile))
        .unwrap();
    let supervisor = system.spawn_supervisor(spec).unwrap();
    let fragile = supervisor.child::<bool>("fragile").unwrap();
    fragile.send(true).unwrap();
    system.run_until_idle();
    fragile.send(false).unwrap(); // the restarted instance handles it
    system.run_until_idle();

    let (release, gate) = mpsc::channel();
    let stopper = system.spawn(Stopper(gate));
    for _ in 0..3 {
        stopper.send(()).unwrap();
    }
    release.send(()).unwrap();
    system.run_until_idle();

    let (a, b) = (system.spawn(Player(None)), system.spawn(Player(None)));
    a.send(Pass::Partner(b.clone())).unwrap();
    b.send(Pass::Partner(a.clone())).unwrap();
    a.send(Pass::Ball(PASSES)).unwrap();
    system.run_until_idle();

    let threaded = system.spawn_with(
        Sink(Arc::new(AtomicU64::new(0))),
        SpawnOptions::new().exec(ExecPolicy::Thread),
    );
    for i in 0..THREAD_MESSAGES {
        threaded.send(i).unwrap();
    }
    system.run_until_idle();

    let lo = system.snapshot();
    publish();
    let hi = system.snapshot();
    let last = Published::take(&snapshotter);
    wait_values += last.histogram_values("loka_worker_queue_wait_seconds");
    assert_eq!(last.count("loka_panics_total", &[]), 1);
    assert_eq!(last.count("loka_restarts_total", &[]), 1);
    assert_eq!(last.count("loka_dead_letters_total", &[]), 2);
    assert_eq!(last.count("loka_dedicated_threads_total", &[]), 1);
    assert!(
        last.count("loka_worker_messages_total", &[("worker", "dedicated")]) >= THREAD_MESSAGES,
        "the thread actor's messages are under worker=\"dedicated\""
    );

    // The system is quiescent: every counter of the snapshot is its metric.
    last.assert_between(&lo, &hi);
    for exact in [
        "messages",
        "activations",
        "spawned",
        "stopped",
        "queue_wait_samples",
    ] {
        let name = format!("loka_worker_{exact}_total");
        assert_eq!(
            last.sum(&name),
            serde_json::to_value(&hi.stats.total).unwrap()[exact],
            "{name}"
        );
    }
    assert_eq!(
        last.gauge("loka_actors_live", &[]),
        hi.stats.actors_live() as f64
    );
    // Each queue-wait sample was published once, over all the publications.
    let samples: u64 = hi.stats.total.queue_wait_hist.iter().sum();
    assert!(
        samples > 0,
        "{PASSES} wake-ups from workers and no queue-wait sample"
    );
    assert_eq!(wait_values as u64, samples);
    assert_eq!(samples, hi.stats.total.queue_wait_samples);

    // Unregistered: its gauge drops to zero.
    system.unregister("sink");
    publish();
    let gone = Published::take(&snapshotter);
    assert_eq!(
        gone.gauge("loka_actor_mailbox_depth", &[("actor", "sink")]),
        0.0
    );
}

#[test]
fn the_exporter_thread_publishes_to_prometheus() {
    let handle = metrics_exporter_prometheus::PrometheusBuilder::new()
        .install_recorder()
        .unwrap();
    let system = System::builder().workers(WORKERS).build().unwrap();
    assert!(matches!(
        MetricsCollector::new(&system).spawn(Duration::ZERO),
        Err(ExportError::ZeroInterval)
    ));
    let exporter = MetricsCollector::new(&system)
        .label("system", "t")
        .spawn(Duration::from_millis(10))
        .unwrap();
    let seen = Arc::new(AtomicU64::new(0));
    let sink = system.spawn(Sink(Arc::clone(&seen)));
    for i in 0..1_000 {
        sink.send(i).unwrap();
    }
    system.run_until_idle();
    exporter.stop(); // publishes once more
    let text = handle.render();
    let stats = system.stats();
    let mut messages = 0;
    for w in 0..WORKERS {
        let prefix = format!("loka_worker_messages_total{{system=\"t\",worker=\"{w}\"}} ");
        let line = text
            .lines()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("no `{prefix}` in:\n{text}"));
        messages += line[prefix.len()..].trim().parse::<u64>().unwrap();
    }
    assert_eq!(messages, stats.total.messages);
    assert!(
        text.contains(
            "# HELP loka_worker_messages_total Messages (and control envelopes) handled."
        ),
        "{text}"
    );
    assert!(
        text.contains("loka_dead_letters_total{system=\"t\"} 0"),
        "{text}"
    );

    // The exporter ends by itself once the system's state is gone.
    let exporter = MetricsCollector::new(&system)
        .spawn(Duration::from_millis(5))
        .unwrap();
    drop(sink);
    drop(system);
    let deadline = Instant::now() + Duration::from_secs(10);
    while exporter.is_running() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(!exporter.is_running(), "the exporter outlived its system");
}

/// Charges 50 µs of compute per message (virtual under the simulation).
struct Busy;

impl Actor for Busy {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _msg: ()) {
        ctx.charge(Duration::from_micros(50));
    }
}

/// Handler time (`handler_sample_us`) under the simulation, where it is exact: each worker's busy
/// time and the registered actor's handler time are published as the snapshot says, to the
/// nanosecond; an unregistered actor gets no series.
#[test]
fn handler_time_is_published_per_worker_and_per_registered_actor() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let system = System::builder()
        .engine(loka::EngineKind::Sim)
        .workers(WORKERS)
        .handler_sample_us(1_000)
        .build()
        .unwrap();
    let busy = system.spawn(Busy);
    let other = system.spawn(Busy);
    system.register("busy", &busy).unwrap();
    for _ in 0..100 {
        busy.send(()).unwrap();
        other.send(()).unwrap();
    }
    system.run_until_idle();
    let collector = MetricsCollector::new(&system);
    metrics::with_local_recorder(&recorder, || assert!(collector.collect()));
    let published = Published::take(&snapshotter);
    let times = system.snapshot().handler_time.expect("recorded");
    for (w, &ns) in times.worker_busy_ns.iter().enumerate() {
        let w = w.to_string();
        assert_eq!(
            published.count("loka_worker_busy_nanoseconds_total", &[("worker", &w)]),
            ns
        );
    }
    let registered = times.actors.iter().find(|a| a.id == busy.id()).unwrap();
    assert!(registered.handler_ns >= 100 * 50_000, "{times:?}");
    assert_eq!(
        published.count("loka_actor_handler_nanoseconds_total", &[("actor", "busy")]),
        registered.handler_ns
    );
    assert_eq!(
        published.sum("loka_actor_handler_nanoseconds_total"),
        registered.handler_ns,
        "the unregistered actor has no series"
    );
}
