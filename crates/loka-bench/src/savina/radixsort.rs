//! Radix Sort: a pipeline of one sorting actor per bit, lowest bit first; a stage forwards
//! values whose bit is clear at once and buffers the others until it has seen all N, then
//! forwards the buffer in arrival order (Savina #22).

use crate::rng::XorShift;
use crate::verify::SortedStream;
use crate::{await_result, Bench, Fault, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "radixsort",
    suite: "savina",
    about: "N values through a pipeline of 60 one-bit sorting actors (N·61 messages)",
    run,
    faults: &[Fault::Drop, Fault::Duplicate, Fault::WrongRule],
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
        let mut sent = 0;
        for _ in 0..self.values {
            self.next
                .send(SortMsg::Value(rng.next() >> (64 - BITS)))
                .expect("stage alive");
            sent += 1;
        }
        self.tally.fetch_add(sent, Ordering::Relaxed);
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

impl Stage {
    fn forward(&mut self, value: u64) {
        self.next.send(SortMsg::Value(value)).expect("next alive");
        self.sent += 1;
    }

    /// Takes the next value; true after the last one (the buffer is flushed then).
    fn take(&mut self, value: u64) -> bool {
        self.seen += 1;
        if value & self.radix == 0 {
            self.forward(value);
        } else {
            self.buffer.push(value);
        }
        if self.seen == self.values {
            for value in std::mem::take(&mut self.buffer) {
                self.forward(value);
            }
            return true;
        }
        false
    }
}

impl Actor for Stage {
    type Msg = SortMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: SortMsg) {
        if let SortMsg::Value(value) = msg {
            if self.take(value) {
                ctx.stop();
            }
        }
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.tally.fetch_add(self.sent, Ordering::Relaxed);
    }
}

/// A stage with an injected defect, in place of a real one (a real run never spawns it): its
/// first value is lost or forwarded twice, or (`WrongRule`) its first value whose bit is set is
/// forwarded at once as if the bit were clear.
struct FaultyStage {
    stage: Stage,
    fault: Fault,
}

impl Actor for FaultyStage {
    type Msg = SortMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: SortMsg) {
        let SortMsg::Value(value) = msg else {
            return;
        };
        let stage = &mut self.stage;
        let finished = match self.fault {
            Fault::Drop => {
                self.fault = Fault::None;
                stage.seen += 1;
                stage.seen == stage.values
            }
            Fault::Duplicate => {
                self.fault = Fault::None;
                stage.forward(value);
                stage.take(value)
            }
            Fault::WrongRule if value & stage.radix != 0 => {
                self.fault = Fault::None;
                stage.seen += 1;
                stage.forward(value);
                stage.seen == stage.values
            }
            _ => stage.take(value),
        };
        if finished {
            ctx.stop();
        }
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.stage
            .tally
            .fetch_add(self.stage.sent, Ordering::Relaxed);
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
    // An injected fault sits in the first stage (lost or doubled value) or the last (wrong rule).
    let faulty_bit = match run.fault {
        Fault::None => None,
        Fault::WrongRule => Some(BITS - 1),
        _ => Some(0),
    };
    let mut next = validator;
    for bit in (0..BITS).rev() {
        let stage = Stage {
            values,
            radix: 1 << bit,
            next,
            buffer: Vec::new(),
            seen: 0,
            sent: 0,
            tally: Arc::clone(&tally),
        };
        next = if faulty_bit == Some(bit) {
            system.spawn(FaultyStage {
                stage,
                fault: run.fault,
            })
        } else {
            system.spawn(stage)
        };
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
    let seen = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    let seen = match seen {
        Ok(seen) => seen,
        Err(reason) => return Measured::failed(0, elapsed, reason),
    };
    // Let the last stage's `stopped` add its count (not timed).
    system.run_until_idle();
    let messages = tally.load(Ordering::Relaxed);
    let expected_messages = values as u64 * (u64::from(BITS) + 1);
    Measured::checked(messages, elapsed, seen, expected)
        .with_message_count(expected_messages, "N·(bits + 1) = ")
}
