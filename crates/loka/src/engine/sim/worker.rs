//! A virtual worker: the queues of a real worker (next slot, deque, inbox, yielded, urgent,
//! pinned, foreign), a virtual clock, and the policy's victim choice and random source. Only the driver
//! thread touches them, under the engine's state lock.

use crate::engine::choices::{inbox_first, Victims, INBOX_CHECK_INTERVAL, NEXT_SLOT_STREAK_LIMIT};
use crate::policy::cls::Cls;
use crate::runtime::TaskRef;
use std::collections::VecDeque;

/// Where [`VirtualWorker::pop_first`] or [`VirtualWorker::pop_local`] found an actor.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Picked {
    /// The next slot (a `lifo_runs` activation).
    NextSlot,
    /// A neighbour's inbox (an `inbox_helps` activation).
    PeerInbox,
    /// One of the worker's own queues.
    Queue,
}

pub(super) struct VirtualWorker {
    /// Virtual nanoseconds: when this worker is next free.
    pub(super) clock: u64,
    /// Until when this worker cannot look at its queues: the end of the activation it last
    /// started, or of the wake-up it is on its way back from. A thief of another node leaves a
    /// searching worker's one queued actor to it (`choices::steal_once`).
    pub(super) busy_until: u64,
    /// Parked: out of work with nothing to steal; a push to it (or any push, for the first
    /// parked worker found) wakes it after the wake-up latency.
    pub(super) parked: bool,
    /// Until when an idle worker still polls (the real worker's spin and yield phases): work
    /// that arrives before then is picked up without the wake-up latency of a parked thread.
    pub(super) polling_until: u64,
    /// Unparked while still polling, to look at stealable work, and has run nothing since: if
    /// it finds nothing it goes back to the polling window it was in (`polling_until`, left as
    /// it was), as a real searcher keeps spinning (not a new park, not a new window).
    pub(super) resumed_poll: bool,
    /// Children this worker gave a home in turn over its node (`hierarchical`, the real worker's
    /// `home_turn`).
    pub(super) home_turn: usize,
    pub(super) next: Option<TaskRef>,
    pub(super) next_streak: u32,
    /// The owner's end is the back (LIFO, as crossbeam's `new_lifo`); thieves take the front.
    pub(super) deque: VecDeque<TaskRef>,
    pub(super) inbox: VecDeque<TaskRef>,
    /// Actors that used their budget while others waited (the real worker's `yielded`).
    pub(super) yielded: VecDeque<TaskRef>,
    pub(super) urgent: VecDeque<TaskRef>,
    pub(super) pinned: VecDeque<TaskRef>,
    pub(super) foreign: Vec<VecDeque<TaskRef>>,
    pub(super) tick: u32,
    pub(super) victims: Victims,
    pub(super) cls: Cls,
    pub(super) rng: fastrand::Rng,
    /// Group level of each other worker as seen from this one (for steals-by-level).
    pub(super) level_of: Vec<u8>,
    /// The workers whose inboxes this one looks at before re-running a yielded actor (the real
    /// worker's `helped`: its innermost victim group under `cls` and `lgs`, nobody otherwise).
    pub(super) helped: Vec<usize>,
    /// Which of `helped` is looked at next.
    pub(super) help_turn: usize,
    /// `hierarchical`: activations since this worker's last balancing round.
    pub(super) since_balance: u32,
    /// `hierarchical`: this worker looked for work elsewhere since the last round.
    pub(super) out_of_work: bool,
    /// `hierarchical`: the pull assignment a balancing round gave this worker.
    pub(super) migration: Option<super::balance::Migration>,
}

impl VirtualWorker {
    /// The real worker's `has_fresh_work`: an actor waits here that has not had its turn (the
    /// next slot, the deque, the inbox, urgent wake-ups, pinned hubs; not the yielded actors nor
    /// the foreign queues).
    pub(super) fn has_fresh_work(&self) -> bool {
        self.next.is_some()
            || !self.deque.is_empty()
            || !self.inbox.is_empty()
            || !self.urgent.is_empty()
            || !self.pinned.is_empty()
    }

    /// Whether anything is queued here, next slot included.
    pub(super) fn has_local_work(&self) -> bool {
        self.has_fresh_work()
            || !self.yielded.is_empty()
            || self.foreign.iter().any(|q| !q.is_empty())
            || self.migration.is_some()
    }

    /// What a thief could take (the real engine's `WorkerQueues::steal`: urgent, inbox, yielded,
    /// deque).
    pub(super) fn stealable(&self) -> usize {
        self.thieves_queues().iter().map(|q| q.len()).sum()
    }

    /// The queues a thief takes from, in its order: urgent, the inbox (oldest first), the yielded
    /// actors, then the deque's far end (the real engine's `WorkerQueues::steal`).
    fn thieves_queues(&self) -> [&VecDeque<TaskRef>; 4] {
        [&self.urgent, &self.inbox, &self.yielded, &self.deque]
    }

    /// The real engine's `WorkerQueues::stealable_len` (longest-queue victim choice).
    pub(super) fn stealable_len(&self) -> usize {
        self.deque.len() + self.inbox.len() + self.yielded.len()
    }

    /// Whether anything besides the next slot waits in the queues the real worker tests before
    /// keeping an actor in its next slot (deque, inbox, yielded).
    pub(super) fn others_wait(&self) -> bool {
        !self.deque.is_empty() || !self.inbox.is_empty() || !self.yielded.is_empty()
    }

