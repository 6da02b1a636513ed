//! Actor lifecycle: a panic stops only that actor and is reported to its parent; stop semantics
//! (the stop signal comes after queued messages, messages behind a handler's stop are dead
//! letters, sends to a stopped actor return a typed error with the message); an unreferenced actor
//! stops; shutdown stops every live actor. Runs under every configuration of
//! `common::configurations()` (every engine in `loka::EngineKind::ALL` × every policy it supports ×
//! worker counts and variants).

use crate::common::{configurations, stoppable, system, StopMsg};
use loka::{Actor, ActorFailure, ActorRef, Context, SpawnOptions};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

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
    /// The send after the panicking one was refused: under an inline or dedicated-thread
    /// execution policy the child may already have run, panicked and stopped by then (the
    /// message is then handed back instead of becoming a dead letter).
    refused: Arc<AtomicU64>,
}

impl Actor for Parent {
    type Msg = ();
    fn started(&mut self, ctx: &mut Context<Self>) {
        let child = ctx.spawn_with(
            Fragile {
                handled: Arc::clone(&self.handled),
            },
            SpawnOptions::new().name("fragile-child"),
        );
        child.send(false).unwrap();
        child.send(true).unwrap();
        // Dropped: the child stops at the panic, before or after this send.
        if child.send(false).is_err() {
            self.refused.fetch_add(1, SeqCst);
        }
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
        let refused = Arc::new(AtomicU64::new(0));
        let parent = system.spawn(Parent {
            failures: Arc::clone(&failures),
            child: None,
            handled: Arc::clone(&handled),
            refused: Arc::clone(&refused),
        });
        system.run_until_idle();
        let reported = failures.lock().unwrap().clone();
        assert_eq!(reported.len(), 1, "{label}: parent told once");
        assert!(reported[0].message.contains("asked to fail"), "{label}");
        assert_eq!(
            reported[0].name.as_deref(),
            Some("fragile-child"),
            "{label}: the spawn name is in the failure report"
        );
        assert_eq!(
            system.failures(),
            reported,
            "{label}: recorded by the system"
        );
        let stats = system.stats();
        assert_eq!(stats.panics, 1, "{label}");
        assert_eq!(
            stats.dead_letters + refused.load(SeqCst),
            1,
            "{label}: the message after the panic, a dead letter or handed back"
        );
        assert_eq!(handled.load(SeqCst), 1, "{label}");
        // The workers survived: the parent and new actors still run.
        assert!(!parent.is_stopped(), "{label}: parent unaffected");
        let survivor = system.spawn(Fragile {
            handled: Arc::clone(&handled),
        });
        assert_eq!(
            system.failures()[0].actor_type,
            std::any::type_name::<Fragile>(),
            "{label}"
        );
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

/// Panics in its `stopped` hook, after a clean stop (`Stop`) or after its handler panicked
/// (`Boom`).
struct BadCleanup;

#[derive(Clone, Copy)]
enum Cleanup {
    Stop,
    Boom,
}

impl Actor for BadCleanup {
    type Msg = Cleanup;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: Cleanup) {
        match msg {
            Cleanup::Stop => ctx.stop(),
            Cleanup::Boom => panic!("handler failed"),
        }
    }
    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        panic!("cleanup failed");
    }
}

