//! The message-centric engine (Cforall's executor): the same program under both real engines,
//! with the message-centric statistics — gulps, missed gulps, queue steals — and the effect of the
//! victim selection on an unbalanced load (all the work on one worker's queues). Then a ring
//! whose members are placed on alternate workers, with and without actors that follow their
//! partners (`message_centric.follow`): following gathers the ring into one queue.
//!
//! ```sh
//! cargo run --release -p loka --example message_centric
//! ```

use loka::{
    Actor, ActorRef, Config, Context, EngineKind, Placement, SpawnOptions, System, VictimSelection,
};
use std::collections::HashSet;
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

/// A ring member: passes the token on until it has gone round `left` more hops.
struct Member {
    next: Option<ActorRef<Token>>,
    done: Arc<AtomicU64>,
}

enum Token {
    Next(ActorRef<Token>),
    Hop(u64),
}

impl Actor for Member {
    type Msg = Token;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: Token) {
        match msg {
            Token::Next(next) => self.next = Some(next),
            Token::Hop(0) => {
                self.done.store(1, Relaxed);
            }
            Token::Hop(left) => {
                let _ = self
                    .next
                    .as_ref()
                    .expect("linked")
                    .send(Token::Hop(left - 1));
            }
        }
    }
}

fn ring(follow: bool) {
    let mut config = Config {
        engine: EngineKind::MessageCentric,
        workers: 2,
        ..Config::default()
    };
    config.message_centric.follow = follow;
    // No stealing: with one token in flight a worker is always idle, and by stealing the other's
    // queue it would gather the ring as well.
    config.message_centric.victims = VictimSelection::None;
    let system = System::from_config(config).expect("a valid configuration");
    let done = Arc::new(AtomicU64::new(0));
    // Members on alternate workers: every hop crosses cores unless they gather.
    let members: Vec<_> = (0..64)
        .map(|i| {
            let on = SpawnOptions::new().placement(Placement::Worker(i % 2));
            system.spawn_with(
                Member {
                    next: None,
                    done: Arc::clone(&done),
                },
                on,
            )
        })
        .collect();
    for (i, member) in members.iter().enumerate() {
        let _ = member.send(Token::Next(members[(i + 1) % members.len()].clone()));
    }
    system.run_until_idle();
    let hops = 1_000_000;
    let start = Instant::now();
    let _ = members[0].send(Token::Hop(hops));
    system.run_until_idle();
    let elapsed = start.elapsed();
    assert_eq!(done.load(Relaxed), 1, "the token went all the way");
    let ids: HashSet<_> = members.iter().map(ActorRef::id).collect();
    let queues: HashSet<_> = system
        .actors()
        .into_iter()
        .filter(|a| ids.contains(&a.id))
        .filter_map(|a| a.queue)
        .collect();
    let followed = system
        .stats()
        .message_centric
        .map_or(0, |mc| mc.actors_followed);
    println!(
        "ring, follow = {follow:<5}  {:>6.1} M hops/s  actors followed {followed:>3}  queues used {:>2}",
        hops as f64 / elapsed.as_secs_f64() / 1e6,
        queues.len()
    );
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
    ring(false);
    ring(true);
}
