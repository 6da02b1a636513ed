//! Shutdown (docs/shutdown.md): a prompt shutdown lets the handlers already running finish and
//! turns everything still queued into counted dead letters; a spawn after shutdown gets a stopped
//! reference (or `SpawnError::ShutDown`); a handler may shut its own system down, by `shutdown()`
//! or by dropping the last `Arc<System>`; dead letters can be inspected. The graceful shutdown
//! (`shutdown_timeout`) is in `graceful.rs`. Runs under every configuration of
//! `common::configurations()` (every engine × every policy it supports × worker counts and
//! variants, the execution modes included: `thread` actors on dedicated threads, the simulation's
//! driver thread).

use crate::common::{configurations, stoppable, system, StopMsg};
use loka::{
    Actor, Context, DeadLetterReason, ExecPolicy, SendErrorReason, SpawnError, SpawnOptions, System,
};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// How long a test waits for something that must happen before it calls it a hang (a guard
/// against a wedged system, not a measure of speed).
const HANG: Duration = Duration::from_secs(60);

// ---------------------------------------------------------------------------- prompt shutdown

/// Counts its messages, each handler first waiting for `gate` to open.
struct Gated {
    gate: Arc<AtomicBool>,
    handled: Arc<AtomicU64>,
}

impl Actor for Gated {
    type Msg = u64;
    fn handle(&mut self, _ctx: &mut Context<Self>, _: u64) {
        while !self.gate.load(SeqCst) {
            std::thread::sleep(Duration::from_micros(100));
        }
        self.handled.fetch_add(1, SeqCst);
    }
}

/// The case: a backlog at shutdown was handled first (all of it, and a second of work),
/// although the documentation said it became dead letters. Here every handler waits at a gate
/// that opens only once the shutdown has begun: with one message per activation, a thread
/// running an actor finishes the handler it is in and stops, so at most one message per actor is
/// handled and every other one is a dead letter. Nothing is lost: handled + dead = sent.
#[test]
fn shutdown_is_prompt_and_queued_messages_become_dead_letters() {
    const ACTORS: u64 = 40;
    const EACH: u64 = 50;
    for (label, mut config) in configurations() {
        config.throughput = 1;
        let system = Arc::new(system(&config));
        let gate = Arc::new(AtomicBool::new(false));
        let handled = Arc::new(AtomicU64::new(0));
        let actors: Vec<_> = (0..ACTORS)
            .map(|i| {
                let gated = Gated {
                    gate: Arc::clone(&gate),
                    handled: Arc::clone(&handled),
                };
                system.spawn_with(gated, SpawnOptions::new().name(format!("gated-{i}")))
            })
            .collect();
        for i in 0..EACH {
            for actor in &actors {
                actor.send(i).unwrap();
            }
        }
        let opener = {
            let (system, gate) = (Arc::clone(&system), Arc::clone(&gate));
            std::thread::spawn(move || {
                while !system.is_shutting_down() {
                    std::thread::sleep(Duration::from_micros(200));
                }
                gate.store(true, SeqCst);
            })
        };
        system.shutdown();
        opener.join().unwrap();
        let (handled, dead) = (handled.load(SeqCst), system.stats().dead_letters);
        assert_eq!(
            handled + dead,
            ACTORS * EACH,
            "{label}: every message handled or dead"
        );
        assert!(
            handled <= ACTORS,
            "{label}: only handlers already running finish ({handled} handled, {dead} dead)"
        );
        assert!(system.is_shut_down(), "{label}");
        let records = system.dead_letters();
        assert!(
            records
                .iter()
                .all(|d| d.reason == DeadLetterReason::Shutdown
                    && d.message_type == "u64"
                    && d.name.as_deref().is_none_or(|n| n.starts_with("gated-"))),
            "{label}: recorded as the shutdown's dead letters: {records:?}"
        );
        if records.len() < loka::DEAD_LETTER_WINDOW {
            let recorded: u64 = records.iter().map(|d| d.count).sum();
            assert_eq!(recorded, dead, "{label}: every one recorded");
        }
    }
}

// ------------------------------------------------------------------------ spawn after shutdown

/// Answers a request.
struct Echo;

impl Actor for Echo {
    type Msg = loka::ReplyTo<u8>;
    fn handle(&mut self, _ctx: &mut Context<Self>, reply: loka::ReplyTo<u8>) {
        reply.send(7);
    }
}

/// In its `stopped` hook (run by the shutdown) tries to spawn children, and says what it got.
struct SpawnsWhenStopped {
    outcomes: Arc<Mutex<Vec<(bool, bool)>>>,
}

