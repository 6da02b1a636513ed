//! The docs/internals/benchmarks.md workloads on actix: every actor an `Actor` with one `Handler<M>` per
//! message, `do_send` for one-way sends and `send(..).await` (answered by a `ResponseFuture`
//! where the answer comes later) wherever someone waits for an answer.
//!
//! actix runs each arbiter on its own single-threaded event loop and never moves an actor, so
//! its way to use several cores is several arbiters: `--threads N` (N > 1) starts N arbiters
//! and places actors round robin over them (runtime `actix`); the driver runs on the System
//! thread. `--threads 1` keeps everything, driver included, on the System thread
//! (runtime `actix-1thread`).
//!
//! An actix actor stops by itself once no address to it is left and its mailbox looks empty,
//! and a message enqueued just before the last address is dropped can race with that check and
//! be lost. So whoever expects an answer from an actor keeps its address until the answer is in.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use actix::dev::OneshotSender;
use actix::prelude::*;
use peer_common::{
    complement, compute, compute_angle, counting_slices, fib, fjcreate_expected, fjcreate_report,
    fjthrput_expected, fjthrput_report, Args, Colour, Identity, Outcome, Workload, XorShift64Star,
};
use tokio::sync::oneshot;

fn main() -> std::process::ExitCode {
    let args = Args::from_env("peer-actix", 2);
    let system = System::new();
    let (id, placement, arbiters) = if args.threads == 1 {
        let id = Identity {
            runtime: "actix-1thread",
            engine: "system-arbiter",
        };
        (id, Placement::SystemThread, Vec::new())
    } else {
        let arbiters: Vec<Arbiter> = (0..args.threads).map(|_| Arbiter::new()).collect();
        let handles = arbiters.iter().map(Arbiter::handle).collect();
        let id = Identity {
            runtime: "actix",
            engine: "arbiters",
        };
        (
            id,
            Placement::RoundRobin {
                handles,
                next: AtomicUsize::new(0),
            },
            arbiters,
        )
    };
    let placement = Arc::new(placement);
    let code = peer_common::run_all(id, &args, |w| system.block_on(run(*w, placement.clone())));
    for arbiter in arbiters {
        arbiter.stop();
        arbiter.join().expect("arbiter thread");
    }
    code
}

async fn run(w: Workload, place: Arc<Placement>) -> Outcome {
    match w {
        Workload::PingPong { round_trips } => pingpong(&place, round_trips).await,
        Workload::Counting { increments } => counting(&place, increments).await,
        Workload::ThreadRing { actors, hops } => threadring(&place, actors, hops).await,
        Workload::FjThrput { actors, per_actor } => fjthrput(&place, actors, per_actor).await,
        Workload::FjCreate { actors } => fjcreate(&place, actors).await,
        Workload::Fib { n } => fib_run(place, n).await,
        Workload::Chameneos {
            creatures,
            meetings,
        } => chameneos(&place, creatures, meetings).await,
        Workload::Big { actors, pings } => big(&place, actors, pings).await,
    }
}

/// Where new actors start: the current thread's arbiter, or the next arbiter in turn.
enum Placement {
    SystemThread,
    RoundRobin {
        handles: Vec<ArbiterHandle>,
        next: AtomicUsize,
    },
}

impl Placement {
    fn start<A>(&self, actor: A) -> Addr<A>
    where
        A: Actor<Context = Context<A>> + Send,
    {
        match self {
            Placement::SystemThread => actor.start(),
            Placement::RoundRobin { handles, next } => {
                let arbiter = &handles[next.fetch_add(1, Ordering::Relaxed) % handles.len()];
                A::start_in_arbiter(arbiter, move |_| actor)
            }
        }
    }
}

/// An answer that arrives after the handler has returned: the handler keeps the sender and
/// replies with the future of the receiver. A dropped sender answers `None`.
fn deferred<T: Send + 'static>() -> (OneshotSender<T>, ResponseFuture<Option<T>>) {
    let (tx, rx) = oneshot::channel();
    (tx, Box::pin(async move { rx.await.ok() }))
}

