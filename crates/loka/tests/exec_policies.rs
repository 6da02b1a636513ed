//! Execution policies (docs/exec-policies.md): each policy runs handlers where it says, keeps one
//! handler at a time, and the safety rules (inline depth cap, cycles, `seq` ownership, blocking
//! promotion under `auto`) act. The guarantee suite (tests/guarantees) runs FIFO, no loss and no
//! concurrent handler under every execution mode as well.

use loka::exec_policy::{Characteristics, Comm, Cpu, Par};
use loka::{Actor, ActorRef, Config, Context, ExecMode, ExecPolicy, ReplyTo, SpawnOptions, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

fn system(workers: usize, exec: ExecMode) -> System {
    let host = std::thread::available_parallelism().map_or(1, |n| n.get());
    System::from_config(Config {
        workers,
        exec,
        topology: if workers <= host {
            "host".to_owned()
        } else {
            format!("synthetic:package:1 core:{workers} pu:1")
        },
        ..Config::default()
    })
    .unwrap()
}

/// Reports the thread and worker its handler runs on.
struct WhereAmI;
impl Actor for WhereAmI {
    type Msg = ReplyTo<(ThreadId, Option<usize>, String)>;
    fn handle(&mut self, ctx: &mut Context<Self>, reply: Self::Msg) {
        let t = std::thread::current();
        reply.send((
            t.id(),
            ctx.worker_index(),
            t.name().unwrap_or("").to_owned(),
        ));
    }
}

#[test]
fn a_thread_actor_runs_on_its_own_thread_and_a_task_actor_on_a_worker() {
    let system = system(2, ExecMode::AllTask);
    let threaded = system.spawn_with(WhereAmI, SpawnOptions::new().exec(ExecPolicy::Thread));
    let tasked = system.spawn(WhereAmI);
    let (t1, w1, name1) = threaded.ask(|r| r).unwrap().wait().unwrap();
    let (t2, _, _) = threaded.ask(|r| r).unwrap().wait().unwrap();
    assert_eq!(w1, None, "a dedicated thread is no worker");
    assert!(name1.starts_with("loka-actor-"), "{name1}");
    assert_eq!(t1, t2, "always the same thread");
    let (_, w, name) = tasked.ask(|r| r).unwrap().wait().unwrap();
    assert!(w.is_some() && name.starts_with("loka-worker"), "{name}");
    system.run_until_idle();
    assert_eq!(system.stats().dedicated_threads, 1);
}

/// Records whether its handler ran while `sender_busy` was set (inside the sender's handler).
struct Leaf {
    sender_busy: Arc<AtomicBool>,
    inline: Arc<AtomicU64>,
    seen: Arc<AtomicU64>,
}
impl Actor for Leaf {
    type Msg = ThreadId;
    fn handle(&mut self, _ctx: &mut Context<Self>, sender_thread: ThreadId) {
        self.seen.fetch_add(1, SeqCst);
        if self.sender_busy.load(SeqCst) && std::thread::current().id() == sender_thread {
            self.inline.fetch_add(1, SeqCst);
        }
    }
}

struct Feeder {
    leaf: ActorRef<ThreadId>,
    busy: Arc<AtomicBool>,
}
impl Actor for Feeder {
    type Msg = u32;
    fn handle(&mut self, _ctx: &mut Context<Self>, n: u32) {
        self.busy.store(true, SeqCst);
        for _ in 0..n {
            self.leaf.send(std::thread::current().id()).unwrap();
        }
        self.busy.store(false, SeqCst);
    }
}

fn feed(policy: Option<ExecPolicy>, mode: ExecMode) -> (u64, u64, loka::Stats) {
    let system = system(2, mode);
    let busy = Arc::new(AtomicBool::new(false));
    let inline = Arc::new(AtomicU64::new(0));
    let seen = Arc::new(AtomicU64::new(0));
    let leaf = Leaf {
        sender_busy: Arc::clone(&busy),
        inline: Arc::clone(&inline),
        seen: Arc::clone(&seen),
    };
    let leaf = match policy {
        Some(p) => system.spawn_with(leaf, SpawnOptions::new().exec(p)),
        None => system.spawn(leaf),
    };
    let feeder = system.spawn(Feeder { leaf, busy });
    system.run_until_idle();
    for _ in 0..100 {
        feeder.send(10).unwrap();
        system.run_until_idle();
    }
    (inline.load(SeqCst), seen.load(SeqCst), system.stats())
}

#[test]
fn a_monitor_actor_runs_inline_in_its_senders_handler() {
    let (inline, seen, stats) = feed(Some(ExecPolicy::Monitor), ExecMode::AllTask);
    assert_eq!(seen, 1000);
    // Each batch of ten wakes it once (then it is idle again before the next send): inline.
    assert!(inline >= 900, "only {inline} of 1000 handled inline");
    assert!(stats.total.inline_runs >= 90, "{}", stats.total.inline_runs);
    // Control: as a task it never runs inside the feeder's handler.
    let (inline, seen, stats) = feed(None, ExecMode::AllTask);
    assert_eq!((inline, seen, stats.total.inline_runs), (0, 1000, 0));
}

#[test]
fn auto_mode_maps_declared_characteristics() {
    struct Declared;
    impl Actor for Declared {
        type Msg = ReplyTo<Option<usize>>;
        fn handle(&mut self, ctx: &mut Context<Self>, reply: Self::Msg) {
            reply.send(ctx.worker_index());
        }
        fn characteristics() -> Option<Characteristics> {
            // Master: ⟨false, _, low, high, low⟩ → thread.
            Some(Characteristics::new(Par::Low, Comm::High, Cpu::Low))
        }
    }
    let auto = system(2, ExecMode::Auto);
    let master = auto.spawn(Declared);
    assert_eq!(master.ask(|r| r).unwrap().wait().unwrap(), None);
    let task = system(2, ExecMode::AllTask);
    let master = task.spawn(Declared);
    assert!(master.ask(|r| r).unwrap().wait().unwrap().is_some());
    // An explicit policy wins over the mode.
    let pinned = auto.spawn_with(Declared, SpawnOptions::new().exec(ExecPolicy::Task));
    assert!(pinned.ask(|r| r).unwrap().wait().unwrap().is_some());
    // A type that names its policy gets it in every mode, unless the spawn says otherwise.
    struct OwnThread;
    impl Actor for OwnThread {
        type Msg = ReplyTo<Option<usize>>;
        fn handle(&mut self, ctx: &mut Context<Self>, reply: Self::Msg) {
            reply.send(ctx.worker_index());
        }
        fn exec_policy() -> Option<ExecPolicy> {
            Some(ExecPolicy::Thread)
        }
    }
    for system in [&auto, &task] {
        let own = system.spawn(OwnThread);
        assert_eq!(own.ask(|r| r).unwrap().wait().unwrap(), None);
    }
    let overridden = task.spawn_with(OwnThread, SpawnOptions::new().exec(ExecPolicy::Task));
    assert!(overridden.ask(|r| r).unwrap().wait().unwrap().is_some());
}

/// Fails the test if two of its handlers ever overlap; counts messages.
struct Exclusive {
    running: AtomicBool,
    seen: Arc<AtomicU64>,
    overlaps: Arc<AtomicU64>,
}
impl Actor for Exclusive {
    type Msg = ();
    fn handle(&mut self, _ctx: &mut Context<Self>, _: ()) {
        if self.running.swap(true, SeqCst) {
            self.overlaps.fetch_add(1, SeqCst);
        }
        std::hint::black_box((0..50).sum::<u64>());
        self.seen.fetch_add(1, SeqCst);
        self.running.store(false, SeqCst);
    }
}

struct Blaster(ActorRef<()>);
impl Actor for Blaster {
    type Msg = u32;
    fn handle(&mut self, _ctx: &mut Context<Self>, n: u32) {
        for _ in 0..n {
            self.0.send(()).unwrap();
        }
    }
}

#[test]
fn monitor_and_seq_never_run_a_handler_concurrently_with_itself() {
    for policy in [ExecPolicy::Monitor, ExecPolicy::Seq] {
        let system = system(4, ExecMode::AllTask);
        let seen = Arc::new(AtomicU64::new(0));
        let overlaps = Arc::new(AtomicU64::new(0));
        let target = system.spawn_with(
            Exclusive {
                running: AtomicBool::new(false),
                seen: Arc::clone(&seen),
                overlaps: Arc::clone(&overlaps),
            },
            SpawnOptions::new().exec(policy),
        );
        // Half the senders on dedicated threads, half on the workers: wakes from many threads.
        let blasters: Vec<_> = (0..8)
            .map(|i| {
                let exec = if i % 2 == 0 {
                    ExecPolicy::Thread
                } else {
                    ExecPolicy::Task
                };
                system.spawn_with(Blaster(target.clone()), SpawnOptions::new().exec(exec))
            })
            .collect();
        for _ in 0..50 {
            for b in &blasters {
                b.send(100).unwrap();
            }
        }
        system.run_until_idle();
        assert_eq!(seen.load(SeqCst), 8 * 50 * 100, "{policy}");
        assert_eq!(overlaps.load(SeqCst), 0, "{policy}: handlers overlapped");
        // Under contention every send may find the target busy; one send to it idle, from a
        // worker, must run inline.
        blasters[1].send(1).unwrap();
        system.run_until_idle();
        let stats = system.stats();
        assert!(stats.total.inline_runs > 0, "{policy}: never inline");
        if policy == ExecPolicy::Seq {
            // Woken once from a dedicated thread, then once from a worker, each time idle: two
            // owners, so it is demoted.
            let from_thread = system.spawn_with(
                Blaster(target.clone()),
                SpawnOptions::new().exec(ExecPolicy::Thread),
            );
            let from_worker = system.spawn(Blaster(target.clone()));
            for sender in [&from_thread, &from_worker, &from_thread] {
                sender.send(1).unwrap();
                system.run_until_idle();
            }
            assert!(
                system.stats().seq_demotions >= 1,
                "woken from two threads: no single owner"
            );
        }
    }
}

/// B and C, both `monitor`, answer each other `rounds` times; B records re-entry.
enum Ring {
    Start(ActorRef<Ring>, u32),
    Ball(u32),
}
struct RingActor {
    peer: Option<ActorRef<Ring>>,
    in_handler: bool,
    reentered: Arc<AtomicU64>,
    done: Arc<AtomicU64>,
}
impl Actor for RingActor {
    type Msg = Ring;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: Ring) {
        if std::mem::replace(&mut self.in_handler, true) {
            self.reentered.fetch_add(1, SeqCst);
        }
        match msg {
            Ring::Start(peer, n) => {
                peer.send(Ring::Ball(n)).unwrap();
                self.peer = Some(peer);
            }
            Ring::Ball(0) => {
                self.done.fetch_add(1, SeqCst);
            }
            Ring::Ball(n) => {
                if let Some(peer) = &self.peer {
                    peer.send(Ring::Ball(n - 1)).unwrap();
                }
            }
        }
        self.in_handler = false;
    }
}

