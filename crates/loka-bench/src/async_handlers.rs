//! Savina's Ping-Pong and Counting Actor with async handlers ([`loka::AsyncActor`]): what an
//! `async fn` handler costs against the sync ones (`pingpong`, `counting`), and what loka's async
//! actors do against kameo's and ractor's, whose handlers are async by construction
//! (docs/results/async.md).
//!
//! Two variants of each: every handler is an `async fn` that awaits nothing (`async-pingpong`,
//! `async-counting`), or one that awaits a ready future once per message
//! (`async-pingpong-ready`, `async-counting-ready`: `std::future::ready(()).await`, a future that
//! completes at its first poll). The workloads and their checks are those of the sync versions:
//! sequence numbers checked on both sides of Ping-Pong; count, sum and order of the increments
//! for Counting. Counting's producer asks for the total with an awaited ask, the one handler of
//! these workloads that goes pending.

use crate::{await_result, Bench, Fault, Measured, Run};
use loka::{ActorRef, Async, AsyncActor, AsyncContext, ReplyTo, System};
use std::time::Instant;

/// The four workloads of this suite.
pub fn all() -> Vec<Bench> {
    vec![
        Bench {
            name: "async-pingpong",
            suite: "async",
            about: "pingpong with async handlers that await nothing (2·N messages)",
            run: pingpong::<false>,
            faults: &[Fault::Drop, Fault::Duplicate],
        },
        Bench {
            name: "async-pingpong-ready",
            suite: "async",
            about: "pingpong with async handlers that await a ready future per message",
            run: pingpong::<true>,
            faults: &[Fault::Drop, Fault::Duplicate],
        },
        Bench {
            name: "async-counting",
            suite: "async",
            about: "counting with async handlers that await nothing (N + 2 messages)",
            run: counting::<false>,
            faults: &[Fault::Drop, Fault::Duplicate],
        },
        Bench {
            name: "async-counting-ready",
            suite: "async",
            about: "counting with async handlers that await a ready future per message",
            run: counting::<true>,
            faults: &[Fault::Drop, Fault::Duplicate],
        },
    ]
}

/// The per-message await of the `-ready` variants: a future ready at its first poll, which the
/// compiler cannot see through as a no-op (`black_box`), so the handler keeps an await point.
async fn maybe_await<const READY: bool>() {
    if READY {
        std::hint::black_box(std::future::ready(())).await;
    }
}

// ---- Ping-Pong ----------------------------------------------------------------------------

enum PingMsg {
    Start(Box<Start>),
    /// The answer to the ping with this sequence number.
    Pong(u64),
}

struct Start {
    pong: ActorRef<PongMsg>,
    rounds: u64,
    /// [`Fault::Drop`]: the first ping is lost; [`Fault::Duplicate`]: it is delivered twice.
    fault: Fault,
    done: ReplyTo<Tally>,
}

enum PongMsg {
    SetPing(Box<ActorRef<PingMsg>>),
    /// The ping with this sequence number.
    Ping(u64),
    /// After the run: what Pong saw.
    Report(Box<ReplyTo<Tally>>),
}

/// What one side received: messages, and those whose sequence number was not the expected one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Tally {
    received: u64,
    out_of_sequence: u64,
}

struct Ping<const READY: bool> {
    pong: Option<ActorRef<PongMsg>>,
    left: u64,
    /// The sequence number of the last ping sent.
    sent: u64,
    pongs: Tally,
    done: Option<ReplyTo<Tally>>,
}

impl<const READY: bool> AsyncActor for Ping<READY> {
    type Msg = PingMsg;
    async fn handle(&mut self, _ctx: &mut AsyncContext<Self>, msg: PingMsg) {
        maybe_await::<READY>().await;
        match msg {
            PingMsg::Start(start) => {
                let Start {
                    pong,
                    rounds,
                    fault,
                    done,
                } = *start;
                self.left = rounds;
                self.done = Some(done);
                self.pong = Some(pong);
                match fault {
                    Fault::Drop => {
                        // The first ping is lost on its way: counted as sent, never delivered.
                        self.left -= 1;
                        self.sent += 1;
                        return;
                    }
                    Fault::Duplicate => {
                        let pong = self.pong.as_ref().expect("started");
                        pong.send(PongMsg::Ping(1)).expect("pong alive");
                    }
                    _ => {}
                }
            }
            PingMsg::Pong(seq) => {
                self.pongs.received += 1;
                self.pongs.out_of_sequence += u64::from(seq != self.sent);
            }
        }
        if self.left > 0 {
            self.left -= 1;
            self.sent += 1;
            let pong = self.pong.as_ref().expect("started");
            pong.send(PongMsg::Ping(self.sent)).expect("pong alive");
        } else if let Some(done) = self.done.take() {
            done.send(self.pongs);
        }
    }
}

struct Pong<const READY: bool> {
    ping: Option<ActorRef<PingMsg>>,
    pings: Tally,
}

impl<const READY: bool> AsyncActor for Pong<READY> {
    type Msg = PongMsg;
    async fn handle(&mut self, _ctx: &mut AsyncContext<Self>, msg: PongMsg) {
        maybe_await::<READY>().await;
        match msg {
            PongMsg::SetPing(ping) => self.ping = Some(*ping),
            PongMsg::Ping(seq) => {
                self.pings.received += 1;
                self.pings.out_of_sequence += u64::from(seq != self.pings.received);
                let ping = self.ping.as_ref().expect("ping set");
                // Ignored failure: only an injected fault can leave a ping unanswered at the end.
                let _ = ping.send(PingMsg::Pong(seq));
            }
            PongMsg::Report(reply) => reply.send(self.pings),
        }
    }
}

