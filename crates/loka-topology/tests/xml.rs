//! hwloc XML: export a topology, load it back with `xml:FILE`, distances included.

use std::path::PathBuf;

use loka_topology::{CostMatrix, LayoutOptions, Level, Topology, TopologySpec, WorkerLayout};

fn write_temp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("loka-topology-xml-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn round_trip(spec: &str) -> (Topology, Topology) {
    let original = Topology::load(&spec.parse().unwrap()).unwrap();
    let xml = original.export_xml().unwrap();
    assert!(xml.contains("<topology"), "hwloc XML");
    let name = format!("{}.xml", spec.replace([':', ' ', ';', '/', '='], "_"));
    let path = write_temp(&name, &xml);
    let loaded = Topology::load(&TopologySpec::Xml(path.clone())).unwrap();
    assert_eq!(loaded.spec(), &TopologySpec::Xml(path));
    assert!(!loaded.is_real(), "XML topologies are not pinned");
    (original, loaded)
}

fn groups(t: &Topology) -> Vec<Vec<Vec<usize>>> {
    let l = WorkerLayout::new(t, &CostMatrix::hierarchical(t), &LayoutOptions::default()).unwrap();
    (0..l.workers()).map(|w| l.groups(w).to_vec()).collect()
}

#[test]
fn presets_survive_an_xml_round_trip_with_distances() {
    for spec in ["preset:opteron6376", "preset:ring-4x2", "preset:xeon-x7560"] {
        let (a, b) = round_trip(spec);
        assert_eq!(a.pu_count(), b.pu_count(), "{spec}");
        assert_eq!(a.numa_node_count(), b.numa_node_count(), "{spec}");
        for level in Level::ALL {
            assert_eq!(a.count(level), b.count(level), "{spec} {level}");
        }
        let (da, db) = (a.numa_distances().unwrap(), b.numa_distances().unwrap());
        for i in 0..da.size() {
            assert_eq!(da.row(i), db.row(i), "{spec} row {i}");
        }
        assert_eq!(groups(&a), groups(&b), "{spec}");
        assert_eq!(CostMatrix::hierarchical(&a), {
            let mut c = CostMatrix::hierarchical(&b);
            c = CostMatrix::from_rows(
                &(0..c.size()).map(|i| c.row(i).to_vec()).collect::<Vec<_>>(),
                CostMatrix::hierarchical(&a).source(),
            )
            .unwrap();
            c
        });
    }
}

#[test]
fn host_survives_an_xml_round_trip() {
    let (a, b) = round_trip("host");
    assert_eq!(a.pu_count(), b.pu_count());
    assert_eq!(a.numa_node_count(), b.numa_node_count());
    for p in 0..a.pu_count() {
        assert_eq!(a.pu_os_index(p), b.pu_os_index(p));
    }
}

#[test]
fn synthetic_distances_are_exported() {
    let (a, b) = round_trip("synthetic:package:2 numa:1 core:2 pu:1;distances=10 21/21 10");
    assert_eq!(b.numa_distances().unwrap().row(1), &[21.0, 10.0]);
    assert_eq!(a.numa_distances().unwrap().row(1), &[21.0, 10.0]);
}