impl Actor for SpawnsWhenStopped {
    type Msg = ();
    fn handle(&mut self, _ctx: &mut Context<Self>, _: ()) {}
    fn stopped(&mut self, ctx: &mut Context<Self>) {
        let refused = matches!(
            ctx.try_spawn_with(Echo, SpawnOptions::new()),
            Err(SpawnError::ShutDown)
        );
        let stopped = ctx.spawn(Echo).is_stopped();
        self.outcomes.lock().unwrap().push((refused, stopped));
    }
}

/// Before the fix a spawn after shutdown returned a live-looking reference (not stopped, sends
/// accepted) whose asks never returned.
#[test]
fn spawn_after_shutdown_gives_a_stopped_reference_and_try_spawn_an_error() {
    for (label, config) in configurations() {
        let system = system(&config);
        let outcomes = Arc::new(Mutex::new(Vec::new()));
        // Kept referenced: it stops only at the shutdown.
        let _spawner = system.spawn(SpawnsWhenStopped {
            outcomes: Arc::clone(&outcomes),
        });
        system.run_until_idle();
        system.shutdown();
        assert_eq!(
            *outcomes.lock().unwrap(),
            [(true, true)],
            "{label}: a `stopped` hook run by the shutdown spawns nothing live"
        );
        let spawned = system.stats().actors_spawned;
        let (actor, seen, stopped) = stoppable(&system);
        assert!(actor.is_stopped(), "{label}: the reference is stopped");
        let err = actor.send(StopMsg::Work).unwrap_err();
        assert_eq!(err.reason, SendErrorReason::Stopped, "{label}");
        assert!(
            matches!(err.message, StopMsg::Work),
            "{label}: message handed back"
        );
        let echo = system.spawn_with(Echo, SpawnOptions::new().exec(ExecPolicy::Thread));
        assert!(
            echo.ask(|reply| reply).is_err(),
            "{label}: an ask fails at once"
        );
        assert!(
            matches!(system.try_spawn(Echo), Err(SpawnError::ShutDown)),
            "{label}"
        );
        let err = system
            .try_spawn_with(Echo, SpawnOptions::new().name("late"))
            .unwrap_err();
        assert!(err.to_string().contains("shut down"), "{label}: {err}");
        system.run_until_idle();
        assert_eq!(seen.load(SeqCst), 0, "{label}: never ran");
        assert!(
            !stopped.load(SeqCst),
            "{label}: never started, so no `stopped` hook"
        );
        assert_eq!(
            system.stats().actors_spawned,
            spawned,
            "{label}: nothing counted"
        );
    }
}

// ------------------------------------------------------------ shutdown from inside a handler

/// Sets its flag when its `stopped` hook runs, and says so on a channel.
struct Witness {
    stopped: Arc<AtomicBool>,
    told: Option<mpsc::Sender<()>>,
}

impl Actor for Witness {
    type Msg = ();
    fn handle(&mut self, _ctx: &mut Context<Self>, _: ()) {}
    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.stopped.store(true, SeqCst);
        if let Some(told) = self.told.take() {
            let _ = told.send(());
        }
    }
}

enum Quit {
    /// Call `shutdown()` on this system.
    ShutDown(Arc<System>),
    /// Drop this (the last) reference to the system.
    Drop(Arc<System>),
}

/// Shuts its own system down from its handler; reports whether that returned without panicking.
struct Quitter {
    returned: mpsc::Sender<bool>,
}

impl Actor for Quitter {
    type Msg = Quit;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: Quit) {
        let outcome = catch_unwind(AssertUnwindSafe(|| match msg {
            Quit::ShutDown(system) => system.shutdown(),
            Quit::Drop(system) => drop(system),
        }));
        let _ = self.returned.send(outcome.is_ok());
    }
}

/// A witness of the shutdown: its reference (kept, so that it stops only at the shutdown), its
/// flag and its channel.
fn witness(system: &System) -> (loka::ActorRef<()>, Arc<AtomicBool>, mpsc::Receiver<()>) {
    let stopped = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let witness = system.spawn(Witness {
        stopped: Arc::clone(&stopped),
        told: Some(tx),
    });
    (witness, stopped, rx)
}

