//! The adaptive `auto` under the simulation: its windows run in virtual time, and a switch
//! re-equips every virtual worker with the victims and helpers of the policy it moves to, as
//! the real workers re-equip themselves (`policy/adaptive/`, `engine/adapt.rs`).

use super::{Engine, State};
use crate::engine::choices::{gathered_home, OnSwitch, Routing, Victims};
use crate::policy::adaptive::Mechanism;
use std::collections::VecDeque;

impl Engine {
    /// After a step taken at virtual time `now` (the clock the stepped worker had: the earliest
    /// of the workers at work, the simulation's present; a worker's clock after its step may be
    /// far ahead of the others'): closes the window if it has run its length, and carries out
    /// the controller's answer.
    pub(super) fn adapt_at(&self, st: &mut State, now: u64) {
        let (Some(meter), Some(adapt)) = (st.adaptive.as_mut(), &self.shared.adapt) else {
            return;
        };
        if !meter.due(now) {
            return;
        }
        let hubs_before = adapt.hubs();
        let (ran, next) = meter.close(
            now,
            self.shared.counters.worker_messages(),
            self.shared.counters.worker_hub_candidates(),
            adapt,
        );
        if next != ran {
            self.equip(st, next, now);
        }
        if hubs_before && !adapt.hubs() {
            self.release_detected_hubs(st, now);
        }
    }

    /// The hub detection was turned off: the actors it marked that wait in pinned queues, where
    /// only their worker looks, become ordinary actors in that worker's yielded queue, where
    /// thieves look (the real engine's `release_detected_hubs`). Left there, a group workload
    /// whose every actor the detection pinned kept its workers' backlogs out of reach of idle
    /// thieves long after the detection stopped (docs/decisions/0109-auto-asks-whether-hubs-pay.md).
    fn release_detected_hubs(&self, st: &mut State, now: u64) {
        let mut released = false;
        for worker in st.workers.iter_mut() {
            let mut kept = VecDeque::with_capacity(worker.pinned.len());
            for task in worker.pinned.drain(..) {
                if crate::engine::placement::of(&task).forget_detected_hub() {
                    worker.yielded.push_back(task);
                    released = true;
                } else {
                    kept.push_back(task);
                }
            }
            worker.pinned = kept;
        }
        if released {
            self.wake_any(st, now, None);
        }
    }

    /// Gives every virtual worker the victims and helpers of `mechanism`'s policy, at virtual
    /// time `now`, and moves what [`OnSwitch`] says, as the real engine does: on a settled
    /// switch to plain stealing the actors of the pinned and foreign queues go to their worker's
    /// yielded queue, where thieves look, and a parked worker is told (`release_to_thieves`); on
    /// a switch to `hierarchical` the hubs go home (`gather_hubs`). Each worker keeps serving
    /// all its queues whatever the policy. A pending `hierarchical` migration is dropped (plain
    /// stealing has none; a fresh round assigns one if `hierarchical` comes back).
    fn equip(&self, st: &mut State, mechanism: Mechanism, now: u64) {
        let adapt = self
            .shared
            .adapt
            .as_ref()
            .expect("only an adaptive auto switches");
        let policy = adapt.policy(mechanism);
        let layout = &self.shared.machine.layout;
        let routing = Routing::of(policy);
        let on_switch = OnSwitch::of(routing, mechanism, adapt.settled());
        let release = on_switch == OnSwitch::ReleaseToThieves;
        let mut released = false;
        for (i, worker) in st.workers.iter_mut().enumerate() {
            if release {
                let before = worker.yielded.len();
                worker.yielded.extend(worker.pinned.drain(..));
                for queue in &mut worker.foreign {
                    worker.yielded.extend(queue.drain(..));
                }
                released |= worker.yielded.len() > before;
            }
            worker.victims = Victims::new(policy, i, &worker.cls, layout);
            worker.helped = routing.helped(i, layout);
            worker.help_turn = 0;
            worker.migration = None;
            worker.out_of_work = false;
            worker.since_balance = 0;
        }
        if released {
            self.wake_any(st, now, None);
        }
        if on_switch == OnSwitch::GatherHubs {
            self.gather_hubs(st, now);
        }
    }

    /// Moving to `hierarchical`: the hubs that plain stealing left in ordinary queues go to
    /// their home workers' pinned queues (the real engine's `gather_hubs`).
    fn gather_hubs(&self, st: &mut State, now: u64) {
        let mut moved = Vec::new();
        for worker in st.workers.iter_mut() {
            for queue in [&mut worker.yielded, &mut worker.inbox] {
                let mut kept = VecDeque::with_capacity(queue.len());
                for task in queue.drain(..) {
                    match gathered_home(&task) {
                        Some(home) => moved.push((home, task)),
                        None => kept.push_back(task),
                    }
                }
                *queue = kept;
            }
        }
        for (home, task) in moved {
            st.workers[home].pinned.push_back(task);
            if st.workers[home].parked {
                self.unpark(st, home, now, None);
            }
        }
    }
}
