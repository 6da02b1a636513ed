//! Bounded mailboxes (docs/bounded-mailboxes.md), under every engine in `loka::EngineKind::ALL`
//! at 1 and 2 workers: `try_send`, each overflow rule of `send`, `send_async` waiting for room
//! and failing when the actor stops, `mailbox_len`, the counters, capacity 0 refused. The
//! delivery guarantees with bounded mailboxes and concurrent senders run in the guarantee matrix
//! (`guarantees/bounded.rs`).
//!
//! Most tests hold the actor inside a handler (`Probe`'s `Hold`) so that its mailbox fills
//! deterministically, then release it.

use loka::{
    Actor, AskBlockingError, Config, Context, EngineKind, Overflow, SendErrorReason, SpawnError,
    SpawnOptions, System, TrySendError,
};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Every engine at 1 and 2 workers.
fn configurations() -> Vec<(String, Config)> {
    let mut out = Vec::new();
    for &engine in EngineKind::ALL {
        for workers in [1, 2] {
            let config = Config {
                workers,
                engine,
                topology: format!("synthetic:package:1 core:{workers} pu:1"),
                ..Config::default()
            };
            out.push((format!("{engine} workers={workers}"), config));
        }
    }
    out
}

fn system(config: &Config) -> System {
    System::from_config(config.clone()).expect("valid test configuration")
}

use futures_executor::block_on;

/// Records the items it handles; `Hold` keeps it inside its handler until released.
struct Probe {
    seen: Arc<Mutex<Vec<u64>>>,
}

enum Msg {
    /// Tell `entered`, then wait for `release`; then stop if `stop`.
    Hold {
        entered: Sender<()>,
        release: Receiver<()>,
        stop: bool,
    },
    Item(u64),
    /// Answers how many items it has seen.
    Count(loka::ReplyTo<usize>),
}

impl Actor for Probe {
    type Msg = Msg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: Msg) {
        match msg {
            Msg::Hold {
                entered,
                release,
                stop,
            } => {
                entered.send(()).unwrap();
                let _ = release.recv();
                if stop {
                    ctx.stop();
                }
            }
            Msg::Item(n) => self.seen.lock().unwrap().push(n),
            Msg::Count(reply) => reply.send(self.seen.lock().unwrap().len()),
        }
    }
}

fn probe(system: &System, options: SpawnOptions) -> (loka::ActorRef<Msg>, Arc<Mutex<Vec<u64>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let actor = system.spawn_with(
        Probe {
            seen: Arc::clone(&seen),
        },
        options,
    );
    (actor, seen)
}

/// Puts the actor inside a `Hold` handler (its mailbox then empty) and returns the release.
fn hold(system: &System, actor: &loka::ActorRef<Msg>, stop: bool) -> Sender<()> {
    let (entered, release) = send_hold(actor, stop);
    wait_until_entered(system, &entered);
    release
}

/// Queues a `Hold` for the actor; returns what tells that it entered it, and the release.
fn send_hold(actor: &loka::ActorRef<Msg>, stop: bool) -> (Receiver<()>, Sender<()>) {
    let (entered, entered_rx) = channel();
    let (release, release_rx) = channel();
    actor
        .send(Msg::Hold {
            entered,
            release: release_rx,
            stop,
        })
        .unwrap();
    (entered_rx, release)
}

/// Waits until `entered` is told, waiting on the system meanwhile (which lets the simulation
/// fold this thread's sends in and run).
fn wait_until_entered(system: &System, entered: &Receiver<()>) {
    while entered.try_recv().is_err() {
        system.run_until_idle_timeout(Duration::from_millis(1));
    }
}

