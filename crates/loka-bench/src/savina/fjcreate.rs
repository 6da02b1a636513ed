//! Fork-Join Actor Creation: a driver spawns N actors and sends each one request carrying an
//! angle; each runs one `compute()`, replies the result and stops (Savina #5).
//!
//! Check: the driver counts the requests it sent and the replies it received, and fingerprints
//! the multiset of replied results (they arrive in any order); the calling thread computes the
//! fingerprint of the N expected results sequentially. A lost, duplicated or wrongly computed
//! reply changes the count or the fingerprint.

use crate::verify::mix;
use crate::{await_result, compute, compute_angle, Bench, Fault, Measured, Run};
use loka::{Actor, ActorFailure, ActorRef, Context, ReplyTo, SpawnOptions, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "fjcreate",
    suite: "savina",
    about: "a driver spawns N actors, each answers one request and stops (2·N messages)",
    run,
    faults: &[Fault::Drop, Fault::WrongRule],
};

/// Actors created per activation of the driver before it yields to the rest of the system.
const SLICE: u64 = 1_000;

/// The angle to compute.
struct Request(f64);

struct Child {
    driver: ActorRef<DriverMsg>,
}

impl Actor for Child {
    type Msg = Request;
    fn handle(&mut self, ctx: &mut Context<Self>, Request(angle): Request) {
        self.driver
            .send(DriverMsg::Reply(compute(angle)))
            .expect("driver alive");
        ctx.charge(crate::COMPUTE_COST);
        ctx.stop();
    }
}

/// The injected [`Fault::WrongRule`]: a child that squares the cosine instead of the sine.
struct WrongChild {
    driver: ActorRef<DriverMsg>,
}

impl Actor for WrongChild {
    type Msg = Request;
    fn handle(&mut self, ctx: &mut Context<Self>, Request(angle): Request) {
        let c = angle.cos();
        self.driver
            .send(DriverMsg::Reply(c * c))
            .expect("driver alive");
        ctx.stop();
    }
}

enum DriverMsg {
    Start(ReplyTo<Tally>),
    /// Sent to itself to go on with the next slice of actors.
    Continue,
    /// A child's answer.
    Reply(f64),
}

/// What the driver sent and received.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Tally {
    requests: u64,
    replies: u64,
    /// [`crate::verify::fingerprint`] of the replied results' bits.
    fingerprint: u64,
}

struct Driver {
    /// The injected fault, set at spawn (not in `Start`: a payload with a niche on any variant
    /// changes the layout of the replies' enum). [`Fault::Drop`]: the first request is lost;
    /// [`Fault::WrongRule`]: the first child computes the wrong function.
    fault: Fault,
    /// The index of the next actor to create.
    next: u64,
    actors: u64,
    tally: Tally,
    done: Option<ReplyTo<Tally>>,
}

impl Driver {
    fn spawn_slice(&mut self, ctx: &mut Context<Self>) {
        let me = ctx.myself();
        let end = self.actors.min(self.next + SLICE);
        for k in self.next..end {
            // Lazy: the child's first activation is the one that handles its request.
            let child =
                ctx.spawn_with(Child { driver: me.clone() }, SpawnOptions::new().lazy(true));
            child.send(Request(compute_angle(k))).expect("fresh actor");
        }
        self.tally.requests += end - self.next;
        self.next = end;
        if self.next < self.actors {
            me.send(DriverMsg::Continue).expect("driver alive");
        }
    }

    /// The injected faults, on the first actor.
    fn spawn_faulty(&mut self, ctx: &mut Context<Self>, fault: Fault) {
        let driver = ctx.myself();
        let lazy = SpawnOptions::new().lazy(true);
        match fault {
            // Created, but its request is lost on its way.
            Fault::Drop => drop(ctx.spawn_with(Child { driver }, lazy)),
            _ => {
                let child = ctx.spawn_with(WrongChild { driver }, lazy);
                child.send(Request(compute_angle(0))).expect("fresh actor");
                self.tally.requests += 1;
            }
        }
        self.next = 1;
    }

    fn finish(&mut self, ctx: &mut Context<Self>) {
        if let Some(done) = self.done.take() {
            done.send(self.tally);
        }
        ctx.stop();
    }
}

impl Actor for Driver {
    type Msg = DriverMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: DriverMsg) {
        match msg {
            DriverMsg::Start(done) => {
                self.done = Some(done);
                if self.fault != Fault::None {
                    self.spawn_faulty(ctx, self.fault);
                }
                self.spawn_slice(ctx);
            }
            DriverMsg::Continue => self.spawn_slice(ctx),
            DriverMsg::Reply(result) => {
                self.tally.replies += 1;
                self.tally.fingerprint = self.tally.fingerprint.wrapping_add(mix(result.to_bits()));
                if self.tally.replies == self.actors {
                    self.finish(ctx);
                }
            }
        }
    }

    fn child_failed(&mut self, ctx: &mut Context<Self>, _failure: ActorFailure) {
        // A lost reply would never arrive: report what arrived so far (unverified) instead.
        self.finish(ctx);
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let actors = run.pick(400_000, 4_000_000);
    let driver = system.spawn(Driver {
        fault: run.fault,
        next: 0,
        actors,
        tally: Tally::default(),
        done: None,
    });
    system.run_until_idle();
    let start = Instant::now();
    let pending = driver.ask(DriverMsg::Start).expect("fresh actor");
    let tally = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    let tally = match tally {
        Ok(tally) => tally,
        Err(e) => return Measured::failed(0, elapsed, e),
    };
    // The N results, computed here sequentially (untimed).
    let expected = Tally {
        requests: actors,
        replies: actors,
        fingerprint: crate::verify::fingerprint(
            (0..actors).map(|k| compute(compute_angle(k)).to_bits()),
        ),
    };
    Measured::checked(tally.requests + tally.replies, elapsed, tally, expected)
        .with_message_count(2 * actors, "2·N = ")
}