struct Starter {
    b: ActorRef<Ring>,
    c: ActorRef<Ring>,
}
impl Actor for Starter {
    type Msg = u32;
    fn handle(&mut self, _ctx: &mut Context<Self>, n: u32) {
        self.c.send(Ring::Start(self.b.clone(), 0)).unwrap(); // C learns B (Ball(0) to B)
        self.b.send(Ring::Start(self.c.clone(), n)).unwrap();
    }
}

#[test]
fn a_cycle_of_monitors_is_detected_and_queued_never_reentered() {
    let system = system(1, ExecMode::AllTask);
    let reentered = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicU64::new(0));
    let make = || RingActor {
        peer: None,
        in_handler: false,
        reentered: Arc::clone(&reentered),
        done: Arc::clone(&done),
    };
    let monitor = SpawnOptions::new().exec(ExecPolicy::Monitor);
    let b = system.spawn_with(make(), monitor.clone());
    let c = system.spawn_with(make(), monitor);
    system.run_until_idle();
    let starter = system.spawn(Starter { b, c });
    starter.send(1_000).unwrap();
    system.run_until_idle();
    assert_eq!(reentered.load(SeqCst), 0, "a handler was re-entered");
    assert_eq!(done.load(SeqCst), 2, "both balls arrived");
    let stats = system.stats();
    assert!(stats.monitor_cycles > 0, "the B→C→B cycle was not seen");
    assert!(stats.total.inline_runs > 0);
}

