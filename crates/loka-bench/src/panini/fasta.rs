//! fasta-like (Benchmarks Game, as Panini ran it: §5.3, Figure 10): three generators write three
//! DNA sequences, in lines of 60 bases, to one Writer. RepeatFasta repeats a fixed 287-base string
//! for 2n bases; two RandomFasta draw 3n and 5n bases from a linear congruential generator, each
//! through its own FloatProbFreq, which turns a line of random numbers into bases by its
//! cumulative probability table and hands the line back — a request and its answer per line, one
//! line in flight, so each RandomFasta talks heavily to its FloatProbFreq. The Writer checksums
//! the lines instead of printing them.
//!
//! Declared characteristics, as the paper's table: RandomFasta and RepeatFasta
//! ⟨false, _, low, high, high⟩ (Hub → `Task`), FloatProbFreq and Writer ⟨false, _, low, low, low⟩
//! (Affinity → `Monitor`: under `auto` each RandomFasta's thread does its FloatProbFreq's lookups
//! and the Writer's hashing inline).
//!
//! Check: per sequence the Writer counts the lines, the lines that were not the next one, and
//! hashes the lines in arrival order; all three must equal the same sequences generated
//! sequentially. Messages: per random line a request, its answer and the line to the Writer, per
//! repeat line the line: 3·(L₃ₙ + L₅ₙ) + L₂ₙ with L_m = ⌈m/60⌉.

use super::{alive_since, noting, Tally, LEAF};
use crate::rng::XorShift;
use crate::verify::SequenceHash;
use crate::{await_result, Bench, Fault, Measured, Run, Size};
use loka::exec_policy::{Characteristics, Comm, Cpu, Par};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "panini-fasta",
    suite: "panini",
    about: "RepeatFasta and two RandomFasta (each asking its FloatProbFreq) write 10·n bases to a Writer (3·(L₃ₙ + L₅ₙ) + L₂ₙ messages)",
    run,
    faults: &[Fault::Drop, Fault::Duplicate, Fault::WrongRule],
};

/// Bases per line.
const LINE: usize = 60;

/// The length of the repeated string (the Benchmarks Game's Alu sequence has this length).
const REPEAT_LEN: usize = 287;

/// The size n: 2n repeated bases, 3n and 5n random ones.
#[derive(Debug, Clone, Copy)]
struct Params {
    n: usize,
}

/// The paper gives no size; `full` is one of the Benchmarks Game's inputs for fasta.
fn of(size: Size) -> Params {
    Params {
        n: size.pick(1_000_000, 2_500_000),
    }
}

/// The three sequences, as the Writer tags them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Repeat = 0,
    /// The 15-symbol alphabet, 3n bases.
    Iub = 1,
    /// The 4-symbol alphabet, 5n bases.
    Homo = 2,
}

impl Stream {
    const ALL: [Stream; 3] = [Stream::Repeat, Stream::Iub, Stream::Homo];

    /// Its length in bases.
    fn bases(self, n: usize) -> usize {
        match self {
            Stream::Repeat => 2 * n,
            Stream::Iub => 3 * n,
            Stream::Homo => 5 * n,
        }
    }

    /// Its lines.
    fn lines(self, n: usize) -> usize {
        self.bases(n).div_ceil(LINE)
    }

    /// The random stream's seed and symbol table (`None` for the repeat).
    fn random(self) -> Option<(u32, &'static [(u8, u32)])> {
        match self {
            Stream::Repeat => None,
            Stream::Iub => Some((42, IUB)),
            Stream::Homo => Some((4_242, HOMO)),
        }
    }
}

/// The 15-symbol table: symbol and weight (ours; the four bases dominate).
const IUB: &[(u8, u32)] = &[
    (b'a', 27),
    (b'c', 12),
    (b'g', 12),
    (b't', 27),
    (b'B', 2),
    (b'D', 2),
    (b'H', 2),
    (b'K', 2),
    (b'M', 2),
    (b'N', 2),
    (b'R', 2),
    (b'S', 2),
    (b'V', 2),
    (b'W', 2),
    (b'Y', 2),
];

/// The 4-symbol table (ours).
const HOMO: &[(u8, u32)] = &[(b'a', 30), (b'c', 20), (b'g', 20), (b't', 30)];

/// The repeated string: 287 bases drawn from a fixed seed (the Benchmarks Game repeats the Alu
/// sequence).
fn repeat_string() -> Vec<u8> {
    let mut rng = XorShift::new(0xa1);
    (0..REPEAT_LEN).map(|_| b"ACGT"[rng.below(4)]).collect()
}

