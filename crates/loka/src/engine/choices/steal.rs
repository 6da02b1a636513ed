//! Where an idle worker looks for work, whatever its engine: the victim choice a policy fixes
//! when the system starts ([`Victims`]) and one pass over it ([`steal_once`]), as pure code over
//! what a [`Thief`] can see. The actor-centric engine steals on threads (`actor_centric/steal.rs`),
//! the simulation on virtual workers (`sim/driver.rs`).

use crate::policy::cls::Cls;
use crate::policy::hierarchical::{self, StealStep};
use crate::policy::lgs::WeightedVictims;
use crate::policy::places::PlaceVictims;
use crate::policy::PolicyKind;
use crate::telemetry::WorkerCounters;
use loka_topology::WorkerLayout;

/// How a thief picks victims.
#[derive(Debug, Clone)]
pub(crate) enum Victims {
    /// `cls`: uniformly random other worker.
    Random(Cls),
    /// `lgs`: weighted over nested groups.
    Weighted {
        /// The nested groups and the walk over them.
        victims: WeightedVictims,
        /// When actors have home PUs (every variant but `lgs:tp`): per worker, whether it is on
        /// another NUMA node than the thief, where a searching victim is left its one queued
        /// actor ([`steal_once`]).
        other_node: Option<Box<[bool]>>,
    },
    /// `hierarchical`: Alg. 4.4's plan; `erlang`: the other workers in index order.
    Plan(Vec<StealStep>),
    /// `places` mode B: a random worker of the own place, then of a random other place.
    Places(PlaceVictims),
    /// `places:a`: the shared queue of a random other place (`mine`: the thief's place).
    PlaceQueues {
        /// The thief's place.
        mine: usize,
        /// How many places there are.
        places: usize,
    },
}

impl Victims {
    /// The victim choice of worker `me` under `policy` (`cls` is its `cls` state).
    pub(crate) fn new(policy: PolicyKind, me: usize, cls: &Cls, layout: &WorkerLayout) -> Victims {
        match policy {
            PolicyKind::Auto => unreachable!("`auto` is resolved before the engine starts"),
            PolicyKind::Cls => Victims::Random(cls.clone()),
            PolicyKind::Lgs(v) => Victims::Weighted {
                victims: WeightedVictims::new(layout.groups(me)),
                other_node: (!v.tp).then(|| {
                    (0..layout.workers())
                        .map(|w| layout.node_of(w) != layout.node_of(me))
                        .collect()
                }),
            },
            PolicyKind::Hierarchical { .. } => Victims::Plan(hierarchical::steal_plan(me, layout)),
            PolicyKind::Places(mode) if mode.shared_queues() => Victims::PlaceQueues {
                mine: layout.place_of(me),
                places: layout.place_count(),
            },
            PolicyKind::Places(_) => Victims::Places(PlaceVictims::new(me, layout)),
            PolicyKind::Erlang => {
                Victims::Plan(crate::policy::erlang::steal_plan(me, layout.workers()))
            }
        }
    }
}

/// Where one steal attempt looks ([`steal_once`]).
#[derive(Debug, Clone, Copy)]
pub(crate) enum StealFrom<'a> {
    /// A worker's stealable queues.
    Worker(usize),
    /// Worker `victim`'s foreign queue of actors whose home is node `node` (`hierarchical`).
    Foreign {
        /// The worker holding the queue.
        victim: usize,
        /// The home node of its actors.
        node: usize,
    },
    /// The longest of these workers' stealable queues, if any holds work (`hierarchical`).
    LongestOf(&'a [usize]),
    /// A place's shared queue (`places:a`).
    Place(usize),
}

