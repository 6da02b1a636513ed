//! Parking this engine's idle workers and waking them: the protocol is `Sleepers`'s
//! (`engine/sleepers.rs`); this file says what "work" means here and who is woken.
//!
//! A post wakes only its queue's owner, if it sleeps (`notify_owner`); a pass that meets a
//! backlog wakes a thief (`wake_a_thief`); a worker about to park re-checks its own queues and
//! wakes the sleeping holders of others (`recheck_before_parking`); a worker that parks while
//! another is awake watches it (`park` with a period, docs/decisions/0043-idle-worker-parks-and-watches.md).

use super::Engine;
use std::sync::atomic::Ordering::{Acquire, SeqCst};
use std::time::Duration;

impl Engine {
    /// A letter arrived in a queue whose owner (hint) is `owner`: wakes that worker if it is
    /// parked, and nobody else. An awake owner will gulp the letter itself (waking another worker
    /// only to have it race the owner is what made every post pay a futex wake-up: 527 parks
    /// and wake-ups per 2 M messages of static send). If the hint is stale and the queue's real
    /// owner sleeps, the next worker to try parking sees the letter in its re-check and wakes
    /// that owner ([`recheck_before_parking`](Self::recheck_before_parking)); if every worker
    /// sleeps, the hint names a sleeper.
    pub(super) fn notify_owner(&self, owner: usize) {
        if self.sleepers.claim_one(owner) {
            self.unpark_claimed(owner);
            self.ensure_a_watcher(owner);
        }
    }

    /// Unparks worker `w`, which a notifier has just claimed, and counts the wake-up.
    fn unpark_claimed(&self, w: usize) {
        self.shared.counters.system.unparks.add_shared(1);
        self.unpark(w);
    }

    /// Unparks worker `w`'s thread (once it has started).
    fn unpark(&self, w: usize) {
        if let Some(thread) = self.threads_of[w].get() {
            thread.unpark();
        }
    }

    /// `woken` was just claimed. If nobody parks with a watch period (`park`) because every
    /// worker slept, nudges one sleeper (an unpark, not a claim: it stays in its parking
    /// protocol). It looks again, sees a worker awake, and parks with a period, so letters
    /// that reach `woken`'s other queues while it is stuck in a handler are not left
    /// waiting. A sleeper that parked with no period did so when every worker slept; its
    /// decrement of `watchers` and its look at the sleeper count are both SeqCst, as are our
    /// claim and our load here, so either it sees `woken` awake or we see no watcher. Only
    /// on the way from an idle system to a busy one: one load when a watcher exists.
    fn ensure_a_watcher(&self, woken: usize) {
        if !self.can_steal || self.watchers.load(SeqCst) != 0 {
            return;
        }
        let n = self.workers();
        // A hint, read without the queue lock `is_asleep_locked` asks for: a sleeper claimed
        // meanwhile is awake, and parks with a period once idle (a worker is awake).
        let sleeper = (1..n)
            .map(|k| (woken + k) % n)
            .find(|&w| self.sleepers.is_asleep_locked(w));
        if let Some(w) = sleeper {
            self.unpark(w);
        }
    }

    /// Wakes one parked worker, if any, to steal from `from`'s backlog (a fence and a load when
    /// nobody sleeps).
    pub(super) fn wake_a_thief(&self, from: usize) {
        if let Some(w) = self.sleepers.notify(Some((from + 1) % self.workers())) {
            self.unpark_claimed(w);
        }
    }

    /// The parking re-check of worker `me`: whether a queue in its own range holds a letter.
    /// Every queue is read under its lock, which orders the look with posts (module docs).
    ///
    /// A letter in another worker's range is that worker's to take, not a reason for `me` to stay
    /// up: an awake holder gulps it on its next pass, or sees it in its own re-check before it
    /// parks. Counting such letters as work kept idle workers spinning beside a message that
    /// was never theirs: with one letter always in flight (pingpong, threadring) every idle
    /// worker's re-check saw it, and on 16 cores their steal attempts on the busy worker's queue
    /// lines cut pingpong at 4 workers from 11 to 1.2 M msgs/s (docs/message-centric.md).
    ///
    /// A holder that sleeps is woken here. Posts wake a queue's owner *hint*, which a steal can
    /// leave stale (pointing at an awake worker while the queue sits in a sleeper's range); that
    /// awake worker re-checks this way before it parks, so the letter reaches its holder.
    fn recheck_before_parking(&self, me: usize) -> bool {
        let mut mine = false;
        for (v, range) in self.ranges.iter().enumerate() {
            let holds = self.slots[range.clone()].iter().any(|slot| {
                let q = slot.load(Acquire);
                // SAFETY: non-null slots point into `self.queues`. A null slot is being swapped
                // by a thief, which is awake and takes the queue into its own range.
                !q.is_null() && unsafe { &*q }.has_letters_locked()
            });
            if !holds {
                continue;
            }
            if v == me {
                mine = true;
            } else {
                self.notify_owner(v);
            }
        }
        mine
    }

    /// Whether any queue holds a letter, each read under its lock (quiescence).
    pub(super) fn has_letters(&self) -> bool {
        self.queues.iter().any(|q| q.has_letters_locked())
    }

    /// Parks worker `w` until a letter arrives for it, one of its timers is due, shutdown, or,
    /// with `watch`, that long has passed. Returns whether the watch period ran out: the worker
    /// should then look at the other workers' queues (`Worker::steal` with `everywhere`) and park again.
    ///
    /// Why a watch: posts wake only a queue's owner, and an awake owner is not woken. An owner
    /// stuck in a long handler therefore holds every letter that arrives in its other queues
    /// until the handler returns, unless some worker that is awake steals them, and idle workers
    /// park. A worker that parks with a watch wakes now and then to look for such letters, and
    /// steals a queue whose letters have waited since its last look. A worker woken while
    /// every other one sleeps with no period nudges one of them into a period
    /// (`ensure_a_watcher`).
    pub(super) fn park(&self, w: usize, watch: Option<Duration>) -> bool {
        let look = std::cell::Cell::new(false);
        self.sleepers.park(
            w,
            || self.recheck_before_parking(w),
            || self.is_shutdown(),
            || self.shared.counters.worker(w).parks.bump(1),
            // Only while another worker is awake: when all sleep, none can be stuck, and a
            // quiescent system must not poll (the watch then parks on without a period).
            || match watch {
                Some(cap) if !self.sleepers.all_asleep() => {
                    self.watchers.fetch_add(1, SeqCst);
                    let (timer, elapsed) = self.shared.park_until_timer_within(w, Some(cap));
                    self.watchers.fetch_sub(1, SeqCst);
                    let look_due = elapsed && !self.sleepers.all_asleep();
                    look.set(look_due);
                    timer || look_due
                }
                _ => self.shared.park_until_timer(w),
            },
        );
        look.get()
    }

    /// Blocks until every worker is parked, no queue holds a letter and no one-shot timer is
    /// pending (docs/timers.md), or `timeout` passes.
    pub(crate) fn wait_quiescent(&self, timeout: Option<Duration>) -> bool {
        self.sleepers.wait_quiescent(
            // Timers first (Acquire): a timer counted out has made its send visible; and none
            // armed while the queues were looked at.
            || self.shared.timers.no_pending_once(|| !self.has_letters()),
            timeout,
        )
    }
}
