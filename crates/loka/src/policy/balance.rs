//! Periodic load balancing of `hierarchical` (Francesquini Alg. 4.1/4.2, Erlang's rules of App. B),
//! as pure functions over queue statistics.
//!
//! loka has one actor priority and no ports, so App. B's equations reduce to:
//! * availability (B.5): 1 for a worker that ran out of work in the interval, else its share of
//!   the historic average work (activations) of the fully busy workers, scaled by their number;
//! * migration limit (B.6): `round(Σ_j MaxRQSize_j × Avail_i / Σ_k Avail_k)`;
//! * migration paths (B.2): `D_i = MaxRQSize_i − MigLim_i`; the queue with the largest `D` emigrates
//!   to the one with the smallest, the second largest to the second smallest, and so on; queues left
//!   over are then associated in reverse order (Figure B.1).
//! * global or local round (Alg. 4.1): a global round when `(max − min) / min` over the node limits
//!   exceeds the threshold, else a local round inside the node.
//!
//! Migration is pull-based: a path `from → to` means worker `to` takes up to `count` actors from
//! `from` (Alg. 4.2), before running its own work.

/// Availability of each queue (Eq. B.5, one priority).
pub fn availability(out_of_work: &[bool], avg_work: &[f64]) -> Vec<f64> {
    let full: Vec<usize> = (0..out_of_work.len())
        .filter(|&i| !out_of_work[i])
        .collect();
    let full_sum: f64 = full.iter().map(|&i| avg_work[i]).sum();
    (0..out_of_work.len())
        .map(|i| {
            if out_of_work[i] {
                1.0
            } else if full_sum > 0.0 {
                full.len() as f64 * avg_work[i] / full_sum
            } else {
                0.0
            }
        })
        .collect()
}

/// Migration limits (Eq. B.6): the actors of all queues shared out in proportion to availability.
pub fn migration_limits(max_queue: &[usize], avail: &[f64]) -> Vec<usize> {
    let total: usize = max_queue.iter().sum();
    let avail_sum: f64 = avail.iter().sum();
    avail
        .iter()
        .map(|a| {
            if avail_sum > 0.0 {
                (total as f64 * a / avail_sum).round() as usize
            } else {
                total / avail.len().max(1)
            }
        })
        .collect()
}

/// One migration path: `to` pulls up to `count` actors from `from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Path {
    /// The emigrating queue.
    pub from: usize,
    /// The immigrating queue (the worker that pulls).
    pub to: usize,
    /// How many actors `to` may pull.
    pub count: usize,
}

/// Migration paths (App. B.2) from the queues' `D = MaxRQSize − MigLim` values.
pub fn migration_paths(d: &[i64]) -> Vec<Path> {
    let mut over: Vec<usize> = (0..d.len()).filter(|&i| d[i] > 0).collect();
    let mut under: Vec<usize> = (0..d.len()).filter(|&i| d[i] < 0).collect();
    // Largest surplus first; largest deficit (most negative) first.
    over.sort_by_key(|&i| (std::cmp::Reverse(d[i]), i));
    under.sort_by_key(|&i| (d[i], i));
    let mut paths = Vec::new();
    // Phase 1: pair them up in order.
    for (&from, &to) in over.iter().zip(&under) {
        paths.push(Path {
            from,
            to,
            count: d[from].min(-d[to]) as usize,
        });
    }
    // Phase 2: the leftovers are associated in reverse order with the other side.
    // (Nothing to pair with when one side is empty, e.g. D = [0, -1] after rounding.)
    let paired = over.len().min(under.len());
    if under.len() > paired && !over.is_empty() {
        for (k, &to) in under[paired..].iter().enumerate() {
            let from = over[over.len() - 1 - k % over.len()];
            paths.push(Path {
                from,
                to,
                count: (-d[to]) as usize,
            });
        }
    } else if over.len() > paired && !under.is_empty() {
        for (k, &from) in over[paired..].iter().enumerate() {
            let to = under[under.len() - 1 - k % under.len()];
            paths.push(Path {
                from,
                to,
                count: d[from] as usize,
            });
        }
    }
    paths
}

/// Alg. 4.1 lines 7–9: whether the node limits differ enough for a global round.
pub fn needs_global_round(node_limits: &[usize], threshold: f64) -> bool {
    let (Some(&min), Some(&max)) = (node_limits.iter().min(), node_limits.iter().max()) else {
        return false;
    };
    if min == 0 {
        return max > 0;
    }
    (max - min) as f64 / min as f64 > threshold
}

/// Migration limits for a set of queues (B.5, B.6): their lengths shared out by availability.
pub fn limits(lengths: &[usize], out_of_work: &[bool], avg_work: &[f64]) -> Vec<usize> {
    migration_limits(lengths, &availability(out_of_work, avg_work))
}

