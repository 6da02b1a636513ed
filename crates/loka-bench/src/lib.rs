//! loka's benchmark workloads, the runner that measures them under a configuration, and their
//! result records. Workload definitions shared with the peers: `docs/internals/benchmarks.md`.

pub mod async_handlers;
pub mod bencherl;
#[cfg(test)]
mod calibration;
mod cforall;
pub mod format;
mod lassi;
mod limit;
mod matrix_search;
mod panini;
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

/// How one run of a workload is made: its size, an optional deliberate fault (for the mutation
/// tests of its result check), and how long it may take before it counts as failed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Run {
    /// The problem size.
    pub size: Size,
    /// A defect the workload injects into itself ([`Fault::None`] for a real run).
    pub fault: Fault,
    /// The longest a run may take: past it the run reports `verified: false`, naming the benchmark.
    pub timeout: Duration,
}

impl Run {
    /// A real run of `size`, with the default timeout (60 s quick, 600 s full).
    pub fn new(size: Size) -> Run {
        Run {
            size,
            fault: Fault::None,
            timeout: Duration::from_secs(size.pick(60, 600)),
        }
    }

    /// The same run with `fault` injected.
    pub fn with_fault(self, fault: Fault) -> Run {
        Run { fault, ..self }
    }

    /// The same run with another timeout.
    pub fn with_timeout(self, timeout: Duration) -> Run {
        Run { timeout, ..self }
    }

    /// Picks the parameter for this run's size.
    pub fn pick<T>(&self, quick: T, full: T) -> T {
        self.size.pick(quick, full)
    }

    /// Whether this run injects `fault`.
    pub fn injects(&self, fault: Fault) -> bool {
        self.fault == fault
    }
}

/// A deliberate defect a workload can inject into itself, so that its result check can be shown
/// to fail (the mutation tests in this crate). Each benchmark lists the faults it implements in
/// [`Bench::faults`]; a real run uses [`Fault::None`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// No fault: the real workload.
    None,
    /// One message (or one unit of work) is silently dropped.
    Drop,
    /// One message is delivered twice (or one extra message is sent).
    Duplicate,
    /// A message or reply goes to the wrong actor.
    Misroute,
    /// A rule of the workload is applied wrongly (a colour rule, an arithmetic step, an order).
    WrongRule,
}

/// Waits for a workload's result without ever hanging. Returns the reply, or an error naming
/// `bench` when
/// * the system became quiescent without answering (nothing runnable, nothing in flight: a
///   message was lost, or the workload stopped early), detected within a few milliseconds;
/// * the request was dropped unanswered;
/// * `run.timeout` passed (under the simulation: of the process's CPU time, `limit.rs`).
///
/// Call it only once the calling thread has sent everything it will send: from then on only the
/// actors can produce the result.
pub fn await_result<R>(
    system: &loka::System,
    pending: loka::Pending<R>,
    run: &Run,
    bench: &str,
) -> Result<R, String> {
    let limit = limit::Limit::start(system, run.timeout);
    let slice = Duration::from_millis(20);
    loop {
        if let Some(reply) = pending.wait_for(slice) {
            if !system.config().engine.is_real() {
                // Under the simulation, let the run's tail finish before this thread acts again
                // (stop signals, more input): what it sends then lands at a fixed point of the
                // schedule, not wherever the driver happens to be.
                system.run_until_idle_timeout(limit.remaining_wall());
            }
            return reply.map_err(|e| format!("{bench}: {e}"));
        }
        if system.run_until_idle_timeout(Duration::ZERO) {
            // Quiescent: a reply sent before the workers went to sleep is visible now.
            return match pending.wait_for(Duration::ZERO) {
                Some(reply) => reply.map_err(|e| format!("{bench}: {e}")),
                None => Err(format!(
                    "{bench}: the system went idle without a result (a message was lost or the workload stopped early)"
                )),
            };
        }
        if limit.passed() {
            return Err(format!("{bench}: no result within {}", limit.describe()));
        }
    }
}

