//! A producer that sends in bursts and the consumer it feeds, on one worker: how long the queue
//! between them gets, and how fast the increments go, with the budget counting sends and backlogs
//! gulped (the default) and with the gulp turned off (`backlog_gulp = 0`).
//!
//! ```sh
//! cargo run --release -p loka --example backlog [BURSTS=1000] [BURST=10000]
//! ```
//!
//! docs/configuration.md (`throughput`, `backlog_gulp`) says what an activation's budget counts.

use loka::{Actor, ActorRef, Config, Context, System};
use std::sync::mpsc;
use std::time::Instant;

enum Count {
    One,
    Report(mpsc::Sender<u64>),
}

struct Counter(u64);

impl Actor for Counter {
    type Msg = Count;
    fn handle(&mut self, _: &mut Context<Self>, msg: Count) {
        match msg {
            Count::One => self.0 += 1,
            Count::Report(to) => {
                let _ = to.send(self.0);
            }
        }
    }
}

/// Sends a burst per message, then itself the next burst; notes the longest queue it saw.
struct Producer {
    counter: ActorRef<Count>,
    bursts: u64,
    burst: u64,
    longest: usize,
    done: mpsc::Sender<usize>,
}

impl Actor for Producer {
    type Msg = u64;
    fn handle(&mut self, ctx: &mut Context<Self>, sent: u64) {
        self.longest = self.longest.max(self.counter.mailbox_len());
        if sent == self.bursts {
            let _ = self.done.send(self.longest);
            return;
        }
        for _ in 0..self.burst {
            let _ = self.counter.send(Count::One);
        }
        let _ = ctx.myself().send(sent + 1);
    }
}

fn run(label: &str, backlog_gulp: usize, bursts: u64, burst: u64) {
    let system = System::from_config(Config {
        workers: 1,
        backlog_gulp,
        ..Config::default()
    })
    .expect("valid configuration");
    let counter = system.spawn(Counter(0));
    let (done, finished) = mpsc::channel();
    let producer = system.spawn(Producer {
        counter: counter.clone(),
        bursts,
        burst,
        longest: 0,
        done,
    });
    let start = Instant::now();
    producer.send(0).expect("just spawned");
    let longest = finished.recv().expect("the producer reports");
    let (to, count) = mpsc::channel();
    counter.send(Count::Report(to)).expect("alive");
    let count = count.recv().expect("the counter reports");
    let seconds = start.elapsed().as_secs_f64();
    assert_eq!(count, bursts * burst, "every increment counted");
    println!(
        "{label:<28} longest queue {longest:>10}   {:>6.1} M increments/s",
        count as f64 / seconds / 1e6
    );
    system.shutdown();
}

/// Argument `index` (after the program's name) as a positive number, or `default`; anything
/// else ends the program with one line.
fn arg(index: usize, name: &str, default: u64) -> u64 {
    match std::env::args().nth(index) {
        None => default,
        Some(text) => match text.parse::<u64>() {
            Ok(n) if n > 0 => n,
            _ => {
                eprintln!("backlog: {name} must be a positive whole number, got {text:?}");
                std::process::exit(2);
            }
        },
    }
}

fn main() {
    let bursts = arg(1, "BURSTS", 1_000);
    let burst = arg(2, "BURST", 10_000);
    run(
        "default (gulp 16,384)",
        Config::default().backlog_gulp,
        bursts,
        burst,
    );
    run("backlog_gulp = 0", 0, bursts, burst);
}
