//! The PU-to-PU cost matrix [Francesquini §4.2]: `Cost(i, j)`, dimensionless,
//! larger = dearer, with `Cost(i, i) <= Cost(j, k)` for all `i, j, k`.

use std::path::Path;

use crate::error::TopologyError;
use crate::matrix::{self, ParsedMatrix, Square};
use crate::model::Topology;

/// A square matrix of communication costs between PUs, rows and columns in
/// PU logical order.
///
/// Either the default [hierarchical](CostMatrix::hierarchical) cost derived from
/// the topology, or a user file ([`CostMatrix::from_file`]). A file holds one row
/// per line, entries separated by whitespace or commas, `#` comments; see
/// `docs/topology.md`.
#[derive(Debug, Clone, PartialEq)]
pub struct CostMatrix {
    m: Square,
}

impl CostMatrix {
    /// The default cost: the hierarchical distance of the two PUs (height of
    /// their first common ancestor in the machine tree, 0 for the PU itself).
    ///
    /// When the topology has a NUMA distance matrix, PUs on different NUMA
    /// nodes cost `(H + 1) · r + h`, where `H` is the tree's height, `h` the
    /// hierarchical distance and `r ≥ 1` the rank of the nodes' distance among
    /// the distinct off-diagonal values of the matrix (1 for the nearest
    /// class). Remote pairs are thus always dearer than local ones, ordered by
    /// NUMA distance class first and by the tree second.
    pub fn hierarchical(topo: &Topology) -> CostMatrix {
        let n = topo.pu_count();
        let height = topo.height() as f64;
        // The NUMA term of each pair of nodes, `(H + 1) · r` (0 within a node, and without a
        // distance matrix): computed once per pair of nodes instead of once per pair of PUs.
        let nodes = topo.numa_node_count();
        let mut numa_term = vec![0.0; nodes * nodes];
        if let Some(d) = topo.numa_distances() {
            let classes = d.classes();
            for i in 0..nodes {
                for j in (0..nodes).filter(|&j| j != i) {
                    let rank = classes.partition_point(|&c| c < d.get(i, j)) + 1;
                    numa_term[i * nodes + j] = (height + 1.0) * rank as f64;
                }
            }
        }
        let depth: Vec<usize> = (0..n).map(|p| topo.pu(p).depth).collect();
        let node: Vec<usize> = (0..n).map(|p| topo.numa_node_of(p)).collect();
        // Two distinct PUs lie under two different children of their first common ancestor, so
        // visiting the pairs of children of every object writes each entry once, a row slice at
        // a time; asking the tree for each pair's ancestor took seconds at 4,096 PUs.
        let mut values = vec![0.0; n * n];
        for o in topo.objects() {
            for &c1 in &o.children {
                for &c2 in o.children.iter().filter(|&&c2| c2 != c1) {
                    let cols = &topo.object(c2).pus;
                    for &a in &topo.object(c1).pus {
                        let row = &mut values[a * n..(a + 1) * n];
                        let terms = &numa_term[node[a] * nodes..(node[a] + 1) * nodes];
                        for &b in cols {
                            let h = depth[a].max(depth[b]) - o.depth;
                            row[b] = terms[node[b]] + h as f64;
                        }
                    }
                }
            }
        }
        let source = if topo.numa_distances().is_some() {
            "hierarchical (tree height, NUMA distance classes)"
        } else {
            "hierarchical (tree height)"
        };
        CostMatrix {
            m: Square::new(n, values, source.to_owned()),
        }
    }

    /// Reads a cost file. With `invert`, every entry `x` becomes `1/x` first
    /// (for bandwidth figures, where larger means cheaper).
    ///
    /// # Errors
    /// [`TopologyError::Io`] if the file cannot be read; [`TopologyError::Matrix`]
    /// (with line and column) or [`TopologyError::MatrixShape`] if it is not a
    /// square matrix of finite non-negative numbers whose diagonal is minimal.
    pub fn from_file(path: &Path, invert: bool) -> Result<CostMatrix, TopologyError> {
        let text = std::fs::read_to_string(path).map_err(|error| TopologyError::Io {
            path: path.to_owned(),
            error,
        })?;
        Self::parse(&text, &path.display().to_string(), invert)
    }

    /// Parses cost-file text; `input` names it in errors. See [`CostMatrix::from_file`].
    ///
    /// # Errors
    /// As [`CostMatrix::from_file`], without the I/O part.
    pub fn parse(text: &str, input: &str, invert: bool) -> Result<CostMatrix, TopologyError> {
        let mut m = matrix::parse_matrix(text, input, 0)?;
        Self::validated(&mut m, input, invert)
    }

