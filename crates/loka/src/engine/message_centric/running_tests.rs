//! Tests of a worker's running gulp (`running.rs`): which gulps keep to themselves, where
//! appended letters go.

use super::super::tests::one_queue_system;
use super::{Buffer, Running};
use crate::config::QueueKind;
use crate::{Actor, ActorRef, Context};
use std::sync::mpsc;
use std::time::Duration;

/// The counts of gulps seen in the benchmarks (`kept_to_itself` with the default room,
/// 128): only a closed group whose letters mostly stay earns the long visit. Red if either
/// half of the test is dropped (the converging replies, or the producer, would pass).
#[test]
fn a_gulp_keeps_to_itself_only_when_its_letters_make_more_that_mostly_stay() {
    let running = Running::new(0, Buffer::new(QueueKind::Copy));
    let kept = |stayed: usize, elsewhere: usize, letters: usize| {
        // However many of them were appended: the room (128) first.
        running.appended.set(stayed.min(128));
        running.overflow.set(stayed - stayed.min(128));
        running.elsewhere.set(elsewhere);
        running.kept_to_itself(128, letters)
    };
    // A group in one queue, each letter making the next (the executor at 1 worker).
    assert!(kept(1_300, 200, 1_500));
    // Replies converging on one actor (repeat's client): nothing left the queue, but 20,000
    // letters made 1,122.
    assert!(!kept(1_122, 0, 20_128));
    // A producer whose letters leave about as often as they stay (fjcreate's driver).
    assert!(!kept(2_170, 1_888, 1_208));
    // A group split across two workers: half its letters leave.
    assert!(!kept(750, 750, 1_500));
    // A gulp of less than a room's worth of letters (a letter at a time: pingpong).
    assert!(!kept(100, 0, 100));
}

/// Collects the numbers it receives and reports them once it has `expect` of them.
struct Sink {
    got: Vec<u32>,
    expect: usize,
    done: mpsc::Sender<Vec<u32>>,
}
impl Actor for Sink {
    type Msg = u32;
    fn handle(&mut self, _: &mut Context<Self>, n: u32) {
        self.got.push(n);
        if self.got.len() == self.expect {
            let _ = self.done.send(std::mem::take(&mut self.got));
        }
    }
}

/// On `Go(k)`, sends `k * PER_GO .. (k + 1) * PER_GO` to the sink.
struct Sender(ActorRef<u32>);
const PER_GO: u32 = 200;
impl Actor for Sender {
    type Msg = u32;
    fn handle(&mut self, _: &mut Context<Self>, k: u32) {
        for n in k * PER_GO..(k + 1) * PER_GO {
            self.0.send(n).unwrap();
        }
    }
}

/// Sends the sender its three `Go`s, each followed by a letter to the sink, so that they are
/// three runs of one gulp.
struct Starter {
    sender: ActorRef<u32>,
    sink: ActorRef<u32>,
}
impl Actor for Starter {
    type Msg = ();
    fn handle(&mut self, _: &mut Context<Self>, _: ()) {
        for k in 0..3 {
            self.sender.send(k).unwrap();
            self.sink.send(u32::MAX - k).unwrap();
        }
    }
}

/// Every actor in one queue: the starter's six letters and the sender's first letters join
/// the running gulp, the budget (`throughput`, 128) runs out during the first `Go`, and from
/// there every letter goes through the queue. The sink must see each sender's letters in
/// order. Goes red if the budget is renewed within a gulp (then the second `Go`'s letters
/// join the gulp again and overtake the first's posted ones), and if appended letters are
/// left out of `letters_posted`.
#[test]
#[cfg_attr(
    miri,
    ignore = "builds a system: topology detection calls hwloc through FFI"
)]
fn appended_letters_keep_each_senders_order_across_the_budget() {
    let system = one_queue_system();
    let (tx, rx) = mpsc::channel();
    let sink = system.spawn(Sink {
        got: Vec::new(),
        expect: 3 * PER_GO as usize + 3,
        done: tx,
    });
    let sender = system.spawn(Sender(sink.clone()));
    let starter = system.spawn(Starter { sender, sink });
    assert!(system.run_until_idle_timeout(Duration::from_secs(10)));
    starter.send(()).unwrap();
    let got = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("all delivered");
    let from_sender: Vec<u32> = got.iter().copied().filter(|&n| n < 3 * PER_GO).collect();
    assert_eq!(from_sender, (0..3 * PER_GO).collect::<Vec<_>>());
    let from_starter: Vec<u32> = got.into_iter().filter(|&n| n >= 3 * PER_GO).collect();
    assert_eq!(from_starter, vec![u32::MAX, u32::MAX - 1, u32::MAX - 2]);
    let stats = system.stats().message_centric.expect("message-centric");
    assert!(
        stats.letters_posted >= 3 * u64::from(PER_GO) + 6,
        "appended letters are counted as posted: {}",
        stats.letters_posted
    );
}

struct Quiet;
impl Actor for Quiet {
    type Msg = u32;
    fn handle(&mut self, _: &mut Context<Self>, _: u32) {}
}

