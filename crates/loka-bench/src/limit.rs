//! A run's time limit ([`crate::Run::timeout`]), counted so that a slow host does not fail a run.
//!
//! Why not plain wall time: under the simulation engine the whole run is the driver thread's CPU
//! work, and a host whose other work starves the process (a `nice -n 19` run beside a loaded
//! machine got a few percent of a core for minutes) made a simulation that needs 0.3 s of CPU miss
//! a 60 s wall-clock limit: the run reported "no result within 60s", then finished unharmed (its
//! virtual time was that of every other run). A simulation that is not quiescent is always using
//! CPU (its driver steps), and a lost message makes it quiescent, which the waiter sees at once;
//! so, under the simulation, the limit is on the CPU time the process used, with a wall-clock cap
//! ten times the limit for a run that waits on something that uses none. Under the real engines a
//! lost message leaves threads idle, using no CPU, so there the limit stays wall time.

use std::time::{Duration, Instant};

/// CPU time used by this process so far, all threads (`None` where it cannot be read).
fn process_cpu() -> Option<Duration> {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` writes one `timespec` to the valid pointer it is given.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    (rc == 0).then(|| Duration::new(t.tv_sec as u64, t.tv_nsec as u32))
}

/// How long a waiter may still wait for a run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limit {
    timeout: Duration,
    /// Wall-clock deadline: the limit (real engines) or its cap (simulation); `None` when that
    /// is past the end of the clock (a `timeout` of `Duration::MAX`, `--timeout
    /// 18446744073709551615`): no wall-clock limit, where `Instant + timeout` panicked.
    deadline: Option<Instant>,
    /// Under the simulation: the process's CPU time when the wait began.
    cpu_start: Option<Duration>,
}

/// The wall-clock cap of a simulated run, in multiples of its limit.
const SIM_WALL_FACTOR: u32 = 10;

impl Limit {
    /// The limit of a run of `timeout` on `system`, starting now.
    pub(crate) fn start(system: &loka::System, timeout: Duration) -> Limit {
        let simulated = !system.config().engine.is_real();
        let cpu_start = if simulated { process_cpu() } else { None };
        let wall = match cpu_start {
            Some(_) => timeout.saturating_mul(SIM_WALL_FACTOR),
            None => timeout,
        };
        Limit {
            timeout,
            deadline: Instant::now().checked_add(wall),
            cpu_start,
        }
    }

    /// Whether the run is out of time.
    pub(crate) fn passed(&self) -> bool {
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return true;
        }
        match (self.cpu_start, process_cpu()) {
            (Some(start), Some(now)) => now.saturating_sub(start) >= self.timeout,
            _ => false,
        }
    }

    /// The longest a waiter may still block in one go (the wall-clock deadline; `Duration::MAX`
    /// with none).
    pub(crate) fn remaining_wall(&self) -> Duration {
        self.deadline.map_or(Duration::MAX, |d| {
            d.saturating_duration_since(Instant::now())
        })
    }

    /// What the error says the limit was.
    pub(crate) fn describe(&self) -> String {
        match self.cpu_start {
            Some(_) => format!(
                "{:?} of CPU time (simulation; or {:?} of wall time)",
                self.timeout,
                self.timeout.saturating_mul(SIM_WALL_FACTOR)
            ),
            None => format!("{:?}", self.timeout),
        }
    }
}

// Tests: `tests/run_limits.rs`, a test binary of its own: the simulation's limit counts the CPU
// time of the whole process, and other tests running beside it in one process use CPU.
