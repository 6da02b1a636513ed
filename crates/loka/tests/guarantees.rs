//! The runtime's guarantees, checked under every configuration of `common::configurations()`:
//! FIFO per sender→receiver pair, no loss, no duplicate, no concurrent handler, quiescence,
//! panic isolation, ask, stop semantics.

mod common;

use common::{configurations, heavy_configurations, mix};
use loka::{Actor, ActorFailure, ActorRef, AskError, Context, ReplyTo, System};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn system(config: &loka::Config) -> System {
    System::from_config(config.clone()).expect("valid test configuration")
}

// ---------------------------------------------------------------- FIFO per sender → receiver

struct Receiver {
    next: Vec<u64>,
    violations: Arc<AtomicUsize>,
    done: Option<ReplyTo<Vec<u64>>>,
    expected_total: u64,
    received: u64,
}

enum RecvMsg {
    Item { sender: usize, seq: u64 },
    WhenDone(ReplyTo<Vec<u64>>),
}

impl Actor for Receiver {
    type Msg = RecvMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: RecvMsg) {
        match msg {
            RecvMsg::Item { sender, seq } => {
                if self.next[sender] != seq {
                    self.violations.fetch_add(1, SeqCst);
                }
                self.next[sender] = seq + 1;
                self.received += 1;
            }
            RecvMsg::WhenDone(reply) => self.done = Some(reply),
        }
        if self.received == self.expected_total {
            if let Some(reply) = self.done.take() {
                reply.send(self.next.clone());
            }
        }
    }
}

struct Sender {
    index: usize,
    count: u64,
    to: ActorRef<RecvMsg>,
}

impl Actor for Sender {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _: ()) {
        // Send in slices so other actors interleave with us, then continue via our own mailbox.
        let start = self.count;
        let end = (start + 1000).min(100_000);
        for seq in start..end {
            self.to
                .send(RecvMsg::Item {
                    sender: self.index,
                    seq,
                })
                .unwrap();
        }
        self.count = end;
        if end < 100_000 {
            ctx.myself().send(()).unwrap();
        } else {
            ctx.stop();
        }
    }
}

#[test]
fn fifo_per_sender_receiver_pair_8_senders_100k_each() {
    for (label, config) in configurations() {
        let system = system(&config);
        let violations = Arc::new(AtomicUsize::new(0));
        let receiver = system.spawn(Receiver {
            next: vec![0; 8],
            violations: Arc::clone(&violations),
            done: None,
            expected_total: 8 * 100_000,
            received: 0,
        });
        for index in 0..8 {
            let sender = system.spawn(Sender {
                index,
                count: 0,
                to: receiver.clone(),
            });
            sender.send(()).unwrap();
        }
        let next = receiver.ask(RecvMsg::WhenDone).unwrap().wait().unwrap();
        assert_eq!(
            next,
            vec![100_000; 8],
            "{label}: every sender's messages arrived"
        );
        assert_eq!(violations.load(SeqCst), 0, "{label}: FIFO violated");
        system.shutdown();
    }
}

#[test]
fn fifo_from_plain_threads() {
    for (label, config) in configurations() {
        let system = system(&config);
        let violations = Arc::new(AtomicUsize::new(0));
        let receiver = system.spawn(Receiver {
            next: vec![0; 4],
            violations: Arc::clone(&violations),
            done: None,
            expected_total: 4 * 20_000,
            received: 0,
        });
        std::thread::scope(|s| {
            for sender in 0..4 {
                let to = receiver.clone();
                s.spawn(move || {
                    for seq in 0..20_000 {
                        to.send(RecvMsg::Item { sender, seq }).unwrap();
                    }
                });
            }
        });
        let next = receiver.ask(RecvMsg::WhenDone).unwrap().wait().unwrap();
        assert_eq!(next, vec![20_000; 4], "{label}");
        assert_eq!(violations.load(SeqCst), 0, "{label}: FIFO violated");
    }
}

// ------------------------------------- no loss, no duplicate, no concurrent handler (10 M msgs)

const RELAYS: usize = 1_000;
const MESSAGES: u64 = 100_000;
const HOPS: u32 = 100; // MESSAGES × HOPS = 10,000,000 deliveries

struct Relay {
    peers: Arc<Vec<ActorRef<Hop>>>,
    in_handler: Arc<AtomicBool>,
    overlaps: Arc<AtomicUsize>,
    count: Arc<AtomicU64>,
    checksum: Arc<AtomicU64>,
    local_count: u64,
    local_sum: u64,
}

