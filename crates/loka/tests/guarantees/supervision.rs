//! Supervisors (docs/supervision.md): each strategy restarts the children it names, in OTP's
//! order (siblings suspended in reverse start order, then restarted in start order); a restart
//! is in place — references stay valid, the message whose handler panicked is dropped and
//! counted, every other message goes to the new instance in order; `stopped` runs on the old
//! instance and `started` on the new one; exceeding the restart intensity escalates; restart
//! kinds; trees; shutdown; typed errors for bad input. Under every configuration of
//! `common::configurations()`.

mod kinds;
mod trees;

use crate::common::{configurations, system};
use loka::supervisor::{ChildSpec, Strategy, SupervisorRef, SupervisorSpec};
use loka::{Actor, Context, ReplyTo, System};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// What the workers' hooks did, in order: `"started b#2"`, `"stopped b#1"`.
pub type Log = Arc<Mutex<Vec<String>>>;

/// Every `Work` value handled: (worker, instance, value), in the order handled.
pub type Seen = Arc<Mutex<Vec<(&'static str, u64, u64)>>>;

/// A worker that logs its hooks with its instance number (1 for the first instance).
pub struct Worker {
    name: &'static str,
    instance: u64,
    log: Log,
    seen: Seen,
}

pub enum Job {
    Work(u64),
    Panic,
    StopSelf,
    /// Holds the worker until the sender lets go (so that messages queue behind).
    Block(mpsc::Receiver<()>),
    /// This instance's number.
    Instance(ReplyTo<u64>),
}

impl Actor for Worker {
    type Msg = Job;
    fn started(&mut self, _ctx: &mut Context<Self>) {
        let entry = format!("started {}#{}", self.name, self.instance);
        self.log.lock().unwrap().push(entry);
    }
    fn handle(&mut self, ctx: &mut Context<Self>, msg: Job) {
        match msg {
            Job::Work(n) => self
                .seen
                .lock()
                .unwrap()
                .push((self.name, self.instance, n)),
            Job::Panic => panic!("{} asked to panic", self.name),
            Job::StopSelf => ctx.stop(),
            Job::Block(release) => {
                let _ = release.recv_timeout(Duration::from_secs(30));
            }
            Job::Instance(reply) => reply.send(self.instance),
        }
    }
    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        let entry = format!("stopped {}#{}", self.name, self.instance);
        self.log.lock().unwrap().push(entry);
    }
}

/// What the workers of one test share.
#[derive(Clone, Default)]
pub struct Shared {
    pub log: Log,
    pub seen: Seen,
}

impl Shared {
    /// A factory for worker `name`: each call builds the next instance.
    pub fn factory(&self, name: &'static str) -> impl Fn() -> Worker + Send + Sync + 'static {
        let instances = AtomicU64::new(0);
        let (log, seen) = (Arc::clone(&self.log), Arc::clone(&self.seen));
        move || Worker {
            name,
            instance: instances.fetch_add(1, SeqCst) + 1,
            log: Arc::clone(&log),
            seen: Arc::clone(&seen),
        }
    }

    pub fn child(&self, name: &'static str) -> ChildSpec<Worker> {
        ChildSpec::new(name, self.factory(name))
    }

    /// The log so far, emptied.
    pub fn take_log(&self) -> Vec<String> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }
}