/// Stops an actor that other actors still refer to (rings, meshes); actix stops the rest by
/// itself once the last address to them is dropped after the run.
#[derive(Message)]
#[rtype(result = "()")]
struct Halt;

// ---------------------------------------------------------------------------------- pingpong

struct Pinger {
    ponger: Addr<Ponger>,
    round_trips: u64,
    pongs: u64,
    done: Option<OneshotSender<u64>>,
}

impl Actor for Pinger {
    type Context = Context<Self>;
}

struct Ponger;

impl Actor for Ponger {
    type Context = Context<Self>;
}

#[derive(Message)]
#[rtype(result = "Option<u64>")]
struct Start;

#[derive(Message)]
#[rtype(result = "()")]
struct Ping(Addr<Pinger>);

#[derive(Message)]
#[rtype(result = "()")]
struct Pong;

impl Handler<Start> for Pinger {
    type Result = ResponseFuture<Option<u64>>;

    fn handle(&mut self, _: Start, ctx: &mut Context<Self>) -> Self::Result {
        let (done, answer) = deferred();
        self.done = Some(done);
        self.ponger.do_send(Ping(ctx.address()));
        answer
    }
}

impl Handler<Pong> for Pinger {
    type Result = ();

    fn handle(&mut self, _: Pong, ctx: &mut Context<Self>) {
        self.pongs += 1;
        if self.pongs < self.round_trips {
            self.ponger.do_send(Ping(ctx.address()));
        } else if let Some(done) = self.done.take() {
            let _ = done.send(self.pongs);
        }
    }
}

impl Handler<Ping> for Ponger {
    type Result = ();

    fn handle(&mut self, Ping(from): Ping, _: &mut Context<Self>) {
        from.do_send(Pong);
    }
}

async fn pingpong(place: &Placement, round_trips: u64) -> Outcome {
    let ponger = place.start(Ponger);
    let pinger = place.start(Pinger {
        ponger,
        round_trips,
        pongs: 0,
        done: None,
    });
    let start = Instant::now();
    let pongs = pinger.send(Start).await.ok().flatten();
    Outcome::since(start, pongs == Some(round_trips))
}

// ---------------------------------------------------------------------------------- counting

struct Counter {
    count: u64,
}

impl Actor for Counter {
    type Context = Context<Self>;
}

#[derive(Message)]
#[rtype(result = "()")]
struct Increment;

#[derive(Message)]
#[rtype(result = "u64")]
struct Retrieve;

impl Handler<Increment> for Counter {
    type Result = ();

    fn handle(&mut self, _: Increment, _: &mut Context<Self>) {
        self.count += 1;
    }
}

impl Handler<Retrieve> for Counter {
    type Result = u64;

    fn handle(&mut self, _: Retrieve, _: &mut Context<Self>) -> u64 {
        self.count
    }
}

struct Producer {
    counter: Addr<Counter>,
    increments: u64,
}

impl Actor for Producer {
    type Context = Context<Self>;
}

#[derive(Message)]
#[rtype(result = "Option<u64>")]
struct Produce;

impl Handler<Produce> for Producer {
    type Result = ResponseFuture<Option<u64>>;

    /// A slice at a time, yielding to the arbiter between slices, as loka's Producer
    /// (`COUNTING_SLICE`); the query goes after the last slice.
    fn handle(&mut self, _: Produce, _: &mut Context<Self>) -> Self::Result {
        let (counter, increments) = (self.counter.clone(), self.increments);
        Box::pin(async move {
            for slice in counting_slices(increments) {
                for _ in 0..slice {
                    counter.do_send(Increment);
                }
                tokio::task::yield_now().await;
            }
            counter.send(Retrieve).await.ok()
        })
    }
}