/// Forwards to the next actor of a chain; the last counts.
struct Link {
    next: Option<ActorRef<u32>>,
    seen: Arc<AtomicU64>,
}
impl Actor for Link {
    type Msg = u32;
    fn handle(&mut self, _ctx: &mut Context<Self>, n: u32) {
        match &self.next {
            Some(next) => next.send(n).unwrap(),
            None => {
                self.seen.fetch_add(u64::from(n), SeqCst);
            }
        }
    }
}

#[test]
fn the_inline_chain_is_capped_and_nothing_is_lost() {
    let system = system(1, ExecMode::AllMonitor);
    let seen = Arc::new(AtomicU64::new(0));
    let mut next = None;
    for _ in 0..20 {
        next = Some(system.spawn(Link {
            next: next.take(),
            seen: Arc::clone(&seen),
        }));
    }
    let head = next.unwrap();
    system.run_until_idle();
    // A task actor starts the chain, so the monitors run inline behind it.
    let kick = system.spawn_with(Blaster2(head), SpawnOptions::new().exec(ExecPolicy::Task));
    for _ in 0..10 {
        kick.send(1).unwrap();
        system.run_until_idle();
    }
    assert_eq!(seen.load(SeqCst), 10);
    let stats = system.stats();
    assert!(
        stats.total.inline_depth_fallbacks >= 10,
        "{}",
        stats.total.inline_depth_fallbacks
    );
}

