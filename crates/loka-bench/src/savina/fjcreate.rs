//! Fork-Join Actor Creation: a driver spawns N actors and sends each one request; each runs one
//! `compute()`, replies and stops (Savina #5).

use crate::{compute, Bench, Measured, Run};
use loka::{Actor, ActorFailure, ActorRef, Context, ReplyTo, SpawnOptions, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "fjcreate",
    suite: "savina",
    about: "a driver spawns N actors, each answers one request and stops (2·N messages)",
    run,
    faults: &[],
};

/// Actors created per activation of the driver before it yields to the rest of the system.
const SLICE: u64 = 1_000;

struct Request;

struct Child {
    driver: ActorRef<DriverMsg>,
}

impl Actor for Child {
    type Msg = Request;
    fn handle(&mut self, ctx: &mut Context<Self>, _msg: Request) {
        compute();
        self.driver.send(DriverMsg::Reply).expect("driver alive");
        ctx.stop();
    }
}

enum DriverMsg {
    Start(ReplyTo<u64>),
    /// Sent to itself to go on with the next slice of actors.
    Continue,
    /// A child's answer.
    Reply,
}

struct Driver {
    /// Actors still to create.
    left: u64,
    expected: u64,
    replies: u64,
    done: Option<ReplyTo<u64>>,
}

impl Driver {
    fn spawn_slice(&mut self, ctx: &mut Context<Self>) {
        let me = ctx.myself();
        let slice = self.left.min(SLICE);
        for _ in 0..slice {
            // Lazy: the child's first activation is the one that handles its request.
            let child =
                ctx.spawn_with(Child { driver: me.clone() }, SpawnOptions::new().lazy(true));
            child.send(Request).expect("fresh actor");
        }
        self.left -= slice;
        if self.left > 0 {
            me.send(DriverMsg::Continue).expect("driver alive");
        }
    }

    fn finish(&mut self, ctx: &mut Context<Self>) {
        if let Some(done) = self.done.take() {
            done.send(self.replies);
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
                self.spawn_slice(ctx);
            }
            DriverMsg::Continue => self.spawn_slice(ctx),
            DriverMsg::Reply => {
                self.replies += 1;
                if self.replies == self.expected {
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
    let size = run.size;
    let actors = size.pick(200_000, 4_000_000);
    let driver = system.spawn(Driver {
        left: actors,
        expected: actors,
        replies: 0,
        done: None,
    });
    system.run_until_idle();
    let start = Instant::now();
    let replies = driver
        .ask(DriverMsg::Start)
        .expect("fresh actor")
        .wait()
        .unwrap_or(u64::MAX);
    Measured::checked(2 * actors, start.elapsed(), replies, actors)
}
