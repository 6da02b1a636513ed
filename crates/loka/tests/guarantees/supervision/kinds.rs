//! Restart kinds (`Permanent`, `Transient`, `Temporary`), the calls on a running supervisor
//! (`start_child`, `terminate_child`, `restart_child`, `delete_child`, `which_children`, pools),
//! and bad input: typed errors naming it, nothing changed.

use super::{spec, start, Job, Shared, Worker};
use crate::common::{configurations, system};
use loka::supervisor::{ChildSpec, ChildState, Restart, Strategy, SupervisorError, SupervisorSpec};
use loka::{SpawnError, SpawnOptions};
use std::time::Duration;

fn states(supervisor: &loka::supervisor::SupervisorRef) -> Vec<(String, ChildState)> {
    let children = supervisor.which_children().unwrap();
    children.into_iter().map(|c| (c.id, c.state)).collect()
}

fn owned(pairs: &[(&str, ChildState)]) -> Vec<(String, ChildState)> {
    pairs.iter().map(|(id, s)| (id.to_string(), *s)).collect()
}

#[test]
fn restart_kinds_decide_what_comes_back() {
    use ChildState::{Running, Stopped};
    for (label, config) in configurations() {
        let system = system(&config);
        let shared = Shared::default();
        let spec = SupervisorSpec::new(Strategy::OneForOne)
            .child(shared.child("p"))
            .unwrap()
            .child(shared.child("t1").restart(Restart::Transient))
            .unwrap()
            .child(shared.child("t2").restart(Restart::Transient))
            .unwrap()
            .child(shared.child("tmp").restart(Restart::Temporary))
            .unwrap();
        let supervisor = start(&system, &shared, spec);
        let child = |name| supervisor.child::<Job>(name).unwrap();
        let (p, t1, t2, tmp) = (child("p"), child("t1"), child("t2"), child("tmp"));
        // A permanent child comes back after a normal stop too.
        p.send(Job::StopSelf).unwrap();
        system.run_until_idle();
        assert_eq!(shared.take_log(), ["stopped p#1", "started p#2"], "{label}");
        assert!(!p.is_stopped(), "{label}");
        // A transient one only after a failure.
        t1.send(Job::StopSelf).unwrap();
        t2.send(Job::Panic).unwrap();
        system.run_until_idle();
        let mut log = shared.take_log();
        log.sort();
        assert_eq!(
            log,
            ["started t2#2", "stopped t1#1", "stopped t2#1"],
            "{label}"
        );
        assert!(t1.is_stopped() && !t2.is_stopped(), "{label}");
        // A temporary one never, and is forgotten.
        tmp.send(Job::Panic).unwrap();
        system.run_until_idle();
        assert_eq!(shared.take_log(), ["stopped tmp#1"], "{label}");
        assert!(tmp.is_stopped(), "{label}");
        assert_eq!(
            states(&supervisor),
            owned(&[("p", Running), ("t1", Stopped), ("t2", Running)]),
            "{label}"
        );
        let stats = supervisor.stats().unwrap();
        assert_eq!((stats.restarts, stats.lost), (2, 2), "{label}");
        // The stopped transient child starts again on request: a new actor.
        let id = supervisor.restart_child("t1").unwrap();
        assert_ne!(id, t1.id(), "{label}");
        system.run_until_idle();
        assert_eq!(shared.take_log(), ["started t1#2"], "{label}");
        assert_eq!(supervisor.child::<Job>("t1").unwrap().id(), id, "{label}");
    }
}

#[test]
fn temporary_siblings_are_terminated_not_restarted_by_one_for_all() {
    for (label, config) in configurations() {
        let system = system(&config);
        let shared = Shared::default();
        let spec = SupervisorSpec::new(Strategy::OneForAll)
            .child(shared.child("a"))
            .unwrap()
            .child(shared.child("tmp").restart(Restart::Temporary))
            .unwrap()
            .child(shared.child("c").restart(Restart::Transient))
            .unwrap();
        let supervisor = start(&system, &shared, spec);
        super::fail(&system, &supervisor, "a");
        assert_eq!(
            shared.take_log(),
            [
                "stopped a#1",
                "stopped c#1",
                "stopped tmp#1",
                "started a#2",
                "started c#2"
            ],
            "{label}"
        );
        let ids: Vec<String> = supervisor
            .which_children()
            .unwrap()
            .into_iter()
            .map(|c| c.id)
            .collect();
        assert_eq!(ids, ["a", "c"], "{label}");
    }
}

