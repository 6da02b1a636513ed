//! Structures derived once at startup for a set of workers: `dist` orders,
//! nested victim groups, `numaNodesInDistanceOrder`, places.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::cost::CostMatrix;
use crate::error::TopologyError;
use crate::model::{Level, Topology};

/// What the innermost victim group `g0` of a worker is (Wölke §4.1, §6.4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum GroupLevel {
    /// The workers on the same NUMA node (LGS).
    #[default]
    Numa,
    /// The workers sharing the same L2 cache (LGS-CO).
    L2,
    /// The workers sharing the same L3 cache.
    L3,
    /// The workers in the same package.
    Package,
}

impl GroupLevel {
    /// The name accepted by `FromStr` and written by `Display`.
    pub fn name(self) -> &'static str {
        match self {
            GroupLevel::Numa => "numa",
            GroupLevel::L2 => "l2",
            GroupLevel::L3 => "l3",
            GroupLevel::Package => "package",
        }
    }

    fn level(self) -> Level {
        match self {
            GroupLevel::Numa => Level::Numa,
            GroupLevel::L2 => Level::L2,
            GroupLevel::L3 => Level::L3,
            GroupLevel::Package => Level::Package,
        }
    }
}

impl fmt::Display for GroupLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for GroupLevel {
    type Err = TopologyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "numa" | "node" => Ok(GroupLevel::Numa),
            "l2" => Ok(GroupLevel::L2),
            "l3" => Ok(GroupLevel::L3),
            "package" | "socket" => Ok(GroupLevel::Package),
            _ => Err(TopologyError::BadLevel {
                what: "group level",
                input: s.to_owned(),
                expected: "numa, l2, l3, package",
            }),
        }
    }
}

/// What a place is (LASSI): one place per package (default), per L3, or per NUMA node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PlaceLevel {
    /// One place per package (LASSI's choice: one per processor).
    #[default]
    Package,
    /// One place per L3 cache.
    L3,
    /// One place per NUMA node.
    Numa,
}

impl PlaceLevel {
    /// The name accepted by `FromStr` and written by `Display`.
    pub fn name(self) -> &'static str {
        match self {
            PlaceLevel::Package => "package",
            PlaceLevel::L3 => "l3",
            PlaceLevel::Numa => "numa",
        }
    }

    fn level(self) -> Level {
        match self {
            PlaceLevel::Package => Level::Package,
            PlaceLevel::L3 => Level::L3,
            PlaceLevel::Numa => Level::Numa,
        }
    }
}

impl fmt::Display for PlaceLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PlaceLevel {
    type Err = TopologyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "package" | "socket" => Ok(PlaceLevel::Package),
            "l3" => Ok(PlaceLevel::L3),
            "numa" | "node" => Ok(PlaceLevel::Numa),
            _ => Err(TopologyError::BadLevel {
                what: "place level",
                input: s.to_owned(),
                expected: "package, l3, numa",
            }),
        }
    }
}

macro_rules! serde_via_str {
    ($t:ty) => {
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.name())
            }
        }
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let s = String::deserialize(deserializer)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}
serde_via_str!(GroupLevel);
serde_via_str!(PlaceLevel);

/// How to lay workers out on a topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LayoutOptions {
    /// Number of workers; `0` (the default) means one worker per PU
    /// (`topo.pu_count()`). Worker `i` runs on PU `i` (logical order), so fewer
    /// workers than PUs use the first PUs (the compact mapping).
    pub workers: usize,
    /// What `g0` is (default: the NUMA node).
    pub group_level: GroupLevel,
    /// What a place is (default: the package).
    pub place_level: PlaceLevel,
}

