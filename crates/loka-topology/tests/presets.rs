//! The machines of the texts: counts, victim groups, dist orders, node orders, places.

use loka_topology::{
    CostMatrix, GroupLevel, LayoutOptions, Level, PlaceLevel, Topology, TopologySpec, WorkerLayout,
};

fn preset(name: &str) -> Topology {
    Topology::load(&TopologySpec::Preset(name.to_owned())).expect("preset loads")
}

fn layout(topo: &Topology, opts: LayoutOptions) -> WorkerLayout {
    WorkerLayout::new(topo, &CostMatrix::hierarchical(topo), &opts).expect("layout")
}

fn sizes(l: &WorkerLayout, w: usize) -> Vec<usize> {
    l.groups(w).iter().map(Vec::len).collect()
}

#[test]
fn presets_have_the_texts_shapes() {
    // (name, PUs, NUMA nodes, packages, L3s, L2s)
    let expected = [
        ("opteron6376", 64, 8, 4, 8, 32),
        ("xeon-x7560", 32, 4, 4, 4, 32),
        ("altix-uv2000", 192, 24, 24, 24, 192),
        ("nehalem-2x4", 8, 2, 2, 2, 8),
        ("ring-4x2", 8, 4, 4, 0, 0),
    ];
    for (name, pus, nodes, packages, l3, l2) in expected {
        let t = preset(name);
        assert_eq!(t.pu_count(), pus, "{name}");
        assert_eq!(t.numa_node_count(), nodes, "{name}");
        assert_eq!(t.count(Level::Package), packages, "{name}");
        assert_eq!(t.count(Level::L3), l3, "{name}");
        assert_eq!(t.count(Level::L2), l2, "{name}");
        assert!(!t.is_real(), "{name} is not pinned");
        assert_eq!(t.numa_distances().map(|d| d.size()), Some(nodes), "{name}");
        for node in 0..nodes {
            assert_eq!(t.numa_pus(node).len(), pus / nodes, "{name} node {node}");
        }
        assert_eq!(t.spec().to_string(), format!("preset:{name}"));
    }
    assert_eq!(loka_topology::presets::names().len(), expected.len());
}

#[test]
fn opteron6376_tree_matches_wolke_fig_6_1() {
    let t = preset("opteron6376");
    // L2 per pair of cores, L3 = NUMA node (8 cores), two nodes per package.
    assert_eq!(t.pus_sharing(0, Level::L2), Some(&[0, 1][..]));
    assert_eq!(t.pus_sharing(9, Level::L3).map(<[usize]>::len), Some(8));
    assert_eq!(t.pus_sharing(9, Level::Numa), t.pus_sharing(9, Level::L3));
    assert_eq!(
        t.pus_sharing(9, Level::Package).map(<[usize]>::len),
        Some(16)
    );
    assert_eq!(t.ancestor(17, Level::Package).map(|o| o.index), Some(1));
    assert_eq!(t.numa_node_of(17), 2);
    assert_eq!(t.first_common_ancestor(0, 1).level, Level::L2);
    assert_eq!(t.first_common_ancestor(0, 7).level, Level::L3);
    assert_eq!(t.first_common_ancestor(0, 8).level, Level::Package);
    assert_eq!(t.first_common_ancestor(0, 16).level, Level::Machine);
    let d = t.numa_distances().unwrap();
    assert_eq!(d.row(2), &[1., 2., 0., 1., 1., 1., 1., 1.]);
    assert_eq!(t.numa_node(3).size, Some(64 << 30));
    assert_eq!(t.ancestor(0, Level::L3).and_then(|o| o.size), Some(6 << 20));
}