/// With the actor held in a handler and its mailbox full, runs `wait` (a send or an ask that
/// waits for room) on a thread: it must still be waiting 50 ms later, and return once `release`
/// lets the actor go on. Returns what `wait` returned.
fn waits_for_room<T: Send>(label: &str, release: Sender<()>, wait: impl FnOnce() -> T + Send) -> T {
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let waiter = s.spawn(|| {
            let result = wait();
            done.store(true, SeqCst);
            result
        });
        std::thread::sleep(Duration::from_millis(50));
        assert!(!done.load(SeqCst), "{label}: no room yet, still waiting");
        release.send(()).unwrap();
        waiter.join().unwrap()
    })
}

fn seen(seen: &Arc<Mutex<Vec<u64>>>) -> Vec<u64> {
    seen.lock().unwrap().clone()
}

#[test]
fn try_send_on_a_full_mailbox_returns_the_message_whatever_the_overflow_rule() {
    for (label, config) in configurations() {
        for overflow in [Overflow::Reject, Overflow::DropOldest, Overflow::DropNewest] {
            let system = system(&config);
            let options = SpawnOptions::new().capacity(3).overflow(overflow);
            let (actor, items) = probe(&system, options);
            assert_eq!(actor.capacity(), Some(3), "{label}");
            let release = hold(&system, &actor, false);
            assert_eq!(
                actor.mailbox_len(),
                0,
                "{label}: the held message was taken out"
            );
            for n in 0..3 {
                actor.try_send(Msg::Item(n)).unwrap();
                assert_eq!(actor.mailbox_len(), n as usize + 1, "{label} {overflow:?}");
            }
            match actor.try_send(Msg::Item(99)) {
                Err(TrySendError::Full(Msg::Item(99))) => {}
                other => panic!("{label} {overflow:?}: {other:?}, not Full(99)"),
            }
            assert_eq!(actor.mailbox_len(), 3, "{label} {overflow:?}");
            release.send(()).unwrap();
            system.run_until_idle();
            assert_eq!(seen(&items), vec![0, 1, 2], "{label} {overflow:?}");
            assert_eq!(actor.mailbox_len(), 0, "{label} {overflow:?}");
            let stats = system.stats();
            assert_eq!(stats.mailbox_full, 1, "{label} {overflow:?}");
            assert_eq!(stats.overflow_dropped, 0, "{label} {overflow:?}");
            assert_eq!(stats.dead_letters, 0, "{label} {overflow:?}");
        }
    }
}

#[test]
fn send_with_reject_hands_the_message_back_and_says_full() {
    for (label, config) in configurations() {
        let system = system(&config);
        let (actor, items) = probe(&system, SpawnOptions::new().capacity(2));
        let release = hold(&system, &actor, false);
        actor.send(Msg::Item(1)).unwrap();
        actor.send(Msg::Item(2)).unwrap();
        let refused = actor.send(Msg::Item(3)).unwrap_err();
        assert_eq!(
            refused.reason,
            SendErrorReason::Full { capacity: 2 },
            "{label}"
        );
        assert!(refused.is_full(), "{label}: is_full on a Full refusal");
        assert_eq!(refused.actor, actor.id(), "{label}");
        assert!(matches!(refused.message, Msg::Item(3)), "{label}");
        let text = refused.to_string();
        assert!(
            text.contains("full") && text.contains('2'),
            "{label}: {text}"
        );
        release.send(()).unwrap();
        system.run_until_idle();
        assert_eq!(seen(&items), vec![1, 2], "{label}");
        let stats = system.stats();
        assert_eq!(
            (stats.mailbox_full, stats.overflow_dropped),
            (1, 0),
            "{label}"
        );
        // Room again once the actor caught up.
        actor.send(Msg::Item(4)).unwrap();
        system.run_until_idle();
        assert_eq!(seen(&items), vec![1, 2, 4], "{label}");
    }
}

