//! histogram (Panini's examples, as the paper ran it: §5.1.6, §5.3): count how often each ASCII
//! character occurs in a text. A Reader reads the text page by page with a *blocking* read and
//! sends every character, one message each, to the Bucket of its code (128 Buckets); at the end
//! it tells every Bucket, which sends its count to the Printer.
//!
//! The text is generated, not read from a file: printable ASCII drawn from a fixed seed (letters
//! and spaces most often), plus a newline closing every line of 64 characters. The read of each
//! page is modelled by a real blocking call, a `std::thread::sleep` of `read_delay`, so the
//! Reader really blocks its thread, and the run's wall time is mostly those reads.
//!
//! Declared characteristics, as the paper's table: Reader *blocking* (Blocking → `Thread`),
//! Bucket ⟨false, _, high, low, low⟩ (LowCPU → `Monitor`: under `auto` the Reader's thread counts
//! inline), Printer ⟨false, _, low, low, low⟩ (Affinity → `Monitor`).
//!
//! Check: the 128 counts the Printer gets equal the character counts of the same text computed
//! sequentially (the check names the codes whose count is off), each Bucket reports once, and no
//! Bucket got a character other than its own.
//! Messages: P reads (the driver's first, then one the Reader sends itself per page), one per
//! character, 128 `done`s and 128 counts: P + P·B + 256.

use super::{alive_since, noting, Tally, LEAF};
use crate::rng::XorShift;
use crate::{await_result, Bench, Fault, Measured, Run, Size};
use loka::exec_policy::{Characteristics, Comm, Cpu, Par};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(super) const BENCH: Bench = Bench {
    name: "panini-histogram",
    suite: "panini",
    about: "a blocking Reader sends each character of P pages to one of 128 Buckets; a Printer collects (P·(B + 1) + 256 messages)",
    run,
    faults: &[
        Fault::Drop,
        Fault::Duplicate,
        Fault::Misroute,
        Fault::WrongRule,
    ],
};

/// One Bucket per ASCII code.
const BUCKETS: usize = 128;

/// Characters per line (the 64th is a newline).
const LINE: usize = 64;

/// Pages P, characters per page B, read delay per page.
#[derive(Debug, Clone, Copy)]
struct Params {
    pages: usize,
    page: usize,
    read_delay: Duration,
}

/// The paper gives no size: both are ours.
fn of(size: Size) -> Params {
    size.pick(
        Params {
            pages: 120,
            page: 1_000,
            read_delay: Duration::from_micros(500),
        },
        Params {
            pages: 1_000,
            page: 4_096,
            read_delay: Duration::from_millis(1),
        },
    )
}

/// The text's generator, one page at a time.
struct Text {
    rng: XorShift,
    /// Characters produced so far.
    at: usize,
}

impl Text {
    fn new() -> Text {
        Text {
            rng: XorShift::new(0x4157),
            at: 0,
        }
    }

    /// The next character: a newline ending each line, else a space (1 in 6), a lowercase letter
    /// (3 in 6) or any printable ASCII character (2 in 6).
    fn next_char(&mut self) -> u8 {
        self.at += 1;
        if self.at % LINE == 0 {
            return b'\n';
        }
        match self.rng.below(6) {
            0 => b' ',
            1..=3 => b'a' + self.rng.below(26) as u8,
            _ => b' ' + self.rng.below(95) as u8,
        }
    }

    fn page(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next_char()).collect()
    }
}

/// A message to a Bucket.
enum BucketMsg {
    /// One character.
    Char(u8),
    /// The text is over: report the count, stop.
    Done,
}

/// A Bucket: counts the characters of its code.
struct Bucket {
    code: u8,
    count: u64,
    /// Characters of another code.
    foreign: u64,
    printer: ActorRef<PrinterMsg>,
    handled: u64,
    tally: Tally,
    /// [`Fault::WrongRule`] (the Bucket of 'e' only): its count starts at 1.
    wrong: bool,
}

impl Actor for Bucket {
    type Msg = BucketMsg;

