//! Actors that follow their partners (docs/message-centric.md, "Actors follow their partners"):
//! under the message-centric engine, an idle actor that hears mostly from handlers on another
//! worker is re-bound to the queue of the handler that posts to it, and its letters still run
//! one at a time and in per-sender order.

use loka::{
    Actor, ActorId, ActorRef, Config, Context, EngineKind, Placement, SpawnOptions, System,
    VictimSelection,
};
use std::sync::mpsc;
use std::time::Duration;

/// Rounds of the exchange: each round the driver posts `BURST` numbered letters to the
/// receiver, which answers after the last of them.
const ROUNDS: u64 = 400;
const BURST: u64 = 3;

/// A two-worker message-centric system, following on or off. No stealing: an idle worker would
/// otherwise take the receiver's queue, which gathers the two as well.
fn system(follow: bool) -> System {
    let mut config = Config {
        engine: EngineKind::MessageCentric,
        workers: 2,
        topology: "synthetic:package:1 core:2 pu:1".to_owned(),
        ..Config::default()
    };
    config.message_centric.follow = follow;
    config.message_centric.victims = VictimSelection::None;
    System::from_config(config).unwrap()
}

/// Checks that the driver's letters arrive in order and answers each burst.
struct Receiver {
    next: u64,
    driver: Option<ActorRef<u64>>,
    done: mpsc::Sender<Result<u64, String>>,
}

enum ToReceiver {
    Driver(ActorRef<u64>),
    Seq(u64),
}

impl Actor for Receiver {
    type Msg = ToReceiver;
    fn handle(&mut self, _: &mut Context<Self>, msg: ToReceiver) {
        match msg {
            ToReceiver::Driver(driver) => self.driver = Some(driver),
            ToReceiver::Seq(n) => {
                if n != self.next {
                    let _ = self
                        .done
                        .send(Err(format!("got {n}, expected {}", self.next)));
                    return;
                }
                self.next += 1;
                if self.next == ROUNDS * BURST {
                    let _ = self.done.send(Ok(self.next));
                } else if self.next % BURST == 0 {
                    // Answered only in the exchange that has a driver.
                    if let Some(driver) = &self.driver {
                        let _ = driver.send(self.next);
                    }
                }
            }
        }
    }
}

/// On each answer (the count received so far), posts the next burst to the receiver.
struct Driver {
    receiver: ActorRef<ToReceiver>,
}

impl Actor for Driver {
    type Msg = u64;
    fn handle(&mut self, _: &mut Context<Self>, from: u64) {
        for n in from..from + BURST {
            let _ = self.receiver.send(ToReceiver::Seq(n));
        }
    }
}

/// Spawn options placing an actor on worker `w`.
fn on(w: usize) -> SpawnOptions {
    SpawnOptions::new().placement(Placement::Worker(w))
}

/// A receiver placed on worker 0, and where it reports the end of the run.
fn spawn_receiver(system: &System) -> (ActorRef<ToReceiver>, mpsc::Receiver<Result<u64, String>>) {
    let (tx, rx) = mpsc::channel();
    let receiver = system.spawn_with(
        Receiver {
            next: 0,
            driver: None,
            done: tx,
        },
        on(0),
    );
    (receiver, rx)
}

/// The queue an actor is bound to now.
fn queue_of(system: &System, id: ActorId) -> usize {
    system
        .actors()
        .into_iter()
        .find(|a| a.id == id)
        .and_then(|a| a.queue)
        .expect("a live actor has a queue")
}

/// Waits for the receiver's report: every letter, in order.
fn assert_all_in_order(done: &mpsc::Receiver<Result<u64, String>>) {
    let got = done
        .recv_timeout(Duration::from_secs(20))
        .expect("the exchange finished");
    assert_eq!(got, Ok(ROUNDS * BURST), "every letter, in order");
}

/// Runs the exchange with the receiver placed on worker 0 and the driver on worker 1. Returns
/// the receiver's and the driver's queues at the end, the receiver's queue at the start, and
/// the re-bindings counted.
fn exchange(follow: bool) -> (usize, usize, usize, u64) {
    let system = system(follow);
    let (receiver, done) = spawn_receiver(&system);
    let driver = system.spawn_with(
        Driver {
            receiver: receiver.clone(),
        },
        on(1),
    );
    receiver.send(ToReceiver::Driver(driver.clone())).unwrap();
    assert!(system.run_until_idle_timeout(Duration::from_secs(10)));
    let queue_of = |id| queue_of(&system, id);
    let start = queue_of(receiver.id());
    assert_ne!(start, queue_of(driver.id()), "placed on different workers");
    driver.send(0).unwrap();
    assert_all_in_order(&done);
    assert!(system.run_until_idle_timeout(Duration::from_secs(10)));
    let followed = system
        .stats()
        .message_centric
        .expect("message-centric statistics")
        .actors_followed;
    (
        queue_of(receiver.id()),
        queue_of(driver.id()),
        start,
        followed,
    )
}