/// What one run of a workload measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// Messages the workload delivered (the count defined in `docs/internals/benchmarks.md`).
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

    /// A run that produced no result (a lost message, a timeout): not verified, `reason` says why.
    pub fn failed(messages: u64, elapsed: Duration, reason: impl Into<String>) -> Measured {
        Measured {
            messages,
            elapsed,
            verified: false,
            check: reason.into(),
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
    pub run: fn(&loka::System, &Run) -> Measured,
    /// The faults this workload can inject into itself; each must make its check fail.
    pub faults: &'static [Fault],
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
    all.extend(cforall::all());
    all.extend(lassi::all());
    all.extend(panini::all());
    all.extend(async_handlers::all());
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

/// What one [`compute`] call takes on this project's host, declared to the simulation engine with
/// `ctx.charge` wherever a handler calls it (docs/simulation.md). Measured with
/// `cargo test --release -p loka-bench --lib compute_cost -- --ignored --nocapture --test-threads=1`:
/// independent calls, as a worker handling a batch of messages makes them (docs/internals/benchmarks.md);
/// the least of six runs on 2026-11-24 (8.3 ns; the others up to 11.8 ns on the shared host).
pub const COMPUTE_COST: std::time::Duration = std::time::Duration::from_nanos(COMPUTE_NS);
const COMPUTE_NS: u64 = 8;

/// Savina's per-message work for the fork-join benchmarks (fjthrput, fjcreate): the square of
/// the sine of the message's angle ([`compute_angle`]). Identical in every peer
/// (`docs/internals/benchmarks.md`); the handler adds the result to its actor's state, which the run's
/// check reads, so the call is never dead code, and the angle comes from a message, so it is
/// never constant-folded.
#[inline]
pub fn compute(angle: f64) -> f64 {
    let s = angle.sin();
    s * s
}

/// The angle the `k`-th message of a fork-join benchmark carries: `32 + (k mod 1024) / 128`,
/// 1024 values in [32, 40) around Savina's constant 37.2, each exact in binary, so every
/// language computes the same angle bit for bit.
#[inline]
pub fn compute_angle(k: u64) -> f64 {
    32.0 + (k % 1024) as f64 / 128.0
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

    /// The suites, each tested on its own below, so that the harness runs them side by side
    /// (one test over every benchmark took 50 s, another 23 s).
    const SUITES: [&str; 7] = [
        "savina", "bencherl", "matrix", "cforall", "lassi", "panini", "async",
    ];

    fn suite(name: &str) -> Vec<Bench> {
        all().into_iter().filter(|b| b.suite == name).collect()
    }

    #[test]
    fn the_suites_tested_one_by_one_are_every_benchmark() {
        let covered: usize = SUITES.iter().map(|s| suite(s).len()).sum();
        assert_eq!(covered, all().len());
        assert!(SUITES.iter().all(|s| !suite(s).is_empty()));
    }

    /// Two workers: `make smoke` runs every benchmark at quick size on 2 workers (its first
    /// step, `quick-check`); here one.
    fn every_benchmark_verifies_at_quick_size_on_one_worker(name: &str) {
        for bench in suite(name) {
            let system = loka::System::builder().workers(1).build().unwrap();
            let m = (bench.run)(&system, &Run::new(Size::Quick));
            assert!(m.verified, "{} on 1 worker: {}", bench.name, m.check);
            assert!(m.messages > 0, "{}", bench.name);
        }
    }

    /// The mutation tests: every fault a benchmark implements makes its own check report
    /// `verified: false` (and promptly: the timeout is short, and a lost message is noticed when
    /// the system goes idle).
    fn every_fault_makes_its_benchmark_fail_its_check(name: &str) {
        for bench in suite(name) {
            for &fault in bench.faults {
                let system = loka::System::builder().workers(2).build().unwrap();
                let run = Run::new(Size::Quick)
                    .with_fault(fault)
                    .with_timeout(Duration::from_secs(30));
                let m = (bench.run)(&system, &run);
                assert!(
                    !m.verified,
                    "{} with {fault:?} still verified: {}",
                    bench.name, m.check
                );
            }
        }
    }

    macro_rules! per_suite {
        ($($test:ident: $check:ident($suite:literal);)*) => {$(
            #[test]
            fn $test() {
                $check($suite);
            }
        )*};
    }

    per_suite! {
        savina_verifies_on_one_worker: every_benchmark_verifies_at_quick_size_on_one_worker("savina");
        bencherl_verifies_on_one_worker: every_benchmark_verifies_at_quick_size_on_one_worker("bencherl");
        matrix_search_verifies_on_one_worker: every_benchmark_verifies_at_quick_size_on_one_worker("matrix");
        cforall_verifies_on_one_worker: every_benchmark_verifies_at_quick_size_on_one_worker("cforall");
        lassi_verifies_on_one_worker: every_benchmark_verifies_at_quick_size_on_one_worker("lassi");
        panini_verifies_on_one_worker: every_benchmark_verifies_at_quick_size_on_one_worker("panini");
        async_verifies_on_one_worker: every_benchmark_verifies_at_quick_size_on_one_worker("async");
        savina_faults_fail: every_fault_makes_its_benchmark_fail_its_check("savina");
        bencherl_faults_fail: every_fault_makes_its_benchmark_fail_its_check("bencherl");
        matrix_search_faults_fail: every_fault_makes_its_benchmark_fail_its_check("matrix");
        cforall_faults_fail: every_fault_makes_its_benchmark_fail_its_check("cforall");
        lassi_faults_fail: every_fault_makes_its_benchmark_fail_its_check("lassi");
        panini_faults_fail: every_fault_makes_its_benchmark_fail_its_check("panini");
        async_faults_fail: every_fault_makes_its_benchmark_fail_its_check("async");
    }

    /// Every benchmark's check is shown able to fail by at least one injected fault.
    #[test]
    fn every_benchmark_implements_a_fault() {
        let missing: Vec<_> = all()
            .into_iter()
            .filter(|b| b.faults.is_empty())
            .map(|b| b.name)
            .collect();
        assert!(missing.is_empty(), "no mutation for: {missing:?}");
    }
}
