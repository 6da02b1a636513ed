//! `auto`, the default policy: loka picks the scheduler from the machine, so that a user who
//! tunes nothing never pays for locality where there is none to gain.
//!
//! * **One NUMA node** (a laptop, a one-socket server, a container): `cls`. Every core reaches all
//!   memory at the same cost, so keeping an actor near its data saves nothing, while the locality
//!   policies' hand-offs cost throughput: on this project's one-node machine `hierarchical` runs
//!   bencherl-serialmsg at 0.49× of `cls`, `hierarchical:auto` chameneos at 0.63× and `lgs:alt`
//!   logmap at 0.58× (docs/results/do-no-harm.md, with the causes).
//! * **Several NUMA nodes**: `hierarchical`. It keeps actors with data on their home node,
//!   brings wanderers home before it steals elsewhere, and runs a small actor where it is woken
//!   (docs/decisions/0085-hierarchical-small-actors-follow-their-wakers.md). Not
//!   `hierarchical:auto`: its online hub rule marks nearly every actor of a group workload a hub
//!   (ehb, the Cforall executor) and pins them where they were homed, which the simulation
//!   measured at 0.31–0.82× of `cls` on ehb and 0.63–1.02× on the executor, against 0.92–1.03×
//!   and 1.05–3.06× for `hierarchical` (docs/decisions/0086-auto-starts-on-hierarchical.md).
//!   LGS shows a convoy pathology on ring-shaped workloads (threadring 34 s against 0.04 s under
//!   `cls` on `preset:opteron6376`, before decision 0084).
//! * **One worker**: `cls` (no stealing, no placement: nothing to choose).
//!
//! On several nodes the choice is only where `auto` starts: under the actor-centric and
//! simulation engines it keeps measuring, while the system runs, whether `hierarchical`
//! handles more messages than `cls` would, and moves to `cls` when it does not
//! ([`super::adaptive`], docs/decisions/0067-adaptive-auto.md); and, while it runs
//! `hierarchical`, whether `hierarchical:auto`'s hub detection would handle more still
//! (docs/decisions/0109-auto-asks-whether-hubs-pay.md).

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
            PolicyKind::Hierarchical { auto_hubs: false },
            "several NUMA nodes: hierarchical scheduling keeps actors with data on their home node, while measurements say it does better than plain work stealing",
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
        assert_eq!(
            choose(2, 4).0,
            PolicyKind::Hierarchical { auto_hubs: false }
        );
        assert!(choose(8, 64).1.contains("NUMA"));
    }
}
