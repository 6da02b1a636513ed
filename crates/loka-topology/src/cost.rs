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
        let classes = topo.numa_distances().map(|d| d.classes());
        let mut values = vec![0.0; n * n];
        for a in 0..n {
            for b in 0..n {
                if a == b {
                    continue;
                }
                let h = topo.hierarchical_distance(a, b) as f64;
                let (na, nb) = (topo.numa_node_of(a), topo.numa_node_of(b));
                let cost = match (topo.numa_distances(), &classes) {
                    (Some(d), Some(classes)) if na != nb => {
                        let v = d.get(na, nb);
                        let rank = classes.partition_point(|&c| c < v) + 1;
                        (height + 1.0) * rank as f64 + h
                    }
                    _ => h,
                };
                values[a * n + b] = cost;
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
        let text = std::fs::read_to_string(path).map_err(|source| TopologyError::Io {
            path: path.to_owned(),
            source,
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

    #[test]
    fn from_rows_validates() {
        assert!(CostMatrix::from_rows(&[vec![0.0, 1.0], vec![1.0, 0.0]], "r").is_ok());
        assert!(CostMatrix::from_rows(&[vec![0.0, -1.0], vec![1.0, 0.0]], "r").is_err());
        assert!(CostMatrix::from_rows(&[vec![0.0, 1.0]], "r").is_err());
    }
}