/// Before the fix, `shutdown()` in a handler joined the handler's own thread: it panicked with
/// "failed to join thread: Resource deadlock avoided" and wedged the system (no `stopped` hooks,
/// `run_until_idle` never returned). Checked for a `task` actor on a worker (or the simulation's
/// driver) and a `thread` actor on its dedicated thread.
#[test]
fn shutdown_from_inside_a_handler_completes() {
    for (label, config) in configurations() {
        for exec in [ExecPolicy::Task, ExecPolicy::Thread] {
            let system = Arc::new(system(&config));
            let (_witness, witness_stopped, _) = witness(&system);
            let (tx, returned) = mpsc::channel();
            let quitter =
                system.spawn_with(Quitter { returned: tx }, SpawnOptions::new().exec(exec));
            system.run_until_idle();
            quitter.send(Quit::ShutDown(Arc::clone(&system))).unwrap();
            if !system.run_until_idle_timeout(HANG) {
                // Wedged: dropping it would wait for the shutdown forever; fail instead.
                std::mem::forget(system);
                panic!("{label} {exec}: run_until_idle returns once the shutdown is complete");
            }
            assert_eq!(
                returned.recv_timeout(HANG),
                Ok(true),
                "{label} {exec}: no panic"
            );
            assert!(system.is_shut_down(), "{label} {exec}");
            assert!(witness_stopped.load(SeqCst), "{label} {exec}: hooks ran");
            assert!(quitter.is_stopped(), "{label} {exec}");
            assert!(
                system.failures().is_empty(),
                "{label} {exec}: {:?}",
                system.failures()
            );
            system.shutdown(); // idempotent, and returns at once
        }
    }
}

/// Dropping the last `Arc<System>` inside a handler shuts the system down from there.
#[test]
fn dropping_the_last_system_reference_inside_a_handler_completes_the_shutdown() {
    for (label, mut config) in configurations() {
        // The test waits on channels, not on the system (it gives its reference away): the
        // simulation then takes a plain thread's sends in after `quiet_ms` of silence.
        config.sim.quiet_ms = 1;
        for exec in [ExecPolicy::Task, ExecPolicy::Thread] {
            let system = Arc::new(system(&config));
            let (_witness, witness_stopped, told) = witness(&system);
            let (tx, returned) = mpsc::channel();
            let quitter =
                system.spawn_with(Quitter { returned: tx }, SpawnOptions::new().exec(exec));
            system.run_until_idle();
            quitter.send(Quit::Drop(system)).unwrap();
            assert_eq!(
                returned.recv_timeout(HANG),
                Ok(true),
                "{label} {exec}: no panic"
            );
            assert_eq!(
                told.recv_timeout(HANG),
                Ok(()),
                "{label} {exec}: the shutdown completed (the witness was stopped)"
            );
            assert!(witness_stopped.load(SeqCst), "{label} {exec}");
        }
    }
}

// ------------------------------------------------------------------------------- dead letters

/// Stops itself on `StopNow`.
struct SelfStopper;

impl Actor for SelfStopper {
    type Msg = StopMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: StopMsg) {
        if let StopMsg::StopNow = msg {
            ctx.stop();
        }
    }
}

fn named_stoppable(system: &System, name: &str) -> loka::ActorRef<StopMsg> {
    system.spawn_with(SelfStopper, SpawnOptions::new().name(name))
}

/// Dead letters can be inspected, not only counted: each record names the actor, its message
/// type and why, and the records add up to `stats().dead_letters`.
#[test]
fn dead_letters_are_recorded_with_actor_type_and_reason() {
    for (label, config) in configurations() {
        let system = system(&config);
        let doomed = named_stoppable(&system, "doomed");
        doomed.send(StopMsg::StopNow).unwrap();
        let mut rejected = 0;
        for _ in 0..20 {
            if doomed.send(StopMsg::Work).is_err() {
                rejected += 1;
            }
        }
        system.run_until_idle();
        let lingering = named_stoppable(&system, "lingering");
        system.shutdown();
        // After the shutdown: refused, not dead.
        assert!(lingering.send(StopMsg::Work).is_err(), "{label}");
        let records = system.dead_letters();
        let stats = system.stats();
        assert_eq!(
            records.iter().map(|d| d.count).sum::<u64>(),
            stats.dead_letters,
            "{label}: the records add up to the counter"
        );
        let to_doomed: Vec<_> = records.iter().filter(|d| d.actor == doomed.id()).collect();
        assert_eq!(
            to_doomed.iter().map(|d| d.count).sum::<u64>() + rejected,
            20,
            "{label}: every message behind the stop is a recorded dead letter or was refused"
        );
        for d in &to_doomed {
            assert_eq!(d.reason, DeadLetterReason::Stopped, "{label}");
            assert!(
                d.message_type.ends_with("StopMsg"),
                "{label}: {}",
                d.message_type
            );
            // The name is known while the actor terminates (under the message-centric engine
            // letters still queued die after it has, and its name is forgotten by then).
            if let Some(name) = &d.name {
                assert_eq!(name, "doomed", "{label}");
            }
        }
    }
}