    fn handle(&mut self, ctx: &mut Context<Self>, msg: BucketMsg) {
        self.handled += 1;
        match msg {
            BucketMsg::Char(c) => {
                self.count += 1;
                self.foreign += u64::from(c != self.code);
            }
            BucketMsg::Done => {
                let count = self.count + u64::from(self.wrong);
                self.printer
                    .send(PrinterMsg::Count {
                        code: self.code,
                        count,
                        foreign: self.foreign,
                    })
                    .expect("printer alive");
                ctx.stop();
            }
        }
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.tally.fetch_add(self.handled, Ordering::Relaxed);
    }

    /// ⟨false, _, high, low, low⟩ (§5.1.6): LowCPU → `Monitor`.
    fn characteristics() -> Option<Characteristics> {
        Some(Characteristics::new(Par::High, Comm::Low, Cpu::Low))
    }
}

/// What the Printer collected.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Histogram {
    counts: Vec<u64>,
    /// Buckets that reported more than once.
    repeated: usize,
    /// Characters counted by a Bucket of another code.
    foreign: u64,
}

/// A message to the Printer.
enum PrinterMsg {
    /// From the driver: answer once all 128 Buckets have reported.
    Arm(ReplyTo<Histogram>),
    Count {
        code: u8,
        count: u64,
        foreign: u64,
    },
}

/// The Printer: collects the 128 counts (instead of printing them).
struct Printer {
    histogram: Histogram,
    reported: Vec<bool>,
    left: usize,
    done: Option<ReplyTo<Histogram>>,
    handled: u64,
    tally: Tally,
}

impl Actor for Printer {
    type Msg = PrinterMsg;

    fn handle(&mut self, ctx: &mut Context<Self>, msg: PrinterMsg) {
        match msg {
            PrinterMsg::Arm(done) => self.done = Some(done),
            PrinterMsg::Count {
                code,
                count,
                foreign,
            } => {
                self.handled += 1;
                let code = usize::from(code);
                if std::mem::replace(&mut self.reported[code], true) {
                    self.histogram.repeated += 1;
                } else {
                    self.left -= 1;
                }
                self.histogram.counts[code] += count;
                self.histogram.foreign += foreign;
            }
        }
        if self.left == 0 {
            if let Some(done) = self.done.take() {
                done.send(self.histogram.clone());
                ctx.stop();
            }
        }
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.tally.fetch_add(self.handled, Ordering::Relaxed);
    }

    /// ⟨false, _, low, low, low⟩ (§5.1.6): Affinity → `Monitor`.
    fn characteristics() -> Option<Characteristics> {
        Some(LEAF)
    }
}

/// Read the next page.
struct Read;

/// The Reader: each `Read` blocks for `read_delay` (the read), takes the next page and sends each
/// character to its Bucket; then it reads the next page (a message to itself), and after the last
/// it sends every Bucket its `done` and stops.
struct Reader {
    params: Params,
    text: Text,
    pages_read: usize,
    buckets: Vec<ActorRef<BucketMsg>>,
    handled: u64,
    tally: Tally,
    /// The injected fault, on the first character of the text: [`Fault::Drop`]: not sent;
    /// [`Fault::Duplicate`]: sent twice; [`Fault::Misroute`]: sent to the next code's Bucket.
    fault: Fault,
}

impl Actor for Reader {
    type Msg = Read;

    fn handle(&mut self, ctx: &mut Context<Self>, _read: Read) {
        self.handled += 1;
        let p = self.params;
        // The blocking read.
        std::thread::sleep(p.read_delay);
        let page = self.text.page(p.page);
        for (i, &c) in page.iter().enumerate() {
            let mut to = usize::from(c);
            let mut copies = 1;
            if self.pages_read == 0 && i == 0 {
                match self.fault {
                    Fault::Drop => copies = 0,
                    Fault::Duplicate => copies = 2,
                    Fault::Misroute => to = (to + 1) % BUCKETS,
                    _ => {}
                }
            }
            for _ in 0..copies {
                self.buckets[to]
                    .send(BucketMsg::Char(c))
                    .expect("bucket alive");
            }
        }
        self.pages_read += 1;
        if self.pages_read < p.pages {
            ctx.myself().send(Read).expect("running");
        } else {
            for bucket in &self.buckets {
                bucket.send(BucketMsg::Done).expect("bucket alive");
            }
            ctx.stop();
        }
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.tally.fetch_add(self.handled, Ordering::Relaxed);
    }

    /// Blocking (its reads; §5.1.6 ⟨true, _, _, _⟩): Blocking → `Thread`.
    fn characteristics() -> Option<Characteristics> {
        Some(Characteristics::blocking())
    }
}

