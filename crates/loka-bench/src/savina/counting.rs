//! Counting Actor: a Producer sends N increments to a Counter, then asks for the total (Savina #2).

use crate::{Bench, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "counting",
    suite: "savina",
    about: "a producer sends N increments to a counter, then asks for the total (N + 2 messages)",
    run,
    faults: &[],
};

/// Increments sent per activation of the Producer before it yields to the rest of the system.
const SLICE: u64 = 10_000;

enum CounterMsg {
    Increment,
    Retrieve(ReplyTo<u64>),
}

struct Counter {
    total: u64,
}

impl Actor for Counter {
    type Msg = CounterMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: CounterMsg) {
        match msg {
            CounterMsg::Increment => self.total += 1,
            CounterMsg::Retrieve(reply) => reply.send(self.total),
        }
    }
}

enum ProducerMsg {
    Start(ReplyTo<u64>),
    /// Sent to itself to go on with the next slice of increments.
    Continue,
}

struct Producer {
    counter: Option<ActorRef<CounterMsg>>,
    left: u64,
    done: Option<ReplyTo<u64>>,
}

impl Actor for Producer {
    type Msg = ProducerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: ProducerMsg) {
        if let ProducerMsg::Start(done) = msg {
            self.done = Some(done);
        }
        let counter = self.counter.as_ref().expect("counter set until the end");
        let slice = self.left.min(SLICE);
        for _ in 0..slice {
            counter.send(CounterMsg::Increment).expect("counter alive");
        }
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
                if let Some(done) = this.done.take() {
                    done.send(total.unwrap_or(u64::MAX));
                }
                ctx.stop();
            },
        );
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    let increments = size.pick(2_000_000, 10_000_000);
    let counter = system.spawn(Counter { total: 0 });
    let producer = system.spawn(Producer {
        counter: Some(counter),
        left: increments,
        done: None,
    });
    system.run_until_idle();
    let start = Instant::now();
    let total = producer
        .ask(ProducerMsg::Start)
        .expect("fresh actor")
        .wait()
        .unwrap_or(u64::MAX);
    Measured::checked(increments + 2, start.elapsed(), total, increments)
}
