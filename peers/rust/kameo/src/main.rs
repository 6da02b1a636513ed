//! The docs/internals/benchmarks.md workloads on kameo: one tokio multi-thread runtime with `--threads`
//! workers, every actor a `#[derive(Actor)]` struct with one `Message<M>` impl per message,
//! `tell` for one-way sends and `ask` (with delegated or forwarded replies) wherever someone
//! waits for an answer.
//!
//! All actors get unbounded mailboxes: kameo's default bounded mailbox (64) makes a sender wait
//! for room, which can deadlock the cyclic patterns (big, chameneos) and is not what the other
//! runtimes do. A `tell(..).try_send()` to an unbounded mailbox never waits.

use std::sync::Arc;
use std::time::Instant;

use kameo::prelude::*;
use peer_common::{
    complement, compute, compute_angle, counting_slices, fib, fjcreate_expected, fjcreate_report,
    fjthrput_expected, fjthrput_report, Args, Colour, Identity, Outcome, Workload, XorShift64Star,
};

fn main() -> std::process::ExitCode {
    let args = Args::from_env("peer-kameo", 2);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let id = Identity {
        runtime: "kameo",
        engine: "tokio-multi-thread",
    };
    peer_common::run_all(id, &args, |w| rt.block_on(run(*w)))
}

async fn run(w: Workload) -> Outcome {
    match w {
        Workload::PingPong { round_trips } => pingpong(round_trips).await,
        Workload::Counting { increments } => counting(increments).await,
        Workload::ThreadRing { actors, hops } => threadring(actors, hops).await,
        Workload::FjThrput { actors, per_actor } => fjthrput(actors, per_actor).await,
        Workload::FjCreate { actors } => fjcreate(actors).await,
        Workload::Fib { n } => fib_run(n).await,
        Workload::Chameneos {
            creatures,
            meetings,
        } => chameneos(creatures, meetings).await,
        Workload::Big { actors, pings } => big(actors, pings).await,
    }
}

fn spawn<A: Actor<Args = A>>(actor: A) -> ActorRef<A> {
    A::spawn_with_mailbox(actor, mailbox::unbounded())
}

fn tell<A: Message<M>, M: Send + 'static>(to: &ActorRef<A>, msg: M) {
    // Only a stopped actor refuses a message to an unbounded mailbox: a bug in the workload.
    if to.tell(msg).try_send().is_err() {
        panic!("{} stopped before its last message", <A as Actor>::name());
    }
}

/// Stops the actors of a run once the clock has stopped; rings and meshes of references would
/// otherwise keep each other alive.
async fn stop_all<A: Actor>(actors: &[ActorRef<A>]) {
    for a in actors {
        a.kill();
    }
    for a in actors {
        a.wait_for_shutdown().await;
    }
}

// ---------------------------------------------------------------------------------- pingpong

#[derive(Actor)]
struct Pinger {
    ponger: ActorRef<Ponger>,
    round_trips: u64,
    pongs: u64,
    done: Option<ReplySender<u64>>,
}

#[derive(Actor)]
struct Ponger;

struct Start;
struct Ping(ActorRef<Pinger>);
struct Pong;

impl Message<Start> for Pinger {
    type Reply = DelegatedReply<u64>;

    async fn handle(&mut self, _: Start, ctx: &mut Context<Self, Self::Reply>) -> Self::Reply {
        let (reply, sender) = ctx.reply_sender();
        self.done = sender;
        tell(&self.ponger, Ping(ctx.actor_ref().clone()));
        reply
    }
}

impl Message<Pong> for Pinger {
    type Reply = ();

    async fn handle(&mut self, _: Pong, ctx: &mut Context<Self, ()>) {
        self.pongs += 1;
        if self.pongs < self.round_trips {
            tell(&self.ponger, Ping(ctx.actor_ref().clone()));
        } else if let Some(done) = self.done.take() {
            done.send(self.pongs);
        }
    }
}

impl Message<Ping> for Ponger {
    type Reply = ();

    async fn handle(&mut self, Ping(from): Ping, _: &mut Context<Self, ()>) {
        tell(&from, Pong);
    }
}

async fn pingpong(round_trips: u64) -> Outcome {
    let ponger = spawn(Ponger);
    let pinger = spawn(Pinger {
        ponger: ponger.clone(),
        round_trips,
        pongs: 0,
        done: None,
    });
    let start = Instant::now();
    let pongs = pinger.ask(Start).await.ok();
    let outcome = Outcome::since(start, pongs == Some(round_trips));
    stop_all(&[pinger]).await;
    stop_all(&[ponger]).await;
    outcome
}

// ---------------------------------------------------------------------------------- counting

#[derive(Actor)]
struct Counter {
    count: u64,
}

struct Increment;
struct Retrieve;

impl Message<Increment> for Counter {
    type Reply = ();

