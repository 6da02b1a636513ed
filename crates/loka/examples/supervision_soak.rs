//! Supervision soak: a tree of 10,000 actors — a root supervisor, 100 sub-supervisors, pools of
//! workers below them — takes a stream of messages of which 1% make their worker panic. Every
//! panic restarts the worker in place. Checks, and exits non-zero if one fails:
//!
//! * **nothing lost but the panicking messages**: handled + dropped-by-a-panic = sent, the
//!   supervisors' `lost` counters equal the panics, no dead letter;
//! * **order kept across restarts**: each worker sees its messages in the order they were sent
//!   (the last sequence number seen lives outside the worker's state, so it survives restarts);
//! * **memory flat**: resident memory (`/proc/self/statm`) sampled after every batch grows by
//!   less than 8 MiB or 5% from the end of the warm-up to the end.
//!
//! Prints messages/s, restarts/s and the RSS samples.
//!
//! ```text
//! cargo run --release -p loka --example supervision_soak                      # CI size: 10^6 messages
//! cargo run --release -p loka --example supervision_soak -- --messages 10000000   # the big size
//! ```
//!
//! Options (or environment variables): `--messages N` (`SOAK_MESSAGES`, default 1,000,000),
//! `--actors N` (`SOAK_ACTORS`, default 10,000), `--workers N` (`SOAK_WORKERS`, default: the
//! machine's), `--batches N` (`SOAK_BATCHES`, default 20), `--panic-every N` (`SOAK_PANIC_EVERY`,
//! default 100: one message in 100 panics; 0: none).

use loka::supervisor::{Restart, Strategy, SupervisorMsg, SupervisorRef, SupervisorSpec};
use loka::{Actor, ActorRef, Context, System};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One message: its sequence number among those sent to its worker, and whether it panics.
struct Work {
    seq: u64,
    panic: bool,
}

/// A worker: counters that outlive its instances (its factory hands them to each).
struct Worker {
    /// The last sequence number seen by any instance of this worker.
    last: Arc<AtomicU64>,
    totals: Arc<Totals>,
}

#[derive(Default)]
struct Totals {
    handled: AtomicU64,
    panicked: AtomicU64,
    out_of_order: AtomicU64,
}

impl Actor for Worker {
    type Msg = Work;
    fn handle(&mut self, _ctx: &mut Context<Self>, work: Work) {
        if self.last.swap(work.seq, Relaxed) >= work.seq {
            self.totals.out_of_order.fetch_add(1, Relaxed);
        }
        if work.panic {
            self.totals.panicked.fetch_add(1, Relaxed);
            panic!("message {} asked to panic", work.seq);
        }
        self.totals.handled.fetch_add(1, Relaxed);
    }
}

struct Options {
    messages: u64,
    actors: usize,
    workers: Option<usize>,
    batches: u64,
    /// One message in this many panics (0: none).
    panic_every: u64,
}

fn options() -> Options {
    let env = |name: &str| std::env::var(name).ok();
    let get = |flag: &str, var: &str| -> Option<String> {
        let args: Vec<String> = std::env::args().collect();
        let at = args.iter().position(|a| a == flag);
        at.and_then(|i| args.get(i + 1).cloned())
            .or_else(|| env(var))
    };
    let number = |s: Option<String>, what: &str| {
        s.map(|s| {
            s.replace('_', "")
                .parse::<u64>()
                .unwrap_or_else(|_| panic!("{what}: not a number: {s}"))
        })
    };
    Options {
        messages: number(get("--messages", "SOAK_MESSAGES"), "messages").unwrap_or(1_000_000),
        actors: number(get("--actors", "SOAK_ACTORS"), "actors").unwrap_or(10_000) as usize,
        workers: number(get("--workers", "SOAK_WORKERS"), "workers").map(|w| w as usize),
        batches: number(get("--batches", "SOAK_BATCHES"), "batches").unwrap_or(20),
        panic_every: number(get("--panic-every", "SOAK_PANIC_EVERY"), "panic-every").unwrap_or(100),
    }
}

/// Resident memory in bytes, from `/proc/self/statm` (0 where there is none).
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    // SAFETY: sysconf only reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as u64;
    pages * page
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

