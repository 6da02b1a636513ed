//! The machines of the research works (`docs/references.md`), shipped as data files
//! (`presets/*.topo` in this crate).
//!
//! | name | machine | PUs | NUMA nodes |
//! |---|---|---|---|
//! | `opteron6376` | 4 × AMD Opteron 6376, Wölke's test server; hop matrix of his Table 6.1 | 64 | 8 |
//! | `xeon-x7560` | 4 × Intel Xeon X7560, Francesquini's "NUMA 32"; complete graph | 32 | 4 |
//! | `altix-uv2000` | SGI Altix UV 2000, Francesquini App. C; partial hypercube | 192 | 24 |
//! | `nehalem-2x4` | 2 × Intel Nehalem (4 cores), LASSI's test machine | 8 | 2 |
//! | `ring-4x2` | Wölke's Fig. 4.1/4.2 example: 4 dual-core CPUs in a ring | 8 | 4 |
//!
//! File format: `#` comments; `description: TEXT`; `synthetic: HWLOC-SYNTHETIC`;
//! then `distances:` followed by the NUMA distance matrix, one row per line, in
//! NUMA logical order. Each file's comments say where its numbers come from and
//! which ones loka had to choose.

use crate::error::TopologyError;
use crate::matrix::{parse_matrix, ParsedMatrix};

/// The shipped presets: (name, file contents).
const PRESETS: &[(&str, &str)] = &[
    ("opteron6376", include_str!("../presets/opteron6376.topo")),
    ("xeon-x7560", include_str!("../presets/xeon-x7560.topo")),
    ("altix-uv2000", include_str!("../presets/altix-uv2000.topo")),
    ("nehalem-2x4", include_str!("../presets/nehalem-2x4.topo")),
    ("ring-4x2", include_str!("../presets/ring-4x2.topo")),
];

/// A parsed preset file.
#[derive(Debug, Clone)]
pub(crate) struct Preset {
    pub name: &'static str,
    pub description: String,
    pub synthetic: String,
    pub distances: Option<ParsedMatrix>,
}

/// The names of all shipped presets.
pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
}

/// The raw data file of a preset (for `loka topo` users who want to copy and edit one).
pub fn source(name: &str) -> Option<&'static str> {
    PRESETS.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}

/// Finds and parses a preset.
pub(crate) fn find(name: &str) -> Result<Preset, TopologyError> {
    let Some(&(name, text)) = PRESETS.iter().find(|(n, _)| *n == name) else {
        return Err(TopologyError::UnknownPreset {
            name: name.to_owned(),
            known: names().join(", "),
        });
    };
    parse(name, text)
}

fn parse(name: &'static str, text: &str) -> Result<Preset, TopologyError> {
    let broken = |reason: String| TopologyError::BrokenPreset {
        name: name.to_owned(),
        reason,
    };
    let mut description = None;
    let mut synthetic = None;
    let mut distances = None;
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let content = line.trim();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let Some((key, value)) = content.split_once(':') else {
            return Err(broken(format!("line {}: expected `key: value`", i + 1)));
        };
        match key.trim() {
            "description" => description = Some(value.trim().to_owned()),
            "synthetic" => synthetic = Some(value.trim().to_owned()),
            "distances" => {
                let rest = lines[i + 1..].join("\n");
                let input = format!("preset file {name}.topo");
                distances = Some(parse_matrix(&rest, &input, i + 1)?);
                break;
            }
            other => return Err(broken(format!("line {}: unknown key `{other}`", i + 1))),
        }
    }
    Ok(Preset {
        name,
        description: description.unwrap_or_else(|| name.to_owned()),
        synthetic: synthetic.ok_or_else(|| broken("no `synthetic:` line".to_owned()))?,
        distances,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_parses() {
        for n in names() {
            let p = find(n).unwrap();
            assert!(!p.synthetic.is_empty());
            assert!(p.distances.is_some(), "{n} ships distances");
            assert!(source(n).is_some());
        }
        assert!(matches!(
            find("cray-1"),
            Err(TopologyError::UnknownPreset { .. })
        ));
    }

    #[test]
    fn opteron_matrix_is_wolke_table_6_1() {
        let m = find("opteron6376").unwrap().distances.unwrap();
        assert_eq!(m.n, 8);
        let row0: Vec<f64> = (0..8).map(|j| m.get(0, j)).collect();
        assert_eq!(row0, vec![0., 1., 1., 2., 1., 2., 1., 2.]);
        for i in 0..8 {
            for j in 0..8 {
                assert_eq!(m.get(i, j), m.get(j, i), "symmetric");
                assert!(m.get(i, j) <= 2.0);
            }
        }
    }
}
