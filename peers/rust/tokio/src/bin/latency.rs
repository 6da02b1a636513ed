//! `peer-tokio-latency`: send-to-handler latency on plain tokio, the probe of loka's
//! `crates/loka/examples/latency.rs` with the same definition, load and output, so the two can be
//! put side by side (docs/results/latency.md).
//!
//! An actor is what the rest of this peer makes one: a spawned task looping on `recv()` of an
//! unbounded mpsc channel. The driver (the main thread, outside the runtime) sends the Probe
//! actor one message every `--gap-us` µs (sleeping in between), carrying the `Instant` taken just
//! before `send`; the Probe's first act on receiving it is to record `now - sent`. The samples are
//! collected at the end through a `oneshot`.
//!
//! - `idle`: nothing else runs.
//! - `load`: `--load-actors` actors first keep the workers busy, each handling a message by
//!   spinning `--work-ns` nanoseconds and sending itself the next. tokio has no per-actor message
//!   budget to set: its cooperative budget (128 operations per poll, the same count as loka's
//!   default `throughput`) makes a busy task yield.
//!
//! ```sh
//! peer-tokio-latency [--runtime multi-thread|current-thread] [--workers N] [--samples N]
//!                    [--gap-us N] [--load-actors N] [--work-ns N]
//! ```
//!
//! `multi-thread` (the default) runs `--workers` workers (default 2); `current-thread` runs every
//! task on one thread of its own (the driver stays outside it), so `--workers` must be 1 there.
//! Prints one JSON object per mode with the keys of loka's example plus `runtime`. Exits 1 if a
//! check fails: every probe sent must come back as a sample, and under load the load must have
//! been running through the measurement.

use std::process::exit;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::runtime::{Builder, Handle, Runtime};
use tokio::sync::{mpsc, oneshot};

// The statistics and output line are loka's own, so both runtimes are reported alike.
#[path = "../../../../../crates/loka/examples/support/latency_stats.rs"]
mod stats;

enum ProbeMsg {
    /// When the driver called `send`.
    Probe(Instant),
    /// Hands the samples (ns) over and starts a new set.
    Collect(oneshot::Sender<Vec<u64>>),
}

async fn probe(mut rx: mpsc::UnboundedReceiver<ProbeMsg>, capacity: usize) {
    let mut samples = Vec::with_capacity(capacity);
    while let Some(msg) = rx.recv().await {
        match msg {
            // The first thing the handler does: nothing of its own work is counted.
            ProbeMsg::Probe(sent) => samples.push(sent.elapsed().as_nanos() as u64),
            ProbeMsg::Collect(reply) => {
                let _ = reply.send(std::mem::take(&mut samples));
            }
        }
    }
}

/// Spins `work` per message and sends itself the next one, until `stop` is set.
async fn load(work: Duration, stop: Arc<AtomicBool>, handled: Arc<AtomicU64>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    tx.send(()).expect("own mailbox");
    while let Some(()) = rx.recv().await {
        let start = Instant::now();
        while start.elapsed() < work {
            std::hint::spin_loop();
        }
        handled.fetch_add(1, Ordering::Relaxed);
        if stop.load(Ordering::Relaxed) {
            return;
        }
        tx.send(()).expect("own mailbox");
    }
}

struct Options {
    current_thread: bool,
    workers: usize,
    samples: usize,
    gap: Duration,
    load_actors: usize,
    work: Duration,
}

fn fail(message: &str, code: i32) -> ! {
    eprintln!("peer-tokio-latency: {message}");
    exit(code)
}

fn parse() -> Options {
    let (mut current_thread, mut workers) = (false, None);
    let mut o = Options {
        current_thread: false,
        workers: 2,
        samples: 5_000,
        gap: Duration::from_micros(1_000),
        load_actors: 8,
        work: Duration::from_nanos(1_000),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().unwrap_or_default();
        let number = |v: &str| -> u64 {
            v.parse().unwrap_or_else(|_| {
                fail(
                    &format!("{flag} expects a non-negative integer, got `{v}`"),
                    2,
                )
            })
        };
        match flag.as_str() {
            "--runtime" => {
                current_thread = match value.as_str() {
                    "multi-thread" => false,
                    "current-thread" => true,
                    v => fail(
                        &format!("--runtime expects multi-thread or current-thread, got `{v}`"),
                        2,
                    ),
                }
            }
            "--workers" => workers = Some(number(&value).max(1) as usize),
            "--samples" => o.samples = number(&value).max(1) as usize,
            "--gap-us" => o.gap = Duration::from_micros(number(&value)),
            "--load-actors" => o.load_actors = number(&value) as usize,
            "--work-ns" => o.work = Duration::from_nanos(number(&value)),
            other => fail(
                &format!(
                    "unknown flag `{other}` (known: --runtime, --workers, --samples, --gap-us, \
                     --load-actors, --work-ns)"
                ),
                2,
            ),
        }
    }
    o.current_thread = current_thread;
    o.workers = match (current_thread, workers) {
        (true, Some(n)) if n != 1 => fail(
            &format!("current-thread has one thread; --workers must be 1, got {n}"),
            2,
        ),
        (true, _) => 1,
        (false, n) => n.unwrap_or(2),
    };
    o
}