fn main() -> ExitCode {
    let options = options();
    // 10^5 panics would each print a backtrace line: count them instead.
    std::panic::set_hook(Box::new(|_| {}));
    let mut builder = System::builder();
    if let Some(workers) = options.workers {
        builder = builder.workers(workers);
    }
    let system = builder.build().expect("a system");
    let totals = Arc::new(Totals::default());

    // The tree: root → subs → pools. actors = 1 + subs + subs × pool.
    let subs = ((options.actors as f64).sqrt() as usize).max(1);
    let pool = (options.actors.saturating_sub(1 + subs))
        .div_ceil(subs)
        .max(1);
    let intensity = (1_000_000, Duration::from_secs(1)); // a restart storm is the point here
    let mut root = SupervisorSpec::new(Strategy::OneForOne);
    for s in 0..subs {
        let mut sub = SupervisorSpec::new(Strategy::OneForOne)
            .max_restarts(intensity.0, intensity.1)
            .unwrap();
        for w in 0..pool {
            let last = Arc::new(AtomicU64::new(0));
            let totals = Arc::clone(&totals);
            let child = loka::supervisor::ChildSpec::new(format!("w{s}-{w}"), move || Worker {
                last: Arc::clone(&last),
                totals: Arc::clone(&totals),
            })
            .restart(Restart::Permanent);
            sub = sub.child(child).unwrap();
        }
        let sub = loka::supervisor::ChildSpec::supervisor(format!("sub-{s}"), sub);
        root = root.child(sub).unwrap();
    }
    let started = Instant::now();
    let root = system.spawn_supervisor(root).expect("the root supervisor");
    let subs: Vec<SupervisorRef> = root
        .children::<SupervisorMsg>()
        .unwrap()
        .into_iter()
        .map(SupervisorRef::new)
        .collect();
    let workers: Vec<ActorRef<Work>> = subs
        .iter()
        .flat_map(|sub| sub.children::<Work>().unwrap())
        .collect();
    system.run_until_idle();
    let actors = 1 + subs.len() + workers.len();
    println!(
        "tree: {actors} actors (1 root, {} supervisors, {} workers) on {} workers, built in {:.1?}",
        subs.len(),
        workers.len(),
        system.workers(),
        started.elapsed()
    );

    // Warm-up: a burst of 64 messages to each worker, so that every mailbox grows to its working
    // size (a mailbox keeps one spare block once it held more than its small first block:
    // docs/decisions/0013-mailbox-first-block-and-spare.md) before memory is measured. Not counted below.
    let mut next_seq = vec![0u64; workers.len()];
    for (w, worker) in workers.iter().enumerate() {
        for _ in 0..64 {
            next_seq[w] += 1;
            let _ = worker.send(Work {
                seq: next_seq[w],
                panic: false,
            });
        }
    }
    system.run_until_idle();
    let warm_up = totals.handled.swap(0, Relaxed);
    println!("warm-up: {warm_up} messages, rss {:.1} MiB", mib(rss()));

    // Send in batches, waiting for each to be handled: the mailboxes stay short, so resident
    // memory measures what the restarts keep, not the backlog.
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut sent = 0u64;
    let mut panics = 0u64;
    let mut samples = vec![rss()];
    let batch = options.messages.div_ceil(options.batches.max(1));
    let t = Instant::now();
    while sent < options.messages {
        let end = (sent + batch).min(options.messages);
        for i in sent..end {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let w = (rng % workers.len() as u64) as usize;
            next_seq[w] += 1;
            let every = options.panic_every;
            let panic = every > 0 && i % every == every - 1;
            panics += u64::from(panic);
            let work = Work {
                seq: next_seq[w],
                panic,
            };
            if workers[w].send(work).is_err() {
                eprintln!("send to worker {w} refused");
            }
        }
        sent = end;
        system.run_until_idle();
        samples.push(rss());
    }
    let elapsed = t.elapsed();

    let lost: u64 = subs.iter().map(|s| s.stats().unwrap().lost).sum();
    let restarts: u64 = subs.iter().map(|s| s.stats().unwrap().restarts).sum();
    let handled = totals.handled.load(Relaxed);
    let stats = system.stats();
    // The first batch's restarts bring the supervisors' queues and the allocator's pools to
    // their working sizes.
    let warm = samples[1.min(samples.len() - 1)];
    let end = *samples.last().unwrap();
    let growth = end.saturating_sub(warm);
    let allowed = (8 << 20).max(warm / 20);
    println!(
        "sent {sent} messages, {panics} of them panicking, in {elapsed:.2?}: {:.0} messages/s, {:.0} restarts/s",
        sent as f64 / elapsed.as_secs_f64(),
        restarts as f64 / elapsed.as_secs_f64()
    );
    println!(
        "handled {handled}, lost to panics {lost} (supervisors) / {} (workers), restarts {restarts} (supervisors) / {} (system), dead letters {}, out of order {}",
        totals.panicked.load(Relaxed),
        stats.restarts,
        stats.dead_letters,
        totals.out_of_order.load(Relaxed)
    );
    let shown: Vec<String> = samples.iter().map(|&s| format!("{:.1}", mib(s))).collect();
    println!("rss MiB per batch: {}", shown.join(" "));
    println!(
        "rss: start {:.1} MiB, after warm-up {:.1} MiB, end {:.1} MiB (grew {:.1} MiB, allowed {:.1})",
        mib(samples[0]),
        mib(warm),
        mib(end),
        mib(growth),
        mib(allowed)
    );

    let mut failed = Vec::new();
    if handled + panics != sent {
        failed.push(format!(
            "handled {handled} + panicking {panics} != sent {sent}"
        ));
    }
    if lost != panics || totals.panicked.load(Relaxed) != panics {
        failed.push(format!("lost {lost} != panics {panics}"));
    }
    if restarts != panics || stats.restarts != panics {
        failed.push(format!(
            "restarts {restarts} (system {}) != panics {panics}",
            stats.restarts
        ));
    }
    if stats.dead_letters != 0 {
        failed.push(format!("{} dead letters", stats.dead_letters));
    }
    if totals.out_of_order.load(Relaxed) != 0 {
        failed.push("messages out of order".into());
    }
    if growth > allowed {
        failed.push(format!("rss grew {:.1} MiB after the warm-up", mib(growth)));
    }
    drop((workers, subs, root));
    let report = system.shutdown_timeout(Duration::from_secs(30));
    if !report.is_clean() {
        failed.push(format!("shutdown not clean: {report:?}"));
    }
    if failed.is_empty() {
        println!("ok");
        ExitCode::SUCCESS
    } else {
        for f in &failed {
            eprintln!("FAILED: {f}");
        }
        ExitCode::FAILURE
    }
}
