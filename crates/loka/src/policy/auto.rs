//! `auto`, the default policy: loka picks the scheduler from the machine, so that a user who
//! tunes nothing never pays for locality where there is none to gain.
//!
//! * **One NUMA node** (a laptop, a one-socket server, a container): `cls`. Every core reaches all
//!   memory at the same cost, so keeping an actor near its data saves nothing, while the locality
//!   policies' hand-offs cost throughput: on this project's one-node machine `hierarchical` runs
//!   bencherl-serialmsg at 0.49× of `cls`, `hierarchical:auto` chameneos at 0.63× and `lgs:alt`
//!   logmap at 0.58× (docs/results/do-no-harm.md, with the causes).
//! * **Several NUMA nodes**: `hierarchical:auto`. It keeps actors on their home node (65–100% of
//!   activations on `preset:xeon-x7560`, against 19–71% under `cls`), brings wanderers home
//!   before it steals elsewhere, and marks hubs from its own counters instead of asking the user;
//!   LGS shows a convoy pathology on ring-shaped workloads (threadring 34 s against 0.04 s under
//!   `cls` on `preset:opteron6376`). This choice rests on locality counters, not on wall-time
//!   gains, which no machine available to the project can show yet; the simulation engine is
//!   meant to measure them.
//! * **One worker**: `cls` (no stealing, no placement: nothing to choose).
//!
//! On several nodes the choice is only where `auto` starts: under the actor-centric and
//! simulation engines it keeps measuring, while the system runs, whether `hierarchical:auto`
//! handles more messages than `cls` would, and moves to `cls` when it does not
//! ([`super::adaptive`], docs/decisions/0067-adaptive-auto.md).

use super::PolicyKind;

/// The policy `auto` runs on a machine of `nodes` NUMA nodes with `workers` workers, and why.
pub fn choose(nodes: usize, workers: usize) -> (PolicyKind, &'static str) {
    if workers <= 1 {
        (PolicyKind::Cls, "one worker: nothing to place or steal")
    } else if nodes <= 1 {
        (
            PolicyKind::Cls,
            "one NUMA node: no remote memory to avoid, so plain work stealing (locality policies only add hand-offs)",
        )
    } else {
        (
            PolicyKind::Hierarchical { auto_hubs: true },
            "several NUMA nodes: hub-aware hierarchical scheduling keeps actors on their home node, while measurements say it does better than plain work stealing",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_node_or_one_worker_is_plain_work_stealing_and_numa_is_hierarchical() {
        assert_eq!(choose(1, 2).0, PolicyKind::Cls);
        assert_eq!(choose(1, 64).0, PolicyKind::Cls);
        assert_eq!(choose(4, 1).0, PolicyKind::Cls);
        assert_eq!(choose(2, 4).0, PolicyKind::Hierarchical { auto_hubs: true });
        assert!(choose(8, 64).1.contains("NUMA"));
    }
}