#[test]
fn send_with_drop_newest_keeps_the_queued_messages() {
    for (label, config) in configurations() {
        let system = system(&config);
        let options = SpawnOptions::new()
            .capacity(2)
            .overflow(Overflow::DropNewest);
        let (actor, items) = probe(&system, options);
        let release = hold(&system, &actor, false);
        for n in 1..=5 {
            actor.send(Msg::Item(n)).unwrap();
        }
        assert_eq!(actor.mailbox_len(), 2, "{label}");
        release.send(()).unwrap();
        system.run_until_idle();
        assert_eq!(seen(&items), vec![1, 2], "{label}: the newest were dropped");
        let stats = system.stats();
        assert_eq!(
            (stats.overflow_dropped, stats.mailbox_full),
            (3, 0),
            "{label}"
        );
        assert_eq!(stats.dead_letters, 0, "{label}");
    }
}

#[test]
fn send_with_drop_oldest_keeps_the_newest_messages() {
    for (label, config) in configurations() {
        let system = system(&config);
        let options = SpawnOptions::new()
            .capacity(2)
            .overflow(Overflow::DropOldest);
        let (actor, items) = probe(&system, options);
        let release = hold(&system, &actor, false);
        for n in 1..=5 {
            actor.send(Msg::Item(n)).unwrap();
            assert!(
                actor.mailbox_len() <= 2,
                "{label}: never more than the capacity"
            );
        }
        assert_eq!(actor.mailbox_len(), 2, "{label}");
        release.send(()).unwrap();
        system.run_until_idle();
        assert_eq!(seen(&items), vec![4, 5], "{label}: the oldest were dropped");
        let stats = system.stats();
        assert_eq!(
            (stats.overflow_dropped, stats.mailbox_full),
            (3, 0),
            "{label}"
        );
        assert_eq!(stats.dead_letters, 0, "{label}");
    }
}

#[test]
fn send_async_resumes_when_room_appears() {
    for (label, config) in configurations() {
        let system = system(&config);
        let (actor, items) = probe(&system, SpawnOptions::new().capacity(1));
        let release = hold(&system, &actor, false);
        actor.send(Msg::Item(1)).unwrap();
        let sent = waits_for_room(&label, release, || block_on(actor.send_async(Msg::Item(2))));
        assert!(sent.is_ok(), "{label}");
        system.run_until_idle();
        assert_eq!(seen(&items), vec![1, 2], "{label}");
        let stats = system.stats();
        assert_eq!((stats.mailbox_full, stats.dead_letters), (0, 0), "{label}");
    }
}

/// Capacity 64: the actor gives places back 8 at a time while it runs (docs/bounded-mailboxes.md)
/// and the rest when it runs out of messages, so a bound never stays short of what it was.
#[test]
fn batched_places_all_come_back_when_the_actor_runs_out_of_messages() {
    for (label, config) in configurations() {
        let system = system(&config);
        let (actor, items) = probe(&system, SpawnOptions::new().capacity(64));
        for n in 0..5 {
            actor.send(Msg::Item(n)).unwrap();
        }
        system.run_until_idle();
        assert_eq!(seen(&items).len(), 5, "{label}");
        assert_eq!(
            actor.mailbox_len(),
            0,
            "{label}: 5 places taken, not given back"
        );
        // Full again, exactly at the capacity: 64 places, then a waiting sender that the
        // batches' releases wake.
        let release = hold(&system, &actor, false);
        assert!(
            actor.mailbox_len() <= 1,
            "{label}: the held message, at most"
        );
        release.send(()).unwrap();
        system.run_until_idle();
        assert_eq!(actor.mailbox_len(), 0, "{label}");
        let release = hold(&system, &actor, false);
        let mut sent = 0;
        while actor.try_send(Msg::Item(100 + sent)).is_ok() {
            sent += 1;
        }
        assert!((63..=64).contains(&sent), "{label}: {sent} places");
        std::thread::scope(|s| {
            let waiter = s.spawn(|| block_on(actor.send_async(Msg::Item(999))));
            std::thread::sleep(Duration::from_millis(20));
            release.send(()).unwrap();
            assert!(waiter.join().unwrap().is_ok(), "{label}");
        });
        system.run_until_idle();
        assert_eq!(seen(&items).len(), 5 + sent as usize + 1, "{label}");
        assert_eq!(actor.mailbox_len(), 0, "{label}");
        assert_eq!(system.stats().dead_letters, 0, "{label}");
    }
}

