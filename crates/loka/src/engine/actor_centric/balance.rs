//! `hierarchical` load balancing (Francesquini Alg. 4.1/4.2 with Erlang's migration limits and
//! paths, App. B; docs/references.md): every `balance_interval` activations a worker computes a
//! round (one at a time), and workers then *pull* actors along the migration paths assigned to
//! them. The arithmetic is pure code in [`crate::policy::balance`].

use super::queues::pop;
use super::worker::Worker;
use super::Engine;
use crate::policy::balance;
use crate::runtime::TaskRef;
use crate::sync::{AtomicBool, AtomicUsize};
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

/// A pull-based migration assignment (Alg. 4.2): take up to `left` actors from `from` (a worker,
/// or with `global` a NUMA node).
#[derive(Default)]
pub(super) struct Migration {
    from: AtomicUsize,
    left: AtomicUsize,
    global: AtomicBool,
}

/// Per-worker work (activations) over the last intervals, for Erlang's availability (Eq. B.3).
pub(super) struct BalanceHistory {
    last_activations: Vec<u64>,
    recent: Vec<[u64; 8]>,
    round: usize,
}

impl BalanceHistory {
    pub(super) fn new(workers: usize) -> Self {
        BalanceHistory {
            last_activations: vec![0; workers],
            recent: vec![[0; 8]; workers],
            round: 0,
        }
    }
}

impl Engine {
    /// Alg. 4.1: computes migration limits and paths, locally for worker `me`'s NUMA node or
    /// globally between nodes when they are out of balance, and hands out pull assignments.
    /// Skipped if another worker is computing a round.
    pub(super) fn balance(&self, me: usize) {
        let Some(mut history) = self.balance.try_lock() else {
            return;
        };
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
        let slot = history.round % 8;
        history.round += 1;
        let history = &mut *history;
        let avg_work: Vec<f64> = (0..self.workers.len())
            .zip(history.last_activations.iter_mut())
            .zip(history.recent.iter_mut())
            .map(|((worker, last), recent)| {
                let now = counters.worker(worker).activations.get();
                recent[slot] = now - *last;
                *last = now;
                recent.iter().sum::<u64>() as f64 / 8.0
            })
            .collect();
        let avail = balance::availability(&out_of_work, &avg_work);
        // Node limits: every node's queues as one (Alg. 4.1 line 7).
        let nodes = layout.node_count();
        let node_len: Vec<usize> = (0..nodes)
            .map(|node| {
                layout
                    .workers_of_node(node)
                    .iter()
                    .map(|&w| lengths[w])
                    .sum()
            })
            .collect();
        let node_avail: Vec<f64> = (0..nodes)
            .map(|node| layout.workers_of_node(node).iter().map(|&w| avail[w]).sum())
            .collect();
        let node_limits = balance::migration_limits(&node_len, &node_avail);
        if nodes > 1
            && balance::needs_global_round(&node_limits, self.shared.config.balance_threshold)
        {
            let d: Vec<i64> = node_len
                .iter()
                .zip(&node_limits)
                .map(|(&len, &lim)| len as i64 - lim as i64)
                .collect();
            for path in balance::migration_paths(&d) {
                let pullers = layout.workers_of_node(path.to);
                let share = path.count.div_ceil(pullers.len().max(1));
                for &w in pullers {
                    self.assign(w, path.from, share, true);
                }
            }
        } else {
            let local = layout.workers_of_node(layout.node_of(me));
            let lens: Vec<usize> = local.iter().map(|&w| lengths[w]).collect();
            let ooo: Vec<bool> = local.iter().map(|&w| out_of_work[w]).collect();
            let work: Vec<f64> = local.iter().map(|&w| avg_work[w]).collect();
            for path in balance::plan(&lens, &ooo, &work) {
                self.assign(local[path.to], local[path.from], path.count, false);
            }
        }
    }

    fn assign(&self, worker: usize, from: usize, count: usize, global: bool) {
        let m = &self.workers[worker].migration;
        m.from.store(from, Relaxed);
        m.global.store(global, Relaxed);
        // Release: a puller that sees `left` sees `from` and `global`.
        m.left.store(count, Release);
        self.notify(Some(worker));
    }

    /// Alg. 4.2: follows `me`'s migration path, if any: one actor per call. A global path takes
    /// actors of `me`'s node home first (Alg. 4.3), then from the longest queue of the source
    /// node; hubs are never taken (they are never in stealable queues).
    pub(super) fn pull_migration(&self, me: &Worker) -> Option<TaskRef> {
        let m = &self.workers[me.index()].migration;
        let left = m.left.load(Acquire);
        if left == 0 {
            return None;
        }
        let from = m.from.load(Relaxed);
        let task = if m.global.load(Relaxed) {
            let layout = &self.shared.machine.layout;
            let my_node = layout.node_of(me.index());
            let members = layout.workers_of_node(from);
            members
                .iter()
                .find_map(|&w| pop(&self.workers[w].queues.foreign[my_node]))
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
