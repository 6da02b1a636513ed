//! Handler time per actor (docs/observability.md, "Handler time"): a small service — a front
//! actor that parses requests and hands them to a cache, which sends misses to a slow store —
//! runs for a second with `handler_sample_us = 500`, then the busiest actors are printed with the
//! share of a worker each kept busy.
//!
//! ```text
//! cargo run --release -p loka --example handler_time
//! ```
//!
//! The store costs 40 µs a miss and one request in ten misses; the front costs 2 µs a request,
//! the cache 1 µs: the store comes first, at about twice the front's time.

use loka::{Actor, ActorRef, Context, SpawnOptions, System};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Busy for `us` microseconds (the stand-in for real work).
fn work(us: u64) {
    let until = Instant::now() + Duration::from_micros(us);
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

/// Parses a request, then asks the cache.
struct Front(ActorRef<u64>);

impl Actor for Front {
    type Msg = u64;
    fn handle(&mut self, _ctx: &mut Context<Self>, key: u64) {
        work(2);
        let _ = self.0.send(key);
    }
}

/// Answers hits itself, sends one key in ten to the store.
struct Cache(ActorRef<u64>);

impl Actor for Cache {
    type Msg = u64;
    fn handle(&mut self, _ctx: &mut Context<Self>, key: u64) {
        work(1);
        if key % 10 == 0 {
            let _ = self.0.send(key);
        }
    }
}

/// The slow backing store.
struct Store;

impl Actor for Store {
    type Msg = u64;
    fn handle(&mut self, _ctx: &mut Context<Self>, _key: u64) {
        work(40);
    }
}

fn main() -> ExitCode {
    let system = match System::builder()
        .handler_sample_us(500)
        .env()
        .and_then(|b| b.build())
    {
        Ok(system) => system,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let store = system.spawn_with(Store, SpawnOptions::new().name("store"));
    let cache = system.spawn(Cache(store.clone()));
    let front = system.spawn(Front(cache.clone()));
    system.register("front", &front).unwrap();
    // Requests for a second, at about the rate the front can take.
    let began = Instant::now();
    let mut key = 0;
    while began.elapsed() < Duration::from_secs(1) {
        for _ in 0..100 {
            let _ = front.send(key);
            key += 1;
        }
        system.run_until_idle();
    }
    let snapshot = system.snapshot();
    let Some(times) = snapshot.handler_time else {
        eprintln!("error: handler time is off (LOKA_HANDLER_SAMPLE_US=0?)");
        return ExitCode::FAILURE;
    };
    let uptime = snapshot.uptime_ns as f64;
    println!(
        "{key} requests; {} sampling rounds; busiest actors:",
        times.rounds
    );
    println!("{:<28} {:>8} {:>10}", "actor", "cpu %", "total ms");
    for actor in &times.actors {
        let label = actor
            .registered
            .clone()
            .or_else(|| actor.name.clone())
            .unwrap_or_else(|| actor.actor_type.clone());
        println!(
            "{label:<28} {:>8.1} {:>10.1}",
            100.0 * actor.handler_ns as f64 / uptime,
            actor.handler_ns as f64 / 1e6
        );
    }
    drop((front, cache, store));
    ExitCode::SUCCESS
}
