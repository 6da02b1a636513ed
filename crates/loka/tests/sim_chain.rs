//! A chain of messages that crosses NUMA nodes, under `hierarchical`: a token passed around a
//! ring of actors whose homes alternate between the nodes of the 8-node Opteron 6376 preset, 64
//! workers, under the simulation (virtual time and counted wake-ups, which no host load can
//! change). Only one actor is runnable at any time, so all but one or two workers are idle.
//!
//! Francesquini's rule sends an actor woken from another node back to the worker it last ran
//! on. When that worker sleeps, the push wakes it: a futex wake-up per message, for a token
//! whose sender's worker is idle a moment later (threadring at 0.08× of `cls` on this preset).
//! The rule now keeps such an actor on the sender's worker
//! (docs/decisions/0071-hierarchical-spares-sleepers.md), but only while that worker has nothing
//! else to run: a sender that fans work out still wakes each actor's own worker.

mod opteron_sim;

use loka::{Actor, ActorRef, Context, Placement, PolicyKind, SpawnOptions};
use opteron_sim::{Fan, Job, WORKERS};
use std::time::Duration;

/// Actors in the ring: eight per node, consecutive ones on different nodes.
const RING: usize = 64;
/// Messages the token travels.
const HOPS: u32 = 20_000;

enum Msg {
    Next(ActorRef<Msg>),
    Token(u32),
}

struct Member {
    next: Option<ActorRef<Msg>>,
}

impl Actor for Member {
    type Msg = Msg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: Msg) {
        match msg {
            Msg::Next(next) => self.next = Some(next),
            Msg::Token(0) => {}
            Msg::Token(n) => {
                let _ = self.next.as_ref().expect("linked").send(Msg::Token(n - 1));
            }
        }
    }
}

/// The worker of ring member `i`: node `i % 8`, a different worker of it each lap of nodes.
fn home_of(i: usize) -> usize {
    (i % 8) * 8 + (i / 8) % 8
}

/// (virtual ns the token took, wake-ups of parked workers while it travelled).
fn pass_token(policy: PolicyKind) -> (u64, u64) {
    let system = opteron_sim::system(policy);
    let ring: Vec<ActorRef<Msg>> = (0..RING)
        .map(|i| {
            let options = SpawnOptions {
                placement: Placement::Worker(home_of(i)),
                ..SpawnOptions::default()
            };
            system.spawn_with(Member { next: None }, options)
        })
        .collect();
    for (i, member) in ring.iter().enumerate() {
        member
            .send(Msg::Next(ring[(i + 1) % RING].clone()))
            .unwrap();
    }
    system.run_until_idle();
    let (t0, wakes0) = (
        system.stats().sim.unwrap().virtual_ns,
        system.stats().unparks,
    );
    ring[0].send(Msg::Token(HOPS)).unwrap();
    system.run_until_idle();
    let stats = system.stats();
    let took = (stats.sim.unwrap().virtual_ns - t0, stats.unparks - wakes0);
    system.shutdown();
    took
}

/// Under `hierarchical` and `hierarchical:auto` the token wakes a parked worker for fewer than
/// one message in a hundred, and travels within 10× of `cls`'s time. Before the rule: 1,252
/// wake-ups (the other hops found their worker still polling) and 28× `cls`'s time; with it, 49
/// and 6.9×. What is left is not a wake-up: the token still goes back to each actor's worker
/// when that worker is awake, a cross-node hand-off per message, where `cls` runs the whole ring
/// in one worker's cache.
#[test]
fn a_token_crossing_nodes_wakes_no_sleeper_per_message() {
    let (cls_ns, cls_wakes) = pass_token(PolicyKind::Cls);
    let mut table = format!("\n  cls: {cls_ns} ns, {cls_wakes} wake-ups");
    let mut failed = Vec::new();
    for policy in [
        PolicyKind::Hierarchical { auto_hubs: false },
        PolicyKind::Hierarchical { auto_hubs: true },
    ] {
        let (ns, wakes) = pass_token(policy);
        let ratio = ns as f64 / cls_ns as f64;
        table += &format!("\n  {policy}: {ns} ns ({ratio:.2}× cls), {wakes} wake-ups");
        if wakes > u64::from(HOPS) / 100 || ratio > 10.0 {
            failed.push(policy.to_string());
        }
    }
    assert!(
        failed.is_empty(),
        "a wake-up per message under {failed:?}:{table}"
    );
    println!("{HOPS} hops around {RING} actors on {WORKERS} workers:{table}");
}

/// One job homed on each of workers 1..64 (each has run once there), a fan on worker 0 that
/// wakes them all in one activation while every other worker sleeps. After the first job, which
/// worker 0 keeps (nothing else is queued there yet), the sender has work queued, so each job goes
/// back to its own sleeping worker, which wakes: 59 of 63 jobs run on their home node. Kept on
/// worker 0 instead (the rule without its idle-sender condition, red once), they waited there
/// for thieves, who took them wherever they were: 11 of 63 at home, in about the same time (a
/// thief's steal and a wake-up cost the simulation about the same).
#[test]
fn a_fan_out_from_a_busy_sender_still_wakes_each_actor_on_its_home() {
    for policy in [
        PolicyKind::Hierarchical { auto_hubs: false },
        PolicyKind::Hierarchical { auto_hubs: true },
    ] {
        let system = opteron_sim::system(policy);
        let on = |w| SpawnOptions {
            placement: Placement::Worker(w),
            ..SpawnOptions::default()
        };
        let jobs: Vec<_> = (1..WORKERS)
            .map(|w| system.spawn_with(Job, on(w)))
            .collect();
        for job in &jobs {
            job.send(()).unwrap();
        }
        let fan = system.spawn_with(
            Fan {
                jobs,
                delay: Some(Duration::from_millis(1)),
            },
            on(0),
        );
        system.run_until_idle();
        let before = system.stats();
        fan.send(()).unwrap();
        system.run_until_idle();
        let after = system.stats();
        let home = |s: &loka::Stats| s.total.exec_home_pu + s.total.exec_home_node;
        let all = |s: &loka::Stats| home(s) + s.total.exec_remote_node;
        // The fan's two activations (its message, its timer) are at home too; the share counts
        // jobs only.
        let jobs_home = home(&after) - home(&before) - 2;
        let jobs_run = all(&after) - all(&before) - 2;
        let took = after.sim.unwrap().virtual_ns - before.sim.unwrap().virtual_ns;
        system.shutdown();
        assert_eq!(jobs_run, WORKERS as u64 - 1, "{policy}: every job ran once");
        assert!(
            jobs_home * 10 >= jobs_run * 9,
            "{policy}: {jobs_home} of {jobs_run} jobs ran on their home node ({took} ns)"
        );
        println!("{policy}: {jobs_home} of {jobs_run} jobs at home, {took} virtual ns");
    }
}