/// What both sides saw, compared with N messages each and no sequence error.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    pongs: Tally,
    pings: Tally,
}

fn pingpong<const READY: bool>(system: &System, run: &Run) -> Measured {
    let name = if READY {
        "async-pingpong-ready"
    } else {
        "async-pingpong"
    };
    // As `pingpong`'s sizes, so that the two compare run for run.
    let rounds = run.pick(1_800_000, 2_000_000);
    let ping = system.spawn(Async::new(Ping::<READY> {
        pong: None,
        left: 0,
        sent: 0,
        pongs: Tally::default(),
        done: None,
    }));
    let pong = system.spawn(Async::new(Pong::<READY> {
        ping: None,
        pings: Tally::default(),
    }));
    pong.send(PongMsg::SetPing(Box::new(ping.clone())))
        .expect("fresh actor");
    system.run_until_idle();
    let start = Instant::now();
    let pending = ping
        .ask(|done| {
            PingMsg::Start(Box::new(Start {
                pong: pong.clone(),
                rounds,
                fault: run.fault,
                done,
            }))
        })
        .expect("fresh actor");
    let pongs = await_result(system, pending, run, name);
    let elapsed = start.elapsed();
    let pongs = match pongs {
        Ok(pongs) => pongs,
        Err(e) => return Measured::failed(0, elapsed, e),
    };
    // Untimed: what Pong received.
    let pending = pong
        .ask(|reply| PongMsg::Report(Box::new(reply)))
        .expect("pong alive");
    let pings = match await_result(system, pending, run, name) {
        Ok(pings) => pings,
        Err(e) => return Measured::failed(0, elapsed, e),
    };
    let expected = Tally {
        received: rounds,
        out_of_sequence: 0,
    };
    Measured::checked(
        pongs.received + pings.received,
        elapsed,
        Outcome { pongs, pings },
        Outcome {
            pongs: expected,
            pings: expected,
        },
    )
    .with_message_count(2 * rounds, "2·N = ")
}

// ---- Counting -----------------------------------------------------------------------------

/// Increments sent per activation of the Producer before it yields (as in `counting`).
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

struct Counter<const READY: bool> {
    total: Total,
}

impl<const READY: bool> AsyncActor for Counter<READY> {
    type Msg = CounterMsg;
    async fn handle(&mut self, _ctx: &mut AsyncContext<Self>, msg: CounterMsg) {
        maybe_await::<READY>().await;
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

struct Producer<const READY: bool> {
    counter: Option<ActorRef<CounterMsg>>,
    left: u64,
    /// The next value to send.
    next: u64,
    done: Option<ReplyTo<Total>>,
}

impl<const READY: bool> AsyncActor for Producer<READY> {
    type Msg = ProducerMsg;
    async fn handle(&mut self, ctx: &mut AsyncContext<Self>, msg: ProducerMsg) {
        maybe_await::<READY>().await;
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
        // All increments sent: await the total (this handler goes pending until the Counter
        // answers), pass it on, and stop.
        let counter = self.counter.take().expect("counter set until the end");
        let total = ctx.ask(&counter, CounterMsg::Retrieve).await;
        // A lost answer drops `done`, which tells the driver.
        if let (Some(done), Ok(total)) = (self.done.take(), total) {
            done.send(total);
        }
        ctx.stop();
    }
}

fn counting<const READY: bool>(system: &System, run: &Run) -> Measured {
    // As `counting`'s sizes, so that the two compare run for run.
    let increments = run.pick(5_000_000, 10_000_000);
    let name = if READY {
        "async-counting-ready"
    } else {
        "async-counting"
    };
    let counter = system.spawn(Async::new(Counter::<READY> {
        total: Total::default(),
    }));
    let producer = system.spawn(Async::new(Producer::<READY> {
        counter: Some(counter),
        left: increments,
        next: 1,
        done: None,
    }));
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
    let expected = Total {
        increments,
        sum: (1..=increments).fold(0u64, u64::wrapping_add),
        out_of_sequence: 0,
    };
    let messages = total.increments + 2;
    Measured::checked(messages, elapsed, total, expected)
        .with_message_count(increments + 2, "N + 2 = ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Size;
    use std::time::Duration;

    /// Each async benchmark verifies on one and two workers, and each fault it declares makes
    /// its check fail (the crate-wide tests run these too, among every benchmark; this one
    /// runs them alone).
    #[test]
    fn the_async_benchmarks_verify_and_their_faults_fail_their_checks() {
        for bench in all() {
            for workers in [1, 2] {
                let system = System::builder().workers(workers).build().unwrap();
                let m = (bench.run)(&system, &Run::new(Size::Quick));
                assert!(
                    m.verified,
                    "{} on {workers} workers: {}",
                    bench.name, m.check
                );
                system.shutdown();
            }
            for &fault in bench.faults {
                let system = System::builder().workers(2).build().unwrap();
                let run = Run::new(Size::Quick)
                    .with_fault(fault)
                    .with_timeout(Duration::from_secs(30));
                let m = (bench.run)(&system, &run);
                assert!(!m.verified, "{} with {fault:?}: {}", bench.name, m.check);
                system.shutdown();
            }
        }
    }
}
