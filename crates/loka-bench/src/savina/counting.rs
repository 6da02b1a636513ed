//! Counting Actor: a Producer sends N increments to a Counter, then asks for the total (Savina #2).
//!
//! Check: the increments carry the values 1, 2, …, N in order; the Counter counts them, sums
//! them and counts those that are not the next value of the sequence; the calling thread sums
//! 1..=N on its own. A lost, duplicated or reordered increment changes the count, the sum or the
//! sequence.

use crate::{await_result, Bench, Fault, Measured, Run};
use loka::{Actor, ActorRef, AskError, Context, ReplyTo, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "counting",
    suite: "savina",
    about: "a producer sends N increments to a counter, then asks for the total (N + 2 messages)",
    run,
    faults: &[Fault::Drop, Fault::Duplicate],
};

/// Increments sent per activation of the Producer before it yields to the rest of the system.
const SLICE: u64 = 10_000;

pub(crate) enum CounterMsg {
    /// The next value of the sequence 1, 2, …, N.
    Increment(u64),
    Retrieve(ReplyTo<Total>),
}

/// What the Counter received.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Total {
    increments: u64,
    sum: u64,
    /// Increments that were not the next value of the sequence.
    out_of_sequence: u64,
}

pub(crate) struct Counter {
    total: Total,
}

impl Actor for Counter {
    type Msg = CounterMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: CounterMsg) {
        self.receive(msg);
    }
}

impl Counter {
    pub(crate) fn new() -> Self {
        Counter {
            total: Total::default(),
        }
    }

    /// The Counter's handler, also run by the async variant (`async_handlers.rs`).
    #[inline(always)]
    pub(crate) fn receive(&mut self, msg: CounterMsg) {
        match msg {
            CounterMsg::Increment(value) => {
                let total = &mut self.total;
                total.increments += 1;
                total.sum = total.sum.wrapping_add(value);
                total.out_of_sequence += u64::from(value != total.increments);
            }
            CounterMsg::Retrieve(reply) => reply.send(self.total),
        }
    }
}

pub(crate) enum ProducerMsg {
    /// [`Fault::Drop`]: the first increment is lost; [`Fault::Duplicate`]: it arrives twice.
    Start(Fault, ReplyTo<Total>),
    /// Sent to itself to go on with the next slice of increments.
    Continue,
}

pub(crate) struct Producer {
    counter: Option<ActorRef<CounterMsg>>,
    left: u64,
    /// The next value to send.
    next: u64,
    done: Option<ReplyTo<Total>>,
}

impl Producer {
    /// A Producer of `increments` to `counter`.
    pub(crate) fn new(counter: ActorRef<CounterMsg>, increments: u64) -> Self {
        Producer {
            counter: Some(counter),
            left: increments,
            next: 1,
            done: None,
        }
    }

    /// Handles `Start` or `Continue`: sends the next slice of increments. Returns the Counter
    /// once all are sent, to ask for the total; `None` while some are left (the Producer then
    /// sends itself `Continue`). The sync and async Producers differ only in how they ask.
    #[inline(always)]
    pub(crate) fn send_slice(&mut self, msg: ProducerMsg) -> Option<ActorRef<CounterMsg>> {
        let counter = self.counter.as_ref().expect("counter set until the end");
        if let ProducerMsg::Start(fault, done) = msg {
            self.done = Some(done);
            match fault {
                Fault::Drop => {
                    // The first increment is lost on its way.
                    self.next += 1;
                    self.left -= 1;
                }
                Fault::Duplicate => counter
                    .send(CounterMsg::Increment(self.next))
                    .expect("counter alive"),
                _ => {}
            }
        }
        let slice = self.left.min(SLICE);
        for value in self.next..self.next + slice {
            counter
                .send(CounterMsg::Increment(value))
                .expect("counter alive");
        }
        self.next += slice;
        self.left -= slice;
        if self.left > 0 {
            return None;
        }
        Some(self.counter.take().expect("counter set until the end"))
    }

    /// Passes the Counter's answer on to the driver. A lost answer drops `done`, which tells it.
    pub(crate) fn finish(&mut self, total: Result<Total, AskError>) {
        if let (Some(done), Ok(total)) = (self.done.take(), total) {
            done.send(total);
        }
    }
}

impl Actor for Producer {
    type Msg = ProducerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: ProducerMsg) {
        let Some(counter) = self.send_slice(msg) else {
            ctx.myself()
                .send(ProducerMsg::Continue)
                .expect("producer alive");
            return;
        };
        // All increments sent: ask for the total, then stop.
        ctx.ask(
            &counter,
            CounterMsg::Retrieve,
            |this: &mut Producer, ctx, total| {
                this.finish(total);
                ctx.stop();
            },
        );
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let increments = increments(run);
    let counter = system.spawn(Counter::new());
    let producer = system.spawn(Producer::new(counter, increments));
    drive(system, run, BENCH.name, producer, increments)
}

/// N, the increments of a run.
pub(crate) fn increments(run: &Run) -> u64 {
    run.pick(5_000_000, 10_000_000)
}

/// The run and its check, with the Producer of `increments` spawned (sync here, async in
/// `async_handlers.rs`); `name` names the benchmark in a failure.
pub(crate) fn drive(
    system: &System,
    run: &Run,
    name: &str,
    producer: ActorRef<ProducerMsg>,
    increments: u64,
) -> Measured {
    system.run_until_idle();
    let start = Instant::now();
    let pending = producer
        .ask(|done| ProducerMsg::Start(run.fault, done))
        .expect("fresh actor");
    let total = await_result(system, pending, run, name);
    let elapsed = start.elapsed();
    let total = match total {
        Ok(total) => total,
        Err(e) => return Measured::failed(0, elapsed, e),
    };
    // The sum the increments must add up to, computed here, sequentially.
    let expected = Total {
        increments,
        sum: (1..=increments).fold(0u64, u64::wrapping_add),
        out_of_sequence: 0,
    };
    // Counted: the increments and the query the Counter handled, and its answer.
    let messages = total.increments + 2;
    Measured::checked(messages, elapsed, total, expected)
        .with_message_count(increments + 2, "N + 2 = ")
}
