//! `erlang`: the stock Erlang VM's scheduling (BEAM's `erl_process.c`; Francesquini App. B,
//! docs/references.md), the baseline Francesquini measured his hub-aware runtime against.
//!
//! * A process belongs to one scheduler's run queue, the one it last ran on. When a message
//!   makes it runnable it is queued **at the tail of that run queue**, whoever sent the message:
//!   a woken actor goes back to the worker it last ran on, not to the sender's worker as under
//!   `cls`. An actor that never ran goes to the sender's worker.
//! * A spawned process is queued at the tail of its parent's scheduler's run queue.
//! * A scheduler whose run queue is empty steals one process from the other run queues, trying
//!   them in index order starting after its own (`try_steal_task`): no random victim, no
//!   topology.
//! * No hubs, no home node, no next slot: the run queue is FIFO.
//!
//! Not modelled: the VM's periodic balancing (`check_balance`, whose migration paths move
//! processes at enqueue time), priorities, and the reductions budget beyond loka's `throughput`.
//! Stealing is what moves work (docs/guide.md, "Scheduling policies").
//!
//! loka's `cls` differs in one rule that decides most benchmarks: it runs a woken actor on the
//! sender's worker (CAF's communication locality). A runtime measured against Erlang gains what
//! Erlang loses by sending partners back to their own schedulers; measured against `cls`, that
//! gain may be a loss. This policy lets the simulation and the real engine compare each text's
//! policy with the text's own baseline.

use super::hierarchical::StealStep;

/// Where a woken actor goes under `erlang`: the worker it last ran on, else (it never ran) the
/// sender's worker. `None`: neither is known (woken from a plain thread before it ever ran).
pub fn wake_target(last: Option<usize>, sender: Option<usize>) -> Option<usize> {
    last.or(sender)
}

/// The victims of worker `me` of `workers`, in the order an idle Erlang scheduler tries them:
/// the next index first, wrapping around, never itself.
pub fn steal_plan(me: usize, workers: usize) -> Vec<StealStep> {
    assert!(me < workers, "worker {me} out of range 0..{workers}");
    (1..workers)
        .map(|k| StealStep::Worker {
            victim: (me + k) % workers,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_woken_actor_goes_back_where_it_last_ran_whoever_sends() {
        assert_eq!(wake_target(Some(3), Some(1)), Some(3));
        assert_eq!(wake_target(Some(3), None), Some(3));
        // Never ran: the sender's worker.
        assert_eq!(wake_target(None, Some(1)), Some(1));
        assert_eq!(wake_target(None, None), None);
    }

    #[test]
    fn victims_in_index_order_after_me_wrapping_never_me() {
        let victims: Vec<usize> = steal_plan(2, 5)
            .into_iter()
            .map(|s| match s {
                StealStep::Worker { victim } => victim,
                other => panic!("only worker steps, got {other:?}"),
            })
            .collect();
        assert_eq!(victims, vec![3, 4, 0, 1]);
        assert!(steal_plan(0, 1).is_empty());
    }
}