    async fn handle(&mut self, _: Increment, _: &mut Context<Self, ()>) {
        self.count += 1;
    }
}

impl Message<Retrieve> for Counter {
    type Reply = u64;

    async fn handle(&mut self, _: Retrieve, _: &mut Context<Self, u64>) -> u64 {
        self.count
    }
}

#[derive(Actor)]
struct Producer {
    counter: ActorRef<Counter>,
    increments: u64,
}

struct Produce;

impl Message<Produce> for Producer {
    /// The query is forwarded, so the Counter's answer goes straight back to the driver.
    type Reply = ForwardedReply<Retrieve, u64>;

    async fn handle(&mut self, _: Produce, ctx: &mut Context<Self, Self::Reply>) -> Self::Reply {
        // A slice at a time, yielding between slices, as loka's Producer (`COUNTING_SLICE`).
        for slice in counting_slices(self.increments) {
            for _ in 0..slice {
                tell(&self.counter, Increment);
            }
            tokio::task::yield_now().await;
        }
        ctx.forward(&self.counter, Retrieve).await
    }
}

async fn counting(increments: u64) -> Outcome {
    let counter = spawn(Counter { count: 0 });
    let producer = spawn(Producer {
        counter: counter.clone(),
        increments,
    });
    let start = Instant::now();
    let count = producer.ask(Produce).await.ok();
    let outcome = Outcome::since(start, count == Some(increments));
    stop_all(&[producer]).await;
    stop_all(&[counter]).await;
    outcome
}

// -------------------------------------------------------------------------------- threadring

#[derive(Actor)]
struct RingMember {
    next: Option<ActorRef<RingMember>>,
}

struct Connect(ActorRef<RingMember>);
/// The driver's `Token(R)` to actor 0: asked, so the completion can be answered.
struct Launch(u64);
/// The reply sender travels with the token to whichever member takes the last hop.
struct Token {
    left: u64,
    hops: u64,
    done: Option<ReplySender<u64>>,
}

impl RingMember {
    fn take(&self, Token { left, hops, done }: Token) {
        if left == 0 {
            if let Some(done) = done {
                done.send(hops);
            }
        } else {
            let next = self.next.as_ref().expect("token before Connect");
            tell(
                next,
                Token {
                    left: left - 1,
                    hops: hops + 1,
                    done,
                },
            );
        }
    }
}

impl Message<Connect> for RingMember {
    type Reply = ();

    async fn handle(&mut self, Connect(next): Connect, _: &mut Context<Self, ()>) {
        self.next = Some(next);
    }
}

impl Message<Launch> for RingMember {
    type Reply = DelegatedReply<u64>;

    async fn handle(
        &mut self,
        Launch(left): Launch,
        ctx: &mut Context<Self, Self::Reply>,
    ) -> Self::Reply {
        let (reply, done) = ctx.reply_sender();
        self.take(Token {
            left,
            hops: 0,
            done,
        });
        reply
    }
}

impl Message<Token> for RingMember {
    type Reply = ();

    async fn handle(&mut self, token: Token, _: &mut Context<Self, ()>) {
        self.take(token);
    }
}

async fn threadring(actors: usize, hops: u64) -> Outcome {
    let ring: Vec<_> = (0..actors)
        .map(|_| spawn(RingMember { next: None }))
        .collect();
    for (i, member) in ring.iter().enumerate() {
        tell(member, Connect(ring[(i + 1) % actors].clone()));
    }
    let start = Instant::now();
    let taken = ring[0].ask(Launch(hops)).await.ok();
    let outcome = Outcome::since(start, taken == Some(hops));
    stop_all(&ring).await;
    outcome
}

// ------------------------------------------------------------------------------------- sink

/// Collects the reports of many actors and answers the driver's `Wait` once all are in: how
/// many carried the wanted count, and the (wrapping) sum of their fingerprints.
#[derive(Actor)]
struct Sink {
    expected: u64,
    want: u64,
    received: u64,
    correct: u64,
    fingerprint: u64,
    waiter: Option<ReplySender<(u64, u64)>>,
}

/// A count, and a fingerprint (0 where the workload has none).
struct Report(u64, u64);
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
                waiter.send((self.correct, self.fingerprint));
            }
        }
    }
}

impl Message<Report> for Sink {
    type Reply = ();

    async fn handle(&mut self, Report(v, fingerprint): Report, _: &mut Context<Self, ()>) {
        self.received += 1;
        self.correct += u64::from(v == self.want);
        self.fingerprint = self.fingerprint.wrapping_add(fingerprint);
        self.answer_if_complete();
    }
}

impl Message<Wait> for Sink {
    type Reply = DelegatedReply<(u64, u64)>;

