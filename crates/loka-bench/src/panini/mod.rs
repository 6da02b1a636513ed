//! The benchmarks of Panini's automatic actor-to-thread mapping (Upadhyaya & Rajan, AGERE! 2014;
//! docs/references.md), each run under the execution modes all-thread, all-task and auto
//! (docs/exec-policies.md). Definitions, sizes and deviations in `docs/internals/benchmarks.md` (*Panini*).
//!
//! Every actor type declares the characteristics vector ⟨BLK, STATE, PAR, COMM, CPU⟩ that the
//! paper's tables (§4.5, Figures 9–11, §5.1.5–5.1.6) give its capsule, through
//! [`loka::Actor::characteristics`], so that `--exec auto` maps it by the eight heuristics; the
//! two other modes ignore it. `quick` sizes run at least 50 ms on 2 workers under all-task
//! (docs/internals/benchmarks.md, "Sizes") and under 2 s in all three modes (all-thread is the slowest:
//! fasta and histogram ≈ 1.5 s on a loaded 2-core machine; at most ~130 actors, so all-thread
//! starts at most that many threads); `full` sizes are
//! the paper's where it gives them. Every result is compared with an independent sequential
//! computation, every message count is exact and part of the check, every actor of a run has
//! stopped at the end, and each benchmark injects the faults it lists (`Bench::faults`), each of
//! which fails its check (the mutation test in `lib.rs` runs them all).

mod bang;
mod fasta;
mod histogram;
mod knucleotide;
mod mbrot;
mod polynomial;
mod raytracer;
mod serialmsg;

use crate::{Bench, Measured};
use loka::exec_policy::{Characteristics, Comm, Cpu, Par};
use loka::{Actor, Context, ReplyTo};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// The Panini benchmarks: the BenchErl ones (Figure 9), the Benchmarks Game ones (Figure 10),
/// PolynomialIntegral (Figure 11), RayTracer (§5.1.5) and Histogram (§5.1.6).
pub fn all() -> Vec<Bench> {
    vec![
        bang::BENCH,
        serialmsg::BENCH,
        mbrot::BENCH,
        fasta::BENCH,
        knucleotide::BENCH,
        histogram::BENCH,
        polynomial::BENCH,
        raytracer::BENCH,
    ]
}

/// ⟨false, _, low, low, low⟩: a leaf that sends nothing and computes little (the paper's Receiver,
/// Writer, Collector, Printer, DelegateActor…): Affinity, so `Monitor` under `auto`.
pub(crate) const LEAF: Characteristics = Characteristics::new(Par::Low, Comm::Low, Cpu::Low);

/// Messages counted by the actors themselves: each adds the messages it handled when it stops.
/// Read it after `run_until_idle`, once every actor of the run has stopped.
pub(crate) type Tally = Arc<AtomicU64>;

/// Appends the parameters of the run to its check text (it ends up in the result record).
fn noting(mut measured: Measured, params: impl std::fmt::Debug) -> Measured {
    measured.check = format!("{} with {params:?}", measured.check);
    measured
}

/// The actors of this run still alive: live actors now less those live before the run.
fn alive_since(system: &loka::System, before: &loka::Stats) -> u64 {
    system
        .stats()
        .actors_live()
        .saturating_sub(before.actors_live())
}

/// The driver's end of a run that has no collecting capsule in the paper (serialmsg, mbrot):
/// gathers a known number of reports, answers the driver with them in arrival order, and stops.
/// Declares [`LEAF`] (it only stores what it gets), so `auto` runs it inline on its reporters.
pub(crate) struct Gather<T> {
    expected: usize,
    got: Vec<T>,
    done: Option<ReplyTo<Vec<T>>>,
}

/// A message to a [`Gather`].
pub(crate) enum GatherMsg<T> {
    /// From the driver, before anything can report: answer once `expected` reports are in.
    Arm {
        /// Reports to wait for.
        expected: usize,
        /// Where the reports go.
        done: ReplyTo<Vec<T>>,
    },
    /// One report.
    Report(T),
}

