//! A chain of messages that crosses NUMA nodes, under `hierarchical`: a token passed around a
//! ring of actors whose homes alternate between the nodes of the 8-node Opteron 6376 preset, 64
//! workers, under the simulation (virtual time and counted wake-ups, which no host load can
//! change). Only one actor is runnable at any time, so all but one or two workers are idle.
//!
//! Francesquini's rule sends an actor woken from another node back to the worker it last ran
//! on. When that worker sleeps, the push wakes it: a futex wake-up per message, for a token
//! whose sender's worker is idle a moment later (threadring at 0.08× of `cls` on this preset).
//! The rule now keeps such an actor on the sender's worker
//! (docs/decisions/0071-hierarchical-spares-sleepers.md).

mod opteron_sim;

use loka::{Actor, ActorRef, Context, Placement, PolicyKind, SpawnOptions};
use opteron_sim::WORKERS;

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
