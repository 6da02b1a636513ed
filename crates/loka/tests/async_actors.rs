//! Async actors (docs/async.md) under every engine in `loka::EngineKind::ALL`: async `started`
//! holds messages back (in order, counted against a bounded mailbox's capacity), a panic while a
//! handler awaits is the actor's failure, `stop` waits for the current handler, shutdown drops
//! pending futures (their drop guards run), and under the simulation engine an awaited sleep
//! runs on virtual time.

use loka::{
    Actor, ActorRef, Async, AsyncActor, AsyncContext, Config, Context, EngineKind, ReplyTo,
    Requirement, SpawnError, SpawnOptions, System, TrySendError,
};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn systems() -> Vec<(EngineKind, System)> {
    EngineKind::ALL
        .iter()
        .map(|&engine| {
            let config = Config {
                workers: 2,
                engine,
                ..Config::default()
            };
            (engine, System::from_config(config).unwrap())
        })
        .collect()
}

/// Holds a request until released: a future an async actor can wait on for as long as a test
/// wants.
struct Gate {
    waiting: Vec<ReplyTo<()>>,
    open: bool,
}
enum GateMsg {
    Wait(ReplyTo<()>),
    Open,
}
impl Actor for Gate {
    type Msg = GateMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: GateMsg) {
        match msg {
            GateMsg::Wait(reply) if self.open => reply.send(()),
            GateMsg::Wait(reply) => self.waiting.push(reply),
            GateMsg::Open => {
                self.open = true;
                self.waiting.drain(..).for_each(|r| r.send(()));
            }
        }
    }
}

fn gate(system: &System) -> ActorRef<GateMsg> {
    system.spawn(Gate {
        waiting: Vec::new(),
        open: false,
    })
}

/// Waits at the gate in `started`, then records every number it gets.
struct SlowStart {
    gate: ActorRef<GateMsg>,
    seen: Arc<Mutex<Vec<u32>>>,
}
impl AsyncActor for SlowStart {
    type Msg = u32;
    async fn started(&mut self, ctx: &mut AsyncContext<Self>) {
        ctx.ask(&self.gate, GateMsg::Wait).await.unwrap();
    }
    async fn handle(&mut self, _ctx: &mut AsyncContext<Self>, n: u32) {
        self.seen.lock().unwrap().push(n);
    }
}

#[test]
fn async_started_holds_messages_in_order_against_the_bound() {
    for (engine, system) in systems() {
        let gate = gate(&system);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let actor = system.spawn_with(
            Async::new(SlowStart {
                gate: gate.clone(),
                seen: Arc::clone(&seen),
            }),
            SpawnOptions::default().capacity(3),
        );
        for n in 0..3 {
            actor.send(n).unwrap();
        }
        // Give the actor time to start and take the messages out: they still fill its mailbox.
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            matches!(actor.try_send(3), Err(TrySendError::Full(_))),
            "{engine}: held messages count against the capacity"
        );
        assert!(
            seen.lock().unwrap().is_empty(),
            "{engine}: nothing handled before started"
        );
        gate.send(GateMsg::Open).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while seen.lock().unwrap().len() < 3 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        actor.send(3).unwrap();
        while seen.lock().unwrap().len() < 4 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(
            *seen.lock().unwrap(),
            vec![0, 1, 2, 3],
            "{engine}: in order"
        );
        system.shutdown();
    }
}

/// Counts its drops: a future's drop guard.
struct Guard(Arc<AtomicUsize>);
impl Drop for Guard {
    fn drop(&mut self) {
        self.0.fetch_add(1, SeqCst);
    }
}

