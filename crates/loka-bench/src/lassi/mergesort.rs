//! Merge sort (LASSI, slides "Merge Sort" and "Merge Sort: Locality"): S sorter actors each fill a
//! chunk of N / S random integers and sort it; merger actors, one per inner node of a binary tree
//! over the sorters, merge their two neighbouring sorted children into one, up to the root, which
//! hands the N sorted integers to a collector.
//!
//! The tree is a heap: node 1 is the root, node v's children are 2v (left) and 2v + 1 (right),
//! the mergers are the nodes 1 … S − 1 and sorter i is node S + i. Hints (`Variant`), on P
//! places:
//! * best: sorter i on place ⌊i·P / S⌋ (the sorters split over the places in order), every merger
//!   on the place of its left child;
//! * worst: the sorters as in best, every merger on the place after its left child's, (p + 1)
//!   mod P;
//! * ignorant: none;
//! * random: every actor on a seeded random place.
//!
//! Check: the collector's N integers are in order, and are a permutation of the input (the same
//! count, wrapping sum and wrapping sum of mixed values as the chunks the driver generates
//! itself); no merger got an input it did not expect; every actor stopped; 3·S − 1 messages
//! (S starts, 2·(S − 1) merger inputs, the root's result).

use super::{at, noting, random_place, variants, Variant};
use crate::rng::XorShift;
use crate::{await_result, Bench, Fault, Measured, Run, Size};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

/// The four variants.
pub(super) const BENCHES: [Bench; 4] = variants!(
    "lassi-mergesort",
    "S sorters sort chunks of N random ints, a tree of mergers merges them (3·S − 1 messages)",
    run,
    &[
        Fault::Drop,
        Fault::Duplicate,
        Fault::Misroute,
        Fault::WrongRule
    ]
);

/// The run's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Params {
    /// Integers to sort, N.
    n: usize,
    /// Sorters, S: a power of two, at least 2, dividing N.
    sorters: usize,
    /// Places of the machine.
    places: usize,
}

/// `quick`: N = 2,097,152 in S = 32,768 chunks of 64 (at least 50 ms on 2 workers). `full`: the slides' N = 4,194,304 in
/// S = 65,536 chunks of 64 (their 8,192 sorters per worker on 8 workers).
fn of(size: Size, places: usize) -> Params {
    Params {
        n: size.pick(1 << 21, 1 << 22),
        sorters: size.pick(1 << 15, 1 << 16),
        places: places.max(1),
    }
}

/// The hints of the heap's nodes 1 … 2S − 1 (index 0 unused; see the module documentation).
fn hints(variant: Variant, p: Params) -> Vec<Option<usize>> {
    let s = p.sorters;
    let mut hint = vec![None; 2 * s];
    for (i, h) in hint[s..].iter_mut().enumerate() {
        *h = match variant {
            Variant::Best | Variant::Worst => Some(i * p.places / s),
            Variant::Ignorant => None,
            Variant::Random => Some(random_place((s + i) as u64, p.places)),
        };
    }
    for v in (1..s).rev() {
        let left = hint[2 * v];
        hint[v] = match variant {
            Variant::Best => left,
            Variant::Worst => left.map(|l| (l + 1) % p.places),
            Variant::Ignorant => None,
            Variant::Random => Some(random_place(v as u64, p.places)),
        };
    }
    hint
}

/// Sorter `i`'s chunk of `len` random integers, unsorted.
fn chunk(i: usize, len: usize) -> Vec<u32> {
    let mut rng = XorShift::new(0x5EED_0000 + i as u64);
    (0..len).map(|_| rng.next() as u32).collect()
}

