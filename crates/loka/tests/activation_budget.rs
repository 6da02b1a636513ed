//! An activation's budget counts sends into queues as well as messages, and an activation that
//! finds a backlog gulps it (docs/configuration.md, `throughput` and `backlog_gulp`;
//! docs/decisions/0091-sends-charged-and-backlogs-gulped.md).
//!
//! On one worker a producer that sends a slice of messages per message it handles, and sends
//! itself the next slice, ran a whole budget of slices before its consumer ran a budget of
//! messages: the queue between them grew to the whole run. Counted in messages (the consumer's
//! queue as the producer sees it before each slice) and in activations, not in time.

use loka::{Actor, Config, Context, EngineKind, System};
use std::sync::mpsc;
use std::time::Duration;

const SLICE: u64 = 1_000;
const SLICES: u64 = 100;
const TIMEOUT: Duration = Duration::from_secs(60);

enum CounterMsg {
    Increment,
    Report(mpsc::Sender<u64>),
}

struct Counter {
    count: u64,
}

impl Actor for Counter {
    type Msg = CounterMsg;
    fn handle(&mut self, _: &mut Context<Self>, msg: CounterMsg) {
        match msg {
            CounterMsg::Increment => self.count += 1,
            CounterMsg::Report(to) => {
                let _ = to.send(self.count);
            }
        }
    }
}

/// Sends a slice of increments per message, then itself the next slice; before each slice, notes
/// the longest the counter's queue has been.
struct Producer {
    counter: loka::ActorRef<CounterMsg>,
    longest: u64,
    done: mpsc::Sender<(u64, u64)>,
}

impl Actor for Producer {
    type Msg = u64;
    fn handle(&mut self, ctx: &mut Context<Self>, slice: u64) {
        self.longest = self.longest.max(self.counter.mailbox_len() as u64);
        if slice == SLICES {
            let (to, count) = mpsc::channel();
            self.counter.send(CounterMsg::Report(to)).unwrap();
            let done = self.done.clone();
            let longest = self.longest;
            // The count comes once the counter has taken every increment.
            std::thread::spawn(move || {
                let count = count.recv_timeout(TIMEOUT).expect("the counter reports");
                let _ = done.send((count, longest));
            });
            return;
        }
        for _ in 0..SLICE {
            self.counter.send(CounterMsg::Increment).unwrap();
        }
        ctx.myself().send(slice + 1).unwrap();
    }
}

/// The longest the counter's queue was before a slice, and the count it reached.
fn producer_and_counter(engine: EngineKind, throughput: usize, backlog_gulp: usize) -> (u64, u64) {
    let system = System::from_config(Config {
        workers: 1,
        engine,
        throughput,
        backlog_gulp,
        ..Config::default()
    })
    .unwrap();
    let counter = system.spawn(Counter { count: 0 });
    let (done, result) = mpsc::channel();
    let producer = system.spawn(Producer {
        counter,
        longest: 0,
        done,
    });
    producer.send(0).unwrap();
    let (count, longest) = result.recv_timeout(TIMEOUT).expect("the run ends");
    system.shutdown();
    (longest, count)
}

#[test]
fn a_producer_does_not_run_ahead_of_its_consumer_on_one_worker() {
    for engine in [EngineKind::ActorCentric, EngineKind::Sim] {
        let (longest, count) = producer_and_counter(engine, 128, 65_536);
        assert_eq!(count, SLICE * SLICES, "{engine:?}: every increment counted");
        // The producer's activation ends with its first slice (its sends used the allowance);
        // the counter's takes a budget, then gulps the rest of the slice. Without the charge the
        // producer ran 128 slices per activation (127,000 queued); without the gulp the queue
        // grew by 872 per slice.
        assert!(
            longest <= SLICE,
            "{engine:?}: the counter's queue reached {longest} messages (one slice is {SLICE})"
        );
    }
}

