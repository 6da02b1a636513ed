//! The actor benchmarks of Cforall's actor chapter (Parsons, *High Level Concurrency in C∀*,
//! ch. "Actors", section "Performance"; docs/references.md): message sends (static and dynamic),
//! the executor and repeat stress tests, matrix multiply, and the two work-stealing balance tests.
//! Definitions, sizes and deviations in `docs/internals/benchmarks.md` (*Cforall*).
//!
//! `full` sizes are the text's (balance: our choice, the text gives none); `quick` sizes are for a
//! 2-core machine. Every benchmark's message count is exact, counted by its actors, and part of
//! its check.

mod balance_multi;
mod balance_one;
mod dynamic_send;
mod executor;
mod matrix;
mod repeat;
mod static_send;

use crate::{Bench, Measured};

/// The Cforall benchmarks, in the order of the chapter's "Performance" section.
pub fn all() -> Vec<Bench> {
    vec![
        static_send::BENCH,
        dynamic_send::BENCH,
        balance_one::BENCH,
        balance_multi::BENCH,
        executor::BENCH,
        repeat::BENCH,
        matrix::BENCH,
    ]
}

/// Appends the parameters of the run to its check text (it ends up in the result record).
fn noting(mut measured: Measured, params: impl std::fmt::Debug) -> Measured {
    measured.check = format!("{} with {params:?}", measured.check);
    measured
}