/// Everything the schedulers need about where workers are, computed once.
///
/// Worker `i` runs on PU `i` of the topology's logical order (hwloc's `L#`),
/// `0 <= i < workers`.
#[derive(Debug, Clone)]
pub struct WorkerLayout {
    workers: usize,
    pu: Vec<usize>,
    node: Vec<usize>,
    node_workers: Vec<Vec<usize>>,
    groups: Vec<Vec<Vec<usize>>>,
    /// Row-major `workers × words` bitsets of each worker's innermost group.
    g0_bits: Vec<u64>,
    words: usize,
    dist: Vec<Vec<usize>>,
    /// The cost matrix's entries (worker `i` runs on PU `i`, so worker costs are PU costs),
    /// shared with it: `stride` entries per row.
    cost: Arc<Vec<f64>>,
    stride: usize,
    node_dist: Vec<f64>,
    node_order: Vec<Vec<usize>>,
    place: Vec<usize>,
    place_workers: Vec<Vec<usize>>,
    has_l2_sharing: bool,
    group_level: GroupLevel,
    place_level: PlaceLevel,
}

impl WorkerLayout {
    /// Computes the layout.
    ///
    /// # Errors
    /// [`TopologyError::TooManyWorkers`] if `opts.workers` exceeds the PU count
    /// (on every kind of topology: a preset with 64 PUs takes up to 64 workers);
    /// [`TopologyError::CostSize`] if the cost matrix does not match the topology.
    pub fn new(
        topo: &Topology,
        cost: &CostMatrix,
        opts: &LayoutOptions,
    ) -> Result<WorkerLayout, TopologyError> {
        let pus = topo.pu_count();
        let n = if opts.workers == 0 { pus } else { opts.workers };
        if n > pus {
            return Err(TopologyError::TooManyWorkers {
                workers: n,
                pus,
                topology: topo.spec().to_string(),
            });
        }
        cost.check_size(topo)?;
        let pu: Vec<usize> = (0..n).collect();
        let node: Vec<usize> = pu.iter().map(|&p| topo.numa_node_of(p)).collect();
        let node_count = topo.numa_node_count();
        let mut node_workers = vec![Vec::new(); node_count];
        for (w, &nd) in node.iter().enumerate() {
            node_workers[nd].push(w);
        }

        // Victim groups.
        let level = opts.group_level.level();
        let groups: Vec<Vec<Vec<usize>>> = (0..n)
            .map(|w| Self::groups_of(topo, w, &pu, &node, &node_workers, level))
            .collect();
        let words = n.div_ceil(64).max(1);
        let mut g0_bits = vec![0u64; n * words];
        for (w, gs) in groups.iter().enumerate() {
            for &v in gs.first().map(Vec::as_slice).unwrap_or(&[]) {
                g0_bits[w * words + v / 64] |= 1 << (v % 64);
            }
            g0_bits[w * words + w / 64] |= 1 << (w % 64);
        }

        // dist: all other workers by non-decreasing cost, ties by worker id.
        let dist: Vec<Vec<usize>> = (0..n).map(|w| by_cost(&cost.row(w)[..n], w)).collect();

        // numaDist (Eq. 4.1) and numaNodesInDistanceOrder.
        let members = |nd: usize| -> Vec<usize> {
            if node_workers[nd].is_empty() {
                topo.numa_pus(nd).to_vec()
            } else {
                node_workers[nd].iter().map(|&w| pu[w]).collect()
            }
        };
        let member_pus: Vec<Vec<usize>> = (0..node_count).map(members).collect();
        let mut node_dist = vec![0.0; node_count * node_count];
        for i in 0..node_count {
            for j in 0..node_count {
                let (si, sj) = (&member_pus[i], &member_pus[j]);
                let sum: f64 = si
                    .iter()
                    .flat_map(|&k| sj.iter().map(move |&l| (k, l)))
                    .map(|(k, l)| cost.get(k, l))
                    .sum();
                node_dist[i * node_count + j] = sum / (si.len() * sj.len()) as f64;
            }
        }
        let node_order: Vec<Vec<usize>> = (0..node_count)
            .map(|i| {
                let mut others: Vec<usize> = (0..node_count)
                    .filter(|&j| j != i && !node_workers[j].is_empty())
                    .collect();
                others.sort_by(|&a, &b| {
                    node_dist[i * node_count + a]
                        .total_cmp(&node_dist[i * node_count + b])
                        .then(a.cmp(&b))
                });
                others
            })
            .collect();

        // Places: dense ids over the level objects that hold workers, in PU order.
        let plevel = opts.place_level.level();
        let mut place_key: Vec<((Level, usize), usize)> = Vec::new(); // (object, place)
        let mut place = Vec::with_capacity(n);
        let mut place_workers: Vec<Vec<usize>> = Vec::new();
        for (w, &p) in pu.iter().enumerate() {
            let obj = topo
                .ancestor(p, plevel)
                .or_else(|| topo.ancestor(p, Level::Numa))
                .map_or((Level::Machine, 0), |o| (o.level, o.pus[0]));
            let id = match place_key.iter().find(|(k, _)| *k == obj) {
                Some(&(_, id)) => id,
                None => {
                    let id = place_workers.len();
                    place_key.push((obj, id));
                    place_workers.push(Vec::new());
                    id
                }
            };
            place.push(id);
            place_workers[id].push(w);
        }

        let has_l2_sharing = (0..n).any(|w| {
            topo.pus_sharing(pu[w], Level::L2)
                .is_some_and(|s| s.iter().any(|&p| p != pu[w] && p < n))
        });

        Ok(WorkerLayout {
            workers: n,
            pu,
            node,
            node_workers,
            groups,
            g0_bits,
            words,
            dist,
            cost: Arc::clone(cost.values()),
            stride: pus,
            node_dist,
            node_order,
            place,
            place_workers,
            has_l2_sharing,
            group_level: opts.group_level,
            place_level: opts.place_level,
        })
    }

