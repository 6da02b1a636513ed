//! Supervision trees: a supervisor that gives up is restarted in place by its own supervisor,
//! which starts its children afresh; shutdown stays top-down (children before their
//! supervisors, no restart on the way down); `SupervisorRef::stop` terminates the children in
//! reverse start order before the supervisor.

use super::{start, Job, Shared};
use crate::common::{configurations, system};
use loka::supervisor::{ChildSpec, Strategy, SupervisorMsg, SupervisorRef, SupervisorSpec};
use loka::{Actor, ActorRef, Context};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[test]
fn a_supervisor_that_gives_up_is_restarted_by_its_own_with_fresh_children() {
    for (label, config) in configurations() {
        let system = system(&config);
        let shared = Shared::default();
        let sub = SupervisorSpec::new(Strategy::OneForOne)
            .max_restarts(0, Duration::from_secs(3600))
            .unwrap()
            .child(shared.child("w"))
            .unwrap();
        let root = SupervisorSpec::new(Strategy::OneForOne)
            .child(ChildSpec::supervisor("sub", sub))
            .unwrap()
            .child(shared.child("sibling"))
            .unwrap();
        let root = start(&system, &shared, root);
        let sub = SupervisorRef::new(root.child::<SupervisorMsg>("sub").unwrap());
        let w = sub.child::<Job>("w").unwrap();
        w.send(Job::Panic).unwrap();
        system.run_until_idle();
        assert_eq!(shared.take_log(), ["stopped w#1", "started w#2"], "{label}");
        assert!(w.is_stopped(), "{label}: the old subtree is gone");
        assert!(
            !sub.is_stopped(),
            "{label}: the sub-supervisor was restarted in place"
        );
        let fresh = sub.child::<Job>("w").unwrap();
        assert_ne!(fresh.id(), w.id(), "{label}");
        assert_eq!(sub.stats().unwrap().restarts, 0, "{label}: a new instance");
        let children = root.which_children().unwrap();
        let restarts: Vec<(String, u64)> =
            children.into_iter().map(|c| (c.id, c.restarts)).collect();
        assert_eq!(
            restarts,
            [("sub".to_string(), 1), ("sibling".to_string(), 0)],
            "{label}"
        );
        assert_eq!(system.stats().escalations, 1, "{label}");
        assert!(
            system.failures().iter().any(|f| f.actor == sub.id()),
            "{label}"
        );
    }
}

/// Logs its stop, and whether every supervisor above it was still running then.
struct Guard {
    name: &'static str,
    above: Arc<Mutex<Vec<ActorRef<SupervisorMsg>>>>,
    log: Arc<Mutex<Vec<String>>>,
}

impl Actor for Guard {
    type Msg = ();
    fn handle(&mut self, _ctx: &mut Context<Self>, _: ()) {}
    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        let alive = self.above.lock().unwrap().iter().all(|s| !s.is_stopped());
        self.log
            .lock()
            .unwrap()
            .push(format!("stopped {} above alive: {alive}", self.name));
    }
}

type Above = Arc<Mutex<Vec<ActorRef<SupervisorMsg>>>>;

fn guard(name: &'static str, above: &Above, log: &Arc<Mutex<Vec<String>>>) -> ChildSpec<Guard> {
    let (above, log) = (Arc::clone(above), Arc::clone(log));
    ChildSpec::new(name, move || Guard {
        name,
        above: Arc::clone(&above),
        log: Arc::clone(&log),
    })
}

/// Spawns the root supervisor from its `started` hook, and checks at its own stop that the root
/// had stopped first.
struct Top {
    spec: Option<SupervisorSpec>,
    root: Arc<Mutex<Option<SupervisorRef>>>,
    log: Arc<Mutex<Vec<String>>>,
}

