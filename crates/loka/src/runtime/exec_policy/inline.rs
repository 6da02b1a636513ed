//! `monitor` and `seq`: an idle actor runs on the thread of the send that woke it, inside the
//! sender's handler, instead of waiting in a queue for a worker (Panini's MONITOR: "the sender's
//! thread runs the handler under the actor's lock when it is free, else the message queues").
//!
//! loka's "lock" is the mailbox's schedule: the send that finds the actor idle holds it, so an
//! inline run can never overlap another run of the same actor, and a send to an actor that is
//! running anywhere (on a worker, on a dedicated thread, or further down this thread's inline
//! chain) only queues the message. Three limits:
//!
//! * only threads that run activations of this system (its workers and dedicated threads) run
//!   actors inline; a plain thread's send queues as for `task`;
//! * the inline chain on one thread is at most [`MAX_DEPTH`] runs deep (each run is a stack
//!   frame of its handler): deeper, the actor is queued (`inline_depth_fallbacks`);
//! * an inline run handles one activation's budget; messages left then are queued for a worker.
//!
//! A *cycle* — an inline run sending to an actor further down the same chain, which is busy by
//! construction — is counted (`monitor_cycles`), and its message falls back to the `task` path:
//! queued, handled by that actor's running activation once the chain unwinds, never by
//! re-entering its handler. (A send back to the chain's outermost actor, the worker's own
//! activation, is plain request/response and not counted.)

use super::super::{budget, Exec, RunOutcome, Runtime, TaskRef};
use crate::exec_policy::ExecPolicy;
use std::cell::Cell;
use std::ptr;
// atomic outside sync.rs: the `static` tag counter needs a `const fn new` (loom atomics have
// none); it hands out thread tags and is part of no protocol a loom model checks.
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

/// The deepest inline chain on one thread. Each level is one handler's stack frames on top of
/// the sender's; 8 levels cover every pattern of the Panini set (at most 2) with room, and keep
/// a runaway chain of small actors far from the 2 MiB worker stacks.
pub(crate) const MAX_DEPTH: usize = 8;

thread_local! {
    /// The execution context of the worker or dedicated thread running here (null elsewhere).
    static CURRENT: Cell<*const Exec> = const { Cell::new(ptr::null()) };
    /// Inline runs in progress on this thread.
    static DEPTH: Cell<usize> = const { Cell::new(0) };
    /// The actors of those runs, outermost first (addresses of their headers).
    static CHAIN: Cell<[usize; MAX_DEPTH]> = const { Cell::new([0; MAX_DEPTH]) };
    /// This thread's tag for `seq` ownership (0: not yet given).
    static TAG: Cell<u32> = const { Cell::new(0) };
}

/// Tags handed out so far.
static TAGS: AtomicU32 = AtomicU32::new(0);

/// Marks this thread as running activations with `exec` until the guard drops.
pub(crate) fn enter_thread(exec: &Exec) -> CurrentGuard {
    CURRENT.with(|c| c.set(exec));
    CurrentGuard(())
}

/// Clears the thread's execution context when dropped.
pub(crate) struct CurrentGuard(());

impl Drop for CurrentGuard {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(ptr::null()));
    }
}

/// Whether an inline run is in progress on this thread (one thread-local read: called on every
/// send that finds its receiver busy).
#[inline]
pub(crate) fn running_inline() -> bool {
    DEPTH.with(|d| d.get() > 0)
}

/// A send from an inline run found `task` busy: if `task` is further down this thread's chain,
/// the send closed a cycle (module documentation).
#[cold]
pub(crate) fn note_queued(runtime: &Runtime, task: TaskRef) {
    let depth = DEPTH.with(Cell::get);
    let chain = CHAIN.with(Cell::get);
    let addr = task.as_ptr().as_ptr() as usize;
    // The top of the chain is the running actor itself (a send to itself is no cycle).
    if chain[..depth.saturating_sub(1)].contains(&addr) {
        runtime.shared.counters.system.monitor_cycles.add_shared(1);
    }
}

fn thread_tag() -> u32 {
    TAG.with(|t| {
        if t.get() == 0 {
            t.set(TAGS.fetch_add(1, Relaxed).wrapping_add(1).max(1));
        }
        t.get()
    })
}

/// Runs the runnable `task` (a `monitor` or `seq` actor; the caller holds its schedule) here,
/// inline, or hands it to the engine when this thread cannot (module documentation).
pub(crate) fn run_or_queue(runtime: &Arc<Runtime>, task: TaskRef, policy: ExecPolicy) {
    let exec = CURRENT.with(Cell::get);
    // SAFETY: `CURRENT` points to the execution context of the worker or dedicated thread
    // running on this thread, set for the whole time it runs activations (`enter_thread`).
    let exec = (!exec.is_null()).then(|| unsafe { &*exec });
    let Some(exec) = exec.filter(|e| Arc::ptr_eq(&e.runtime().shared, &runtime.shared)) else {
        // A plain thread, or another system's thread.
        return runtime.tasks().schedule_woken(task);
    };
    let slot = &task.header().exec;
    if policy == ExecPolicy::Seq {
        let me = thread_tag();
        let owner = slot.owner.load(Relaxed);
        if owner == 0 {
            slot.owner.store(me, Relaxed);
        } else if owner != me {
            // A second thread wakes it: it has no single owner; the schedule keeps it safe
            // either way, and `monitor` says so.
            slot.set_policy(ExecPolicy::Monitor);
            runtime.shared.counters.system.seq_demotions.add_shared(1);
        }
    }
    let depth = DEPTH.with(Cell::get);
    if depth >= MAX_DEPTH {
        exec.counters().inline_depth_fallbacks.bump(1);
        return runtime.tasks().schedule_woken(task);
    }
    CHAIN.with(|c| {
        let mut chain = c.get();
        chain[depth] = task.as_ptr().as_ptr() as usize;
        c.set(chain);
    });
    DEPTH.with(|d| d.set(depth + 1));
    let counters = exec.counters();
    counters.inline_runs.bump(1);
    let messages = counters.messages.get();
    // The inline run has a budget of its own; the interrupted activation goes on with its own
    // (`runtime/budget.rs`).
    let callers_budget = budget::left();
    // SAFETY: the caller holds the schedule (it made the actor runnable), and a scheduled actor
    // is alive.
    let outcome = unsafe { task.run(exec) };
    budget::start(callers_budget);
    DEPTH.with(|d| d.set(depth));
    if depth == 0 {
        // Messages handled inline (nested runs included, counted once, at the outermost run):
        // `auto`'s measurement takes them off the sender's own.
        counters
            .inline_messages
            .bump(counters.messages.get().wrapping_sub(messages));
    }
    match outcome {
        RunOutcome::Idle | RunOutcome::Stopped => {}
        // Still scheduled, with messages left: a worker goes on with it.
        RunOutcome::Requeue | RunOutcome::Waiting => runtime.tasks().schedule_woken(task),
        RunOutcome::Drained => unreachable!("`run` never answers `Drained`"),
    }
}