    /// Nested groups of worker `w`: `g0` (the workers sharing `level` with it),
    /// then its NUMA node, then one group per NUMA distance class from its node
    /// (nearest first), then all workers. Empty groups and groups that add no
    /// worker are skipped; the last group is always all other workers.
    fn groups_of(
        topo: &Topology,
        w: usize,
        pu: &[usize],
        node: &[usize],
        node_workers: &[Vec<usize>],
        level: Level,
    ) -> Vec<Vec<usize>> {
        let n = pu.len();
        let mut member = vec![false; n];
        let mut groups: Vec<Vec<usize>> = Vec::new();
        // Each group is the previous one plus the workers `add` brings (merged, not sorted: the
        // layout of 4,096 workers spent a tenth of its time sorting groups).
        let extend = |add: &mut dyn Iterator<Item = usize>,
                      member: &mut Vec<bool>,
                      groups: &mut Vec<Vec<usize>>| {
            let mut fresh: Vec<usize> = Vec::new();
            for v in add {
                if v != w && !member[v] {
                    member[v] = true;
                    fresh.push(v);
                }
            }
            if !fresh.is_empty() {
                fresh.sort_unstable(); // ascending already, in practice: one pass
                let group = merge(groups.last().map_or(&[], Vec::as_slice), &fresh);
                groups.push(group);
            }
        };
        // g0: sharers of the chosen level (PUs beyond the worker count are not workers).
        if let Some(sharers) = topo.pus_sharing(pu[w], level) {
            let mut it = sharers.iter().copied().filter(|&p| p < n);
            extend(&mut it, &mut member, &mut groups);
        }
        // The worker's NUMA node.
        let my_node = node[w];
        let mut it = node_workers[my_node].iter().copied();
        extend(&mut it, &mut member, &mut groups);
        // NUMA distance classes from the worker's node.
        if let Some(d) = topo.numa_distances() {
            let mut classes: Vec<f64> = (0..node_workers.len())
                .filter(|&m| m != my_node && !node_workers[m].is_empty())
                .map(|m| d.get(my_node, m))
                .collect();
            classes.sort_by(f64::total_cmp);
            classes.dedup();
            for c in classes {
                let mut it = (0..node_workers.len())
                    .filter(|&m| m != my_node && d.get(my_node, m) <= c)
                    .flat_map(|m| node_workers[m].iter().copied());
                extend(&mut it, &mut member, &mut groups);
            }
        }
        // Everybody.
        let mut it = 0..n;
        extend(&mut it, &mut member, &mut groups);
        if groups.is_empty() {
            groups.push(Vec::new()); // a single worker: one empty group
        }
        groups
    }