enum Work {
    /// Await the gate, then panic.
    PanicAfterAwait(ActorRef<GateMsg>),
    /// Stop, await the gate, then answer: the answer still comes.
    StopThenAwait(ActorRef<GateMsg>, ReplyTo<&'static str>),
    /// Answer, then await forever, holding a guard.
    Forever(Arc<AtomicUsize>, ReplyTo<()>),
    Ping(ReplyTo<()>),
}

struct Worker;
impl AsyncActor for Worker {
    type Msg = Work;
    async fn handle(&mut self, ctx: &mut AsyncContext<Self>, msg: Work) {
        match msg {
            Work::PanicAfterAwait(gate) => {
                ctx.ask(&gate, GateMsg::Wait).await.unwrap();
                panic!("boom after await");
            }
            Work::StopThenAwait(gate, reply) => {
                ctx.stop();
                ctx.ask(&gate, GateMsg::Wait).await.unwrap();
                reply.send("finished");
            }
            Work::Forever(drops, started) => {
                let _guard = Guard(drops);
                started.send(());
                std::future::pending::<()>().await;
            }
            Work::Ping(reply) => reply.send(()),
        }
    }
}

#[test]
fn a_panic_while_awaiting_is_the_actors_failure_and_isolated() {
    for (engine, system) in systems() {
        let gate = gate(&system);
        let worker = system.spawn(Async::new(Worker));
        let bystander = system.spawn(Async::new(Worker));
        worker.send(Work::PanicAfterAwait(gate.clone())).unwrap();
        let queued = worker.ask(Work::Ping).unwrap();
        // The bystander answers while the worker awaits.
        bystander.ask(Work::Ping).unwrap().wait().unwrap();
        gate.send(GateMsg::Open).unwrap();
        assert!(
            queued.wait().is_err(),
            "{engine}: the queued ping dies with the actor"
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        // Recorded as the actor terminates, just after it is seen stopped.
        while system.failures().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(worker.is_stopped(), "{engine}: the actor stopped");
        let failures = system.failures();
        assert!(
            failures
                .iter()
                .any(|f| f.message.contains("boom after await")),
            "{engine}: reported: {failures:?}"
        );
        bystander.ask(Work::Ping).unwrap().wait().unwrap();
        system.shutdown();
    }
}

#[test]
fn stop_takes_effect_after_the_current_handler() {
    for (engine, system) in systems() {
        let gate = gate(&system);
        let worker = system.spawn(Async::new(Worker));
        let answer = worker
            .ask(|reply| Work::StopThenAwait(gate.clone(), reply))
            .unwrap();
        let after = worker.ask(Work::Ping).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert!(!worker.is_stopped(), "{engine}: still in its handler");
        gate.send(GateMsg::Open).unwrap();
        assert_eq!(
            answer.wait(),
            Ok("finished"),
            "{engine}: the handler completes"
        );
        assert!(
            after.wait().is_err(),
            "{engine}: the next message is a dead letter"
        );
        system.shutdown();
    }
}

#[test]
fn shutdown_drops_pending_futures_and_their_guards_run() {
    for (engine, system) in systems() {
        let drops = Arc::new(AtomicUsize::new(0));
        let worker = system.spawn(Async::new(Worker));
        let awaiting = worker
            .ask(|reply| Work::Forever(Arc::clone(&drops), reply))
            .unwrap();
        let queued = worker.ask(Work::Ping).unwrap();
        drop(worker);
        awaiting.wait().unwrap();
        assert_eq!(drops.load(SeqCst), 0, "{engine}: still awaiting");
        system.shutdown();
        assert_eq!(drops.load(SeqCst), 1, "{engine}: the future was dropped");
        assert!(
            queued.wait().is_err(),
            "{engine}: the held message is a dead letter"
        );
    }
}

/// Sleeps, then answers how much time passed on the system's clock.
struct Sleeper;
impl AsyncActor for Sleeper {
    type Msg = ReplyTo<Duration>;
    async fn handle(&mut self, ctx: &mut AsyncContext<Self>, reply: ReplyTo<Duration>) {
        let before = ctx.now();
        ctx.sleep(Duration::from_secs(30)).await;
        reply.send(ctx.now() - before);
    }
}

#[test]
fn an_awaited_sleep_runs_on_virtual_time_under_the_simulation() {
    let system = System::from_config(Config {
        workers: 2,
        engine: EngineKind::Sim,
        ..Config::default()
    })
    .unwrap();
    let sleeper = system.spawn(Async::new(Sleeper));
    let started = Instant::now();
    let slept = sleeper.ask(|reply| reply).unwrap().wait().unwrap();
    assert!(
        slept >= Duration::from_secs(30),
        "virtual time advanced: {slept:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "not in wall time"
    );
    system.shutdown();
}

#[test]
fn an_awaited_sleep_waits_under_the_real_engines() {
    for (engine, system) in systems() {
        if engine == EngineKind::Sim {
            continue;
        }
        struct Short;
        impl AsyncActor for Short {
            type Msg = ReplyTo<Duration>;
            async fn handle(&mut self, ctx: &mut AsyncContext<Self>, reply: ReplyTo<Duration>) {
                let before = Instant::now();
                ctx.sleep(Duration::from_millis(20)).await;
                reply.send(before.elapsed());
            }
        }
        let short = system.spawn(Async::new(Short));
        let slept = short.ask(|reply| reply).unwrap().wait().unwrap();
        assert!(slept >= Duration::from_millis(19), "{engine}: {slept:?}");
        system.shutdown();
    }
}

/// Spawns a child that panics, then awaits the gate; records the failures it is told of, and
/// whether a handler was running when it was told.
struct Parent {
    gate: ActorRef<GateMsg>,
    in_handler: bool,
    told: Arc<Mutex<Vec<bool>>>,
}
struct Doomed;
impl Actor for Doomed {
    type Msg = ();
    fn handle(&mut self, _ctx: &mut Context<Self>, _: ()) {
        panic!("child boom");
    }
}
impl AsyncActor for Parent {
    type Msg = ReplyTo<()>;
    async fn handle(&mut self, ctx: &mut AsyncContext<Self>, done: ReplyTo<()>) {
        self.in_handler = true;
        ctx.spawn(Doomed).send(()).unwrap();
        ctx.ask(&self.gate, GateMsg::Wait).await.unwrap();
        self.in_handler = false;
        done.send(());
    }
    fn child_failed(&mut self, _ctx: &mut AsyncContext<Self>, _failure: loka::ActorFailure) {
        self.told.lock().unwrap().push(self.in_handler);
    }
}

#[test]
fn child_failed_runs_between_handlers_not_while_one_awaits() {
    for (engine, system) in systems() {
        let gate = gate(&system);
        let told = Arc::new(Mutex::new(Vec::new()));
        let parent = system.spawn(Async::new(Parent {
            gate: gate.clone(),
            in_handler: false,
            told: Arc::clone(&told),
        }));
        let done = parent.ask(|reply| reply).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while system.failures().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(20));
        assert!(
            told.lock().unwrap().is_empty(),
            "{engine}: not while awaiting"
        );
        gate.send(GateMsg::Open).unwrap();
        done.wait().unwrap();
        while told.lock().unwrap().is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(
            *told.lock().unwrap(),
            vec![false],
            "{engine}: told once, after the handler"
        );
        system.shutdown();
    }
}

/// Holds a guard and a large local across its await, or completes at once: what the adapter's
/// reused future buffer must handle (a small `started` future first, then larger handler
/// futures, some completing at their first poll, some after a wake-up).
struct Buffered {
    drops: Arc<AtomicUsize>,
}
impl AsyncActor for Buffered {
    type Msg = (bool, u64, ReplyTo<u64>);
    async fn handle(&mut self, ctx: &mut AsyncContext<Self>, (wait, seed, reply): Self::Msg) {
        let _guard = Guard(Arc::clone(&self.drops));
        let mut big = [0u64; 64];
        for (i, slot) in big.iter_mut().enumerate() {
            *slot = seed + i as u64;
        }
        if wait {
            ctx.sleep(Duration::from_millis(1)).await;
        }
        reply.send(std::hint::black_box(&big).iter().sum());
    }
}

#[test]
fn handler_futures_are_dropped_once_whether_ready_at_once_or_after_a_wake_up() {
    for (engine, system) in systems() {
        let drops = Arc::new(AtomicUsize::new(0));
        let actor = system.spawn(Async::new(Buffered {
            drops: Arc::clone(&drops),
        }));
        let asks: Vec<_> = (0..6u64)
            .map(|seed| actor.ask(|reply| (seed % 2 == 1, seed, reply)).unwrap())
            .collect();
        for (seed, ask) in asks.into_iter().enumerate() {
            let expected: u64 = (0..64).map(|i| seed as u64 + i).sum();
            assert_eq!(ask.wait().unwrap(), expected, "{engine}: message {seed}");
        }
        system.run_until_idle();
        assert_eq!(
            drops.load(SeqCst),
            6,
            "{engine}: each handler's future dropped once, on completion"
        );
        system.shutdown();
        assert_eq!(drops.load(SeqCst), 6, "{engine}: and never again");
    }
}

/// Awaits Tokio's own timer in a handler: `tokio::time::sleep` is created inside the handler's
/// call and polled by the adapter, both inside the system's Tokio handle.
#[cfg(feature = "tokio")]
struct TokioSleeper;

#[cfg(feature = "tokio")]
impl AsyncActor for TokioSleeper {
    type Msg = ReplyTo<Duration>;
    async fn handle(&mut self, _ctx: &mut AsyncContext<Self>, reply: ReplyTo<Duration>) {
        let start = Instant::now();
        tokio::time::sleep(Duration::from_millis(20)).await;
        reply.send(start.elapsed());
    }
    fn requires() -> &'static [Requirement] {
        &[Requirement::Tokio]
    }
}

