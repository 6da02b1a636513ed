//! What a bounded mailbox costs on Savina's counting (one producer sends N increments to one
//! counter, then asks for the total): unbounded against capacity 1,000 (`Reject`), with the
//! producer an actor (`send`, or `try_send` retried after yielding) or a plain thread (`send`, or
//! `send_async` waiting for room); and the bookkeeping alone, a bound the producer never reaches. Runs the variants alternately, `RUNS` times each, each run on a
//! fresh system of 2 workers (or `WORKERS`), and prints medians (docs/results/bounded-mailboxes.md).
//!
//! `cargo run --release --example bounded_counting [N] [RUNS] [ONLY] [WORKERS]` (defaults 2000000
//! 5, all variants, 2; `ONLY` runs just the variants whose name contains it, e.g. `never` or
//! `unbounded, send`, to profile one; an empty `ONLY` runs them all)

use loka::{
    Actor, ActorRef, Context, Pending, ReplyTo, SendErrorReason, SpawnOptions, System, TrySendError,
};
use std::time::{Duration, Instant};

const CAPACITY: usize = 1_000;
/// Increments an actor producer sends per activation before it yields (loka-bench's slice).
const SLICE: u64 = 10_000;

enum CounterMsg {
    Increment(u64),
    Retrieve(ReplyTo<u64>),
}

struct Counter {
    sum: u64,
}

impl Actor for Counter {
    type Msg = CounterMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: CounterMsg) {
        match msg {
            CounterMsg::Increment(n) => self.sum = self.sum.wrapping_add(n),
            CounterMsg::Retrieve(reply) => reply.send(self.sum),
        }
    }
}

/// Sends 1..=n; with `retry`, by `try_send`, keeping a refused increment and yielding.
struct Producer {
    to: ActorRef<CounterMsg>,
    next: u64,
    n: u64,
    retry: bool,
    done: Option<ReplyTo<()>>,
}

enum Go {
    Start(ReplyTo<()>),
    Continue,
}

impl Actor for Producer {
    type Msg = Go;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: Go) {
        if let Go::Start(done) = msg {
            self.done = Some(done);
        }
        let end = (self.next + SLICE).min(self.n + 1);
        while self.next < end {
            let increment = CounterMsg::Increment(self.next);
            if self.retry {
                match self.to.try_send(increment) {
                    Ok(()) => {}
                    Err(TrySendError::Full(_)) => break,
                    Err(TrySendError::Stopped(_)) => unreachable!("the counter outlives us"),
                }
            } else {
                self.to.send(increment).expect("counter alive");
            }
            self.next += 1;
        }
        if self.next <= self.n {
            ctx.myself().send(Go::Continue).expect("producer alive");
            return;
        }
        // All sent: the driving thread asks for the total (retrying while the mailbox is full).
        self.done.take().expect("started").send(());
        ctx.stop();
    }
}

/// Asks for the total; a full bounded mailbox refuses the request like any send: retry.
fn retrieve(counter: &ActorRef<CounterMsg>) -> Pending<u64> {
    loop {
        match counter.ask(CounterMsg::Retrieve) {
            Ok(pending) => return pending,
            Err(e) if matches!(e.reason, SendErrorReason::Full { .. }) => std::thread::yield_now(),
            Err(e) => panic!("{e}"),
        }
    }
}

use futures_executor::block_on;

#[derive(Clone, Copy, PartialEq)]
enum Variant {
    /// Actor producer, `send`, unbounded counter.
    Unbounded,
    /// Actor producer, `send`, counter bounded at N (never full): the bookkeeping alone.
    BoundedNeverFull,
    /// Actor producer, `try_send` retried after yielding, counter of capacity 1,000.
    BoundedTry,
    /// Thread producer, `send`, unbounded counter.
    ThreadUnbounded,
    /// Thread producer, `send_async` (parks while full), counter of capacity 1,000.
    ThreadAsync,
}

