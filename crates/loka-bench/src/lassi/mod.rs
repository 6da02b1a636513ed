//! The benchmarks of LASSI's place hints (Weibel, *An Advanced Scheduler for Intervals*, ETH
//! Zürich 2010; docs/references.md), each with best / worst / ignorant / random hints
//! (docs/places.md). Definitions, sizes and deviations in `docs/benchmarks.md` (*LASSI*).

use crate::Bench;

/// The LASSI benchmarks.
pub fn all() -> Vec<Bench> {
    vec![]
}
