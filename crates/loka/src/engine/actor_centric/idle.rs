//! Parking this engine's idle workers: the protocol is `Sleepers`'s (`engine/sleepers.rs`);
//! this file says what "work" means here.

use super::Engine;
use std::sync::atomic::Ordering::Relaxed;

impl Engine {
    /// Wakes a parked worker (`prefer` first) if any: call after making work visible that only
    /// some workers take (a pinned, foreign or place queue, the stall guard's rescue).
    pub(super) fn notify(&self, prefer: Option<usize>) {
        if let Some(w) = self.sleepers.notify(prefer) {
            self.unpark(w);
        }
    }

    /// Wakes a parked worker (`prefer` first) for work any worker may steal (a deque, an inbox,
    /// an urgent or yielded queue), unless a worker is searching: that one will take it
    /// (`Sleepers::notify_stealable`).
    pub(super) fn notify_stealable(&self, prefer: Option<usize>) {
        if let Some(w) = self.sleepers.notify_stealable(prefer) {
            self.unpark(w);
        }
    }

    /// Wakes worker `w` for work queued for it if it sleeps, else someone as
    /// [`notify_stealable`](Self::notify_stealable) does (`Sleepers::notify_target`).
    pub(super) fn notify_target(&self, w: usize) {
        if let Some(w) = self.sleepers.notify_target(w) {
            self.unpark(w);
        }
    }

    /// A worker stops searching because it found work (or must fire timers, or stop): if it was
    /// the last searcher, work a pusher left to it may still be queued elsewhere, so it hands
    /// the search on to a sleeper (`Sleepers::end_search`).
    pub(super) fn stop_searching(&self) {
        if self.sleepers.end_search() && self.has_visible_work() {
            self.notify_stealable(None);
        }
    }

    /// Whether worker `w` searches for work or sleeps: a hint, stale either way by the time
    /// the caller acts on it (a wrong answer costs a hand-off or some locality, never work:
    /// the push that follows wakes whoever must wake).
    #[inline]
    pub(super) fn is_idle(&self, w: usize) -> bool {
        self.workers[w].idle.load(Relaxed)
    }

    pub(super) fn unpark(&self, w: usize) {
        self.shared.counters.system.unparks.add_shared(1);
        if let Some(thread) = self.workers[w].thread.get() {
            thread.unpark();
        }
    }

    /// Whether any queue holds an actor (next slots excepted: their owners are awake).
    pub(super) fn has_visible_work(&self) -> bool {
        self.workers.iter().any(|w| w.queues.has_work())
            || self.place_queues.iter().any(|q| !q.is_empty())
    }

    /// Parks worker `w` until work arrives, one of its timers is due, or shutdown. Returns at
    /// once if the final re-check finds work: any queue's, or only its own if `auto` retired it
    /// (`gather.rs`: the work queued elsewhere is the active workers', and stealable pushes wake
    /// only them, `Sleepers::active`).
    pub(super) fn park(&self, w: usize) {
        let retired = w >= self.sleepers.active();
        let slept = self.sleepers.park(
            w,
            || {
                if retired {
                    self.workers[w].queues.has_work()
                } else {
                    self.has_visible_work()
                }
            },
            || self.is_shutdown(),
            || self.shared.counters.worker(w).parks.bump(1),
            || self.shared.park_until_timer(w),
        );
        if slept && self.guarded {
            // The monitor may sleep because every worker did (`monitor.rs`).
            self.wake_monitor();
        }
    }

    /// A timer armed in `shard` is due before any other there: its worker, if it sleeps, wakes
    /// and sleeps again until then (`Shared::park_until_timer`). A spurious unpark of a running
    /// worker costs it one extra turn of its parking loop later, nothing more.
    pub(super) fn wake_for_timer(&self, shard: usize) {
        if let Some(thread) = self.workers.get(shard).and_then(|w| w.thread.get()) {
            thread.unpark();
        }
    }
}
