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

/// Answers every `k`-th message with one message to the driver.
struct Echo {
    got: u64,
    k: u64,
    driver: Option<ActorRef<u64>>,
}

enum EchoMsg {
    Driver(ActorRef<u64>),
    Item(u64),
}

impl Actor for Echo {
    type Msg = EchoMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: EchoMsg) {
        match msg {
            EchoMsg::Driver(driver) => self.driver = Some(driver),
            EchoMsg::Item(v) => {
                self.got += std::hint::black_box(v) & 1 | 1;
                if self.got == self.k {
                    self.got = 0;
                    let driver = self.driver.as_ref().expect("driver set");
                    driver.send(0).expect("driver alive");
                }
            }
        }
    }
}

/// On each message: sends the next batch of `k` to the echo, until `rounds` batches went out.
struct Driver {
    echo: ActorRef<EchoMsg>,
    k: u64,
    rounds: u64,
    done: mpsc::Sender<Instant>,
}

impl Actor for Driver {
    type Msg = u64;
    fn handle(&mut self, _ctx: &mut Context<Self>, _msg: u64) {
        if self.rounds == 0 {
            self.done.send(Instant::now()).expect("the test waits");
            return;
        }
        self.rounds -= 1;
        for i in 0..self.k {
            self.echo.send(EchoMsg::Item(i)).expect("echo alive");
        }
    }
}

/// Time per round of a driver sending `k` messages to an echo that answers the `k`-th, one
/// worker: two activations and `k + 1` messages.
fn round_ns(k: u64, rounds: u64) -> f64 {
    let system = one_worker();
    let (done_tx, done) = mpsc::channel();
    let echo = system.spawn(Echo {
        got: 0,
        k,
        driver: None,
    });
    let driver = system.spawn(Driver {
        echo: echo.clone(),
        k,
        rounds,
        done: done_tx,
    });
    echo.send(EchoMsg::Driver(driver.clone())).unwrap();
    system.run_until_idle();
    let start = Instant::now();
    driver.send(0).unwrap();
    let end = done.recv().unwrap();
    system.shutdown();
    (end - start).as_nanos() as f64 / rounds as f64
}

/// `activation` and `message`: a round of a driver sending a batch of `k` messages to an echo that
/// answers the last one costs two activations and `k + 1` messages on one worker, so rounds of
/// `k = 1` and of `k = 64` (within one activation's budget of 128) separate the two:
/// `message = (T(64) − T(1)) / 63`, `activation = (T(1) − 2·message) / 2`. Neither is a benchmark
/// the model is compared with (pingpong runs at two workers, its two actors on both).
#[test]
#[ignore = "a measurement, not a test"]
fn calibration_activation_cost() {
    const K: u64 = 64;
    let (mut best_one, mut best_k) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..6 {
        let one = round_ns(1, 1_000_000);
        let batch = round_ns(K, 50_000);
        let message = (batch - one) / (K - 1) as f64;
        let activation = (one - 2.0 * message) / 2.0;
        eprintln!("T(1) {one:.1} ns, T({K}) {batch:.1} ns: message {message:.1} ns, activation {activation:.1} ns");
        best_one = best_one.min(one);
        best_k = best_k.min(batch);
    }
    let message = (best_k - best_one) / (K - 1) as f64;
    let activation = (best_one - 2.0 * message) / 2.0;
    eprintln!("least: T(1) {best_one:.1} ns, T({K}) {best_k:.1} ns: message {message:.1} ns, activation {activation:.1} ns");
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

/// `wake_call`: what waking a sleeping worker costs the waker. A thread parks (the call loka's
/// parked workers sleep in, `std::thread::park`); once it sleeps, another thread times its
/// `unpark` alone, the futex wake system call (on a VM, with the interrupt it sends through the
/// hypervisor). Median of 1,000 wake-ups per run, least of six runs.
#[test]
#[ignore = "a measurement, not a test"]
fn calibration_wake_call_cost() {
    use std::sync::atomic::AtomicBool;
    let mut best = f64::INFINITY;
    for _ in 0..6 {
        // How many times the sleeper went to sleep; it stops once `stop` is set.
        let sleeps = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (n, s) = (Arc::clone(&sleeps), Arc::clone(&stop));
        let sleeper = std::thread::spawn(move || {
            while !s.load(Ordering::Acquire) {
                n.fetch_add(1, Ordering::AcqRel);
                std::thread::park();
            }
        });
        let mut took = Vec::with_capacity(1_000);
        for i in 1..=1_000 {
            while sleeps.load(Ordering::Acquire) < i {
                std::hint::spin_loop();
            }
            // Long enough for the sleeper to be inside the futex wait, not on its way to it.
            std::thread::sleep(Duration::from_micros(50));
            let start = Instant::now();
            sleeper.thread().unpark();
            took.push(start.elapsed().as_nanos() as f64);
        }
        stop.store(true, Ordering::Release);
        sleeper.thread().unpark();
        sleeper.join().expect("the sleeper ends");
        took.sort_by(f64::total_cmp);
        best = best.min(took[took.len() / 2]);
    }
    eprintln!("least of six medians: waking a sleeping thread costs the waker {best:.0} ns");
}
