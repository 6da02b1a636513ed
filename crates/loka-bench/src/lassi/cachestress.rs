//! Cache stress test (LASSI, slides "Cache Stress Test" and "Cache Stress Test: Best and Worst
//! Locality"): arrays of random integers, each the size of one place's L3 cache, and many
//! stresser actors, each of which adds and multiplies all the elements of its array, pass after
//! pass. The slides have two arrays and two places; loka makes one array per place (at least
//! two), so that each place's L3 can hold exactly one array.
//!
//! Hints (`Variant`), for stresser j of array a on P places:
//! * best: place a — all the actors sharing an array share one L3;
//! * worst: place (a + j) mod P — each array's actors spread evenly over the places, so every
//!   L3 is asked to hold every array;
//! * ignorant: none (no place: spawned round robin over the workers, as under `cls`);
//! * random: a seeded random place.
//!
//! One pass is one message: the driver's first message starts pass 0, and the stresser sends
//! itself pass k + 1 until it has made every pass, then reports its wrapping sum and product to a
//! collector and stops. Check: every stresser reported once, made every pass in order, and its
//! sum and product equal those the driver computes from its array; A·(R + 1) messages.

use super::{at, noting, random_place, variants, Variant};
use crate::rng::XorShift;
use crate::{await_result, Bench, Fault, Measured, Run, Size};
use loka::topology::Level;
use loka::{Actor, ActorRef, Context, Machine, ReplyTo, System};
use std::sync::Arc;
use std::time::Instant;

/// The four variants.
pub(super) const BENCHES: [Bench; 4] = variants!(
    "lassi-cachestress",
    "stressers add and multiply all elements of L3-sized arrays, R passes each (A·(R + 1) messages)",
    run,
    &[
        Fault::Drop,
        Fault::Duplicate,
        Fault::Misroute,
        Fault::WrongRule
    ]
);

/// The L3 size assumed where the topology does not give one: that of the slides' Nehalem
/// (8 MiB per package).
const DEFAULT_L3_BYTES: u64 = 8 << 20;

/// The largest array of a `full` run: some virtual machines report one L3 of hundreds of MiB,
/// over which a hundred passes per stresser would take minutes.
const MAX_ARRAY_BYTES: u64 = 64 << 20;

/// The run's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Params {
    /// Arrays: one per place, at least two.
    arrays: usize,
    /// Elements (`u32`) per array.
    len: usize,
    /// Stressers per array (a multiple of the place count).
    per_array: usize,
    /// Passes R over its array each stresser makes.
    passes: u32,
    /// Places of the machine.
    places: usize,
}

impl Params {
    /// All stressers, A.
    fn actors(&self) -> usize {
        self.arrays * self.per_array
    }
}

/// `quick`: 256 KiB arrays, 8 stressers per array (rounded up to a multiple of the places),
/// 500 passes (at least 50 ms on 2 workers; docs/internals/benchmarks.md, "Sizes"). `full`: the slides' — arrays the size of one place's L3 ([`place_l3_bytes`], at
/// most [`MAX_ARRAY_BYTES`]), 8 stressers per worker, 100 passes.
fn of(size: Size, machine: &Machine, workers: usize) -> Params {
    let places = machine.places().max(1);
    let arrays = places.max(2);
    let bytes = size.pick(
        256 << 10,
        place_l3_bytes(machine)
            .unwrap_or(DEFAULT_L3_BYTES)
            .min(MAX_ARRAY_BYTES),
    );
    let per_array = size.pick(8, (8 * workers).div_ceil(arrays)).max(1);
    Params {
        arrays,
        len: (bytes / 4) as usize,
        per_array: per_array.div_ceil(places) * places,
        passes: size.pick(500, 100),
        places,
    }
}

