//! The text format shared by cost matrices and NUMA distance matrices.
//!
//! One row per line; entries separated by whitespace and/or commas; `#` starts a
//! comment that runs to the end of the line; blank lines are ignored. Every
//! entry must be a finite, non-negative number.

use std::sync::Arc;

use crate::error::TopologyError;

/// A square matrix read from text, remembering where each row came from.
#[derive(Debug, Clone)]
pub(crate) struct ParsedMatrix {
    /// Side length.
    pub n: usize,
    /// Row-major entries.
    pub values: Vec<f64>,
    /// 1-based input line of each row.
    pub lines: Vec<usize>,
}

impl ParsedMatrix {
    /// Entry `(i, j)`.
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.values[i * self.n + j]
    }
}

/// Parses a square matrix of finite, non-negative numbers.
///
/// `input` names the source in errors; `line_offset` is added to line numbers
/// (for matrices embedded in a larger file).
pub(crate) fn parse_matrix(
    text: &str,
    input: &str,
    line_offset: usize,
) -> Result<ParsedMatrix, TopologyError> {
    let mut values = Vec::new();
    let mut lines = Vec::new();
    let mut width: Option<usize> = None;
    for (idx, raw) in text.lines().enumerate() {
        let line_no = idx + 1 + line_offset;
        let content = raw.split('#').next().unwrap_or("");
        let tokens: Vec<&str> = content
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|t| !t.is_empty())
            .collect();
        if tokens.is_empty() {
            continue;
        }
        for (col, token) in tokens.iter().enumerate() {
            let value: f64 = token.parse().map_err(|_| TopologyError::Matrix {
                input: input.to_owned(),
                line: line_no,
                column: col + 1,
                reason: format!("`{token}` is not a number"),
            })?;
            if !value.is_finite() {
                return Err(TopologyError::Matrix {
                    input: input.to_owned(),
                    line: line_no,
                    column: col + 1,
                    reason: format!("`{token}` is not finite"),
                });
            }
            if value < 0.0 {
                return Err(TopologyError::Matrix {
                    input: input.to_owned(),
                    line: line_no,
                    column: col + 1,
                    reason: format!("`{token}` is negative"),
                });
            }
            values.push(value);
        }
        match width {
            None => width = Some(tokens.len()),
            Some(w) if w != tokens.len() => {
                return Err(TopologyError::Matrix {
                    input: input.to_owned(),
                    line: line_no,
                    column: tokens.len().min(w) + 1,
                    reason: format!(
                        "row has {} entries but the first row has {w} (the matrix must be square)",
                        tokens.len()
                    ),
                });
            }
            Some(_) => {}
        }
        lines.push(line_no);
    }
    let Some(n) = width else {
        return Err(TopologyError::MatrixShape {
            input: input.to_owned(),
            reason: "the matrix has no entries".to_owned(),
        });
    };
    if lines.len() != n {
        return Err(TopologyError::MatrixShape {
            input: input.to_owned(),
            reason: format!(
                "the matrix is not square: {} rows of {n} entries (rows on lines {}..={})",
                lines.len(),
                lines[0],
                lines[lines.len() - 1]
            ),
        });
    }
    Ok(ParsedMatrix { n, values, lines })
}

/// Replaces every entry `x` by `1/x` (bandwidth-style matrices, where larger
/// means cheaper). Zero entries cannot be inverted and are reported.
pub(crate) fn invert(m: &mut ParsedMatrix, input: &str) -> Result<(), TopologyError> {
    let n = m.n;
    for i in 0..n {
        for j in 0..n {
            let v = m.values[i * n + j];
            if v == 0.0 {
                return Err(TopologyError::Matrix {
                    input: input.to_owned(),
                    line: m.lines[i],
                    column: j + 1,
                    reason: "0 cannot be inverted (bandwidth matrices need positive entries)"
                        .to_owned(),
                });
            }
            m.values[i * n + j] = 1.0 / v;
        }
    }
    Ok(())
}

/// Checks `Cost(i,i) <= Cost(j,k)` for all `i, j, k` [Francesquini §4.2]: the
/// largest diagonal entry must not exceed the smallest off-diagonal entry.
pub(crate) fn check_global_diagonal(m: &ParsedMatrix, input: &str) -> Result<(), TopologyError> {
    let n = m.n;
    if n < 2 {
        return Ok(());
    }
    let mut max_diag = (0, m.get(0, 0));
    let mut min_off = (0, 1, m.get(0, 1));
    for i in 0..n {
        if m.get(i, i) > max_diag.1 {
            max_diag = (i, m.get(i, i));
        }
        for j in 0..n {
            if i != j && m.get(i, j) < min_off.2 {
                min_off = (i, j, m.get(i, j));
            }
        }
    }
    if max_diag.1 > min_off.2 {
        let (i, d) = max_diag;
        let (a, b, o) = min_off;
        return Err(TopologyError::Matrix {
            input: input.to_owned(),
            line: m.lines[i],
            column: i + 1,
            reason: format!(
                "diagonal entry {d} is larger than the off-diagonal entry {o} at line {}, column {} \
                 (local cost must be minimal: Cost(i,i) <= Cost(j,k))",
                m.lines[a],
                b + 1
            ),
        });
    }
    Ok(())
}