#[test]
fn opteron6376_groups_are_node_then_one_hop_then_all() {
    let t = preset("opteron6376");
    let l = layout(&t, LayoutOptions::default());
    assert_eq!(l.workers(), 64);
    let d = t.numa_distances().unwrap();
    for w in 0..64 {
        let node = l.node_of(w);
        assert_eq!(node, w / 8);
        let one_hop = (0..8).filter(|&m| d.get(node, m) == 1.0).count();
        assert_eq!(sizes(&l, w), vec![7, 7 + 8 * one_hop, 63], "worker {w}");
        // g0 is exactly the other workers of the node.
        let g0: Vec<usize> = (node * 8..node * 8 + 8).filter(|&x| x != w).collect();
        assert_eq!(l.groups(w)[0], g0);
        for x in 0..64 {
            assert_eq!(l.same_group0(w, x), l.node_of(x) == node, "{w} {x}");
            let in_g1 = l.groups(w)[1].contains(&x);
            assert_eq!(in_g1, x != w && d.get(node, l.node_of(x)) <= 1.0, "{w} {x}");
        }
    }
    // Node 0 has four 1-hop neighbours, node 2 six.
    assert_eq!(sizes(&l, 0), vec![7, 39, 63]);
    assert_eq!(sizes(&l, 16), vec![7, 55, 63]);
}

#[test]
fn opteron6376_co_variant_starts_at_the_l2_pair() {
    let t = preset("opteron6376");
    let opts = LayoutOptions {
        group_level: GroupLevel::L2,
        ..LayoutOptions::default()
    };
    let l = layout(&t, opts);
    assert!(l.has_l2_sharing());
    assert_eq!(sizes(&l, 0), vec![1, 7, 39, 63]);
    assert_eq!(l.groups(5)[0], vec![4]);
    assert!(l.same_group0(4, 5) && !l.same_group0(4, 6));
}

#[test]
fn opteron6376_dist_and_node_order_follow_the_cost() {
    let t = preset("opteron6376");
    let l = layout(&t, LayoutOptions::default());
    // Worker 0: its L2 partner, then its node, then the other node of its package
    // (one hop, same package), then the other one-hop nodes, then the two-hop nodes.
    let dist = l.dist(0);
    assert_eq!(dist[0], 1);
    assert_eq!(&dist[1..7], &[2, 3, 4, 5, 6, 7]);
    let nodes_in_order: Vec<usize> = dist.iter().map(|&w| l.node_of(w)).collect();
    let mut seen = Vec::new();
    for n in nodes_in_order {
        if seen.last() != Some(&n) {
            seen.push(n);
        }
    }
    assert_eq!(seen, vec![0, 1, 2, 4, 6, 3, 5, 7]);
    assert!(l.cost(0, 1) < l.cost(0, 2));
    assert!(l.cost(0, 2) < l.cost(0, 8));
    assert!(
        l.cost(0, 8) < l.cost(0, 16),
        "same package beats another package at 1 hop"
    );
    assert!(l.cost(0, 16) < l.cost(0, 24), "1 hop beats 2 hops");
    assert_eq!(l.node_order(0), &[1, 2, 4, 6, 3, 5, 7]);
    assert_eq!(l.node_order(2), &[3, 0, 4, 5, 6, 7, 1]);
    // The node order is Eq. 4.1 sorted.
    for n in 0..8 {
        let o = l.node_order(n);
        assert!(o
            .windows(2)
            .all(|p| l.numa_dist(n, p[0]) <= l.numa_dist(n, p[1])));
    }
}

#[test]
fn xeon_x7560_complete_graph_has_two_groups() {
    let t = preset("xeon-x7560");
    let l = layout(&t, LayoutOptions::default());
    for w in 0..32 {
        assert_eq!(sizes(&l, w), vec![7, 31], "worker {w}");
    }
    assert_eq!(l.place_count(), 4);
}

#[test]
fn altix_uv2000_groups_follow_blade_group_and_hypercube() {
    let t = preset("altix-uv2000");
    let l = layout(&t, LayoutOptions::default());
    assert_eq!(l.workers(), 192);
    // Node 0: itself, blade peer, group of four, groups 1/2/4 (one cube hop), groups 3/5.
    assert_eq!(sizes(&l, 0), vec![7, 15, 31, 127, 191]);
    assert_eq!(l.node_order(0)[0], 1, "blade peer first");
    assert_eq!(&l.node_order(0)[1..3], &[2, 3]);
}

