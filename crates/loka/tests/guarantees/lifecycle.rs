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
            stats.dead_letters, 1,
            "{label}: the message after the panic"
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
