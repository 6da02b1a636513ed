//! `auto` adapting while it runs (docs/decisions/0067-adaptive-auto.md): on a simulated
//! four-node machine, two loads of walkers passing tokens to random partners. For one, whose
//! walkers keep 256 KiB of state each, keeping them at home pays and `auto` stays on
//! `hierarchical:auto`; for the other, stateless walkers all homed on one worker, home is a
//! bottleneck and `auto` moves to `cls`. `Stats::adaptive` says what it did.
//!
//! ```sh
//! cargo run --release -p loka --example adaptive_auto
//! ```

use loka::{Actor, ActorRef, Config, Context, EngineKind, Placement, SpawnOptions, System};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// A token: hops left and the walk's random state.
struct Hop(u32, u64);

struct Walker {
    peers: Arc<OnceLock<Vec<ActorRef<Hop>>>>,
    compute: Duration,
}

impl Actor for Walker {
    type Msg = Hop;
    fn handle(&mut self, ctx: &mut Context<Self>, Hop(left, state): Hop) {
        // Under the simulation engine, the handler's declared work (the real engines ignore it).
        ctx.charge(self.compute);
        if left == 0 {
            return;
        }
        let state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let peers = self.peers.get().expect("set before the first token");
        let _ = peers[(state >> 33) as usize % peers.len()].send(Hop(left - 1, state));
    }
}

/// Runs 256 walkers (`footprint` bytes of state each, homed on the first `homes` workers) and
/// 256 tokens of `hops` hops under `policy`; prints the virtual time and what `auto` did.
fn run(load: &str, policy: &str, footprint: usize, compute_us: u64, hops: u32, homes: usize) {
    let mut config = Config {
        engine: EngineKind::Sim,
        topology: "preset:xeon-x7560".to_owned(),
        workers: 32,
        policy: policy.parse().expect("a known policy"),
        ..Config::default()
    };
    config.sim.quiet_ms = 0;
    let system = System::from_config(config).expect("a valid configuration");
    let peers = Arc::new(OnceLock::new());
    let walkers: Vec<_> = (0..256)
        .map(|i| {
            let options = SpawnOptions::default()
                .footprint(footprint)
                .placement(Placement::Worker(i % homes));
            let walker = Walker {
                peers: Arc::clone(&peers),
                compute: Duration::from_micros(compute_us),
            };
            system.spawn_with(walker, options)
        })
        .collect();
    let _ = peers.set(walkers.clone());
    for t in 0..256u64 {
        let _ = walkers[t as usize].send(Hop(hops, t.wrapping_mul(0x9E37_79B9)));
    }
    system.run_until_idle();
    let stats = system.stats();
    let virtual_ms = stats.sim.map_or(0.0, |s| s.virtual_ns as f64 / 1e6);
    let adapted = match &stats.adaptive {
        Some(a) => format!(
            "settled on {} after {} probes, {} switches",
            a.settled, a.probes, a.switches
        ),
        None => "does not adapt".to_owned(),
    };
    println!("{load:<28} {policy:<18} {virtual_ms:>9.3} ms virtual   {adapted}");
    system.shutdown();
}

fn main() {
    for policy in ["cls", "hierarchical:auto", "auto"] {
        run("state worth keeping home", policy, 256 << 10, 1, 400, 32);
    }
    for policy in ["cls", "hierarchical:auto", "auto"] {
        run("homes on one worker", policy, 0, 5, 500, 1);
    }
}