    /// Builds a matrix from rows (row `i` = costs from PU `i`), validated like a file.
    ///
    /// # Errors
    /// As [`CostMatrix::parse`]; "line" then means row number.
    pub fn from_rows(rows: &[Vec<f64>], input: &str) -> Result<CostMatrix, TopologyError> {
        let text: String = rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|v| format!("{v:?}"))
                    .collect::<Vec<_>>()
                    .join(" ")
                    + "\n"
            })
            .collect();
        Self::parse(&text, input, false)
    }

    fn validated(
        m: &mut ParsedMatrix,
        input: &str,
        invert: bool,
    ) -> Result<CostMatrix, TopologyError> {
        if invert {
            matrix::invert(m, input)?;
        }
        matrix::check_global_diagonal(m, input)?;
        let source = if invert {
            format!("{input} (inverted)")
        } else {
            input.to_owned()
        };
        Ok(CostMatrix {
            m: Square::new(m.n, m.values.clone(), source),
        })
    }

    /// The cost matrix for a topology: the file if one is given (checked to have
    /// one row per PU), else the [hierarchical](CostMatrix::hierarchical) default.
    ///
    /// # Errors
    /// As [`CostMatrix::from_file`], plus [`TopologyError::CostSize`].
    pub fn load(
        topo: &Topology,
        file: Option<&Path>,
        invert: bool,
    ) -> Result<CostMatrix, TopologyError> {
        match file {
            None => Ok(Self::hierarchical(topo)),
            Some(path) => {
                let m = Self::from_file(path, invert)?;
                m.check_size(topo)?;
                Ok(m)
            }
        }
    }

    /// Checks that the matrix has one row and column per PU of `topo`.
    ///
    /// # Errors
    /// [`TopologyError::CostSize`] naming both sizes.
    pub fn check_size(&self, topo: &Topology) -> Result<(), TopologyError> {
        if self.size() != topo.pu_count() {
            return Err(TopologyError::CostSize {
                input: self.source().to_owned(),
                size: self.size(),
                topology: topo.spec().to_string(),
                pus: topo.pu_count(),
            });
        }
        Ok(())
    }

    /// Side length (number of PUs).
    pub fn size(&self) -> usize {
        self.m.size()
    }

    /// `Cost(a, b)` between PUs `a` and `b`.
    ///
    /// # Panics
    /// If a PU is out of range.
    pub fn get(&self, a: usize, b: usize) -> f64 {
        self.m.get(a, b)
    }

    /// Row `a`: costs from PU `a` to every PU.
    ///
    /// # Panics
    /// If `a` is out of range.
    pub fn row(&self, a: usize) -> &[f64] {
        self.m.row(a)
    }

    /// The row-major entries, shared with the worker layout built on this matrix.
    pub(crate) fn values(&self) -> &std::sync::Arc<Vec<f64>> {
        self.m.values()
    }

    /// Where the matrix came from (`hierarchical …` or the file name).
    pub fn source(&self) -> &str {
        self.m.source()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_invert() {
        let c = CostMatrix::parse("1 1.5 2\n1.5 1 1.5\n2 1.5 1\n", "fig42", false).unwrap();
        assert_eq!(c.size(), 3);
        assert_eq!(c.get(0, 2), 2.0);
        assert_eq!(c.row(1), &[1.5, 1.0, 1.5]);
        let bw = CostMatrix::parse("10 5\n5 10\n", "bw", true).unwrap();
        assert_eq!(bw.get(0, 0), 0.1);
        assert_eq!(bw.get(0, 1), 0.2);
        assert!(bw.source().contains("inverted"));
        // Without the flag, a bandwidth matrix has a non-minimal diagonal.
        let err = CostMatrix::parse("10 5\n5 10\n", "bw", false).unwrap_err();
        assert!(
            matches!(
                err,
                TopologyError::Matrix {
                    line: 1,
                    column: 1,
                    ..
                }
            ),
            "{err}"
        );
    }

    /// The per-pair definition: the hierarchical distance, plus `(H + 1) · rank` between NUMA
    /// nodes when the topology has distances.
    fn by_definition(topo: &Topology, a: usize, b: usize) -> f64 {
        let h = topo.hierarchical_distance(a, b) as f64;
        let (na, nb) = (topo.numa_node_of(a), topo.numa_node_of(b));
        match topo.numa_distances() {
            Some(d) if na != nb => {
                let rank = d.classes().partition_point(|&c| c < d.get(na, nb)) + 1;
                (topo.height() as f64 + 1.0) * rank as f64 + h
            }
            _ => h,
        }
    }

    #[test]
    fn hierarchical_matches_the_per_pair_definition() {
        let specs = [
            "preset:opteron6376",
            "preset:ring-4x2",
            "synthetic:pu:5",
            "synthetic:package:2 numa:2 l3:1 core:3 pu:2",
            "synthetic:package:3 core:2 l1:1 pu:2",
        ];
        for spec in specs {
            let topo = Topology::load(&spec.parse().unwrap()).unwrap();
            let cost = CostMatrix::hierarchical(&topo);
            for a in 0..topo.pu_count() {
                for b in 0..topo.pu_count() {
                    assert_eq!(
                        cost.get(a, b),
                        by_definition(&topo, a, b),
                        "{spec}: ({a}, {b})"
                    );
                }
            }
        }
    }

    #[test]
    fn from_rows_validates() {
        assert!(CostMatrix::from_rows(&[vec![0.0, 1.0], vec![1.0, 0.0]], "r").is_ok());
        assert!(CostMatrix::from_rows(&[vec![0.0, -1.0], vec![1.0, 0.0]], "r").is_err());
        assert!(CostMatrix::from_rows(&[vec![0.0, 1.0]], "r").is_err());
    }
}
