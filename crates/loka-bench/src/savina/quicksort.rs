//! Quicksort: a dynamically grown binary tree of actors; each splits its vector around a pivot,
//! hands the smaller and greater parts to two new children and concatenates their sorted
//! answers; vectors under T elements are sorted sequentially (Savina #21).

use crate::rng::XorShift;
use crate::verify::fingerprint;
use crate::{Bench, Measured, Run};
use loka::{Actor, ActorFailure, ActorRef, Context, ReplyTo, SpawnOptions, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "quicksort",
    suite: "savina",
    about: "a tree of actors quicksorts N values, sequential below T (2 messages per child)",
    run,
    faults: &[],
};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Left,
    Right,
}

/// The sorted vector and the messages its subtree exchanged.
type Sorted = (Vec<u64>, u64);

enum SortMsg {
    /// The driver's request to the root.
    Root {
        data: Vec<u64>,
        done: ReplyTo<Sorted>,
    },
    /// A parent's request.
    Sort(Vec<u64>),
    /// A child's sorted part and its subtree's message count.
    Result {
        data: Vec<u64>,
        side: Side,
        messages: u64,
    },
}

enum Parent {
    /// Not asked yet (the root before the driver's request).
    None,
    Driver(ReplyTo<Sorted>),
    Actor(ActorRef<SortMsg>, Side),
}

struct QuickSort {
    parent: Parent,
    threshold: usize,
    /// The elements equal to the pivot, then the parts merged so far.
    result: Vec<u64>,
    fragments: u8,
    messages: u64,
}

impl QuickSort {
    fn new(parent: Parent, threshold: usize) -> QuickSort {
        QuickSort {
            parent,
            threshold,
            result: Vec::new(),
            fragments: 0,
            messages: 0,
        }
    }

    fn sort(&mut self, ctx: &mut Context<Self>, mut data: Vec<u64>) {
        if data.len() < self.threshold {
            data.sort_unstable();
            self.result = data;
            self.reply(ctx);
            return;
        }
        let pivot = data[data.len() / 2];
        let left: Vec<u64> = data.iter().copied().filter(|&v| v < pivot).collect();
        let right: Vec<u64> = data.iter().copied().filter(|&v| v > pivot).collect();
        data.retain(|&v| v == pivot);
        self.result = data;
        let me = ctx.myself();
        // Lazy: a child's first activation is the one that handles its request.
        let lazy = SpawnOptions::new().lazy(true);
        let threshold = self.threshold;
        let first = ctx.spawn_with(
            QuickSort::new(Parent::Actor(me.clone(), Side::Left), threshold),
            lazy.clone(),
        );
        first.send(SortMsg::Sort(left)).expect("fresh actor");
        let second = ctx.spawn_with(
            QuickSort::new(Parent::Actor(me, Side::Right), threshold),
            lazy,
        );
        second.send(SortMsg::Sort(right)).expect("fresh actor");
        self.fragments = 1;
    }

    fn reply(&mut self, ctx: &mut Context<Self>) {
        let data = std::mem::take(&mut self.result);
        match std::mem::replace(&mut self.parent, Parent::None) {
            Parent::Actor(parent, side) => parent
                .send(SortMsg::Result {
                    data,
                    side,
                    messages: self.messages,
                })
                .expect("parent alive"),
            Parent::Driver(done) => done.send((data, self.messages)),
            Parent::None => {}
        }
        ctx.stop();
    }
}

impl Actor for QuickSort {
    type Msg = SortMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: SortMsg) {
        match msg {
            SortMsg::Root { data, done } => {
                self.parent = Parent::Driver(done);
                self.sort(ctx, data);
            }
            SortMsg::Sort(data) => self.sort(ctx, data),
            SortMsg::Result {
                data,
                side,
                messages,
            } => {
                // The child's subtree, plus the request to the child and its answer.
                self.messages += messages + 2;
                if !data.is_empty() {
                    match side {
                        Side::Left => {
                            let mut merged = data;
                            merged.extend_from_slice(&self.result);
                            self.result = merged;
                        }
                        Side::Right => self.result.extend_from_slice(&data),
                    }
                }
                self.fragments += 1;
                if self.fragments == 3 {
                    self.reply(ctx);
                }
            }
        }
    }

    fn child_failed(&mut self, ctx: &mut Context<Self>, _failure: ActorFailure) {
        // The child's part will never come: answer what we have, which fails the check.
        self.reply(ctx);
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    // N values below M = 2⁶⁰, sequential below T = 2,048 (Savina's defaults for M and T).
    let (n, threshold) = size.pick((1_000_000, 2_048), (40_000_000, 2_048));
    let mut rng = XorShift(1_024);
    let data: Vec<u64> = (0..n).map(|_| rng.next() >> 4).collect();
    let expected_fingerprint = fingerprint(data.iter().copied());
    let root = system.spawn(QuickSort::new(Parent::None, threshold));
    system.run_until_idle();
    let start = Instant::now();
    let result = root
        .ask(|done| SortMsg::Root { data, done })
        .expect("fresh actor")
        .wait();
    let elapsed = start.elapsed();
    let Ok((sorted, messages)) = result else {
        return Measured {
            messages: 0,
            elapsed,
            verified: false,
            check: "the root never answered".to_owned(),
        };
    };
    let in_order = sorted.windows(2).all(|w| w[0] <= w[1]);
    let same = sorted.len() == n && fingerprint(sorted.iter().copied()) == expected_fingerprint;
    Measured {
        messages,
        elapsed,
        verified: in_order && same && messages > 0,
        check: format!(
            "{} values (expected {n}), {}, {} the input's multiset fingerprint; {messages} \
             messages ({} sorting actors)",
            sorted.len(),
            if in_order { "sorted" } else { "NOT sorted" },
            if same { "matching" } else { "NOT matching" },
            messages / 2 + 1
        ),
    }
}