#[test]
fn nehalem_2x4_places_are_the_sockets() {
    let t = preset("nehalem-2x4");
    for level in [PlaceLevel::Package, PlaceLevel::L3, PlaceLevel::Numa] {
        let l = layout(
            &t,
            LayoutOptions {
                place_level: level,
                ..LayoutOptions::default()
            },
        );
        assert_eq!(l.place_count(), 2, "{level}");
        assert_eq!(l.workers_of_place(0), &[0, 1, 2, 3]);
        assert_eq!(l.workers_of_place(1), &[4, 5, 6, 7]);
        assert_eq!(l.place_of(5), 1);
    }
    let l = layout(&t, LayoutOptions::default());
    assert!(!l.has_l2_sharing(), "Nehalem L2s are private");
    assert_eq!(sizes(&l, 0), vec![3, 7]);
}

#[test]
fn fewer_workers_use_the_first_pus() {
    let t = preset("opteron6376");
    let l = layout(
        &t,
        LayoutOptions {
            workers: 12,
            ..LayoutOptions::default()
        },
    );
    assert_eq!(l.workers(), 12);
    assert_eq!(l.pu_of(11), 11);
    assert_eq!(l.workers_of_node(1), &[8, 9, 10, 11]);
    assert!(l.workers_of_node(2).is_empty());
    assert_eq!(sizes(&l, 0), vec![7, 11]);
    assert_eq!(sizes(&l, 8), vec![3, 11]);
    assert_eq!(l.node_order(0), &[1]);
    assert_eq!(l.place_count(), 1);
}

/// Wölke §4.1, Fig. 4.2: cores 1..8 of the text are workers 0..7.
#[test]
fn ring_example_groups_match_wolke_fig_4_2() {
    let t = preset("ring-4x2");
    let l = layout(&t, LayoutOptions::default());
    // "From the perspective of core 6 … g0 = {5}, g1 = {3,4,5,7,8}, g2 = {1,2,3,4,5,7,8}".
    let core = |c: usize| c - 1;
    let to_cores = |g: &Vec<usize>| g.iter().map(|&w| w + 1).collect::<Vec<_>>();
    let g: Vec<Vec<usize>> = l.groups(core(6)).iter().map(to_cores).collect();
    assert_eq!(
        g,
        vec![vec![5], vec![3, 4, 5, 7, 8], vec![1, 2, 3, 4, 5, 7, 8]]
    );
    assert_eq!(
        l.groups(core(2)),
        &[vec![0], vec![0, 2, 3, 6, 7], vec![0, 2, 3, 4, 5, 6, 7]]
    );
}

/// LGS weighted stealing [W §4.1]: each idle cycle starts at g0, `|g_i|`
/// uniformly random attempts in g_i, then g_{i+1}; g_k indefinitely. Only
/// worker `victim` has work. Returns (attempt of first success, group index).
fn first_success(
    l: &WorkerLayout,
    thief: usize,
    victim: usize,
    rng: &mut fastrand::Rng,
) -> (usize, usize) {
    let groups = l.groups(thief);
    let mut attempts = 0;
    for (i, g) in groups.iter().enumerate() {
        let last = i + 1 == groups.len();
        let mut n = 0;
        while last || n < g.len() {
            attempts += 1;
            n += 1;
            if g[rng.usize(..g.len())] == victim {
                return (attempts, i);
            }
        }
    }
    unreachable!("the last group is tried indefinitely")
}