/// The L3 capacity of place 0: the sizes of the distinct L3 caches above its workers' PUs.
/// `None` where the topology has no L3 there or does not know its size.
fn place_l3_bytes(machine: &Machine) -> Option<u64> {
    let (layout, topology) = (&machine.layout, &machine.topology);
    let mut seen = Vec::new();
    let mut total = 0;
    for &worker in layout.workers_of_place(0) {
        let l3 = topology.ancestor(layout.pu_of(worker), Level::L3)?;
        if !seen.contains(&l3.index) {
            seen.push(l3.index);
            total += l3.size?;
        }
    }
    (total > 0).then_some(total)
}

/// The place stresser `j` of array `a` is hinted to (see the module documentation).
fn hint(variant: Variant, a: usize, j: usize, places: usize) -> Option<usize> {
    match variant {
        Variant::Best => Some(a),
        Variant::Worst => Some(a + j),
        Variant::Ignorant => None,
        Variant::Random => Some(random_place(((a as u64) << 32) | j as u64, places)),
    }
}

/// Array `a`: random integers.
fn array(a: usize, len: usize) -> Arc<[u32]> {
    let mut rng = XorShift::new(0xCA5E + a as u64);
    (0..len).map(|_| rng.next() as u32).collect()
}

/// One pass: the wrapping sum and the wrapping product of all elements (each made odd, so that
/// the product does not collapse to 0).
fn pass(array: &[u32]) -> (u32, u32) {
    array.iter().fold((0u32, 1u32), |(s, p), &x| {
        (s.wrapping_add(x), p.wrapping_mul(x | 1))
    })
}

/// What a stresser reports when it has made all its passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Report {
    /// Its number, `a · per_array + j`.
    index: usize,
    /// Passes made (messages handled).
    passes: u32,
    /// Pass messages whose number was not the next one.
    out_of_order: u32,
    /// The wrapping sum of its passes' sums.
    sum: u32,
    /// The wrapping product of its passes' products.
    product: u32,
}

/// Makes one pass per message over its array.
struct Stresser {
    /// The array it makes its passes over.
    array: Arc<[u32]>,
    /// Where its report goes.
    collector: ActorRef<CollectMsg>,
    /// What it reports so far.
    report: Report,
    /// Passes to make.
    passes: u32,
    /// The number it reports under ([`Fault::Misroute`]: another stresser's).
    report_as: usize,
    /// [`Fault::Duplicate`]: send its second pass twice.
    duplicate: bool,
}

impl Actor for Stresser {
    /// The number of the pass to make.
    type Msg = u32;
    fn handle(&mut self, ctx: &mut Context<Self>, k: u32) {
        let r = &mut self.report;
        r.out_of_order += u32::from(k != r.passes);
        let (s, p) = pass(&self.array);
        r.sum = r.sum.wrapping_add(s);
        r.product = r.product.wrapping_mul(p);
        r.passes += 1;
        if r.passes < self.passes {
            let me = ctx.myself();
            if std::mem::take(&mut self.duplicate) {
                me.send(k + 1).expect("a running actor is alive");
            }
            me.send(k + 1).expect("a running actor is alive");
        } else {
            let report = Report {
                index: self.report_as,
                ..*r
            };
            self.collector
                .send(CollectMsg::Report(report))
                .expect("collector alive");
            ctx.stop();
        }
    }
}

/// To the collector.
enum CollectMsg {
    /// From the driver: answer once every stresser has reported.
    Arm(ReplyTo<Collected>),
    /// From a stresser that has made all its passes.
    Report(Report),
}

/// The reports as they arrived.
#[derive(Debug)]
struct Collected {
    /// Per stresser, its report, if it arrived.
    reports: Vec<Option<Report>>,
    /// Reports for a stresser that had reported already.
    duplicates: usize,
}

/// Gathers the stressers' reports and answers the driver once all are in.
struct Collector {
    /// The reports so far.
    collected: Collected,
    /// Stressers yet to report.
    left: usize,
    /// The driver's request, once armed.
    done: Option<ReplyTo<Collected>>,
}