/// The two sorted runs merged into one.
fn merge(left: &[u32], right: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(left.len() + right.len());
    let (mut i, mut j) = (0, 0);
    while i < left.len() && j < right.len() {
        if right[j] < left[i] {
            out.push(right[j]);
            j += 1;
        } else {
            out.push(left[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&left[i..]);
    out.extend_from_slice(&right[j..]);
    out
}

/// A permutation-invariant fingerprint of a multiset of integers: count, wrapping sum, and
/// wrapping sum of the values mixed by SplitMix64's finaliser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Fingerprint {
    /// How many values.
    count: u64,
    /// Their wrapping sum.
    sum: u64,
    /// The wrapping sum of their mixed values.
    mixed: u64,
}

impl Fingerprint {
    /// Adds `values`.
    fn add(&mut self, values: &[u32]) {
        for &x in values {
            let mut z = u64::from(x).wrapping_add(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            self.count += 1;
            self.sum = self.sum.wrapping_add(u64::from(x));
            self.mixed = self.mixed.wrapping_add(z ^ (z >> 31));
        }
    }
}

/// A sorted run, from a child to its merger.
struct Part {
    /// 0: from the left child, 1: from the right.
    side: usize,
    /// The sorted run.
    data: Vec<u32>,
    /// Messages handled in the child's subtree (its own start or inputs included).
    messages: u64,
}

/// Where a node's sorted run goes.
enum Parent {
    /// A merger.
    Merger(ActorRef<Part>),
    /// The collector (the root's parent).
    Collector(ActorRef<CollectMsg>),
}

impl Parent {
    /// Hands `data` on, as the `side` child.
    fn send(&self, side: usize, data: Vec<u32>, messages: u64) {
        let sent = match self {
            Parent::Merger(m) => m
                .send(Part {
                    side,
                    data,
                    messages,
                })
                .is_ok(),
            Parent::Collector(c) => c.send(CollectMsg::Sorted(data, messages)).is_ok(),
        };
        assert!(sent, "a parent lives while a child holds it");
    }
}

/// Fills and sorts its chunk on the driver's start, hands it to its merger and stops.
struct Sorter {
    /// Its number i: its chunk's seed.
    index: usize,
    /// Its chunk's length, N/S.
    len: usize,
    /// Its merger.
    parent: Parent,
    /// Which child of its merger it is (0 left, 1 right).
    side: usize,
    /// [`Fault::Duplicate`]: send the chunk twice.
    twice: bool,
}

impl Actor for Sorter {
    /// Start.
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _start: ()) {
        let mut data = chunk(self.index, self.len);
        data.sort_unstable();
        if self.twice {
            self.parent.send(self.side, data.clone(), 1);
        }
        self.parent.send(self.side, data, 1);
        ctx.stop();
    }
}

/// Merges its two children's runs and hands the result to its own parent. It stops once its
/// children have (its last reference gone, its mailbox empty).
struct Merger {
    /// Its parent merger, or the collector.
    parent: Parent,
    /// Which child of its parent it is (0 left, 1 right).
    side: usize,
    /// Its children's runs so far, with their message counts.
    parts: [Option<(Vec<u32>, u64)>; 2],
    /// Whether it has merged already.
    merged: bool,
    /// Inputs no merger expected (a second run from one side, a run after the merge), all
    /// mergers together.
    unexpected: Arc<AtomicU64>,
    /// [`Fault::WrongRule`]: concatenate instead of merging.
    concatenate: bool,
}

impl Actor for Merger {
    type Msg = Part;
    fn handle(&mut self, _ctx: &mut Context<Self>, part: Part) {
        let slot = &mut self.parts[part.side];
        if self.merged || slot.is_some() {
            self.unexpected.fetch_add(1, Relaxed);
            return;
        }
        *slot = Some((part.data, part.messages));
        if let [Some(_), Some(_)] = &self.parts {
            let [Some((left, l)), Some((right, r))] = std::mem::take(&mut self.parts) else {
                unreachable!("both parts are here")
            };
            let data = if self.concatenate {
                [left, right].concat()
            } else {
                merge(&left, &right)
            };
            self.merged = true;
            self.parent.send(self.side, data, l + r + 2);
        }
    }
}

/// To the collector.
enum CollectMsg {
    /// From the driver: answer with the sorted integers.
    Arm(ReplyTo<(Vec<u32>, u64)>),
    /// From the root merger: the sorted integers and the messages of the tree.
    Sorted(Vec<u32>, u64),
}

/// Receives the root's run and answers the driver with it.
struct Collector {
    /// The sorted integers and the messages of the run, once the root sent them.
    sorted: Option<(Vec<u32>, u64)>,
    /// The driver's request, once armed.
    done: Option<ReplyTo<(Vec<u32>, u64)>>,
}

impl Actor for Collector {
    type Msg = CollectMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: CollectMsg) {
        match msg {
            CollectMsg::Arm(done) => self.done = Some(done),
            // Its own receipt of the result is the last message counted.
            CollectMsg::Sorted(data, messages) => self.sorted = Some((data, messages + 1)),
        }
        if self.sorted.is_some() && self.done.is_some() {
            let (Some(sorted), Some(done)) = (self.sorted.take(), self.done.take()) else {
                unreachable!("both are here")
            };
            done.send(sorted);
            ctx.stop();
        }
    }
}

/// The result compared with the input.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    /// The fingerprint of the sorted integers.
    fingerprint: Fingerprint,
    /// Neighbours out of order.
    inversions: usize,
    /// Inputs no merger expected.
    unexpected: u64,
    /// Actors of the run still alive at the end.
    alive: u64,
}