/// Sends one item to `to` from inside its handler, says so, then waits for `release` (so that
/// its activation, and the places it reserved ahead, last until then).
struct Feeder;

impl Actor for Feeder {
    type Msg = (loka::ActorRef<Msg>, Sender<()>, Receiver<()>);
    fn handle(&mut self, _ctx: &mut Context<Self>, (to, sent, release): Self::Msg) {
        to.send(Msg::Item(7)).unwrap();
        sent.send(()).unwrap();
        let _ = release.recv();
    }
}

#[test]
fn places_a_sending_activation_reserved_ahead_come_back_when_it_ends() {
    for (label, config) in configurations() {
        let system = system(&config);
        // Capacity 64: a sending activation reserves 8 places at once (docs/bounded-mailboxes.md).
        let (actor, items) = probe(&system, SpawnOptions::new().capacity(64));
        let feeder = system.spawn(Feeder);
        let (sent, sent_rx) = channel();
        let (release, release_rx) = channel();
        feeder.send((actor.clone(), sent, release_rx)).unwrap();
        wait_until_entered(&system, &sent_rx);
        // The item (queued, or handled meanwhile) and the 7 places reserved ahead.
        let reserved = actor.mailbox_len();
        assert!(
            (7..=8).contains(&reserved),
            "{label}: {reserved} counted while the feeder runs"
        );
        // Queued before the feeder returns: with one worker it runs right after the feeder's
        // activation, so the worker does not wait for work (which gives credit back too) before
        // it holds it here.
        let (blocker, _) = probe(&system, SpawnOptions::new());
        let (entered, unblock) = send_hold(&blocker, false);
        release.send(()).unwrap();
        wait_until_entered(&system, &entered);
        if config.workers == 1 {
            assert!(
                actor.mailbox_len() <= 1,
                "{label}: {} counted after the feeder's activation ended",
                actor.mailbox_len()
            );
        }
        unblock.send(()).unwrap();
        system.run_until_idle();
        assert_eq!(seen(&items), vec![7], "{label}");
        assert_eq!(
            actor.mailbox_len(),
            0,
            "{label}: the places the feeder did not use were not given back"
        );
    }
}

/// Sends items 0, 1, … `n - 1` to `to` with `send` from inside one handler (so through the
/// places its activation reserves ahead), and reports how many were accepted and how many
/// refused as full.
struct Flood;

impl Actor for Flood {
    type Msg = (loka::ActorRef<Msg>, u64, Sender<(u64, u64)>);
    fn handle(&mut self, _ctx: &mut Context<Self>, (to, n, report): Self::Msg) {
        let (mut accepted, mut full) = (0, 0);
        for i in 0..n {
            match to.send(Msg::Item(i)) {
                Ok(()) => accepted += 1,
                Err(e) if matches!(e.reason, loka::SendErrorReason::Full { .. }) => full += 1,
                Err(e) => panic!("{e}"),
            }
        }
        report.send((accepted, full)).unwrap();
    }
}

