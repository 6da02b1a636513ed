//! A worker's stretches of user code: the stall guard's bracket around an activation and a
//! handler's wake-ups (the protocol: `stall.rs`, docs/stalls.md), what the worker does when the
//! monitor saw an activation block (promotion to `thread`), and the timed activations of
//! `exec = "auto"` (`runtime/exec_policy/blocking.rs`, `online.rs`). The worker loop and the
//! order of its queues are in `worker/`.

use super::worker::Worker;
use crate::runtime::exec_policy::{blocking, dedicated, online};
use crate::runtime::{RunOutcome, TaskRef};

impl Worker {
    /// [`Self::push_next`] for a handler's second wake-up in one activation: out of user code
    /// for the slots' update, so that no rescuer takes them meanwhile, and back in (`stall.rs`).
    /// The pending wake-up goes to the next slot first, then this one, as they came. Out of
    /// line: one wake-up per activation (a ring, a ping-pong pair) never comes here.
    #[inline(never)]
    pub(super) fn push_next_from_handler(&self, task: TaskRef, state: u64) {
        let watch = self.watch();
        let blocked = watch.leave_user(state);
        for task in [watch.take_pending(), Some(task)].into_iter().flatten() {
            if let Some(displaced) = watch.replace_next(task) {
                self.push_head(displaced);
            }
        }
        self.pending_set.set(false);
        watch.enter_user(state);
        if blocked {
            // The handler blocked before this send: the activation's end reports it.
            watch.note_blocked_again();
        }
    }

    /// Whether the stall guard runs.
    #[inline]
    pub(super) fn guarded(&self) -> bool {
        self.guarded
    }

    /// This worker's stall watch.
    #[inline]
    pub(super) fn watch(&self) -> &super::stall::StallWatch {
        // SAFETY: `watch` points into `self.engine.workers`, a boxed slice that is never resized
        // or replaced and lives as long as the engine, which `self.engine` keeps alive.
        unsafe { &*self.watch }
    }

    /// User code starts: a new activation (`stall.rs`); nothing without the stall guard. Returns
    /// the activation's word for [`Self::leave_user`].
    #[inline]
    pub(super) fn enter_user(&self) -> u64 {
        if !self.guarded {
            return 0;
        }
        // A new word per activation: a rescuer that sees the same word twice has seen one
        // activation last that long (a word naming the actor repeated across a ping-pong pair's
        // activations, and rescues tore the pair every few ms).
        let word = self.stretch.get().wrapping_add(2);
        self.stretch.set(word);
        self.watch().enter_user(word);
        word
    }

    /// User code is over (`stall.rs`): returns whether the monitor saw it block.
    #[inline]
    pub(super) fn leave_user(&self, word: u64) -> bool {
        self.guarded && self.end_user(self.watch(), word)
    }

    /// [`Self::leave_user`] under the guard: a wake-up a handler left pending goes to the next
    /// slot now.
    #[inline(always)]
    pub(super) fn end_user(&self, watch: &super::stall::StallWatch, word: u64) -> bool {
        let blocked = watch.leave_user(word);
        if self.pending_set.get() {
            self.pending_set.set(false);
            if let Some(task) = watch.take_pending() {
                if let Some(displaced) = watch.replace_next(task) {
                    self.push_head(displaced);
                }
            }
        }
        blocked
    }

    /// [`Self::run_task`] under `exec = "auto"` (out of line: timed activations).
    #[inline(never)]
    pub(super) fn run_task_auto(&self, task: TaskRef) {
        let word = self.enter_user();
        let outcome = self.run_auto(task);
        let blocked = self.leave_user(word);
        match outcome {
            // Promoted to `thread` with work left: its own thread goes on with it.
            None => dedicated::hand_over(self.exec.runtime(), task),
            Some(outcome) if blocked => self.after_blocked(task, outcome),
            Some(outcome) => self.finish(task, outcome),
        }
    }

    /// An activation the monitor saw block: [`Self::note_blocked`], then the outcome's due.
    #[cold]
    #[inline(never)]
    pub(super) fn after_blocked(&self, task: TaskRef, outcome: RunOutcome) {
        if let Some(outcome) = self.note_blocked(task, outcome) {
            self.finish(task, outcome);
        }
    }

    /// The monitor saw the activation that just ended block in the kernel for longer than
    /// [`blocking::LONG`] (`docs/stalls.md`): the second time, the actor moves to a thread of its
    /// own. `None`: it did, and its thread has taken its work over.
    #[cold]
    #[inline(never)]
    fn note_blocked(&self, task: TaskRef, outcome: RunOutcome) -> Option<RunOutcome> {
        // A stopped actor may be freed already: not touched.
        if outcome == RunOutcome::Stopped
            || !self.promote
            || !blocking::note_blocked(task, &self.exec)
        {
            return Some(outcome);
        }
        match outcome {
            RunOutcome::Requeue | RunOutcome::Waiting => {
                dedicated::hand_over(self.exec.runtime(), task);
                None
            }
            RunOutcome::Drained => {
                // SAFETY: a drained actor's schedule is this worker's until its hold ends here.
                if !unsafe { task.release() } {
                    dedicated::hand_over(self.exec.runtime(), task);
                }
                None
            }
            RunOutcome::Idle | RunOutcome::Stopped => Some(outcome),
        }
    }

    /// An activation under `exec = "auto"`: timed to catch blocking (`blocking.rs`), and measured
    /// while the actor's characteristics are still unknown (`online.rs`). `None`: the actor was
    /// promoted to `thread` and still has work, which its thread must take over.
    fn run_auto(&self, task: TaskRef) -> Option<RunOutcome> {
        let watched = task.header().exec.is_watched();
        let id = task.header().id;
        let counters = self.counters();
        let own = |c: &crate::telemetry::WorkerCounters| c.messages.get() - c.inline_messages.get();
        let (messages, wakes) = (own(counters), self.wakes());
        // SAFETY: the task came out of a run queue (or the next slot) of this system, so this
        // worker holds its schedule.
        let (outcome, promoted, wall) = unsafe { blocking::run_watched(task, &self.exec) };
        if promoted {
            return match outcome {
                RunOutcome::Requeue | RunOutcome::Waiting => None,
                other => Some(other),
            };
        }
        if watched && outcome != RunOutcome::Stopped {
            // Its own messages: those its sends ran inline are the receivers'.
            let handled = own(counters) - messages;
            let caused = self.wakes() - wakes;
            let measured = self.online.borrow_mut().observe(id, handled, caused, wall);
            if let Some(characteristics) = measured {
                let slot = &task.header().exec;
                slot.unwatch();
                let policy = online::policy(&characteristics);
                if policy != crate::exec_policy::ExecPolicy::Task {
                    slot.set_policy(policy);
                    let system = &self.engine().shared.counters.system;
                    system.mapped_online.add_shared(1);
                    tracing::debug!(actor = %id, ?characteristics, %policy, "execution policy measured and mapped");
                    if policy == crate::exec_policy::ExecPolicy::Thread
                        && matches!(outcome, RunOutcome::Requeue | RunOutcome::Waiting)
                    {
                        return None;
                    }
                }
            }
        }
        Some(outcome)
    }

    /// Wake-ups this worker's activations caused so far: actors routed from here, and actors run
    /// inline here.
    fn wakes(&self) -> u64 {
        u64::from(self.sample_tick.get()) + self.counters().inline_runs.get()
    }
}
