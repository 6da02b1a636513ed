//! Fibonacci: every actor computing fib(n) spawns two children for n − 1 and n − 2 and sums their
//! replies (Savina #6).
//!
//! Check: the root's result equals fib(N) computed sequentially on the calling thread, and the
//! messages the tree counted (each reply carries the count of its subtree) equal 2·(actors − 1).

use crate::{await_result, Bench, Fault, Measured, Run};
use loka::{Actor, ActorFailure, ActorRef, Context, ReplyTo, SpawnOptions, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "fib",
    suite: "savina",
    about: "a tree of 2·fib(N) − 1 actors computes fib(N) (one request and one reply per child)",
    run,
    faults: &[Fault::Drop, Fault::WrongRule],
};

/// A subtree's answer: fib of its n, and the messages its actors handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Answer {
    value: u64,
    messages: u64,
}

enum FibMsg {
    /// The driver's request to the root; boxed, because a payload with a niche (the fault) on
    /// any variant changes the enum's layout and slows every request and reply.
    Root(Box<Root>),
    /// A parent's request.
    Request(u32),
    /// A child's answer.
    Result(Answer),
}

/// [`Fault::Drop`]: the root's second request is lost; [`Fault::WrongRule`]: the root asks
/// for fib(n − 1) and fib(n − 3).
struct Root {
    n: u32,
    fault: Fault,
    done: ReplyTo<Answer>,
}

enum Parent {
    /// Not asked yet (the root before the driver's request).
    None,
    Driver(ReplyTo<Answer>),
    Actor(ActorRef<FibMsg>),
}

struct Fib {
    parent: Parent,
    /// The sum of the children's values, and the messages handled here and below.
    answer: Answer,
    waiting: u8,
}

impl Fib {
    fn new(parent: Parent) -> Fib {
        Fib {
            parent,
            answer: Answer {
                value: 0,
                messages: 0,
            },
            waiting: 0,
        }
    }

    fn request(&mut self, ctx: &mut Context<Self>, n: u32) {
        if n <= 2 {
            self.answer.value = 1;
            self.reply(ctx);
        } else {
            self.fork(ctx, n - 1, Some(n - 2));
        }
    }

    /// Spawns two children and asks them for `first` and `second` (`None`: that request is lost).
    fn fork(&mut self, ctx: &mut Context<Self>, first: u32, second: Option<u32>) {
        let me = ctx.myself();
        // Lazy: a child's first activation is the one that handles its request.
        let lazy = SpawnOptions::new().lazy(true);
        let first_child = ctx.spawn_with(Fib::new(Parent::Actor(me.clone())), lazy.clone());
        let second_child = ctx.spawn_with(Fib::new(Parent::Actor(me)), lazy);
        first_child
            .send(FibMsg::Request(first))
            .expect("fresh actor");
        if let Some(second) = second {
            second_child
                .send(FibMsg::Request(second))
                .expect("fresh actor");
        }
        self.waiting = 2;
    }

    fn reply(&mut self, ctx: &mut Context<Self>) {
        match std::mem::replace(&mut self.parent, Parent::None) {
            Parent::Actor(parent) => parent
                .send(FibMsg::Result(self.answer))
                .expect("parent alive"),
            Parent::Driver(done) => done.send(self.answer),
            Parent::None => {}
        }
        ctx.stop();
    }
}

impl Actor for Fib {
    type Msg = FibMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: FibMsg) {
        match msg {
            FibMsg::Root(root) => {
                let Root { n, fault, done } = *root;
                self.parent = Parent::Driver(done);
                match fault {
                    Fault::Drop if n > 2 => self.fork(ctx, n - 1, None),
                    Fault::WrongRule if n > 3 => self.fork(ctx, n - 1, Some(n - 3)),
                    _ => self.request(ctx, n),
                }
            }
            FibMsg::Request(n) => {
                self.answer.messages = 1;
                self.request(ctx, n);
            }
            FibMsg::Result(child) => {
                self.answer.value = self.answer.value.saturating_add(child.value);
                self.answer.messages += child.messages + 1;
                self.waiting -= 1;
                if self.waiting == 0 {
                    self.reply(ctx);
                }
            }
        }
    }

    fn child_failed(&mut self, ctx: &mut Context<Self>, _failure: ActorFailure) {
        // The child's reply will never come: answer a value no sum can reach, so the root's
        // result fails the check instead of never arriving.
        self.answer.value = u64::MAX;
        self.reply(ctx);
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
    let n = run.pick(27, 34);
    let root = system.spawn(Fib::new(Parent::None));
    system.run_until_idle();
    let start = Instant::now();
    let pending = root
        .ask(|done| {
            FibMsg::Root(Box::new(Root {
                n,
                fault: run.fault,
                done,
            }))
        })
        .expect("fresh actor");
    let answer = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    let answer = match answer {
        Ok(answer) => answer,
        Err(e) => return Measured::failed(0, elapsed, e),
    };
    let expected = fib(n);
    let actors = 2 * expected - 1;
    Measured::checked(answer.messages, elapsed, answer.value, expected)
        .with_message_count(2 * (actors - 1), "2·(actors − 1) = ")
}