#[test]
fn with_no_gulp_the_consumer_takes_a_budget_per_turn_and_falls_behind() {
    // `backlog_gulp` at or under `throughput` turns the gulp off: the counter takes 128 per turn
    // while the producer sends a slice, and its queue grows (the check above can fail).
    let (longest, count) = producer_and_counter(EngineKind::ActorCentric, 128, 0);
    assert_eq!(count, SLICE * SLICES);
    assert!(longest > 10 * SLICE, "the queue reached only {longest}");
}

/// Blocks its worker until released.
struct Gate;

impl Actor for Gate {
    type Msg = (mpsc::Sender<()>, mpsc::Receiver<()>);
    fn handle(&mut self, _: &mut Context<Self>, (blocking, release): Self::Msg) {
        blocking.send(()).unwrap();
        release.recv_timeout(TIMEOUT).unwrap();
    }
}

/// Counts what it takes; says when it has taken `expected`.
struct Sink {
    taken: u64,
    expected: u64,
    /// How long each message takes.
    cost: Duration,
    done: mpsc::Sender<()>,
}

impl Actor for Sink {
    type Msg = ();
    fn handle(&mut self, _: &mut Context<Self>, (): ()) {
        std::thread::sleep(self.cost);
        self.taken += 1;
        if self.taken == self.expected {
            self.done.send(()).unwrap();
        }
    }
}

/// Activations that took a backlog of `backlog` messages queued while the only worker was busy.
fn activations_for_a_backlog(throughput: usize, backlog_gulp: usize, backlog: u64) -> u64 {
    activations_for_a_slow_backlog(throughput, backlog_gulp, backlog, Duration::ZERO)
}

/// As [`activations_for_a_backlog`], each message taking `cost`.
fn activations_for_a_slow_backlog(
    throughput: usize,
    backlog_gulp: usize,
    backlog: u64,
    cost: Duration,
) -> u64 {
    let system = System::from_config(Config {
        workers: 1,
        throughput,
        backlog_gulp,
        ..Config::default()
    })
    .unwrap();
    let (done, finished) = mpsc::channel();
    let sink = system.spawn(Sink {
        taken: 0,
        expected: backlog,
        cost,
        done,
    });
    let taken = activations_behind_the_worker(&system, &finished, || {
        for _ in 0..backlog {
            sink.send(()).unwrap();
        }
    });
    system.shutdown();
    taken
}

/// Activations the only worker of `system` runs for a backlog: `queue` sends it while a gate
/// holds the worker, then the gate opens; counted until `finished` says the work is done.
fn activations_behind_the_worker(
    system: &System,
    finished: &mpsc::Receiver<()>,
    queue: impl FnOnce(),
) -> u64 {
    let gate = system.spawn(Gate);
    let (blocking, blocked) = mpsc::channel();
    let (release, released) = mpsc::channel();
    gate.send((blocking, released)).unwrap();
    blocked.recv_timeout(TIMEOUT).unwrap();
    queue();
    let activations = || -> u64 { system.stats().workers.iter().map(|w| w.activations).sum() };
    let before = activations();
    release.send(()).unwrap();
    finished.recv_timeout(TIMEOUT).unwrap();
    // The gate's activation ends after the read above: one of the activations counted.
    activations() - before - 1
}

#[test]
fn a_backlog_is_gulped_up_to_backlog_gulp_messages_an_activation() {
    // 10,000 queued, 64 a budget: one activation with a gulp of up to 65,536 (a budget, then the
    // rest), about ten of 1,000 with `backlog_gulp = 1000`, about 157 budgets without a gulp.
    let whole = activations_for_a_backlog(64, 65_536, 10_000);
    assert!(
        whole <= 2,
        "{whole} activations for a backlog under the gulp's limit"
    );
    let limited = activations_for_a_backlog(64, 1_000, 10_000);
    assert!(
        (8..=13).contains(&limited),
        "{limited} activations for 10,000 messages, 1,000 at most each"
    );
    let none = activations_for_a_backlog(64, 0, 10_000);
    assert!(
        none >= 150,
        "{none} activations for 10,000 messages, 64 each"
    );
}

