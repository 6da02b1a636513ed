//! How long `shutdown` takes with a backlog: 100 actors, 1,000 queued messages each, every handler
//! ~11 µs of work. Prints the shutdown time, the messages handled and the dead letters.
//!
//! `cargo run --release -p loka --example shutdown_backlog [ENGINE]` (ENGINE: actor-centric,
//! message-centric, sim; default actor-centric).

use loka::{Actor, Context, EngineKind, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Busy {
    handled: Arc<AtomicU64>,
}

impl Actor for Busy {
    type Msg = u64;
    fn handle(&mut self, _ctx: &mut Context<Self>, _: u64) {
        let until = Instant::now() + Duration::from_micros(11);
        while Instant::now() < until {
            std::hint::spin_loop();
        }
        self.handled.fetch_add(1, Relaxed);
    }
}

fn main() {
    let engine: EngineKind = std::env::args()
        .nth(1)
        .map_or(Ok(EngineKind::ActorCentric), |e| e.parse())
        .expect("an engine name");
    let system = System::builder().engine(engine).build().unwrap();
    let handled = Arc::new(AtomicU64::new(0));
    let actors: Vec<_> = (0..100)
        .map(|_| {
            system.spawn(Busy {
                handled: Arc::clone(&handled),
            })
        })
        .collect();
    for i in 0..1_000 {
        for a in &actors {
            a.send(i).unwrap();
        }
    }
    let sent = 100 * 1_000;
    let before = handled.load(Relaxed);
    let t = Instant::now();
    system.shutdown();
    let took = t.elapsed();
    let stats = system.stats();
    println!(
        "engine={engine} workers={} sent={sent} handled_before_shutdown={before} handled={} dead_letters={} shutdown={:.3?}",
        system.workers(),
        handled.load(Relaxed),
        stats.dead_letters,
        took
    );
}