/// With `SystemBuilder::tokio_handle`, an async handler awaits `tokio::time::sleep(20 ms)` and
/// completes, under every engine (the Tokio runtime's thread drives the timer and wakes the
/// actor), with no failure recorded.
#[cfg(feature = "tokio")]
#[test]
fn an_async_handler_awaits_tokio_sleep_through_the_configured_handle() {
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_time()
        .build()
        .unwrap();
    for &engine in EngineKind::ALL {
        let config = Config {
            workers: 2,
            engine,
            ..Config::default()
        };
        let system = System::builder()
            .config(config)
            .tokio_handle(tokio.handle().clone())
            .build()
            .unwrap();
        let sleeper = system.spawn(Async::new(TokioSleeper));
        let slept = sleeper.ask(|reply| reply).unwrap().wait();
        assert!(
            matches!(slept, Ok(d) if d >= Duration::from_millis(20)),
            "{engine}: {slept:?}, failures {:?}",
            system.failures()
        );
        assert!(system.failures().is_empty(), "{engine}");
        system.shutdown();
    }
}

/// An async actor that needs Tokio (its futures use `tokio::time`, say) says so in `requires`.
struct NeedsTokio;

impl AsyncActor for NeedsTokio {
    type Msg = ReplyTo<()>;
    async fn handle(&mut self, _ctx: &mut AsyncContext<Self>, reply: ReplyTo<()>) {
        reply.send(());
    }
    fn requires() -> &'static [Requirement] {
        &[Requirement::Tokio]
    }
}

