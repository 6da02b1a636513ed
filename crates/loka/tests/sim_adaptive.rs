//! `auto` adapts while it runs (docs/decisions/0067-adaptive-auto.md): on a machine of several
//! NUMA nodes it starts on the locality policy the topology suggests and moves to plain work
//! stealing when that does better, or stays where locality pays. Run under the simulation
//! engine, whose virtual time is the measure: on `preset:xeon-x7560` (4 nodes of 8 PUs) with the
//! walkers of the `adaptive_auto` example, and on `preset:opteron6376` (8 nodes of 8) with a
//! fork-join load whose throughput comes in bursts.

#[path = "../examples/support/walkers.rs"]
mod walkers;

use loka::{Config, EngineKind, PolicyKind, System};
use std::time::Duration;
use walkers::Walk;

/// The virtual time of `walk` under `policy`, and the stats; every token must arrive.
fn walk(walk: &Walk, policy: &str) -> (u64, loka::Stats) {
    let (stats, arrived) = walkers::run(walk, policy);
    assert_eq!(arrived, walk.tokens, "{policy}: every token arrived");
    (stats.sim.expect("the simulation reports").virtual_ns, stats)
}

/// Walkers declared hubs and homed on the eight workers of one node, woken from all over the
/// machine: `hierarchical` pins every one of them there (3.7× `cls`'s time here), so `auto` must
/// leave it for plain stealing.
#[test]
fn auto_leaves_locality_where_it_cannot_pay() {
    let load = Walk {
        walkers: 256,
        footprint: 0,
        compute: Duration::from_micros(5),
        tokens: 256,
        hops: 2000,
        homes: 8,
        hubs: true,
    };
    let (cls, _) = walk(&load, "cls");
    let (locality, _) = walk(&load, "hierarchical");
    let (auto, stats) = walk(&load, "auto");
    let adaptive = stats.adaptive.expect("auto adapts on four nodes");
    eprintln!("cls {cls} ns, hierarchical {locality} ns, auto {auto} ns, {adaptive:?}");
    assert!(
        locality > cls * 3 / 2,
        "the workload: locality must not pay"
    );
    assert_eq!(adaptive.settled, "cls");
    assert!(adaptive.switches >= 1);
    assert!(
        auto < locality * 7 / 10,
        "auto {auto} ns against hierarchical {locality} ns"
    );
    // Within 5% of `cls`, the policy it settled on: the switch hands the walkers that
    // `hierarchical` left in pinned and foreign queues to thieves; left there, they waited for
    // their worker to run out of other work, and `auto` ran at 0.90× of `cls`
    // (docs/decisions/0074-auto-switches-release-queued-actors.md).
    assert!(
        auto * 95 <= cls * 100,
        "auto {auto} ns against cls {cls} ns"
    );
}

/// Walkers whose 256 KiB of state each fits in their node's cache: under `cls` every wake-up
/// moves the walker to its waker's worker and its state follows from another cache; under
/// `hierarchical` it runs at home. `auto` must stay there.
#[test]
fn auto_keeps_locality_where_it_pays() {
    let load = Walk {
        walkers: 256,
        footprint: 256 << 10,
        compute: Duration::from_micros(1),
        tokens: 256,
        hops: 400,
        homes: 32,
        hubs: false,
    };
    let (cls, _) = walk(&load, "cls");
    let (locality, _) = walk(&load, "hierarchical");
    let (auto, stats) = walk(&load, "auto");
    let adaptive = stats.adaptive.expect("auto adapts on four nodes");
    eprintln!("cls {cls} ns, hierarchical {locality} ns, auto {auto} ns, {adaptive:?}");
    assert!(cls > locality * 3, "the workload: locality must pay");
    assert_eq!(
        (adaptive.settled.as_str(), adaptive.switches),
        ("hierarchical", 0)
    );
    assert!(adaptive.probes >= 2, "it kept looking");
    assert!(auto < cls / 3, "auto {auto} ns against cls {cls} ns");
}

/// On one NUMA node `auto` is `cls` and does not adapt (there is no locality to buy).
#[test]
fn auto_on_one_node_is_plain_stealing_without_a_controller() {
    let mut config = Config {
        engine: EngineKind::Sim,
        topology: "synthetic:package:1 core:8 pu:1".to_owned(),
        workers: 8,
        policy: PolicyKind::Auto,
        ..Config::default()
    };
    config.sim.quiet_ms = 0;
    let system = System::from_config(config).unwrap();
    let stats = system.stats();
    system.shutdown();
    assert_eq!(stats.policy, "cls");
    assert!(stats.adaptive.is_none());
}

