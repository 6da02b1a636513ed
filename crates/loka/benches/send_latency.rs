//! Send latency on one worker (criterion).
//!
//! * `round_trip_in_worker`: one request/response between two actors on the same worker: two
//!   sends, two wake-ups through the next slot, two activations. Measured inside the runtime (the
//!   actors run `iters` round trips, timed from the driver's first send to the last reply).
//! * `send_from_thread`: the cost of `ActorRef::send` from a plain thread into a mailbox whose
//!   actor is already scheduled (no wake-up): the mailbox push alone.

// criterion's macros generate undocumented items.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::time::{Duration, Instant};

enum PingMsg {
    Go(u64, ReplyTo<()>),
    Pong,
}

struct Ping {
    pong: ActorRef<ActorRef<PingMsg>>,
    me: Option<ActorRef<PingMsg>>,
    left: u64,
    done: Option<ReplyTo<()>>,
}

impl Actor for Ping {
    type Msg = PingMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: PingMsg) {
        if let PingMsg::Go(n, done) = msg {
            self.left = n;
            self.done = Some(done);
            self.me = Some(ctx.myself());
        }
        if self.left == 0 {
            if let Some(done) = self.done.take() {
                self.me = None;
                done.send(());
            }
            return;
        }
        self.left -= 1;
        let me = self.me.as_ref().expect("set on Go").clone();
        self.pong.send(me).expect("pong alive");
    }
}

struct Pong;
impl Actor for Pong {
    type Msg = ActorRef<PingMsg>;
    fn handle(&mut self, _ctx: &mut Context<Self>, reply_to: ActorRef<PingMsg>) {
        reply_to.send(PingMsg::Pong).expect("ping alive");
    }
}

struct Sink;
impl Actor for Sink {
    type Msg = u64;
    fn handle(&mut self, _ctx: &mut Context<Self>, n: u64) {
        std::hint::black_box(n);
    }
}

fn one_worker() -> System {
    System::builder()
        .workers(1)
        .build()
        .expect("valid configuration")
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("send");
    group.measurement_time(Duration::from_secs(3));

    let system = one_worker();
    let pong = system.spawn(Pong);
    let ping = system.spawn(Ping {
        pong,
        me: None,
        left: 0,
        done: None,
    });
    group.bench_function("round_trip_in_worker", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            ping.ask(|done| PingMsg::Go(iters, done))
                .expect("alive")
                .wait()
                .expect("reply");
            start.elapsed()
        })
    });
    drop(ping);
    system.shutdown();

    let system = one_worker();
    let sink = system.spawn(Sink);
    group.bench_function("send_from_thread", |b| {
        let mut n = 0u64;
        b.iter(|| {
            n += 1;
            sink.send(n).expect("alive")
        })
    });
    system.run_until_idle();
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
