//! `hierarchical`: Francesquini's hub-aware hierarchical scheduling (Alg. 4.3/4.4; docs/references.md).
//!
//! * Hubs are pinned to their worker: they are queued where only that worker looks, so no steal
//!   ever moves them.
//! * Every actor has a *home node* (the NUMA node of the worker that first ran it). An actor that
//!   becomes runnable on a worker outside its home node is *foreign* there and is queued in that
//!   worker's foreign queue for its home node (O(1) per (worker, home node)).
//! * An idle worker steals following Alg. 4.4, as a fixed plan computed once per worker
//!   ([`steal_plan`]): (1) bring home: foreign actors whose home is my node, farthest worker first;
//!   (2) local: my node's workers, nearest first; (3) remote: nodes in `numaNodesInDistanceOrder`,
//!   choosing on each node per Alg. 4.3: foreign actors of that node's workers (nearest worker
//!   first), then the longest queue of the node (hubs are never in stealable queues, so "the first
//!   non-hub" is whatever the thief takes).
//! * A woken hub goes to its home worker. A woken regular actor runs on the sender's worker when the
//!   sender is on the actor's home node (communication locality is cheap inside a node), else goes
//!   back to the worker it last ran on (Erlang keeps a process on its scheduler).
//!
//! Periodic load balancing (Alg. 4.1/4.2) is in [`super::balance`].

use super::Route;
use loka_topology::WorkerLayout;

/// One step of a thief's plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StealStep {
    /// Take from `victim`'s foreign queue of actors whose home node is `node`.
    Foreign {
        /// The worker holding foreign actors.
        victim: usize,
        /// Their home node.
        node: usize,
    },
    /// Take from `victim`'s ordinary queues.
    Worker {
        /// The victim.
        victim: usize,
    },
    /// Take from the longest ordinary queue among these workers (one remote node).
    LongestOf {
        /// The node's workers.
        workers: Vec<usize>,
    },
}

/// The other workers by cost from `me`, nearest first, equally near ones in index order
/// starting after `me` (wrapping around), as an Erlang scheduler tries its peers: the layout's
/// own order breaks ties by index, which sent every thief of a node to the same victim first
/// (docs/decisions/0087-hierarchical-thieves-start-after-themselves.md). The layout's runs of
/// equal cost are ascending, so each is rotated in place: linear, as the layout's own order is.
fn rotated_dist(me: usize, layout: &WorkerLayout) -> Vec<usize> {
    let mut dist = layout.dist(me).to_vec();
    let cost = |w: usize| layout.cost(me, w).to_bits();
    for run in dist.chunk_by_mut(|&a, &b| cost(a) == cost(b)) {
        let before_me = run.partition_point(|&w| w < me);
        run.rotate_left(before_me);
    }
    dist
}

/// Alg. 4.4 as a plan for worker `me`.
pub fn steal_plan(me: usize, layout: &WorkerLayout) -> Vec<StealStep> {
    let my_node = layout.node_of(me);
    let dist = &rotated_dist(me, layout);
    let mut plan = Vec::new();
    // (1) Bring home: actors of my node running elsewhere, farthest first.
    for &victim in dist.iter().rev() {
        if layout.node_of(victim) != my_node {
            plan.push(StealStep::Foreign {
                victim,
                node: my_node,
            });
        }
    }
    // (2) Local, nearest first.
    for &victim in dist {
        if layout.node_of(victim) == my_node {
            plan.push(StealStep::Worker { victim });
        }
    }
    // (3) Remote nodes, nearest first: their foreign actors (nearest worker first), then the
    // longest queue.
    for &node in layout.node_order(my_node) {
        let members: Vec<usize> = dist
            .iter()
            .copied()
            .filter(|&w| layout.node_of(w) == node)
            .collect();
        for &victim in &members {
            for other in (0..layout.node_count()).filter(|&n| n != my_node && n != node) {
                plan.push(StealStep::Foreign {
                    victim,
                    node: other,
                });
            }
        }
        plan.push(StealStep::LongestOf { workers: members });
    }
    plan
}

/// The route of a regular actor that a worker's own wake-up keeps on that worker
/// ([`wake_target`] chose the sender): its next slot, as under `cls`, unless the waking actor is
/// a hub. Then the head of the worker's deque, where the worker's node-mates steal it: the hub is
/// pinned here and its worker runs its pinned queue first, so an actor in the next slot, which
/// no thief takes from, would wait behind the hub's activations
/// (docs/decisions/0106-a-hub-keeps-its-worker.md).
#[inline]
pub fn route_here(waker_is_hub: bool) -> Route {
    if waker_is_hub {
        Route::LocalHead
    } else {
        Route::LocalNext
    }
}