impl Actor for Top {
    type Msg = ();
    fn started(&mut self, ctx: &mut Context<Self>) {
        let root = ctx.spawn_supervisor(self.spec.take().unwrap()).unwrap();
        *self.root.lock().unwrap() = Some(root);
    }
    fn handle(&mut self, _ctx: &mut Context<Self>, _: ()) {}
    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        let root = self.root.lock().unwrap().clone().unwrap();
        self.log
            .lock()
            .unwrap()
            .push(format!("stopped top, root stopped: {}", root.is_stopped()));
    }
}

#[test]
fn a_graceful_shutdown_stops_children_before_their_supervisors_and_restarts_nothing() {
    for (label, config) in configurations() {
        let system = system(&config);
        let log = Arc::new(Mutex::new(Vec::new()));
        let (deep, shallow) = (Above::default(), Above::default());
        let mut sub = SupervisorSpec::new(Strategy::OneForAll);
        for name in ["w1", "w2", "w3"] {
            sub = sub.child(guard(name, &deep, &log)).unwrap();
        }
        let root = SupervisorSpec::new(Strategy::OneForOne)
            .child(ChildSpec::supervisor("sub", sub))
            .unwrap()
            .child(guard("r", &shallow, &log))
            .unwrap();
        let slot = Arc::new(Mutex::new(None));
        let _top = system.spawn(Top {
            spec: Some(root),
            root: Arc::clone(&slot),
            log: Arc::clone(&log),
        });
        system.run_until_idle();
        let root = slot.lock().unwrap().clone().unwrap();
        let sub = root.child::<SupervisorMsg>("sub").unwrap();
        *deep.lock().unwrap() = vec![root.actor_ref().clone(), sub.clone()];
        *shallow.lock().unwrap() = vec![root.actor_ref().clone()];
        drop(sub);
        let report = system.shutdown_timeout(Duration::from_secs(60));
        assert!(report.is_clean(), "{label}: {report:?}");
        assert_eq!(
            report.stopped, 7,
            "{label}: 4 guards, 2 supervisors, the top"
        );
        assert_eq!(report.dead_letters, 0, "{label}");
        let mut log = log.lock().unwrap().clone();
        log.sort();
        assert_eq!(
            log,
            [
                "stopped r above alive: true",
                "stopped top, root stopped: true",
                "stopped w1 above alive: true",
                "stopped w2 above alive: true",
                "stopped w3 above alive: true",
            ],
            "{label}"
        );
        assert_eq!(
            system.stats().restarts,
            0,
            "{label}: nothing restarted on the way down"
        );
        // Break the cycle: the guards hold references to their supervisors.
        deep.lock().unwrap().clear();
        shallow.lock().unwrap().clear();
    }
}

#[test]
fn stopping_a_supervisor_terminates_its_children_in_reverse_order_first() {
    for (label, config) in configurations() {
        let system = system(&config);
        let shared = Shared::default();
        let log = Arc::new(Mutex::new(Vec::new()));
        let above = Above::default();
        let spec = SupervisorSpec::new(Strategy::OneForOne)
            .child(guard("a", &above, &log))
            .unwrap()
            .child(guard("b", &above, &log))
            .unwrap()
            .child(guard("c", &above, &log))
            .unwrap();
        let supervisor = start(&system, &shared, spec);
        *above.lock().unwrap() = vec![supervisor.actor_ref().clone()];
        let children = supervisor.children::<()>().unwrap();
        let gone = supervisor.actor_ref().watch();
        supervisor.stop().unwrap();
        assert_eq!(
            *log.lock().unwrap(),
            [
                "stopped c above alive: true",
                "stopped b above alive: true",
                "stopped a above alive: true",
            ],
            "{label}"
        );
        assert!(children.iter().all(ActorRef::is_stopped), "{label}");
        assert_eq!(
            gone.wait_timeout(Duration::from_secs(30)),
            Ok(loka::StopReason::Normal),
            "{label}"
        );
        above.lock().unwrap().clear();
    }
}
