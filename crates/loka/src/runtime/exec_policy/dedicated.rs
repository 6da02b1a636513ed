//! `thread`: an actor with an OS thread of its own (for actors that block: I/O, locks, sleeps).
//!
//! The thread starts at the actor's first hand-over and lives until the actor stops (or the
//! system shuts down). Hand-over protocol, the same schedule rule as every engine: a send that
//! finds the actor idle holds its schedule and calls [`hand_over`], which sets `runnable`
//! (`Release`) and unparks the thread; the thread takes the flag with `swap(false, Acquire)`, runs
//! activations until the actor is idle again (which releases the schedule inside the mailbox),
//! then looks at the flag again before it parks. `std::thread::park` keeps an unpark that came
//! first, so a hand-over between the flag check and the park is never lost.
//!
//! Quiescence: `busy` counts hand-overs whose run has not finished; it rises before the thread
//! is told and falls after the actor went idle, so "no dedicated thread busy" plus "the engine
//! quiescent", observed twice with no hand-over in between, means nothing runs anywhere
//! ([`Threads::settled`], used by `System::run_until_idle`).

use super::super::{Exec, RunOutcome, Runtime, TaskRef};
use super::inline;
use crate::sync::{AtomicBool, AtomicU64, AtomicUsize};
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::Ordering::{Acquire, Release, SeqCst};
use std::sync::Arc;
use std::thread::{JoinHandle, Thread};
use std::time::Instant;

/// One dedicated thread, as its wakers see it.
pub(crate) struct Dedicated {
    handover: HandOver,
    thread: Thread,
}

impl Dedicated {
    /// The state of a dedicated thread whose handle is `thread`.
    pub(crate) fn new(thread: Thread) -> Self {
        Dedicated {
            handover: HandOver::new(),
            thread,
        }
    }
}

/// The hand-over flag between the wakers of a `thread` actor and its thread (module
/// documentation; modelled in `loom_tests.rs`).
pub(crate) struct HandOver {
    /// A hand-over the thread has not taken yet.
    runnable: AtomicBool,
}

impl HandOver {
    pub(crate) fn new() -> Self {
        HandOver {
            runnable: AtomicBool::new(false),
        }
    }

    /// A waker holding the actor's schedule gives it to the thread, then calls `unpark`.
    /// `Release`: what the waker did before (the message it queued) is visible to the thread
    /// that takes the flag.
    pub(crate) fn give(&self, unpark: impl FnOnce()) {
        self.runnable.store(true, Release);
        unpark();
    }

    /// The thread waits for the next hand-over: takes it (`true`), or returns `false` once
    /// `stopping()` says so. `park` may return spuriously; an unpark that came before the park
    /// makes it return at once (std's and loom's token), so a hand-over between the check and
    /// the park is never slept through.
    pub(crate) fn take(&self, stopping: impl Fn() -> bool, park: impl Fn()) -> bool {
        loop {
            // `Acquire`: pairs with `give`'s `Release`. The load first: a flag that is not set
            // costs no write (and loom's model of a bare `swap` misses the waker's store).
            if self.runnable.load(Acquire) && self.runnable.swap(false, Acquire) {
                return true;
            }
            if stopping() {
                return false;
            }
            park();
        }
    }
}

/// Every dedicated thread of one system.
#[derive(Default)]
pub(crate) struct Threads {
    /// Hand-overs whose run has not finished (see the module documentation).
    busy: AtomicUsize,
    /// Hand-overs so far: the quiescence check's epoch.
    handed: AtomicU64,
    threads: Mutex<Vec<(Arc<Dedicated>, JoinHandle<()>)>>,
    /// Signalled when `busy` falls to zero.
    idle_lock: Mutex<()>,
    idle: Condvar,
}

impl Threads {
    /// Whether no dedicated thread has work.
    pub(crate) fn is_idle(&self) -> bool {
        self.busy.load(SeqCst) == 0
    }

    /// Hand-overs so far.
    pub(crate) fn handed(&self) -> u64 {
        self.handed.load(SeqCst)
    }

    /// Waits until no dedicated thread has work, or `deadline`; returns whether that happened.
    pub(crate) fn wait_idle(&self, deadline: Option<Instant>) -> bool {
        let mut guard = self.idle_lock.lock();
        while !self.is_idle() {
            match deadline {
                Some(d) => {
                    if self.idle.wait_until(&mut guard, d).timed_out() {
                        return self.is_idle();
                    }
                }
                None => self.idle.wait(&mut guard),
            }
        }
        true
    }

    /// One run finished.
    fn done_one(&self) {
        if self.busy.fetch_sub(1, SeqCst) == 1 {
            // Take the lock so a waiter between its check and its wait cannot miss this.
            let _guard = self.idle_lock.lock();
            self.idle.notify_all();
        }
    }