enum Hop {
    Peers(Arc<Vec<ActorRef<Hop>>>),
    Msg { id: u64, ttl: u32 },
    Flush,
}

impl Actor for Relay {
    type Msg = Hop;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: Hop) {
        // The flag lives outside the actor: two overlapping activations would both see it.
        if self.in_handler.swap(true, SeqCst) {
            self.overlaps.fetch_add(1, SeqCst);
        }
        match msg {
            Hop::Peers(peers) => self.peers = peers,
            Hop::Msg { id, ttl } => {
                self.local_count += 1;
                self.local_sum = self
                    .local_sum
                    .wrapping_add(mix(id.wrapping_mul(1_000) + u64::from(ttl)));
                if ttl > 0 {
                    let next = (id.wrapping_mul(31) + u64::from(ttl)) as usize % RELAYS;
                    self.peers[next]
                        .send(Hop::Msg { id, ttl: ttl - 1 })
                        .unwrap();
                }
            }
            Hop::Flush => {
                self.count.fetch_add(self.local_count, SeqCst);
                self.checksum.fetch_add(self.local_sum, SeqCst);
                self.peers = Arc::new(Vec::new());
                ctx.stop();
            }
        }
        self.in_handler.store(false, SeqCst);
    }
}

#[test]
fn no_loss_no_duplicate_no_concurrent_handler_10m_messages_1000_actors() {
    let mut expected_sum = 0u64;
    for id in 0..MESSAGES {
        for ttl in 0..HOPS {
            expected_sum = expected_sum.wrapping_add(mix(id * 1_000 + u64::from(ttl)));
        }
    }
    for (label, config) in heavy_configurations() {
        let system = system(&config);
        let overlaps = Arc::new(AtomicUsize::new(0));
        let count = Arc::new(AtomicU64::new(0));
        let checksum = Arc::new(AtomicU64::new(0));
        let relays: Vec<_> = (0..RELAYS)
            .map(|_| {
                system.spawn(Relay {
                    peers: Arc::new(Vec::new()),
                    in_handler: Arc::new(AtomicBool::new(false)),
                    overlaps: Arc::clone(&overlaps),
                    count: Arc::clone(&count),
                    checksum: Arc::clone(&checksum),
                    local_count: 0,
                    local_sum: 0,
                })
            })
            .collect();
        let peers = Arc::new(relays.clone());
        for r in &relays {
            r.send(Hop::Peers(Arc::clone(&peers))).unwrap();
        }
        for id in 0..MESSAGES {
            relays[id as usize % RELAYS]
                .send(Hop::Msg { id, ttl: HOPS - 1 })
                .unwrap();
        }
        system.run_until_idle();
        drop(peers);
        for r in &relays {
            r.send(Hop::Flush).unwrap();
        }
        system.run_until_idle();
        assert_eq!(
            count.load(SeqCst),
            MESSAGES * u64::from(HOPS),
            "{label}: lost or duplicated"
        );
        assert_eq!(
            checksum.load(SeqCst),
            expected_sum,
            "{label}: wrong set of deliveries"
        );
        assert_eq!(
            overlaps.load(SeqCst),
            0,
            "{label}: a handler ran concurrently with itself"
        );
        let stats = system.stats();
        assert_eq!(stats.dead_letters, 0, "{label}");
        assert!(
            stats.total.messages >= MESSAGES * u64::from(HOPS),
            "{label}"
        );
    }
}

// --------------------------------------------------------------------------------- quiescence

struct Spawner {
    depth: u32,
    fanout: u32,
    started: Arc<AtomicU64>,
}

impl Actor for Spawner {
    type Msg = ();
    fn started(&mut self, ctx: &mut Context<Self>) {
        self.started.fetch_add(1, SeqCst);
        if self.depth > 0 {
            for _ in 0..self.fanout {
                ctx.spawn(Spawner {
                    depth: self.depth - 1,
                    fanout: self.fanout,
                    started: Arc::clone(&self.started),
                });
            }
        }
        ctx.stop();
    }
    fn handle(&mut self, _ctx: &mut Context<Self>, _: ()) {}
}