/// The Benchmarks Game's generator: seed ← (seed·3877 + 29573) mod 139968, as a fraction of
/// 139968.
#[derive(Debug, Clone)]
struct Lcg(u32);

impl Lcg {
    const IM: u32 = 139_968;

    fn next(&mut self) -> f64 {
        self.0 = (self.0 * 3_877 + 29_573) % Self::IM;
        f64::from(self.0) / f64::from(Self::IM)
    }

    /// The random numbers of line `line` of a stream of `bases` bases (the line's length).
    fn line(&mut self, bases: usize, line: usize) -> Box<[f64]> {
        let len = LINE.min(bases - line * LINE);
        (0..len).map(|_| self.next()).collect()
    }
}

/// A cumulative probability table: the first symbol whose cumulative probability exceeds r.
struct ProbTable {
    symbols: Vec<u8>,
    cumulative: Vec<f64>,
}

impl ProbTable {
    fn new(table: &[(u8, u32)]) -> ProbTable {
        let total: u32 = table.iter().map(|&(_, w)| w).sum();
        let mut acc = 0;
        let cumulative = table
            .iter()
            .map(|&(_, w)| {
                acc += w;
                f64::from(acc) / f64::from(total)
            })
            .collect();
        ProbTable {
            symbols: table.iter().map(|&(s, _)| s).collect(),
            cumulative,
        }
    }

    /// The symbol index for r ∈ [0, 1).
    fn pick(&self, r: f64) -> usize {
        self.cumulative
            .iter()
            .position(|&c| r < c)
            .unwrap_or(self.symbols.len() - 1)
    }
}

/// The hash of a line: 64-bit FNV-1a.
fn line_hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// What the Writer saw of one sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    /// Lines that were not the next one of their sequence.
    out_of_order: u64,
    /// The line hashes, in arrival order.
    lines: SequenceHash,
}

/// A message to the Writer.
enum WriterMsg {
    /// From the driver: answer once every sequence is complete.
    Arm(ReplyTo<[Seen; 3]>),
    /// Line `line` of sequence `stream`.
    Line {
        stream: Stream,
        line: u32,
        bases: Box<[u8]>,
    },
}

/// The Writer: checksums the lines of the three sequences; answers once all are complete.
struct Writer {
    seen: [Seen; 3],
    expected: [u64; 3],
    done: Option<ReplyTo<[Seen; 3]>>,
    handled: u64,
    tally: Tally,
}

impl Actor for Writer {
    type Msg = WriterMsg;