impl Actor for Collector {
    type Msg = CollectMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: CollectMsg) {
        match msg {
            CollectMsg::Arm(done) => self.done = Some(done),
            CollectMsg::Report(report) => match &mut self.collected.reports[report.index] {
                Some(_) => self.collected.duplicates += 1,
                slot => {
                    *slot = Some(report);
                    self.left -= 1;
                }
            },
        }
        if self.left == 0 {
            if let Some(done) = self.done.take() {
                done.send(Collected {
                    reports: std::mem::take(&mut self.collected.reports),
                    duplicates: self.collected.duplicates,
                });
                ctx.stop();
            }
        }
    }
}

/// The reports compared with the driver's own passes.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    /// Stressers that reported.
    reports: usize,
    /// Reports for a stresser that had reported already.
    duplicates: usize,
    /// Passes made by all stressers.
    passes: u64,
    /// Pass messages handled out of order.
    out_of_order: u64,
    /// Stressers whose sum or product differs from the driver's.
    wrong_results: usize,
    /// Actors of the run still alive at the end.
    alive: u64,
}

/// One run at the size of `run` on this machine, its parameters noted in the check.
fn run(system: &System, run: &Run, variant: Variant) -> Measured {
    let p = of(run.size, system.machine(), system.workers());
    noting(measure(system, run, variant, p), p)
}

