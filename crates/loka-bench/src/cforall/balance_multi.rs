//! Balance-multi (Cforall, "Performance: Work Stealing"): the executor workload with fewer
//! rounds, on every other worker. Actors are created in round-robin order over the W workers;
//! the positions of the even workers (0, 2, 4, …) get working actors, A per worker, grouped so
//! that a group lives on one worker, and the positions of the odd workers get 'dummy' actors that
//! stop on their single message. Without stealing, half the workers do all the work; the
//! workload grows with W (A·⌈W/2⌉ working actors), so the run time should stay about constant.
//!
//! The workload, the layout and the check are the executor's (`executor.rs`).

use super::executor::{self, Layout, Loaded, FAULTS};
use super::noting;
use crate::{Bench, Measured, Run, Size};
use loka::System;

pub(super) const BENCH: Bench = Bench {
    name: "cforall-balance-multi",
    suite: "cforall",
    about: "the executor workload (A actors per even worker, groups of S, R rounds), dummies on the odd workers (A·⌈W/2⌉·S·R messages)",
    run,
    faults: FAULTS,
};

/// Working actors A per loaded (even) worker, group size S, rounds R.
#[derive(Debug, Clone, Copy)]
struct Params {
    actors_per_worker: usize,
    group: usize,
    rounds: u64,
}

fn of(size: Size) -> Params {
    size.pick(
        Params {
            actors_per_worker: 2_000,
            group: 100,
            rounds: 20,
        },
        Params {
            actors_per_worker: 10_000,
            group: 100,
            rounds: 100,
        },
    )
}

fn run(system: &System, run: &Run) -> Measured {
    let p = of(run.size);
    let layout = Layout {
        loaded: Loaded::Even,
        per_worker: true,
        actors: p.actors_per_worker,
        group: p.group,
        rounds: p.rounds,
    };
    noting(executor::measure(system, run, BENCH.name, &layout), p)
}
