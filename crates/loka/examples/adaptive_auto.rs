//! `auto` adapting while it runs (docs/decisions/0067-adaptive-auto.md): on a simulated
//! four-node machine, two loads of walkers passing tokens to random partners. For one, whose
//! walkers keep 256 KiB of state each, keeping them at home pays and `auto` stays on
//! `hierarchical`; for the other, walkers declared hubs and all homed on one node, that node
//! is a bottleneck and `auto` moves to `cls`. `Stats::adaptive` says what it did.
//!
//! ```sh
//! cargo run --release -p loka --example adaptive_auto
//! ```

#[path = "support/walkers.rs"]
mod walkers;

use std::time::Duration;
use walkers::Walk;

fn main() {
    let loads = [
        (
            "state worth keeping home",
            Walk {
                walkers: 256,
                footprint: 256 << 10,
                compute: Duration::from_micros(1),
                tokens: 256,
                hops: 400,
                homes: 32,
                hubs: false,
            },
        ),
        (
            "hubs pinned on one node",
            Walk {
                walkers: 256,
                footprint: 0,
                compute: Duration::from_micros(5),
                tokens: 256,
                hops: 2000,
                homes: 8,
                hubs: true,
            },
        ),
    ];
    for (load, walk) in &loads {
        for policy in ["cls", "hierarchical", "auto"] {
            let (stats, arrived) = walkers::run(walk, policy);
            assert_eq!(arrived, walk.tokens, "every token arrived");
            let virtual_ms = stats.sim.map_or(0.0, |s| s.virtual_ns as f64 / 1e6);
            let adapted = match &stats.adaptive {
                Some(a) => format!(
                    "settled on {} after {} probes, {} switches",
                    a.settled, a.probes, a.switches
                ),
                None => "does not adapt".to_owned(),
            };
            println!("{load:<28} {policy:<18} {virtual_ms:>9.3} ms virtual   {adapted}");
        }
    }
}
