//! Walkers passing tokens to pseudo-random partners under the simulation engine on the
//! four-node `preset:xeon-x7560`: the workload on which the adaptive `auto` is shown
//! (`examples/adaptive_auto.rs`) and tested (`tests/sim_adaptive.rs`, which includes this
//! file). Every walker is woken by senders all over the machine, so where it runs is decided by
//! the policy: at home under `hierarchical:auto`, on its waker's worker under `cls`.

use loka::{Actor, ActorRef, Config, Context, EngineKind, Placement, SpawnOptions, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// A token: hops left and the walk's random state.
struct Hop(u32, u64);

struct Walker {
    peers: Arc<OnceLock<Vec<ActorRef<Hop>>>>,
    arrived: Arc<AtomicU64>,
    compute: Duration,
}

impl Actor for Walker {
    type Msg = Hop;
    fn handle(&mut self, ctx: &mut Context<Self>, Hop(left, state): Hop) {
        // The handler's declared work (the simulation charges it; the real engines ignore it).
        ctx.charge(self.compute);
        if left == 0 {
            self.arrived.fetch_add(1, Ordering::SeqCst);
            return;
        }
        let state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let peers = self.peers.get().expect("peers set before the first token");
        let next = &peers[(state >> 33) as usize % peers.len()];
        next.send(Hop(left - 1, state))
            .expect("walkers outlive the walk");
    }
}

/// A walk: how many walkers, their state, their work per hop, the tokens and their hops.
pub struct Walk {
    /// Walkers spawned.
    pub walkers: usize,
    /// Bytes of state each walker keeps (`SpawnOptions::footprint`).
    pub footprint: usize,
    /// Work declared per hop.
    pub compute: Duration,
    /// Tokens sent, one to each walker in turn.
    pub tokens: u64,
    /// Hops of each token.
    pub hops: u32,
    /// Walker `i` first runs on worker `i % homes` (its home under the locality policies).
    pub homes: usize,
    /// Walkers declared hubs (`SpawnOptions::hub`): `hierarchical` pins each to its home worker.
    pub hubs: bool,
}

/// Runs `walk` under `policy` on 32 simulated workers; returns the system's stats at the end
/// and how many tokens arrived.
pub fn run(walk: &Walk, policy: &str) -> (loka::Stats, u64) {
    let mut config = Config {
        engine: EngineKind::Sim,
        topology: "preset:xeon-x7560".to_owned(),
        workers: 32,
        policy: policy.parse().expect("a known policy"),
        seed: 5,
        ..Config::default()
    };
    // The walk is run by `run_until_idle`: only that runs the simulation.
    config.sim.quiet_ms = 0;
    let system = System::from_config(config).expect("a valid configuration");
    let peers = Arc::new(OnceLock::new());
    let arrived = Arc::new(AtomicU64::new(0));
    let walkers: Vec<_> = (0..walk.walkers)
        .map(|i| {
            let options = SpawnOptions::default()
                .footprint(walk.footprint)
                .hub(walk.hubs)
                .placement(Placement::Worker(i % walk.homes));
            let walker = Walker {
                peers: Arc::clone(&peers),
                arrived: Arc::clone(&arrived),
                compute: walk.compute,
            };
            system.spawn_with(walker, options)
        })
        .collect();
    let _ = peers.set(walkers.clone());
    for t in 0..walk.tokens {
        walkers[t as usize % walk.walkers]
            .send(Hop(walk.hops, t.wrapping_mul(0x9E37_79B9)))
            .expect("a fresh walker");
    }
    system.run_until_idle();
    let stats = system.stats();
    system.shutdown();
    (stats, arrived.load(Ordering::SeqCst))
}
