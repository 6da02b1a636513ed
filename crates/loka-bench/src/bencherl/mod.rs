//! The BenchErl workloads Francesquini used (thesis ch. 5, Table 5.3), with the hub hints of his
//! BenchErl fork (definitions, sizes and deviations in `docs/internals/workloads.md`).
//!
//! BenchErl scales each input with the machine's core count: `full` is BenchErl's `short` input
//! for `FULL_CORES` cores (Francesquini's 32-core NUMA 32 platform), so the message count of a
//! `full` run does not depend on the worker count; `quick` is sized for a 2-core machine. The
//! environment variables `LOKA_BENCHERL_INPUT` (`short`, `intermediate`, `long`) and
//! `LOKA_BENCHERL_CORES` change what `full` stands for.

mod bang;
mod big;
mod ehb;
mod orbit_int;
mod serialmsg;
mod timer_wheel;

use crate::{Bench, Measured, Size};
use loka::{Actor, Context, ReplyTo};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// BenchErl's `number_of_cores` for the `full` size: the 32 cores of Francesquini's NUMA 32.
pub(crate) const FULL_CORES: usize = 32;

/// BenchErl's input versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Input {
    Short,
    Intermediate,
    Long,
}

/// What a `full` run stands for: a BenchErl input on a machine with `cores` cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Scale {
    pub(crate) input: Input,
    pub(crate) cores: usize,
}

impl Scale {
    /// `short` on `FULL_CORES` cores unless `LOKA_BENCHERL_INPUT` / `LOKA_BENCHERL_CORES` say
    /// otherwise. Panics, naming the variable, on a value it does not understand.
    pub(crate) fn full() -> Scale {
        let input = match std::env::var("LOKA_BENCHERL_INPUT").as_deref() {
            Err(_) | Ok("short") => Input::Short,
            Ok("intermediate") => Input::Intermediate,
            Ok("long") => Input::Long,
            Ok(other) => {
                panic!("LOKA_BENCHERL_INPUT={other}: expected short, intermediate or long")
            }
        };
        let cores = match std::env::var("LOKA_BENCHERL_CORES") {
            Err(_) => FULL_CORES,
            Ok(text) => match text.parse::<usize>() {
                Ok(n) if n > 0 => n,
                _ => panic!("LOKA_BENCHERL_CORES={text}: expected a positive integer"),
            },
        };
        Scale { input, cores }
    }

    /// Picks BenchErl's factor for this input.
    pub(crate) fn pick<T>(self, short: T, intermediate: T, long: T) -> T {
        match self.input {
            Input::Short => short,
            Input::Intermediate => intermediate,
            Input::Long => long,
        }
    }
}

/// Picks the `quick` parameters, or computes the `full` ones from the BenchErl scale.
pub(crate) fn params<T>(size: Size, quick: T, full: impl FnOnce(Scale) -> T) -> T {
    match size {
        Size::Quick => quick,
        Size::Full => full(Scale::full()),
    }
}

/// Messages counted by the actors themselves: each adds the messages it sent when it stops. Read
/// it after `run_until_idle`, once every actor has stopped.
pub(crate) type Tally = Arc<AtomicU64>;

/// Appends the parameters of the run to its check text (it ends up in the result record).
pub(crate) fn noting(mut measured: Measured, params: impl std::fmt::Debug) -> Measured {
    measured.check = format!("{} with {params:?}", measured.check);
    measured
}

/// The BenchErl benchmarks, in Francesquini's order (Table 5.3).
pub fn all() -> Vec<Bench> {
    vec![
        bang::BENCH,
        big::BENCH,
        ehb::BENCH,
        orbit_int::BENCH,
        serialmsg::BENCH,
        timer_wheel::BENCH,
        timer_wheel::BENCH_TIMEOUTS,
    ]
}

/// The benchmark's "master" process: collects a known number of reports, answers the driver with
/// them, and stops.
pub(crate) struct Collector<T> {
    expected: usize,
    got: Vec<T>,
    done: Option<ReplyTo<Vec<T>>>,
}

pub(crate) enum CollectMsg<T> {
    /// From the driver, before anything can report.
    Arm {
        expected: usize,
        done: ReplyTo<Vec<T>>,
    },
    Report(T),
}

impl<T> Collector<T> {
    pub(crate) fn new() -> Self {
        Collector {
            expected: usize::MAX,
            got: Vec::new(),
            done: None,
        }
    }
}

impl<T: Send + 'static> Actor for Collector<T> {
    type Msg = CollectMsg<T>;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: CollectMsg<T>) {
        match msg {
            CollectMsg::Arm { expected, done } => {
                self.expected = expected;
                self.got.reserve(expected);
                self.done = Some(done);
            }
            CollectMsg::Report(report) => self.got.push(report),
        }
        if self.got.len() >= self.expected {
            if let Some(done) = self.done.take() {
                done.send(std::mem::take(&mut self.got));
            }
            ctx.stop();
        }
    }
}

/// A counted run of a port at BenchErl's short and intermediate inputs for one core: it verifies,
/// and the messages the actors counted equal BenchErl's count for those parameters.
#[cfg(test)]
pub(crate) fn assert_counted_runs_match_bencherl<P: Copy + std::fmt::Debug>(
    of_scale: fn(Scale) -> P,
    measure: fn(&loka::System, &crate::Run, P) -> crate::Measured,
    bencherl_messages: fn(P) -> u64,
) {
    for input in [Input::Short, Input::Intermediate] {
        let p = of_scale(Scale { input, cores: 1 });
        let system = loka::System::builder().workers(2).build().unwrap();
        let m = measure(&system, &crate::Run::new(crate::Size::Quick), p);
        assert!(m.verified, "{}", m.check);
        assert_eq!(m.messages, bencherl_messages(p), "{input:?}");
    }
}
