//! The docs/internals/benchmarks.md workloads on ractor: one tokio multi-thread runtime with `--threads`
//! workers, every actor an `Actor` impl with an enum `Msg`, `cast` for one-way sends and
//! `call` / `RpcReplyPort` wherever someone waits for an answer.

use std::sync::Arc;
use std::time::Instant;

use peer_common::{
    complement, compute, compute_angle, counting_slices, fib, fjcreate_expected, fjcreate_report,
    fjthrput_expected, fjthrput_report, Args, Colour, Identity, Outcome, Workload, XorShift64Star,
};
use ractor::concurrency::JoinHandle;
use ractor::rpc::CallResult;
use ractor::{Actor, ActorCell, ActorProcessingErr, ActorRef, RpcReplyPort};

type Handled = Result<(), ActorProcessingErr>;

fn main() -> std::process::ExitCode {
    let args = Args::from_env("peer-ractor", 2);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let id = Identity {
        runtime: "ractor",
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

/// The actors of one run, so they can all be stopped (and awaited) once the clock has stopped:
/// ractor actors live until stopped, and rings or meshes of references would otherwise leak.
#[derive(Default)]
struct Crew(Vec<(ActorCell, JoinHandle<()>)>);

impl Crew {
    async fn spawn<A: Actor>(&mut self, actor: A, args: A::Arguments) -> ActorRef<A::Msg> {
        let (actor_ref, handle) = Actor::spawn(None, actor, args).await.expect("spawn actor");
        self.0.push((actor_ref.get_cell(), handle));
        actor_ref
    }

    async fn stop(self) {
        for (cell, _) in &self.0 {
            cell.stop(None);
        }
        for (_, handle) in self.0 {
            let _ = handle.await;
        }
    }
}

fn answer<T>(reply: Result<CallResult<T>, impl std::fmt::Debug>) -> Option<T> {
    match reply {
        Ok(CallResult::Success(v)) => Some(v),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------- pingpong

struct Ping;
enum PingMsg {
    Start(RpcReplyPort<u64>),
    Pong,
}
struct PingState {
    pong: ActorRef<PongMsg>,
    round_trips: u64,
    pongs: u64,
    done: Option<RpcReplyPort<u64>>,
}

impl Actor for Ping {
    type Msg = PingMsg;
    type State = PingState;
    type Arguments = (ActorRef<PongMsg>, u64);

    async fn pre_start(
        &self,
        _: ActorRef<PingMsg>,
        (pong, round_trips): Self::Arguments,
    ) -> Result<PingState, ActorProcessingErr> {
        Ok(PingState {
            pong,
            round_trips,
            pongs: 0,
            done: None,
        })
    }

    async fn handle(&self, myself: ActorRef<PingMsg>, msg: PingMsg, s: &mut PingState) -> Handled {
        match msg {
            PingMsg::Start(done) => s.done = Some(done),
            PingMsg::Pong => {
                s.pongs += 1;
                if s.pongs == s.round_trips {
                    if let Some(done) = s.done.take() {
                        done.send(s.pongs)?;
                    }
                    return Ok(());
                }
            }
        }
        s.pong.cast(PongMsg::Ping(myself))?;
        Ok(())
    }
}

struct Pong;
enum PongMsg {
    Ping(ActorRef<PingMsg>),
}

impl Actor for Pong {
    type Msg = PongMsg;
    type State = ();
    type Arguments = ();

    async fn pre_start(&self, _: ActorRef<PongMsg>, _: ()) -> Result<(), ActorProcessingErr> {
        Ok(())
    }

    async fn handle(
        &self,
        _: ActorRef<PongMsg>,
        PongMsg::Ping(from): PongMsg,
        _: &mut (),
    ) -> Handled {
        from.cast(PingMsg::Pong)?;
        Ok(())
    }
}

async fn pingpong(round_trips: u64) -> Outcome {
    let mut crew = Crew::default();
    let pong = crew.spawn(Pong, ()).await;
    let ping = crew.spawn(Ping, (pong, round_trips)).await;
    let start = Instant::now();
    let pongs = answer(ping.call(PingMsg::Start, None).await);
    let outcome = Outcome::since(start, pongs == Some(round_trips));
    crew.stop().await;
    outcome
}

// ---------------------------------------------------------------------------------- counting

struct Counter;
enum CounterMsg {
    Increment,
    Retrieve(RpcReplyPort<u64>),
}

impl Actor for Counter {
    type Msg = CounterMsg;
    type State = u64;
    type Arguments = ();

    async fn pre_start(&self, _: ActorRef<CounterMsg>, _: ()) -> Result<u64, ActorProcessingErr> {
        Ok(0)
    }

    async fn handle(&self, _: ActorRef<CounterMsg>, msg: CounterMsg, count: &mut u64) -> Handled {
        match msg {
            CounterMsg::Increment => *count += 1,
            CounterMsg::Retrieve(reply) => reply.send(*count)?,
        }
        Ok(())
    }
}

/// Sends the increments, then hands the driver's reply port on with the query, so the Counter
/// answers the driver directly.
struct Producer;
struct Produce(RpcReplyPort<u64>);

impl Actor for Producer {
    type Msg = Produce;
    type State = (ActorRef<CounterMsg>, u64);
    type Arguments = (ActorRef<CounterMsg>, u64);

    async fn pre_start(
        &self,
        _: ActorRef<Produce>,
        args: Self::State,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(args)
    }

    async fn handle(
        &self,
        _: ActorRef<Produce>,
        Produce(reply): Produce,
        (counter, n): &mut Self::State,
    ) -> Handled {
        // A slice at a time, yielding between slices, as loka's Producer (`COUNTING_SLICE`).
        for slice in counting_slices(*n) {
            for _ in 0..slice {
                counter.cast(CounterMsg::Increment)?;
            }
            tokio::task::yield_now().await;
        }
        counter.cast(CounterMsg::Retrieve(reply))?;
        Ok(())
    }
}

async fn counting(increments: u64) -> Outcome {
    let mut crew = Crew::default();
    let counter = crew.spawn(Counter, ()).await;
    let producer = crew.spawn(Producer, (counter, increments)).await;
    let start = Instant::now();
    let count = answer(producer.call(Produce, None).await);
    let outcome = Outcome::since(start, count == Some(increments));
    crew.stop().await;
    outcome
}

// -------------------------------------------------------------------------------- threadring

struct RingMember;
enum RingMsg {
    Connect(ActorRef<RingMsg>),
    /// The driver's reply port travels with the token to whichever member takes the last hop.
    Token {
        left: u64,
        hops: u64,
        done: RpcReplyPort<u64>,
    },
}

impl Actor for RingMember {
    type Msg = RingMsg;
    type State = Option<ActorRef<RingMsg>>;
    type Arguments = ();

    async fn pre_start(
        &self,
        _: ActorRef<RingMsg>,
        _: (),
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(None)
    }

    async fn handle(&self, _: ActorRef<RingMsg>, msg: RingMsg, next: &mut Self::State) -> Handled {
        match msg {
            RingMsg::Connect(successor) => *next = Some(successor),
            RingMsg::Token {
                left: 0,
                hops,
                done,
            } => done.send(hops)?,
            RingMsg::Token { left, hops, done } => {
                let next = next.as_ref().ok_or("token before Connect")?;
                next.cast(RingMsg::Token {
                    left: left - 1,
                    hops: hops + 1,
                    done,
                })?;
            }
        }
        Ok(())
    }
}

async fn threadring(actors: usize, hops: u64) -> Outcome {
    let mut crew = Crew::default();
    let mut ring = Vec::with_capacity(actors);
    for _ in 0..actors {
        ring.push(crew.spawn(RingMember, ()).await);
    }
    for (i, member) in ring.iter().enumerate() {
        member
            .cast(RingMsg::Connect(ring[(i + 1) % actors].clone()))
            .expect("connect ring");
    }
    let start = Instant::now();
    let taken = answer(
        ring[0]
            .call(
                |done| RingMsg::Token {
                    left: hops,
                    hops: 0,
                    done,
                },
                None,
            )
            .await,
    );
    let outcome = Outcome::since(start, taken == Some(hops));
    crew.stop().await;
    outcome
}

// ------------------------------------------------------------------------------------- sink

/// Collects the reports of many actors and answers the driver's `Wait` once all are in: how
/// many carried the wanted count, and the (wrapping) sum of their fingerprints.
struct Sink;
enum SinkMsg {
    /// A count, and a fingerprint (0 where the workload has none).
    Report(u64, u64),
    Wait(RpcReplyPort<(u64, u64)>),
}
struct SinkState {
    expected: u64,
    want: u64,
    received: u64,
    correct: u64,
    fingerprint: u64,
    waiter: Option<RpcReplyPort<(u64, u64)>>,
}

impl Actor for Sink {
    type Msg = SinkMsg;
    type State = SinkState;
    /// (reports expected, the value each report should carry)
    type Arguments = (u64, u64);

    async fn pre_start(
        &self,
        _: ActorRef<SinkMsg>,
        (expected, want): (u64, u64),
    ) -> Result<SinkState, ActorProcessingErr> {
        Ok(SinkState {
            expected,
            want,
            received: 0,
            correct: 0,
            fingerprint: 0,
            waiter: None,
        })
    }

    async fn handle(&self, _: ActorRef<SinkMsg>, msg: SinkMsg, s: &mut SinkState) -> Handled {
        match msg {
            SinkMsg::Report(v, fingerprint) => {
                s.received += 1;
                s.correct += u64::from(v == s.want);
                s.fingerprint = s.fingerprint.wrapping_add(fingerprint);
            }
            SinkMsg::Wait(reply) => s.waiter = Some(reply),
        }
        if s.received == s.expected {
            if let Some(reply) = s.waiter.take() {
                reply.send((s.correct, s.fingerprint))?;
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------- fjthrput

struct ThrputWorker;
/// The angle to compute.
struct Work(f64);
struct ThrputState {
    sink: ActorRef<SinkMsg>,
    per_actor: u64,
    received: u64,
    sum: f64,
}

impl Actor for ThrputWorker {
    type Msg = Work;
    type State = ThrputState;
    type Arguments = (ActorRef<SinkMsg>, u64);

    async fn pre_start(
        &self,
        _: ActorRef<Work>,
        (sink, per_actor): Self::Arguments,
    ) -> Result<ThrputState, ActorProcessingErr> {
        Ok(ThrputState {
            sink,
            per_actor,
            received: 0,
            sum: 0.0,
        })
    }

    async fn handle(&self, _: ActorRef<Work>, Work(angle): Work, s: &mut ThrputState) -> Handled {
        s.sum += compute(angle);
        s.received += 1;
        if s.received == s.per_actor {
            s.sink
                .cast(SinkMsg::Report(s.received, fjthrput_report(s.sum)))?;
        }
        Ok(())
    }
}

async fn fjthrput(actors: usize, per_actor: u64) -> Outcome {
    let mut crew = Crew::default();
    let sink = crew.spawn(Sink, (actors as u64, per_actor)).await;
    let mut workers = Vec::with_capacity(actors);
    for _ in 0..actors {
        workers.push(crew.spawn(ThrputWorker, (sink.clone(), per_actor)).await);
    }
    let expected = fjthrput_expected(actors, per_actor);
    let start = Instant::now();
    let mut k = 0;
    for _ in 0..per_actor {
        for w in &workers {
            w.cast(Work(compute_angle(k))).expect("send work");
            k += 1;
        }
    }
    let complete = answer(sink.call(SinkMsg::Wait, None).await);
    let outcome = Outcome::since(start, complete == Some((actors as u64, expected)));
    crew.stop().await;
    outcome
}

// ---------------------------------------------------------------------------------- fjcreate

struct CreatedWorker;
/// Where to reply, and the angle to compute.
struct Request(ActorRef<SinkMsg>, f64);

impl Actor for CreatedWorker {
    type Msg = Request;
    type State = ();
    type Arguments = ();

    async fn pre_start(&self, _: ActorRef<Request>, _: ()) -> Result<(), ActorProcessingErr> {
        Ok(())
    }

    async fn handle(
        &self,
        myself: ActorRef<Request>,
        Request(reply_to, angle): Request,
        _: &mut (),
    ) -> Handled {
        reply_to.cast(SinkMsg::Report(1, fjcreate_report(compute(angle))))?;
        myself.stop(None);
        Ok(())
    }
}

async fn fjcreate(actors: u64) -> Outcome {
    let mut crew = Crew::default();
    let sink = crew.spawn(Sink, (actors, 1)).await;
    let expected = fjcreate_expected(actors);
    let start = Instant::now();
    for k in 0..actors {
        // Each worker stops itself after replying, so its handle is not kept.
        let (worker, _) = Actor::spawn(None, CreatedWorker, ())
            .await
            .expect("spawn worker");
        worker
            .cast(Request(sink.clone(), compute_angle(k)))
            .expect("send request");
    }
    let replies = answer(sink.call(SinkMsg::Wait, None).await);
    let outcome = Outcome::since(start, replies == Some((actors, expected)));
    crew.stop().await;
    outcome
}

// --------------------------------------------------------------------------------------- fib

struct Fib;
struct FibRequest(u32, RpcReplyPort<u64>);

impl Actor for Fib {
    type Msg = FibRequest;
    type State = ();
    type Arguments = ();

    async fn pre_start(&self, _: ActorRef<FibRequest>, _: ()) -> Result<(), ActorProcessingErr> {
        Ok(())
    }

    async fn handle(
        &self,
        myself: ActorRef<FibRequest>,
        FibRequest(n, reply): FibRequest,
        _: &mut (),
    ) -> Handled {
        let value = if n <= 2 {
            1
        } else {
            let (left, _) = Actor::spawn(None, Fib, ()).await?;
            let (right, _) = Actor::spawn(None, Fib, ()).await?;
            // Both requests are in flight at once; this actor has nothing else to do meanwhile.
            let (a, b) = tokio::join!(
                left.call(|r| FibRequest(n - 1, r), None),
                right.call(|r| FibRequest(n - 2, r), None)
            );
            answer(a).ok_or("left child failed")? + answer(b).ok_or("right child failed")?
        };
        reply.send(value)?;
        myself.stop(None);
        Ok(())
    }
}

async fn fib_run(n: u32) -> Outcome {
    let start = Instant::now();
    let (root, handle) = Actor::spawn(None, Fib, ()).await.expect("spawn root");
    let value = answer(root.call(|r| FibRequest(n, r), None).await);
    let outcome = Outcome::since(start, value == Some(fib(n)));
    let _ = handle.await;
    outcome
}

// --------------------------------------------------------------------------------- chameneos

struct Mall;
enum MallMsg {
    Run(Vec<ActorRef<ChameneoMsg>>, RpcReplyPort<u64>),
    Meet(ActorRef<ChameneoMsg>, Colour),
    MeetingCount(u64),
}
struct MallState {
    meetings_left: u64,
    creatures: usize,
    waiting: Option<ActorRef<ChameneoMsg>>,
    faded: usize,
    total: u64,
    done: Option<RpcReplyPort<u64>>,
}

impl Actor for Mall {
    type Msg = MallMsg;
    type State = MallState;
    /// (meetings, creatures)
    type Arguments = (u64, usize);

    async fn pre_start(
        &self,
        _: ActorRef<MallMsg>,
        (meetings, creatures): (u64, usize),
    ) -> Result<MallState, ActorProcessingErr> {
        Ok(MallState {
            meetings_left: meetings,
            creatures,
            waiting: None,
            faded: 0,
            total: 0,
            done: None,
        })
    }

    async fn handle(&self, _: ActorRef<MallMsg>, msg: MallMsg, s: &mut MallState) -> Handled {
        match msg {
            MallMsg::Run(creatures, done) => {
                s.done = Some(done);
                for c in creatures {
                    c.cast(ChameneoMsg::Start)?;
                }
            }
            MallMsg::Meet(from, colour) if s.meetings_left > 0 => match s.waiting.take() {
                Some(waiting) => {
                    s.meetings_left -= 1;
                    waiting.cast(ChameneoMsg::Meet(from, colour))?;
                }
                None => s.waiting = Some(from),
            },
            // All meetings are done: every later visitor is asked for its meeting count.
            MallMsg::Meet(from, _) => from.cast(ChameneoMsg::Exit)?,
            MallMsg::MeetingCount(n) => {
                s.faded += 1;
                s.total += n;
                if s.faded == s.creatures {
                    if let Some(done) = s.done.take() {
                        done.send(s.total)?;
                    }
                }
            }
        }
        Ok(())
    }
}

struct Chameneo;
enum ChameneoMsg {
    Start,
    Meet(ActorRef<ChameneoMsg>, Colour),
    Change(Colour),
    Exit,
}
struct ChameneoState {
    mall: ActorRef<MallMsg>,
    colour: Colour,
    meetings: u64,
}

impl Actor for Chameneo {
    type Msg = ChameneoMsg;
    type State = ChameneoState;
    type Arguments = (ActorRef<MallMsg>, Colour);

    async fn pre_start(
        &self,
        _: ActorRef<ChameneoMsg>,
        (mall, colour): Self::Arguments,
    ) -> Result<ChameneoState, ActorProcessingErr> {
        Ok(ChameneoState {
            mall,
            colour,
            meetings: 0,
        })
    }

    async fn handle(
        &self,
        myself: ActorRef<ChameneoMsg>,
        msg: ChameneoMsg,
        s: &mut ChameneoState,
    ) -> Handled {
        match msg {
            ChameneoMsg::Start => {}
            ChameneoMsg::Meet(other, colour) => {
                s.colour = complement(s.colour, colour);
                s.meetings += 1;
                other.cast(ChameneoMsg::Change(s.colour))?;
            }
            ChameneoMsg::Change(colour) => {
                s.colour = colour;
                s.meetings += 1;
            }
            ChameneoMsg::Exit => {
                s.mall.cast(MallMsg::MeetingCount(s.meetings))?;
                myself.stop(None);
                return Ok(());
            }
        }
        s.mall.cast(MallMsg::Meet(myself, s.colour))?;
        Ok(())
    }
}

async fn chameneos(creatures: usize, meetings: u64) -> Outcome {
    let mut crew = Crew::default();
    let mall = crew.spawn(Mall, (meetings, creatures)).await;
    let mut all = Vec::with_capacity(creatures);
    for i in 0..creatures {
        all.push(
            crew.spawn(Chameneo, (mall.clone(), (i % 3) as Colour))
                .await,
        );
    }
    let start = Instant::now();
    let total = answer(mall.call(|done| MallMsg::Run(all, done), None).await);
    let outcome = Outcome::since(start, total == Some(2 * meetings));
    crew.stop().await;
    outcome
}

// --------------------------------------------------------------------------------------- big

struct BigActor;
enum BigMsg {
    Neighbours(Arc<Vec<ActorRef<BigMsg>>>),
    Start,
    Ping { from: usize },
    Pong,
}
struct BigState {
    me: usize,
    pings: u64,
    pongs: u64,
    rng: XorShift64Star,
    all: Arc<Vec<ActorRef<BigMsg>>>,
    sink: ActorRef<SinkMsg>,
}

impl BigState {
    fn ping_someone(&mut self) -> Handled {
        let target = self.rng.next_target(self.me, self.all.len());
        self.all[target].cast(BigMsg::Ping { from: self.me })?;
        Ok(())
    }
}

impl Actor for BigActor {
    type Msg = BigMsg;
    type State = BigState;
    /// (own index, pings to send, sink)
    type Arguments = (usize, u64, ActorRef<SinkMsg>);

    async fn pre_start(
        &self,
        _: ActorRef<BigMsg>,
        (me, pings, sink): Self::Arguments,
    ) -> Result<BigState, ActorProcessingErr> {
        let rng = XorShift64Star::for_actor(me);
        Ok(BigState {
            me,
            pings,
            pongs: 0,
            rng,
            all: Arc::new(Vec::new()),
            sink,
        })
    }

    async fn handle(&self, _: ActorRef<BigMsg>, msg: BigMsg, s: &mut BigState) -> Handled {
        match msg {
            BigMsg::Neighbours(all) => s.all = all,
            BigMsg::Start => s.ping_someone()?,
            BigMsg::Ping { from } => s.all[from].cast(BigMsg::Pong)?,
            BigMsg::Pong => {
                s.pongs += 1;
                if s.pongs == s.pings {
                    s.sink.cast(SinkMsg::Report(s.pongs, 0))?;
                } else {
                    s.ping_someone()?;
                }
            }
        }
        Ok(())
    }
}

async fn big(actors: usize, pings: u64) -> Outcome {
    let mut crew = Crew::default();
    let sink = crew.spawn(Sink, (actors as u64, pings)).await;
    let mut all = Vec::with_capacity(actors);
    for i in 0..actors {
        all.push(crew.spawn(BigActor, (i, pings, sink.clone())).await);
    }
    let all = Arc::new(all);
    for a in all.iter() {
        a.cast(BigMsg::Neighbours(all.clone()))
            .expect("send neighbours");
    }
    let start = Instant::now();
    for a in all.iter() {
        a.cast(BigMsg::Start).expect("send start");
    }
    let reports = answer(sink.call(SinkMsg::Wait, None).await).map(|(correct, _)| correct);
    let outcome = Outcome::since(start, reports == Some(actors as u64));
    crew.stop().await;
    outcome
}
