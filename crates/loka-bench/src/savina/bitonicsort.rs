//! Bitonic Sort: N values stream through Savina's (StreamIt-derived) sorting network of actors:
//! log N merge stages of split–compare-exchange–join steps turn the input into bitonic sequences
//! and merge them; every value is a message at every hop (Savina #24).

use crate::rng::XorShift;
use crate::verify::SortedStream;
use crate::{await_result, Bench, Fault, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "bitonicsort",
    suite: "savina",
    about: "N values through a bitonic sorting network of actors (one message per value and hop)",
    run,
    faults: &[Fault::Drop, Fault::WrongRule],
};

/// Messages sent, added up by every actor when it stops.
type Tally = Arc<AtomicU64>;

/// Every network actor takes these (Savina's ValueMessage and DataMessage).
enum Msg {
    Value(u64),
    /// A value tagged with the index of the branch it comes from, for a joiner.
    Data(usize, u64),
    /// Set-up for the validator: where to report.
    Watch(ReplyTo<SortedStream>),
}

type Next = ActorRef<Msg>;

/// Counts its sends and adds them to the tally when it stops (the state is dropped then).
struct Out {
    next: Next,
    sent: u64,
    tally: Tally,
}

impl Out {
    fn send(&mut self, msg: Msg) {
        self.next.send(msg).expect("network actor alive");
        self.sent += 1;
    }
}

impl Drop for Out {
    fn drop(&mut self) {
        self.tally.fetch_add(self.sent, Ordering::Relaxed);
    }
}

/// The container actors of Savina's network (kernel, merge stages, steps, partitions): each
/// forwards values to the first actor inside it.
struct Forward(Out);

impl Actor for Forward {
    type Msg = Msg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: Msg) {
        self.0.send(msg);
    }
}

/// Tags values with its branch index.
struct ValueDataAdapter {
    order: usize,
    out: Out,
}

impl Actor for ValueDataAdapter {
    type Msg = Msg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: Msg) {
        match msg {
            Msg::Value(v) => self.out.send(Msg::Data(self.order, v)),
            other => self.out.send(other),
        }
    }
}

/// Strips branch tags.
struct DataValueAdapter(Out);

impl Actor for DataValueAdapter {
    type Msg = Msg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: Msg) {
        match msg {
            Msg::Data(_, v) => self.0.send(Msg::Value(v)),
            other => self.0.send(other),
        }
    }
}

/// Sends runs of `length` values to each receiver in turn.
struct Splitter {
    length: usize,
    receivers: Vec<Next>,
    index: usize,
    run: usize,
    sent: u64,
    tally: Tally,
}

impl Actor for Splitter {
    type Msg = Msg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: Msg) {
        self.receivers[self.index]
            .send(msg)
            .expect("network actor alive");
        self.sent += 1;
        self.run += 1;
        if self.run == self.length {
            self.index = (self.index + 1) % self.receivers.len();
            self.run = 0;
        }
    }
}

impl Drop for Splitter {
    fn drop(&mut self) {
        self.tally.fetch_add(self.sent, Ordering::Relaxed);
    }
}

/// Forwards runs of `length` values from each branch in turn, queueing what arrives early.
struct Joiner {
    length: usize,
    queues: Vec<VecDeque<u64>>,
    index: usize,
    run: usize,
    out: Out,
}

impl Joiner {
    fn new(length: usize, branches: usize, out: Out) -> Joiner {
        Joiner {
            length,
            queues: (0..branches).map(|_| VecDeque::new()).collect(),
            index: 0,
            run: 0,
            out,
        }
    }
}

impl Actor for Joiner {
    type Msg = Msg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: Msg) {
        let Msg::Data(order, value) = msg else {
            return;
        };
        self.queues[order].push_back(value);
        while let Some(value) = self.queues[self.index].pop_front() {
            self.out.send(Msg::Value(value));
            self.run += 1;
            if self.run == self.length {
                self.index = (self.index + 1) % self.queues.len();
                self.run = 0;
            }
        }
    }
}

/// Orders each pair of values it receives (ascending if `up`).
struct CompareExchange {
    order: usize,
    up: bool,
    held: Option<u64>,
    out: Out,
}

impl CompareExchange {
    /// The pair to send once two values are in, in order.
    fn pair(&mut self, v: u64) -> Option<(u64, u64)> {
        match self.held.take() {
            None => {
                self.held = Some(v);
                None
            }
            Some(k1) => {
                let (min, max) = if k1 <= v { (k1, v) } else { (v, k1) };
                Some(if self.up { (min, max) } else { (max, min) })
            }
        }
    }
}

