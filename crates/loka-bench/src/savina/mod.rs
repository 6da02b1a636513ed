//! The Savina micro benchmarks (SPEC §7; definitions in `docs/benchmarks.md`).

mod big;
mod chameneos;
mod counting;
mod fib;
mod fjcreate;
mod fjthrput;
mod pingpong;
mod threadring;

use crate::Bench;

/// The Savina benchmarks, in Savina's order.
pub fn all() -> Vec<Bench> {
    vec![
        pingpong::BENCH,
        counting::BENCH,
        threadring::BENCH,
        fjthrput::BENCH,
        fjcreate::BENCH,
        fib::BENCH,
        chameneos::BENCH,
        big::BENCH,
    ]
}
