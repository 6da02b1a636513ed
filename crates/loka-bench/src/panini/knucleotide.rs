//! knucleotide-like (Benchmarks Game, as Panini ran it: §5.3, Figure 10): a SequenceGen reads a
//! DNA sequence chunk by chunk with a blocking read, and hands each chunk to the Nucleotide actors,
//! which count the k-mers of the Benchmarks Game's seven lengths (1, 2, 3, 4, 6, 12, 18); at the
//! end every Nucleotide sends its table to one Collector, which merges them.
//!
//! The sequence is generated, not read from a file: bases drawn with weights A 3, C 2, G 2, T 3
//! from a fixed seed. The read of each chunk is modelled by a real blocking call, a
//! `std::thread::sleep` of `read_delay`, so the SequenceGen really blocks its thread.
//!
//! Declared characteristics: SequenceGen *blocking* (`Characteristics::blocking()`: it does block
//! on its read, as §5.3 says of the original; the paper's table prints ⟨false, _, low, low, high⟩,
//! the Slave vector, which maps to `Task`, yet assigns `Thread` — declared blocking, the Blocking
//! heuristic gives the paper's `Thread`). Nucleotide ⟨false, _, low, low, high⟩ (Slave → `Task`),
//! Collector ⟨false, _, low, low, low⟩ (Affinity → `Monitor`).
//!
//! Nucleotide i counts k = K[i mod 7]; the chunks of that k go round robin to the actors of that
//! k, so each chunk goes to seven actors. A chunk travels with the (up to 17) bases before it, and
//! an actor counts the k-mers that *end* in the chunk, so every k-mer is counted exactly once.
//!
//! Check: per k, the merged table's number of k-mers, distinct k-mers, an order-independent
//! fingerprint of its (k-mer, count) pairs and the count of the Benchmarks Game's probe for that
//! length (the first k bases of GGTATTTTAATTTATAGT) equal a sequential count over the same
//! sequence (the check names the lengths whose summary differs). Messages: C reads (the driver's first, then one the SequenceGen sends itself per
//! chunk), 7·C chunks, N `done`s and N tables: 8·C + 2·N.

use super::{alive_since, noting, Tally, LEAF};
use crate::rng::XorShift;
use crate::verify::mix;
use crate::{await_result, Bench, Fault, Measured, Run, Size};
use loka::exec_policy::{Characteristics, Comm, Cpu, Par};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(super) const BENCH: Bench = Bench {
    name: "panini-knucleotide",
    suite: "panini",
    about: "a blocking SequenceGen feeds DNA chunks to N Nucleotide k-mer counters; a Collector merges (8·C + 2·N messages)",
    run,
    faults: &[
        Fault::Drop,
        Fault::Duplicate,
        Fault::Misroute,
        Fault::WrongRule,
    ],
};

/// The k-mer lengths the Benchmarks Game counts.
const KS: [usize; 7] = [1, 2, 3, 4, 6, 12, 18];

/// The Benchmarks Game's probes are this string's prefixes.
const PROBE: &[u8; 18] = b"GGTATTTTAATTTATAGT";

/// Bases, chunk size, read delay per chunk, Nucleotide actors N (at least 7).
#[derive(Debug, Clone, Copy)]
struct Params {
    bases: usize,
    chunk: usize,
    read_delay: Duration,
    nucleotides: usize,
}

/// `full`: the paper's 46 Nucleotide actors (§5.3); the sequence length and the reads are ours.
fn of(size: Size) -> Params {
    size.pick(
        Params {
            bases: 500_000,
            chunk: 4_000,
            read_delay: Duration::from_micros(200),
            nucleotides: 14,
        },
        Params {
            bases: 5_000_000,
            chunk: 65_536,
            read_delay: Duration::from_millis(1),
            nucleotides: 46,
        },
    )
}

impl Params {
    fn chunks(&self) -> usize {
        self.bases.div_ceil(self.chunk)
    }
}

/// The sequence's generator: one base per draw, weights A 3, C 2, G 2, T 3.
struct Bases(XorShift);

impl Bases {
    fn new() -> Bases {
        Bases(XorShift::new(0xd7a))
    }

    fn take(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| b"AAACCGGTTT"[self.0.below(10)]).collect()
    }
}