/// Where a woken actor goes under `hierarchical`.
///
/// A hub: its home worker (pinned). A regular actor woken by a sender on its home node: the
/// sender's worker, as under `cls` (communication locality costs little inside a node: Francesquini
/// measures 1.3 µs same core vs 2.5 µs same socket, but 8.6 µs remote). Woken from another node (or
/// a plain thread): the worker it last ran on (Erlang keeps a process on its scheduler), else its
/// home, else the sender's worker; `sender_on_home_node` says whether the sender's worker is on
/// the actor's home node (true when the actor has no home yet).
///
/// A `small` actor (its state no more than the lines a hand-off moves anyway) woken by a worker
/// runs there, on any node: Francesquini keeps a process on its home node for its heap, and a
/// small actor has none worth keeping near, while the message it was woken for was just written
/// in the waker's cache. Sent back instead, each message between small partners on two nodes
/// crossed twice per round trip: Savina's big at 0.36× of `cls` on a simulated 64-worker Opteron
/// and 0.11× on the 192-worker Altix, the Cforall executor at 0.21–0.56×
/// (docs/decisions/0085-hierarchical-small-actors-follow-their-wakers.md).
///
/// Unless sending it there would hand it to an idle worker (asleep, or searching for work) while
/// the sender's worker has nothing else to run (`idle_hand_off`, asked only of that worker): then
/// the sender's worker runs it. The hand-off would buy no parallelism, only the home-node
/// accesses of one activation (hundreds of nanoseconds for an actor's few lines), and the
/// sender's worker would idle meanwhile: a chain of messages that crosses nodes, threadring's
/// token, paid a wake-up per message to a sleeper (0.08× of `cls` on a simulated 64-worker
/// Opteron, docs/decisions/0071-hierarchical-spares-sleepers.md) and a cross-node hand-off per
/// message to a searcher (0.44× on a simulated Nehalem,
/// docs/decisions/0082-an-idle-hand-off-buys-nothing.md). With other work queued on the sender's
/// worker, the actor's own worker takes it and spreads the load as before; a busy one gets it
/// back, as Erlang's scheduler does.
pub fn wake_target(
    hub: bool,
    small: bool,
    home: Option<usize>,
    last: Option<usize>,
    sender: Option<usize>,
    sender_on_home_node: bool,
    idle_hand_off: impl Fn(usize) -> bool,
) -> Option<usize> {
    if hub {
        home.or(last).or(sender)
    } else if sender.is_some() && (sender_on_home_node || small) {
        sender
    } else {
        match last.or(home) {
            Some(back) if sender.is_some() && Some(back) != sender && idle_hand_off(back) => sender,
            back => back.or(sender),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loka_topology::{CostMatrix, LayoutOptions, Topology};

    fn layout(preset: &str) -> WorkerLayout {
        let topo = Topology::load(&preset.parse().unwrap()).unwrap();
        let cost = CostMatrix::hierarchical(&topo);
        WorkerLayout::new(&topo, &cost, &LayoutOptions::default()).unwrap()
    }

    #[test]
    fn plan_follows_alg_4_4_order() {
        let l = layout("preset:xeon-x7560"); // 4 nodes × 8 workers
        let plan = steal_plan(0, &l);
        let my_node = l.node_of(0);
        // 1. bring home from the 24 workers of other nodes, farthest first.
        let bring: Vec<_> = plan
            .iter()
            .take_while(|s| matches!(s, StealStep::Foreign { node, .. } if *node == my_node))
            .collect();
        assert_eq!(bring.len(), 24);
        // 2. then the 7 local workers, nearest first (dist order).
        let local: Vec<usize> = plan[24..31]
            .iter()
            .map(|s| match s {
                StealStep::Worker { victim } => *victim,
                other => panic!("expected a local step, got {other:?}"),
            })
            .collect();
        let expected: Vec<usize> = l
            .dist(0)
            .iter()
            .copied()
            .filter(|&w| l.node_of(w) == my_node)
            .collect();
        assert_eq!(local, expected);
        // 3. remote nodes in node order, each ending with its longest-queue step.
        let longest: Vec<Vec<usize>> = plan
            .iter()
            .filter_map(|s| match s {
                StealStep::LongestOf { workers } => Some(workers.clone()),
                _ => None,
            })
            .collect();
        let nodes: Vec<usize> = longest.iter().map(|ws| l.node_of(ws[0])).collect();
        assert_eq!(nodes, l.node_order(my_node));
        // Never a step against myself.
        assert!(plan.iter().all(|s| !matches!(
            s,
            StealStep::Worker { victim: 0 } | StealStep::Foreign { victim: 0, .. }
        )));
    }

    #[test]
    fn equally_near_victims_are_tried_from_the_next_worker_on() {
        // One node, every worker as near as every other: each thief starts after itself, as an
        // Erlang scheduler does, instead of every thief trying worker 0 first.
        let l = layout("synthetic:package:1 core:4 pu:1");
        let first_victims: Vec<_> = (0..4)
            .map(|me| match &steal_plan(me, &l)[..] {
                [StealStep::Worker { victim }, ..] => *victim,
                other => panic!("worker {me}: {other:?}"),
            })
            .collect();
        assert_eq!(first_victims, [1, 2, 3, 0]);
        let plan_of_2: Vec<_> = steal_plan(2, &l)
            .iter()
            .map(|s| match s {
                StealStep::Worker { victim } => *victim,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(plan_of_2, [3, 0, 1]);
    }

    #[test]
    fn one_node_machine_has_only_local_steps() {
        let l = layout("synthetic:package:1 core:4 pu:1");
        let plan = steal_plan(1, &l);
        assert_eq!(plan.len(), 3);
        assert!(plan.iter().all(|s| matches!(s, StealStep::Worker { .. })));
    }

    #[test]
    fn hubs_go_home_regular_actors_follow_senders_within_their_home_node() {
        let awake = |_| false; // never an idle hand-off
                               // A hub goes home whoever wakes it.
        assert_eq!(
            wake_target(true, false, Some(3), Some(5), Some(1), true, awake),
            Some(3)
        );
        // A sender on the actor's home node runs it (communication locality).
        assert_eq!(
            wake_target(false, false, Some(3), Some(5), Some(1), true, awake),
            Some(1)
        );
        // A sender elsewhere: back where it last ran, else home.
        assert_eq!(
            wake_target(false, false, Some(3), Some(5), Some(1), false, awake),
            Some(5)
        );
        assert_eq!(
            wake_target(false, false, Some(3), None, Some(1), false, awake),
            Some(3)
        );
        // From a plain thread: where it last ran.
        assert_eq!(
            wake_target(false, false, Some(3), Some(5), None, false, awake),
            Some(5)
        );
        assert_eq!(
            wake_target(false, false, None, None, None, true, awake),
            None
        );
    }

    #[test]
    fn a_sleeping_worker_is_not_woken_for_an_actor_an_idle_sender_can_run() {
        let idle = |w| w == 5;
        // Its last worker sleeps and the sender has nothing else to run: the sender runs it.
        assert_eq!(
            wake_target(false, false, Some(3), Some(5), Some(1), false, idle),
            Some(1)
        );
        // Any other case (awake, or the sender busy): back there.
        assert_eq!(
            wake_target(false, false, Some(3), Some(6), Some(1), false, idle),
            Some(6)
        );
        // Never ran and its home sleeps: the sender.
        assert_eq!(
            wake_target(false, false, Some(5), None, Some(1), false, idle),
            Some(1)
        );
        // A hub goes home, asleep or not; from a plain thread someone must be woken.
        assert_eq!(
            wake_target(true, false, Some(5), Some(5), Some(1), false, idle),
            Some(5)
        );
        assert_eq!(
            wake_target(false, false, Some(3), Some(5), None, false, idle),
            Some(5)
        );
    }

    #[test]
    fn a_small_actor_runs_where_it_is_woken_on_any_node() {
        // Its last worker is busy (no idle hand-off). Home and last worker 5, woken from
        // worker 1 on another node.
        let busy = |_| false;
        assert_eq!(
            wake_target(false, false, Some(5), Some(5), Some(1), false, busy),
            Some(5)
        );
        assert_eq!(
            wake_target(false, true, Some(5), Some(5), Some(1), false, busy),
            Some(1)
        );
        // A small hub still goes home; from a plain thread, back where it last ran.
        assert_eq!(
            wake_target(true, true, Some(5), Some(5), Some(1), false, busy),
            Some(5)
        );
        assert_eq!(
            wake_target(false, true, Some(5), Some(5), None, false, busy),
            Some(5)
        );
    }
}