impl<T> Gather<T> {
    /// A gatherer that waits for its `Arm`.
    pub(crate) fn new() -> Self {
        Gather {
            expected: usize::MAX,
            got: Vec::new(),
            done: None,
        }
    }
}

impl<T: Send + 'static> Actor for Gather<T> {
    type Msg = GatherMsg<T>;

    fn handle(&mut self, ctx: &mut Context<Self>, msg: GatherMsg<T>) {
        match msg {
            GatherMsg::Arm { expected, done } => {
                self.expected = expected;
                self.got.reserve(expected);
                self.done = Some(done);
            }
            GatherMsg::Report(report) => self.got.push(report),
        }
        if self.got.len() >= self.expected {
            if let Some(done) = self.done.take() {
                done.send(std::mem::take(&mut self.got));
            }
            ctx.stop();
        }
    }

    fn characteristics() -> Option<Characteristics> {
        Some(LEAF)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Fault, Run, Size};
    use loka::{Config, ExecMode};
    use std::time::Duration;

    fn system(exec: ExecMode, workers: usize) -> loka::System {
        loka::System::builder()
            .config(Config {
                exec,
                workers,
                ..Config::default()
            })
            .build()
            .unwrap()
    }

    /// Each Panini benchmark verifies at `quick` on 1 and 2 workers under `exec`, and one fault
    /// (a dropped message) fails its check there too: the checks do not depend on which thread
    /// runs an actor. Every other fault of every benchmark is checked once, under the default
    /// mode, by the crate's `panini_faults_fail` (running all of them under all five modes took
    /// 80 s of CPU in every CI run for no case the default mode misses).
    fn every_benchmark_verifies_and_a_drop_fails_under(exec: ExecMode) {
        for bench in super::all() {
            for workers in [1, 2] {
                let m = (bench.run)(&system(exec, workers), &Run::new(Size::Quick));
                assert!(
                    m.verified,
                    "{} under {exec} on {workers} workers: {}",
                    bench.name, m.check
                );
            }
            let run = Run::new(Size::Quick)
                .with_fault(Fault::Drop)
                .with_timeout(Duration::from_secs(30));
            let m = (bench.run)(&system(exec, 2), &run);
            assert!(
                !m.verified,
                "{} with a dropped message under {exec} still verified: {}",
                bench.name, m.check
            );
        }
    }

    // One test per execution mode (all-thread, all-task, auto, and the test modes all-monitor
    // and all-seq), so that the harness runs them side by side: one test of all five took 78 s.

    #[test]
    fn every_panini_benchmark_verifies_and_a_drop_fails_under_all_thread() {
        every_benchmark_verifies_and_a_drop_fails_under(ExecMode::AllThread);
    }

    #[test]
    fn every_panini_benchmark_verifies_and_a_drop_fails_under_all_task() {
        every_benchmark_verifies_and_a_drop_fails_under(ExecMode::AllTask);
    }

    #[test]
    fn every_panini_benchmark_verifies_and_a_drop_fails_under_auto() {
        every_benchmark_verifies_and_a_drop_fails_under(ExecMode::Auto);
    }

    #[test]
    fn every_panini_benchmark_verifies_and_a_drop_fails_under_all_monitor() {
        every_benchmark_verifies_and_a_drop_fails_under(ExecMode::AllMonitor);
    }

    #[test]
    fn every_panini_benchmark_verifies_and_a_drop_fails_under_all_seq() {
        every_benchmark_verifies_and_a_drop_fails_under(ExecMode::AllSeq);
    }

    #[test]
    fn every_mode_is_tested_and_every_benchmark_can_drop() {
        // The five tests above cover every mode there is.
        assert_eq!(ExecMode::ALL.len(), 5);
        assert!(super::all().iter().all(|b| b.faults.contains(&Fault::Drop)));
    }
}
