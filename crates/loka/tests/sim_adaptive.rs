//! `auto` adapts while it runs (docs/decisions/0067-adaptive-auto.md): on a machine of several
//! NUMA nodes it starts on the locality policy the topology suggests and moves to plain work
//! stealing when that does better, or stays where locality pays. Run under the simulation
//! engine on `preset:xeon-x7560` (4 nodes of 8 PUs), whose virtual time is the measure.

use loka::{Actor, ActorRef, Config, Context, EngineKind, PolicyKind, SpawnOptions, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn sim(policy: &str) -> Config {
    let mut config = Config {
        engine: EngineKind::Sim,
        topology: "preset:xeon-x7560".to_owned(),
        workers: 32,
        policy: policy.parse::<PolicyKind>().unwrap(),
        seed: 5,
        ..Config::default()
    };
    config.sim.quiet_ms = 0;
    config
}

/// A token on a random walk: hops left, and the walk's random state.
struct Hop(u32, u64);

/// Passes each token on to a pseudo-random other walker: every walker is woken by senders all
/// over the machine.
struct Walker {
    peers: Arc<std::sync::OnceLock<Vec<ActorRef<Hop>>>>,
    done: Arc<AtomicU64>,
    compute: Duration,
}

impl Actor for Walker {
    type Msg = Hop;
    fn handle(&mut self, ctx: &mut Context<Self>, Hop(left, state): Hop) {
        ctx.charge(self.compute);
        if left == 0 {
            self.done.fetch_add(1, Ordering::SeqCst);
            return;
        }
        let state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let peers = self.peers.get().expect("peers set before the first token");
        let next = &peers[(state >> 33) as usize % peers.len()];
        next.send(Hop(left - 1, state)).unwrap();
    }
}

/// `walkers` actors of `footprint` bytes each, `tokens` tokens of `hops` hops; returns the
/// virtual time and the stats.
fn walk(
    policy: &str,
    walkers: usize,
    footprint: usize,
    compute: Duration,
    tokens: u64,
    hops: u32,
    homes: usize,
) -> (u64, loka::Stats) {
    let system = System::from_config(sim(policy)).unwrap();
    let peers = Arc::new(std::sync::OnceLock::new());
    let done = Arc::new(AtomicU64::new(0));
    let refs: Vec<_> = (0..walkers)
        .map(|i| {
            system.spawn_with(
                Walker {
                    peers: Arc::clone(&peers),
                    done: Arc::clone(&done),
                    compute,
                },
                SpawnOptions::default()
                    .footprint(footprint)
                    .placement(loka::Placement::Worker(i % homes)),
            )
        })
        .collect();
    peers.set(refs.clone()).ok().unwrap();
    for t in 0..tokens {
        refs[t as usize % walkers]
            .send(Hop(hops, t.wrapping_mul(0x9E37_79B9)))
            .unwrap();
    }
    system.run_until_idle();
    assert_eq!(done.load(Ordering::SeqCst), tokens, "every token arrived");
    let stats = system.stats();
    system.shutdown();
    (stats.sim.unwrap().virtual_ns, stats)
}

/// Walkers homed on one worker, woken from all over the machine, with no state worth keeping
/// near: `hierarchical:auto` keeps bringing them home to one node (about twice `cls`'s time
/// here), so `auto` must leave it for plain stealing.
#[test]
fn auto_leaves_locality_where_it_cannot_pay() {
    let run = |policy| walk(policy, 256, 0, Duration::from_micros(5), 256, 500, 1);
    let (cls, _) = run("cls");
    let (locality, _) = run("hierarchical:auto");
    let (auto, stats) = run("auto");
    let adaptive = stats.adaptive.expect("auto adapts on four nodes");
    eprintln!("cls {cls} ns, hierarchical:auto {locality} ns, auto {auto} ns, {adaptive:?}");
    assert!(
        locality > cls * 3 / 2,
        "the workload: locality must not pay"
    );
    assert_eq!(adaptive.settled, "cls");
    assert!(adaptive.switches >= 1);
    assert!(
        auto < locality * 7 / 10,
        "auto {auto} ns against hierarchical:auto {locality} ns"
    );
}

/// Walkers whose 256 KiB of state each fits in their node's cache: under `cls` every wake-up
/// moves the walker to its waker's worker and its state follows from another cache; under
/// `hierarchical:auto` it runs at home. `auto` must stay there.
#[test]
fn auto_keeps_locality_where_it_pays() {
    let run = |policy| {
        walk(
            policy,
            256,
            256 << 10,
            Duration::from_micros(1),
            256,
            400,
            32,
        )
    };
    let (cls, _) = run("cls");
    let (locality, _) = run("hierarchical:auto");
    let (auto, stats) = run("auto");
    let adaptive = stats.adaptive.expect("auto adapts on four nodes");
    eprintln!("cls {cls} ns, hierarchical:auto {locality} ns, auto {auto} ns, {adaptive:?}");
    assert!(cls > locality * 3, "the workload: locality must pay");
    assert_eq!(
        (adaptive.settled.as_str(), adaptive.switches),
        ("hierarchical:auto", 0)
    );
    assert!(adaptive.probes >= 2, "it kept looking");
    assert!(auto < cls / 3, "auto {auto} ns against cls {cls} ns");
}

/// On one NUMA node `auto` is `cls` and does not adapt (there is no locality to buy).
#[test]
fn auto_on_one_node_is_plain_stealing_without_a_controller() {
    let mut config = sim("auto");
    config.topology = "synthetic:package:1 core:8 pu:1".to_owned();
    config.workers = 8;
    let system = System::from_config(config).unwrap();
    let stats = system.stats();
    system.shutdown();
    assert_eq!(stats.policy, "cls");
    assert!(stats.adaptive.is_none());
}