#[test]
fn ring_example_monte_carlo_matches_wolke_fig_4_2() {
    let t = preset("ring-4x2");
    let l = layout(&t, LayoutOptions::default());
    let mut rng = fastrand::Rng::with_seed(0x10ca);
    let trials = 20_000;
    let victim = 0; // core 1, the hot spot
                    // (thief core, radius increases needed, first possible successful attempt, exact mean)
    let p_g1 = 1.0 - 0.8f64.powi(5);
    let mean_g1: f64 = 1.0
        + (1..=5)
            .map(|k| k as f64 * 0.2 * 0.8f64.powi(k - 1))
            .sum::<f64>()
        + 0.8f64.powi(5) * (5.0 + 7.0);
    let cases = [
        (2, 0, 1, 1.0),     // "core 2 will immediately steal work"
        (4, 1, 2, mean_g1), // "cores 4 and 8 will have to increase their radius once"
        (8, 1, 2, mean_g1),
        (6, 2, 7, 6.0 + 7.0), // "core 6 … twice": after 6 failed attempts, 1 in 7
    ];
    for (core, radius, first, mean) in cases {
        let thief = core - 1;
        let mut min_radius = usize::MAX;
        let mut min_attempt = usize::MAX;
        let mut total = 0usize;
        let mut in_first_group = 0usize;
        for _ in 0..trials {
            let (a, g) = first_success(&l, thief, victim, &mut rng);
            min_radius = min_radius.min(g);
            min_attempt = min_attempt.min(a);
            total += a;
            in_first_group += usize::from(g == radius);
        }
        assert_eq!(min_radius, radius, "core {core}: radius increases");
        assert_eq!(min_attempt, first, "core {core}: first possible success");
        let observed = total as f64 / trials as f64;
        assert!(
            (observed - mean).abs() < 0.05 * mean,
            "core {core}: mean attempts {observed}, expected {mean}"
        );
        if radius == 1 {
            let share = in_first_group as f64 / trials as f64;
            assert!(
                (share - p_g1).abs() < 0.02,
                "core {core}: P(success in g1) {share}"
            );
        }
    }
    // Random work stealing for comparison: one group, 1 in 7 everywhere.
    let rws = layout(
        &Topology::load(&"synthetic:core:8 pu:1".parse().unwrap()).unwrap(),
        LayoutOptions::default(),
    );
    assert_eq!(sizes(&rws, 5), vec![7]);
    let total: usize = (0..trials)
        .map(|_| first_success(&rws, 5, 0, &mut rng).0)
        .sum();
    let observed = total as f64 / trials as f64;
    assert!(
        (observed - 7.0).abs() < 0.35,
        "RWS mean attempts {observed}"
    );
}

/// Francesquini §4.2.1, Fig. 4.2: three schedulers with costs 1.0 / 1.5 / 2.0.
#[test]
fn francesquini_fig_4_2_dist_orders() {
    let rows = vec![
        vec![1.0, 1.5, 2.0],
        vec![1.5, 1.0, 1.5],
        vec![2.0, 1.5, 1.0],
    ];
    let cost = CostMatrix::from_rows(&rows, "Francesquini Fig. 4.2").unwrap();
    let t = Topology::load(&"synthetic:core:3 pu:1".parse().unwrap()).unwrap();
    let l = WorkerLayout::new(&t, &cost, &LayoutOptions::default()).unwrap();
    // PUs 1, 2, 3 of the text are workers 0, 1, 2.
    assert_eq!(l.dist(0), &[1, 2]);
    assert_eq!(l.dist(1), &[0, 2]);
    assert_eq!(l.dist(2), &[1, 0]);
    assert_eq!(l.cost(0, 2), 2.0);

    // The same costs with one scheduler per NUMA node: numaNodesInDistanceOrder (Eq. 4.1).
    let t = Topology::load(&"synthetic:numa:3 pu:1".parse().unwrap()).unwrap();
    assert_eq!(t.numa_node_count(), 3);
    let l = WorkerLayout::new(&t, &cost, &LayoutOptions::default()).unwrap();
    assert_eq!(l.node_order(0), &[1, 2]);
    assert_eq!(l.node_order(1), &[0, 2]);
    assert_eq!(l.node_order(2), &[1, 0]);
    assert_eq!(l.numa_dist(0, 2), 2.0);
}

#[test]
fn numa_dist_is_the_mean_of_eq_4_1() {
    let t = Topology::load(&"synthetic:numa:2 core:2 pu:1".parse().unwrap()).unwrap();
    let rows = vec![
        vec![0.0, 1.0, 4.0, 6.0],
        vec![1.0, 0.0, 5.0, 7.0],
        vec![4.0, 5.0, 0.0, 1.0],
        vec![6.0, 7.0, 1.0, 0.0],
    ];
    let cost = CostMatrix::from_rows(&rows, "eq41").unwrap();
    let l = WorkerLayout::new(&t, &cost, &LayoutOptions::default()).unwrap();
    assert_eq!(l.numa_dist(0, 1), (4.0 + 6.0 + 5.0 + 7.0) / 4.0);
    assert_eq!(l.numa_dist(0, 0), (0.0 + 1.0 + 1.0 + 0.0) / 4.0);
    // No distance matrix: g0 (the node) is a proper subset, then everybody.
    assert_eq!(sizes(&l, 0), vec![1, 3]);
}
