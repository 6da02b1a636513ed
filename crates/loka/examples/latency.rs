//! Send-to-handler latency: how long a message waits between `ActorRef::send` on a plain thread
//! and the start of its actor's handler, on an idle system and under load.
//!
//! A Probe actor gets messages carrying the `Instant` just before their `send`; its handler
//! records `now - sent`. The driver (the main thread, outside the runtime) sends one probe every
//! `--gap-us` microseconds (sleeping in between, so each probe meets the workers as they are by
//! then), and collects the samples at the end.
//!
//! - `idle`: nothing else runs. With the default gap (1 ms) the workers have parked before each
//!   probe, so the figure includes waking one.
//! - `load`: `--load-actors` actors keep every worker busy first, each handling a message by
//!   spinning `--work-ns` nanoseconds (a handler doing real work) and sending itself the next.
//!   A probe then waits for a worker to get to the Probe actor among them. With `--backlog N`
//!   each load actor starts with `N` messages queued and keeps them queued (each handled message
//!   sends the next): with `N` above the budget, every activation of a load actor finds a backlog
//!   and gulps it, up to 1 ms (`Config::backlog_gulp`; `LOKA_BACKLOG_GULP=0` turns gulps off).
//!
//! ```sh
//! cargo run --release -p loka --example latency -- --workers 2 --samples 5000
//! ```
//!
//! `LOKA_*` environment variables apply (e.g. `LOKA_PIN=false`: workers not pinned to CPUs);
//! the flags override them.
//!
//! Prints one JSON object per mode: exact percentiles of the samples (`p50_ns`, `p90_ns`,
//! `p99_ns`, `p999_ns`, `max_ns`), `hist` (log2 buckets: entry `b` counts samples in
//! `[2^b, 2^(b+1))` ns, the buckets of loka's telemetry queue-wait histogram), and under load the
//! load's own msgs/s. Exits 1 if a check fails: every probe sent must come back as a sample, and
//! under load every load actor must have handled messages during the measurement.
//!
//! `peers/rust/tokio/src/bin/latency.rs` (`peer-tokio-latency`) is the same probe on tokio.

use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[path = "support/latency_stats.rs"]
mod stats;

enum ProbeMsg {
    /// When the driver called `send`.
    Probe(Instant),
    /// Hands the samples (ns) over and starts a new set.
    Collect(ReplyTo<Vec<u64>>),
}

struct Probe {
    samples: Vec<u64>,
}

impl Actor for Probe {
    type Msg = ProbeMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: ProbeMsg) {
        match msg {
            // The first thing the handler does: nothing of the handler's own work is counted.
            ProbeMsg::Probe(sent) => self.samples.push(sent.elapsed().as_nanos() as u64),
            ProbeMsg::Collect(reply) => reply.send(std::mem::take(&mut self.samples)),
        }
    }
}

/// Spins `work` per message and sends itself the next one, until `stop` is set.
struct Load {
    work: Duration,
    stop: Arc<AtomicBool>,
    handled: Arc<AtomicU64>,
}

impl Actor for Load {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, (): ()) {
        let start = Instant::now();
        while start.elapsed() < self.work {
            std::hint::spin_loop();
        }
        self.handled.fetch_add(1, Ordering::Relaxed);
        if !self.stop.load(Ordering::Relaxed) {
            let _ = ctx.myself().send(());
        }
    }
}

struct Options {
    workers: usize,
    samples: usize,
    gap: Duration,
    load_actors: usize,
    work: Duration,
    /// Messages per activation (`SystemBuilder::throughput`); `None`: loka's default.
    throughput: Option<usize>,
    /// Messages each load actor keeps queued (at least 1).
    backlog: usize,
}