struct Blaster2(ActorRef<u32>);
impl Actor for Blaster2 {
    type Msg = u32;
    fn handle(&mut self, _ctx: &mut Context<Self>, n: u32) {
        self.0.send(n).unwrap();
    }
}

/// Sleeps (blocks its thread) per message: a handler that does blocking I/O.
struct Sleeper {
    handled: Arc<AtomicU64>,
}
impl Actor for Sleeper {
    type Msg = ();
    fn handle(&mut self, _ctx: &mut Context<Self>, _: ()) {
        std::thread::sleep(Duration::from_millis(10));
        self.handled.fetch_add(1, SeqCst);
    }
}

struct Ponger;
impl Actor for Ponger {
    type Msg = ReplyTo<()>;
    fn handle(&mut self, _ctx: &mut Context<Self>, reply: ReplyTo<()>) {
        reply.send(());
    }
}

/// One worker; a sleeper gets 100 messages (1 s of sleeping), then a ponger must answer 20 pings.
/// Returns how many sleeper messages were still unhandled when the last pong arrived, and the
/// stats.
fn blocked_worker(mode: ExecMode) -> (u64, loka::Stats) {
    let system = System::from_config(Config {
        workers: 1,
        exec: mode,
        // Under `all-task` the stall guard would promote the sleeper too (docs/stalls.md): off,
        // so that `all-task` is the control without any promotion.
        stall: loka::StallGuard {
            promote: mode != ExecMode::AllTask,
            ..loka::StallGuard::default()
        },
        // 1 message per activation: the blocked worker gets back to its queue between sleeps.
        throughput: 1,
        ..Config::default()
    })
    .unwrap();
    let handled = Arc::new(AtomicU64::new(0));
    let sleeper = system.spawn(Sleeper {
        handled: Arc::clone(&handled),
    });
    let ponger = system.spawn(Ponger);
    system.run_until_idle();
    for _ in 0..100 {
        sleeper.send(()).unwrap();
    }
    std::thread::sleep(Duration::from_millis(50));
    let start = Instant::now();
    for _ in 0..20 {
        ponger.ask(|r| r).unwrap().wait().unwrap();
    }
    let left = 100 - handled.load(SeqCst);
    eprintln!(
        "{mode}: 20 pings in {:?}, {left} sleeps left",
        start.elapsed()
    );
    system.run_until_idle();
    assert_eq!(handled.load(SeqCst), 100);
    (left, system.stats())
}

#[test]
fn auto_promotes_an_actor_that_blocks_a_worker_and_the_others_keep_running() {
    let (left, stats) = blocked_worker(ExecMode::Auto);
    assert_eq!(stats.promoted_to_thread, 1);
    assert_eq!(stats.dedicated_threads, 1);
    // The pings were answered while the sleeper still had most of its work ahead.
    assert!(
        left >= 50,
        "pings waited for the sleeper: {left} sleeps left"
    );
    // Control: without the promotion the only worker alternates sleeps and pings, so the
    // pings wait behind sleeps.
    let (left, stats) = blocked_worker(ExecMode::AllTask);
    assert_eq!(stats.promoted_to_thread, 0);
    assert!(
        left < 100 - 15,
        "the control did not wait behind the sleeper: {left} left"
    );
}

#[test]
fn a_compute_bound_actor_is_not_promoted() {
    compute_bound_actor_stays_a_task(0);
}

/// The same on an overloaded machine: ten threads spinning beside the one worker leave it a
/// fraction of a core, so the actor's long activations are mostly off the CPU, preempted. Only a
/// thread that gives its CPU up (a voluntary switch) counts as blocking; without that rule this
/// promoted the actor.
#[test]
fn a_compute_bound_actor_is_not_promoted_when_preempted() {
    compute_bound_actor_stays_a_task(10);
}