#[test]
fn quiescence_waits_for_actors_that_spawn_actors() {
    for (label, config) in configurations() {
        let system = system(&config);
        let started = Arc::new(AtomicU64::new(0));
        // 1 + 4 + 16 + ... + 4^7 actors
        drop(system.spawn(Spawner {
            depth: 7,
            fanout: 4,
            started: Arc::clone(&started),
        }));
        system.run_until_idle();
        let expected = (4u64.pow(8) - 1) / 3;
        assert_eq!(started.load(SeqCst), expected, "{label}");
        let stats = system.stats();
        assert_eq!(stats.actors_spawned, expected, "{label}");
        assert_eq!(stats.actors_live(), 0, "{label}: all stopped themselves");
    }
}

#[test]
fn idle_system_is_quiescent_quickly() {
    for (label, config) in configurations() {
        let system = system(&config);
        assert!(
            system.run_until_idle_timeout(Duration::from_secs(5)),
            "{label}: an empty system never became quiescent"
        );
    }
}

// ---------------------------------------------------------------------------- panic isolation

struct Fragile {
    handled: Arc<AtomicU64>,
}

impl Actor for Fragile {
    type Msg = bool;
    fn handle(&mut self, _ctx: &mut Context<Self>, boom: bool) {
        if boom {
            panic!("fragile actor asked to fail");
        }
        self.handled.fetch_add(1, SeqCst);
    }
}

struct Parent {
    failures: Arc<Mutex<Vec<ActorFailure>>>,
    child: Option<ActorRef<bool>>,
    handled: Arc<AtomicU64>,
}

impl Actor for Parent {
    type Msg = ();
    fn started(&mut self, ctx: &mut Context<Self>) {
        let child = ctx.spawn(Fragile {
            handled: Arc::clone(&self.handled),
        });
        child.send(false).unwrap();
        child.send(true).unwrap();
        child.send(false).unwrap(); // dropped: the child stopped at the panic
        self.child = Some(child);
    }
    fn handle(&mut self, _ctx: &mut Context<Self>, _: ()) {}
    fn child_failed(&mut self, _ctx: &mut Context<Self>, failure: ActorFailure) {
        self.failures.lock().unwrap().push(failure);
    }
}

#[test]
fn panic_stops_only_that_actor_and_is_reported_to_its_parent() {
    for (label, config) in configurations() {
        let system = system(&config);
        let failures = Arc::new(Mutex::new(Vec::new()));
        let handled = Arc::new(AtomicU64::new(0));
        let parent = system.spawn(Parent {
            failures: Arc::clone(&failures),
            child: None,
            handled: Arc::clone(&handled),
        });
        system.run_until_idle();
        let reported = failures.lock().unwrap().clone();
        assert_eq!(reported.len(), 1, "{label}: parent told once");
        assert!(reported[0].message.contains("asked to fail"), "{label}");
        assert_eq!(
            system.failures(),
            reported,
            "{label}: recorded by the system"
        );
        let stats = system.stats();
        assert_eq!(stats.panics, 1, "{label}");
        assert_eq!(
            stats.dead_letters, 1,
            "{label}: the message after the panic"
        );
        assert_eq!(handled.load(SeqCst), 1, "{label}");
        // The workers survived: the parent and new actors still run.
        assert!(!parent.is_stopped(), "{label}: parent unaffected");
        let survivor = system.spawn(Fragile {
            handled: Arc::clone(&handled),
        });
        for _ in 0..10 {
            survivor.send(false).unwrap();
        }
        system.run_until_idle();
        assert_eq!(
            handled.load(SeqCst),
            11,
            "{label}: workers keep running after a panic"
        );
    }
}

// ------------------------------------------------------------------------------------------ ask

struct Doubler;

impl Actor for Doubler {
    type Msg = (u64, ReplyTo<u64>);
    fn handle(&mut self, _ctx: &mut Context<Self>, (n, reply): Self::Msg) {
        reply.send(n * 2);
    }
}

struct Asker {
    doubler: ActorRef<(u64, ReplyTo<u64>)>,
    sum: u64,
}

enum AskerMsg {
    Go(u64, ReplyTo<u64>),
}

