//! Savina's Ping-Pong and Counting Actor with async handlers ([`loka::AsyncActor`]): what an
//! `async fn` handler costs against the sync ones (`pingpong`, `counting`), and what loka's async
//! actors do against kameo's and ractor's, whose handlers are async by construction
//! (docs/results/async.md).
//!
//! Two variants of each: every handler is an `async fn` that awaits nothing (`async-pingpong`,
//! `async-counting`), or one that awaits a ready future once per message
//! (`async-pingpong-ready`, `async-counting-ready`: `std::future::ready(()).await`, a future that
//! completes at its first poll). The actors' state, their handlers' bodies, the runs and their
//! checks are the sync versions' (`savina/pingpong.rs`, `savina/counting.rs`): sequence numbers
//! checked on both sides of Ping-Pong; count, sum and order of the increments for Counting. Only
//! the handlers are `async fn`; Counting's producer asks for the total with an awaited ask, the
//! one handler of these workloads that goes pending.

use crate::savina::counting::{self, Counter, CounterMsg, Producer, ProducerMsg};
use crate::savina::pingpong::{self, Ping, PingMsg, Pong, PongMsg};
use crate::{Bench, Fault, Measured, Run};
use loka::{Async, AsyncActor, AsyncContext, System};

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

/// The workload a peer runtime runs as the counterpart of one of these benchmarks, if any: its
/// sync-named `pingpong` or `counting`, the same work (`peers/rust/common`), whose handlers are
/// async by construction on the async peers (kameo's and ractor's `handle`, the tokio programs'
/// task loops). The `-ready` variants have none: a peer runs the same program for both, so
/// `loka bench compare` pits it against the plain variant only.
pub fn peer_workload(name: &str) -> Option<&'static str> {
    match name {
        "async-pingpong" => Some("pingpong"),
        "async-counting" => Some("counting"),
        _ => None,
    }
}

/// The per-message await of the `-ready` variants: a future ready at its first poll, which the
/// compiler cannot see through as a no-op (`black_box`), so the handler keeps an await point.
async fn maybe_await<const READY: bool>() {
    if READY {
        std::hint::black_box(std::future::ready(())).await;
    }
}

// ---- The sync workloads' actors, their handlers async ---------------------------------------

/// A sync workload's actor whose handler body runs inside an `async fn`.
trait Receive: Send + 'static {
    type Msg: Send + 'static;
    fn receive(&mut self, msg: Self::Msg);
}

impl Receive for Ping {
    type Msg = PingMsg;
    fn receive(&mut self, msg: PingMsg) {
        Ping::receive(self, msg)
    }
}

impl Receive for Pong {
    type Msg = PongMsg;
    fn receive(&mut self, msg: PongMsg) {
        Pong::receive(self, msg)
    }
}

impl Receive for Counter {
    type Msg = CounterMsg;
    fn receive(&mut self, msg: CounterMsg) {
        Counter::receive(self, msg)
    }
}

/// `S` as an [`AsyncActor`]: its handler awaits (or not: `READY`), then runs `S`'s body.
struct Awaiting<S, const READY: bool>(S);

impl<S: Receive, const READY: bool> AsyncActor for Awaiting<S, READY> {
    type Msg = S::Msg;
    async fn handle(&mut self, _ctx: &mut AsyncContext<Self>, msg: S::Msg) {
        maybe_await::<READY>().await;
        self.0.receive(msg);
    }
}

/// Counting's Producer, asking for the total with an awaited ask instead of a continuation.
struct AsyncProducer<const READY: bool>(Producer);

impl<const READY: bool> AsyncActor for AsyncProducer<READY> {
    type Msg = ProducerMsg;
    async fn handle(&mut self, ctx: &mut AsyncContext<Self>, msg: ProducerMsg) {
        maybe_await::<READY>().await;
        let Some(counter) = self.0.send_slice(msg) else {
            ctx.myself()
                .send(ProducerMsg::Continue)
                .expect("producer alive");
            return;
        };
        // All increments sent: await the total (this handler goes pending until the Counter
        // answers), pass it on, and stop.
        let total = ctx.ask(&counter, CounterMsg::Retrieve).await;
        self.0.finish(total);
        ctx.stop();
    }
}

fn pingpong<const READY: bool>(system: &System, run: &Run) -> Measured {
    let name = if READY {
        "async-pingpong-ready"
    } else {
        "async-pingpong"
    };
    let ping = system.spawn(Async::new(Awaiting::<_, READY>(Ping::new())));
    let pong = system.spawn(Async::new(Awaiting::<_, READY>(Pong::new())));
    pingpong::drive(system, run, name, ping, pong)
}

fn counting<const READY: bool>(system: &System, run: &Run) -> Measured {
    let name = if READY {
        "async-counting-ready"
    } else {
        "async-counting"
    };
    let increments = counting::increments(run);
    let counter = system.spawn(Async::new(Awaiting::<_, READY>(Counter::new())));
    let producer = system.spawn(Async::new(AsyncProducer::<READY>(Producer::new(
        counter, increments,
    ))));
    counting::drive(system, run, name, producer, increments)
}