/// Checks `d(i,i) <= d(i,j)` for every row (NUMA distances: a node is nearest to itself).
pub(crate) fn check_row_diagonal(m: &ParsedMatrix, input: &str) -> Result<(), TopologyError> {
    let n = m.n;
    for i in 0..n {
        for j in 0..n {
            if m.get(i, j) < m.get(i, i) {
                return Err(TopologyError::Matrix {
                    input: input.to_owned(),
                    line: m.lines[i],
                    column: j + 1,
                    reason: format!(
                        "distance {} is smaller than the node's distance to itself ({})",
                        m.get(i, j),
                        m.get(i, i)
                    ),
                });
            }
        }
    }
    Ok(())
}

/// A square matrix of `f64` in row-major order and where it came from: the storage shared by
/// [`crate::CostMatrix`] (PU costs) and [`crate::NumaDistances`] (node distances), which differ
/// only in how they are built and validated. The entries are shared, not copied, by clones and
/// by the [`crate::WorkerLayout`] built on a cost matrix (128 MiB at 4,096 PUs).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Square {
    n: usize,
    values: Arc<Vec<f64>>,
    source: String,
}

impl Square {
    /// `values` must hold `n * n` entries (callers validate before).
    pub(crate) fn new(n: usize, values: Vec<f64>, source: String) -> Square {
        debug_assert_eq!(values.len(), n * n);
        Square {
            n,
            values: Arc::new(values),
            source,
        }
    }

    /// The row-major entries, shared.
    pub(crate) fn values(&self) -> &Arc<Vec<f64>> {
        &self.values
    }

    /// Side length.
    pub(crate) fn size(&self) -> usize {
        self.n
    }

    /// Entry at row `a`, column `b` (panics out of range).
    pub(crate) fn get(&self, a: usize, b: usize) -> f64 {
        self.values[a * self.n + b]
    }

    /// Row `a` (panics out of range).
    pub(crate) fn row(&self, a: usize) -> &[f64] {
        &self.values[a * self.n..(a + 1) * self.n]
    }

    /// Where the matrix came from.
    pub(crate) fn source(&self) -> &str {
        &self.source
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_comments_commas_and_blank_lines() {
        let m = parse_matrix("# header\n1, 2\n\n 3 4 # tail\n", "t", 0).unwrap();
        assert_eq!(m.n, 2);
        assert_eq!(m.values, vec![1.0, 2.0, 3.0, 4.0]);
        assert_eq!(m.lines, vec![2, 4]);
    }

    #[test]
    fn reports_line_and_column() {
        // (text, first line number offset, expected line, expected column)
        let cases = [
            ("0 1\n1 x\n", 0, 2, 2),     // not a number
            ("0 1\n-1 0\n", 0, 2, 1),    // negative
            ("0 1\n1 NaN\n", 0, 2, 2),   // not finite
            ("0 1\n1 0 3\n", 10, 12, 3), // ragged row, offset line numbers
        ];
        for (text, offset, line, column) in cases {
            let err = parse_matrix(text, "f.txt", offset).unwrap_err();
            match err {
                TopologyError::Matrix {
                    line: l, column: c, ..
                } => assert_eq!((l, c), (line, column), "{text:?}"),
                other => panic!("{text:?}: unexpected error {other}"),
            }
        }
        let err = parse_matrix("0 1\n1 x\n", "f.txt", 0).unwrap_err();
        assert!(err.to_string().contains("f.txt"), "{err}");
    }

    #[test]
    fn rejects_non_square_and_empty() {
        assert!(matches!(
            parse_matrix("0 1\n1 0\n2 2\n", "f", 0),
            Err(TopologyError::MatrixShape { .. })
        ));
        assert!(matches!(
            parse_matrix("# nothing\n", "f", 0),
            Err(TopologyError::MatrixShape { .. })
        ));
    }

    #[test]
    fn diagonal_rules() {
        let m = parse_matrix("2 1\n1 0\n", "f", 0).unwrap();
        let err = check_global_diagonal(&m, "f").unwrap_err();
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
        assert!(check_row_diagonal(&m, "f").is_err());
        let ok = parse_matrix("1 2\n2 1\n", "f", 0).unwrap();
        check_global_diagonal(&ok, "f").unwrap();
        check_row_diagonal(&ok, "f").unwrap();
    }

    #[test]
    fn inversion() {
        let mut m = parse_matrix("4 2\n2 4\n", "f", 0).unwrap();
        invert(&mut m, "f").unwrap();
        assert_eq!(m.values, vec![0.25, 0.5, 0.5, 0.25]);
        let mut z = parse_matrix("4 0\n2 4\n", "f", 0).unwrap();
        let err = invert(&mut z, "f").unwrap_err();
        assert!(
            matches!(
                err,
                TopologyError::Matrix {
                    line: 1,
                    column: 2,
                    ..
                }
            ),
            "{err}"
        );
    }
}