async fn counting(place: &Placement, increments: u64) -> Outcome {
    let counter = place.start(Counter { count: 0 });
    let producer = place.start(Producer {
        counter,
        increments,
    });
    let start = Instant::now();
    let count = producer.send(Produce).await.ok().flatten();
    Outcome::since(start, count == Some(increments))
}

// -------------------------------------------------------------------------------- threadring

struct RingMember {
    next: Option<Addr<RingMember>>,
}

impl Actor for RingMember {
    type Context = Context<Self>;
}

#[derive(Message)]
#[rtype(result = "()")]
struct Connect(Addr<RingMember>);

/// The driver's `Token(R)` to actor 0: sent with `send`, so the completion can be answered.
#[derive(Message)]
#[rtype(result = "Option<u64>")]
struct Launch(u64);

/// The reply sender travels with the token to whichever member takes the last hop.
#[derive(Message)]
#[rtype(result = "()")]
struct Token {
    left: u64,
    hops: u64,
    done: OneshotSender<u64>,
}

impl RingMember {
    fn take(&self, Token { left, hops, done }: Token) {
        if left == 0 {
            let _ = done.send(hops);
        } else {
            let next = self.next.as_ref().expect("token before Connect");
            next.do_send(Token {
                left: left - 1,
                hops: hops + 1,
                done,
            });
        }
    }
}

impl Handler<Connect> for RingMember {
    type Result = ();

    fn handle(&mut self, Connect(next): Connect, _: &mut Context<Self>) {
        self.next = Some(next);
    }
}

impl Handler<Launch> for RingMember {
    type Result = ResponseFuture<Option<u64>>;

    fn handle(&mut self, Launch(left): Launch, _: &mut Context<Self>) -> Self::Result {
        let (done, answer) = deferred();
        self.take(Token {
            left,
            hops: 0,
            done,
        });
        answer
    }
}

impl Handler<Token> for RingMember {
    type Result = ();

    fn handle(&mut self, token: Token, _: &mut Context<Self>) {
        self.take(token);
    }
}

impl Handler<Halt> for RingMember {
    type Result = ();

    fn handle(&mut self, _: Halt, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}

async fn threadring(place: &Placement, actors: usize, hops: u64) -> Outcome {
    let ring: Vec<_> = (0..actors)
        .map(|_| place.start(RingMember { next: None }))
        .collect();
    for (i, member) in ring.iter().enumerate() {
        member.do_send(Connect(ring[(i + 1) % actors].clone()));
    }
    let start = Instant::now();
    let taken = ring[0].send(Launch(hops)).await.ok().flatten();
    let outcome = Outcome::since(start, taken == Some(hops));
    for member in &ring {
        member.do_send(Halt);
    }
    outcome
}

// ------------------------------------------------------------------------------------- sink

/// Collects the reports of many actors and answers the driver's `Wait` once all are in: how
/// many carried the wanted count, and the (wrapping) sum of their fingerprints.
struct Sink {
    expected: u64,
    want: u64,
    received: u64,
    correct: u64,
    fingerprint: u64,
    waiter: Option<OneshotSender<(u64, u64)>>,
}

impl Actor for Sink {
    type Context = Context<Self>;
}

#[derive(Message)]
#[rtype(result = "()")]
/// A count, and a fingerprint (0 where the workload has none).
struct Report(u64, u64);

#[derive(Message)]
#[rtype(result = "Option<(u64, u64)>")]
struct Wait;

impl Sink {
    fn new(expected: u64, want: u64) -> Sink {
        Sink {
            expected,
            want,
            received: 0,
            correct: 0,
            fingerprint: 0,
            waiter: None,
        }
    }

    fn answer_if_complete(&mut self) {
        if self.received == self.expected {
            if let Some(waiter) = self.waiter.take() {
                let _ = waiter.send((self.correct, self.fingerprint));
            }
        }
    }
}

impl Handler<Report> for Sink {
    type Result = ();

