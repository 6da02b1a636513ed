//! Initial placement strategies (Francesquini §4.2.2 and §5.1.1.3, docs/references.md): where a new actor starts.
//!
//! Signature: (parent's worker, a per-system spawn ticket, RNG, layout) → worker. The text names
//! the strategies but does not define `compact` and `scatter` precisely; loka defines them as:
//!
//! * `default`: the parent's worker (round robin when spawned from a plain thread).
//! * `compact`: keep the family together: round robin over the workers of the parent's NUMA node,
//!   so the family fills that node and never leaves it (from a plain thread: round robin in
//!   node-major worker order, which fills node 0 before node 1).
//! * `scatter`: spread the family: successive spawns go to successive NUMA nodes, starting with the
//!   parent's node and continuing in the parent node's `numaNodesInDistanceOrder`; within a node,
//!   round robin over its workers.
//! * `circular`: round robin over all workers in index order (CAF's and Erlang's default for
//!   spawns from outside).
//! * `random`: uniformly random worker.

use loka_topology::WorkerLayout;
use std::fmt;
use std::str::FromStr;

/// Where a new actor is first placed. Hints only: they never change what a program computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Placement {
    /// The policy's default: the spawning actor's worker, or round robin from a plain thread.
    #[default]
    Default,
    /// A specific worker (taken modulo the worker count).
    Worker(usize),
}

/// A placement strategy.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(try_from = "String", into = "String")]
pub enum PlacementStrategy {
    /// The parent's worker.
    #[default]
    Default,
    /// Fill the parent's NUMA node.
    Compact,
    /// Spread over NUMA nodes, nearest first.
    Scatter,
    /// Round robin over all workers.
    Circular,
    /// Uniformly random.
    Random,
}

impl PlacementStrategy {
    /// The names accepted by [`FromStr`].
    pub const NAMES: &'static [&'static str] =
        &["default", "compact", "scatter", "circular", "random"];
    /// Every strategy.
    pub const ALL: &'static [PlacementStrategy] = &[
        PlacementStrategy::Default,
        PlacementStrategy::Compact,
        PlacementStrategy::Scatter,
        PlacementStrategy::Circular,
        PlacementStrategy::Random,
    ];

    /// The worker a new actor starts on. `parent` is the spawning actor's worker (`None` from a
    /// plain thread); `ticket` counts spawns placed by this strategy (the engine increments it).
    pub fn place(
        self,
        parent: Option<usize>,
        ticket: usize,
        rng: &mut fastrand::Rng,
        layout: &WorkerLayout,
    ) -> usize {
        let workers = layout.workers();
        match (self, parent) {
            (PlacementStrategy::Default, Some(p)) => p,
            (PlacementStrategy::Default | PlacementStrategy::Circular, _) => ticket % workers,
            (PlacementStrategy::Random, _) => rng.usize(..workers),
            (PlacementStrategy::Compact, Some(p)) => {
                let node = layout.workers_of_node(layout.node_of(p));
                node[ticket % node.len()]
            }
            (PlacementStrategy::Compact, None) => ticket % workers,
            (PlacementStrategy::Scatter, parent) => {
                let home = layout.node_of(parent.unwrap_or(0));
                let order = layout.node_order(home);
                let nodes = 1 + order.len();
                let node = match ticket % nodes {
                    0 => home,
                    k => order[k - 1],
                };
                let members = layout.workers_of_node(node);
                members[(ticket / nodes) % members.len()]
            }
        }
    }
}

impl fmt::Display for PlacementStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = Self::ALL.iter().position(|s| s == self).expect("listed");
        f.write_str(Self::NAMES[i])
    }
}

/// An unknown placement strategy name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown placement strategy `{name}` (known: {known})", known = PlacementStrategy::NAMES.join(", "))]
pub struct UnknownPlacement {
    /// The name given.
    pub name: String,
}

impl FromStr for PlacementStrategy {
    type Err = UnknownPlacement;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::NAMES
            .iter()
            .position(|n| *n == s)
            .map(|i| Self::ALL[i])
            .ok_or_else(|| UnknownPlacement { name: s.to_owned() })
    }
}

impl TryFrom<String> for PlacementStrategy {
    type Error = UnknownPlacement;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<PlacementStrategy> for String {
    fn from(p: PlacementStrategy) -> String {
        p.to_string()
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

    fn place_many(
        s: PlacementStrategy,
        parent: Option<usize>,
        n: usize,
        l: &WorkerLayout,
    ) -> Vec<usize> {
        let mut rng = fastrand::Rng::with_seed(9);
        (0..n).map(|t| s.place(parent, t, &mut rng, l)).collect()
    }

    #[test]
    fn compact_fills_the_parents_node_first() {
        let l = layout("preset:opteron6376"); // 8 nodes × 8 workers
        let placed = place_many(PlacementStrategy::Compact, Some(19), 16, &l);
        assert!(
            placed.iter().all(|&w| l.node_of(w) == l.node_of(19)),
            "{placed:?}"
        );
        let mut first8 = placed[..8].to_vec();
        first8.sort_unstable();
        assert_eq!(
            first8,
            l.workers_of_node(l.node_of(19)),
            "each worker of the node once"
        );
    }

    #[test]
    fn scatter_spreads_across_nodes_nearest_first() {
        let l = layout("preset:opteron6376");
        let placed = place_many(PlacementStrategy::Scatter, Some(0), 8, &l);
        let nodes: Vec<usize> = placed.iter().map(|&w| l.node_of(w)).collect();
        let mut distinct = nodes.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(
            distinct.len(),
            8,
            "8 spawns hit 8 different nodes: {nodes:?}"
        );
        assert_eq!(nodes[0], l.node_of(0), "starts at the parent's node");
        assert_eq!(
            &nodes[1..],
            l.node_order(l.node_of(0)),
            "then nearest nodes first"
        );
    }

    #[test]
    fn default_circular_and_random() {
        let l = layout("preset:xeon-x7560"); // 4 × 8
        assert_eq!(
            place_many(PlacementStrategy::Default, Some(5), 3, &l),
            [5, 5, 5]
        );
        assert_eq!(
            place_many(PlacementStrategy::Default, None, 3, &l),
            [0, 1, 2]
        );
        assert_eq!(
            place_many(PlacementStrategy::Circular, Some(5), 3, &l),
            [0, 1, 2]
        );
        let random = place_many(PlacementStrategy::Random, Some(5), 3_200, &l);
        let mut per = vec![0; 32];
        random.iter().for_each(|&w| per[w] += 1);
        assert!(per.iter().all(|&n| (50..150).contains(&n)), "{per:?}");
    }

    #[test]
    fn names_round_trip_and_unknown_is_named() {
        for s in PlacementStrategy::ALL {
            assert_eq!(s.to_string().parse::<PlacementStrategy>().unwrap(), *s);
        }
        let e = "spread"
            .parse::<PlacementStrategy>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("`spread`") && e.contains("scatter"), "{e}");
    }
}
