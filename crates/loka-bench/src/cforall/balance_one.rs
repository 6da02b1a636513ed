//! Balance-one (Cforall, "Performance: Work Stealing"): the executor workload with fewer rounds,
//! all of it on one worker. Actors are created in round-robin order over the W workers; every
//! working actor is created at a position of worker 0, and the positions of the other workers get
//! 'dummy' actors that stop on their single message. Without stealing, worker 0 does all the
//! work; only stealing spreads it. The workload does not depend on W (the number of dummies
//! does).
//!
//! The workload, the layout and the check are the executor's (`executor.rs`).

use super::executor::{self, Layout, Loaded, FAULTS};
use super::noting;
use crate::{Bench, Measured, Run, Size};
use loka::System;

pub(super) const BENCH: Bench = Bench {
    name: "cforall-balance-one",
    suite: "cforall",
    about: "the executor workload (A actors, groups of S, R rounds) all on worker 0, dummies on the others (A·S·R messages)",
    run,
    faults: FAULTS,
};

/// Working actors A (all on worker 0), group size S, rounds R.
#[derive(Debug, Clone, Copy)]
struct Params {
    actors: usize,
    group: usize,
    rounds: u64,
}

fn of(size: Size) -> Params {
    size.pick(
        Params {
            actors: 4_000,
            group: 100,
            rounds: 10,
        },
        Params {
            actors: 40_000,
            group: 100,
            rounds: 100,
        },
    )
}

fn run(system: &System, run: &Run) -> Measured {
    let p = of(run.size);
    let layout = Layout {
        loaded: Loaded::First,
        per_worker: false,
        actors: p.actors,
        group: p.group,
        rounds: p.rounds,
    };
    noting(executor::measure(system, run, BENCH.name, &layout), p)
}