/// A base's two bits; [`Fault::WrongRule`] reads T as G.
#[inline]
fn code(base: u8, wrong: bool) -> u64 {
    match base {
        b'A' => 0,
        b'C' => 1,
        b'G' => 2,
        _ if wrong => 2,
        _ => 3,
    }
}

/// A multiplicative hasher for the packed k-mers (std's SipHash is needlessly slow for them).
#[derive(Default)]
struct KmerHasher(u64);

impl Hasher for KmerHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (v ^ (v >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// k-mer (two bits per base) → count.
type Counts = HashMap<u64, u32, BuildHasherDefault<KmerHasher>>;

/// Adds the k-mers that end at `data[start..]` to `counts`.
fn count_into(counts: &mut Counts, data: &[u8], start: usize, k: usize, wrong: bool) {
    let mask = if k == 32 {
        u64::MAX
    } else {
        (1u64 << (2 * k)) - 1
    };
    let lo = start.saturating_sub(k - 1);
    let mut key = 0u64;
    for (i, &base) in data.iter().enumerate().skip(lo) {
        key = ((key << 2) | code(base, wrong)) & mask;
        if i >= start && i + 1 - lo >= k {
            *counts.entry(key).or_insert(0) += 1;
        }
    }
}

/// The packed form of `bases`.
fn pack(bases: &[u8]) -> u64 {
    bases.iter().fold(0, |key, &b| (key << 2) | code(b, false))
}

/// What the check compares for one k.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Summary {
    k: usize,
    kmers: u64,
    distinct: usize,
    /// The wrapping sum of `mix(mix(k-mer) ^ count)` over the table.
    fingerprint: u64,
    /// The count of the first k bases of [`PROBE`].
    probe: u32,
}

impl Summary {
    fn of(k: usize, counts: &Counts) -> Summary {
        Summary {
            k,
            kmers: counts.values().map(|&c| u64::from(c)).sum(),
            distinct: counts.len(),
            fingerprint: counts.iter().fold(0u64, |sum, (&key, &count)| {
                sum.wrapping_add(mix(mix(key) ^ u64::from(count)))
            }),
            probe: counts.get(&pack(&PROBE[..k])).copied().unwrap_or(0),
        }
    }
}

/// A message to a Nucleotide.
enum NucleotideMsg {
    /// A chunk, after the bases before it: count the k-mers ending at `data[start..]`.
    Chunk { data: Arc<[u8]>, start: usize },
    /// The sequence is over: send the table to the Collector, stop.
    Done,
}

/// A Nucleotide: counts the k-mers of one length in the chunks it gets.
struct Nucleotide {
    /// Index into [`KS`].
    kind: usize,
    counts: Counts,
    collector: ActorRef<CollectorMsg>,
    handled: u64,
    tally: Tally,
    /// [`Fault::WrongRule`] (Nucleotide 0 only).
    wrong: bool,
}

impl Actor for Nucleotide {
    type Msg = NucleotideMsg;

    fn handle(&mut self, ctx: &mut Context<Self>, msg: NucleotideMsg) {
        self.handled += 1;
        match msg {
            NucleotideMsg::Chunk { data, start } => {
                count_into(&mut self.counts, &data, start, KS[self.kind], self.wrong)
            }
            NucleotideMsg::Done => {
                let counts = std::mem::take(&mut self.counts);
                self.collector
                    .send(CollectorMsg::Table {
                        kind: self.kind,
                        counts,
                    })
                    .expect("collector alive");
                ctx.stop();
            }
        }
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.tally.fetch_add(self.handled, Ordering::Relaxed);
    }

    /// ⟨false, _, low, low, high⟩ (Figure 10): Slave → `Task`.
    fn characteristics() -> Option<Characteristics> {
        Some(Characteristics::new(Par::Low, Comm::Low, Cpu::High))
    }
}

/// A message to the Collector.
enum CollectorMsg {
    /// From the driver: answer once every table has arrived.
    Arm(ReplyTo<Vec<Summary>>),
    /// A Nucleotide's table.
    Table { kind: usize, counts: Counts },
}

/// The Collector: merges the tables per k; with all N in, answers the summaries and stops.
struct Collector {
    expected: usize,
    tables: usize,
    merged: Vec<Counts>,
    done: Option<ReplyTo<Vec<Summary>>>,
    handled: u64,
    tally: Tally,
}

impl Actor for Collector {
    type Msg = CollectorMsg;

    fn handle(&mut self, ctx: &mut Context<Self>, msg: CollectorMsg) {
        match msg {
            CollectorMsg::Arm(done) => self.done = Some(done),
            CollectorMsg::Table { kind, counts } => {
                self.handled += 1;
                self.tables += 1;
                let merged = &mut self.merged[kind];
                if merged.is_empty() {
                    *merged = counts;
                } else {
                    for (key, count) in counts {
                        *merged.entry(key).or_insert(0) += count;
                    }
                }
            }
        }
        if self.tables == self.expected {
            if let Some(done) = self.done.take() {
                let summaries = KS
                    .iter()
                    .zip(&self.merged)
                    .map(|(&k, counts)| Summary::of(k, counts))
                    .collect();
                done.send(summaries);
                ctx.stop();
            }
        }
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.tally.fetch_add(self.handled, Ordering::Relaxed);
    }

    /// ⟨false, _, low, low, low⟩ (Figure 10): Affinity → `Monitor`.
    fn characteristics() -> Option<Characteristics> {
        Some(LEAF)
    }
}

/// The SequenceGen: each `Read` blocks for `read_delay` (the read), takes the next chunk and sends
/// it, with the bases before it, to one Nucleotide of each k; then it reads the next chunk (a
/// message to itself), and after the last it sends every Nucleotide its `done` and stops.
struct SequenceGen {
    params: Params,
    source: Bases,
    /// Bases read so far.
    read: usize,
    /// The chunk to read next.
    chunk: usize,
    /// The last (up to 17) bases read.
    tail: Vec<u8>,
    nucleotides: Vec<ActorRef<NucleotideMsg>>,
    /// Per k, the Nucleotides counting it.
    groups: Vec<Vec<usize>>,
    handled: u64,
    tally: Tally,
    /// The injected fault, on chunk 0's copy for k = 1: [`Fault::Drop`]: not sent;
    /// [`Fault::Duplicate`]: sent twice; [`Fault::Misroute`]: sent to a Nucleotide of k = 2.
    fault: Fault,
}

/// Read the next chunk.
struct Read;

impl Actor for SequenceGen {
    type Msg = Read;

    fn handle(&mut self, ctx: &mut Context<Self>, _read: Read) {
        self.handled += 1;
        let p = self.params;
        // The blocking read.
        std::thread::sleep(p.read_delay);
        let len = p.chunk.min(p.bases - self.read);
        let fresh = self.source.take(len);
        let start = self.tail.len();
        let mut data = std::mem::take(&mut self.tail);
        data.extend_from_slice(&fresh);
        let data: Arc<[u8]> = data.into();
        let c = self.chunk;
        for (kind, group) in self.groups.iter().enumerate() {
            let mut to = group[c % group.len()];
            let mut copies = 1;
            if c == 0 && kind == 0 {
                match self.fault {
                    Fault::Drop => copies = 0,
                    Fault::Duplicate => copies = 2,
                    Fault::Misroute => to = self.groups[1][0],
                    _ => {}
                }
            }
            for _ in 0..copies {
                self.nucleotides[to]
                    .send(NucleotideMsg::Chunk {
                        data: Arc::clone(&data),
                        start,
                    })
                    .expect("nucleotide alive");
            }
        }
        self.tail = data[data.len().saturating_sub(KS[KS.len() - 1] - 1)..].to_vec();
        self.read += len;
        self.chunk += 1;
        if self.read < p.bases {
            ctx.myself().send(Read).expect("running");
        } else {
            for nucleotide in &self.nucleotides {
                nucleotide
                    .send(NucleotideMsg::Done)
                    .expect("nucleotide alive");
            }
            ctx.stop();
        }
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.tally.fetch_add(self.handled, Ordering::Relaxed);
    }

    /// Blocking (its read; §5.3): Blocking → `Thread`, the paper's policy (its table's
    /// ⟨false, _, low, low, high⟩ would map to `Task`).
    fn characteristics() -> Option<Characteristics> {
        Some(Characteristics::blocking())
    }
}

/// The summaries of a correct run, counted sequentially over the whole sequence.
fn expected(p: Params) -> Vec<Summary> {
    let sequence = Bases::new().take(p.bases);
    KS.iter()
        .map(|&k| {
            let mut counts = Counts::default();
            count_into(&mut counts, &sequence, 0, k, false);
            Summary::of(k, &counts)
        })
        .collect()
}

fn run(system: &System, run: &Run) -> Measured {
    let p = of(run.size);
    noting(measure(system, run, p), p)
}

fn measure(system: &System, run: &Run, p: Params) -> Measured {
    assert!(p.nucleotides >= KS.len(), "one Nucleotide per k at least");
    system.run_until_idle();
    let before = system.stats();
    let tally = Tally::default();
    let collector = system.spawn(Collector {
        expected: p.nucleotides,
        tables: 0,
        merged: vec![Counts::default(); KS.len()],
        done: None,
        handled: 0,
        tally: Arc::clone(&tally),
    });
    let nucleotides: Vec<ActorRef<NucleotideMsg>> = (0..p.nucleotides)
        .map(|i| {
            system.spawn(Nucleotide {
                kind: i % KS.len(),
                counts: Counts::default(),
                collector: collector.clone(),
                handled: 0,
                tally: Arc::clone(&tally),
                wrong: i == 0 && run.injects(Fault::WrongRule),
            })
        })
        .collect();
    let groups = (0..KS.len())
        .map(|kind| (kind..p.nucleotides).step_by(KS.len()).collect())
        .collect();
    let gen = system.spawn(SequenceGen {
        params: p,
        source: Bases::new(),
        read: 0,
        chunk: 0,
        tail: Vec::new(),
        nucleotides,
        groups,
        handled: 0,
        tally: Arc::clone(&tally),
        fault: run.fault,
    });
    system.run_until_idle();
    let start = Instant::now();
    let pending = collector.ask(CollectorMsg::Arm).expect("fresh actor");
    drop(collector);
    gen.send(Read).expect("fresh actor");
    drop(gen);
    let summaries = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    system.run_until_idle();
    let counted = tally.load(Ordering::Relaxed);
    let summaries = match summaries {
        Ok(summaries) => summaries,
        Err(reason) => return Measured::failed(counted, elapsed, reason),
    };
    let chunks = p.chunks() as u64;
    // The lengths whose summary differs from the sequential one.
    let ks_off: Vec<usize> = summaries
        .iter()
        .zip(expected(p))
        .filter(|(got, want)| **got != *want)
        .map(|(got, _)| got.k)
        .collect();
    Measured::checked(
        counted,
        elapsed,
        (summaries.len(), ks_off, alive_since(system, &before)),
        (KS.len(), Vec::new(), 0),
    )
    .with_message_count(8 * chunks + 2 * p.nucleotides as u64, "8·C + 2·N = ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_counts_equal_whole_counts() {
        let sequence = Bases::new().take(1_000);
        for &k in &KS {
            let mut whole = Counts::default();
            count_into(&mut whole, &sequence, 0, k, false);
            assert_eq!(whole.values().sum::<u32>() as usize, 1_000 - k + 1);
            let mut pieces = Counts::default();
            let mut at: usize = 0;
            for len in [5, 1, 300, 17, 677] {
                let before = at.saturating_sub(17);
                count_into(
                    &mut pieces,
                    &sequence[before..at + len],
                    at - before,
                    k,
                    false,
                );
                at += len;
            }
            assert_eq!(whole, pieces, "k = {k}");
        }
    }

    #[test]
    fn small_runs_verify_and_faults_fail() {
        let p = Params {
            bases: 3_000,
            chunk: 700,
            read_delay: Duration::from_micros(50),
            nucleotides: 9,
        };
        let m = measure(
            &loka::System::builder().workers(2).build().unwrap(),
            &Run::new(Size::Quick),
            p,
        );
        assert!(m.verified, "{}", m.check);
        assert_eq!(m.messages, 8 * 5 + 2 * 9);
        for &fault in BENCH.faults {
            let system = loka::System::builder().workers(2).build().unwrap();
            let m = measure(&system, &Run::new(Size::Quick).with_fault(fault), p);
            assert!(!m.verified, "{fault:?}: {}", m.check);
        }
    }
}
