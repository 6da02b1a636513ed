//! Measurements of loka's own costs on this host that the simulation's cost model takes its
//! constants from (docs/simulation.md, *The other constants*). Ignored tests, run by hand:
//!
//! ```sh
//! cargo test --release -p loka-bench --lib calibration -- --ignored --nocapture --test-threads=1
//! ```
//!
//! Each prints the least of several runs (the host is shared: the least disturbed run is the best
//! estimate). None of them runs a benchmark the model is compared with: the constants must come
//! from elsewhere than the figures they predict.

use loka::{Actor, ActorRef, Config, Context, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// A system with one worker of the actor-centric engine: every cost below is one core's.
fn one_worker() -> System {
    let config = Config {
        workers: 1,
        ..Config::default()
    };
    System::from_config(config).expect("a one-worker system")
}

/// Counts what it receives; tells `done` each time it has `expect` more messages.
struct Sink {
    got: u64,
    expect: u64,
    done: mpsc::Sender<Instant>,
}

impl Actor for Sink {
    type Msg = u64;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: u64) {
        self.got += std::hint::black_box(msg) & 1 | 1;
        if self.got % self.expect == 0 {
            self.done.send(Instant::now()).expect("the test waits");
        }
    }
}

/// On `n`: sends `n` messages to the sink in one activation, and reports how long the loop took.
struct Sender {
    sink: ActorRef<u64>,
    took: mpsc::Sender<Duration>,
}

impl Actor for Sender {
    type Msg = u64;
    fn handle(&mut self, _ctx: &mut Context<Self>, n: u64) {
        let start = Instant::now();
        for k in 0..n {
            self.sink.send(k).expect("sink alive");
        }
        self.took.send(start.elapsed()).expect("the test waits");
    }
}

/// `send`: a message's sender's share of `message`. One activation sends a batch to an actor
/// that is queued but cannot run meanwhile (one worker): the loop's time per message is the
/// sender's cost alone; the sink's handling of the batch afterwards is the receiver's.
#[test]
#[ignore = "a measurement, not a test"]
fn calibration_send_cost() {
    const BATCH: u64 = 10_000;
    const BATCHES: u64 = 100;
    let (mut best_send, mut best_receive) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..6 {
        let system = one_worker();
        let (done_tx, done) = mpsc::channel();
        let (took_tx, took) = mpsc::channel();
        let sink = system.spawn(Sink {
            got: 0,
            expect: BATCH,
            done: done_tx,
        });
        let sender = system.spawn(Sender {
            sink: sink.clone(),
            took: took_tx,
        });
        let (mut send, mut total) = (Duration::ZERO, Duration::ZERO);
        for round in 0..BATCHES {
            let start = Instant::now();
            sender.send(BATCH).unwrap();
            let loop_time = took.recv().unwrap();
            let end = done.recv().unwrap();
            if round > 0 {
                // The first batch grows the mailbox's blocks; later ones reuse them.
                send += loop_time;
                total += end - start;
            }
        }
        system.shutdown();
        let n = ((BATCHES - 1) * BATCH) as f64;
        let per_send = send.as_nanos() as f64 / n;
        let per_receive = (total - send).as_nanos() as f64 / n;
        eprintln!("send: {per_send:.1} ns per message; receive and handle: {per_receive:.1} ns");
        best_send = best_send.min(per_send);
        best_receive = best_receive.min(per_receive);
    }
    eprintln!("least: send {best_send:.1} ns, receive {best_receive:.1} ns");
}

/// Stops at its first activation (the start envelope).
struct Child {
    stopped: Arc<AtomicU64>,
}

impl Actor for Child {
    type Msg = ();
    fn handle(&mut self, _ctx: &mut Context<Self>, _msg: ()) {}
    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.stop();
    }
    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.stopped.fetch_add(1, Ordering::Relaxed);
    }
}

/// On `n`: spawns `n` children in one activation.
struct Parent {
    stopped: Arc<AtomicU64>,
}

impl Actor for Parent {
    type Msg = u64;
    fn handle(&mut self, ctx: &mut Context<Self>, n: u64) {
        for _ in 0..n {
            ctx.spawn(Child {
                stopped: Arc::clone(&self.stopped),
            });
        }
    }
}

/// `spawn`: what an actor's whole life costs beyond one activation handling one envelope:
/// spawning it (allocation, registration, the start envelope), its stop and its release. A parent
/// spawns a batch of children that stop at their first activation; the time per child, less the
/// model's `activation` and `message` for that activation, is `spawn`.
#[test]
#[ignore = "a measurement, not a test"]
fn calibration_spawn_cost() {
    const BATCH: u64 = 10_000;
    const BATCHES: u64 = 20;
    let mut best = f64::INFINITY;
    for _ in 0..6 {
        let system = one_worker();
        let stopped = Arc::new(AtomicU64::new(0));
        let parent = system.spawn(Parent {
            stopped: Arc::clone(&stopped),
        });
        let mut total = Duration::ZERO;
        for round in 1..=BATCHES {
            let start = Instant::now();
            parent.send(BATCH).unwrap();
            while stopped.load(Ordering::Relaxed) < round * BATCH {
                std::hint::spin_loop();
            }
            total += start.elapsed();
        }
        system.shutdown();
        let per_child = total.as_nanos() as f64 / (BATCHES * BATCH) as f64;
        eprintln!("one actor's life (spawn, start, stop, release): {per_child:.1} ns");
        best = best.min(per_child);
    }
    eprintln!("least: {best:.1} ns per actor");
}

/// `line_l2`/`line_l3` of the `host` topology: one cache line moving between the two cores of
/// this host (a round trip of a counter two threads hand back and forth, halved).
#[test]
#[ignore = "a measurement, not a test"]
fn calibration_line_cost() {
    const TRIPS: u64 = 100_000;
    let mut best = f64::INFINITY;
    for _ in 0..40 {
        let line = Arc::new(AtomicU64::new(0));
        let other = Arc::clone(&line);
        let echo = std::thread::spawn(move || {
            for i in 0..TRIPS {
                while other.load(Ordering::Acquire) != 2 * i + 1 {
                    std::hint::spin_loop();
                }
                other.store(2 * i + 2, Ordering::Release);
            }
        });
        let start = Instant::now();
        for i in 0..TRIPS {
            line.store(2 * i + 1, Ordering::Release);
            while line.load(Ordering::Acquire) != 2 * i + 2 {
                std::hint::spin_loop();
            }
        }
        let one_way = start.elapsed().as_nanos() as f64 / TRIPS as f64 / 2.0;
        echo.join().unwrap();
        best = best.min(one_way);
    }
    eprintln!("least: one line between the cores, one way: {best:.1} ns");
}