    fn handle(&mut self, Report(v, fingerprint): Report, _: &mut Context<Self>) {
        self.received += 1;
        self.correct += u64::from(v == self.want);
        self.fingerprint = self.fingerprint.wrapping_add(fingerprint);
        self.answer_if_complete();
    }
}

impl Handler<Wait> for Sink {
    type Result = ResponseFuture<Option<(u64, u64)>>;

    fn handle(&mut self, _: Wait, _: &mut Context<Self>) -> Self::Result {
        let (waiter, answer) = deferred();
        self.waiter = Some(waiter);
        self.answer_if_complete();
        answer
    }
}

// ---------------------------------------------------------------------------------- fjthrput

struct ThrputWorker {
    sink: Addr<Sink>,
    per_actor: u64,
    received: u64,
    sum: f64,
}

impl Actor for ThrputWorker {
    type Context = Context<Self>;
}

/// The angle to compute.
#[derive(Message)]
#[rtype(result = "()")]
struct Work(f64);

impl Handler<Work> for ThrputWorker {
    type Result = ();

    fn handle(&mut self, Work(angle): Work, _: &mut Context<Self>) {
        self.sum += compute(angle);
        self.received += 1;
        if self.received == self.per_actor {
            self.sink
                .do_send(Report(self.received, fjthrput_report(self.sum)));
        }
    }
}

async fn fjthrput(place: &Placement, actors: usize, per_actor: u64) -> Outcome {
    let sink = place.start(Sink::new(actors as u64, per_actor));
    let workers: Vec<_> = (0..actors)
        .map(|_| {
            place.start(ThrputWorker {
                sink: sink.clone(),
                per_actor,
                received: 0,
                sum: 0.0,
            })
        })
        .collect();
    let expected = fjthrput_expected(actors, per_actor);
    let start = Instant::now();
    let mut k = 0;
    for _ in 0..per_actor {
        for w in &workers {
            w.do_send(Work(compute_angle(k)));
            k += 1;
        }
    }
    let complete = sink.send(Wait).await.ok().flatten();
    Outcome::since(start, complete == Some((actors as u64, expected)))
}

// ---------------------------------------------------------------------------------- fjcreate

struct CreatedWorker;

impl Actor for CreatedWorker {
    type Context = Context<Self>;
}

#[derive(Message)]
#[rtype(result = "()")]
/// Where to reply, and the angle to compute.
struct Request(Addr<Sink>, f64);

impl Handler<Request> for CreatedWorker {
    type Result = ();

    fn handle(&mut self, Request(reply_to, angle): Request, ctx: &mut Context<Self>) {
        reply_to.do_send(Report(1, fjcreate_report(compute(angle))));
        ctx.stop();
    }
}

async fn fjcreate(place: &Placement, actors: u64) -> Outcome {
    let sink = place.start(Sink::new(actors, 1));
    let mut workers = Vec::with_capacity(actors as usize);
    let expected = fjcreate_expected(actors);
    let start = Instant::now();
    for k in 0..actors {
        let worker = place.start(CreatedWorker);
        worker.do_send(Request(sink.clone(), compute_angle(k)));
        workers.push(worker);
    }
    let replies = sink.send(Wait).await.ok().flatten();
    Outcome::since(start, replies == Some((actors, expected)))
}

// --------------------------------------------------------------------------------------- fib

/// Children are placed like every other actor, so the tree spreads over all arbiters.
struct Fib {
    place: Arc<Placement>,
}

impl Actor for Fib {
    type Context = Context<Self>;
}

#[derive(Message)]
#[rtype(result = "u64")]
struct FibRequest(u32);

impl Handler<FibRequest> for Fib {
    type Result = ResponseFuture<u64>;

