//! Counting Actor: a Producer sends N increments to a Counter, then asks for the total (Savina #2).
//!
//! Check: the increments carry the values 1, 2, …, N in order; the Counter counts them, sums
//! them and counts those that are not the next value of the sequence; the calling thread sums
//! 1..=N on its own. A lost, duplicated or reordered increment changes the count, the sum or the
//! sequence.

use crate::{await_result, Bench, Fault, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
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

enum CounterMsg {
    /// The next value of the sequence 1, 2, …, N.
    Increment(u64),
    Retrieve(ReplyTo<Total>),
}

/// What the Counter received.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Total {
    increments: u64,
    sum: u64,
    /// Increments that were not the next value of the sequence.
    out_of_sequence: u64,
}

struct Counter {
    total: Total,
}

impl Actor for Counter {
    type Msg = CounterMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: CounterMsg) {
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

enum ProducerMsg {
    /// [`Fault::Drop`]: the first increment is lost; [`Fault::Duplicate`]: it arrives twice.
    Start(Fault, ReplyTo<Total>),
    /// Sent to itself to go on with the next slice of increments.
    Continue,
}

struct Producer {
    counter: Option<ActorRef<CounterMsg>>,
    left: u64,
    /// The next value to send.
    next: u64,
    done: Option<ReplyTo<Total>>,
}

impl Actor for Producer {
    type Msg = ProducerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: ProducerMsg) {
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
            ctx.myself()
                .send(ProducerMsg::Continue)
                .expect("producer alive");
            return;
        }
        // All increments sent: ask for the total, and let the Counter stop once it has answered.
        let counter = self.counter.take().expect("counter set until the end");
        ctx.ask(
            &counter,
            CounterMsg::Retrieve,
            |this: &mut Producer, ctx, total| {
                // A lost answer drops `done`, which tells the driver.
                if let (Some(done), Ok(total)) = (this.done.take(), total) {
                    done.send(total);
                }
                ctx.stop();
            },
        );
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let increments = run.pick(5_000_000, 10_000_000);
    let counter = system.spawn(Counter {
        total: Total::default(),
    });
    let producer = system.spawn(Producer {
        counter: Some(counter),
        left: increments,
        next: 1,
        done: None,
    });
    system.run_until_idle();
    let start = Instant::now();
    let pending = producer
        .ask(|done| ProducerMsg::Start(run.fault, done))
        .expect("fresh actor");
    let total = await_result(system, pending, run, BENCH.name);
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
