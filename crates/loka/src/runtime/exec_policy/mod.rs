//! Execution policies carried out (what they mean: [`crate::exec_policy`], docs/exec-policies.md).
//!
//! | file | concern |
//! |---|---|
//! | this file | the per-actor slot in every task header, and the wake-up dispatch |
//! | `dedicated.rs` | `thread`: a dedicated OS thread per actor, its hand-over protocol, quiescence and shutdown |
//! | `inline.rs` | `monitor` and `seq`: running an idle actor on the sending thread, the depth cap, cycles |
//! | `blocking.rs` | `exec = "auto"`: catching an actor that blocks a worker, and promoting it to `thread` |
//! | `online.rs` | `exec = "auto"`: the characteristics of an undeclared actor, measured, and its policy mapped |
//!
//! Every policy keeps the mailbox protocol: whoever makes an actor runnable (the send that finds
//! it idle) holds its *schedule* and is the only one who may run it or hand it on. A `task` actor
//! is handed to the engine, a `thread` actor to its thread, a `monitor` actor is run right here
//! (or handed to the engine). So one handler at a time, FIFO per sender and no loss hold for
//! every policy exactly as they do for the engine's workers.

pub(crate) mod blocking;
pub(crate) mod dedicated;
pub(crate) mod inline;
#[cfg(all(test, loom))]
mod loom_tests;
pub(crate) mod online;

use super::{Runtime, TaskRef};
use crate::exec_policy::ExecPolicy;
use crate::sync::{AtomicPtr, AtomicU32, AtomicU8, ReadMut};
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::Arc;

/// The execution state of one actor, in its task header.
///
/// `policy` is written at spawn (before the task is shared), by a promotion (by the holder of the
/// schedule) and by a `seq` demotion; a sender that reads a stale value only routes one wake-up
/// the old way, which every policy handles. `thread` is published once, by the holder of the
/// schedule, with `Release`; readers `Acquire` it.
pub(crate) struct ExecSlot {
    policy: AtomicU8,
    /// `blocking.rs`: the last activation was long; measure the next one's CPU time
    /// (`SUSPECT`); `online.rs`: the actor declared nothing and its policy is still to be
    /// measured (`WATCHED`).
    flags: AtomicU8,
    /// `seq`: the tag of the thread that first woke the actor (0: none yet).
    owner: AtomicU32,
    /// `thread`: the dedicated thread (an `Arc` leaked into the slot, released on drop).
    thread: AtomicPtr<dedicated::Dedicated>,
}

impl ExecSlot {
    pub(crate) fn new() -> Self {
        ExecSlot {
            policy: AtomicU8::new(0),
            flags: AtomicU8::new(0),
            owner: AtomicU32::new(0),
            thread: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// Sets the policy chosen at spawn; `watched`: measure the actor and map it online.
    pub(crate) fn init(&self, policy: ExecPolicy, watched: bool) {
        self.policy.store(policy.to_u8(), Relaxed);
        self.flags.store(if watched { WATCHED } else { 0 }, Relaxed);
    }

    fn flag(&self, flag: u8) -> bool {
        self.flags.load(Relaxed) & flag != 0
    }

    /// Sets or clears a flag (only the holder of the schedule writes the flags).
    fn set_flag(&self, flag: u8, on: bool) {
        let old = self.flags.load(Relaxed);
        let new = if on { old | flag } else { old & !flag };
        if new != old {
            self.flags.store(new, Relaxed);
        }
    }

    /// Whether the actor's characteristics are still being measured (`online.rs`).
    pub(crate) fn is_watched(&self) -> bool {
        self.flag(WATCHED)
    }

    /// The measurement is over.
    pub(crate) fn unwatch(&self) {
        self.set_flag(WATCHED, false);
    }

    /// The actor's policy now.
    #[inline]
    pub(crate) fn policy(&self) -> ExecPolicy {
        ExecPolicy::from_u8(self.policy.load(Relaxed))
    }

    pub(crate) fn set_policy(&self, policy: ExecPolicy) {
        self.policy.store(policy.to_u8(), Relaxed);
    }

    /// The dedicated thread, once started.
    fn thread(&self) -> Option<&dedicated::Dedicated> {
        let p = self.thread.load(Acquire);
        // SAFETY: a non-null pointer came from `Arc::into_raw` in `publish_thread` and the slot
        // keeps that reference until it is dropped, which outlives `&self`.
        (!p.is_null()).then(|| unsafe { &*p })
    }

    /// Publishes the dedicated thread (once; by the holder of the schedule).
    fn publish_thread(&self, thread: Arc<dedicated::Dedicated>) {
        let old = self.thread.swap(Arc::into_raw(thread).cast_mut(), Release);
        debug_assert!(old.is_null(), "a thread actor gets one dedicated thread");
    }
}

/// `ExecSlot::flags`: the last activation was long (`blocking.rs`).
const SUSPECT: u8 = 1;
/// `ExecSlot::flags`: measured online (`online.rs`).
const WATCHED: u8 = 2;

impl Drop for ExecSlot {
    fn drop(&mut self) {
        let p = self.thread.read_mut();
        if !p.is_null() {
            // SAFETY: the pointer came from `Arc::into_raw` and is released once, here.
            drop(unsafe { Arc::from_raw(p) });
        }
    }
}

/// Hands a runnable actor whose policy is not `task` to whoever runs it. The caller holds the
/// actor's schedule.
/// Out of line: `Runtime::wake` stays one load and a branch for `task` actors.
#[inline(never)]
pub(crate) fn wake(runtime: &Arc<Runtime>, task: TaskRef, policy: ExecPolicy) {
    match policy {
        ExecPolicy::Thread => dedicated::hand_over(runtime, task),
        ExecPolicy::Monitor | ExecPolicy::Seq => inline::run_or_queue(runtime, task, policy),
        ExecPolicy::Task => runtime.tasks().schedule_woken(task),
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::dedicated::{Dedicated, HandOver};
    use super::*;

    #[test]
    fn the_slot_keeps_its_thread_state_alive_and_releases_it_once() {
        let dedicated = Arc::new(Dedicated::new(std::thread::current()));
        let slot = ExecSlot::new();
        assert!(slot.thread().is_none());
        slot.publish_thread(Arc::clone(&dedicated));
        assert_eq!(Arc::strong_count(&dedicated), 2);
        assert!(std::ptr::eq(slot.thread().unwrap(), &*dedicated));
        drop(slot);
        assert_eq!(Arc::strong_count(&dedicated), 1);
    }

    #[test]
    fn policies_round_trip_through_the_slot() {
        let slot = ExecSlot::new();
        assert_eq!(slot.policy(), ExecPolicy::Task);
        for p in ExecPolicy::ALL {
            slot.set_policy(p);
            assert_eq!(slot.policy(), p);
        }
        slot.init(ExecPolicy::Task, true);
        assert!(slot.is_watched());
        slot.set_flag(SUSPECT, true);
        slot.unwatch();
        assert!(!slot.is_watched() && slot.flag(SUSPECT));
    }

    #[test]
    fn a_hand_over_is_taken_once_and_stopping_ends_the_wait() {
        let h = HandOver::new();
        let unparked = std::cell::Cell::new(0);
        h.give(|| unparked.set(unparked.get() + 1));
        assert_eq!(unparked.get(), 1);
        assert!(h.take(|| false, || panic!("no park: the flag is set")));
        let parks = std::cell::Cell::new(0);
        assert!(!h.take(|| parks.get() > 0, || parks.set(parks.get() + 1)));
        assert_eq!(parks.get(), 1);
    }
}
