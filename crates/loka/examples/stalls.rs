//! The stall guard (docs/stalls.md): a key-value front asks a shard with a 60 ms limit; the shard
//! answers at once, then computes for 250 ms in the same handler. Front and shard share a
//! worker, so the answer wakes the front into that worker's next slot, behind the computation.
//! With the guard on (the default) an idle worker takes the front and it has its answer in
//! microseconds; with it off the front waits for the whole computation and its limit fires.
//!
//! ```sh
//! cargo run --release -p loka --example stalls            # both, 5 requests each
//! cargo run --release -p loka --example stalls -- --runs 20
//! ```
//! Exits 1 if a guarded request is not answered in time.

use loka::{
    Actor, ActorRef, AskError, Config, Context, Placement, ReplyTo, SpawnOptions, StallGuard,
    System,
};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Answers 42, then computes for `stall` in the same handler.
struct Shard {
    stall: Duration,
}

impl Actor for Shard {
    type Msg = ReplyTo<u64>;
    fn handle(&mut self, _: &mut Context<Self>, reply: ReplyTo<u64>) {
        reply.send(42);
        let start = Instant::now();
        while start.elapsed() < self.stall {
            std::hint::spin_loop();
        }
    }
}

/// Asks the shard with a 60 ms limit; reports the answer and how long it took.
struct Front {
    shard: ActorRef<ReplyTo<u64>>,
    out: mpsc::Sender<(Result<u64, AskError>, Duration)>,
}

impl Actor for Front {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, (): ()) {
        let (out, asked) = (self.out.clone(), Instant::now());
        ctx.ask_timeout(
            &self.shard,
            |reply| reply,
            Duration::from_millis(60),
            move |_, _, answer| {
                let _ = out.send((answer, asked.elapsed()));
            },
        );
    }
}

fn request(guard: bool) -> (Result<u64, AskError>, Duration) {
    let system = System::from_config(Config {
        workers: 2,
        stall: StallGuard {
            guard,
            ..StallGuard::default()
        },
        ..Config::default()
    })
    .expect("a valid configuration");
    let on_0 = SpawnOptions::default().placement(Placement::Worker(0));
    let shard = system.spawn_with(
        Shard {
            stall: Duration::from_millis(250),
        },
        on_0.clone(),
    );
    let (tx, rx) = mpsc::channel();
    let front = system.spawn_with(Front { shard, out: tx }, on_0);
    front.send(()).expect("the front runs");
    let answer = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("an answer or a timeout");
    system.run_until_idle();
    answer
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut runs = 5;
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next().and_then(|v| v.parse().ok())) {
            ("--runs", Some(n)) if n > 0 => runs = n,
            _ => {
                eprintln!("usage: stalls [--runs N (≥ 1)]");
                std::process::exit(2);
            }
        }
    }
    let mut failed = false;
    for guard in [true, false] {
        let mut took = Vec::new();
        let mut timeouts = 0;
        for _ in 0..runs {
            let (answer, t) = request(guard);
            timeouts += usize::from(answer.is_err());
            took.push(t);
        }
        took.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "guard {:<3}: answer after {:.3} ms median ({:.3}–{:.3} ms), {timeouts} of {runs} timed out",
            if guard { "on" } else { "off" },
            ms(took[took.len() / 2]),
            ms(took[0]),
            ms(took[took.len() - 1]),
        );
        failed |= guard && (timeouts > 0 || took[took.len() / 2] > Duration::from_millis(50));
    }
    if failed {
        eprintln!("stalls: a guarded request waited behind the stall");
        std::process::exit(1);
    }
}
