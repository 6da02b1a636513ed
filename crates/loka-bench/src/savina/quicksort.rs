//! Quicksort: a dynamically grown binary tree of actors; each splits its vector around a pivot,
//! hands the smaller and greater parts to two new children and concatenates their sorted
//! answers; vectors under T elements are sorted sequentially (Savina #21).

use crate::rng::XorShift;
use crate::verify::fingerprint;
use crate::{await_result, Bench, Fault, Measured, Run};
use loka::{Actor, ActorFailure, ActorRef, Context, ReplyTo, SpawnOptions, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "quicksort",
    suite: "savina",
    about: "a tree of actors quicksorts N values, sequential below T (2 messages per child)",
    run,
    faults: &[Fault::Drop, Fault::WrongRule],
};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Left,
    Right,
}

/// The sorted vector and the messages its subtree handled.
type Sorted = (Vec<u64>, u64);

enum SortMsg {
    /// The driver's request to the root.
    Root {
        data: Vec<u64>,
        done: ReplyTo<Sorted>,
    },
    /// A parent's request.
    Sort(Vec<u64>),
    /// A child's sorted part and the messages its subtree handled.
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
    /// Messages handled by this actor and its subtree (the driver's request left out).
    messages: u64,
    /// The defect to inject ([`Fault::None`] in a real run): passed down the leftmost path to a
    /// leaf for `Drop`, kept by the root for `WrongRule`.
    fault: Fault,
}

impl QuickSort {
    fn new(parent: Parent, threshold: usize, fault: Fault) -> QuickSort {
        QuickSort {
            parent,
            threshold,
            result: Vec::new(),
            fragments: 0,
            messages: 0,
            fault,
        }
    }

    fn sort(&mut self, ctx: &mut Context<Self>, mut data: Vec<u64>) {
        if data.len() < self.threshold {
            ctx.charge(leaf_cost(data.len()));
            data.sort_unstable();
            self.result = data;
            self.reply(ctx);
            return;
        }
        ctx.charge(split_cost(data.len()));
        let (left, right) = split(&mut data);
        self.result = data;
        let me = ctx.myself();
        // Lazy: a child's first activation is the one that handles its request.
        let lazy = SpawnOptions::new().lazy(true);
        let threshold = self.threshold;
        let down = if self.fault == Fault::Drop {
            std::mem::replace(&mut self.fault, Fault::None)
        } else {
            Fault::None
        };
        let first = ctx.spawn_with(
            QuickSort::new(Parent::Actor(me.clone(), Side::Left), threshold, down),
            lazy.clone(),
        );
        first.send(SortMsg::Sort(left)).expect("fresh actor");
        let second = ctx.spawn_with(
            QuickSort::new(Parent::Actor(me, Side::Right), threshold, Fault::None),
            lazy,
        );
        second.send(SortMsg::Sort(right)).expect("fresh actor");
        self.fragments = 1;
    }

