//! Bad input: every error is typed and names the input at fault.

use std::path::PathBuf;

use loka_topology::{
    CostMatrix, LayoutOptions, Topology, TopologyError, TopologySpec, WorkerLayout,
};

fn temp_file(name: &str, contents: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("loka-topology-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

/// The error names `path` and says why it could not be read, and a printer that walks the
/// source chain (anyhow's `{:#}`, the `loka` command's error line) shows that reason once.
fn assert_cause_once(err: &TopologyError, path: &str) {
    let cause = std::fs::read_to_string(path).unwrap_err().to_string();
    let message = err.to_string();
    assert!(message.contains(path), "{message}");
    assert!(
        message.contains(&cause),
        "the reason is in the message: {message}"
    );
    let mut chain = message.clone();
    let mut next = std::error::Error::source(err);
    while let Some(e) = next {
        chain = format!("{chain}: {e}");
        next = e.source();
    }
    assert_eq!(chain.matches(&cause).count(), 1, "{chain}");
}

fn load(spec: &str) -> Result<Topology, TopologyError> {
    Topology::load(&spec.parse()?)
}

#[test]
fn malformed_synthetic_strings_name_the_description() {
    for desc in [
        "package:two pu:1",
        "package:0 pu:1",
        "core:2 pu:2 numa:1",
        "banana",
        "package:2 core:2 pu:1 extra",
    ] {
        let err = load(&format!("synthetic:{desc}")).unwrap_err();
        assert!(
            matches!(err, TopologyError::Synthetic { .. }),
            "{desc}: {err:?}"
        );
        assert!(err.to_string().contains(desc), "{err}");
    }
}

#[test]
fn bad_synthetic_distances_name_the_spec_and_position() {
    let spec = "synthetic:package:2 numa:1 pu:1;distances=10 20/20 x";
    let err = load(spec).unwrap_err();
    assert!(
        matches!(
            err,
            TopologyError::Matrix {
                line: 2,
                column: 2,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("package:2 numa:1 pu:1"), "{err}");
    // Wrong size for 2 nodes.
    let err = load("synthetic:package:2 numa:1 pu:1;distances=0 1 1/1 0 1/1 1 0").unwrap_err();
    assert!(matches!(err, TopologyError::BadDistances { .. }), "{err:?}");
    assert!(err.to_string().contains("2 NUMA nodes"), "{err}");
    // A node farther from itself than from another.
    let err = load("synthetic:package:2 numa:1 pu:1;distances=20 10/10 20").unwrap_err();
    assert!(
        matches!(
            err,
            TopologyError::Matrix {
                line: 1,
                column: 2,
                ..
            }
        ),
        "{err:?}"
    );
    // Unknown option.
    let err = load("synthetic:pu:2;colour=blue").unwrap_err();
    assert!(matches!(err, TopologyError::BadSpec { .. }), "{err:?}");
    // Distance file that does not exist.
    let err = load("synthetic:package:2 numa:1 pu:1;distances=@/nonexistent/d.txt").unwrap_err();
    assert!(matches!(err, TopologyError::Io { .. }), "{err:?}");
    assert_cause_once(&err, "/nonexistent/d.txt");
}

#[test]
fn synthetic_distances_from_a_file() {
    let path = temp_file("ring.txt", "# ring\n0 1 2 1\n1 0 1 2\n2 1 0 1\n1 2 1 0\n");
    let t = load(&format!(
        "synthetic:package:4 numa:1 core:2 pu:1;distances=@{}",
        path.display()
    ))
    .unwrap();
    assert_eq!(t.numa_distances().unwrap().row(0), &[0., 1., 2., 1.]);
}

#[test]
fn unknown_preset_lists_the_known_ones() {
    let err = load("preset:cray-1").unwrap_err();
    assert!(
        matches!(err, TopologyError::UnknownPreset { .. }),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("cray-1") && msg.contains("opteron6376"),
        "{msg}"
    );
}

#[test]
fn unreadable_or_invalid_xml_names_the_file() {
    let missing = PathBuf::from("/nonexistent/machine.xml");
    let err = Topology::load(&TopologySpec::Xml(missing.clone())).unwrap_err();
    assert!(matches!(err, TopologyError::Xml { .. }), "{err:?}");
    assert!(
        err.to_string().contains("/nonexistent/machine.xml"),
        "{err}"
    );

    let dir = std::env::temp_dir();
    let err = Topology::load(&TopologySpec::Xml(dir.clone())).unwrap_err();
    assert!(matches!(err, TopologyError::Xml { .. }), "{err:?}");

    for (name, text) in [
        ("garbage.xml", "this is not xml"),
        (
            "broken.xml",
            "<?xml version=\"1.0\"?>\n<topology><object type=\"Machine\"",
        ),
        ("empty.xml", ""),
        (
            "other.xml",
            "<?xml version=\"1.0\"?>\n<html><body/></html>\n",
        ),
    ] {
        let path = temp_file(name, text);
        let err = Topology::load(&TopologySpec::Xml(path.clone())).unwrap_err();
        assert!(matches!(err, TopologyError::Xml { .. }), "{name}: {err:?}");
        assert!(err.to_string().contains(name), "{err}");
    }
}

#[test]
fn cost_files_are_validated_with_line_and_column() {
    let t = load("synthetic:core:3 pu:1").unwrap();
    let cases = [
        ("nonsquare.txt", "0 1 2\n1 0 1\n", "not square"),
        ("ragged.txt", "0 1 2\n1 0\n2 1 0\n", "line 2, column 3"),
        ("negative.txt", "0 1 2\n1 0 -1\n2 1 0\n", "line 2, column 3"),
        (
            "word.txt",
            "# costs\n0 1 2\n1 zero 1\n2 1 0\n",
            "line 3, column 2",
        ),
        ("inf.txt", "0 1 2\n1 0 1\n2 inf 0\n", "line 3, column 2"),
        ("diag.txt", "0 1 2\n1 5 1\n2 1 0\n", "line 2, column 2"),
        ("empty.txt", "# nothing\n", "no entries"),
    ];
    for (name, text, needle) in cases {
        let path = temp_file(name, text);
        let err = CostMatrix::load(&t, Some(&path), false).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(name), "{name}: {msg}");
        assert!(msg.contains(needle), "{name}: {msg}");
        assert!(
            matches!(
                err,
                TopologyError::Matrix { .. } | TopologyError::MatrixShape { .. }
            ),
            "{name}: {err:?}"
        );
    }
    // Right shape, wrong size for the topology.
    let path = temp_file("two.txt", "0 1\n1 0\n");
    let err = CostMatrix::load(&t, Some(&path), false).unwrap_err();
    assert!(
        matches!(
            err,
            TopologyError::CostSize {
                size: 2,
                pus: 3,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("two.txt"), "{err}");
    // A file that cannot be read.
    let err = CostMatrix::load(
        &t,
        Some(std::path::Path::new("/nonexistent/cost.txt")),
        false,
    )
    .unwrap_err();
    assert!(matches!(err, TopologyError::Io { .. }), "{err:?}");
    assert_cause_once(&err, "/nonexistent/cost.txt");
    // Bandwidth matrix: rejected as is, accepted inverted.
    let path = temp_file("bw.txt", "100 50 25\n50 100 50\n25 50 100\n");
    assert!(CostMatrix::load(&t, Some(&path), false).is_err());
    let c = CostMatrix::load(&t, Some(&path), true).unwrap();
    assert_eq!(c.get(0, 2), 1.0 / 25.0);
    let l = WorkerLayout::new(&t, &c, &LayoutOptions::default()).unwrap();
    assert_eq!(l.dist(0), &[1, 2]);
    // Zero bandwidth cannot be inverted.
    let path = temp_file("bw0.txt", "100 0 25\n50 100 50\n25 50 100\n");
    let err = CostMatrix::load(&t, Some(&path), true).unwrap_err();
    assert!(err.to_string().contains("line 1, column 2"), "{err}");
}

#[test]
fn too_many_workers_is_an_error_everywhere() {
    for spec in ["host", "preset:nehalem-2x4", "synthetic:core:4 pu:1"] {
        let t = load(spec).unwrap();
        let cost = CostMatrix::hierarchical(&t);
        let opts = LayoutOptions {
            workers: t.pu_count() + 1,
            ..LayoutOptions::default()
        };
        let err = WorkerLayout::new(&t, &cost, &opts).unwrap_err();
        assert!(
            matches!(err, TopologyError::TooManyWorkers { .. }),
            "{spec}: {err:?}"
        );
        assert!(err.to_string().contains(spec), "{err}");
    }
}

#[test]
fn mismatched_cost_matrix_is_refused_by_the_layout() {
    let t = load("synthetic:core:4 pu:1").unwrap();
    let other = load("synthetic:core:3 pu:1").unwrap();
    let err = WorkerLayout::new(
        &t,
        &CostMatrix::hierarchical(&other),
        &LayoutOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, TopologyError::CostSize { .. }), "{err:?}");
}

#[test]
fn bad_spec_strings() {
    for s in ["", "hosts", "preset:", "xml:", "file:/x", "synthetic:"] {
        let err = s.parse::<TopologySpec>().unwrap_err();
        assert!(matches!(err, TopologyError::BadSpec { .. }), "{s}: {err:?}");
    }
}

#[test]
fn more_pus_than_the_limit_is_refused_naming_the_spec_and_the_count() {
    assert_eq!(Topology::MAX_PUS, 4096);
    // Just above the limit (hwloc builds it quickly, then loka counts), and far above it: a
    // description hwloc would take minutes and gigabytes to build, refused before it does.
    for (spec, pus) in [
        ("synthetic:package:2 core:2049 pu:1", 4098),
        ("synthetic:pu:4097", 4097),
        ("synthetic:pack:1000 pu:1000", 1_000_000),
        (
            "synthetic:pack:2 [numa(memory=1GB)] core:1000 pu:1000",
            2_000_000,
        ),
    ] {
        let err = load(spec).unwrap_err();
        assert!(
            matches!(err, TopologyError::TooManyPus { pus: p, max: 4096, .. } if p == pus),
            "{spec}: {err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!("topology `{spec}` has {pus} PUs; at most 4096 are supported")
        );
    }
    // The largest machine is accepted.
    for spec in [
        "synthetic:pu:4096",
        "synthetic:package:4 numa:2 core:256 pu:2",
    ] {
        assert_eq!(load(spec).unwrap().pu_count(), 4096, "{spec}");
    }
}