fn parse() -> Options {
    let mut o = Options {
        workers: 2,
        samples: 5_000,
        gap: Duration::from_micros(1_000),
        load_actors: 8,
        work: Duration::from_nanos(1_000),
        throughput: None,
        backlog: 1,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().unwrap_or_default();
        let number = |v: &str| -> u64 {
            v.parse().unwrap_or_else(|_| {
                eprintln!("error: {flag} expects a non-negative integer, got `{v}`");
                std::process::exit(2)
            })
        };
        match flag.as_str() {
            "--workers" => o.workers = number(&value) as usize,
            "--samples" => o.samples = number(&value).max(1) as usize,
            "--gap-us" => o.gap = Duration::from_micros(number(&value)),
            "--load-actors" => o.load_actors = number(&value) as usize,
            "--work-ns" => o.work = Duration::from_nanos(number(&value)),
            "--throughput" => o.throughput = Some(number(&value).max(1) as usize),
            "--backlog" => o.backlog = number(&value).max(1) as usize,
            other => {
                eprintln!(
                    "error: unknown flag `{other}` (known: --workers, --samples, --gap-us, \
                     --load-actors, --work-ns, --throughput, --backlog)"
                );
                std::process::exit(2);
            }
        }
    }
    o
}

/// Sends `n` probes `gap` apart and returns their latencies, sorted; exits 1 unless every probe
/// came back as a sample.
fn measure(probe: &ActorRef<ProbeMsg>, n: usize, gap: Duration) -> Vec<u64> {
    for _ in 0..n {
        std::thread::sleep(gap);
        probe.send(ProbeMsg::Probe(Instant::now())).expect("alive");
    }
    let mut samples = probe
        .ask(ProbeMsg::Collect)
        .expect("alive")
        .wait()
        .expect("reply");
    if samples.len() != n {
        eprintln!(
            "error: sent {n} probes but got {} samples back",
            samples.len()
        );
        std::process::exit(1);
    }
    samples.sort_unstable();
    samples
}

fn report(mode: &str, o: &Options, s: &[u64], extra: &str) {
    println!("{}", stats::json_line("", mode, o.workers, o.gap, s, extra));
}

fn main() {
    let o = parse();
    let exit = |e: loka::ConfigError| -> ! {
        eprintln!("error: {e}");
        std::process::exit(1)
    };
    // `LOKA_*` variables apply first (e.g. `LOKA_PIN=false`); the flags override them.
    let mut builder = System::builder()
        .env()
        .unwrap_or_else(|e| exit(e))
        .workers(o.workers);
    if let Some(throughput) = o.throughput {
        builder = builder.throughput(throughput);
    }
    let system = builder.build().unwrap_or_else(|e| exit(e));
    let probe = system.spawn(Probe {
        samples: Vec::with_capacity(o.samples),
    });
    // A few probes first so the first samples do not pay for cold caches and page faults.
    measure(&probe, 100, o.gap);

    let idle = measure(&probe, o.samples, o.gap);
    report("idle", &o, &idle, "");

    let stop = Arc::new(AtomicBool::new(false));
    let counts: Vec<Arc<AtomicU64>> = (0..o.load_actors).map(|_| Arc::default()).collect();
    for handled in &counts {
        let load = system.spawn(Load {
            work: o.work,
            stop: stop.clone(),
            handled: handled.clone(),
        });
        for _ in 0..o.backlog {
            load.send(()).expect("alive");
        }
    }
    let each = || -> Vec<u64> { counts.iter().map(|c| c.load(Ordering::Relaxed)).collect() };
    // Let the load spread over the workers before measuring.
    std::thread::sleep(Duration::from_millis(100));
    let (start, before) = (Instant::now(), each());
    let loaded = measure(&probe, o.samples, o.gap);
    let after = each();
    let rate = (after.iter().sum::<u64>() - before.iter().sum::<u64>()) as f64
        / start.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    // Each load actor must have handled messages during the measurement, or it was no load.
    let still = before.iter().zip(&after).filter(|(b, a)| a == b).count();
    if still > 0 {
        eprintln!(
            "error: {still} of {} load actors handled nothing while measured",
            o.load_actors
        );
        std::process::exit(1);
    }
    report(
        "load",
        &o,
        &loaded,
        &format!(
            ",\"load_actors\":{},\"work_ns\":{},\"throughput\":{},\"backlog\":{},\"backlog_gulp\":{},\"load_msgs_per_sec\":{rate:.0}",
            o.load_actors,
            o.work.as_nanos(),
            system.config().throughput,
            o.backlog,
            system.config().backlog_gulp
        ),
    );
    drop(probe);
    system.run_until_idle();
    system.shutdown();
}
