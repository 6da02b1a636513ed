//! `hierarchical`'s periodic load balancing on virtual workers, as the actor-centric engine does
//! it (`actor_centric/balance.rs`; Francesquini Alg. 4.1/4.2 with Erlang's migration limits and
//! paths): every `balance_interval` activations a worker computes a round, which hands out pull
//! assignments; an assigned worker then takes actors along its path before any other local work
//! but its pinned hubs. The arithmetic is the same pure code ([`crate::policy::balance`]).

use super::{Engine, State};
use crate::engine::balance_round;
use crate::policy::balance;
use crate::runtime::TaskRef;

/// A pull assignment (Alg. 4.2): take up to `left` actors from `from` (a worker, or with
/// `global` a NUMA node of the layout) while `from` holds more than `from_limit` stealable
/// actors and the puller (its node, with `global`) fewer than `to_limit`
/// ([`balance::should_pull`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Migration {
    pub(super) from: usize,
    pub(super) left: usize,
    pub(super) global: bool,
    pub(super) from_limit: usize,
    pub(super) to_limit: usize,
}

impl Engine {
    /// Counts an activation of worker `w` and, every `balance_interval` of them, computes a
    /// balancing round (only under `hierarchical`, only on engines that balance).
    pub(super) fn maybe_balance(&self, st: &mut State, w: usize) {
        let interval = self.shared.config.balance_interval;
        if interval == 0 {
            return;
        }
        let worker = &mut st.workers[w];
        worker.since_balance += 1;
        if u64::from(worker.since_balance) >= interval {
            // Every worker's count restarts, as in the real engine (the interval is the system's).
            for worker in &mut st.workers {
                worker.since_balance = 0;
            }
            self.balance(st, w);
        }
    }

    /// Alg. 4.1 from worker `me`: migration limits and paths, locally for `me`'s node or globally
    /// between nodes when they are out of balance; pull assignments to the workers named.
    fn balance(&self, st: &mut State, me: usize) {
        let counters = &self.shared.counters;
        counters.worker(me).balance_rounds.bump(1);
        let layout = &self.shared.machine.layout;
        let lengths: Vec<usize> = st.workers.iter().map(|w| w.stealable_len()).collect();
        // As the real engine's flag: set when a worker starts looking for work elsewhere, cleared
        // by each round (a worker parked since the previous round counts as busy with no work).
        let out_of_work: Vec<bool> = st
            .workers
            .iter_mut()
            .map(|w| std::mem::take(&mut w.out_of_work))
            .collect();
        let avg_work = st
            .balance
            .average_work(|w| counters.worker(w).activations.get());
        let threshold = self.shared.config.balance_threshold;
        let assignments =
            balance_round::plan_round(layout, me, &lengths, &out_of_work, &avg_work, threshold);
        for a in assignments {
            let w = a.to;
            st.workers[w].migration = Some(Migration {
                from: a.from,
                left: a.count,
                global: a.global,
                from_limit: a.from_limit,
                to_limit: a.to_limit,
            });
            // No wake-up, as in the real engine: the source's pushes woke whom they had to.
        }
    }

    /// Alg. 4.2: one actor along worker `me`'s migration path, if any, and the worker it came
    /// from. A global path takes actors of `me`'s node home first (Alg. 4.3), then from the
    /// longest queue of the source node; hubs are never taken (never in stealable queues).
    pub(super) fn pull_migration(&self, st: &mut State, me: usize) -> Option<(TaskRef, usize)> {
        let m = st.workers[me].migration?;
        let layout = &self.shared.machine.layout;
        let my_node = layout.node_of(me);
        let queued = |w: usize| -> usize {
            if m.global {
                let members = layout.workers_of_node(w);
                members.iter().map(|&v| st.workers[v].stealable_len()).sum()
            } else {
                st.workers[w].stealable_len()
            }
        };
        let own = if m.global { my_node } else { me };
        if !balance::should_pull(queued(m.from), m.from_limit, queued(own), m.to_limit) {
            // The imbalance this path answered is gone: the path is done (Erlang's immigrate).
            st.workers[me].migration = None;
            return None;
        }
        let found = if m.global {
            let members = layout.workers_of_node(m.from);
            members
                .iter()
                .find_map(|&w| st.workers[w].foreign[my_node].pop_front().map(|t| (t, w)))
                .or_else(|| {
                    let v = members
                        .iter()
                        .map(|&w| (st.workers[w].stealable_len(), w))
                        .filter(|&(len, _)| len > 0)
                        .max()
                        .map(|(_, w)| w)?;
                    st.workers[v].steal().map(|t| (t, v))
                })
        } else {
            st.workers[m.from].steal().map(|t| (t, m.from))
        };
        match found {
            Some(found) => {
                st.workers[me].migration = (m.left > 1).then_some(Migration {
                    left: m.left - 1,
                    ..m
                });
                self.shared.counters.worker(me).balance_migrations.bump(1);
                Some(found)
            }
            None => {
                // Nothing left to take: the path is done (Alg. 4.2 line 7).
                st.workers[me].migration = None;
                None
            }
        }
    }
}
