//! The metrics export (feature `metrics`; docs/observability.md): a [`MetricsCollector`] reads a
//! system's counters when asked and publishes them through the `metrics` facade, to whichever
//! recorder is installed (Prometheus, StatsD, OpenTelemetry, …); [`MetricsExporter`] does so
//! from a thread of its own, every interval. The message path is untouched: the collector reads
//! the counters the workers already keep (docs/decisions/0060-metrics-export.md).

use super::snapshot::Snapshot;
use super::System;
use crate::runtime::Shared;
use crate::telemetry::{wait_bucket_upper_ns, WorkerStats, MAX_LEVELS};
use metrics::{Key, KeyName, Label, Level, Metadata, Recorder, SharedString, Unit};
use parking_lot::Mutex;
use std::collections::BTreeSet;
use std::sync::mpsc;
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

/// What every metric of loka is registered with.
static METADATA: Metadata<'static> =
    Metadata::new(module_path!(), Level::INFO, Some(module_path!()));

/// The label of the per-worker series that sums the dedicated threads of `thread` actors.
const DEDICATED: &str = "dedicated";

/// Publishes a system's counters through the [`metrics`] facade each time it is asked
/// ([`collect`](Self::collect)), or every interval from a thread of its own
/// ([`spawn`](Self::spawn)). Feature `metrics`.
///
/// It adds nothing to the message path: each call reads the counters the workers keep anyway
/// (as [`System::snapshot`] does) and hands them to the installed recorder. Counters are
/// published with `Counter::absolute` (the recorder keeps the highest value it was given), so
/// they are exact however often, and from however many collectors, they are published; the
/// queue-wait histogram is published as the samples taken since this collector's previous
/// call. Metric names and labels: docs/observability.md.
///
/// The collector holds the system weakly: it does not keep a dropped system's state alive, and
/// [`collect`](Self::collect) says `false` once that state is gone.
///
/// ```
/// # use loka::{MetricsCollector, System};
/// let system = System::builder().workers(2).build().unwrap();
/// // Install a recorder first (metrics_exporter_prometheus::PrometheusBuilder::install, …).
/// let collector = MetricsCollector::new(&system).label("service", "ingest");
/// collector.describe();
/// assert!(collector.collect());
/// // Or publish every 10 s until the exporter is dropped:
/// let exporter = collector.spawn(std::time::Duration::from_secs(10)).unwrap();
/// exporter.stop();
/// ```
pub struct MetricsCollector {
    shared: Weak<Shared>,
    prefix: String,
    labels: Vec<Label>,
    queue_wait: bool,
    /// Victim-group levels of the machine: the `level` labels of `worker_steals_by_level`.
    levels: usize,
    state: Mutex<State>,
}

/// What a collector remembers between calls.
#[derive(Default)]
struct State {
    /// Built at the first call, after the builder methods.
    keys: Option<Keys>,
    /// Queue-wait samples already published, per worker (then the dedicated threads).
    published_waits: Vec<Vec<u64>>,
    /// Registered actors given a mailbox gauge by the previous call.
    gauged: BTreeSet<String>,
}

/// Every metric key, built once.
struct Keys {
    /// Per worker, then one for the dedicated threads.
    workers: Vec<WorkerKeys>,
    /// In the order of `Stats::system_counters`.
    system: Vec<Key>,
    actors_live: Key,
}

struct WorkerKeys {
    /// In the order of `WorkerStats::COUNTERS`.
    counters: Vec<Key>,
    steals_by_level: Vec<Key>,
    queue_wait: Key,
}

impl std::fmt::Debug for MetricsCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsCollector")
            .field("prefix", &self.prefix)
            .field("labels", &self.labels)
            .field("queue_wait_histogram", &self.queue_wait)
            .finish_non_exhaustive()
    }
}

/// Why [`MetricsCollector::spawn`] started no exporter.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// The interval was zero: the thread would publish without pause.
    #[error("the metrics export interval must be longer than zero")]
    ZeroInterval,
    /// The exporter thread could not be started.
    #[error("could not start the metrics exporter thread: {0}")]
    Spawn(#[source] std::io::Error),
}

