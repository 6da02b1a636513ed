//! Unit tests of the topology model.

use super::*;

fn raw(level: Level, pus: std::ops::Range<usize>) -> RawObject {
    RawObject {
        level,
        os_index: None,
        pus: pus.collect(),
        size: None,
        key: 0,
    }
}

/// package:2 › (numa = package) › l2:2 › core:1 › pu:1, numa listed after L3-less caches.
fn small() -> Topology {
    let mut objs = vec![
        raw(Level::Numa, 0..4),
        raw(Level::Numa, 4..8),
        raw(Level::Package, 0..4),
        raw(Level::Package, 4..8),
    ];
    for i in 0..4 {
        objs.push(raw(Level::L2, 2 * i..2 * i + 2));
    }
    for p in 0..8 {
        objs.push(raw(Level::Core, p..p + 1));
        objs.push(raw(Level::Pu, p..p + 1));
    }
    Topology::assemble(TopologySpec::Host, false, &(0..8).collect::<Vec<_>>(), objs)
}

#[test]
fn nests_by_inclusion_and_level_order() {
    let t = small();
    assert_eq!(t.pu_count(), 8);
    assert_eq!(t.numa_node_count(), 2);
    assert_eq!(t.count(Level::Package), 2);
    assert_eq!(t.root().level, Level::Machine);
    let pkg = t.ancestor(5, Level::Package).unwrap();
    let numa = t.ancestor(5, Level::Numa).unwrap();
    assert_eq!(pkg.index, 1);
    assert_eq!(numa.index, 1);
    assert!(
        pkg.depth < numa.depth,
        "package drawn above an equal NUMA node"
    );
    assert_eq!(t.numa_node_of(5), 1);
    assert_eq!(t.pus_sharing(5, Level::L2), Some(&[4, 5][..]));
    assert_eq!(t.pus_sharing(5, Level::L3), None);
}

#[test]
fn common_ancestors_and_heights() {
    let t = small();
    assert_eq!(t.first_common_ancestor(0, 1).level, Level::L2);
    assert_eq!(t.first_common_ancestor(0, 2).level, Level::Numa);
    assert_eq!(t.first_common_ancestor(0, 7).level, Level::Machine);
    assert_eq!(t.first_common_ancestor(3, 3).level, Level::Pu);
    assert_eq!(t.hierarchical_distance(3, 3), 0);
    let h = |a, b| t.hierarchical_distance(a, b);
    assert!(h(0, 1) < h(0, 2) && h(0, 2) < h(0, 7));
    assert_eq!(h(0, 7), t.height());
    assert_eq!(h(1, 0), h(0, 1));
}

#[test]
fn adds_missing_numa_node() {
    let objs: Vec<RawObject> = (0..3).map(|p| raw(Level::Pu, p..p + 1)).collect();
    let t = Topology::assemble(TopologySpec::Host, false, &[0, 1, 2], objs);
    assert_eq!(t.numa_node_count(), 1);
    assert_eq!(t.numa_pus(0), &[0, 1, 2]);
}

#[test]
fn level_names_round_trip() {
    for l in Level::ALL {
        assert_eq!(l.name().parse::<Level>().unwrap(), l);
    }
    assert!("l7".parse::<Level>().is_err());
}

#[test]
fn distance_matrix_checks() {
    assert!(NumaDistances::new(2, vec![10.0, 20.0, 20.0, 10.0], "x").is_ok());
    assert!(NumaDistances::new(2, vec![10.0, 20.0, 20.0], "x").is_err());
    let err = NumaDistances::new(2, vec![10.0, 5.0, 20.0, 10.0], "x").unwrap_err();
    assert!(err.to_string().contains("row 1, column 2"), "{err}");
    let d = NumaDistances::new(3, vec![0., 1., 2., 1., 0., 1., 2., 1., 0.], "x").unwrap();
    assert_eq!(d.classes(), vec![1.0, 2.0]);
}