    /// Stops every dedicated thread once the system's phase is `STOPPING`: each finishes the
    /// activation it runs (a blocked handler delays this until it returns) and exits; actors
    /// left runnable are terminated by the shutdown that follows. Idempotent.
    pub(crate) fn stop(&self) {
        self.announce_stop();
        loop {
            let threads = std::mem::take(&mut *self.threads.lock());
            if threads.is_empty() {
                break;
            }
            for (dedicated, handle) in threads {
                dedicated.thread.unpark();
                let _ = handle.join();
            }
        }
    }

    /// Wakes every parked dedicated thread, without waiting for it, once the system's phase is
    /// `STOPPING`: each sees the phase (its only stop signal, `stopping`) and exits after the
    /// activation it runs. A prompt shutdown wakes them before it waits for the workers, so that
    /// a parked one does not wait for the join to hear of it.
    pub(crate) fn announce_stop(&self) {
        for (dedicated, _) in self.threads.lock().iter() {
            dedicated.thread.unpark();
        }
    }
}

/// Whether the system of `runtime` is shutting down past its graceful part: dedicated threads
/// then run no further activation and no hand-over starts one. The phase is the one signal: a
/// shutdown sets it before it tells anyone, so a thread between two activations never runs its
/// actor's queued messages after it (a second flag, set a moment later, once let a preempted
/// shutdown's dedicated threads go on: 138 messages handled where at most 40 were running).
fn stopping(runtime: &Runtime) -> bool {
    runtime.shared.lifecycle.phase() >= crate::runtime::lifecycle::STOPPING
}

/// Hands the runnable `task` (a `thread` actor; the caller holds its schedule) to its thread,
/// starting the thread on the first hand-over.
pub(crate) fn hand_over(runtime: &Arc<Runtime>, task: TaskRef) {
    let threads = &runtime.shared.dedicated;
    if stopping(runtime) {
        // Shutting down: the actor stays runnable; the shutdown terminates it.
        return;
    }
    threads.handed.fetch_add(1, SeqCst);
    threads.busy.fetch_add(1, SeqCst);
    let slot = &task.header().exec;
    match slot.thread() {
        Some(dedicated) => dedicated.handover.give(|| dedicated.thread.unpark()),
        None => start(runtime, task),
    }
}

/// Starts the dedicated thread of `task`, which holds its schedule from the start.
fn start(runtime: &Arc<Runtime>, task: TaskRef) {
    let threads = &runtime.shared.dedicated;
    let for_thread = Arc::clone(runtime);
    let id = task.header().id;
    // The thread needs its own `Dedicated`, which needs the thread's handle: hand it over
    // through a one-shot slot filled before the thread may park.
    let (tx, rx) = std::sync::mpsc::sync_channel::<Arc<Dedicated>>(1);
    let handle = std::thread::Builder::new()
        .name(format!("loka-actor-{id}"))
        .spawn(move || {
            super::super::lifecycle::mark_thread(Arc::as_ptr(&for_thread.shared));
            let me = rx.recv().expect("the starter sends the thread its state");
            run(&for_thread, task, &me);
        })
        .expect("spawning a dedicated actor thread");
    let dedicated = Arc::new(Dedicated::new(handle.thread().clone()));
    task.header().exec.publish_thread(Arc::clone(&dedicated));
    runtime
        .shared
        .counters
        .system
        .dedicated_threads
        .add_shared(1);
    threads
        .threads
        .lock()
        .push((Arc::clone(&dedicated), handle));
    tx.send(dedicated)
        .expect("the dedicated thread waits for its state");
}

/// The dedicated thread: run the actor while it has work, then wait for the next hand-over.
fn run(runtime: &Arc<Runtime>, task: TaskRef, me: &Dedicated) {
    let exec = Exec::dedicated(Arc::clone(runtime));
    let _current = inline::enter_thread(&exec);
    let threads = &runtime.shared.dedicated;
    loop {
        // We hold the schedule.
        let stopped = loop {
            if stopping(runtime) {
                return;
            }
            // SAFETY: the hand-over gave this thread the schedule, and the actor is alive
            // (a scheduled actor cannot have terminated).
            match unsafe { task.run(&exec) } {
                RunOutcome::Idle => break false,
                RunOutcome::Stopped => break true,
                // Nobody else shares this thread: go on with the next batch.
                RunOutcome::Requeue => {}
                // A sender was preempted mid-send: let it finish.
                RunOutcome::Waiting => std::thread::yield_now(),
                RunOutcome::Drained => unreachable!("`run` never answers `Drained`"),
            }
        };
        threads.done_one();
        if stopped {
            return;
        }
        if !me.handover.take(|| stopping(runtime), std::thread::park) {
            return;
        }
    }
}
