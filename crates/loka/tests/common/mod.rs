//! The configurations every guarantee test runs under. Add each new engine, policy and variant
//! here and every guarantee is checked under it.

#![allow(dead_code)]

use loka::{Config, PlacementStrategy, PolicyKind};

/// (label, configuration) for every engine × policy × variant, at several worker counts.
pub fn configurations() -> Vec<(String, Config)> {
    let mut out = Vec::new();
    for &policy in PolicyKind::ALL {
        for workers in [1, 2, 4] {
            for lifo_slot in [true, false] {
                let config = Config {
                    workers,
                    policy,
                    lifo_slot,
                    topology: topology_for(workers),
                    ..Config::default()
                };
                out.push((
                    format!("{policy} workers={workers} lifo_slot={lifo_slot}"),
                    config,
                ));
            }
        }
    }
    // Hub-aware scheduling under every placement strategy (for regular actors and hubs alike).
    for &strategy in PlacementStrategy::ALL {
        for &policy in PolicyKind::ALL {
            if let PolicyKind::Hierarchical { .. } = policy {
                let config = Config {
                    workers: 4,
                    policy,
                    placement: strategy,
                    hub_placement: strategy,
                    topology: topology_for(4),
                    ..Config::default()
                };
                out.push((format!("{policy} workers=4 placement={strategy}"), config));
            }
        }
    }
    out
}

/// The real machine where it has enough PUs (workers get pinned), else a synthetic machine of
/// `workers` PUs (decisions only, no pinning), so tests run on any machine.
pub fn topology_for(workers: usize) -> String {
    let host_pus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if workers <= host_pus {
        "host".to_owned()
    } else {
        format!("synthetic:package:2 core:{} pu:1", workers.div_ceil(2))
    }
}

/// A smaller set for the heaviest tests: each policy and variant once, with real parallelism.
pub fn heavy_configurations() -> Vec<(String, Config)> {
    configurations()
        .into_iter()
        .filter(|(_, c)| c.workers == 4 || (c.workers == 2 && c.lifo_slot))
        .collect()
}

/// A 64-bit mix (SplitMix64 finaliser) for order-independent checksums.
pub fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d049bb133111eb);
    x ^ (x >> 31)
}
