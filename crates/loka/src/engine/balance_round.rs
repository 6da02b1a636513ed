//! One round of `hierarchical`'s periodic load balancing (Francesquini Alg. 4.1 with Erlang's
//! migration limits and paths, App. B; docs/references.md), computed the same way by every
//! engine that balances: the actor-centric engine on real workers (`actor_centric/balance.rs`)
//! and the simulation on virtual ones (`sim/balance.rs`). The engines differ only in how they
//! read their queues and hand the assignments out; the arithmetic is pure code in
//! [`crate::policy::balance`].

use crate::policy::balance;
use loka_topology::WorkerLayout;

/// Rounds of history behind a worker's average work (Eq. B.3).
const HISTORY: usize = 8;

/// Per-worker work (activations) over the last rounds, for Erlang's availability (Eq. B.3).
pub(crate) struct BalanceHistory {
    last_activations: Vec<u64>,
    recent: Vec<[u64; HISTORY]>,
    round: usize,
}

impl BalanceHistory {
    pub(crate) fn new(workers: usize) -> Self {
        BalanceHistory {
            last_activations: vec![0; workers],
            recent: vec![[0; HISTORY]; workers],
            round: 0,
        }
    }

    /// Records this round's activations of each worker (`activations(w)`: its running total)
    /// and returns each worker's average work per round over the last rounds.
    pub(crate) fn average_work(&mut self, activations: impl Fn(usize) -> u64) -> Vec<f64> {
        let slot = self.round % HISTORY;
        self.round += 1;
        self.last_activations
            .iter_mut()
            .zip(self.recent.iter_mut())
            .enumerate()
            .map(|(worker, (last, recent))| {
                let now = activations(worker);
                recent[slot] = now - *last;
                *last = now;
                recent.iter().sum::<u64>() as f64 / HISTORY as f64
            })
            .collect()
    }
}

/// A pull assignment (Alg. 4.2): worker `to` takes up to `count` actors from `from`, a worker, or
/// with `global` a NUMA node of the layout, while `from` stays above `from_limit` actors and
/// `to` (its node, with `global`) below `to_limit` ([`balance::should_pull`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Assignment {
    pub(crate) to: usize,
    pub(crate) from: usize,
    pub(crate) count: usize,
    pub(crate) global: bool,
    pub(crate) from_limit: usize,
    pub(crate) to_limit: usize,
}

/// Alg. 4.1 from worker `me`: migration limits and paths between NUMA nodes when they are out of
/// balance by more than `threshold`, else within `me`'s node; the pull assignments, in the order
/// the engines hand them out. `lengths`: each worker's stealable actors; `out_of_work`: whether
/// it looked for work elsewhere since the last round; `avg_work`: from
/// [`BalanceHistory::average_work`].
pub(crate) fn plan_round(
    layout: &WorkerLayout,
    me: usize,
    lengths: &[usize],
    out_of_work: &[bool],
    avg_work: &[f64],
    threshold: f64,
) -> Vec<Assignment> {
    let avail = balance::availability(out_of_work, avg_work);
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
    let mut assignments = Vec::new();
    if nodes > 1 && balance::needs_global_round(&node_limits, threshold) {
        let d: Vec<i64> = node_len
            .iter()
            .zip(&node_limits)
            .map(|(&len, &lim)| len as i64 - lim as i64)
            .collect();
        for path in balance::migration_paths(&d) {
            let pullers = layout.workers_of_node(path.to);
            let share = path.count.div_ceil(pullers.len().max(1));
            assignments.extend(pullers.iter().map(|&w| Assignment {
                to: w,
                from: path.from,
                count: share,
                global: true,
                from_limit: node_limits[path.from],
                to_limit: node_limits[path.to],
            }));
        }
    } else {
        let local = layout.workers_of_node(layout.node_of(me));
        let lens: Vec<usize> = local.iter().map(|&w| lengths[w]).collect();
        let ooo: Vec<bool> = local.iter().map(|&w| out_of_work[w]).collect();
        let work: Vec<f64> = local.iter().map(|&w| avg_work[w]).collect();
        let limits = balance::limits(&lens, &ooo, &work);
        assignments.extend(
            balance::plan(&lens, &limits)
                .into_iter()
                .map(|path| Assignment {
                    to: local[path.to],
                    from: local[path.from],
                    count: path.count,
                    global: false,
                    from_limit: limits[path.from],
                    to_limit: limits[path.to],
                }),
        );
    }
    assignments
}