#[test]
fn an_actor_sending_with_send_never_fills_a_mailbox_past_its_capacity() {
    for (label, config) in configurations() {
        let system = system(&config);
        // Capacity 64 (`Reject`): the flood spends places reserved 8 at a time, and exact ones
        // past half full (docs/bounded-mailboxes.md).
        let (actor, items) = probe(&system, SpawnOptions::new().capacity(64));
        // Where another worker could run the actor during the flood, it is held in a handler; a
        // held handler would hold the only worker (or the simulation's one thread), and there
        // the actor cannot run before the flood's handler returns anyway.
        let concurrent = config.workers > 1 && config.engine != EngineKind::Sim;
        let release = concurrent.then(|| hold(&system, &actor, false));
        let flood = system.spawn(Flood);
        let (report, report_rx) = channel();
        flood.send((actor.clone(), 100, report)).unwrap();
        let (accepted, full) = loop {
            if let Ok(counts) = report_rx.try_recv() {
                break counts;
            }
            system.run_until_idle_timeout(Duration::from_millis(1));
        };
        // A held `Hold` keeps its place until the actor's batch is given back: 63 or 64 more.
        let room = if concurrent { 63..=64 } else { 64..=64 };
        assert!(
            room.contains(&accepted),
            "{label}: {accepted} accepted into a mailbox of 64"
        );
        assert_eq!(accepted + full, 100, "{label}: every send answered once");
        assert!(actor.mailbox_len() <= 64, "{label}: past the capacity");
        if let Some(release) = release {
            release.send(()).unwrap();
        }
        system.run_until_idle();
        assert_eq!(
            seen(&items),
            (0..accepted).collect::<Vec<_>>(),
            "{label}: the accepted items, in order"
        );
        assert_eq!(actor.mailbox_len(), 0, "{label}: every place back");
    }
}

#[test]
fn places_a_timers_action_reserved_ahead_come_back_with_its_batch() {
    for (label, config) in configurations() {
        // Only the actor-centric engine runs `thread` actors on threads of their own
        // (docs/exec-policies.md); the simulation fires its timers on its driver, with the same
        // give-back.
        if config.engine != EngineKind::ActorCentric {
            continue;
        }
        let system = system(&config);
        // On a thread of its own, held in a handler: the timer's worker only queues the item and
        // then has nothing to run.
        let (actor, items) = probe(
            &system,
            SpawnOptions::new()
                .capacity(64)
                .exec(loka::ExecPolicy::Thread),
        );
        let release = hold(&system, &actor, false);
        // The held message's place comes back when the actor's run ends (decision 0065): 1.
        assert_eq!(actor.mailbox_len(), 1, "{label}");
        actor.send_after(Duration::from_millis(5), Msg::Item(3));
        let start = std::time::Instant::now();
        while actor.mailbox_len() == 1 {
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "{label}: no firing"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        // The timer's action reserved 8 places on its worker and used one; the other 7 came
        // back with its firing batch (red without that give-back: 9).
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(
            actor.mailbox_len(),
            2,
            "{label}: the held message and the item"
        );
        release.send(()).unwrap();
        system.run_until_idle();
        assert_eq!(seen(&items), vec![3], "{label}");
        assert_eq!(actor.mailbox_len(), 0, "{label}");
    }
}

#[test]
fn send_async_fails_with_the_message_when_the_actor_stops() {
    for (label, config) in configurations() {
        let system = system(&config);
        let (actor, items) = probe(&system, SpawnOptions::new().capacity(1));
        let release = hold(&system, &actor, true);
        actor.send(Msg::Item(1)).unwrap();
        let to = &actor;
        std::thread::scope(|s| {
            let waiters: Vec<_> = (0..2)
                .map(|i| s.spawn(move || block_on(to.send_async(Msg::Item(10 + i)))))
                .collect();
            std::thread::sleep(Duration::from_millis(20));
            release.send(()).unwrap();
            for waiter in waiters {
                let refused = waiter.join().unwrap().unwrap_err();
                assert_eq!(refused.reason, SendErrorReason::Stopped, "{label}");
                assert!(matches!(refused.message, Msg::Item(10 | 11)), "{label}");
            }
        });
        system.run_until_idle();
        assert!(actor.is_stopped(), "{label}");
        assert!(seen(&items).is_empty(), "{label}");
        assert_eq!(system.stats().dead_letters, 1, "{label}: the queued item");
    }
}

/// `send_blocking`: a plain thread waits, parked, for room (as `send_async` under an executor),
/// and gets its message back once the actor stops.
#[test]
fn send_blocking_parks_until_room_appears_or_the_actor_stops() {
    for (label, config) in configurations() {
        let system = system(&config);
        let (actor, items) = probe(&system, SpawnOptions::new().capacity(1));
        let release = hold(&system, &actor, false);
        actor.send(Msg::Item(1)).unwrap();
        let sent = waits_for_room(&label, release, || actor.send_blocking(Msg::Item(2)));
        assert!(sent.is_ok(), "{label}");
        system.run_until_idle();
        assert_eq!(seen(&items), vec![1, 2], "{label}");

        // Full, then the actor stops: the blocked sender gets its message back.
        let release = hold(&system, &actor, true);
        actor.send(Msg::Item(3)).unwrap();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| actor.send_blocking(Msg::Item(4)));
            std::thread::sleep(Duration::from_millis(20));
            release.send(()).unwrap();
            let refused = waiter.join().unwrap().unwrap_err();
            assert_eq!(refused.reason, SendErrorReason::Stopped, "{label}");
            assert!(matches!(refused.message, Msg::Item(4)), "{label}");
        });
        system.run_until_idle();
        assert_eq!(seen(&items), vec![1, 2], "{label}: 3 is a dead letter");
    }
}