#[test]
fn slow_messages_end_a_gulp_after_about_a_millisecond() {
    // 3 ms a message, one per budget: the gulp that begins after the first goes on for one more
    // budget, then finds its millisecond spent: two messages an activation while more than one
    // is queued, then one, and a last that finds the mailbox empty (7); without the limit, one
    // activation took all ten (2).
    let slow = activations_for_a_slow_backlog(1, 16_384, 10, Duration::from_millis(3));
    assert!(
        (5..=8).contains(&slow),
        "{slow} activations for 10 messages of 3 ms"
    );
}

/// Sends one message on for each it takes; says when it has taken `expected`.
struct Forwarder {
    to: loka::ActorRef<()>,
    taken: u64,
    expected: u64,
    done: mpsc::Sender<()>,
}

impl Actor for Forwarder {
    type Msg = ();
    fn handle(&mut self, _: &mut Context<Self>, (): ()) {
        self.to.send(()).unwrap();
        self.taken += 1;
        if self.taken == self.expected {
            self.done.send(()).unwrap();
        }
    }
}

struct Quiet;

impl Actor for Quiet {
    type Msg = ();
    fn handle(&mut self, _: &mut Context<Self>, (): ()) {}
}

#[test]
fn an_inline_run_leaves_its_callers_budget_as_it_was() {
    // Under `monitor` each send of the forwarder runs the idle receiver inline, an activation
    // with a budget of its own; the forwarder's own budget (64 messages) must still end its
    // activations: about 16 for 1,000 messages (without the gulp). Had the inline run left the
    // forwarder its own fresh budget, one activation took all 1,000.
    let system = System::from_config(Config {
        workers: 1,
        throughput: 64,
        backlog_gulp: 0,
        exec: loka::ExecMode::AllMonitor,
        ..Config::default()
    })
    .unwrap();
    let quiet = system.spawn(Quiet);
    let (done, finished) = mpsc::channel();
    let forwarder = system.spawn(Forwarder {
        to: quiet,
        taken: 0,
        expected: 1_000,
        done,
    });
    let taken = activations_behind_the_worker(&system, &finished, || {
        for _ in 0..1_000 {
            forwarder.send(()).unwrap();
        }
    });
    system.shutdown();
    assert!(
        taken >= 10,
        "{taken} activations for 1,000 messages, 64 a budget"
    );
}

/// Sends `fan` messages to `to` for each it takes (fjcreate's driver, which spawns and sends to
/// a thousand children per message); says when it has taken `expected`.
struct Spreader {
    to: loka::ActorRef<()>,
    fan: u32,
    taken: u64,
    expected: u64,
    done: mpsc::Sender<()>,
}

impl Actor for Spreader {
    type Msg = ();
    fn handle(&mut self, _: &mut Context<Self>, (): ()) {
        for _ in 0..self.fan {
            self.to.send(()).unwrap();
        }
        self.taken += 1;
        if self.taken == self.expected {
            self.done.send(()).unwrap();
        }
    }
}

#[test]
fn a_backlog_whose_budget_goes_to_sends_is_not_gulped() {
    // 1,000 messages queued for the spreader, each sending 200 into the busy sink's queue: its
    // budget (128) is spent on sends by its first message, so the activation ends there and the
    // sink runs between (about 2,000 activations in all). Gulped as a consumer's backlog, the
    // spreader ran its 1,000 messages in a few activations and queued 200,000 messages ahead of
    // the sink: fjcreate's driver spawned 384 slices of 1,000 children in one activation under
    // the simulation of 16 workers, and the run took 3.5 times as long.
    let system = System::from_config(Config {
        workers: 1,
        ..Config::default()
    })
    .unwrap();
    let quiet = system.spawn(Quiet);
    let (done, finished) = mpsc::channel();
    let spreader = system.spawn(Spreader {
        to: quiet,
        fan: 200,
        taken: 0,
        expected: 1_000,
        done,
    });
    let taken = activations_behind_the_worker(&system, &finished, || {
        for _ in 0..1_000 {
            spreader.send(()).unwrap();
        }
    });
    system.shutdown();
    assert!(
        taken >= 1_000,
        "{taken} activations for 1,000 messages that each spent a budget on sends"
    );
}