/// Sends `n` probes `gap` apart and returns their latencies, sorted; exits 1 unless every probe
/// came back as a sample.
fn measure(probe: &mpsc::UnboundedSender<ProbeMsg>, n: usize, gap: Duration) -> Vec<u64> {
    for _ in 0..n {
        std::thread::sleep(gap);
        probe
            .send(ProbeMsg::Probe(Instant::now()))
            .expect("probe alive");
    }
    let (reply, answer) = oneshot::channel();
    probe.send(ProbeMsg::Collect(reply)).expect("probe alive");
    let mut samples = answer.blocking_recv().expect("probe answers");
    if samples.len() != n {
        fail(
            &format!("sent {n} probes but got {} samples back", samples.len()),
            1,
        );
    }
    samples.sort_unstable();
    samples
}

fn report(mode: &str, o: &Options, s: &[u64], extra: &str) {
    let runtime = if o.current_thread {
        "tokio-current-thread"
    } else {
        "tokio-multi-thread"
    };
    let head = format!("\"runtime\":\"{runtime}\",");
    println!(
        "{}",
        stats::json_line(&head, mode, o.workers, o.gap, s, extra)
    );
}

fn main() {
    let o = parse();
    let rt: Runtime = if o.current_thread {
        Builder::new_current_thread().enable_all().build()
    } else {
        Builder::new_multi_thread()
            .worker_threads(o.workers)
            .enable_all()
            .build()
    }
    .expect("tokio runtime");
    // A current-thread runtime runs its tasks only inside `block_on`: one thread of its own does
    // that until the end, so the driver sends from outside the runtime as with multi-thread.
    let rt = Arc::new(rt);
    let (end, ended) = oneshot::channel::<()>();
    let driver = o.current_thread.then(|| {
        let rt = rt.clone();
        std::thread::spawn(move || rt.block_on(ended))
    });
    let handle: &Handle = rt.handle();

    let (probe_tx, probe_rx) = mpsc::unbounded_channel();
    let probe_task = handle.spawn(probe(probe_rx, o.samples));
    // A few probes first so the first samples do not pay for cold caches and page faults.
    measure(&probe_tx, 100, o.gap);

    let idle = measure(&probe_tx, o.samples, o.gap);
    report("idle", &o, &idle, "");

    let stop = Arc::new(AtomicBool::new(false));
    let counts: Vec<Arc<AtomicU64>> = (0..o.load_actors).map(|_| Arc::default()).collect();
    let loads: Vec<_> = counts
        .iter()
        .map(|handled| handle.spawn(load(o.work, stop.clone(), handled.clone())))
        .collect();
    let each = || -> Vec<u64> { counts.iter().map(|c| c.load(Ordering::Relaxed)).collect() };
    // Let the load spread over the workers before measuring.
    std::thread::sleep(Duration::from_millis(100));
    let (start, before) = (Instant::now(), each());
    let loaded = measure(&probe_tx, o.samples, o.gap);
    let after = each();
    let rate = (after.iter().sum::<u64>() - before.iter().sum::<u64>()) as f64
        / start.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    // Each load actor must have handled messages during the measurement, or it was no load.
    let still = before.iter().zip(&after).filter(|(b, a)| a == b).count();
    if still > 0 {
        let n = o.load_actors;
        fail(
            &format!("{still} of {n} load actors handled nothing while measured"),
            1,
        );
    }
    report(
        "load",
        &o,
        &loaded,
        &format!(
            ",\"load_actors\":{},\"work_ns\":{},\"load_msgs_per_sec\":{rate:.0}",
            o.load_actors,
            o.work.as_nanos()
        ),
    );

    // Every task ends by itself: the load actors see `stop`, the Probe its closed channel.
    drop(probe_tx);
    rt.block_on(async {
        for task in loads {
            task.await.expect("load task");
        }
        probe_task.await.expect("probe task");
    });
    let _ = end.send(());
    if let Some(driver) = driver {
        driver.join().expect("runtime thread").expect("end signal");
    }
}
