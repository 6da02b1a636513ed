//! The benchmarks of Panini's automatic actor-to-thread mapping (Upadhyaya & Rajan, AGERE! 2014;
//! docs/references.md), each run under the execution modes all-thread, all-task and auto
//! (docs/exec-policies.md). Definitions, sizes and deviations in `docs/benchmarks.md` (*Panini*).

use crate::Bench;

/// The Panini benchmarks.
pub fn all() -> Vec<Bench> {
    vec![]
}