/// Holds the last reference to a `Quiet` actor of its own queue and drops it once told to,
/// from inside its handler (so the `Unreferenced` signal is sent from the running gulp).
struct Holder {
    quiet: Option<ActorRef<u32>>,
    running: mpsc::Sender<()>,
    go: std::sync::Mutex<mpsc::Receiver<()>>,
}
impl Actor for Holder {
    type Msg = ();
    fn handle(&mut self, _: &mut Context<Self>, _: ()) {
        let _ = self.running.send(());
        let _ = self
            .go
            .lock()
            .unwrap()
            .recv_timeout(Duration::from_secs(10));
        self.quiet = None;
    }
}

/// Regression: the last handle's `Unreferenced` signal must come after every letter sent
/// before it, whoever sent them. One queue: while the holder's handler runs (its gulp taken),
/// a plain thread sends the quiet actor a letter (into the queue) and drops its own
/// reference; then the holder drops the last one. Appended to the running gulp, the signal
/// overtook the queued letter: the quiet actor saw a letter behind its final signal and never
/// stopped (merge sort left up to 98 actors alive at 2 workers).
#[test]
#[cfg_attr(
    miri,
    ignore = "builds a system: topology detection calls hwloc through FFI"
)]
fn the_last_handles_signal_is_not_appended_ahead_of_queued_letters() {
    let system = one_queue_system();
    let quiet = system.spawn(Quiet);
    let (go, wait) = mpsc::channel();
    let (running, started) = mpsc::channel();
    let holder = system.spawn(Holder {
        quiet: Some(quiet.clone()),
        running,
        go: std::sync::Mutex::new(wait),
    });
    assert!(system.run_until_idle_timeout(Duration::from_secs(10)));
    let live = system.stats().actors_live();
    holder.send(()).unwrap();
    // The worker has taken the holder's letter and blocks in its handler.
    started.recv_timeout(Duration::from_secs(10)).unwrap();
    quiet.send(5).unwrap();
    drop(quiet);
    go.send(()).unwrap();
    assert!(system.run_until_idle_timeout(Duration::from_secs(10)));
    assert_eq!(
        system.stats().actors_live(),
        live - 1,
        "the quiet actor stopped once its last reference was gone"
    );
}

enum Piping {
    /// Says it is running, then blocks the handler until the test says so.
    Gate(mpsc::Sender<()>, mpsc::Receiver<()>),
    /// Pipes a future that is ready at once, then sends `Note(1001)` to itself.
    PipeReady,
    Note(u32),
}

/// Logs what it handles, in order.
struct PipeLogger {
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}
impl Actor for PipeLogger {
    type Msg = Piping;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: Piping) {
        match msg {
            Piping::Gate(entered, gate) => {
                let _ = entered.send(());
                let _ = gate.recv_timeout(Duration::from_secs(10));
            }
            Piping::PipeReady => {
                ctx.pipe(async { 1 }, |me: &mut Self, _, n| {
                    me.log.lock().unwrap().push(format!("c{n}"));
                });
                ctx.myself().send(Piping::Note(1001)).unwrap();
            }
            Piping::Note(n) => self.log.lock().unwrap().push(format!("n{n}")),
        }
    }
}

/// Sends the logger its gate and the pipe request from a handler, so that both are in one
/// gulp.
struct PipeStarter {
    logger: ActorRef<Piping>,
    gate: std::sync::Mutex<Option<(mpsc::Sender<()>, mpsc::Receiver<()>)>>,
}
impl Actor for PipeStarter {
    type Msg = ();
    fn handle(&mut self, _: &mut Context<Self>, _: ()) {
        let (entered, gate) = self.gate.lock().unwrap().take().expect("once");
        self.logger.send(Piping::Gate(entered, gate)).unwrap();
        self.logger.send(Piping::PipeReady).unwrap();
    }
}

/// Regression: a handler's continuation (`Context::pipe`, a future ready at once) comes
/// after the messages already queued for its actor, whoever sent them, and before the
/// handler's later sends. One queue: the gate and the pipe request are in one gulp; while
/// the gate holds the handler, a plain thread's `Note(1)` is queued. Appended to the gulp,
/// the continuation (and the handler's `Note(1001)` behind it) overtook `Note(1)` (the pipe
/// test failed once in CI under this engine at 2 workers); posted to the queue alone, it
/// was overtaken by `Note(1001)`.
#[test]
#[cfg_attr(
    miri,
    ignore = "builds a system: topology detection calls hwloc through FFI"
)]
fn a_handlers_continuation_is_not_appended_ahead_of_queued_letters() {
    let system = one_queue_system();
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let logger = system.spawn(PipeLogger {
        log: std::sync::Arc::clone(&log),
    });
    let (open, gate) = mpsc::channel();
    let (entered, running) = mpsc::channel();
    let starter = system.spawn(PipeStarter {
        logger: logger.clone(),
        gate: std::sync::Mutex::new(Some((entered, gate))),
    });
    assert!(system.run_until_idle_timeout(Duration::from_secs(10)));
    starter.send(()).unwrap();
    // The gate's handler runs, the pipe request behind it in the gulp: the note waits in
    // the queue.
    running.recv_timeout(Duration::from_secs(10)).unwrap();
    logger.send(Piping::Note(1)).unwrap();
    open.send(()).unwrap();
    assert!(system.run_until_idle_timeout(Duration::from_secs(10)));
    assert_eq!(*log.lock().unwrap(), ["n1", "c1", "n1001"]);
}
