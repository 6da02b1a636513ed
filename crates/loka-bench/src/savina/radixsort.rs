//! Radix Sort: a pipeline of one sorting actor per bit, lowest bit first; a stage forwards
//! values whose bit is clear at once and buffers the others until it has seen all N, then
//! forwards the buffer in arrival order (Savina #22).

use crate::rng::XorShift;
use crate::verify::SortedStream;
use crate::{Bench, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "radixsort",
    suite: "savina",
    about: "N values through a pipeline of 60 one-bit sorting actors (N·61 messages)",
    run,
    faults: &[],
};

/// Values are below 2^BITS (Savina's M = 2⁶⁰): one stage per bit.
const BITS: u32 = 60;

/// Messages sent, added up by every actor when it stops.
type Tally = Arc<AtomicU64>;

enum SourceMsg {
    Start,
}

/// Generates the N values and sends them down the pipeline.
struct Source {
    values: usize,
    seed: u64,
    next: ActorRef<SortMsg>,
    tally: Tally,
}

impl Actor for Source {
    type Msg = SourceMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, SourceMsg::Start: SourceMsg) {
        let mut rng = XorShift(self.seed);
        for _ in 0..self.values {
            self.next
                .send(SortMsg::Value(rng.next() >> (64 - BITS)))
                .expect("stage alive");
        }
        self.tally.fetch_add(self.values as u64, Ordering::Relaxed);
        ctx.stop();
    }
}

enum SortMsg {
    Value(u64),
    /// Set-up for the validator: where to report.
    Watch(ReplyTo<SortedStream>),
}

struct Stage {
    values: usize,
    radix: u64,
    next: ActorRef<SortMsg>,
    buffer: Vec<u64>,
    seen: usize,
    sent: u64,
    tally: Tally,
}

impl Actor for Stage {
    type Msg = SortMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: SortMsg) {
        let SortMsg::Value(value) = msg else {
            return;
        };
        self.seen += 1;
        if value & self.radix == 0 {
            self.next.send(SortMsg::Value(value)).expect("next alive");
            self.sent += 1;
        } else {
            self.buffer.push(value);
        }
        if self.seen == self.values {
            for value in self.buffer.drain(..) {
                self.next.send(SortMsg::Value(value)).expect("next alive");
                self.sent += 1;
            }
            ctx.stop();
        }
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.tally.fetch_add(self.sent, Ordering::Relaxed);
    }
}

struct Validator {
    values: usize,
    seen: SortedStream,
    done: Option<ReplyTo<SortedStream>>,
}

impl Actor for Validator {
    type Msg = SortMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: SortMsg) {
        match msg {
            SortMsg::Watch(done) => self.done = Some(done),
            SortMsg::Value(value) => {
                self.seen.observe(value);
                if self.seen.count == self.values {
                    if let Some(done) = self.done.take() {
                        done.send(self.seen);
                    }
                    ctx.stop();
                }
            }
        }
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    let values = size.pick(100_000, 400_000);
    let seed = 2_048;
    let mut rng = XorShift(seed);
    let expected = SortedStream::expected((0..values).map(|_| rng.next() >> (64 - BITS)));
    let tally = Tally::default();
    let validator = system.spawn(Validator {
        values,
        seen: SortedStream::new(),
        done: None,
    });
    let pending = validator.ask(SortMsg::Watch).expect("fresh actor");
    // Built from the end: the highest bit's stage feeds the validator, the lowest bit's is first.
    let mut next = validator;
    for bit in (0..BITS).rev() {
        next = system.spawn(Stage {
            values,
            radix: 1 << bit,
            next,
            buffer: Vec::new(),
            seen: 0,
            sent: 0,
            tally: Arc::clone(&tally),
        });
    }
    let source = system.spawn(Source {
        values,
        seed,
        next,
        tally: Arc::clone(&tally),
    });
    system.run_until_idle();
    let start = Instant::now();
    source.send(SourceMsg::Start).expect("fresh actor");
    let seen = pending.wait();
    let elapsed = start.elapsed();
    // Let the last stage's `stopped` add its count (not timed).
    system.run_until_idle();
    let messages = tally.load(Ordering::Relaxed);
    let expected_messages = values as u64 * (u64::from(BITS) + 1);
    let Ok(seen) = seen else {
        return Measured {
            messages,
            elapsed,
            verified: false,
            check: "the validator never answered".to_owned(),
        };
    };
    Measured::checked(messages, elapsed, seen, expected)
        .with_message_count(expected_messages, "N·(bits + 1) = ")
}