/// A spec of `strategy` with workers `names`, allowing plenty of restarts.
pub fn spec(shared: &Shared, strategy: Strategy, names: &[&'static str]) -> SupervisorSpec {
    let mut spec = SupervisorSpec::new(strategy)
        .max_restarts(100, Duration::from_secs(3600))
        .unwrap();
    for &name in names {
        spec = spec.child(shared.child(name)).unwrap();
    }
    spec
}

/// Spawns a supervisor and waits until its children have started; empties the log.
pub fn start(system: &System, shared: &Shared, spec: SupervisorSpec) -> SupervisorRef {
    let supervisor = system.spawn_supervisor(spec).unwrap();
    system.run_until_idle();
    shared.take_log();
    supervisor
}

/// Panics worker `name` and waits until the supervisor has done what it does.
fn fail(system: &System, supervisor: &SupervisorRef, name: &str) {
    supervisor
        .child::<Job>(name)
        .unwrap()
        .send(Job::Panic)
        .unwrap();
    system.run_until_idle();
}

#[test]
fn one_for_one_restarts_only_the_child_that_failed() {
    for (label, config) in configurations() {
        let system = system(&config);
        let shared = Shared::default();
        let supervisor = start(
            &system,
            &shared,
            spec(&shared, Strategy::OneForOne, &["a", "b", "c"]),
        );
        let before = supervisor.which_children().unwrap();
        fail(&system, &supervisor, "b");
        assert_eq!(shared.take_log(), ["stopped b#1", "started b#2"], "{label}");
        let after = supervisor.which_children().unwrap();
        let restarts: Vec<u64> = after.iter().map(|c| c.restarts).collect();
        assert_eq!(restarts, [0, 1, 0], "{label}");
        let ids = |children: &[loka::supervisor::ChildInfo]| {
            children.iter().map(|c| c.actor).collect::<Vec<_>>()
        };
        assert_eq!(ids(&before), ids(&after), "{label}: restarted in place");
        let stats = supervisor.stats().unwrap();
        assert_eq!(
            (stats.restarts, stats.child_restarts, stats.lost),
            (1, 1, 1),
            "{label}"
        );
        assert_eq!(system.stats().restarts, 1, "{label}");
    }
}

#[test]
fn one_for_all_suspends_the_others_in_reverse_order_then_restarts_all_in_order() {
    for (label, config) in configurations() {
        let system = system(&config);
        let shared = Shared::default();
        let supervisor = start(
            &system,
            &shared,
            spec(&shared, Strategy::OneForAll, &["a", "b", "c"]),
        );
        fail(&system, &supervisor, "b");
        assert_eq!(
            shared.take_log(),
            [
                "stopped b#1",
                "stopped c#1",
                "stopped a#1",
                "started a#2",
                "started b#2",
                "started c#2"
            ],
            "{label}"
        );
        let stats = supervisor.stats().unwrap();
        assert_eq!((stats.restarts, stats.child_restarts), (1, 3), "{label}");
    }
}

#[test]
fn rest_for_one_restarts_the_failed_child_and_those_started_after_it() {
    for (label, config) in configurations() {
        let system = system(&config);
        let shared = Shared::default();
        let names = ["a", "b", "c", "d"];
        let supervisor = start(
            &system,
            &shared,
            spec(&shared, Strategy::RestForOne, &names),
        );
        fail(&system, &supervisor, "b");
        assert_eq!(
            shared.take_log(),
            [
                "stopped b#1",
                "stopped d#1",
                "stopped c#1",
                "started b#2",
                "started c#2",
                "started d#2"
            ],
            "{label}"
        );
        fail(&system, &supervisor, "d");
        assert_eq!(
            shared.take_log(),
            ["stopped d#2", "started d#3"],
            "{label}: the last alone"
        );
    }
}

/// The worker's instance number, asked through `worker`.
fn instance(worker: &loka::ActorRef<Job>) -> u64 {
    worker
        .ask(Job::Instance)
        .unwrap()
        .wait_timeout(Duration::from_secs(30))
        .unwrap()
}

#[test]
fn a_restart_in_place_keeps_references_and_every_message_but_the_panicking_one() {
    for (label, config) in configurations() {
        let system = system(&config);
        let shared = Shared::default();
        // The second instance's factory waits at a gate: messages sent meanwhile arrive during
        // the restart.
        let (entered, restarting) = mpsc::channel::<()>();
        let (open, gate) = mpsc::channel::<()>();
        let gate = Mutex::new(gate);
        let entered = Mutex::new(entered);
        let next = shared.factory("w");
        let built = AtomicU64::new(0);
        let child = ChildSpec::new("w", move || {
            if built.fetch_add(1, SeqCst) == 1 {
                entered.lock().unwrap().send(()).unwrap();
                let _ = gate.lock().unwrap().recv_timeout(Duration::from_secs(30));
            }
            next()
        });
        let spec = SupervisorSpec::new(Strategy::OneForOne)
            .child(child)
            .unwrap();
        let supervisor = start(&system, &shared, spec);
        let worker = supervisor.child::<Job>("w").unwrap();
        let id = worker.id();
        // Queued behind a blocked handler: 1 for the old instance, the panic, 2..=100 behind it.
        let (release, blocked) = mpsc::channel();
        worker.send(Job::Block(blocked)).unwrap();
        worker.send(Job::Work(1)).unwrap();
        worker.send(Job::Panic).unwrap();
        for n in 2..=100 {
            worker.send(Job::Work(n)).unwrap();
        }
        release.send(()).unwrap();
        // The restart is under way (the factory waits at its gate): 101..=200 arrive now.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while restarting.try_recv().is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "{label}: the restart began"
            );
            system.run_until_idle_timeout(Duration::from_millis(5));
        }
        for n in 101..=200 {
            worker.send(Job::Work(n)).unwrap();
        }
        open.send(()).unwrap();
        system.run_until_idle();
        assert_eq!(
            instance(&worker),
            2,
            "{label}: the same reference reaches the new instance"
        );
        assert_eq!(worker.id(), id, "{label}");
        assert!(!worker.is_stopped(), "{label}");
        let seen = shared.seen.lock().unwrap().clone();
        let by = |instance| -> Vec<u64> {
            seen.iter()
                .filter(|s| s.1 == instance)
                .map(|s| s.2)
                .collect()
        };
        assert_eq!(
            by(1),
            [1],
            "{label}: the old instance handled what came before the panic"
        );
        assert_eq!(
            by(2),
            (2..=200).collect::<Vec<_>>(),
            "{label}: the rest, in order"
        );
        assert_eq!(shared.take_log(), ["stopped w#1", "started w#2"], "{label}");
        // The panicking message: dropped (not handed to the new instance), counted, reported.
        let stats = supervisor.stats().unwrap();
        assert_eq!(
            (stats.lost, stats.failures, stats.restarts),
            (1, 1, 1),
            "{label}"
        );
        assert_eq!(
            system.stats().dead_letters,
            0,
            "{label}: nothing else was lost"
        );
        let failures = system.failures();
        assert_eq!(failures.len(), 1, "{label}");
        assert_eq!(failures[0].actor, id, "{label}");
        assert_eq!(failures[0].message, "w asked to panic", "{label}");
        assert_eq!(system.stats().panics, 1, "{label}");
    }
}

