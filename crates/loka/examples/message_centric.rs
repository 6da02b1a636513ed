//! The message-centric engine (Cforall's executor): the same program under both real engines,
//! with the message-centric statistics — gulps, missed gulps, queue steals — and the effect of the
//! victim selection on an unbalanced load (all the work on one worker's queues).
//!
//! ```sh
//! cargo run --release -p loka --example message_centric
//! ```

use loka::{Actor, Config, Context, EngineKind, System, VictimSelection};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

/// Burns a little CPU per message and counts what it handled.
struct Worker {
    done: Arc<AtomicU64>,
}

impl Actor for Worker {
    type Msg = u64;
    fn handle(&mut self, _ctx: &mut Context<Self>, n: u64) {
        let mut x = n;
        for _ in 0..2_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        self.done.fetch_add(1, Relaxed);
    }
}

fn run(engine: EngineKind, victims: VictimSelection) {
    let mut config = Config {
        engine,
        workers: 2,
        ..Config::default()
    };
    config.message_centric.victims = victims;
    let system = System::from_config(config).expect("a valid configuration");
    let done = Arc::new(AtomicU64::new(0));
    // Actors are laid out round robin over 2 × 16 queues: the first 16 land on worker 0's
    // queues. Only those get work, so worker 1 has something to do only if it steals.
    let actors: Vec<_> = (0..32)
        .map(|_| {
            system.spawn(Worker {
                done: Arc::clone(&done),
            })
        })
        .collect();
    let start = Instant::now();
    for round in 0..2_000u64 {
        for actor in &actors[..16] {
            let _ = actor.send(round);
        }
    }
    system.run_until_idle();
    let elapsed = start.elapsed();
    assert_eq!(done.load(Relaxed), 32_000, "every message handled once");
    let stats = system.stats();
    print!(
        "{:<16} {:<8} {:>7.1} ms",
        engine.name(),
        victims.name(),
        elapsed.as_secs_f64() * 1e3
    );
    match stats.message_centric {
        Some(mc) => println!(
            "  gulps {:>6} (avg {:>5.1} letters)  missed {:>3}  steals {:>3}/{:<6} attempts",
            mc.gulps, mc.avg_gulp_size, mc.missed_gulps, mc.queues_stolen, mc.steal_attempts
        ),
        None => println!(
            "  activations {:>6}  actor steals {:>3}",
            stats.total.activations, stats.total.steals
        ),
    }
}

fn main() {
    run(EngineKind::ActorCentric, VictimSelection::Longest);
    for victims in [
        VictimSelection::None,
        VictimSelection::Longest,
        VictimSelection::Random,
    ] {
        run(EngineKind::MessageCentric, victims);
    }
}