impl MetricsCollector {
    /// A collector of `system`'s counters, with metric names prefixed `loka_` and no label
    /// beyond `worker` (per-worker counters) and `actor` (registered actors' mailboxes).
    pub fn new(system: &System) -> Self {
        let layout = &system.shared.machine.layout;
        let levels = (0..system.workers())
            .map(|w| layout.groups(w).len())
            .max()
            .unwrap_or(1)
            .clamp(1, MAX_LEVELS);
        MetricsCollector {
            shared: Arc::downgrade(&system.shared),
            prefix: "loka".to_owned(),
            labels: Vec::new(),
            queue_wait: true,
            levels,
            state: Mutex::new(State::default()),
        }
    }

    /// Prefixes every metric name with `prefix` and `_` instead of `loka_` (an empty prefix: no
    /// prefix at all).
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self.state = Mutex::new(State::default());
        self
    }

    /// Adds the label `key = value` to every metric, to tell several systems of one process
    /// apart (give each collector a different value: two systems published under the same
    /// names and labels would show the larger counter of the two).
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.labels.push(Label::new(key.into(), value.into()));
        self.state = Mutex::new(State::default());
        self
    }

    /// Whether the queue-wait histogram is published (on by default). Each sampled wait is
    /// handed to the recorder as one value, and the runtime samples about one activation in 16:
    /// a system running millions of activations a second hands the recorder hundreds of
    /// thousands of values a second, which a recorder that keeps every value (the Prometheus
    /// exporter until it renders) pays for in memory. The counters cost the same at any load.
    pub fn queue_wait_histogram(mut self, on: bool) -> Self {
        self.queue_wait = on;
        self
    }

    /// The full name of metric `base`.
    fn name(&self, base: &str) -> String {
        if self.prefix.is_empty() {
            base.to_owned()
        } else {
            format!("{}_{base}", self.prefix)
        }
    }

    fn key(&self, base: &str, extra: &[(&'static str, String)]) -> Key {
        let mut labels = self.labels.clone();
        labels.extend(extra.iter().map(|(k, v)| Label::new(*k, v.clone())));
        Key::from_parts(self.name(base), labels)
    }

    fn keys(&self, workers: usize) -> Keys {
        let worker_keys = |worker: String| WorkerKeys {
            counters: WorkerStats::COUNTERS
                .iter()
                .map(|(name, _)| {
                    self.key(
                        &format!("worker_{name}_total"),
                        &[("worker", worker.clone())],
                    )
                })
                .collect(),
            steals_by_level: (0..self.levels)
                .map(|level| {
                    self.key(
                        "worker_steals_by_level_total",
                        &[("worker", worker.clone()), ("level", level.to_string())],
                    )
                })
                .collect(),
            queue_wait: self.key("worker_queue_wait_seconds", &[("worker", worker.clone())]),
        };
        let mut all: Vec<WorkerKeys> = (0..workers).map(|w| worker_keys(w.to_string())).collect();
        all.push(worker_keys(DEDICATED.to_owned()));
        Keys {
            workers: all,
            system: crate::telemetry::Stats::default()
                .system_counters()
                .iter()
                .map(|(name, _, _)| self.key(&format!("{name}_total"), &[]))
                .collect(),
            actors_live: self.key("actors_live", &[]),
        }
    }

    /// Describes every metric (unit and meaning) to the installed recorder, once: recorders
    /// that show descriptions (Prometheus's `# HELP`) show them from then on.
    /// [`spawn`](Self::spawn) calls it first.
    pub fn describe(&self) {
        metrics::with_recorder(|recorder| self.describe_to(recorder));
    }

    fn describe_to(&self, recorder: &dyn Recorder) {
        let describe_counter = |base: String, text: &str| {
            let text = SharedString::from(text.trim().to_owned());
            recorder.describe_counter(KeyName::from(self.name(&base)), Some(Unit::Count), text);
        };
        for (name, doc) in WorkerStats::COUNTERS {
            describe_counter(format!("worker_{name}_total"), doc);
        }
        describe_counter(
            "worker_steals_by_level_total".to_owned(),
            "Successful steals by the level of the victim's group (0: innermost).",
        );
        for (name, doc, _) in crate::telemetry::Stats::default().system_counters() {
            describe_counter(format!("{name}_total"), doc);
        }
        recorder.describe_gauge(
            KeyName::from(self.name("actors_live")),
            Some(Unit::Count),
            SharedString::from("Actors spawned and not yet stopped."),
        );
        recorder.describe_gauge(
            KeyName::from(self.name("actor_mailbox_depth")),
            Some(Unit::Count),
            SharedString::from("User messages in a registered actor's mailbox."),
        );
        recorder.describe_counter(
            KeyName::from(self.name("worker_busy_nanoseconds_total")),
            Some(Unit::Nanoseconds),
            SharedString::from(
                "Time the worker ran actors (sampled: handler_sample_us; virtual under the \
                 simulation).",
            ),
        );
        recorder.describe_counter(
            KeyName::from(self.name("actor_handler_nanoseconds_total")),
            Some(Unit::Nanoseconds),
            SharedString::from(
                "Time a registered actor among the busiest kept a worker busy (sampled: \
                 handler_sample_us).",
            ),
        );
        recorder.describe_histogram(
            KeyName::from(self.name("worker_queue_wait_seconds")),
            Some(Unit::Seconds),
            SharedString::from(
                "Sampled time a woken actor waited in a queue (upper edge of its power-of-two \
                 bucket).",
            ),
        );
    }

    /// Reads the counters and publishes them to the recorder in force on this thread (the
    /// local one inside `metrics::with_local_recorder`, else the global one). Returns `false`,
    /// publishing nothing, once the system's state is gone (the [`System`] dropped and nothing
    /// of it left).
    ///
    /// Install the recorder before the first call: counters published before are published
    /// again, exactly, by the next call, but the histogram samples would be lost.
    pub fn collect(&self) -> bool {
        let Some(shared) = self.shared.upgrade() else {
            return false;
        };
        let snapshot = Snapshot::take(&shared, shared.stats());
        drop(shared);
        metrics::with_recorder(|recorder| self.publish(recorder, &snapshot));
        true
    }

    fn publish(&self, recorder: &dyn Recorder, snapshot: &Snapshot) {
        let stats = &snapshot.stats;
        let mut state = self.state.lock();
        let state = &mut *state;
        let keys = state
            .keys
            .get_or_insert_with(|| self.keys(stats.workers.len()));
        let dedicated = (stats.dedicated_threads > 0).then_some(&snapshot.dedicated);
        let series = stats.workers.iter().map(Some).chain([dedicated]);
        state.published_waits.resize(keys.workers.len(), Vec::new());
        for ((worker, keys), published) in series.zip(&keys.workers).zip(&mut state.published_waits)
        {
            let Some(worker) = worker else { continue };
            for (key, value) in keys.counters.iter().zip(worker.counter_values()) {
                recorder.register_counter(key, &METADATA).absolute(value);
            }
            for (key, &value) in keys.steals_by_level.iter().zip(&worker.steals_by_level) {
                recorder.register_counter(key, &METADATA).absolute(value);
            }
            if self.queue_wait {
                publish_waits(
                    recorder,
                    &keys.queue_wait,
                    &worker.queue_wait_hist,
                    published,
                );
            }
        }
        for (key, (_, _, value)) in keys.system.iter().zip(stats.system_counters()) {
            recorder.register_counter(key, &METADATA).absolute(value);
        }
        recorder
            .register_gauge(&keys.actors_live, &METADATA)
            .set(stats.actors_live() as f64);
        let mut gauged = BTreeSet::new();
        for actor in &snapshot.registered {
            let key = self.key("actor_mailbox_depth", &[("actor", actor.name.clone())]);
            recorder
                .register_gauge(&key, &METADATA)
                .set(actor.mailbox_len as f64);
            gauged.insert(actor.name.clone());
        }
        // A name no longer registered: its gauge drops to zero rather than keep its last depth.
        for gone in state.gauged.difference(&gauged) {
            let key = self.key("actor_mailbox_depth", &[("actor", gone.clone())]);
            recorder.register_gauge(&key, &METADATA).set(0.0);
        }
        state.gauged = gauged;
        if let Some(times) = &snapshot.handler_time {
            self.publish_handler_time(recorder, times);
        }
    }

    /// Handler time (`handler_sample_us`): each worker's busy time, and that of the registered
    /// actors among the busiest, by name. Unregistered actors have no stable name to label a
    /// series with (their ids come and go), so they are left to the snapshot and `loka top`.
    fn publish_handler_time(&self, recorder: &dyn Recorder, times: &super::HandlerTime) {
        for (w, &ns) in times.worker_busy_ns.iter().enumerate() {
            let key = self.key(
                "worker_busy_nanoseconds_total",
                &[("worker", w.to_string())],
            );
            recorder.register_counter(&key, &METADATA).absolute(ns);
        }
        for actor in &times.actors {
            if let Some(name) = &actor.registered {
                let key = self.key(
                    "actor_handler_nanoseconds_total",
                    &[("actor", name.clone())],
                );
                recorder
                    .register_counter(&key, &METADATA)
                    .absolute(actor.handler_ns);
            }
        }
    }

    /// Starts a thread (`loka-metrics`) that [`describe`](Self::describe)s the metrics, then
    /// [`collect`](Self::collect)s every `interval` to the global recorder, until the
    /// [`MetricsExporter`] is stopped or dropped (a last collect then) or the system's state is
    /// gone. Fails on a zero interval or when the thread cannot be started.
    pub fn spawn(self, interval: Duration) -> Result<MetricsExporter, ExportError> {
        if interval.is_zero() {
            return Err(ExportError::ZeroInterval);
        }
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("loka-metrics".to_owned())
            .spawn(move || {
                self.describe();
                while self.collect() {
                    match stopped.recv_timeout(interval) {
                        Err(mpsc::RecvTimeoutError::Timeout) => {}
                        // Stopped (or its handle dropped): publish the counters as they are now.
                        Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                            self.collect();
                            break;
                        }
                    }
                }
            })
            .map_err(ExportError::Spawn)?;
        Ok(MetricsExporter {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

/// Publishes the samples of `hist` not yet in `published` (one value per sample, at the upper
/// edge of its bucket, in seconds) and records them as published.
fn publish_waits(recorder: &dyn Recorder, key: &Key, hist: &[u64], published: &mut Vec<u64>) {
    published.resize(hist.len(), 0);
    let mut histogram = None;
    for (bucket, (&now, before)) in hist.iter().zip(published.iter_mut()).enumerate() {
        let new = now.saturating_sub(*before);
        if new == 0 {
            continue;
        }
        *before = now;
        let histogram =
            histogram.get_or_insert_with(|| recorder.register_histogram(key, &METADATA));
        let seconds = wait_bucket_upper_ns(bucket) as f64 / 1e9;
        histogram.record_many(seconds, usize::try_from(new).unwrap_or(usize::MAX));
    }
}

/// The thread started by [`MetricsCollector::spawn`]. Dropping it stops the thread, as
/// [`stop`](Self::stop) does.
#[derive(Debug)]
pub struct MetricsExporter {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl MetricsExporter {
    /// Stops the thread after one last publication, and waits for it.
    pub fn stop(mut self) {
        self.halt();
    }

    /// Whether the thread still runs (it ends by itself once the system's state is gone).
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    fn halt(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            // A panic of the recorder on that thread ended it: nothing more to stop.
            let _ = thread.join();
        }
    }
}

impl Drop for MetricsExporter {
    fn drop(&mut self) {
        self.halt();
    }
}