#[test]
fn exceeding_the_restart_intensity_terminates_the_children_and_escalates() {
    use loka::{ActorFailure, StopReason};
    struct Boss {
        spec: Option<SupervisorSpec>,
        supervisor: Arc<Mutex<Option<SupervisorRef>>>,
        failures: Arc<Mutex<Vec<ActorFailure>>>,
        /// The supervisor's children, and whether they had all stopped when its failure came.
        children: Arc<Mutex<Vec<loka::ActorRef<Job>>>>,
        children_gone_first: Arc<Mutex<Option<bool>>>,
    }
    impl Actor for Boss {
        type Msg = ();
        fn started(&mut self, ctx: &mut Context<Self>) {
            let spec = self.spec.take().unwrap();
            *self.supervisor.lock().unwrap() = Some(ctx.spawn_supervisor(spec).unwrap());
        }
        fn handle(&mut self, _ctx: &mut Context<Self>, _: ()) {}
        fn child_failed(&mut self, _ctx: &mut Context<Self>, failure: ActorFailure) {
            let gone = self.children.lock().unwrap().iter().all(|c| c.is_stopped());
            *self.children_gone_first.lock().unwrap() = Some(gone);
            self.failures.lock().unwrap().push(failure);
        }
    }
    for (label, config) in configurations() {
        let system = system(&config);
        let shared = Shared::default();
        let spec = SupervisorSpec::new(Strategy::OneForOne)
            .max_restarts(2, Duration::from_secs(3600))
            .unwrap()
            .child(shared.child("w"))
            .unwrap()
            .child(shared.child("x"))
            .unwrap();
        let slot = Arc::new(Mutex::new(None));
        let failures = Arc::new(Mutex::new(Vec::new()));
        let children = Arc::new(Mutex::new(Vec::new()));
        let gone_first = Arc::new(Mutex::new(None));
        let _boss = system.spawn(Boss {
            spec: Some(spec),
            supervisor: Arc::clone(&slot),
            failures: Arc::clone(&failures),
            children: Arc::clone(&children),
            children_gone_first: Arc::clone(&gone_first),
        });
        system.run_until_idle();
        shared.take_log();
        let supervisor = slot.lock().unwrap().clone().unwrap();
        let gone = supervisor.actor_ref().watch();
        let (w, x) = (
            supervisor.child::<Job>("w").unwrap(),
            supervisor.child::<Job>("x").unwrap(),
        );
        *children.lock().unwrap() = vec![w.clone(), x.clone()];
        // Two restarts are allowed; the third failure is one too many.
        for _ in 0..3 {
            w.send(Job::Panic).unwrap();
        }
        system.run_until_idle();
        let reason = gone.wait_timeout(Duration::from_secs(30)).unwrap();
        let StopReason::Escalated { message } = &reason else {
            panic!("{label}: {reason:?}");
        };
        assert!(
            message.contains("exceeded max_restarts(2, 3600s)"),
            "{label}: {message}"
        );
        assert!(
            message.contains("child `w` panicked: w asked to panic"),
            "{label}: {message}"
        );
        assert!(
            w.is_stopped() && x.is_stopped(),
            "{label}: the children were terminated"
        );
        assert_eq!(
            *gone_first.lock().unwrap(),
            Some(true),
            "{label}: terminated before the supervisor gave up"
        );
        children.lock().unwrap().clear();
        assert_eq!(
            shared.take_log(),
            [
                "stopped w#1",
                "started w#2",
                "stopped w#2",
                "started w#3",
                "stopped w#3",
                "stopped x#1"
            ],
            "{label}"
        );
        let failures = failures.lock().unwrap().clone();
        assert_eq!(failures.len(), 1, "{label}: the parent heard once");
        assert_eq!(failures[0].actor, supervisor.id(), "{label}");
        assert_eq!(&failures[0].message, message, "{label}");
        assert_eq!(system.stats().escalations, 1, "{label}");
        assert_eq!(
            supervisor.stats(),
            Err(loka::supervisor::SupervisorError::Stopped {
                supervisor: supervisor.id()
            }),
            "{label}"
        );
    }
}
