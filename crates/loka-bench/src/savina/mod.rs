//! The Savina micro benchmarks (definitions in `docs/internals/benchmarks.md`; `full` sizes are Wölke's,
//! thesis §6.2.1, see `docs/references.md`).

mod apsp;
mod banking;
mod big;
mod bitonicsort;
mod bndbuffer;
mod chameneos;
mod concdict;
mod concsll;
pub(crate) mod counting;
mod facloc;
mod fib;
mod fjcreate;
mod fjthrput;
mod logmap;
mod nqueens;
mod philosopher;
pub(crate) mod pingpong;
mod quicksort;
mod radixsort;
mod recmatmul;
mod sieve;
mod threadring;
mod trapezoid;

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
        concdict::BENCH,
        concsll::BENCH,
        bndbuffer::BENCH,
        philosopher::BENCH,
        logmap::BENCH,
        banking::BENCH,
        apsp::BENCH,
        nqueens::BENCH,
        recmatmul::BENCH,
        quicksort::BENCH,
        radixsort::BENCH,
        bitonicsort::BENCH,
        sieve::BENCH,
        facloc::BENCH,
        trapezoid::BENCH,
    ]
}
