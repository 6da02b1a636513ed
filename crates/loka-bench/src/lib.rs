//! loka's benchmark workloads, the runner that measures them under a configuration, and their
//! result records. Workload definitions shared with the peers: `docs/benchmarks.md`.

pub mod bencherl;
mod matrix_search;
pub mod record;
pub mod report;
pub mod rng;
pub mod runner;
pub mod savina;
pub mod verify;

use std::time::Duration;

/// Problem sizes: `quick` for this 2-core machine and CI, `full` as in the research works
/// (`docs/references.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Size {
    /// Seconds at most on a laptop.
    Quick,
    /// The parameters of the research works (`docs/references.md`): Savina as sized by Wölke
    /// §6.2.1, BenchErl's `short` input for Francesquini's 32 cores, Matrix Search of Wölke §6.2.2.
    Full,
}

impl Size {
    /// Picks the parameter for this size.
    pub fn pick<T>(self, quick: T, full: T) -> T {
        match self {
            Size::Quick => quick,
            Size::Full => full,
        }
    }
}

impl std::str::FromStr for Size {
    type Err = BenchError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "quick" => Ok(Size::Quick),
            "full" => Ok(Size::Full),
            _ => Err(BenchError::UnknownSize(s.to_owned())),
        }
    }
}

impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Size::Quick => "quick",
            Size::Full => "full",
        })
    }
}

/// What one run of a workload measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// Messages the workload delivered (the count defined in `docs/benchmarks.md`).
    pub messages: u64,
    /// From the driver's first message to the verified completion.
    pub elapsed: Duration,
    /// Whether the workload's own result check passed.
    pub verified: bool,
    /// What was checked, or what went wrong.
    pub check: String,
}

impl Measured {
    /// A run whose result was compared with `expected`.
    pub fn checked<T: PartialEq + std::fmt::Debug>(
        messages: u64,
        elapsed: Duration,
        got: T,
        expected: T,
    ) -> Measured {
        let verified = got == expected;
        let check = if verified {
            format!("result {got:?} as expected")
        } else {
            format!("result {got:?}, expected {expected:?}")
        };
        Measured {
            messages,
            elapsed,
            verified,
            check,
        }
    }

    /// Also requires `messages == expected_messages` (a network that must carry an exact count),
    /// naming both in the check; `formula` says how the expected count is made, if not obvious.
    pub fn with_message_count(mut self, expected_messages: u64, formula: &str) -> Measured {
        let messages = self.messages;
        self.verified &= messages == expected_messages;
        self.check = format!(
            "{}; {messages} messages counted (expected {formula}{expected_messages})",
            self.check
        );
        self
    }
}

/// A workload: its name, suite, and how to run it on a started system.
#[derive(Clone, Copy)]
pub struct Bench {
    /// The CLI name.
    pub name: &'static str,
    /// `savina`, `bencherl`, …
    pub suite: &'static str,
    /// One line about it.
    pub about: &'static str,
    /// Runs it once; the system is fresh and is shut down by the caller.
    pub run: fn(&loka::System, Size) -> Measured,
}

impl std::fmt::Debug for Bench {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Bench({})", self.name)
    }
}

/// Every benchmark, in listing order.
pub fn all() -> Vec<Bench> {
    let mut all = savina::all();
    all.extend(bencherl::all());
    all.extend(matrix_search::all());
    all
}

/// Looks up benchmarks by name; `all` expands to every benchmark.
pub fn find(names: &[String]) -> Result<Vec<Bench>, BenchError> {
    let known = all();
    let mut out = Vec::new();
    for name in names {
        if name == "all" {
            out.extend(known.iter().copied());
            continue;
        }
        match known.iter().find(|b| b.name == name) {
            Some(b) => out.push(*b),
            None => {
                return Err(BenchError::UnknownBench {
                    name: name.clone(),
                    known: known.iter().map(|b| b.name).collect::<Vec<_>>().join(", "),
                })
            }
        }
    }
    Ok(out)
}

/// Benchmark errors; each names the bad input.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// No benchmark has this name.
    #[error("unknown benchmark `{name}` (known: {known}, or `all`)")]
    UnknownBench {
        /// The name given.
        name: String,
        /// The known names.
        known: String,
    },
    /// Not `quick` or `full`.
    #[error("unknown size `{0}` (known: quick, full)")]
    UnknownSize(String),
    /// The system could not be configured.
    #[error(transparent)]
    Config(#[from] loka::ConfigError),
    /// A results file could not be read or written.
    #[error("{path}: {message}")]
    Results {
        /// The file.
        path: String,
        /// What went wrong (line numbers included).
        message: String,
    },
}

/// Savina's per-message work for the fork-join benchmarks (identical in every peer).
#[inline]
pub fn compute() -> f64 {
    let t = std::hint::black_box(37.2_f64);
    let s = t.sin();
    std::hint::black_box(s * s + t.cos())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_names_are_reported_with_the_known_ones() {
        let err = find(&["pingpong".into(), "pingpnog".into()]).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("pingpnog") && text.contains("counting"),
            "{text}"
        );
        assert_eq!(find(&["all".into()]).unwrap().len(), all().len());
        assert!("huge".parse::<Size>().is_err());
    }

    #[test]
    fn every_benchmark_verifies_at_quick_size_on_one_and_two_workers() {
        for workers in [1, 2] {
            for bench in all() {
                let system = loka::System::builder().workers(workers).build().unwrap();
                let m = (bench.run)(&system, Size::Quick);
                assert!(
                    m.verified,
                    "{} on {workers} workers: {}",
                    bench.name, m.check
                );
                assert!(m.messages > 0, "{}", bench.name);
            }
        }
    }
}
