//! A token passed around a ring of actors on the simulated Opteron (`opteron_sim`): only one
//! actor is runnable at any time, so all but one or two workers are idle, and what the token
//! costs is what each policy does with a wake-up between idle workers (`sim_chain.rs`,
//! `sim_places.rs`).

use super::opteron_sim;
use loka::{Actor, ActorRef, Context, PolicyKind, SpawnOptions};

/// Actors in the ring.
pub const RING: usize = 64;
/// Messages the token travels.
pub const HOPS: u32 = 20_000;

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

/// What passing the token cost.
#[allow(dead_code)] // each test file reads the counts it asserts on
pub struct Passed {
    /// Virtual ns the token took.
    pub ns: u64,
    /// Wake-ups of parked workers while it travelled.
    pub wakes: u64,
    /// Wake-ups LGS pushed to a home PU other than the waking worker.
    pub pushes: u64,
}

/// Passes the token [`HOPS`] times around a ring spawned from a plain thread under `policy`,
/// member `i` with `options(i)`.
pub fn pass_token(policy: PolicyKind, options: impl Fn(usize) -> SpawnOptions) -> Passed {
    let system = opteron_sim::system(policy);
    let ring: Vec<ActorRef<Msg>> = (0..RING)
        .map(|i| system.spawn_with(Member { next: None }, options(i)))
        .collect();
    for (i, member) in ring.iter().enumerate() {
        member
            .send(Msg::Next(ring[(i + 1) % RING].clone()))
            .unwrap();
    }
    system.run_until_idle();
    let before = system.stats();
    ring[0].send(Msg::Token(HOPS)).unwrap();
    system.run_until_idle();
    let after = system.stats();
    system.shutdown();
    Passed {
        ns: after.sim.unwrap().virtual_ns - before.sim.unwrap().virtual_ns,
        wakes: after.unparks - before.unparks,
        pushes: after.total.hpu_pushes - before.total.hpu_pushes,
    }
}