/// One run with the parameters `p`: set-up, the timed passes, the check.
fn measure(system: &System, run: &Run, variant: Variant, p: Params) -> Measured {
    let arrays: Vec<Arc<[u32]>> = (0..p.arrays).map(|a| array(a, p.len)).collect();
    // The driver's own pass over each array, once: every stresser of the array must report R
    // times its sum and its product to the power R.
    let expected: Vec<(u32, u32)> = arrays
        .iter()
        .map(|a| {
            let (s, q) = pass(a);
            (s.wrapping_mul(p.passes), q.wrapping_pow(p.passes))
        })
        .collect();
    system.run_until_idle();
    let before = system.stats();
    let actors = p.actors();
    let collector = system.spawn(Collector {
        collected: Collected {
            reports: vec![None; actors],
            duplicates: 0,
        },
        left: actors,
        done: None,
    });
    let mut stressers: Vec<ActorRef<u32>> = Vec::with_capacity(actors);
    for a in 0..p.arrays {
        for j in 0..p.per_array {
            let index = a * p.per_array + j;
            let first = index == 0;
            // Fault::WrongRule: stresser 0 works on the next array instead of its own.
            let data = match run.fault {
                Fault::WrongRule if first => &arrays[1 % p.arrays],
                _ => &arrays[a],
            };
            let stresser = Stresser {
                array: Arc::clone(data),
                collector: collector.clone(),
                report: Report {
                    index,
                    passes: 0,
                    out_of_order: 0,
                    sum: 0,
                    product: 1,
                },
                passes: p.passes,
                report_as: if first && run.injects(Fault::Misroute) {
                    1
                } else {
                    index
                },
                duplicate: first && run.injects(Fault::Duplicate),
            };
            stressers
                .push(system.spawn_with(stresser, at(hint(variant, a, j, p.places), p.places)));
        }
    }
    system.run_until_idle();
    let start = Instant::now();
    let pending = collector.ask(CollectMsg::Arm).expect("fresh actor");
    drop(collector);
    // The first passes go out interleaved over the arrays (stresser 0 of every array, then 1,
    // …), so that every place has work from the first message on.
    let order = (0..p.per_array).flat_map(|j| (0..p.arrays).map(move |a| a * p.per_array + j));
    for index in order {
        let stresser = &stressers[index];
        // Fault::Drop: stresser 0's first pass is not sent.
        if !(index == 0 && run.injects(Fault::Drop)) {
            stresser.send(0).expect("fresh actor");
        }
    }
    let collected = await_result(system, pending, run, &variant.bench("cachestress"));
    let elapsed = start.elapsed();
    let collected = match collected {
        Ok(c) => c,
        Err(e) => {
            stressers.iter().for_each(|s| {
                s.stop();
            });
            return Measured::failed(0, elapsed, e);
        }
    };
    drop(stressers);
    system.run_until_idle();
    let mut outcome = Outcome {
        reports: 0,
        duplicates: collected.duplicates,
        passes: 0,
        out_of_order: 0,
        wrong_results: 0,
        alive: system
            .stats()
            .actors_live()
            .saturating_sub(before.actors_live()),
    };
    for (index, report) in collected.reports.iter().enumerate() {
        let Some(r) = report else { continue };
        outcome.reports += 1;
        outcome.passes += u64::from(r.passes);
        outcome.out_of_order += u64::from(r.out_of_order);
        let (sum, product) = expected[index / p.per_array];
        outcome.wrong_results += usize::from((r.sum, r.product) != (sum, product));
    }
    let want = Outcome {
        reports: actors,
        duplicates: 0,
        passes: actors as u64 * u64::from(p.passes),
        out_of_order: 0,
        wrong_results: 0,
        alive: 0,
    };
    // The passes the stressers handled, plus the reports the collector handled.
    let messages = outcome.passes + (outcome.reports + outcome.duplicates) as u64;
    Measured::checked(messages, elapsed, outcome, want)
        .with_message_count(actors as u64 * (u64::from(p.passes) + 1), "A·(R + 1) = ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_and_worst_hints_follow_the_slides() {
        // Two places, two arrays of four stressers.
        let places = |v| -> Vec<Vec<usize>> {
            (0..2)
                .map(|a| (0..4).map(|j| hint(v, a, j, 2).unwrap() % 2).collect())
                .collect()
        };
        assert_eq!(places(Variant::Best), [[0, 0, 0, 0], [1, 1, 1, 1]]);
        // Half of each array's stressers on each place.
        assert_eq!(places(Variant::Worst), [[0, 1, 0, 1], [1, 0, 1, 0]]);
        assert_eq!(hint(Variant::Ignorant, 1, 3, 2), None);
        assert_eq!(
            hint(Variant::Random, 1, 3, 2),
            hint(Variant::Random, 1, 3, 2)
        );
    }

    #[test]
    fn arrays_are_sized_like_a_places_l3() {
        // Eight workers: two would both sit in the first package, one place.
        let system = loka::System::builder()
            .topology("preset:nehalem-2x4")
            .workers(8)
            .build()
            .unwrap();
        assert_eq!(system.machine().places(), 2);
        assert_eq!(place_l3_bytes(system.machine()), Some(8 << 20));
        let p = of(Size::Full, system.machine(), 8);
        assert_eq!(
            (p.arrays, p.len, p.per_array, p.passes),
            (2, 2 << 20, 32, 100)
        );
        let p = of(Size::Quick, system.machine(), 8);
        assert_eq!((p.arrays, p.len, p.per_array), (2, 64 << 10, 8));
        // No cache sizes in the description: the slides' 8 MiB.
        let system = loka::System::builder()
            .topology("synthetic:package:2 core:1 pu:1")
            .workers(2)
            .build()
            .unwrap();
        assert_eq!(place_l3_bytes(system.machine()), None);
        assert_eq!(of(Size::Full, system.machine(), 2).len, 2 << 20);
    }

    #[test]
    fn small_runs_verify_and_faults_fail() {
        let p = Params {
            arrays: 2,
            len: 1000,
            per_array: 2,
            passes: 3,
            places: 1,
        };
        for variant in [Variant::Best, Variant::Worst, Variant::Random] {
            let system = loka::System::builder().workers(2).build().unwrap();
            let m = measure(&system, &Run::new(Size::Quick), variant, p);
            assert!(m.verified, "{variant:?}: {}", m.check);
            assert_eq!(m.messages, 16);
        }
        for &fault in BENCHES[0].faults {
            let system = loka::System::builder().workers(2).build().unwrap();
            let run = Run::new(Size::Quick).with_fault(fault);
            let m = measure(&system, &run, Variant::Best, p);
            assert!(!m.verified, "{fault:?}: {}", m.check);
        }
    }
}
