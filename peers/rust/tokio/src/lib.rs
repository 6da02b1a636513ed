//! The docs/internals/benchmarks.md workloads on plain tokio, the way many Rust teams write "actors"
//! without an actor crate: every actor is a `tokio::spawn`ed task looping on the receiving end of
//! a `tokio::sync::mpsc::unbounded_channel`, its address is the channel's sender, and whoever
//! waits for an answer sends a `tokio::sync::oneshot` sender inside the request.
//!
//! The same code runs on both binaries' runtimes: `peer-tokio` (multi-thread, `--threads`
//! workers) and `peer-tokio-current-thread` (everything, driver included, on one thread).
//!
//! Every actor function returns `Option<()>`: `None` means a send found its receiver gone (a
//! partner stopped early), so the actor stops too. It then drops whatever reply handle it held,
//! and the driver, whose `oneshot` then yields an error, reports the run as not verified.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use peer_common::{
    complement, compute, compute_angle, counting_slices, fib, fjcreate_expected, fjcreate_report,
    fjthrput_expected, fjthrput_report, Colour, Outcome, Workload, XorShift64Star,
};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// An actor's address.
type Tx<M> = mpsc::UnboundedSender<M>;
/// An actor's mailbox.
type Rx<M> = mpsc::UnboundedReceiver<M>;