/// Paths for a set of queues from their lengths and limits (B.2).
pub fn plan(lengths: &[usize], limits: &[usize]) -> Vec<Path> {
    let d: Vec<i64> = lengths
        .iter()
        .zip(limits)
        .map(|(&len, &lim)| len as i64 - lim as i64)
        .collect();
    migration_paths(&d)
}

/// Erlang's immigration test (`immigrate` in erl_process.c): a worker takes one more actor along
/// its path only while the queue it pulls from is still above that queue's limit and its own is
/// below its own limit, both as they are now. A path computed from a moment's lengths so ends as
/// soon as the imbalance it answered is gone (the source drained, or the puller got work of its
/// own), instead of moving its whole count whatever happened since: with the count alone, 16
/// workers on one node moved 200,000 actors in 200 rounds of `fib` and ran it at half of `cls`'s
/// rate (docs/decisions/0079-balancing-pulls-while-it-helps.md).
pub fn should_pull(from_len: usize, from_limit: usize, own_len: usize, own_limit: usize) -> bool {
    from_len > from_limit && own_len < own_limit
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn availability_follows_b5() {
        // Worker 2 ran out of work: fully available. Workers 0 and 1 share by historic work.
        let a = availability(&[false, false, true], &[300.0, 100.0, 50.0]);
        assert_eq!(a, vec![1.5, 0.5, 1.0]);
    }

    #[test]
    fn limits_share_actors_by_availability_b6() {
        assert_eq!(
            migration_limits(&[10, 0, 2], &[1.0, 1.0, 1.0]),
            vec![4, 4, 4]
        );
        assert_eq!(
            migration_limits(&[12, 0, 0], &[2.0, 1.0, 1.0]),
            vec![6, 3, 3]
        );
    }

    #[test]
    fn paths_pair_largest_surplus_with_largest_deficit() {
        // D: +5, -1, +2, -4 → 0→3 (min(5,4)=4), 2→1 (min(2,1)=1).
        let p = migration_paths(&[5, -1, 2, -4]);
        assert_eq!(
            p,
            vec![
                Path {
                    from: 0,
                    to: 3,
                    count: 4
                },
                Path {
                    from: 2,
                    to: 1,
                    count: 1
                }
            ]
        );
    }

    #[test]
    fn figure_b1_more_underloaded_queues() {
        // One overloaded queue, three underloaded: the extra two pull from it too (phase 2).
        let p = migration_paths(&[6, -3, -2, -1]);
        assert_eq!(p.len(), 3);
        assert_eq!(
            p[0],
            Path {
                from: 0,
                to: 1,
                count: 3
            }
        );
        assert!(p[1..].iter().all(|path| path.from == 0));
        let mut to: Vec<usize> = p.iter().map(|path| path.to).collect();
        to.sort_unstable();
        assert_eq!(to, vec![1, 2, 3]);
    }

    #[test]
    fn figure_b1_more_overloaded_queues() {
        // Three overloaded, one underloaded: the extra two send to it too (phase 2).
        let p = migration_paths(&[3, 2, 1, -6]);
        assert_eq!(p.len(), 3);
        assert!(p.iter().all(|path| path.to == 3));
        assert_eq!(
            p[0],
            Path {
                from: 0,
                to: 3,
                count: 3
            }
        );
    }

    #[test]
    fn balanced_queues_need_no_paths() {
        let even = [3, 3, 3];
        assert!(plan(&even, &limits(&even, &[false; 3], &[1.0; 3])).is_empty());
        let one = [9, 0, 0];
        let p = plan(
            &one,
            &limits(&one, &[false, true, true], &[100.0, 0.0, 0.0]),
        );
        assert_eq!(p.iter().map(|p| p.count).sum::<usize>(), 6, "{p:?}");
    }

    #[test]
    fn one_sided_imbalance_from_rounding_gives_no_paths() {
        assert!(migration_paths(&[0, -1]).is_empty());
        assert!(migration_paths(&[1, 0]).is_empty());
        assert!(migration_paths(&[]).is_empty());
    }

    #[test]
    fn a_path_is_followed_only_while_the_imbalance_lasts() {
        // The source above its limit, the puller below its own: pull.
        assert!(should_pull(5, 2, 0, 2));
        // The source drained to its limit meanwhile: stop.
        assert!(!should_pull(2, 2, 0, 2));
        // The puller got work of its own up to its limit: stop.
        assert!(!should_pull(5, 2, 2, 2));
    }

    #[test]
    fn global_round_threshold() {
        assert!(!needs_global_round(&[10, 12], 0.5));
        assert!(needs_global_round(&[10, 16], 0.5));
        assert!(needs_global_round(&[0, 1], 0.5));
        assert!(!needs_global_round(&[0, 0], 0.5));
    }
}