impl Actor for CompareExchange {
    type Msg = Msg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: Msg) {
        let Msg::Value(v) = msg else {
            return;
        };
        if let Some((first, second)) = self.pair(v) {
            self.out.send(Msg::Data(self.order, first));
            self.out.send(Msg::Data(self.order, second));
        }
    }
}

/// A compare-exchange with an injected defect, in place of a real one (a real run never spawns
/// it): of its first pair, the second value is lost (`Drop`), or the two go out in the wrong order
/// (`WrongRule`).
struct FaultyCompareExchange {
    inner: CompareExchange,
    fault: Fault,
}

impl Actor for FaultyCompareExchange {
    type Msg = Msg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: Msg) {
        let Msg::Value(v) = msg else {
            return;
        };
        let Some((first, second)) = self.inner.pair(v) else {
            return;
        };
        let order = self.inner.order;
        let out = &mut self.inner.out;
        match std::mem::replace(&mut self.fault, Fault::None) {
            Fault::Drop => out.send(Msg::Data(order, first)),
            Fault::WrongRule => {
                out.send(Msg::Data(order, second));
                out.send(Msg::Data(order, first));
            }
            _ => {
                out.send(Msg::Data(order, first));
                out.send(Msg::Data(order, second));
            }
        }
    }
}

enum SourceMsg {
    Start,
}

/// Generates the N values and sends them into the network.
struct Source {
    values: usize,
    seed: u64,
    out: Out,
}

impl Actor for Source {
    type Msg = SourceMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, SourceMsg::Start: SourceMsg) {
        let mut rng = XorShift(self.seed);
        for _ in 0..self.values {
            self.out.send(Msg::Value(rng.next() >> 4));
        }
        ctx.stop();
    }
}

struct Validator {
    values: usize,
    seen: SortedStream,
    done: Option<ReplyTo<SortedStream>>,
}