fn compute_bound_actor_stays_a_task(hogs: usize) {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let hogs: Vec<_> = (0..hogs)
        .map(|_| {
            let stop = std::sync::Arc::clone(&stop);
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    struct Spin;
    impl Actor for Spin {
        type Msg = ();
        fn handle(&mut self, _ctx: &mut Context<Self>, _: ()) {
            let until = Instant::now() + Duration::from_millis(5);
            while Instant::now() < until {
                std::hint::spin_loop();
            }
        }
    }
    let system = System::from_config(Config {
        workers: 1,
        exec: ExecMode::Auto,
        throughput: 1,
        ..Config::default()
    })
    .unwrap();
    let spin = system.spawn(Spin);
    for _ in 0..20 {
        spin.send(()).unwrap();
    }
    system.run_until_idle();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for hog in hogs {
        hog.join().unwrap();
    }
    assert_eq!(system.stats().promoted_to_thread, 0);
}

/// A thread actor and a task actor pass a counter back and forth: quiescence waits for both.
struct Volley {
    other: Arc<Mutex<Option<ActorRef<u32>>>>,
    last: Arc<AtomicU64>,
}
impl Actor for Volley {
    type Msg = u32;
    fn handle(&mut self, _ctx: &mut Context<Self>, n: u32) {
        self.last.store(u64::from(n), SeqCst);
        if n > 0 {
            let other = self.other.lock().unwrap().clone();
            other
                .expect("wired before the first ball")
                .send(n - 1)
                .unwrap();
        }
    }
}

#[test]
fn quiescence_waits_for_dedicated_threads() {
    let system = system(2, ExecMode::AllTask);
    let last = Arc::new(AtomicU64::new(u64::MAX));
    let (slot_a, slot_b) = (Arc::default(), Arc::default());
    let a = system.spawn_with(
        Volley {
            other: Arc::clone(&slot_a),
            last: Arc::clone(&last),
        },
        SpawnOptions::new().exec(ExecPolicy::Thread),
    );
    let b = system.spawn(Volley {
        other: Arc::clone(&slot_b),
        last: Arc::clone(&last),
    });
    *slot_a.lock().unwrap() = Some(b.clone());
    *slot_b.lock().unwrap() = Some(a.clone());
    for round in 0..20 {
        a.send(2_000 + round).unwrap();
        system.run_until_idle();
        assert_eq!(
            last.load(SeqCst),
            0,
            "run_until_idle returned before the volley ended"
        );
        last.store(u64::MAX, SeqCst);
    }
    system.shutdown();
}

#[test]
fn shutdown_waits_for_a_blocked_thread_actor_and_stops_it() {
    struct Stuck(Arc<AtomicBool>);
    impl Actor for Stuck {
        type Msg = ();
        fn handle(&mut self, _ctx: &mut Context<Self>, _: ()) {
            std::thread::sleep(Duration::from_millis(100));
        }
        fn stopped(&mut self, _ctx: &mut Context<Self>) {
            self.0.store(true, SeqCst);
        }
    }
    let system = System::from_config(Config {
        workers: 1,
        exec: ExecMode::AllThread,
        // Shutdown lets the running activation finish: one message each.
        throughput: 1,
        ..Config::default()
    })
    .unwrap();
    let stopped = Arc::new(AtomicBool::new(false));
    let stuck = system.spawn(Stuck(Arc::clone(&stopped)));
    for _ in 0..50 {
        stuck.send(()).unwrap();
    }
    std::thread::sleep(Duration::from_millis(20));
    let start = Instant::now();
    system.shutdown();
    assert!(stopped.load(SeqCst), "its stopped hook ran");
    // It finished the sleep it was in, not the 49 queued ones.
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    assert!(system.stats().dead_letters >= 40);
}

#[test]
fn an_unknown_place_is_a_typed_error_and_spawns_nothing() {
    let system = system(1, ExecMode::AllTask);
    let places = system.machine().places();
    let err = system
        .try_spawn_with(WhereAmI, SpawnOptions::new().place(places + 3))
        .map(|_| ())
        .expect_err("refused");
    let text = err.to_string();
    assert!(
        text.contains(&format!("unknown place {}", places + 3)),
        "{text}"
    );
    assert_eq!(system.stats().actors_spawned, 0);
    assert!(system
        .try_spawn_with(WhereAmI, SpawnOptions::new().place(0))
        .is_ok());
}

#[test]
fn auto_measures_an_undeclared_leaf_and_runs_it_inline() {
    // Under auto, the undeclared leaf (no sends, short handlers) is measured on the workers and
    // mapped (LowCPU → monitor): later batches run inside the feeder's handler.
    let (inline, seen, stats) = feed(None, ExecMode::Auto);
    assert_eq!(seen, 1000);
    assert!(stats.mapped_online >= 1, "nothing was mapped online");
    assert!(
        inline > 0 && stats.total.inline_runs > 0,
        "the mapped leaf never ran inline"
    );
    // Under all-task nothing is measured.
    let (_, _, stats) = feed(None, ExecMode::AllTask);
    assert_eq!(stats.mapped_online, 0);
    // A type that names its characteristics is not re-measured.
    let (_, _, stats) = feed(Some(ExecPolicy::Task), ExecMode::Auto);
    assert_eq!(stats.mapped_online, 0);
}
