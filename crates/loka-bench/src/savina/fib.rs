//! Fibonacci: every actor computing fib(n) spawns two children for n − 1 and n − 2 and sums their
//! replies (Savina #6).

use crate::{Bench, Measured, Run};
use loka::{Actor, ActorFailure, ActorRef, Context, ReplyTo, SpawnOptions, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "fib",
    suite: "savina",
    about: "a tree of 2·fib(N) − 1 actors computes fib(N) (one request and one reply per child)",
    run,
    faults: &[],
};

enum FibMsg {
    /// The driver's request to the root.
    Root { n: u32, done: ReplyTo<u64> },
    /// A parent's request.
    Request(u32),
    /// A child's answer.
    Result(u64),
}

enum Parent {
    /// Not asked yet (the root before the driver's request).
    None,
    Driver(ReplyTo<u64>),
    Actor(ActorRef<FibMsg>),
}

struct Fib {
    parent: Parent,
    sum: u64,
    waiting: u8,
}

impl Fib {
    fn child(parent: ActorRef<FibMsg>) -> Fib {
        Fib {
            parent: Parent::Actor(parent),
            sum: 0,
            waiting: 0,
        }
    }

    fn request(&mut self, ctx: &mut Context<Self>, n: u32) {
        if n <= 2 {
            self.reply(ctx, 1);
            return;
        }
        let me = ctx.myself();
        // Lazy: a child's first activation is the one that handles its request.
        let lazy = SpawnOptions::new().lazy(true);
        let first = ctx.spawn_with(Fib::child(me.clone()), lazy.clone());
        let second = ctx.spawn_with(Fib::child(me), lazy);
        first.send(FibMsg::Request(n - 1)).expect("fresh actor");
        second.send(FibMsg::Request(n - 2)).expect("fresh actor");
        self.waiting = 2;
    }

    fn reply(&mut self, ctx: &mut Context<Self>, value: u64) {
        match std::mem::replace(&mut self.parent, Parent::None) {
            Parent::Actor(parent) => parent.send(FibMsg::Result(value)).expect("parent alive"),
            Parent::Driver(done) => done.send(value),
            Parent::None => {}
        }
        ctx.stop();
    }
}

impl Actor for Fib {
    type Msg = FibMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: FibMsg) {
        match msg {
            FibMsg::Root { n, done } => {
                self.parent = Parent::Driver(done);
                self.request(ctx, n);
            }
            FibMsg::Request(n) => self.request(ctx, n),
            FibMsg::Result(value) => {
                self.sum = self.sum.saturating_add(value);
                self.waiting -= 1;
                if self.waiting == 0 {
                    self.reply(ctx, self.sum);
                }
            }
        }
    }

    fn child_failed(&mut self, ctx: &mut Context<Self>, _failure: ActorFailure) {
        // The child's reply will never come: answer a value no sum can reach, so the root's
        // result fails the check instead of never arriving.
        self.reply(ctx, u64::MAX);
    }
}

/// fib(n) with fib(1) = fib(2) = 1.
fn fib(n: u32) -> u64 {
    let (mut a, mut b) = (0u64, 1u64);
    for _ in 0..n {
        (a, b) = (b, a + b);
    }
    a
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    let n = size.pick(25, 34);
    let root = system.spawn(Fib {
        parent: Parent::None,
        sum: 0,
        waiting: 0,
    });
    system.run_until_idle();
    let start = Instant::now();
    let result = root
        .ask(|done| FibMsg::Root { n, done })
        .expect("fresh actor")
        .wait()
        .unwrap_or(u64::MAX);
    let actors = 2 * fib(n) - 1;
    Measured::checked(2 * (actors - 1), start.elapsed(), result, fib(n))
}