    /// One actor for a thief, from the first of [`Self::thieves_queues`] that holds one.
    pub(super) fn steal(&mut self) -> Option<TaskRef> {
        [
            &mut self.urgent,
            &mut self.inbox,
            &mut self.yielded,
            &mut self.deque,
        ]
        .into_iter()
        .find_map(VecDeque::pop_front)
    }

    /// Whether this worker searches for work at virtual time `at`, as the real worker's idle
    /// flag and sleeper state say: parked, only while it still polls (spins, yields); awake,
    /// when neither an activation nor a wake-up holds it and it has no local work of its own
    /// (its next slot, its deque: only it pushes there), with which the real worker never
    /// searches.
    pub(super) fn searches_at(&self, at: u64) -> bool {
        if self.parked {
            at <= self.polling_until
        } else {
            self.busy_until <= at && self.next.is_none() && self.deque.is_empty()
        }
    }

    /// What [`Self::steal`] would take, left where it is.
    pub(super) fn steal_peek(&self) -> Option<TaskRef> {
        self.thieves_queues()
            .into_iter()
            .find_map(VecDeque::front)
            .copied()
    }

    /// The neighbour whose inbox [`Self::pop_local`] would look at (the driver lends it).
    pub(super) fn helped_next(&self) -> Option<usize> {
        self.helped.get(self.help_turn).copied()
    }

    /// The first local work in the real worker's order: urgent head pushes (LGS-DFS), the
    /// periodic look at the inbox and the yielded actors every `INBOX_CHECK_INTERVAL`
    /// activations (taking turns at going first; then, behind pinned hubs, the next slot and the
    /// deque, which the hubs would starve otherwise), the pinned hubs. The driver follows a
    /// `hierarchical` migration path next, then [`Self::pop_local`].
    pub(super) fn pop_first(&mut self) -> Option<(TaskRef, Picked)> {
        if let Some(t) = self.urgent.pop_front() {
            return Some((t, Picked::Queue));
        }
        self.tick = self.tick.wrapping_add(1);
        if self.tick % INBOX_CHECK_INTERVAL == 0 {
            let found = if inbox_first(self.tick) {
                self.inbox.pop_front().or_else(|| self.yielded.pop_front())
            } else {
                self.yielded.pop_front().or_else(|| self.inbox.pop_front())
            };
            if let Some(t) = found {
                return Some((t, Picked::Queue));
            }
            if !self.pinned.is_empty() {
                if let Some(t) = self.next.take() {
                    return Some((t, Picked::NextSlot));
                }
                if let Some(t) = self.deque.pop_back() {
                    return Some((t, Picked::Queue));
                }
            }
        }
        // A hub pushed for a time after this worker's clock (its sender's activation was
        // simulated whole before this worker reached that time) is not there yet: a real
        // worker would run what it has now instead of waiting for the hub, which runs first
        // once it has come (docs/decisions/0107-sim-a-worker-does-not-wait-for-a-hub.md).
        let hub_arrives = self.pinned.front().map(runnable_at)?;
        if hub_arrives > self.clock && self.has_present_work() {
            return None;
        }
        self.pinned.pop_front().map(|t| (t, Picked::Queue))
    }

    /// Whether its next slot, deque or inbox holds an actor it could run at its clock.
    fn has_present_work(&self) -> bool {
        let now = |t: &TaskRef| runnable_at(t) <= self.clock;
        self.next.as_ref().is_some_and(now)
            || self.deque.back().is_some_and(now)
            || self.inbox.front().is_some_and(now)
    }

    /// The rest of the local work, after [`Self::pop_first`]: the next slot (with its streak
    /// limit), the deque's head, the inbox, the yielded actors, foreign actors. `peer_inbox`: the
    /// inbox of [`Self::helped_next`], looked at before a yielded actor runs again, as the real
    /// worker's `peer_inbox` does.
    pub(super) fn pop_local(
        &mut self,
        peer_inbox: Option<&mut VecDeque<TaskRef>>,
    ) -> Option<(TaskRef, Picked)> {
        if let Some(t) = self.next.take() {
            if self.next_streak < NEXT_SLOT_STREAK_LIMIT || !self.others_wait() {
                self.next_streak += 1;
                return Some((t, Picked::NextSlot));
            }
            self.next_streak = 0;
            self.yielded.push_back(t);
        } else {
            self.next_streak = 0;
        }
        if let Some(t) = self.deque.pop_back().or_else(|| self.inbox.pop_front()) {
            return Some((t, Picked::Queue));
        }
        if !self.yielded.is_empty() && !self.helped.is_empty() {
            self.help_turn = (self.help_turn + 1) % self.helped.len();
            if let Some(t) = peer_inbox.and_then(VecDeque::pop_front) {
                return Some((t, Picked::PeerInbox));
            }
        }
        self.yielded
            .pop_front()
            .or_else(|| self.foreign.iter_mut().find_map(|q| q.pop_front()))
            .map(|t| (t, Picked::Queue))
    }

    /// Drops every queued pointer (shutdown: the runtime stops the actors afterwards).
    pub(super) fn clear(&mut self) {
        self.next = None;
        self.deque.clear();
        self.inbox.clear();
        self.yielded.clear();
        self.urgent.clear();
        self.pinned.clear();
        self.foreign.iter_mut().for_each(VecDeque::clear);
        self.migration = None;
    }
}

/// The virtual time from which a queued actor may run: its push's stamp (the engine stamps every
/// push, `sim/routing.rs`), 0 when unstamped.
pub(super) fn runnable_at(task: &TaskRef) -> u64 {
    crate::engine::placement::of(task)
        .enqueued_at
        .load(std::sync::atomic::Ordering::Relaxed)
        .saturating_sub(1)
}