/// An engine's thief as [`steal_once`] drives it: each engine takes from its own queues (and the
/// simulation prices the attempt by the distance to the victim).
pub(crate) trait Thief {
    /// What a steal takes.
    type Task;
    /// One attempt at `from`: what it took, and the worker it came from (the one it is priced
    /// and counted as, for a place's queue the place's first worker).
    fn attempt(&mut self, from: StealFrom<'_>) -> Option<(Self::Task, usize)>;
    /// Whether an actor whose home is `node` may wait in any worker's foreign queue
    /// (`hierarchical`): a `false` skips every foreign-queue step for that node. May say `true`
    /// when none waits; must not say `false` when the thief could see one.
    fn foreign_waiting(&mut self, node: usize) -> bool;
    /// Whether worker `victim` searches for work (awake, not running an activation, not asleep
    /// nor on its way back from a wake-up) and holds at most one actor a thief could take: the
    /// one it takes itself at its next look (a hint; stale either way by the time the thief
    /// acts on it).
    fn searching_with_one(&mut self, victim: usize) -> bool;
    /// Whether `task` lives in a place (`places`: it was hinted to one): only such an actor's
    /// steal across places is counter-productive and counted
    /// (docs/decisions/0083-unhinted-actors-have-no-place.md).
    fn has_place(&self, task: &Self::Task) -> bool;
}

/// What [`steal_once`] took.
pub(crate) struct Stolen<T> {
    pub(crate) task: T,
    /// The worker it came from.
    pub(crate) victim: usize,
    /// The victim's level, when the victim choice gives it (`lgs`).
    pub(crate) level: Option<usize>,
    /// Taken from a place's shared queue (`places:a`), not from a worker.
    pub(crate) from_place: bool,
}

/// One steal attempt of a worker on node `my_node` (a whole pass over the plan under
/// `hierarchical`, a round over the place under `places`): whom to try, in which order, by the
/// policy's victim choice `victims`, with the counts that belong to the choice (attempts,
/// steals across places, foreign actors brought home). The one order of both engines: the
/// actor-centric engine's threads (`actor_centric/steal.rs`) and the simulation's virtual
/// workers (`sim/driver.rs`); each counts the steal itself (steals, levels).
#[inline]
pub(crate) fn steal_once<T: Thief>(
    victims: &mut Victims,
    rng: &mut fastrand::Rng,
    my_node: usize,
    counters: &WorkerCounters,
    thief: &mut T,
) -> Option<Stolen<T::Task>> {
    let stolen = |(task, victim), level| Stolen {
        task,
        victim,
        level,
        from_place: false,
    };
    match victims {
        Victims::Random(p) => {
            let victim = p.next_victim(rng)?;
            counters.steal_attempts.bump(1);
            thief
                .attempt(StealFrom::Worker(victim))
                .map(|t| stolen(t, None))
        }
        Victims::Weighted {
            victims,
            other_node,
        } => {
            let (victim, level) = victims.next_victim(rng)?;
            counters.steal_attempts.bump(1);
            let away = other_node.as_ref().is_some_and(|away| away[victim]);
            if away && thief.searching_with_one(victim) {
                // A worker searching for work looks at its own queues after each of its steal
                // attempts and takes what is queued for it: LGS queues an actor at its home PU
                // for the data it keeps there, and a thief of another node that took it first
                // ran it away from that data to save a wait of one steal attempt
                // (docs/decisions/0105-an-idle-home-takes-its-own.md).
                counters.steals_left_home.bump(1);
                return None;
            }
            thief
                .attempt(StealFrom::Worker(victim))
                .map(|t| stolen(t, Some(level)))
        }
        Victims::Places(places) => {
            for (victim, crosses) in places.round(rng) {
                counters.steal_attempts.bump(1);
                if let Some(t) = thief.attempt(StealFrom::Worker(victim)) {
                    if crosses && thief.has_place(&t.0) {
                        counters.cross_place_steals.bump(1);
                    }
                    return Some(stolen(t, None));
                }
            }
            None
        }
        Victims::PlaceQueues { mine, places } => {
            let victim = crate::policy::places::victim_place(*mine, *places, rng)?;
            counters.steal_attempts.bump(1);
            let (task, victim) = thief.attempt(StealFrom::Place(victim))?;
            if thief.has_place(&task) {
                counters.cross_place_steals.bump(1);
            }
            Some(Stolen {
                task,
                victim,
                level: None,
                from_place: true,
            })
        }
        Victims::Plan(plan) => {
            for step in plan.iter() {
                let found = match step {
                    StealStep::Foreign { node, .. } if !thief.foreign_waiting(*node) => {
                        // Nobody's foreign queue holds an actor of that node: no look, no
                        // attempt (a plan has a foreign step per worker and node, 4,262 on
                        // 192 workers of 24 nodes, and looked at all of them every pass).
                        continue;
                    }
                    StealStep::Foreign { victim, node } => {
                        counters.steal_attempts.bump(1);
                        let found = thief.attempt(StealFrom::Foreign {
                            victim: *victim,
                            node: *node,
                        });
                        if found.is_some() && *node == my_node {
                            counters.bring_home_steals.bump(1);
                        }
                        found
                    }
                    StealStep::Worker { victim } => {
                        counters.steal_attempts.bump(1);
                        thief.attempt(StealFrom::Worker(*victim))
                    }
                    StealStep::LongestOf { workers } => {
                        counters.steal_attempts.bump(1);
                        thief.attempt(StealFrom::LongestOf(workers))
                    }
                };
                if let Some(t) = found {
                    return Some(stolen(t, None));
                }
            }
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loka_topology::{CostMatrix, LayoutOptions, Topology};

    /// A thief with nothing to take anywhere that records where it looked.
    struct Looker {
        looked: Vec<String>,
        foreign_waiting: bool,
        /// What `searching_with_one` answers for every victim.
        searching: bool,
    }

    impl Thief for Looker {
        type Task = ();
        fn attempt(&mut self, from: StealFrom<'_>) -> Option<((), usize)> {
            self.looked.push(format!("{from:?}"));
            None
        }
        fn foreign_waiting(&mut self, _node: usize) -> bool {
            self.foreign_waiting
        }
        fn searching_with_one(&mut self, _victim: usize) -> bool {
            self.searching
        }
        fn has_place(&self, _task: &()) -> bool {
            false
        }
    }

    /// The default worker layout of a preset machine.
    fn layout(preset: &str) -> WorkerLayout {
        let topo = Topology::load(&preset.parse().unwrap()).unwrap();
        WorkerLayout::new(
            &topo,
            &CostMatrix::hierarchical(&topo),
            &LayoutOptions::default(),
        )
        .unwrap()
    }

    fn pass(foreign_waiting: bool) -> (Vec<String>, u64) {
        let layout = layout("preset:altix-uv2000");
        let mut victims = Victims::Plan(crate::policy::hierarchical::steal_plan(0, &layout));
        let counters = WorkerCounters::default();
        let mut thief = Looker {
            looked: Vec::new(),
            foreign_waiting,
            searching: false,
        };
        let mut rng = fastrand::Rng::with_seed(1);
        let stolen = steal_once(&mut victims, &mut rng, 0, &counters, &mut thief);
        assert!(stolen.is_none());
        (thief.looked, counters.steal_attempts.get())
    }

    #[test]
    fn a_hierarchical_pass_skips_foreign_queues_when_no_actor_waits_in_one() {
        // 192 workers on 24 nodes: a foreign queue per (worker, node) in the plan.
        let (all, attempts) = pass(true);
        assert_eq!(all.len(), 4_262);
        assert_eq!(attempts, 4_262);
        let (skipped, attempts) = pass(false);
        assert!(
            skipped.iter().all(|s| !s.starts_with("Foreign")),
            "{skipped:?}"
        );
        // 7 workers of its own node and the longest queue of each of the 23 others.
        assert_eq!(skipped.len(), 30);
        assert_eq!(attempts, 30);
    }

    /// Twenty weighted attempts of worker 0 of the Xeon preset (node 0: workers 0–7) under
    /// `policy`, each victim answering `searching`: (the victims whose queues were tried, attempts
    /// counted, attempts that left a victim alone).
    fn weighted(policy: &str, searching: bool) -> (Vec<usize>, u64, u64) {
        let layout = layout("preset:xeon-x7560");
        let policy: PolicyKind = policy.parse().unwrap();
        let mut victims = Victims::new(policy, 0, &Cls::new(0, layout.workers(), true), &layout);
        let counters = WorkerCounters::default();
        let mut thief = Looker {
            looked: Vec::new(),
            foreign_waiting: false,
            searching,
        };
        let mut rng = fastrand::Rng::with_seed(1);
        for _ in 0..20 {
            assert!(steal_once(&mut victims, &mut rng, 0, &counters, &mut thief).is_none());
        }
        let tried = (thief.looked.iter())
            .map(|l| l["Worker(".len()..l.len() - 1].parse().unwrap())
            .collect();
        (
            tried,
            counters.steal_attempts.get(),
            counters.steals_left_home.get(),
        )
    }

    #[test]
    fn an_lgs_thief_leaves_a_searching_victim_elsewhere_its_own_queue() {
        // Plain `lgs`: a searching victim of another node is not stolen from; one of the
        // thief's node is (the walk starts there).
        let (tried, attempts, left) = weighted("lgs", true);
        assert_eq!(attempts, 20);
        assert!(
            !tried.is_empty() && tried.iter().all(|&v| v < 8),
            "{tried:?}"
        );
        assert!(left > 0);
        assert_eq!(tried.len() as u64 + left, 20);
        // A busy victim, wherever it is: stolen from as before.
        let (tried, attempts, left) = weighted("lgs", false);
        assert_eq!((tried.len(), attempts, left), (20, 20, 0));
        assert!(tried.iter().any(|&v| v >= 8), "{tried:?}");
        // No homes (`lgs:tp`): the rule does not apply.
        let (tried, attempts, left) = weighted("lgs:tp", true);
        assert_eq!((tried.len(), attempts, left), (20, 20, 0));
    }
}