#[test]
fn children_are_started_terminated_restarted_and_deleted_on_request() {
    use ChildState::{Running, Stopped};
    for (label, config) in configurations() {
        let system = system(&config);
        let shared = Shared::default();
        let spec = SupervisorSpec::new(Strategy::OneForOne)
            .pool("pool", 3, Restart::Permanent, shared.factory("pool"))
            .unwrap();
        let supervisor = start(&system, &shared, spec);
        let workers = supervisor.children::<Job>().unwrap();
        assert_eq!(workers.len(), 3, "{label}");
        let extra = supervisor.start_child(shared.child("extra")).unwrap();
        system.run_until_idle();
        assert_eq!(shared.take_log(), ["started extra#1"], "{label}");
        assert_eq!(supervisor.children::<Job>().unwrap().len(), 4, "{label}");
        supervisor.terminate_child("extra").unwrap();
        assert!(
            extra.is_stopped(),
            "{label}: terminated once the call returns"
        );
        assert_eq!(shared.take_log(), ["stopped extra#1"], "{label}");
        assert_eq!(
            states(&supervisor),
            owned(&[
                ("pool-0", Running),
                ("pool-1", Running),
                ("pool-2", Running),
                ("extra", Stopped)
            ]),
            "{label}"
        );
        supervisor.restart_child("extra").unwrap();
        system.run_until_idle();
        assert_eq!(shared.take_log(), ["started extra#2"], "{label}");
        supervisor.terminate_child("extra").unwrap();
        supervisor.delete_child("extra").unwrap();
        assert_eq!(supervisor.which_children().unwrap().len(), 3, "{label}");
        assert_eq!(
            supervisor.stats().unwrap().restarts,
            0,
            "{label}: no restart was counted"
        );
    }
}

#[test]
fn bad_input_is_refused_with_a_typed_error_that_names_it_and_changes_nothing() {
    for (label, config) in configurations() {
        let system = system(&config);
        let shared = Shared::default();
        let zero = SupervisorSpec::new(Strategy::OneForOne).max_restarts(3, Duration::ZERO);
        let zero = zero.unwrap_err();
        assert_eq!(
            zero,
            SupervisorError::ZeroPeriod { max_restarts: 3 },
            "{label}"
        );
        assert!(
            zero.to_string().starts_with("max_restarts(3, 0s)"),
            "{label}: {zero}"
        );
        let twice = spec(&shared, Strategy::OneForOne, &["a"]).child(shared.child("a"));
        let twice = twice.unwrap_err();
        assert_eq!(
            twice.to_string(),
            "child id `a` is already used by another child of this supervisor"
        );
        assert_eq!(
            SupervisorSpec::new(Strategy::OneForOne)
                .child(ChildSpec::new("", shared.factory("x")))
                .unwrap_err(),
            SupervisorError::EmptyChildId,
            "{label}"
        );
        let pool = SupervisorSpec::new(Strategy::OneForOne).pool(
            "p",
            0,
            Restart::Permanent,
            shared.factory("p"),
        );
        assert_eq!(
            pool.unwrap_err().to_string(),
            "pool `p` of 0 children: a pool needs at least one"
        );
        let bad = ChildSpec::new("bounded", shared.factory("bounded"))
            .options(SpawnOptions::new().capacity(0));
        let refused = system.spawn_supervisor(
            SupervisorSpec::new(Strategy::OneForOne)
                .child(bad.clone())
                .unwrap(),
        );
        assert_eq!(
            refused.unwrap_err(),
            SupervisorError::Spawn {
                id: "bounded".into(),
                error: SpawnError::ZeroCapacity { capacity: 0 }
            },
            "{label}"
        );
        let supervisor = start(&system, &shared, spec(&shared, Strategy::OneForOne, &["a"]));
        let before = supervisor.which_children().unwrap();
        let duplicate = supervisor.start_child(shared.child("a")).unwrap_err();
        assert_eq!(
            duplicate,
            SupervisorError::DuplicateChild { id: "a".into() },
            "{label}"
        );
        assert!(
            matches!(
                supervisor.start_child(bad),
                Err(SupervisorError::Spawn { .. })
            ),
            "{label}"
        );
        assert_eq!(
            supervisor.restart_child("a"),
            Err(SupervisorError::ChildRunning { id: "a".into() }),
            "{label}"
        );
        assert_eq!(
            supervisor.delete_child("a"),
            Err(SupervisorError::ChildRunning { id: "a".into() }),
            "{label}"
        );
        assert_eq!(
            supervisor.terminate_child("nobody"),
            Err(SupervisorError::UnknownChild {
                id: "nobody".into()
            }),
            "{label}"
        );
        let wrong = supervisor.child::<u64>("a").unwrap_err();
        assert!(
            wrong
                .to_string()
                .starts_with("child `a` takes messages of type"),
            "{label}: {wrong}"
        );
        assert_eq!(
            supervisor.which_children().unwrap(),
            before,
            "{label}: nothing changed"
        );
        system.run_until_idle();
        assert_eq!(
            shared.take_log(),
            Vec::<String>::new(),
            "{label}: nothing started"
        );
        // A stopped supervisor takes nothing.
        supervisor.stop().unwrap();
        system.run_until_idle();
        let stopped = SupervisorError::Stopped {
            supervisor: supervisor.id(),
        };
        assert_eq!(
            supervisor.start_child(shared.child("b")).unwrap_err(),
            stopped,
            "{label}"
        );
        assert_eq!(
            supervisor.restart_child("a").unwrap_err(),
            stopped,
            "{label}"
        );
        assert!(
            stopped.to_string().contains(&supervisor.id().to_string()),
            "{label}"
        );
        let _unused: Option<Worker> = None;
    }
}