/// One run at the size of `run` on this machine, its parameters noted in the check.
fn run(system: &System, run: &Run, variant: Variant) -> Measured {
    let p = of(run.size, system.machine().places());
    noting(measure(system, run, variant, p), p)
}

/// One run with the parameters `p`: set-up, the timed sort, the check.
fn measure(system: &System, run: &Run, variant: Variant, p: Params) -> Measured {
    let (n, s) = (p.n, p.sorters);
    assert!(s >= 2 && s.is_power_of_two() && n % s == 0, "{p:?}");
    let len = n / s;
    let hint = hints(variant, p);
    system.run_until_idle();
    let before = system.stats();
    let unexpected = Arc::new(AtomicU64::new(0));
    let collector = system.spawn(Collector {
        sorted: None,
        done: None,
    });
    // The mergers top down, so that each parent exists before its children.
    let mut mergers: Vec<Option<ActorRef<Part>>> = vec![None; s];
    for v in 1..s {
        let parent = match v {
            1 => Parent::Collector(collector.clone()),
            _ => Parent::Merger(mergers[v / 2].clone().expect("spawned")),
        };
        let merger = Merger {
            parent,
            side: v % 2,
            parts: [None, None],
            merged: false,
            unexpected: Arc::clone(&unexpected),
            concatenate: v == 1 && run.injects(Fault::WrongRule),
        };
        mergers[v] = Some(system.spawn_with(merger, at(hint[v], p.places)));
    }
    let sorters: Vec<ActorRef<()>> = (0..s)
        .map(|i| {
            let v = s + i;
            let sorter = Sorter {
                index: i,
                len,
                parent: Parent::Merger(mergers[v / 2].clone().expect("spawned")),
                // Fault::Misroute: sorter 0 hands its run in as the right child.
                side: if i == 0 && run.injects(Fault::Misroute) {
                    1
                } else {
                    v % 2
                },
                twice: i == 0 && run.injects(Fault::Duplicate),
            };
            system.spawn_with(sorter, at(hint[v], p.places))
        })
        .collect();
    // From here on only the children hold the mergers.
    drop(mergers);
    system.run_until_idle();
    let start = Instant::now();
    let pending = collector.ask(CollectMsg::Arm).expect("fresh actor");
    drop(collector);
    // The starts go out interleaved over the places' shares of the sorters (0, S/P, 2·S/P, …,
    // then 1, S/P + 1, …), so that every place has work from the first message on.
    let stride = s.div_ceil(p.places);
    for i in (0..stride).flat_map(|r| (0..p.places).map(move |q| q * stride + r)) {
        // Fault::Drop: sorter 0 is never started.
        if i >= s || (i == 0 && run.injects(Fault::Drop)) {
            continue;
        }
        sorters[i].send(()).expect("fresh actor");
    }
    let result = await_result(system, pending, run, &variant.bench("mergesort"));
    let elapsed = start.elapsed();
    let (sorted, messages) = match result {
        Ok(r) => r,
        Err(e) => {
            sorters.iter().for_each(|s| {
                s.stop();
            });
            return Measured::failed(0, elapsed, e);
        }
    };
    drop(sorters);
    system.run_until_idle();
    let mut fingerprint = Fingerprint::default();
    fingerprint.add(&sorted);
    let unexpected = unexpected.load(Relaxed);
    let outcome = Outcome {
        fingerprint,
        inversions: sorted.windows(2).filter(|w| w[0] > w[1]).count(),
        unexpected,
        alive: system
            .stats()
            .actors_live()
            .saturating_sub(before.actors_live()),
    };
    // The input, generated again by the driver.
    let mut input = Fingerprint::default();
    (0..s).for_each(|i| input.add(&chunk(i, len)));
    let want = Outcome {
        fingerprint: input,
        inversions: 0,
        unexpected: 0,
        alive: 0,
    };
    Measured::checked(messages + unexpected, elapsed, outcome, want)
        .with_message_count(3 * s as u64 - 1, "3·S − 1 = ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(places: usize) -> Params {
        Params {
            n: 64,
            sorters: 8,
            places,
        }
    }

    #[test]
    fn best_and_worst_hints_follow_the_slides() {
        let best = hints(Variant::Best, params(2));
        // Sorters 8..16: the first half on place 0, the second on place 1.
        assert_eq!(&best[8..], &[0, 0, 0, 0, 1, 1, 1, 1].map(Some));
        // Mergers on their left child's place: 1 (root), 2, 3, 4..8.
        assert_eq!(&best[1..8], &[0, 0, 1, 0, 0, 1, 1].map(Some));
        let worst = hints(Variant::Worst, params(2));
        assert_eq!(&worst[8..], &best[8..]);
        for v in 1..8 {
            assert_eq!(worst[v], worst[2 * v].map(|l| (l + 1) % 2), "merger {v}");
        }
        assert!(hints(Variant::Ignorant, params(2))
            .iter()
            .all(Option::is_none));
        let random = hints(Variant::Random, params(2));
        assert!(random[1..].iter().all(|h| matches!(h, Some(0 | 1))));
        assert_eq!(random, hints(Variant::Random, params(2)));
        // One place: every hint is place 0.
        assert!(hints(Variant::Worst, params(1))[1..]
            .iter()
            .all(|&h| h == Some(0)));
    }

    #[test]
    fn merge_merges_and_fingerprints_ignore_order() {
        assert_eq!(merge(&[1, 4, 9], &[2, 3, 10, 11]), [1, 2, 3, 4, 9, 10, 11]);
        let (mut a, mut b) = (Fingerprint::default(), Fingerprint::default());
        a.add(&[3, 1, 2]);
        b.add(&[1, 2, 3]);
        assert_eq!(a, b);
        b.add(&[3]);
        assert_ne!(a, b);
    }

    #[test]
    fn small_runs_verify_and_faults_fail() {
        let p = params(1);
        for variant in [Variant::Best, Variant::Worst, Variant::Random] {
            let system = loka::System::builder().workers(2).build().unwrap();
            let m = measure(&system, &Run::new(Size::Quick), variant, p);
            assert!(m.verified, "{variant:?}: {}", m.check);
            assert_eq!(m.messages, 23);
        }
        for &fault in BENCHES[0].faults {
            let system = loka::System::builder().workers(2).build().unwrap();
            let run = Run::new(Size::Quick).with_fault(fault);
            let m = measure(&system, &run, Variant::Best, p);
            assert!(!m.verified, "{fault:?}: {}", m.check);
        }
    }
}