/// The receiver hears only from the driver's worker, so it follows the driver into its queue
/// (red if following is dropped or the rule never fires); its letters arrive in order across
/// the move. With following off it keeps the queue it was placed on.
#[test]
fn an_actor_that_hears_from_another_worker_follows_its_poster_in_order() {
    let (receiver, driver, _, followed) = exchange(true);
    assert_eq!(receiver, driver, "the receiver joined the driver's queue");
    assert!(followed >= 1, "counted: {followed}");
    let (receiver, _, start, followed) = exchange(false);
    assert_eq!(receiver, start, "without following it stays");
    assert_eq!(followed, 0);
}

/// Numbers the letters it is told to send, to the receiver.
struct Sender {
    receiver: ActorRef<ToReceiver>,
    next: u64,
}

impl Sender {
    fn send_next(&mut self) {
        let _ = self.receiver.send(ToReceiver::Seq(self.next));
        self.next += 1;
    }
}

impl Actor for Sender {
    type Msg = ();
    fn handle(&mut self, _: &mut Context<Self>, _go: ()) {
        self.send_next();
    }
}

/// Tells the sender to send, `left` more times, one per activation (each activation is its
/// own letter to itself, so the gulp it runs in goes on while the sender works elsewhere).
struct Pinger {
    sender: ActorRef<()>,
    left: u64,
}

impl Actor for Pinger {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _: ()) {
        if self.left > 0 {
            self.left -= 1;
            let _ = self.sender.send(());
            let _ = ctx.myself().send(());
        }
    }
}

/// A *sender* that follows: the receiver and a pinger share a queue on worker 0; the pinger's
/// posts make a sender on worker 1 follow into that queue while its earlier letters to the
/// receiver, posted through the queue's lock, still wait behind the running gulp. Its letters
/// after the move must not overtake them (red when a follower's later letters are appended to
/// the gulp that is running: "got 8, expected 0").
#[test]
fn a_sender_that_follows_keeps_its_order_to_actors_of_its_new_queue() {
    for _ in 0..20 {
        let system = system(true);
        let (receiver, done) = spawn_receiver(&system);
        let sender = system.spawn_with(
            Sender {
                receiver: receiver.clone(),
                next: 0,
            },
            on(1),
        );
        let pinger = system.spawn_with(
            Pinger {
                sender,
                left: ROUNDS * BURST,
            },
            on(0),
        );
        pinger.send(()).unwrap();
        assert_all_in_order(&done);
        assert!(system.run_until_idle_timeout(Duration::from_secs(10)));
    }
}

/// Holds its worker in its handler until told to go (or 20 s pass).
struct Blocker {
    entered: mpsc::Sender<()>,
    go: std::sync::Mutex<mpsc::Receiver<()>>,
}

impl Actor for Blocker {
    type Msg = ();
    fn handle(&mut self, _: &mut Context<Self>, _: ()) {
        let _ = self.entered.send(());
        let _ = self
            .go
            .lock()
            .unwrap()
            .recv_timeout(Duration::from_secs(20));
    }
}

/// A [`Sender`] that goes on by itself: one numbered letter per activation, each activation a
/// letter to itself.
struct Pump(Sender);

impl Actor for Pump {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _: ()) {
        if self.0.next < ROUNDS * BURST {
            self.0.send_next();
            let _ = ctx.myself().send(());
        }
    }
}

/// An actor that is never idle moves with its queued letters: worker 0 is held in another
/// queue's handler, so the receiver's letters from a pump on worker 1 pile up in its queue and
/// can run only if the receiver takes them along when it follows the pump. Every letter must
/// arrive, in order, while worker 0 is still held (red if a move waits for an idle actor: the
/// receiver's letters never run; red if the letters taken along are reordered or left behind).
#[test]
fn an_actor_with_queued_letters_follows_with_them_in_order() {
    let system = system(true);
    let (receiver, done) = spawn_receiver(&system);
    let queue_of = |id| queue_of(&system, id);
    // A blocker on worker 0 in another queue than the receiver's (actors placed on a worker
    // fill its queues in blocks: spawn until one lands elsewhere).
    let (entered_tx, entered) = mpsc::channel();
    let mut blocker = None;
    for _ in 0..1_000 {
        let (go, go_rx) = mpsc::channel();
        let candidate = system.spawn_with(
            Blocker {
                entered: entered_tx.clone(),
                go: std::sync::Mutex::new(go_rx),
            },
            on(0),
        );
        if queue_of(candidate.id()) != queue_of(receiver.id()) {
            blocker = Some((candidate, go));
            break;
        }
    }
    let (blocker, go) = blocker.expect("a queue of worker 0 other than the receiver's");
    blocker.send(()).unwrap();
    entered
        .recv_timeout(Duration::from_secs(10))
        .expect("worker 0 is held");
    let pump = system.spawn_with(
        Pump(Sender {
            receiver: receiver.clone(),
            next: 0,
        }),
        on(1),
    );
    pump.send(()).unwrap();
    let got = done.recv_timeout(Duration::from_secs(10));
    let _ = go.send(());
    assert_eq!(
        got.expect("the receiver ran its letters while its worker was held"),
        Ok(ROUNDS * BURST),
        "every letter, in order"
    );
    assert!(system.run_until_idle_timeout(Duration::from_secs(10)));
    assert_eq!(queue_of(receiver.id()), queue_of(pump.id()));
    let stats = system.stats().message_centric.expect("message-centric");
    assert!(
        stats.letters_followed >= 1,
        "it took letters along: {stats:?}"
    );
}