impl Actor for Asker {
    type Msg = AskerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: AskerMsg) {
        let AskerMsg::Go(n, done) = msg;
        // Ask n times in a chain, never blocking the worker; answer `done` at the end.
        fn step(me: &mut Asker, ctx: &mut Context<Asker>, left: u64, done: ReplyTo<u64>) {
            if left == 0 {
                done.send(me.sum);
                return;
            }
            let doubler = me.doubler.clone();
            ctx.ask(
                &doubler,
                |reply| (left, reply),
                move |me: &mut Asker, ctx, answer: Result<u64, AskError>| {
                    me.sum += answer.unwrap();
                    step(me, ctx, left - 1, done);
                },
            );
        }
        step(self, ctx, n, done);
    }
}

#[test]
fn ask_from_outside_and_from_inside_an_actor() {
    for (label, config) in configurations() {
        let system = system(&config);
        let doubler = system.spawn(Doubler);
        for n in 0..100 {
            let answer = doubler.ask(|r| (n, r)).unwrap().wait().unwrap();
            assert_eq!(answer, 2 * n, "{label}");
        }
        // Asks from inside: with one worker this only finishes if the asker does not block it.
        let asker = system.spawn(Asker {
            doubler: doubler.clone(),
            sum: 0,
        });
        let total = asker
            .ask(|r| AskerMsg::Go(50, r))
            .unwrap()
            .wait_timeout(Duration::from_secs(20))
            .unwrap();
        assert_eq!(total, (1..=50).map(|n| 2 * n).sum::<u64>(), "{label}");
    }
}

struct Silent;
impl Actor for Silent {
    type Msg = ReplyTo<u32>;
    fn handle(&mut self, _ctx: &mut Context<Self>, reply: ReplyTo<u32>) {
        drop(reply);
    }
}

#[test]
fn dropped_request_answers_no_reply_instead_of_hanging() {
    for (label, config) in configurations() {
        let system = system(&config);
        let silent = system.spawn(Silent);
        let answer = silent.ask(|r| r).unwrap().wait();
        assert_eq!(answer, Err(AskError::NoReply), "{label}");
    }
}

// ------------------------------------------------------------------------------------- stopping

struct Stoppable {
    seen: Arc<AtomicU64>,
    stopped: Arc<AtomicBool>,
}

enum StopMsg {
    Work,
    StopNow,
}

impl Actor for Stoppable {
    type Msg = StopMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: StopMsg) {
        match msg {
            StopMsg::Work => {
                self.seen.fetch_add(1, SeqCst);
            }
            StopMsg::StopNow => ctx.stop(),
        }
    }
    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.stopped.store(true, SeqCst);
    }
}

fn stoppable(system: &System) -> (ActorRef<StopMsg>, Arc<AtomicU64>, Arc<AtomicBool>) {
    let seen = Arc::new(AtomicU64::new(0));
    let stopped = Arc::new(AtomicBool::new(false));
    let actor = system.spawn(Stoppable {
        seen: Arc::clone(&seen),
        stopped: Arc::clone(&stopped),
    });
    (actor, seen, stopped)
}

#[test]
fn send_to_a_stopped_actor_returns_a_typed_error_with_the_message() {
    for (label, config) in configurations() {
        let system = system(&config);
        let (actor, _, stopped) = stoppable(&system);
        actor.send(StopMsg::StopNow).unwrap();
        system.run_until_idle();
        assert!(stopped.load(SeqCst), "{label}: stopped hook ran");
        assert!(actor.is_stopped(), "{label}");
        let err = actor.send(StopMsg::Work).unwrap_err();
        assert_eq!(err.actor, actor.id(), "{label}");
        assert!(
            matches!(err.message, StopMsg::Work),
            "{label}: message handed back"
        );
        assert!(err.to_string().contains("stopped"), "{label}");
        assert!(!actor.stop(), "{label}: stopping twice reports it");
    }
}

#[test]
fn stop_signal_delivers_messages_queued_before_it() {
    for (label, config) in configurations() {
        let system = system(&config);
        let (actor, seen, stopped) = stoppable(&system);
        for _ in 0..1_000 {
            actor.send(StopMsg::Work).unwrap();
        }
        assert!(actor.stop(), "{label}");
        system.run_until_idle();
        assert_eq!(
            seen.load(SeqCst),
            1_000,
            "{label}: poison pill comes after queued work"
        );
        assert!(stopped.load(SeqCst), "{label}");
        assert_eq!(system.stats().dead_letters, 0, "{label}");
    }
}