/// A driver that spawns children in slices of a thousand, each answering one request and
/// stopping (Savina's fjcreate). Under `hierarchical` the children run where the driver wakes
/// them, in bursts, while children stolen onto other workers contend for the driver's mailbox:
/// one window's throughput varies by a spread above 1 (7 to 120 messages per µs on the simulated
/// Opteron), and a probe of four windows a side called `hierarchical`'s gain a tie, which went
/// to `cls`. Pooled probes in longer windows keep it
/// (docs/decisions/0099-auto-pools-its-evidence.md).
mod fork_join {
    use loka::{Actor, ActorRef, Context, ReplyTo, SpawnOptions};
    use std::time::Duration;

    const SLICE: u64 = 1_000;

    struct Child(ActorRef<Msg>);

    impl Actor for Child {
        type Msg = ();
        fn handle(&mut self, ctx: &mut Context<Self>, (): ()) {
            let _ = self.0.send(Msg::Reply);
            ctx.charge(Duration::from_nanos(8));
            ctx.stop();
        }
    }

    pub enum Msg {
        Start(ReplyTo<u64>),
        Continue,
        Reply,
    }

    pub struct Driver {
        pub children: u64,
        pub spawned: u64,
        pub replies: u64,
        pub done: Option<ReplyTo<u64>>,
    }

    impl Driver {
        fn slice(&mut self, ctx: &mut Context<Self>) {
            let me = ctx.myself();
            let end = self.children.min(self.spawned + SLICE);
            for _ in self.spawned..end {
                let child = ctx.spawn_with(Child(me.clone()), SpawnOptions::new().lazy(true));
                child.send(()).expect("fresh actor");
            }
            self.spawned = end;
            if self.spawned < self.children {
                me.send(Msg::Continue).expect("alive");
            }
        }
    }

    impl Actor for Driver {
        type Msg = Msg;
        fn handle(&mut self, ctx: &mut Context<Self>, msg: Msg) {
            match msg {
                Msg::Start(done) => {
                    self.done = Some(done);
                    self.slice(ctx);
                }
                Msg::Continue => self.slice(ctx),
                Msg::Reply => {
                    self.replies += 1;
                    if self.replies == self.children {
                        if let Some(done) = self.done.take() {
                            done.send(self.replies);
                        }
                    }
                }
            }
        }
    }
}

/// Runs the fork-join load under `policy` on the simulated Opteron (8 nodes, 64 workers):
/// virtual ns and stats; every child must answer.
fn fork_join(policy: &str, children: u64) -> (u64, loka::Stats) {
    let mut config = Config {
        engine: EngineKind::Sim,
        topology: "preset:opteron6376".to_owned(),
        workers: 64,
        policy: policy.parse().unwrap(),
        ..Config::default()
    };
    config.sim.quiet_ms = 0;
    let system = System::from_config(config).unwrap();
    let driver = system.spawn(fork_join::Driver {
        children,
        spawned: 0,
        replies: 0,
        done: None,
    });
    system.run_until_idle();
    let before = system.stats().sim.unwrap().virtual_ns;
    let replies = driver
        .ask(fork_join::Msg::Start)
        .unwrap()
        .wait_timeout(Duration::from_secs(600))
        .expect("the children answer");
    assert_eq!(replies, children, "{policy}: every child answered");
    system.run_until_idle();
    let stats = system.stats();
    system.shutdown();
    (stats.sim.unwrap().virtual_ns - before, stats)
}

#[test]
fn auto_keeps_locality_that_pays_in_bursts() {
    const CHILDREN: u64 = 200_000;
    let (cls, _) = fork_join("cls", CHILDREN);
    let (locality, _) = fork_join("hierarchical", CHILDREN);
    let (auto, stats) = fork_join("auto", CHILDREN);
    let adaptive = stats.adaptive.expect("auto adapts on eight nodes");
    eprintln!("cls {cls} ns, hierarchical {locality} ns, auto {auto} ns, {adaptive:?}");
    assert!(cls > locality * 2, "the workload: locality must pay");
    assert_eq!(adaptive.settled, "hierarchical");
    assert!(
        adaptive.window_ns > 250_000,
        "the windows grew on the bursts"
    );
    assert!(auto < cls * 3 / 4, "auto {auto} ns against cls {cls} ns");
}