    fn handle(&mut self, FibRequest(n): FibRequest, _: &mut Context<Self>) -> Self::Result {
        if n <= 2 {
            return Box::pin(async { 1 });
        }
        let left = self.place.start(Fib {
            place: self.place.clone(),
        });
        let right = self.place.start(Fib {
            place: self.place.clone(),
        });
        // Both requests are in flight at once; the future keeps the children's addresses until
        // they have answered, and dropping them then stops the children.
        Box::pin(async move {
            let (a, b) = tokio::join!(left.send(FibRequest(n - 1)), right.send(FibRequest(n - 2)));
            a.expect("left child failed") + b.expect("right child failed")
        })
    }
}

async fn fib_run(place: Arc<Placement>, n: u32) -> Outcome {
    let start = Instant::now();
    let root = place.start(Fib {
        place: place.clone(),
    });
    let value = root.send(FibRequest(n)).await.ok();
    Outcome::since(start, value == Some(fib(n)))
}

// --------------------------------------------------------------------------------- chameneos

struct Mall {
    meetings_left: u64,
    creatures: usize,
    waiting: Option<Addr<Chameneo>>,
    faded: usize,
    total: u64,
    done: Option<OneshotSender<u64>>,
}

impl Actor for Mall {
    type Context = Context<Self>;
}

struct Chameneo {
    mall: Addr<Mall>,
    colour: Colour,
    meetings: u64,
}

impl Actor for Chameneo {
    type Context = Context<Self>;
}

#[derive(Message)]
#[rtype(result = "Option<u64>")]
struct Run(Vec<Addr<Chameneo>>);

/// Sent by a chameneo to the Mall, and forwarded unchanged by the Mall to the waiting one.
#[derive(Message)]
#[rtype(result = "()")]
struct Meet {
    from: Addr<Chameneo>,
    colour: Colour,
}

#[derive(Message)]
#[rtype(result = "()")]
struct MeetingCount(u64);

#[derive(Message)]
#[rtype(result = "()")]
struct Change(Colour);

#[derive(Message)]
#[rtype(result = "()")]
struct Exit;

#[derive(Message)]
#[rtype(result = "()")]
struct GoToMall;

impl Handler<Run> for Mall {
    type Result = ResponseFuture<Option<u64>>;

    fn handle(&mut self, Run(creatures): Run, _: &mut Context<Self>) -> Self::Result {
        let (done, answer) = deferred();
        self.done = Some(done);
        for c in &creatures {
            c.do_send(GoToMall);
        }
        answer
    }
}

impl Handler<Meet> for Mall {
    type Result = ();

    fn handle(&mut self, meet: Meet, _: &mut Context<Self>) {
        if self.meetings_left == 0 {
            // All meetings are done: every later visitor is asked for its meeting count.
            meet.from.do_send(Exit);
        } else if let Some(waiting) = self.waiting.take() {
            self.meetings_left -= 1;
            waiting.do_send(meet);
        } else {
            self.waiting = Some(meet.from);
        }
    }
}

impl Handler<MeetingCount> for Mall {
    type Result = ();

    fn handle(&mut self, MeetingCount(n): MeetingCount, _: &mut Context<Self>) {
        self.faded += 1;
        self.total += n;
        if self.faded == self.creatures {
            if let Some(done) = self.done.take() {
                let _ = done.send(self.total);
            }
        }
    }
}

impl Chameneo {
    fn visit_mall(&self, ctx: &Context<Self>) {
        self.mall.do_send(Meet {
            from: ctx.address(),
            colour: self.colour,
        });
    }
}

impl Handler<GoToMall> for Chameneo {
    type Result = ();

    fn handle(&mut self, _: GoToMall, ctx: &mut Context<Self>) {
        self.visit_mall(ctx);
    }
}

impl Handler<Meet> for Chameneo {
    type Result = ();

    fn handle(&mut self, Meet { from, colour }: Meet, ctx: &mut Context<Self>) {
        self.colour = complement(self.colour, colour);
        self.meetings += 1;
        from.do_send(Change(self.colour));
        self.visit_mall(ctx);
    }
}

impl Handler<Change> for Chameneo {
    type Result = ();