#[test]
fn messages_behind_a_handler_stop_are_counted_as_dead_letters() {
    for (label, config) in configurations() {
        let system = system(&config);
        let (actor, seen, _) = stoppable(&system);
        actor.send(StopMsg::StopNow).unwrap();
        // Some of these may be rejected (the actor stopped already), the rest become dead letters:
        // none disappears unaccounted.
        let mut rejected = 0;
        for _ in 0..100 {
            if actor.send(StopMsg::Work).is_err() {
                rejected += 1;
            }
        }
        system.run_until_idle();
        assert_eq!(seen.load(SeqCst), 0, "{label}");
        assert_eq!(system.stats().dead_letters + rejected, 100, "{label}");
    }
}

#[test]
fn actor_stops_when_its_last_reference_is_dropped() {
    for (label, config) in configurations() {
        let system = system(&config);
        let (actor, seen, stopped) = stoppable(&system);
        let copy = actor.clone();
        actor.send(StopMsg::Work).unwrap();
        drop(actor);
        system.run_until_idle();
        assert!(!stopped.load(SeqCst), "{label}: one reference is left");
        drop(copy);
        system.run_until_idle();
        assert!(stopped.load(SeqCst), "{label}: unreferenced actor stopped");
        assert_eq!(
            seen.load(SeqCst),
            1,
            "{label}: its queued message was handled first"
        );
    }
}

#[test]
fn shutdown_stops_every_live_actor() {
    for (label, config) in configurations() {
        let system = system(&config);
        let flags: Vec<_> = (0..10).map(|_| stoppable(&system)).collect();
        system.run_until_idle();
        system.shutdown();
        for (_, _, stopped) in &flags {
            assert!(
                stopped.load(SeqCst),
                "{label}: stopped hook ran at shutdown"
            );
        }
        assert_eq!(system.stats().actors_live(), 0, "{label}");
        assert!(flags[0].0.send(StopMsg::Work).is_err(), "{label}");
        system.shutdown(); // idempotent
    }
}

// ------------------------------------------------------------------------------- idle workers

#[test]
fn idle_workers_park_and_stop_polling() {
    for (label, config) in configurations() {
        let system = system(&config);
        let (actor, _, _) = stoppable(&system);
        for _ in 0..1_000 {
            actor.send(StopMsg::Work).unwrap();
        }
        system.run_until_idle();
        let before = system.stats().total;
        std::thread::sleep(Duration::from_millis(100));
        let after = system.stats().total;
        assert_eq!(
            after.steal_attempts, before.steal_attempts,
            "{label}: a quiescent system keeps polling"
        );
        assert!(
            after.parks >= config.workers as u64,
            "{label}: every worker parked"
        );
        // And it wakes up promptly for new work.
        actor.send(StopMsg::Work).unwrap();
        assert!(
            system.run_until_idle_timeout(Duration::from_secs(5)),
            "{label}"
        );
    }
}

// ------------------------------------------------------------------------------------------ hubs

struct Hub {
    workers_seen: Arc<Mutex<std::collections::HashSet<usize>>>,
}

impl Actor for Hub {
    type Msg = u32;
    fn handle(&mut self, ctx: &mut Context<Self>, _: u32) {
        if let Some(w) = ctx.worker_index() {
            self.workers_seen.lock().unwrap().insert(w);
        }
    }
}

struct Chatter {
    hub: ActorRef<u32>,
    left: u32,
}

impl Actor for Chatter {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _: ()) {
        for _ in 0..50 {
            self.hub.send(1).unwrap();
        }
        self.left -= 1;
        if self.left > 0 {
            ctx.myself().send(()).unwrap();
        } else {
            ctx.stop();
        }
    }
}

#[test]
fn hubs_stay_on_their_worker_under_hierarchical() {
    for (label, config) in configurations() {
        if !matches!(config.policy, loka::PolicyKind::Hierarchical { .. }) || config.workers < 2 {
            continue;
        }
        let system = system(&config);
        let workers_seen = Arc::new(Mutex::new(std::collections::HashSet::new()));
        let hub = system.spawn_with(
            Hub {
                workers_seen: Arc::clone(&workers_seen),
            },
            loka::SpawnOptions::new().hub(true),
        );
        for _ in 0..64 {
            system
                .spawn(Chatter {
                    hub: hub.clone(),
                    left: 20,
                })
                .send(())
                .unwrap();
        }
        system.run_until_idle();
        let seen = workers_seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 1, "{label}: the hub ran on workers {seen:?}");
        assert!(system.stats().hubs >= 1, "{label}");
    }
}