/// Spawns a `BadCleanup` child per (name, message) and records what it hears of them.
struct CleanupParent {
    children: Vec<(&'static str, Cleanup)>,
    failures: Arc<Mutex<Vec<ActorFailure>>>,
}

impl Actor for CleanupParent {
    type Msg = ();
    fn started(&mut self, ctx: &mut Context<Self>) {
        for &(name, msg) in &self.children {
            let child = ctx.spawn_with(BadCleanup, SpawnOptions::new().name(name));
            child.send(msg).unwrap();
        }
    }
    fn handle(&mut self, _ctx: &mut Context<Self>, _: ()) {}
    fn child_failed(&mut self, _ctx: &mut Context<Self>, failure: ActorFailure) {
        self.failures.lock().unwrap().push(failure);
    }
}

/// A panic in `stopped` is a failure like a handler's: counted, recorded, reported to the parent
/// once, saying it came from `stopped`; after a handler's panic the actor still fails once.
#[test]
fn a_panic_in_stopped_is_a_failure_reported_once() {
    for (label, config) in configurations() {
        let system = system(&config);
        let failures = Arc::new(Mutex::new(Vec::new()));
        let _parent = system.spawn(CleanupParent {
            children: vec![("clean-stop", Cleanup::Stop), ("double", Cleanup::Boom)],
            failures: Arc::clone(&failures),
        });
        system.run_until_idle();
        let mut reported = failures.lock().unwrap().clone();
        reported.sort_by(|a, b| a.name.cmp(&b.name));
        let messages: Vec<(&str, &str)> = reported
            .iter()
            .map(|f| (f.name.as_deref().unwrap_or("?"), f.message.as_str()))
            .collect();
        assert_eq!(
            messages,
            [
                ("clean-stop", "`stopped` hook panicked: cleanup failed"),
                (
                    "double",
                    "handler failed; then its `stopped` hook panicked: cleanup failed"
                ),
            ],
            "{label}: each child reported once"
        );
        assert_eq!(
            reported[0].actor_type,
            std::any::type_name::<BadCleanup>(),
            "{label}"
        );
        let mut recorded = system.failures();
        recorded.sort_by(|a, b| a.name.cmp(&b.name));
        assert_eq!(recorded, reported, "{label}: recorded by the system");
        assert_eq!(system.stats().panics, 2, "{label}: one per failed actor");
        // Without a parent, at shutdown: counted and recorded (and logged).
        let orphan = system.spawn_with(BadCleanup, SpawnOptions::new().name("orphan"));
        system.run_until_idle();
        system.shutdown();
        assert!(orphan.is_stopped(), "{label}");
        assert_eq!(system.stats().panics, 3, "{label}");
        let last = system.failures().pop().unwrap();
        assert_eq!(
            (last.name.as_deref(), last.message.as_str()),
            (Some("orphan"), "`stopped` hook panicked: cleanup failed"),
            "{label}"
        );
    }
}

/// `System::failures` keeps only the most recent `failure_window` failures (memory stays bounded
/// however many actors fail), while `stats().panics` counts every one.
#[test]
fn failures_keep_a_bounded_window_of_the_most_recent() {
    assert_eq!(loka::Config::default().failure_window, 1_000);
    for (label, mut config) in configurations() {
        config.failure_window = 8;
        let system = system(&config);
        let handled = Arc::new(AtomicU64::new(0));
        let fail = |name: String| {
            let actor = system.spawn_with(
                Fragile {
                    handled: Arc::clone(&handled),
                },
                SpawnOptions::new().name(name),
            );
            actor.send(true).unwrap();
        };
        for i in 0..200 {
            fail(format!("many-{i}"));
        }
        system.run_until_idle();
        // One at a time: these are the most recent, in this order.
        for i in 0..3 {
            fail(format!("last-{i}"));
            system.run_until_idle();
        }
        let failures = system.failures();
        assert_eq!(failures.len(), 8, "{label}: the window");
        let names: Vec<&str> = failures.iter().filter_map(|f| f.name.as_deref()).collect();
        assert_eq!(names.len(), 8, "{label}");
        assert!(
            names[..5].iter().all(|n| n.starts_with("many-")),
            "{label}: {names:?}"
        );
        assert_eq!(names[5..], ["last-0", "last-1", "last-2"], "{label}");
        assert_eq!(system.stats().panics, 203, "{label}: every failure counted");
    }
    // A window of 0 keeps none and still counts.
    let config = loka::Config {
        failure_window: 0,
        workers: 1,
        topology: crate::common::topology_for(1),
        ..loka::Config::default()
    };
    let system = system(&config);
    let actor = system.spawn(Fragile {
        handled: Arc::new(AtomicU64::new(0)),
    });
    actor.send(true).unwrap();
    system.run_until_idle();
    assert!(system.failures().is_empty());
    assert_eq!(system.stats().panics, 1);
}

// ------------------------------------------------------------------------------------- stopping

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
