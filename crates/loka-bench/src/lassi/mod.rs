//! The benchmarks of LASSI's place hints (Weibel, *An Advanced Scheduler for Intervals*, ETH
//! Zürich 2010; docs/references.md), each with best / worst / ignorant / random hints
//! (docs/places.md). Definitions, sizes and deviations in `docs/internals/benchmarks.md` (*LASSI*).
//!
//! Every workload is one file with the hint variant as a parameter ([`Variant`]); the
//! [`variants!`] macro makes its four [`Bench`]es. The hints only matter under the `places`
//! policies (`places`, `places:a`); every other policy ignores them, so there the four variants
//! run the same program.

/// The cache stress test.
mod cachestress;
/// Block matrix multiplication.
mod matmul;
/// Merge sort.
mod mergesort;

use crate::rng::XorShift;
use crate::{Bench, Measured};
use loka::SpawnOptions;

/// The LASSI benchmarks: the cache stress test, merge sort and block matrix multiplication, in the
/// order of the slides, each as best, worst, ignorant and random.
pub fn all() -> Vec<Bench> {
    let mut all = Vec::new();
    all.extend(cachestress::BENCHES);
    all.extend(mergesort::BENCHES);
    all.extend(matmul::BENCHES);
    all
}

/// How a workload's actors are hinted to places (LASSI's "locality variants").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Variant {
    /// Actors that share data are hinted to the same place.
    Best,
    /// Actors that share data are hinted to different places.
    Worst,
    /// No hints: the actors have no place and run as under `cls`, under `places` too.
    Ignorant,
    /// Every actor is hinted to a place drawn from a seeded generator.
    Random,
}

impl Variant {
    /// The variant's suffix in the benchmark names.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Variant::Best => "best",
            Variant::Worst => "worst",
            Variant::Ignorant => "ignorant",
            Variant::Random => "random",
        }
    }

    /// The name of `workload`'s benchmark with this variant's hints (`lassi-WORKLOAD-VARIANT`).
    pub(crate) fn bench(self, workload: &str) -> String {
        format!("lassi-{workload}-{}", self.name())
    }
}

/// Spawn options for an actor whose hint, if any, is `place` (taken modulo `places`, so that a
/// one-place machine runs every variant).
pub(crate) fn at(place: Option<usize>, places: usize) -> SpawnOptions {
    match place {
        Some(p) => SpawnOptions::new().place(p % places.max(1)),
        None => SpawnOptions::new(),
    }
}

/// A place drawn for the actor with key `key` (the random variant): the same key always gets the
/// same place, whatever the order the actors are spawned in.
pub(crate) fn random_place(key: u64, places: usize) -> usize {
    XorShift::new(key ^ 0x4C41_5353_4900_0000).below(places.max(1))
}

/// Appends the parameters of the run to its check text (it ends up in the result record).
fn noting(mut measured: Measured, params: impl std::fmt::Debug) -> Measured {
    measured.check = format!("{} with {params:?}", measured.check);
    measured
}

/// The four [`Bench`]es of one workload: `$prefix-best`, `-worst`, `-ignorant`, `-random`, each
/// running `$run(system, run, Variant::…)`.
macro_rules! variants {
    ($prefix:literal, $about:literal, $run:path, $faults:expr) => {
        [
            $crate::lassi::variants!(@one $prefix, "-best", $about, $run, Best, $faults),
            $crate::lassi::variants!(@one $prefix, "-worst", $about, $run, Worst, $faults),
            $crate::lassi::variants!(@one $prefix, "-ignorant", $about, $run, Ignorant, $faults),
            $crate::lassi::variants!(@one $prefix, "-random", $about, $run, Random, $faults),
        ]
    };
    (@one $prefix:literal, $suffix:literal, $about:literal, $run:path, $variant:ident, $faults:expr) => {
        $crate::Bench {
            name: concat!($prefix, $suffix),
            suite: "lassi",
            about: concat!($about, " (", stringify!($variant), " locality hints)"),
            run: {
                /// Runs the workload with this variant's hints.
                fn with_hints(system: &loka::System, run: &$crate::Run) -> $crate::Measured {
                    $run(system, run, $crate::lassi::Variant::$variant)
                }
                with_hints
            },
            faults: $faults,
        }
    };
}
pub(crate) use variants;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twelve_benchmarks_named_after_workload_and_variant() {
        let names: Vec<_> = all().iter().map(|b| b.name).collect();
        let mut want = Vec::new();
        for workload in ["cachestress", "mergesort", "matmul"] {
            for v in [
                Variant::Best,
                Variant::Worst,
                Variant::Ignorant,
                Variant::Random,
            ] {
                want.push(format!("lassi-{workload}-{}", v.name()));
            }
        }
        assert_eq!(names, want);
        assert!(all()
            .iter()
            .all(|b| b.suite == "lassi" && !b.faults.is_empty()));
    }

    /// The hints are honoured only by the `places` policies: every benchmark verifies under both
    /// modes on a machine of two places (mode A needs two), and under `places` on one.
    #[test]
    fn every_variant_verifies_under_the_places_policies() {
        for (policy, topology) in [
            ("places", "synthetic:package:2 core:1 pu:1"),
            ("places:a", "synthetic:package:2 core:1 pu:1"),
            ("places", "synthetic:package:1 core:2 pu:1"),
        ] {
            for bench in all() {
                let system = loka::System::builder()
                    .policy(policy.parse().unwrap())
                    .topology(topology)
                    .workers(2)
                    .build()
                    .unwrap();
                let m = (bench.run)(&system, &crate::Run::new(crate::Size::Quick));
                assert!(
                    m.verified,
                    "{} under {policy} on {topology}: {}",
                    bench.name, m.check
                );
            }
        }
    }

    #[test]
    fn hints_fold_onto_the_places_there_are() {
        assert_eq!(at(Some(3), 2).place, Some(1));
        assert_eq!(at(Some(1), 1).place, Some(0));
        assert_eq!(at(None, 2).place, None);
        assert!((0..100).all(|k| random_place(k, 2) < 2));
        let zeros = (0..1000).filter(|&k| random_place(k, 2) == 0).count();
        assert!((400..600).contains(&zeros), "{zeros}");
    }
}