    async fn handle(&mut self, _: Wait, ctx: &mut Context<Self, Self::Reply>) -> Self::Reply {
        let (reply, sender) = ctx.reply_sender();
        self.waiter = sender;
        self.answer_if_complete();
        reply
    }
}

// ---------------------------------------------------------------------------------- fjthrput

#[derive(Actor)]
struct ThrputWorker {
    sink: ActorRef<Sink>,
    per_actor: u64,
    received: u64,
    sum: f64,
}

/// The angle to compute.
struct Work(f64);

impl Message<Work> for ThrputWorker {
    type Reply = ();

    async fn handle(&mut self, Work(angle): Work, _: &mut Context<Self, ()>) {
        self.sum += compute(angle);
        self.received += 1;
        if self.received == self.per_actor {
            tell(&self.sink, Report(self.received, fjthrput_report(self.sum)));
        }
    }
}

async fn fjthrput(actors: usize, per_actor: u64) -> Outcome {
    let sink = spawn(Sink::new(actors as u64, per_actor));
    let workers: Vec<_> = (0..actors)
        .map(|_| {
            spawn(ThrputWorker {
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
            tell(w, Work(compute_angle(k)));
            k += 1;
        }
    }
    let complete = sink.ask(Wait).await.ok();
    let outcome = Outcome::since(start, complete == Some((actors as u64, expected)));
    stop_all(&workers).await;
    stop_all(&[sink]).await;
    outcome
}

// ---------------------------------------------------------------------------------- fjcreate

#[derive(Actor)]
struct CreatedWorker;

/// Where to reply, and the angle to compute.
struct Request(ActorRef<Sink>, f64);

impl Message<Request> for CreatedWorker {
    type Reply = ();

    async fn handle(&mut self, Request(reply_to, angle): Request, ctx: &mut Context<Self, ()>) {
        tell(&reply_to, Report(1, fjcreate_report(compute(angle))));
        ctx.stop();
    }
}

async fn fjcreate(actors: u64) -> Outcome {
    let sink = spawn(Sink::new(actors, 1));
    let expected = fjcreate_expected(actors);
    let start = Instant::now();
    for k in 0..actors {
        tell(
            &spawn(CreatedWorker),
            Request(sink.clone(), compute_angle(k)),
        );
    }
    let replies = sink.ask(Wait).await.ok();
    let outcome = Outcome::since(start, replies == Some((actors, expected)));
    stop_all(&[sink]).await;
    outcome
}

// --------------------------------------------------------------------------------------- fib

#[derive(Actor)]
struct Fib;

struct FibRequest(u32);

impl Message<FibRequest> for Fib {
    type Reply = u64;

    async fn handle(&mut self, FibRequest(n): FibRequest, ctx: &mut Context<Self, u64>) -> u64 {
        ctx.stop();
        if n <= 2 {
            return 1;
        }
        let (left, right) = (spawn(Fib), spawn(Fib));
        // Both requests are in flight at once; this actor has nothing else to do meanwhile.
        let (a, b) = tokio::join!(left.ask(FibRequest(n - 1)), right.ask(FibRequest(n - 2)));
        a.expect("left child failed") + b.expect("right child failed")
    }
}

async fn fib_run(n: u32) -> Outcome {
    let start = Instant::now();
    let root = spawn(Fib);
    let value = root.ask(FibRequest(n)).await.ok();
    let outcome = Outcome::since(start, value == Some(fib(n)));
    root.wait_for_shutdown().await;
    outcome
}

// --------------------------------------------------------------------------------- chameneos

#[derive(Actor)]
struct Mall {
    meetings_left: u64,
    creatures: usize,
    waiting: Option<ActorRef<Chameneo>>,
    faded: usize,
    total: u64,
    done: Option<ReplySender<u64>>,
}

#[derive(Actor)]
struct Chameneo {
    mall: ActorRef<Mall>,
    colour: Colour,
    meetings: u64,
}

struct Run(Vec<ActorRef<Chameneo>>);
/// Sent by a chameneo to the Mall, and forwarded unchanged by the Mall to the waiting one.
struct Meet {
    from: ActorRef<Chameneo>,
    colour: Colour,
}
struct MeetingCount(u64);
struct Change(Colour);
struct Exit;

impl Message<Run> for Mall {
    type Reply = DelegatedReply<u64>;

    async fn handle(
        &mut self,
        Run(creatures): Run,
        ctx: &mut Context<Self, Self::Reply>,
    ) -> Self::Reply {
        let (reply, sender) = ctx.reply_sender();
        self.done = sender;
        for c in &creatures {
            tell(c, Start);
        }
        reply
    }
}

impl Message<Meet> for Mall {
    type Reply = ();

    async fn handle(&mut self, meet: Meet, _: &mut Context<Self, ()>) {
        if self.meetings_left == 0 {
            // All meetings are done: every later visitor is asked for its meeting count.
            tell(&meet.from, Exit);
        } else if let Some(waiting) = self.waiting.take() {
            self.meetings_left -= 1;
            tell(&waiting, meet);
        } else {
            self.waiting = Some(meet.from);
        }
    }
}

impl Message<MeetingCount> for Mall {
    type Reply = ();

    async fn handle(&mut self, MeetingCount(n): MeetingCount, _: &mut Context<Self, ()>) {
        self.faded += 1;
        self.total += n;
        if self.faded == self.creatures {
            if let Some(done) = self.done.take() {
                done.send(self.total);
            }
        }
    }
}

impl Chameneo {
    fn visit_mall(&self, ctx: &Context<Self, ()>) {
        tell(
            &self.mall,
            Meet {
                from: ctx.actor_ref().clone(),
                colour: self.colour,
            },
        );
    }
}

impl Message<Start> for Chameneo {
    type Reply = ();

    async fn handle(&mut self, _: Start, ctx: &mut Context<Self, ()>) {
        self.visit_mall(ctx);
    }
}

impl Message<Meet> for Chameneo {
    type Reply = ();

    async fn handle(&mut self, Meet { from, colour }: Meet, ctx: &mut Context<Self, ()>) {
        self.colour = complement(self.colour, colour);
        self.meetings += 1;
        tell(&from, Change(self.colour));
        self.visit_mall(ctx);
    }
}

impl Message<Change> for Chameneo {
    type Reply = ();

    async fn handle(&mut self, Change(colour): Change, ctx: &mut Context<Self, ()>) {
        self.colour = colour;
        self.meetings += 1;
        self.visit_mall(ctx);
    }
}

impl Message<Exit> for Chameneo {
    type Reply = ();

    async fn handle(&mut self, _: Exit, ctx: &mut Context<Self, ()>) {
        tell(&self.mall, MeetingCount(self.meetings));
        ctx.stop();
    }
}

async fn chameneos(creatures: usize, meetings: u64) -> Outcome {
    let mall = spawn(Mall {
        meetings_left: meetings,
        creatures,
        waiting: None,
        faded: 0,
        total: 0,
        done: None,
    });
    let all: Vec<_> = (0..creatures)
        .map(|i| {
            spawn(Chameneo {
                mall: mall.clone(),
                colour: (i % 3) as Colour,
                meetings: 0,
            })
        })
        .collect();
    let start = Instant::now();
    let total = mall.ask(Run(all.clone())).await.ok();
    let outcome = Outcome::since(start, total == Some(2 * meetings));
    stop_all(&all).await;
    stop_all(&[mall]).await;
    outcome
}

// --------------------------------------------------------------------------------------- big

#[derive(Actor)]
struct BigActor {
    me: usize,
    pings: u64,
    pongs: u64,
    rng: XorShift64Star,
    all: Arc<Vec<ActorRef<BigActor>>>,
    sink: ActorRef<Sink>,
}

struct Neighbours(Arc<Vec<ActorRef<BigActor>>>);
struct BigPing {
    from: usize,
}
struct BigPong;

impl BigActor {
    fn ping_someone(&mut self) {
        let target = self.rng.next_target(self.me, self.all.len());
        tell(&self.all[target], BigPing { from: self.me });
    }
}

impl Message<Neighbours> for BigActor {
    type Reply = ();

    async fn handle(&mut self, Neighbours(all): Neighbours, _: &mut Context<Self, ()>) {
        self.all = all;
    }
}

impl Message<Start> for BigActor {
    type Reply = ();

    async fn handle(&mut self, _: Start, _: &mut Context<Self, ()>) {
        self.ping_someone();
    }
}

impl Message<BigPing> for BigActor {
    type Reply = ();

    async fn handle(&mut self, BigPing { from }: BigPing, _: &mut Context<Self, ()>) {
        tell(&self.all[from], BigPong);
    }
}

impl Message<BigPong> for BigActor {
    type Reply = ();

    async fn handle(&mut self, _: BigPong, _: &mut Context<Self, ()>) {
        self.pongs += 1;
        if self.pongs == self.pings {
            tell(&self.sink, Report(self.pongs, 0));
        } else {
            self.ping_someone();
        }
    }
}

async fn big(actors: usize, pings: u64) -> Outcome {
    let sink = spawn(Sink::new(actors as u64, pings));
    let all: Vec<_> = (0..actors)
        .map(|me| {
            let rng = XorShift64Star::for_actor(me);
            spawn(BigActor {
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
        tell(a, Neighbours(all.clone()));
    }
    let start = Instant::now();
    for a in all.iter() {
        tell(a, Start);
    }
    let reports = sink.ask(Wait).await.ok().map(|(correct, _)| correct);
    let outcome = Outcome::since(start, reports == Some(actors as u64));
    stop_all(&all).await;
    stop_all(&[sink]).await;
    outcome
}