/// Spawns a `NeedsTokio` child on its first message and reports how the spawn went.
struct SpawnsNeedsTokio;

impl Actor for SpawnsNeedsTokio {
    type Msg = ReplyTo<Result<(), SpawnError>>;
    fn handle(&mut self, ctx: &mut Context<Self>, reply: Self::Msg) {
        let spawned = ctx.try_spawn_with(Async::new(NeedsTokio), SpawnOptions::default());
        reply.send(spawned.map(|_| ()));
    }
}

fn is_missing_tokio(error: &SpawnError) -> bool {
    matches!(
        error,
        SpawnError::MissingRuntime { actor_type, requirement: Requirement::Tokio }
            if actor_type.contains("NeedsTokio")
    )
}

/// On a system built without a Tokio handle, an actor whose `requires` names Tokio is refused at
/// spawn, from a plain thread, from an actor and as a supervisor's child, with a typed error
/// naming the actor type and what is missing; `spawn` panics with that message; nothing runs.
#[test]
fn an_actor_that_needs_tokio_is_refused_at_spawn_on_a_system_without_it() {
    for (engine, system) in systems() {
        let refused = system.try_spawn(Async::new(NeedsTokio)).unwrap_err();
        assert!(is_missing_tokio(&refused), "{engine}: {refused:?}");
        let text = refused.to_string();
        assert!(
            text.contains("NeedsTokio") && text.contains("Tokio runtime"),
            "{engine}: {text}"
        );

        let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            system.spawn(Async::new(NeedsTokio))
        }))
        .unwrap_err();
        let message = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .unwrap_or("");
        assert!(
            message.contains("needs a Tokio runtime"),
            "{engine}: {message}"
        );

        let parent = system.spawn(SpawnsNeedsTokio);
        let from_actor = parent.ask(|reply| reply).unwrap().wait().unwrap();
        assert!(
            matches!(&from_actor, Err(e) if is_missing_tokio(e)),
            "{engine}: {from_actor:?}"
        );

        let spec = loka::supervisor::SupervisorSpec::new(loka::supervisor::Strategy::OneForOne)
            .child(loka::supervisor::ChildSpec::new("needs-tokio", || {
                Async::new(NeedsTokio)
            }))
            .unwrap();
        match system.spawn_supervisor(spec) {
            Err(loka::supervisor::SupervisorError::Spawn { id, error }) => {
                assert_eq!(id, "needs-tokio", "{engine}");
                assert!(is_missing_tokio(&error), "{engine}: {error:?}");
            }
            other => panic!("{engine}: {:?}, not a spawn error", other.map(|_| ())),
        }

        system.run_until_idle();
        assert_eq!(
            system.stats().actors_spawned,
            1,
            "{engine}: only the parent was spawned"
        );
        assert!(system.failures().is_empty(), "{engine}");
        system.shutdown();
    }
}