impl Variant {
    const ALL: [Variant; 5] = [
        Variant::Unbounded,
        Variant::BoundedNeverFull,
        Variant::BoundedTry,
        Variant::ThreadUnbounded,
        Variant::ThreadAsync,
    ];
    fn name(self) -> &'static str {
        match self {
            Variant::Unbounded => "actor producer, unbounded, send",
            Variant::BoundedNeverFull => "actor producer, capacity N (never full), send",
            Variant::BoundedTry => "actor producer, capacity 1000, try_send + yield",
            Variant::ThreadUnbounded => "thread producer, unbounded, send",
            Variant::ThreadAsync => "thread producer, capacity 1000, send_async",
        }
    }
    fn bounded(self) -> bool {
        matches!(self, Variant::BoundedTry | Variant::ThreadAsync)
    }
}

/// One run: (seconds, mailbox_full).
fn run(variant: Variant, n: u64, workers: usize) -> (Duration, u64) {
    let system = System::builder().workers(workers).build().expect("system");
    let options = match variant {
        Variant::BoundedNeverFull => SpawnOptions::new().capacity(n as usize + 1),
        _ if variant.bounded() => SpawnOptions::new().capacity(CAPACITY),
        _ => SpawnOptions::new(),
    };
    let counter = system.spawn_with(Counter { sum: 0 }, options);
    system.run_until_idle();
    let start = Instant::now();
    let total = match variant {
        Variant::Unbounded | Variant::BoundedNeverFull | Variant::BoundedTry => {
            let producer = system.spawn(Producer {
                to: counter.clone(),
                next: 1,
                n,
                retry: variant == Variant::BoundedTry,
                done: None,
            });
            producer.ask(Go::Start).unwrap().wait().unwrap();
            retrieve(&counter).wait().unwrap()
        }
        Variant::ThreadUnbounded | Variant::ThreadAsync => {
            for i in 1..=n {
                let increment = CounterMsg::Increment(i);
                if variant == Variant::ThreadAsync {
                    block_on(counter.send_async(increment)).expect("counter alive");
                } else {
                    counter.send(increment).expect("counter alive");
                }
            }
            retrieve(&counter).wait().unwrap()
        }
    };
    let elapsed = start.elapsed();
    assert_eq!(total, n * (n + 1) / 2, "lost or duplicated increments");
    let full = system.stats().mailbox_full;
    system.shutdown();
    (elapsed, full)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().map_or(2_000_000, |a| a.parse().expect("N"));
    let runs: usize = args.next().map_or(5, |a| a.parse().expect("RUNS"));
    let only = args.next().unwrap_or_default();
    let workers: usize = args.next().map_or(2, |a| a.parse().expect("WORKERS"));
    let chosen = |variant: Variant| variant.name().contains(only.as_str());
    let mut rates = vec![Vec::new(); Variant::ALL.len()];
    let mut fulls = vec![Vec::new(); Variant::ALL.len()];
    for _ in 0..runs {
        for (i, &variant) in Variant::ALL.iter().enumerate().filter(|(_, &v)| chosen(v)) {
            let (elapsed, full) = run(variant, n, workers);
            rates[i].push(n as f64 / elapsed.as_secs_f64() / 1e6);
            fulls[i].push(full as f64);
        }
    }
    println!(
        "counting, N = {n}, {workers} workers, median of {runs} (M increments/s; range; mailbox_full)"
    );
    for (i, &variant) in Variant::ALL.iter().enumerate().filter(|(_, &v)| chosen(v)) {
        let (lo, hi) = rates[i]
            .iter()
            .fold((f64::MAX, 0f64), |(lo, hi), &r| (lo.min(r), hi.max(r)));
        println!(
            "{:<48} {:>7.2}  ({lo:.2}–{hi:.2})  {:.0}",
            variant.name(),
            median(rates[i].clone()),
            median(fulls[i].clone())
        );
    }
}
