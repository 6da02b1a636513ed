//! `exec = "auto"`: catching an actor that blocks a worker, and promoting it to `thread`.
//!
//! A handler that blocks (a sleep, a blocking read, a lock held elsewhere) keeps its worker from
//! every other actor — the mistake users of every actor runtime make. Under `auto` each
//! activation on a worker is timed (two clock reads); one that takes at least [`LONG`] makes the
//! actor a suspect, and the suspect's next activation also reads the thread's CPU time. If that
//! one is long again and spent less than a quarter of its wall time on the CPU, the actor was
//! waiting, not computing: it is promoted to `thread`, and from its next wake-up on it runs on a
//! thread of its own, where blocking stalls nobody. A compute-heavy actor is long but on the CPU:
//! it stays a task, its suspicion cleared. Two long activations are needed, so an actor that
//! blocks once is not promoted.
//!
//! Preemption also makes wall time exceed CPU time: on an overloaded machine a compute-bound
//! actor's activation is long and mostly off the CPU too. What tells the two apart is why the
//! thread was off the CPU: a handler that blocks gives its CPU up (a *voluntary* context switch,
//! counted by the kernel per thread), one that is preempted has it taken (an involuntary one). So
//! the suspect activation also counts the thread's voluntary switches, and an actor is promoted
//! only if it made at least one. (Without that rule, a test's compute-bound actor was promoted
//! on a machine loaded by other jobs.)

use super::super::{Exec, RunOutcome, TaskRef};
use crate::exec_policy::ExecPolicy;
use std::time::{Duration, Instant};

/// An activation this long is worth a closer look: far above any message's cost (a message
/// costs tens of nanoseconds to microseconds; a full 128-message activation of a 5 µs handler
/// stays under 1 ms) and far below what a user notices as a stall.
pub(crate) const LONG: Duration = Duration::from_millis(2);

/// The stall guard's monitor saw one activation of `task` asleep in the kernel for at least
/// [`LONG`] (`docs/stalls.md`): the first time the actor becomes a suspect, the second time (the
/// suspicion not cleared meanwhile) it is promoted to `thread`. Returns whether it was promoted.
/// Only for a `task` actor; the caller holds its schedule (the activation just ended).
pub(crate) fn note_blocked(task: TaskRef, exec: &Exec) -> bool {
    let slot = &task.header().exec;
    if slot.policy() != ExecPolicy::Task {
        return false;
    }
    if !slot.flag(super::SUSPECT) {
        slot.set_flag(super::SUSPECT, true);
        tracing::debug!(actor = %task.header().id, "actor blocked a worker once: a suspect");
        return false;
    }
    slot.set_flag(super::SUSPECT, false);
    promote(task, exec);
    tracing::debug!(actor = %task.header().id, "actor blocked a worker twice: promoted to its own thread");
    true
}

/// Makes `task` a `thread` actor, counted (`promoted_to_thread`): its next wake-up goes to a
/// thread of its own. The caller holds its schedule.
fn promote(task: TaskRef, exec: &Exec) {
    task.header().exec.set_policy(ExecPolicy::Thread);
    exec.runtime()
        .shared
        .counters
        .system
        .promoted_to_thread
        .add_shared(1);
}

/// The part of a long activation that must be off the CPU for it to count as blocking.
pub(crate) const OFF_CPU_SHARE: u32 = 4;

/// Runs one activation of `task` on a worker, timed; returns its outcome, whether the actor was
/// promoted to `thread` (then a `Requeue`/`Waiting` outcome must go to its thread), and its wall
/// time.
///
/// # Safety
/// As [`TaskRef::run`]: the caller holds the schedule.
pub(crate) unsafe fn run_watched(task: TaskRef, exec: &Exec) -> (RunOutcome, bool, Duration) {
    let slot = &task.header().exec;
    let suspect = slot.flag(super::SUSPECT);
    let cpu_before = if suspect { thread_cpu() } else { None };
    let yields_before = if suspect { voluntary_switches() } else { None };
    let start = Instant::now();
    // SAFETY: forwarded contract.
    let outcome = unsafe { task.run(exec) };
    let wall = start.elapsed();
    if outcome == RunOutcome::Stopped || slot.policy() != ExecPolicy::Task {
        // Gone (the slot may be freed), or not a task any more.
        return (outcome, false, wall);
    }
    if wall < LONG {
        if suspect {
            slot.set_flag(super::SUSPECT, false);
        }
        return (outcome, false, wall);
    }
    let Some(cpu_before) = cpu_before else {
        slot.set_flag(super::SUSPECT, true);
        return (outcome, false, wall);
    };
    slot.set_flag(super::SUSPECT, false);
    let cpu = thread_cpu().map_or(wall, |after| after.saturating_sub(cpu_before));
    // Where the count is not available, off-CPU time alone decides (preemption included).
    let gave_up_the_cpu = match (yields_before, voluntary_switches()) {
        (Some(before), Some(after)) => after > before,
        _ => true,
    };
    if cpu * OFF_CPU_SHARE < wall && gave_up_the_cpu {
        promote(task, exec);
        tracing::debug!(actor = %task.header().id, ?wall, ?cpu, "actor blocked a worker: promoted to its own thread");
        return (outcome, true, wall);
    }
    (outcome, false, wall)
}

/// CPU time this thread has used (`None` where the clock is not available).
fn thread_cpu() -> Option<Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` writes one `timespec` to the valid pointer it is given.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

/// Voluntary context switches this thread has made: times it gave its CPU up by blocking
/// (`None` where the count is not available).
fn voluntary_switches() -> Option<i64> {
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `getrusage` writes one `rusage` to the valid pointer it is given.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    (rc == 0).then_some(usage.ru_nvcsw as i64)
}