/// Counts what it takes (shared with the test); wakes `probe` with its first message.
struct Waker {
    probe: loka::ActorRef<()>,
    taken: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Actor for Waker {
    type Msg = ();
    fn handle(&mut self, _: &mut Context<Self>, (): ()) {
        use std::sync::atomic::Ordering::Relaxed;
        if self.taken.fetch_add(1, Relaxed) == 0 {
            self.probe.send(()).unwrap();
        }
    }
}

/// Says how many messages the waker had taken when it ran.
struct Probe {
    taken: std::sync::Arc<std::sync::atomic::AtomicU64>,
    seen: mpsc::Sender<u64>,
}

impl Actor for Probe {
    type Msg = ();
    fn handle(&mut self, _: &mut Context<Self>, (): ()) {
        let _ = self
            .seen
            .send(self.taken.load(std::sync::atomic::Ordering::Relaxed));
    }
}

#[test]
fn a_gulp_ends_for_an_actor_woken_meanwhile() {
    // 10,000 messages queued for the waker on one worker; its first wakes the probe. The gulp
    // ends at the first budget's end (128) because the probe waits, not after the backlog.
    // Without the rule the probe waited for all 10,000 (a plain thread's message waited a
    // median 0.5 ms behind gulping actors: docs/results/latency.md).
    for engine in [EngineKind::Sim, EngineKind::ActorCentric] {
        let system = System::from_config(Config {
            workers: 1,
            engine,
            ..Config::default()
        })
        .unwrap();
        let taken = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let (seen, saw) = mpsc::channel();
        let probe = system.spawn(Probe {
            taken: taken.clone(),
            seen,
        });
        let waker = system.spawn(Waker {
            probe,
            taken: taken.clone(),
        });
        if engine == EngineKind::Sim {
            for _ in 0..10_000 {
                waker.send(()).unwrap();
            }
            system.run_until_idle();
        } else {
            // Queued while a gate holds the only worker, so the waker finds them all.
            let gate = system.spawn(Gate);
            let (blocking, blocked) = mpsc::channel();
            let (release, released) = mpsc::channel();
            gate.send((blocking, released)).unwrap();
            blocked.recv_timeout(TIMEOUT).unwrap();
            for _ in 0..10_000 {
                waker.send(()).unwrap();
            }
            release.send(()).unwrap();
        }
        let when = saw.recv_timeout(TIMEOUT).expect("the probe ran");
        system.shutdown();
        assert!(
            when <= 256,
            "{engine:?}: the probe ran after {when} of the waker's messages"
        );
    }
}

/// Declares `cost` of compute per message (the simulation's clock counts it).
struct Charged {
    cost: Duration,
}

impl Actor for Charged {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, (): ()) {
        ctx.charge(self.cost);
    }
}

#[test]
fn a_simulated_gulp_ends_after_about_a_millisecond_of_virtual_time() {
    // The simulation's clock stands still while an activation runs on the host; the gulp reads
    // the time the activation has reached instead (its fixed costs, each envelope, the compute
    // declared so far). Ten messages of 3 ms, one per budget: as on real threads (the test
    // above), about two an activation. Read from the standing clock, one activation took all
    // ten.
    let system = System::from_config(Config {
        workers: 1,
        engine: EngineKind::Sim,
        throughput: 1,
        ..Config::default()
    })
    .unwrap();
    let actor = system.spawn(Charged {
        cost: Duration::from_millis(3),
    });
    for _ in 0..10 {
        actor.send(()).unwrap();
    }
    system.run_until_idle();
    let activations: u64 = system.stats().workers.iter().map(|w| w.activations).sum();
    system.shutdown();
    // One more: the actor's start.
    assert!(
        (5..=9).contains(&activations),
        "{activations} activations for 10 messages of 3 ms"
    );
}