    fn handle(&mut self, Change(colour): Change, ctx: &mut Context<Self>) {
        self.colour = colour;
        self.meetings += 1;
        self.visit_mall(ctx);
    }
}

impl Handler<Exit> for Chameneo {
    type Result = ();

    fn handle(&mut self, _: Exit, ctx: &mut Context<Self>) {
        self.mall.do_send(MeetingCount(self.meetings));
        ctx.stop();
    }
}

async fn chameneos(place: &Placement, creatures: usize, meetings: u64) -> Outcome {
    let mall = place.start(Mall {
        meetings_left: meetings,
        creatures,
        waiting: None,
        faded: 0,
        total: 0,
        done: None,
    });
    let all: Vec<_> = (0..creatures)
        .map(|i| {
            place.start(Chameneo {
                mall: mall.clone(),
                colour: (i % 3) as Colour,
                meetings: 0,
            })
        })
        .collect();
    let start = Instant::now();
    let total = mall.send(Run(all.clone())).await.ok().flatten();
    Outcome::since(start, total == Some(2 * meetings))
}

// --------------------------------------------------------------------------------------- big

struct BigActor {
    me: usize,
    pings: u64,
    pongs: u64,
    rng: XorShift64Star,
    all: Arc<Vec<Addr<BigActor>>>,
    sink: Addr<Sink>,
}

impl Actor for BigActor {
    type Context = Context<Self>;
}

#[derive(Message)]
#[rtype(result = "()")]
struct Neighbours(Arc<Vec<Addr<BigActor>>>);

#[derive(Message)]
#[rtype(result = "()")]
struct BigStart;

#[derive(Message)]
#[rtype(result = "()")]
struct BigPing {
    from: usize,
}

#[derive(Message)]
#[rtype(result = "()")]
struct BigPong;

impl BigActor {
    fn ping_someone(&mut self) {
        let target = self.rng.next_target(self.me, self.all.len());
        self.all[target].do_send(BigPing { from: self.me });
    }
}

impl Handler<Neighbours> for BigActor {
    type Result = ();

    fn handle(&mut self, Neighbours(all): Neighbours, _: &mut Context<Self>) {
        self.all = all;
    }
}

impl Handler<BigStart> for BigActor {
    type Result = ();

    fn handle(&mut self, _: BigStart, _: &mut Context<Self>) {
        self.ping_someone();
    }
}

impl Handler<BigPing> for BigActor {
    type Result = ();

    fn handle(&mut self, BigPing { from }: BigPing, _: &mut Context<Self>) {
        self.all[from].do_send(BigPong);
    }
}

impl Handler<BigPong> for BigActor {
    type Result = ();

    fn handle(&mut self, _: BigPong, _: &mut Context<Self>) {
        self.pongs += 1;
        if self.pongs == self.pings {
            self.sink.do_send(Report(self.pongs, 0));
        } else {
            self.ping_someone();
        }
    }
}

impl Handler<Halt> for BigActor {
    type Result = ();

    fn handle(&mut self, _: Halt, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}

async fn big(place: &Placement, actors: usize, pings: u64) -> Outcome {
    let sink = place.start(Sink::new(actors as u64, pings));
    let all: Vec<_> = (0..actors)
        .map(|me| {
            let rng = XorShift64Star::for_actor(me);
            place.start(BigActor {
                me,
                pings,
                pongs: 0,
                rng,
                all: Arc::default(),
                sink: sink.clone(),
            })
        })
        .collect();
    let all = Arc::new(all);
    for a in all.iter() {
        a.do_send(Neighbours(all.clone()));
    }
    let start = Instant::now();
    for a in all.iter() {
        a.do_send(BigStart);
    }
    let reports = sink
        .send(Wait)
        .await
        .ok()
        .flatten()
        .map(|(correct, _)| correct);
    let outcome = Outcome::since(start, reports == Some(actors as u64));
    for a in all.iter() {
        a.do_send(Halt);
    }
    outcome
}
