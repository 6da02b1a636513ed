//! `hierarchical` load balancing (Francesquini Alg. 4.1/4.2 with Erlang's migration limits and
//! paths, App. B; docs/references.md): every `balance_interval` activations a worker computes a
//! round (one at a time), and workers then *pull* actors along the migration paths assigned to
//! them. The arithmetic is pure code in [`crate::policy::balance`].

use super::worker::Worker;
use super::Engine;
use crate::engine::balance_round;
use crate::policy::balance;
use crate::runtime::TaskRef;
use crate::sync::{AtomicBool, AtomicUsize};
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

/// A pull-based migration assignment (Alg. 4.2): take up to `left` actors from `from` (a worker,
/// or with `global` a NUMA node) while `from` holds more than `from_limit` stealable actors and
/// the puller (its node, with `global`) fewer than `to_limit` ([`balance::should_pull`]).
#[derive(Default)]
pub(super) struct Migration {
    from: AtomicUsize,
    left: AtomicUsize,
    global: AtomicBool,
    from_limit: AtomicUsize,
    to_limit: AtomicUsize,
}

impl Engine {
    /// Alg. 4.1: computes migration limits and paths, locally for worker `me`'s NUMA node or
    /// globally between nodes when they are out of balance, and hands out pull assignments.
    /// `counted_from`: the round (`balance_epoch`) after which `me` counted its interval.
    /// Skipped if another worker is computing a round, or has run one since: two workers that
    /// reach the interval together (equally busy, their counts restarted by the same round)
    /// would otherwise run two rounds for one interval (`tests/balance_interval.rs` saw 80
    /// rounds where one per interval of the busiest worker allows 67).
    pub(super) fn balance(&self, me: usize, counted_from: usize) {
        let Some(mut history) = self.balance.try_lock() else {
            return;
        };
        // The epoch only moves under this lock: exact.
        if self.balance_epoch.load(Relaxed) != counted_from {
            return;
        }
        // Every worker's count restarts (`Worker::count_towards_balance`).
        self.balance_epoch.fetch_add(1, Relaxed);
        let counters = &self.shared.counters;
        counters.worker(me).balance_rounds.bump(1);
        let layout = &self.shared.machine.layout;
        let lengths: Vec<usize> = self
            .workers
            .iter()
            .map(|w| w.queues.stealable_len())
            .collect();
        let out_of_work: Vec<bool> = self
            .workers
            .iter()
            .map(|w| w.out_of_work.swap(false, Relaxed))
            .collect();
        let avg_work = history.average_work(|w| counters.worker(w).activations.get());
        let threshold = self.shared.config.balance_threshold;
        for a in balance_round::plan_round(layout, me, &lengths, &out_of_work, &avg_work, threshold)
        {
            self.assign(a);
        }
    }

    fn assign(&self, a: balance_round::Assignment) {
        let m = &self.workers[a.to].migration;
        m.from.store(a.from, Relaxed);
        m.global.store(a.global, Relaxed);
        m.from_limit.store(a.from_limit, Relaxed);
        m.to_limit.store(a.to_limit, Relaxed);
        // Release: a puller that sees `left` sees the fields above. No wake-up: a path leads
        // from a queue of stealable actors, whose push already woke a sleeper if nobody was
        // searching; waking the puller on top of that woke a parked worker at every round
        // only for it to spin (chameneos at 16 workers: 5,000 parks against `cls`'s 400, at
        // 0.4x its rate; docs/decisions/0079-balancing-pulls-while-it-helps.md).
        m.left.store(a.count, Release);
    }

    /// Stealable actors of worker `w`, or with `node` of every worker of node `w`.
    fn queued(&self, w: usize, node: bool) -> usize {
        if node {
            let layout = &self.shared.machine.layout;
            layout
                .workers_of_node(w)
                .iter()
                .map(|&v| self.workers[v].queues.stealable_len())
                .sum()
        } else {
            self.workers[w].queues.stealable_len()
        }
    }

    /// Alg. 4.2: follows `me`'s migration path, if any: one actor per call. A global path takes
    /// actors of `me`'s node home first (Alg. 4.3), then from the longest queue of the source
    /// node; hubs are never taken (they are never in stealable queues). Inlined up to the test
    /// for a path, which every activation under `hierarchical` makes: as a call it cost 28
    /// instructions an activation of pingpong.
    #[inline]
    pub(super) fn pull_migration(&self, me: &Worker) -> Option<TaskRef> {
        let m = &self.workers[me.index()].migration;
        let left = m.left.load(Acquire);
        if left == 0 {
            return None;
        }
        self.follow_migration(me, m, left)
    }

    #[inline(never)]
    fn follow_migration(&self, me: &Worker, m: &Migration, left: usize) -> Option<TaskRef> {
        let from = m.from.load(Relaxed);
        let global = m.global.load(Relaxed);
        let layout = &self.shared.machine.layout;
        let my_node = layout.node_of(me.index());
        let own = if global { my_node } else { me.index() };
        if !balance::should_pull(
            self.queued(from, global),
            m.from_limit.load(Relaxed),
            self.queued(own, global),
            m.to_limit.load(Relaxed),
        ) {
            // The imbalance this path answered is gone: the path is done (Erlang's immigrate).
            m.left.store(0, Relaxed);
            return None;
        }
        let task = if global {
            let members = layout.workers_of_node(from);
            members
                .iter()
                .find_map(|&w| {
                    self.workers[w]
                        .queues
                        .pop_foreign_of(my_node, &self.foreign_waiting)
                })
                .or_else(|| {
                    self.longest_of(members)
                        .and_then(|w| self.workers[w].queues.steal())
                })
        } else {
            self.workers[from].queues.steal()
        };
        match task {
            Some(task) => {
                m.left.store(left - 1, Relaxed);
                me.counters().balance_migrations.bump(1);
                Some(task)
            }
            None => {
                // Nothing left to take: the path is done (Alg. 4.2 line 7).
                m.left.store(0, Relaxed);
                None
            }
        }
    }

    /// Notes that worker `w` ran out of work in this interval.
    pub(super) fn note_out_of_work(&self, w: usize) {
        let flag = &self.workers[w].out_of_work;
        if !flag.load(Relaxed) {
            flag.store(true, Relaxed);
        }
    }

    /// The worker among `workers` with the most stealable work.
    pub(super) fn longest_of(&self, workers: &[usize]) -> Option<usize> {
        workers
            .iter()
            .map(|&w| (self.workers[w].queues.stealable_len(), w))
            .filter(|&(len, _)| len > 0)
            .max()
            .map(|(_, w)| w)
    }
}