    /// Number of workers.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// The PU (logical index) of worker `worker`: worker `i` runs on PU `i`.
    ///
    /// # Panics
    /// If `worker >= workers()` (as do all per-worker queries).
    pub fn pu_of(&self, worker: usize) -> usize {
        self.pu[worker]
    }

    /// The NUMA node (logical index) of worker `worker`.
    pub fn node_of(&self, worker: usize) -> usize {
        self.node[worker]
    }

    /// Number of NUMA nodes of the topology (some may hold no worker when
    /// there are fewer workers than PUs).
    pub fn node_count(&self) -> usize {
        self.node_workers.len()
    }

    /// The workers on NUMA node `node`, ascending (may be empty).
    pub fn workers_of_node(&self, node: usize) -> &[usize] {
        &self.node_workers[node]
    }

    /// The nested victim groups `g0 ⊆ g1 ⊆ … ⊆ gk` of `worker`, innermost first
    /// (Wölke §4.1): worker ids, ascending within a group, never `worker` itself.
    ///
    /// `g0` = the workers sharing the [`GroupLevel`] object with `worker`; then
    /// its NUMA node; then each NUMA distance class from its node, nearest
    /// first; `gk` = all other workers. A group that would add nobody is left
    /// out, so without a distance matrix on a single NUMA node there is exactly
    /// one group (LGS = random stealing). With a single worker there is one
    /// empty group, so `groups(w).last()` is always `Some`.
    pub fn groups(&self, worker: usize) -> &[Vec<usize>] {
        &self.groups[worker]
    }

    /// Whether `b` is in `a`'s innermost group `g0` (the LGS "neighbour"
    /// relation); `true` when `a == b`. O(1).
    pub fn same_group0(&self, a: usize, b: usize) -> bool {
        self.g0_bits[a * self.words + b / 64] & (1 << (b % 64)) != 0
    }

    /// All other workers in non-decreasing cost from `worker` (Francesquini §4.2.1),
    /// ties broken by worker id.
    pub fn dist(&self, worker: usize) -> &[usize] {
        &self.dist[worker]
    }

    /// `Cost` between the PUs of two workers.
    pub fn cost(&self, a: usize, b: usize) -> f64 {
        assert!(a < self.workers && b < self.workers, "no worker {a} or {b}");
        self.cost[a * self.stride + b]
    }

    /// `numaDist(i, j)` of Francesquini Eq. 4.1: the mean cost between the workers of
    /// node `i` and those of node `j` (a node without workers counts its PUs).
    pub fn numa_dist(&self, i: usize, j: usize) -> f64 {
        self.node_dist[i * self.node_count() + j]
    }

    /// `numaNodesInDistanceOrder` of node `node` (Francesquini Eq. 4.1): the other nodes
    /// that hold workers, nearest by [`numa_dist`](Self::numa_dist) first, ties by index.
    pub fn node_order(&self, node: usize) -> &[usize] {
        &self.node_order[node]
    }

    /// The place of `worker` (dense index, in PU order).
    pub fn place_of(&self, worker: usize) -> usize {
        self.place[worker]
    }

    /// Number of places (objects of the place level that hold workers). A
    /// topology without that level falls back to one place per NUMA node.
    pub fn place_count(&self) -> usize {
        self.place_workers.len()
    }

    /// The workers of place `place`, ascending.
    pub fn workers_of_place(&self, place: usize) -> &[usize] {
        &self.place_workers[place]
    }

    /// Whether any two workers share an L2 cache (LGS-CO needs this).
    pub fn has_l2_sharing(&self) -> bool {
        self.has_l2_sharing
    }

    /// The `g0` level this layout was built with.
    pub fn group_level(&self) -> GroupLevel {
        self.group_level
    }

    /// The place level this layout was built with.
    pub fn place_level(&self) -> PlaceLevel {
        self.place_level
    }
}