    fn reply(&mut self, ctx: &mut Context<Self>) {
        let data = std::mem::take(&mut self.result);
        if self.fault == Fault::Drop {
            // Fault injection: this leaf's answer is lost.
            ctx.stop();
            return;
        }
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
            SortMsg::Sort(data) => {
                self.messages += 1;
                self.sort(ctx, data)
            }
            SortMsg::Result {
                data,
                side,
                messages,
            } => {
                self.messages += 1 + messages;
                let side = if self.fault == Fault::WrongRule {
                    // Fault injection: the first part to come back is put on the wrong side.
                    self.fault = Fault::None;
                    match side {
                        Side::Left => Side::Right,
                        Side::Right => Side::Left,
                    }
                } else {
                    side
                };
                if !data.is_empty() {
                    ctx.charge(copy_cost(match side {
                        Side::Left => data.len() + self.result.len(),
                        Side::Right => data.len(),
                    }));
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

/// Splits `data` around its middle element: returns the smaller and the greater values and keeps
/// the equal ones in `data` (three passes over it).
fn split(data: &mut Vec<u64>) -> (Vec<u64>, Vec<u64>) {
    let pivot = data[data.len() / 2];
    let left: Vec<u64> = data.iter().copied().filter(|&v| v < pivot).collect();
    let right: Vec<u64> = data.iter().copied().filter(|&v| v > pivot).collect();
    data.retain(|&v| v == pivot);
    (left, right)
}

/// What the handlers compute, declared to the simulation engine with `ctx.charge`
/// (docs/simulation.md), each per element and measured on this project's host with `cargo test
/// --release -p loka-bench --lib quicksort_cost -- --ignored --nocapture --test-threads=1` (the
/// least of six runs, 2026-11-24): [`split`] of a 65,536-value vector (512 KiB, in this host's
/// L2, so the constant is compute), per value;
const SPLIT_PS: u64 = 4_731;
/// a leaf's `sort_unstable` of 2,047 values (T − 1), per value and binary digit of the length
/// (`n·log₂ n`);
const SORT_PS: u64 = 1_083;
/// and a merge's copy of a sorted part, per value copied.
const COPY_PS: u64 = 306;

/// Picoseconds as a [`Duration`](std::time::Duration).
fn ps(ps: u64) -> std::time::Duration {
    std::time::Duration::from_nanos(ps / 1_000)
}

fn split_cost(n: usize) -> std::time::Duration {
    ps(n as u64 * SPLIT_PS)
}

fn leaf_cost(n: usize) -> std::time::Duration {
    let digits = u64::from(usize::BITS - n.leading_zeros());
    ps(n as u64 * digits * SORT_PS)
}

fn copy_cost(n: usize) -> std::time::Duration {
    ps(n as u64 * COPY_PS)
}

/// The actors of the sorting tree for `data`, counted sequentially with the same rule (the middle
/// element as pivot, the smaller and the greater values to two children, below T sorted in place).
fn tree_actors(data: &[u64], threshold: usize) -> u64 {
    if data.len() < threshold {
        return 1;
    }
    let mut data = data.to_vec();
    let (left, right) = split(&mut data);
    1 + tree_actors(&left, threshold) + tree_actors(&right, threshold)
}

fn run(system: &System, run: &Run) -> Measured {
    // N values below M = 2⁶⁰, sequential below T = 2,048 (Savina's defaults for M and T).
    let (n, threshold) = run.pick((1_200_000, 2_048), (40_000_000, 2_048));
    let mut rng = XorShift(1_024);
    let data: Vec<u64> = (0..n).map(|_| rng.next() >> 4).collect();
    let expected_fingerprint = fingerprint(data.iter().copied());
    let actors = tree_actors(&data, threshold);
    let root = system.spawn(QuickSort::new(Parent::None, threshold, run.fault));
    system.run_until_idle();
    let start = Instant::now();
    let pending = root
        .ask(|done| SortMsg::Root { data, done })
        .expect("fresh actor");
    let result = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    let (sorted, messages) = match result {
        Ok(result) => result,
        Err(reason) => return Measured::failed(0, elapsed, reason),
    };
    let in_order = sorted.windows(2).all(|w| w[0] <= w[1]);
    let same = sorted.len() == n && fingerprint(sorted.iter().copied()) == expected_fingerprint;
    Measured {
        messages,
        elapsed,
        verified: in_order && same,
        check: format!(
            "{} values (expected {n}), {}, {} the input's multiset fingerprint",
            sorted.len(),
            if in_order { "sorted" } else { "NOT sorted" },
            if same { "matching" } else { "NOT matching" },
        ),
    }
    .with_message_count(
        2 * (actors - 1),
        &format!("2·(actors − 1), {actors} actors counted sequentially, = "),
    )
}

#[cfg(test)]
mod cost_tests {
    use super::*;

    fn values(n: usize, seed: u64) -> Vec<u64> {
        let mut rng = XorShift(seed);
        (0..n).map(|_| rng.next() >> 4).collect()
    }

    /// The per-value costs of a split, a leaf's sort and a merge's copy, for [`SPLIT_PS`],
    /// [`SORT_PS`] and [`COPY_PS`].
    #[test]
    #[ignore = "a measurement, not a test"]
    fn quicksort_cost_per_value() {
        const ROUNDS: usize = 200;
        let (big, leaf) = (65_536, 2_047);
        let inputs: Vec<Vec<u64>> = (0..ROUNDS as u64).map(|s| values(big, s + 1)).collect();
        let leaves: Vec<Vec<u64>> = (0..ROUNDS as u64 * 32)
            .map(|s| values(leaf, s + 1))
            .collect();
        let digits = (usize::BITS - leaf.leading_zeros()) as f64;
        for _ in 0..6 {
            let mut work = inputs.clone();
            let start = Instant::now();
            for data in &mut work {
                std::hint::black_box(split(data));
            }
            let split_ps = start.elapsed().as_nanos() as f64 * 1e3 / (ROUNDS * big) as f64;
            let mut work = leaves.clone();
            let start = Instant::now();
            for data in &mut work {
                data.sort_unstable();
                std::hint::black_box(&data);
            }
            let n = (work.len() * leaf) as f64;
            let sort_ps = start.elapsed().as_nanos() as f64 * 1e3 / (n * digits);
            let mut into = Vec::with_capacity(big);
            let start = Instant::now();
            for data in &inputs {
                into.clear();
                into.extend_from_slice(std::hint::black_box(data));
            }
            let copy_ps = start.elapsed().as_nanos() as f64 * 1e3 / (ROUNDS * big) as f64;
            eprintln!(
                "quicksort: split {split_ps:.0} ps, sort {sort_ps:.0} ps per value and digit, copy {copy_ps:.0} ps per value"
            );
        }
    }
}