impl Actor for Validator {
    type Msg = Msg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: Msg) {
        match msg {
            Msg::Watch(done) => self.done = Some(done),
            Msg::Value(value) | Msg::Data(_, value) => {
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

/// Builds the network on the driver thread (set-up, not timed), from its end to its start.
/// Every actor holds references only downstream, so once the source has stopped, each actor
/// stops by itself when it has handled its last value (unreferenced and empty): no Exit message
/// is needed, and none is counted.
struct Builder<'a> {
    system: &'a System,
    n: usize,
    tally: Tally,
    /// A defect for the first compare-exchange built (one of the last step's, the network being
    /// built from its end); [`Fault::None`] in a real run.
    fault: Cell<Fault>,
}

impl Builder<'_> {
    fn out(&self, next: Next) -> Out {
        Out {
            next,
            sent: 0,
            tally: Arc::clone(&self.tally),
        }
    }

    fn compare_exchange(&self, order: usize, up: bool, next: Next) -> Next {
        let inner = CompareExchange {
            order,
            up,
            held: None,
            out: self.out(next),
        };
        match self.fault.replace(Fault::None) {
            Fault::None => self.system.spawn(inner),
            fault => self.system.spawn(FaultyCompareExchange { inner, fault }),
        }
    }

    fn forward(&self, next: Next) -> Next {
        self.system.spawn(Forward(self.out(next)))
    }

    /// Savina's BitonicSortKernel: merge stages 2, 4, …, N/2, then the last merge stage.
    fn kernel(&self, up: bool, next: Next) -> Next {
        let mut next = self.last_merge_stage(up, next);
        let mut p = self.n / 2;
        while p >= 2 {
            next = self.merge_stage(p, next);
            p /= 2;
        }
        self.forward(next)
    }

    /// N/P bitonic sorters of order P (alternately up and down), as log P steps.
    fn merge_stage(&self, p: usize, next: Next) -> Next {
        let mut next = next;
        let mut i = p / 2;
        while i >= 1 {
            next = self.step(p / i, (self.n / p) * i, Direction::Alternate(i), next);
            i /= 2;
        }
        self.forward(next)
    }

    /// One bitonic sorter of order N, as log N steps.
    fn last_merge_stage(&self, up: bool, next: Next) -> Next {
        let mut next = next;
        let mut i = self.n / 2;
        while i >= 1 {
            next = self.step(self.n / i, i, Direction::Fixed(up), next);
            i /= 2;
        }
        self.forward(next)
    }

    /// Savina's StepOfMerge (with a tag-stripping adapter after the joiner) and StepOfLastMerge
    /// (without): `partitions` partitions of sequences of `length`.
    fn step(&self, length: usize, partitions: usize, direction: Direction, next: Next) -> Next {
        let after_join = match direction {
            Direction::Alternate(_) => self.system.spawn(DataValueAdapter(self.out(next))),
            Direction::Fixed(_) => next,
        };
        let joiner = self
            .system
            .spawn(Joiner::new(length, partitions, self.out(after_join)));
        let workers = (0..partitions)
            .map(|i| {
                let up = match direction {
                    // The direction of the first step's subsequence this one belongs to.
                    Direction::Alternate(counter) => (i / counter) % 2 == 0,
                    Direction::Fixed(up) => up,
                };
                if length > 2 {
                    self.partition(i, length, up, joiner.clone())
                } else {
                    self.compare_exchange(i, up, joiner.clone())
                }
            })
            .collect();
        let splitter = self.splitter(length, workers);
        self.forward(splitter)
    }

    /// Savina's PartitionBitonicSequence: a half-cleaner of `length / 2` compare-exchanges.
    fn partition(&self, order: usize, length: usize, up: bool, next: Next) -> Next {
        let adapter = self.system.spawn(ValueDataAdapter {
            order,
            out: self.out(next),
        });
        let joiner = self
            .system
            .spawn(Joiner::new(1, length / 2, self.out(adapter)));
        let workers = (0..length / 2)
            .map(|i| self.compare_exchange(i, up, joiner.clone()))
            .collect();
        let splitter = self.splitter(1, workers);
        self.forward(splitter)
    }

    fn splitter(&self, length: usize, receivers: Vec<Next>) -> Next {
        self.system.spawn(Splitter {
            length,
            receivers,
            index: 0,
            run: 0,
            sent: 0,
            tally: Arc::clone(&self.tally),
        })
    }
}

#[derive(Clone, Copy)]
enum Direction {
    /// A merge stage's step: direction from the subsequence index and this counter.
    Alternate(usize),
    /// The last merge stage: always this direction.
    Fixed(bool),
}

/// Messages per value through the network for N = 2ⁿ (each stage's steps cost 9 hops, 5 for
/// the length-2 step, 8 and 4 in the last stage, which has no tag-stripping adapter; plus
/// source → kernel, kernel → first stage, one entry hop per stage, adapter → validator).
fn hops_per_value(n: usize) -> u64 {
    let log = u64::from(n.trailing_zeros());
    let stages: u64 = (1..log).map(|k| 1 + 9 * (k - 1) + 5).sum();
    let last = 1 + 8 * (log - 1) + 4;
    2 + stages + last + 1
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    let values: usize = size.pick(2_048, 8_192);
    assert!(values.is_power_of_two(), "N must be a power of 2");
    let seed = 2_048;
    let mut rng = XorShift(seed);
    let expected = SortedStream::expected((0..values).map(|_| rng.next() >> 4));
    let tally = Tally::default();
    let validator = system.spawn(Validator {
        values,
        seen: SortedStream::new(),
        done: None,
    });
    let pending = validator.ask(Msg::Watch).expect("fresh actor");
    let builder = Builder {
        system,
        n: values,
        tally: Arc::clone(&tally),
        fault: Cell::new(run.fault),
    };
    // Savina's DataValueAdapter in front of the validator.
    let adapter = system.spawn(DataValueAdapter(builder.out(validator)));
    let kernel = builder.kernel(true, adapter);
    let source = system.spawn(Source {
        values,
        seed,
        out: builder.out(kernel),
    });
    drop(builder);
    system.run_until_idle();
    let start = Instant::now();
    source.send(SourceMsg::Start).expect("fresh actor");
    drop(source);
    let seen = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    let seen = match seen {
        Ok(seen) => seen,
        Err(reason) => return Measured::failed(0, elapsed, reason),
    };
    // Let the network wind down so every actor has added its count (not timed).
    system.run_until_idle();
    let messages = tally.load(Ordering::Relaxed);
    let expected_messages = values as u64 * hops_per_value(values);
    Measured::checked(messages, elapsed, seen, expected).with_message_count(expected_messages, "")
}