#[test]
fn hub_toggle_on_a_stopped_actor_is_an_error() {
    let system = System::builder().workers(1).build().unwrap();
    let (actor, _, _) = stoppable(&system);
    actor.set_hub(true).unwrap();
    actor.send(StopMsg::StopNow).unwrap();
    system.run_until_idle();
    let err = actor.set_hub(false).unwrap_err();
    assert_eq!(err.actor, actor.id());
    assert!(err.to_string().contains("stopped"), "{err}");
}

// -------------------------------------------------------------------------------- load balancing

struct Busy {
    left: u32,
}

impl Actor for Busy {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _: ()) {
        // A few µs of work per message, so queues stay long enough to be balanced.
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_micros(5) {
            std::hint::spin_loop();
        }
        self.left -= 1;
        if self.left == 0 {
            ctx.stop();
        } else {
            ctx.myself().send(()).unwrap();
        }
    }
}

#[test]
fn hierarchical_load_balancing_pulls_actors_along_migration_paths() {
    // One node (local rounds only) and four nodes (a global round must happen: all work starts
    // on node 0).
    for (topology, workers) in [
        ("synthetic:package:1 core:4 pu:1", 4),
        ("preset:xeon-x7560", 32),
    ] {
        let config = loka::Config {
            workers,
            policy: loka::PolicyKind::Hierarchical { auto_hubs: false },
            topology: topology.to_owned(),
            balance_interval: 20,
            ..loka::Config::default()
        };
        let system = system(&config);
        for _ in 0..200 {
            system
                .spawn_with(
                    Busy { left: 20 },
                    loka::SpawnOptions::new().placement(loka::Placement::Worker(0)),
                )
                .send(())
                .unwrap();
        }
        system.run_until_idle();
        let stats = system.stats();
        assert_eq!(stats.actors_live(), 0, "{topology}: every actor finished");
        assert!(
            stats.total.balance_rounds > 0,
            "{topology}: no balancing round ran"
        );
        assert!(
            stats.total.balance_migrations > 0,
            "{topology}: no actor was pulled along a migration path: {:?}",
            stats.total
        );
        if workers == 32 {
            // Workers outside node 0 can only pull through a global round (their own nodes hold
            // nothing to balance locally).
            let layout = &system.machine().layout;
            let remote_pulls: u64 = (0..workers)
                .filter(|&w| layout.node_of(w) != layout.node_of(0))
                .map(|w| stats.workers[w].balance_migrations)
                .sum();
            assert!(remote_pulls > 0, "no global round moved work off node 0");
        }
    }
}

// ------------------------------------------- actors referenced only by their in-flight requests

enum ClientMsg {
    Go,
    Answer(u64),
}

struct Service;

impl Actor for Service {
    type Msg = (u64, ActorRef<ClientMsg>);
    fn handle(&mut self, _ctx: &mut Context<Self>, (n, reply_to): Self::Msg) {
        // Answer, then drop what may be the client's last reference.
        reply_to.send(ClientMsg::Answer(n)).unwrap();
    }
}

struct Client {
    service: ActorRef<(u64, ActorRef<ClientMsg>)>,
    answers: Arc<AtomicU64>,
    left: u32,
}

impl Actor for Client {
    type Msg = ClientMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: ClientMsg) {
        if let ClientMsg::Answer(n) = msg {
            self.answers.fetch_add(n, SeqCst);
            self.left -= 1;
        }
        if self.left == 0 {
            ctx.stop();
        } else {
            self.service.send((1, ctx.myself())).unwrap();
        }
    }
}

#[test]
fn an_actor_referenced_only_by_its_own_requests_gets_every_reply() {
    for (label, config) in heavy_configurations() {
        let system = system(&config);
        let service = system.spawn(Service);
        let answers = Arc::new(AtomicU64::new(0));
        for _ in 0..200 {
            // The only reference after this statement travels inside the client's requests.
            system
                .spawn(Client {
                    service: service.clone(),
                    answers: Arc::clone(&answers),
                    left: 50,
                })
                .send(ClientMsg::Go)
                .unwrap();
        }
        system.run_until_idle();
        assert_eq!(answers.load(SeqCst), 200 * 50, "{label}: a reply was lost");
        assert_eq!(system.stats().dead_letters, 0, "{label}");
    }
}