/// Runs one workload on the current tokio runtime and checks its result.
pub async fn run(w: Workload) -> Outcome {
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

/// The long-lived actors of one run. Rings and meshes hold senders to each other, so their
/// channels never close by themselves; once the clock has stopped they are aborted and awaited,
/// so no task of one run is still alive in the next.
#[derive(Default)]
struct Crew(Vec<JoinHandle<Option<()>>>);

impl Crew {
    fn spawn(&mut self, actor: impl Future<Output = Option<()>> + Send + 'static) {
        self.0.push(tokio::spawn(actor));
    }

    async fn stop(self) {
        for handle in &self.0 {
            handle.abort();
        }
        for handle in self.0 {
            let _ = handle.await;
        }
    }
}

/// Sends the request `make(reply)` and waits for the answer: `None` when the actor is gone or
/// dropped the reply handle without answering.
async fn ask<M, T>(to: &Tx<M>, make: impl FnOnce(oneshot::Sender<T>) -> M) -> Option<T> {
    let (reply, answer) = oneshot::channel();
    to.send(make(reply)).ok()?;
    answer.await.ok()
}

/// `n` mailboxes created before any actor is spawned, so that actors which address each other
/// (rings, meshes) can be given their neighbours' senders when they start.
fn mailboxes<M>(n: usize) -> (Vec<Tx<M>>, Vec<Rx<M>>) {
    (0..n).map(|_| mpsc::unbounded_channel()).unzip()
}

// ---------------------------------------------------------------------------------- pingpong

enum PingMsg {
    Start(oneshot::Sender<u64>),
    Pong,
}
/// Pong's only message.
struct Ping;

async fn ping(mut rx: Rx<PingMsg>, pong: Tx<Ping>, round_trips: u64) -> Option<()> {
    let mut done = None;
    let mut pongs = 0;
    while let Some(msg) = rx.recv().await {
        match msg {
            PingMsg::Start(reply) => done = Some(reply),
            PingMsg::Pong => {
                pongs += 1;
                if pongs == round_trips {
                    return done?.send(pongs).ok();
                }
            }
        }
        pong.send(Ping).ok()?;
    }
    Some(())
}

async fn pong(mut rx: Rx<Ping>, ping: Tx<PingMsg>) -> Option<()> {
    while let Some(Ping) = rx.recv().await {
        ping.send(PingMsg::Pong).ok()?;
    }
    Some(())
}

async fn pingpong(round_trips: u64) -> Outcome {
    let (ping_tx, ping_rx) = mpsc::unbounded_channel();
    let (pong_tx, pong_rx) = mpsc::unbounded_channel();
    let mut crew = Crew::default();
    crew.spawn(pong(pong_rx, ping_tx.clone()));
    crew.spawn(ping(ping_rx, pong_tx, round_trips));
    let start = Instant::now();
    let pongs = ask(&ping_tx, PingMsg::Start).await;
    let outcome = Outcome::since(start, pongs == Some(round_trips));
    crew.stop().await;
    outcome
}

// ---------------------------------------------------------------------------------- counting

enum CounterMsg {
    Increment,
    Retrieve(oneshot::Sender<u64>),
}

/// Takes what is queued up to `RECV_BATCH` messages at a time (`recv_many`), the fastest of the
/// idiomatic receive loops on this workload: 14 -> 17-19 M increments/s on tokio's current-thread
/// runtime (one recv per message; a bounded channel with `send().await`, 11 M), 2026-12-03.
async fn counter(mut rx: Rx<CounterMsg>) -> Option<()> {
    let mut count = 0u64;
    let mut batch = Vec::with_capacity(RECV_BATCH);
    while rx.recv_many(&mut batch, RECV_BATCH).await > 0 {
        for msg in batch.drain(..) {
            match msg {
                CounterMsg::Increment => count += 1,
                CounterMsg::Retrieve(reply) => reply.send(count).ok()?,
            }
        }
    }
    Some(())
}

/// How many queued messages the Counter takes per `recv_many`.
const RECV_BATCH: usize = 1024;

/// Sends the increments, a slice at a time with a yield between slices (`COUNTING_SLICE`, as
/// loka's Producer), then hands the driver's reply handle on with the query, so the Counter
/// answers the driver directly.
async fn producer(mut rx: Rx<oneshot::Sender<u64>>, counter: Tx<CounterMsg>, n: u64) -> Option<()> {
    while let Some(reply) = rx.recv().await {
        for slice in counting_slices(n) {
            for _ in 0..slice {
                counter.send(CounterMsg::Increment).ok()?;
            }
            tokio::task::yield_now().await;
        }
        counter.send(CounterMsg::Retrieve(reply)).ok()?;
    }
    Some(())
}

async fn counting(increments: u64) -> Outcome {
    let (counter_tx, counter_rx) = mpsc::unbounded_channel();
    let (producer_tx, producer_rx) = mpsc::unbounded_channel();
    let mut crew = Crew::default();
    crew.spawn(counter(counter_rx));
    crew.spawn(producer(producer_rx, counter_tx, increments));
    let start = Instant::now();
    let count = ask(&producer_tx, |reply| reply).await;
    let outcome = Outcome::since(start, count == Some(increments));
    crew.stop().await;
    outcome
}

// -------------------------------------------------------------------------------- threadring

/// The driver's reply handle travels with the token to whichever member takes the last hop.
struct Token {
    left: u64,
    hops: u64,
    done: oneshot::Sender<u64>,
}

async fn ring_member(mut rx: Rx<Token>, next: Tx<Token>) -> Option<()> {
    while let Some(Token { left, hops, done }) = rx.recv().await {
        if left == 0 {
            done.send(hops).ok()?;
        } else {
            next.send(Token {
                left: left - 1,
                hops: hops + 1,
                done,
            })
            .ok()?;
        }
    }
    Some(())
}

async fn threadring(actors: usize, hops: u64) -> Outcome {
    let (txs, rxs) = mailboxes(actors);
    let mut crew = Crew::default();
    for (i, rx) in rxs.into_iter().enumerate() {
        crew.spawn(ring_member(rx, txs[(i + 1) % actors].clone()));
    }
    let start = Instant::now();
    let taken = ask(&txs[0], |done| Token {
        left: hops,
        hops: 0,
        done,
    })
    .await;
    let outcome = Outcome::since(start, taken == Some(hops));
    crew.stop().await;
    outcome
}

// -------------------------------------------------------------------------------------- sink

/// What the Sink receives: a report (a count, and a fingerprint, 0 where the workload has none),
/// or the driver's request to be answered once all reports are in.
enum SinkMsg {
    Report(u64, u64),
    Wait(oneshot::Sender<(u64, u64)>),
}

/// Collects `expected` reports and answers the driver's `Wait` once all are in: how many carried
/// the count `want`, and the (wrapping) sum of their fingerprints.
async fn sink(mut rx: Rx<SinkMsg>, expected: u64, want: u64) -> Option<()> {
    let (mut received, mut correct, mut fingerprint) = (0u64, 0u64, 0u64);
    let mut waiter = None;
    while let Some(msg) = rx.recv().await {
        match msg {
            SinkMsg::Report(v, f) => {
                received += 1;
                correct += u64::from(v == want);
                fingerprint = fingerprint.wrapping_add(f);
            }
            SinkMsg::Wait(reply) => waiter = Some(reply),
        }
        if received == expected {
            if let Some(reply) = waiter.take() {
                return reply.send((correct, fingerprint)).ok();
            }
        }
    }
    Some(())
}

// ---------------------------------------------------------------------------------- fjthrput

/// Receives angles, adds up their `compute()` and reports once it has `per_actor` of them.
async fn thrput_worker(mut rx: Rx<f64>, sink: Tx<SinkMsg>, per_actor: u64) -> Option<()> {
    let (mut received, mut sum) = (0u64, 0.0f64);
    while let Some(angle) = rx.recv().await {
        sum += compute(angle);
        received += 1;
        if received == per_actor {
            sink.send(SinkMsg::Report(received, fjthrput_report(sum)))
                .ok()?;
        }
    }
    Some(())
}

async fn fjthrput(actors: usize, per_actor: u64) -> Outcome {
    let (sink_tx, sink_rx) = mpsc::unbounded_channel();
    let mut crew = Crew::default();
    crew.spawn(sink(sink_rx, actors as u64, per_actor));
    let (workers, rxs) = mailboxes(actors);
    for rx in rxs {
        crew.spawn(thrput_worker(rx, sink_tx.clone(), per_actor));
    }
    let expected = fjthrput_expected(actors, per_actor);
    let start = Instant::now();
    let mut k = 0;
    for _ in 0..per_actor {
        for w in &workers {
            w.send(compute_angle(k)).expect("send work");
            k += 1;
        }
    }
    let complete = ask(&sink_tx, SinkMsg::Wait).await;
    let outcome = Outcome::since(start, complete == Some((actors as u64, expected)));
    crew.stop().await;
    outcome
}

// ---------------------------------------------------------------------------------- fjcreate

/// Where to reply, and the angle to compute.
struct Request(Tx<SinkMsg>, f64);

/// Handles one request, then ends: the task is this actor's whole life.
async fn created_worker(mut rx: Rx<Request>) -> Option<()> {
    let Request(reply_to, angle) = rx.recv().await?;
    reply_to
        .send(SinkMsg::Report(1, fjcreate_report(compute(angle))))
        .ok()
}

async fn fjcreate(actors: u64) -> Outcome {
    let (sink_tx, sink_rx) = mpsc::unbounded_channel();
    let mut crew = Crew::default();
    crew.spawn(sink(sink_rx, actors, 1));
    let expected = fjcreate_expected(actors);
    let start = Instant::now();
    for k in 0..actors {
        let (worker, rx) = mpsc::unbounded_channel();
        // Detached: each worker ends by itself after its one reply.
        tokio::spawn(created_worker(rx));
        worker
            .send(Request(sink_tx.clone(), compute_angle(k)))
            .expect("send request");
    }
    let replies = ask(&sink_tx, SinkMsg::Wait).await;
    let outcome = Outcome::since(start, replies == Some((actors, expected)));
    crew.stop().await;
    outcome
}

// --------------------------------------------------------------------------------------- fib

struct FibRequest(u32, oneshot::Sender<u64>);

/// Spawns a fib actor and returns its address.
fn spawn_fib() -> Tx<FibRequest> {
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(fib_actor(rx));
    tx
}

/// Answers one request, then ends. Above 2 it spawns its two children and asks both at once: it
/// has nothing else to do while they work.
async fn fib_actor(mut rx: Rx<FibRequest>) -> Option<()> {
    let FibRequest(n, reply) = rx.recv().await?;
    let value = if n <= 2 {
        1
    } else {
        let (left, right) = (spawn_fib(), spawn_fib());
        let (a, b) = tokio::join!(
            ask(&left, |r| FibRequest(n - 1, r)),
            ask(&right, |r| FibRequest(n - 2, r))
        );
        a? + b?
    };
    reply.send(value).ok()
}

async fn fib_run(n: u32) -> Outcome {
    let start = Instant::now();
    let root = spawn_fib();
    let value = ask(&root, |r| FibRequest(n, r)).await;
    Outcome::since(start, value == Some(fib(n)))
}

// --------------------------------------------------------------------------------- chameneos

/// Creatures are named by their index in the shared list of mailboxes.
enum MallMsg {
    Run(oneshot::Sender<u64>),
    Meet(usize, Colour),
    MeetingCount(u64),
}

enum ChameneoMsg {
    Start,
    Meet(usize, Colour),
    Change(Colour),
    Exit,
}

async fn mall(mut rx: Rx<MallMsg>, all: Arc<[Tx<ChameneoMsg>]>, meetings: u64) -> Option<()> {
    let mut meetings_left = meetings;
    let mut waiting: Option<usize> = None;
    let (mut faded, mut total) = (0usize, 0u64);
    let mut done = None;
    while let Some(msg) = rx.recv().await {
        match msg {
            MallMsg::Run(reply) => {
                done = Some(reply);
                for c in all.iter() {
                    c.send(ChameneoMsg::Start).ok()?;
                }
            }
            MallMsg::Meet(from, colour) if meetings_left > 0 => match waiting.take() {
                Some(w) => {
                    meetings_left -= 1;
                    all[w].send(ChameneoMsg::Meet(from, colour)).ok()?;
                }
                None => waiting = Some(from),
            },
            // All meetings are done: every later visitor is asked for its meeting count.
            MallMsg::Meet(from, _) => all[from].send(ChameneoMsg::Exit).ok()?,
            MallMsg::MeetingCount(n) => {
                faded += 1;
                total += n;
                if faded == all.len() {
                    return done?.send(total).ok();
                }
            }
        }
    }
    Some(())
}

async fn chameneo(
    mut rx: Rx<ChameneoMsg>,
    me: usize,
    mut colour: Colour,
    mall: Tx<MallMsg>,
    all: Arc<[Tx<ChameneoMsg>]>,
) -> Option<()> {
    let mut meetings = 0u64;
    while let Some(msg) = rx.recv().await {
        match msg {
            ChameneoMsg::Start => {}
            ChameneoMsg::Meet(other, theirs) => {
                colour = complement(colour, theirs);
                meetings += 1;
                all[other].send(ChameneoMsg::Change(colour)).ok()?;
            }
            ChameneoMsg::Change(new) => {
                colour = new;
                meetings += 1;
            }
            ChameneoMsg::Exit => return mall.send(MallMsg::MeetingCount(meetings)).ok(),
        }
        mall.send(MallMsg::Meet(me, colour)).ok()?;
    }
    Some(())
}

async fn chameneos(creatures: usize, meetings: u64) -> Outcome {
    let (mall_tx, mall_rx) = mpsc::unbounded_channel();
    let (txs, rxs) = mailboxes(creatures);
    let all: Arc<[Tx<ChameneoMsg>]> = txs.into();
    let mut crew = Crew::default();
    crew.spawn(mall(mall_rx, all.clone(), meetings));
    for (i, rx) in rxs.into_iter().enumerate() {
        crew.spawn(chameneo(
            rx,
            i,
            (i % 3) as Colour,
            mall_tx.clone(),
            all.clone(),
        ));
    }
    drop(all);
    let start = Instant::now();
    let total = ask(&mall_tx, MallMsg::Run).await;
    let outcome = Outcome::since(start, total == Some(2 * meetings));
    crew.stop().await;
    outcome
}

// --------------------------------------------------------------------------------------- big

enum BigMsg {
    Start,
    Ping { from: usize },
    Pong,
}

async fn big_actor(
    mut rx: Rx<BigMsg>,
    me: usize,
    pings: u64,
    all: Arc<[Tx<BigMsg>]>,
    sink: Tx<SinkMsg>,
) -> Option<()> {
    let mut rng = XorShift64Star::for_actor(me);
    let mut pongs = 0u64;
    let ping_someone = |rng: &mut XorShift64Star| {
        let target = rng.next_target(me, all.len());
        all[target].send(BigMsg::Ping { from: me }).ok()
    };
    // Keeps answering pings after its own are done: the others still need their pongs.
    while let Some(msg) = rx.recv().await {
        match msg {
            BigMsg::Start => ping_someone(&mut rng)?,
            BigMsg::Ping { from } => all[from].send(BigMsg::Pong).ok()?,
            BigMsg::Pong => {
                pongs += 1;
                if pongs == pings {
                    sink.send(SinkMsg::Report(pongs, 0)).ok()?;
                } else {
                    ping_someone(&mut rng)?;
                }
            }
        }
    }
    Some(())
}

async fn big(actors: usize, pings: u64) -> Outcome {
    let (sink_tx, sink_rx) = mpsc::unbounded_channel();
    let (txs, rxs) = mailboxes(actors);
    let all: Arc<[Tx<BigMsg>]> = txs.into();
    let mut crew = Crew::default();
    crew.spawn(sink(sink_rx, actors as u64, pings));
    for (i, rx) in rxs.into_iter().enumerate() {
        crew.spawn(big_actor(rx, i, pings, all.clone(), sink_tx.clone()));
    }
    let start = Instant::now();
    for a in all.iter() {
        a.send(BigMsg::Start).expect("send start");
    }
    let reports = ask(&sink_tx, SinkMsg::Wait)
        .await
        .map(|(correct, _)| correct);
    let outcome = Outcome::since(start, reports == Some(actors as u64));
    crew.stop().await;
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every workload, shrunk, on both runtimes the binaries use: each must verify.
    fn small() -> Vec<Workload> {
        vec![
            Workload::PingPong { round_trips: 1_000 },
            Workload::Counting { increments: 5_000 },
            Workload::ThreadRing {
                actors: 10,
                hops: 1_000,
            },
            Workload::FjThrput {
                actors: 6,
                per_actor: 100,
            },
            Workload::FjCreate { actors: 500 },
            Workload::Fib { n: 12 },
            Workload::Chameneos {
                creatures: 7,
                meetings: 500,
            },
            Workload::Big {
                actors: 8,
                pings: 100,
            },
        ]
    }

    #[test]
    fn every_workload_verifies_on_the_multi_thread_runtime() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        for w in small() {
            assert!(rt.block_on(run(w)).verified, "{w:?}");
        }
    }

    #[test]
    fn every_workload_verifies_on_the_current_thread_runtime() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        for w in small() {
            assert!(rt.block_on(run(w)).verified, "{w:?}");
        }
    }
}