/// `ask_async`: a request to a full bounded mailbox waits for room (it is neither refused nor
/// dropped), then its reply comes; to a stopped actor it fails with the request handed back.
#[test]
fn ask_async_waits_for_room_then_answers() {
    for (label, config) in configurations() {
        let system = system(&config);
        let (actor, _items) = probe(&system, SpawnOptions::new().capacity(1));
        let release = hold(&system, &actor, false);
        actor.send(Msg::Item(1)).unwrap();
        let answer = waits_for_room(&label, release, || {
            block_on(actor.ask_async(Msg::Count)).map(|p| p.wait())
        });
        assert!(matches!(answer, Ok(Ok(1))), "{label}: {answer:?}");
        assert_eq!(system.stats().mailbox_full, 0, "{label}: never refused");
        assert!(actor.stop(), "{label}");
        system.run_until_idle();
        let refused = block_on(actor.ask_async(Msg::Count)).unwrap_err();
        assert_eq!(refused.reason, SendErrorReason::Stopped, "{label}");
        assert!(matches!(refused.message, Msg::Count(_)), "{label}");
    }
}

/// `ask_blocking`: a plain thread's request to a full bounded mailbox waits for room, then for
/// the reply; a request the stopping actor drops unanswered is `NoReply`; to a stopped actor it
/// fails with the request handed back.
#[test]
fn ask_blocking_waits_for_room_then_for_the_reply() {
    for (label, config) in configurations() {
        let system = system(&config);
        let (actor, _items) = probe(&system, SpawnOptions::new().capacity(1));
        let release = hold(&system, &actor, false);
        actor.send(Msg::Item(1)).unwrap();
        let answer = waits_for_room(&label, release, || actor.ask_blocking(Msg::Count));
        assert!(matches!(answer, Ok(1)), "{label}: {answer:?}");
        assert_eq!(system.stats().mailbox_full, 0, "{label}: never refused");

        // Queued behind a handler that stops the actor: dropped unanswered.
        let release = hold(&system, &actor, true);
        let answer = waits_for_room(&label, release, || actor.ask_blocking(Msg::Count));
        assert!(
            matches!(answer, Err(AskBlockingError::NoReply)),
            "{label}: {answer:?}"
        );
        system.run_until_idle();
        match actor.ask_blocking(Msg::Count) {
            Err(AskBlockingError::NotSent(refused)) => {
                assert_eq!(refused.reason, SendErrorReason::Stopped, "{label}");
                assert!(matches!(refused.message, Msg::Count(_)), "{label}");
            }
            other => panic!("{label}: {other:?}, not NotSent"),
        }
    }
}