    fn handle(&mut self, _ctx: &mut Context<Self>, msg: WriterMsg) {
        match msg {
            WriterMsg::Arm(done) => self.done = Some(done),
            WriterMsg::Line {
                stream,
                line,
                bases,
            } => {
                self.handled += 1;
                let seen = &mut self.seen[stream as usize];
                seen.out_of_order += u64::from(u64::from(line) != seen.lines.count);
                seen.lines.push(line_hash(&bases));
            }
        }
        let complete = (0..3).all(|s| self.seen[s].lines.count >= self.expected[s]);
        if complete {
            if let Some(done) = self.done.take() {
                done.send(self.seen);
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

/// A request to a FloatProbFreq: turn `randoms` into bases, answer `reply`.
struct Lookup {
    line: u32,
    randoms: Box<[f64]>,
    reply: ActorRef<RandomMsg>,
}

/// A FloatProbFreq: maps random numbers to bases by its table and answers the line.
struct FloatProbFreq {
    table: ProbTable,
    handled: u64,
    tally: Tally,
    /// [`Fault::WrongRule`]: line 0 takes the symbol after the chosen one.
    wrong: bool,
}

impl Actor for FloatProbFreq {
    type Msg = Lookup;

    fn handle(&mut self, _ctx: &mut Context<Self>, msg: Lookup) {
        self.handled += 1;
        let shift = usize::from(self.wrong && msg.line == 0);
        let n = self.table.symbols.len();
        let bases = msg
            .randoms
            .iter()
            .map(|&r| self.table.symbols[(self.table.pick(r) + shift) % n])
            .collect();
        msg.reply
            .send(RandomMsg::Bases {
                line: msg.line,
                bases,
            })
            .expect("RandomFasta waits for its answer");
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.tally.fetch_add(self.handled, Ordering::Relaxed);
    }

    /// ⟨false, _, low, low, low⟩ (Figure 10): Affinity → `Monitor`.
    fn characteristics() -> Option<Characteristics> {
        Some(LEAF)
    }
}

/// A message to a RandomFasta.
enum RandomMsg {
    /// From the driver: start.
    Go,
    /// From its FloatProbFreq: line `line`.
    Bases { line: u32, bases: Box<[u8]> },
}

/// A RandomFasta: draws a line of random numbers, has its FloatProbFreq turn them into bases,
/// passes the line to the Writer, and draws the next, until its sequence is complete.
struct RandomFasta {
    stream: Stream,
    bases: usize,
    lines: usize,
    lcg: Lcg,
    fpf: ActorRef<Lookup>,
    writer: ActorRef<WriterMsg>,
    handled: u64,
    tally: Tally,
    /// [`Fault::Drop`]: line 0 is not passed to the Writer.
    drop_first: bool,
}

impl RandomFasta {
    /// Asks the FloatProbFreq for line `line`.
    fn ask(&mut self, ctx: &Context<Self>, line: usize) {
        let randoms = self.lcg.line(self.bases, line);
        self.fpf
            .send(Lookup {
                line: line as u32,
                randoms,
                reply: ctx.myself(),
            })
            .expect("FloatProbFreq alive");
    }
}

impl Actor for RandomFasta {
    type Msg = RandomMsg;

    fn handle(&mut self, ctx: &mut Context<Self>, msg: RandomMsg) {
        match msg {
            RandomMsg::Go => self.ask(ctx, 0),
            RandomMsg::Bases { line, bases } => {
                self.handled += 1;
                if !(self.drop_first && line == 0) {
                    self.writer
                        .send(WriterMsg::Line {
                            stream: self.stream,
                            line,
                            bases,
                        })
                        .expect("writer alive");
                }
                let next = line as usize + 1;
                if next < self.lines {
                    self.ask(ctx, next);
                } else {
                    ctx.stop();
                }
            }
        }
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.tally.fetch_add(self.handled, Ordering::Relaxed);
    }

    /// ⟨false, _, low, high, high⟩ (Figure 10): Hub → `Task`.
    fn characteristics() -> Option<Characteristics> {
        Some(Characteristics::new(Par::Low, Comm::High, Cpu::High))
    }
}

/// RepeatFasta: on its one `Go`, writes the repeated string's 2n bases, line by line, and stops.
struct RepeatFasta {
    bases: usize,
    writer: ActorRef<WriterMsg>,
    /// [`Fault::Duplicate`]: line 0 is written twice.
    duplicate_first: bool,
}

impl Actor for RepeatFasta {
    /// Go.
    type Msg = ();

    fn handle(&mut self, ctx: &mut Context<Self>, _go: ()) {
        for (line, bases) in repeat_lines(self.bases).enumerate() {
            let copies = if self.duplicate_first && line == 0 {
                2
            } else {
                1
            };
            for _ in 0..copies {
                self.writer
                    .send(WriterMsg::Line {
                        stream: Stream::Repeat,
                        line: line as u32,
                        bases: bases.clone(),
                    })
                    .expect("writer alive");
            }
        }
        ctx.stop();
    }

    /// ⟨false, _, low, high, high⟩ (Figure 10): Hub → `Task`.
    fn characteristics() -> Option<Characteristics> {
        Some(Characteristics::new(Par::Low, Comm::High, Cpu::High))
    }
}

/// The lines of the repeated string, cycled to `bases` bases.
fn repeat_lines(bases: usize) -> impl Iterator<Item = Box<[u8]>> {
    let alu = repeat_string();
    let mut at = 0;
    (0..bases.div_ceil(LINE)).map(move |line| {
        let len = LINE.min(bases - line * LINE);
        (0..len)
            .map(|_| {
                let b = alu[at];
                at = (at + 1) % REPEAT_LEN;
                b
            })
            .collect()
    })
}

/// The three sequences as a correct run writes them, generated sequentially.
fn expected(n: usize) -> [Seen; 3] {
    Stream::ALL.map(|stream| {
        let bases = stream.bases(n);
        let lines = match stream.random() {
            None => SequenceHash::of(repeat_lines(bases).map(|l| line_hash(&l))),
            Some((seed, table)) => {
                let table = ProbTable::new(table);
                let mut lcg = Lcg(seed);
                SequenceHash::of((0..stream.lines(n)).map(|line| {
                    let bases: Vec<u8> = lcg
                        .line(bases, line)
                        .iter()
                        .map(|&r| table.symbols[table.pick(r)])
                        .collect();
                    line_hash(&bases)
                }))
            }
        };
        Seen {
            out_of_order: 0,
            lines,
        }
    })
}

fn run(system: &System, run: &Run) -> Measured {
    let p = of(run.size);
    noting(measure(system, run, p), p)
}

fn measure(system: &System, run: &Run, p: Params) -> Measured {
    let n = p.n;
    system.run_until_idle();
    let before = system.stats();
    let tally = Tally::default();
    let writer = system.spawn(Writer {
        seen: [Seen {
            out_of_order: 0,
            lines: SequenceHash::new(),
        }; 3],
        expected: Stream::ALL.map(|s| s.lines(n) as u64),
        done: None,
        handled: 0,
        tally: Arc::clone(&tally),
    });
    let repeat = system.spawn(RepeatFasta {
        bases: Stream::Repeat.bases(n),
        writer: writer.clone(),
        duplicate_first: run.injects(Fault::Duplicate),
    });
    // Faults in the IUB sequence: line 0 not written (Drop), looked up wrongly (WrongRule).
    let randoms: Vec<ActorRef<RandomMsg>> = [Stream::Iub, Stream::Homo]
        .into_iter()
        .map(|stream| {
            let (seed, table) = stream.random().expect("a random stream");
            let faulty = stream == Stream::Iub;
            let fpf = system.spawn(FloatProbFreq {
                table: ProbTable::new(table),
                handled: 0,
                tally: Arc::clone(&tally),
                wrong: faulty && run.injects(Fault::WrongRule),
            });
            system.spawn(RandomFasta {
                stream,
                bases: stream.bases(n),
                lines: stream.lines(n),
                lcg: Lcg(seed),
                fpf,
                writer: writer.clone(),
                handled: 0,
                tally: Arc::clone(&tally),
                drop_first: faulty && run.injects(Fault::Drop),
            })
        })
        .collect();
    system.run_until_idle();
    let start = Instant::now();
    let pending = writer.ask(WriterMsg::Arm).expect("fresh actor");
    drop(writer);
    repeat.send(()).expect("fresh actor");
    for random in &randoms {
        random.send(RandomMsg::Go).expect("fresh actor");
    }
    let seen = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    drop((repeat, randoms));
    // The generators have stopped; the Writer and the FloatProbFreqs stop once unreferenced.
    system.run_until_idle();
    let counted = tally.load(Ordering::Relaxed);
    let seen = match seen {
        Ok(seen) => seen,
        Err(reason) => return Measured::failed(counted, elapsed, reason),
    };
    let random_lines = (Stream::Iub.lines(n) + Stream::Homo.lines(n)) as u64;
    Measured::checked(
        counted,
        elapsed,
        (seen, alive_since(system, &before)),
        (expected(n), 0),
    )
    .with_message_count(
        3 * random_lines + Stream::Repeat.lines(n) as u64,
        "3·(L₃ₙ + L₅ₙ) + L₂ₙ = ",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_and_generators_behave() {
        for table in [IUB, HOMO] {
            let t = ProbTable::new(table);
            assert_eq!(*t.cumulative.last().unwrap(), 1.0);
            assert_eq!(t.pick(0.0), 0);
            assert_eq!(t.pick(0.999_999), table.len() - 1);
        }
        let mut lcg = Lcg(42);
        assert!((0..1_000).all(|_| (0.0..1.0).contains(&lcg.next())));
        let lines: Vec<Box<[u8]>> = repeat_lines(130).collect();
        assert_eq!(
            lines.iter().map(|l| l.len()).collect::<Vec<_>>(),
            [60, 60, 10]
        );
        assert_eq!(lines[0][..], repeat_string()[..60]);
    }

    #[test]
    fn small_runs_verify_and_faults_fail() {
        let p = Params { n: 700 };
        let m = measure(
            &loka::System::builder().workers(2).build().unwrap(),
            &Run::new(Size::Quick),
            p,
        );
        assert!(m.verified, "{}", m.check);
        for &fault in BENCH.faults {
            let system = loka::System::builder().workers(2).build().unwrap();
            let m = measure(&system, &Run::new(Size::Quick).with_fault(fault), p);
            assert!(!m.verified, "{fault:?}: {}", m.check);
        }
    }
}