/// The ascending union of two ascending lists without common elements.
fn merge(a: &[usize], b: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] < b[j] {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// The indices of `row` but `skip`, by non-decreasing cost ([`f64::total_cmp`]), ties by index.
///
/// A row of hierarchical costs is a few long runs of equal cost, so this finds the runs, orders
/// their distinct costs, and copies each run into its cost's place: linear in the row, where a
/// comparison sort of every row took most of the layout's time at 4,096 workers. A row without
/// runs (a measured cost file) costs one sort of its distinct values.
fn by_cost(row: &[f64], skip: usize) -> Vec<usize> {
    // Runs of equal cost (bit for bit, as `total_cmp` compares), `start..end`, in index order.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for x in (0..row.len()).filter(|&x| x != skip) {
        match runs.last_mut() {
            Some((start, end)) if *end == x && row[*start].to_bits() == row[x].to_bits() => {
                *end += 1;
            }
            _ => runs.push((x, x + 1)),
        }
    }
    let mut classes: Vec<f64> = runs.iter().map(|&(start, _)| row[start]).collect();
    classes.sort_by(f64::total_cmp);
    classes.dedup_by(|a, b| a.to_bits() == b.to_bits());
    let class_of: Vec<usize> = runs
        .iter()
        .map(|&(start, _)| classes.partition_point(|c| c.total_cmp(&row[start]).is_lt()))
        .collect();
    // Where each class starts in the result; then the runs, each after the earlier runs of its
    // class, so that ties stay in index order.
    let mut next = vec![0usize; classes.len() + 1];
    for (&(start, end), &k) in runs.iter().zip(&class_of) {
        next[k + 1] += end - start;
    }
    for k in 1..next.len() {
        next[k] += next[k - 1];
    }
    let mut sorted = vec![0; row.len().saturating_sub(1)];
    for (&(start, end), &k) in runs.iter().zip(&class_of) {
        for (slot, x) in sorted[next[k]..next[k] + (end - start)]
            .iter_mut()
            .zip(start..end)
        {
            *slot = x;
        }
        next[k] += end - start;
    }
    sorted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_cost_orders_like_a_stable_sort() {
        let reference = |row: &[f64], skip: usize| {
            let mut v: Vec<usize> = (0..row.len()).filter(|&x| x != skip).collect();
            v.sort_by(|&x, &y| row[x].total_cmp(&row[y]).then(x.cmp(&y)));
            v
        };
        let mut rng = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        // Few distinct costs (hierarchical), many (no runs), runs, and tiny rows.
        for (len, distinct) in [(1, 1), (2, 1), (9, 3), (100, 4), (1000, 40), (1000, 1000)] {
            for _ in 0..5 {
                let row: Vec<f64> = (0..len).map(|_| (next() % distinct) as f64 * 0.5).collect();
                let skip = next() as usize % len;
                assert_eq!(
                    by_cost(&row, skip),
                    reference(&row, skip),
                    "{row:?} skip {skip}"
                );
            }
        }
        let runs: Vec<f64> = (0..64).map(|x| f64::from(x / 8 % 3)).collect();
        assert_eq!(by_cost(&runs, 5), reference(&runs, 5));
    }

    #[test]
    fn level_names() {
        for g in [
            GroupLevel::Numa,
            GroupLevel::L2,
            GroupLevel::L3,
            GroupLevel::Package,
        ] {
            assert_eq!(g.to_string().parse::<GroupLevel>().unwrap(), g);
        }
        for p in [PlaceLevel::Package, PlaceLevel::L3, PlaceLevel::Numa] {
            assert_eq!(p.to_string().parse::<PlaceLevel>().unwrap(), p);
        }
        let err = "core".parse::<GroupLevel>().unwrap_err();
        assert!(err.to_string().contains("`core`"), "{err}");
        assert!("l2".parse::<PlaceLevel>().is_err());
        assert_eq!(LayoutOptions::default().workers, 0);
        assert_eq!(LayoutOptions::default().group_level, GroupLevel::Numa);
        assert_eq!(LayoutOptions::default().place_level, PlaceLevel::Package);
    }
}