#[test]
fn control_envelopes_are_never_refused_for_room() {
    for (label, config) in configurations() {
        let system = system(&config);
        let (actor, items) = probe(&system, SpawnOptions::new().capacity(1));
        let release = hold(&system, &actor, false);
        actor.send(Msg::Item(1)).unwrap();
        assert!(actor.try_send(Msg::Item(2)).is_err(), "{label}: full");
        assert!(
            actor.stop(),
            "{label}: the stop signal is queued on a full mailbox"
        );
        release.send(()).unwrap();
        system.run_until_idle();
        assert_eq!(
            seen(&items),
            vec![1],
            "{label}: stopped after the queued message"
        );
        assert!(actor.is_stopped(), "{label}");
        match actor.try_send(Msg::Item(3)) {
            Err(TrySendError::Stopped(Msg::Item(3))) => {}
            other => panic!("{label}: {other:?}, not Stopped(3)"),
        }
        let refused = actor.send(Msg::Item(4)).unwrap_err();
        assert_eq!(refused.reason, SendErrorReason::Stopped, "{label}");
        assert!(
            !refused.is_full(),
            "{label}: a stopped actor's refusal is not full"
        );
    }
}

/// Spawns a bounded child from inside an actor and reports what `try_spawn_with` said.
struct Spawner;

impl Actor for Spawner {
    type Msg = (usize, loka::ReplyTo<Result<(), SpawnError>>);
    fn handle(&mut self, ctx: &mut Context<Self>, (capacity, reply): Self::Msg) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let child = ctx.try_spawn_with(Probe { seen }, SpawnOptions::new().capacity(capacity));
        reply.send(child.map(drop));
    }
}

#[test]
fn capacity_zero_is_a_typed_error_and_nothing_is_spawned() {
    for (label, config) in configurations() {
        let system = system(&config);
        let before = system.stats().actors_spawned;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let refused = system
            .try_spawn_with(Probe { seen }, SpawnOptions::new().capacity(0))
            .unwrap_err();
        assert_eq!(refused, SpawnError::ZeroCapacity { capacity: 0 }, "{label}");
        let text = refused.to_string();
        assert!(
            text.contains("capacity 0") && text.contains("SpawnOptions::capacity"),
            "{text}"
        );
        assert_eq!(system.stats().actors_spawned, before, "{label}");
        let spawner = system.spawn(Spawner);
        let from_actor = spawner.ask(|reply| (0, reply)).unwrap().wait().unwrap();
        assert_eq!(
            from_actor,
            Err(SpawnError::ZeroCapacity { capacity: 0 }),
            "{label}"
        );
        let ok = spawner.ask(|reply| (1, reply)).unwrap().wait().unwrap();
        assert_eq!(ok, Ok(()), "{label}");
        system.run_until_idle();
        // The spawner and the one child with capacity 1.
        assert_eq!(system.stats().actors_spawned, before + 2, "{label}");
    }
}

#[test]
fn unbounded_actors_try_send_is_send_and_mailbox_len_a_reading() {
    for (label, config) in configurations() {
        let system = system(&config);
        let (actor, items) = probe(&system, SpawnOptions::new());
        assert_eq!(actor.capacity(), None, "{label}");
        let release = hold(&system, &actor, false);
        for n in 0..40 {
            actor.try_send(Msg::Item(n)).unwrap();
        }
        block_on(actor.send_async(Msg::Item(40))).unwrap();
        // The actor-centric and simulated mailboxes hold the messages; the message-centric
        // engine's shared queues are not counted per actor.
        let expected = if config.engine == EngineKind::MessageCentric {
            0
        } else {
            41
        };
        assert_eq!(actor.mailbox_len(), expected, "{label}");
        release.send(()).unwrap();
        system.run_until_idle();
        assert_eq!(seen(&items), (0..=40).collect::<Vec<_>>(), "{label}");
        assert_eq!(actor.mailbox_len(), 0, "{label}");
        assert_eq!(system.stats().mailbox_full, 0, "{label}");
    }
}
