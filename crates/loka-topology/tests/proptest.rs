//! Properties of the derived structures on random synthetic machines.

use loka_topology::{
    CostMatrix, GroupLevel, LayoutOptions, PlaceLevel, Topology, TopologySpec, WorkerLayout,
};
use proptest::prelude::*;

/// A random synthetic machine: arities per level (0 = level left out) and
/// optionally a random symmetric NUMA distance matrix.
#[derive(Debug, Clone)]
struct Machine {
    packages: usize,
    numa: usize,
    l3: usize,
    l2: usize,
    cores: usize,
    pus: usize,
    distances: Option<Vec<u32>>,
}

impl Machine {
    fn nodes(&self) -> usize {
        self.packages * self.numa
    }

    fn spec(&self) -> TopologySpec {
        let mut desc = format!("package:{} numa:{}", self.packages, self.numa);
        if self.l3 > 0 {
            desc += &format!(" l3:{}", self.l3);
        }
        if self.l2 > 0 {
            desc += &format!(" l2:{}", self.l2);
        }
        desc += &format!(" core:{} pu:{}", self.cores, self.pus);
        if let Some(d) = &self.distances {
            let n = self.nodes();
            let rows: Vec<String> = (0..n)
                .map(|i| {
                    (0..n)
                        .map(|j| {
                            let (a, b) = (i.min(j), i.max(j));
                            if a == b {
                                "10".to_owned()
                            } else {
                                d[a * n + b].to_string()
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect();
            desc += &format!(";distances={}", rows.join("/"));
        }
        TopologySpec::Synthetic(desc)
    }
}

fn machine() -> impl Strategy<Value = Machine> {
    (
        1usize..=3,
        1usize..=3,
        0usize..=2,
        0usize..=3,
        1usize..=3,
        1usize..=2,
    )
        .prop_flat_map(|(packages, numa, l3, l2, cores, pus)| {
            let n = packages * numa;
            let dist = proptest::option::of(proptest::collection::vec(11u32..=40, n * n));
            dist.prop_map(move |distances| Machine {
                packages,
                numa,
                l3,
                l2,
                cores,
                pus,
                distances,
            })
        })
}

fn group_level() -> impl Strategy<Value = GroupLevel> {
    prop_oneof![
        Just(GroupLevel::Numa),
        Just(GroupLevel::L2),
        Just(GroupLevel::L3),
        Just(GroupLevel::Package)
    ]
}

fn place_level() -> impl Strategy<Value = PlaceLevel> {
    prop_oneof![
        Just(PlaceLevel::Package),
        Just(PlaceLevel::L3),
        Just(PlaceLevel::Numa)
    ]
}

fn check_layout(l: &WorkerLayout) -> Result<(), TestCaseError> {
    let n = l.workers();
    for w in 0..n {
        let groups = l.groups(w);
        prop_assert!(!groups.is_empty());
        let others: Vec<usize> = (0..n).filter(|&x| x != w).collect();
        // gk = all other workers, each exactly once.
        prop_assert_eq!(groups.last().unwrap(), &others);
        for (i, g) in groups.iter().enumerate() {
            prop_assert!(!g.contains(&w), "group {} of {} contains it", i, w);
            prop_assert!(g.windows(2).all(|p| p[0] < p[1]), "sorted, no duplicates");
            if i > 0 {
                let prev = &groups[i - 1];
                prop_assert!(prev.iter().all(|x| g.contains(x)), "nested");
                prop_assert!(g.len() > prev.len(), "each group adds workers");
            }
        }
        // g0 is the neighbour relation.
        for x in 0..n {
            let expected = x == w || groups[0].contains(&x);
            prop_assert_eq!(l.same_group0(w, x), expected);
        }
        // dist: a permutation of the others, sorted by cost.
        let dist = l.dist(w);
        let mut sorted = dist.to_vec();
        sorted.sort_unstable();
        prop_assert_eq!(&sorted, &others);
        prop_assert!(dist.windows(2).all(|p| l.cost(w, p[0]) <= l.cost(w, p[1])));
        // Same node as g0 when g0 is the node.
        prop_assert!(l.workers_of_node(l.node_of(w)).contains(&w));
        prop_assert!(l.workers_of_place(l.place_of(w)).contains(&w));
    }
    // Node orders: the other nodes holding workers, by numaDist.
    let holding: Vec<usize> = (0..l.node_count())
        .filter(|&m| !l.workers_of_node(m).is_empty())
        .collect();
    for node in 0..l.node_count() {
        let order = l.node_order(node);
        let mut sorted = order.to_vec();
        sorted.sort_unstable();
        let expected: Vec<usize> = holding.iter().copied().filter(|&m| m != node).collect();
        prop_assert_eq!(sorted, expected);
        prop_assert!(order
            .windows(2)
            .all(|p| l.numa_dist(node, p[0]) <= l.numa_dist(node, p[1])));
    }
    // Places partition the workers.
    let mut all: Vec<usize> = (0..l.place_count())
        .flat_map(|p| l.workers_of_place(p).to_vec())
        .collect();
    all.sort_unstable();
    prop_assert_eq!(all, (0..n).collect::<Vec<_>>());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn groups_dist_and_orders_are_well_formed(
        m in machine(),
        workers_frac in 0.0f64..=1.0,
        group_level in group_level(),
        place_level in place_level(),
    ) {
        let topo = Topology::load(&m.spec()).unwrap();
        let pus = m.nodes() * m.l3.max(1) * m.l2.max(1) * m.cores * m.pus;
        prop_assert_eq!(topo.pu_count(), pus);
        prop_assert_eq!(topo.numa_node_count(), m.nodes());
        let workers = ((pus as f64 * workers_frac).ceil() as usize).clamp(1, pus);
        let opts = LayoutOptions { workers, group_level, place_level };
        let l = WorkerLayout::new(&topo, &CostMatrix::hierarchical(&topo), &opts).unwrap();
        prop_assert_eq!(l.workers(), workers);
        check_layout(&l)?;
        // Without distances and with the NUMA level: exactly [node mates, everybody]
        // (one group when the node is the whole machine).
        if m.distances.is_none() && group_level == GroupLevel::Numa {
            for w in 0..workers {
                let mates = l.workers_of_node(l.node_of(w)).len() - 1;
                let expected = if mates == 0 || mates == workers - 1 { 1 } else { 2 };
                prop_assert_eq!(l.groups(w).len(), expected);
            }
        }
        // The hierarchical cost respects the Francesquini condition.
        let c = CostMatrix::hierarchical(&topo);
        let max_diag = (0..pus).map(|i| c.get(i, i)).fold(0.0, f64::max);
        let min_off = (0..pus).flat_map(|i| (0..pus).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| c.get(i, j)).fold(f64::INFINITY, f64::min);
        prop_assert!(max_diag <= min_off);
    }

    #[test]
    fn random_cost_matrices_give_sorted_dist(
        n in 1usize..=12,
        seed in any::<u64>(),
    ) {
        let mut rng = fastrand::Rng::with_seed(seed);
        let rows: Vec<Vec<f64>> = (0..n)
            .map(|i| (0..n).map(|j| if i == j { 0.5 } else { 1.0 + rng.u32(0..20) as f64 }).collect())
            .collect();
        let cost = CostMatrix::from_rows(&rows, "random").unwrap();
        let topo = Topology::load(&format!("synthetic:core:{n} pu:1").parse().unwrap()).unwrap();
        let l = WorkerLayout::new(&topo, &cost, &LayoutOptions::default()).unwrap();
        check_layout(&l)?;
        for (w, row) in rows.iter().enumerate() {
            for (a, b) in l.dist(w).iter().zip(l.dist(w).iter().skip(1)) {
                prop_assert!(row[*a] < row[*b] || (row[*a] == row[*b] && a < b));
            }
        }
    }
}