/// The run's histogram against the sequential one.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    /// Characters counted in all.
    chars: u64,
    /// Codes whose count differs from the sequential count.
    codes_off: Vec<usize>,
    repeated: usize,
    foreign: u64,
    /// Actors of the run still alive at the end.
    alive: u64,
}

/// The histogram of a correct run, counted sequentially over the same text.
fn expected(p: Params) -> Histogram {
    let mut counts = vec![0u64; BUCKETS];
    let mut text = Text::new();
    for _ in 0..p.pages {
        for c in text.page(p.page) {
            counts[usize::from(c)] += 1;
        }
    }
    Histogram {
        counts,
        repeated: 0,
        foreign: 0,
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let p = of(run.size);
    noting(measure(system, run, p), p)
}

fn measure(system: &System, run: &Run, p: Params) -> Measured {
    system.run_until_idle();
    let before = system.stats();
    let tally = Tally::default();
    let printer = system.spawn(Printer {
        histogram: Histogram {
            counts: vec![0; BUCKETS],
            repeated: 0,
            foreign: 0,
        },
        reported: vec![false; BUCKETS],
        left: BUCKETS,
        done: None,
        handled: 0,
        tally: Arc::clone(&tally),
    });
    let buckets = (0..BUCKETS as u8)
        .map(|code| {
            system.spawn(Bucket {
                code,
                count: 0,
                foreign: 0,
                printer: printer.clone(),
                handled: 0,
                tally: Arc::clone(&tally),
                wrong: code == b'e' && run.injects(Fault::WrongRule),
            })
        })
        .collect();
    let reader = system.spawn(Reader {
        params: p,
        text: Text::new(),
        pages_read: 0,
        buckets,
        handled: 0,
        tally: Arc::clone(&tally),
        fault: run.fault,
    });
    system.run_until_idle();
    let start = Instant::now();
    let pending = printer.ask(PrinterMsg::Arm).expect("fresh actor");
    drop(printer);
    reader.send(Read).expect("fresh actor");
    drop(reader);
    let histogram = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    system.run_until_idle();
    let counted = tally.load(Ordering::Relaxed);
    let histogram = match histogram {
        Ok(histogram) => histogram,
        Err(reason) => return Measured::failed(counted, elapsed, reason),
    };
    let (pages, chars) = (p.pages as u64, (p.pages * p.page) as u64);
    // Compared in full, reported compactly: the codes whose count is off.
    let want = expected(p);
    let codes_off: Vec<usize> = (0..BUCKETS)
        .filter(|&c| histogram.counts[c] != want.counts[c])
        .collect();
    let outcome = Outcome {
        chars: histogram.counts.iter().sum(),
        codes_off,
        repeated: histogram.repeated,
        foreign: histogram.foreign,
        alive: alive_since(system, &before),
    };
    let expected = Outcome {
        chars,
        codes_off: Vec::new(),
        repeated: 0,
        foreign: 0,
        alive: 0,
    };
    Measured::checked(counted, elapsed, outcome, expected)
        .with_message_count(pages + chars + 2 * BUCKETS as u64, "P + P·B + 2·128 = ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_is_ascii_with_lines() {
        let page = Text::new().page(3 * LINE);
        assert!(page
            .iter()
            .all(|&c| c.is_ascii() && (c == b'\n' || c >= b' ')));
        assert_eq!(page.iter().filter(|&&c| c == b'\n').count(), 3);
        assert!(page.contains(&b'e') && page.contains(&b' '));
    }

    #[test]
    fn small_runs_verify_and_faults_fail() {
        let p = Params {
            pages: 3,
            page: 500,
            read_delay: Duration::from_micros(100),
        };
        let m = measure(
            &loka::System::builder().workers(2).build().unwrap(),
            &Run::new(Size::Quick),
            p,
        );
        assert!(m.verified, "{}", m.check);
        assert_eq!(m.messages, 3 + 1_500 + 256);
        for &fault in BENCH.faults {
            let system = loka::System::builder().workers(2).build().unwrap();
            let m = measure(&system, &Run::new(Size::Quick).with_fault(fault), p);
            assert!(!m.verified, "{fault:?}: {}", m.check);
        }
    }
}
