//! A simulated worker does not wait for a pinned hub that has not arrived yet
//! (docs/decisions/0107-sim-a-worker-does-not-wait-for-a-hub.md): the simulation runs each
//! activation whole, so a report to a hub may be queued for a virtual time after the hub's
//! worker's clock; that worker must run the work it already holds meanwhile, as a real one
//! does, and take the hub when it comes.
//!
//! A controller (a hub, pinned to worker 0) keeps eight seekers busy with 1 ms jobs on two
//! workers of one node under `hierarchical`: the seekers it wakes queue on worker 0's deque, and
//! both workers should search all the time (42 ms of virtual time for 40 ms of compute a worker).
//! Before the fix worker 0 waited for each report in turn with seekers in its deque: 68 ms.

mod scheduling_support;

use loka::{Actor, ActorRef, Context, EngineKind, Placement, SpawnOptions};
use std::time::Duration;

const SEEKERS: u64 = 8;
const ROUNDS: u64 = 10;
const JOB: Duration = Duration::from_millis(1);

/// Searches for a job's length and reports to the controller.
struct Seeker {
    controller: Option<ActorRef<ControllerMsg>>,
}

enum SeekerMsg {
    Controller(ActorRef<ControllerMsg>),
    Job(u64),
}

impl Actor for Seeker {
    type Msg = SeekerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: SeekerMsg) {
        match msg {
            SeekerMsg::Controller(c) => self.controller = Some(c),
            SeekerMsg::Job(round) => {
                ctx.charge(JOB);
                let me = ctx.myself();
                let controller = self.controller.as_ref().unwrap();
                controller.send(ControllerMsg::Report(me, round)).unwrap();
            }
        }
    }
}

enum ControllerMsg {
    Start(Vec<ActorRef<SeekerMsg>>),
    Report(ActorRef<SeekerMsg>, u64),
}

/// Hands each seeker its next job when it reports, `ROUNDS` jobs each.
struct Controller {
    reports: u64,
}

impl Actor for Controller {
    type Msg = ControllerMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: ControllerMsg) {
        match msg {
            ControllerMsg::Start(seekers) => {
                for s in seekers {
                    s.send(SeekerMsg::Job(1)).unwrap();
                }
            }
            ControllerMsg::Report(seeker, round) => {
                self.reports += 1;
                if round < ROUNDS {
                    seeker.send(SeekerMsg::Job(round + 1)).unwrap();
                }
            }
        }
    }
}

/// Virtual time of the whole search under `policy` on two workers of one node.
fn search_time(policy: &str) -> u64 {
    let system = scheduling_support::system(
        EngineKind::Sim,
        "synthetic:package:1 numa:1 core:2 pu:1",
        2,
        policy,
        1,
    );
    let controller = system.spawn_with(
        Controller { reports: 0 },
        SpawnOptions::default()
            .placement(Placement::Worker(0))
            .hub(true),
    );
    let seekers: Vec<_> = (0..SEEKERS)
        .map(|_| {
            let s = system.spawn(Seeker { controller: None });
            s.send(SeekerMsg::Controller(controller.clone())).unwrap();
            s
        })
        .collect();
    system.run_until_idle();
    let before = system.stats().sim.unwrap().virtual_ns;
    controller.send(ControllerMsg::Start(seekers)).unwrap();
    system.run_until_idle();
    let elapsed = system.stats().sim.unwrap().virtual_ns - before;
    let stats = system.stats();
    system.shutdown();
    assert!(
        stats.total.activations >= SEEKERS * ROUNDS,
        "every job ran: {} activations",
        stats.total.activations
    );
    elapsed
}

#[test]
fn both_workers_search_while_the_pinned_controller_waits_for_reports() {
    // The compute alone, spread over two workers.
    let bound = SEEKERS * ROUNDS * JOB.as_nanos() as u64 / 2;
    for policy in ["cls", "hierarchical"] {
        let elapsed = search_time(policy);
        assert!(
            elapsed < bound + bound / 10,
            "{policy}: {elapsed} ns of virtual time for {bound} ns of compute per worker"
        );
    }
}
