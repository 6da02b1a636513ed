//! The adaptive `auto` on real workers (`policy/adaptive/`, `engine/adapt.rs`): whichever
//! worker finds a window over closes it and runs the controller; every worker follows the
//! policy it answers, at its periodic look (every `INBOX_CHECK_INTERVAL` activations) and when
//! it goes looking for work. Systems that do not adapt pay one test of a flag at those places.

use super::queues::pop;
use super::worker::Worker;
use super::Engine;
use crate::engine::adapt::Meter;
use crate::engine::choices::{gathered_home, OnSwitch, Victims};
use crate::policy::adaptive::{self, Mechanism};
use crate::policy::Route;
use crate::sync::{AtomicBool, AtomicU64, AtomicU8};
use parking_lot::Mutex;
use std::sync::atomic::Ordering::Relaxed;

/// The meter of the adaptive `auto`, behind a lock any worker may try.
pub(super) struct Windows {
    meter: Mutex<Meter>,
    /// When the window under way ends (the engine's ns): the test every worker makes before
    /// trying the lock.
    due: AtomicU64,
    /// The mechanism (its index) whose switch was last carried out for the whole engine
    /// ([`Engine::release_to_thieves`] on a switch to plain stealing).
    followed: AtomicU8,
    /// Whether hubs were detected when the last switch of the hub detection was carried out
    /// ([`Engine::release_detected_hubs`] when it is turned off).
    hubs_followed: AtomicBool,
}

impl Windows {
    pub(super) fn new(adapt: &crate::engine::adapt::Adapt) -> Windows {
        Windows {
            meter: Mutex::new(adapt.meter()),
            due: AtomicU64::new(adaptive::WINDOW_NS),
            followed: AtomicU8::new(Mechanism::Locality.index() as u8),
            hubs_followed: AtomicBool::new(false),
        }
    }
}

impl Engine {
    /// Closes the window under way if it is over (and no other worker is closing it), and
    /// carries out a switch for the whole engine once.
    pub(super) fn adapt_tick(&self) {
        let (Some(windows), Some(adapt)) = (&self.adaptive, &self.shared.adapt) else {
            return;
        };
        let now = self.now_ns();
        if now >= windows.due.load(Relaxed) {
            if let Some(mut meter) = windows.meter.try_lock() {
                if meter.due(now) {
                    meter.close(
                        now,
                        self.shared.counters.worker_messages(),
                        self.shared.counters.worker_hub_candidates(),
                        adapt,
                    );
                    windows.due.store(now + meter.window_ns(), Relaxed);
                }
            }
        }
        // Whoever sees a switch first carries it out (the swap: one thread per switch; Relaxed,
        // as it only elects that thread: the queues synchronise what moves).
        let (running, settled) = adapt.running_and_settled();
        let index = running.index() as u8;
        if windows.followed.load(Relaxed) != index && windows.followed.swap(index, Relaxed) != index
        {
            match OnSwitch::of(self.routings[index as usize], running, settled) {
                OnSwitch::ReleaseToThieves => self.release_to_thieves(),
                OnSwitch::GatherHubs => self.gather_hubs(),
                OnSwitch::Nothing => {}
            }
        }
        // The same for the hub detection turned off (decision 0109).
        let hubs = adapt.hubs();
        if windows.hubs_followed.load(Relaxed) != hubs
            && windows.hubs_followed.swap(hubs, Relaxed) != hubs
            && !hubs
        {
            self.release_detected_hubs();
        }
    }

    /// Moving (back) to `hierarchical`: the hubs that plain stealing requeued like any actor, in
    /// the workers' yielded queues and inboxes, go to their home workers' pinned queues
    /// (`choices::gathered_home`). Left there, a hub that always has mail is never woken, so
    /// never routed home, while every worker serves its pinned hubs first: on the simulated
    /// Altix one probe of plain stealing (1.25 ms) held bencherl-big's hubs off their homes for
    /// 8 ms (docs/decisions/0103-hubs-go-home-at-requeue.md). Done once, by the worker that
    /// sees the switch first, as [`Self::release_to_thieves`] is. The queues are multi-consumer:
    /// each is emptied as far as it was full when looked at (its owner may push and pop
    /// meanwhile), the actors that stay are pushed back in their order, and their worker is told
    /// (it may have found the queue empty while they were out, and parked).
    fn gather_hubs(&self) {
        let mut kept = Vec::new();
        for (w, worker) in self.workers.iter().enumerate() {
            for queue in [&worker.queues.yielded, &worker.queues.inbox] {
                for _ in 0..queue.len() {
                    let Some(task) = pop(queue) else { break };
                    match gathered_home(&task) {
                        Some(home) => self.push_route_external(Route::Pinned(home), task),
                        None => kept.push(task),
                    }
                }
                if !kept.is_empty() {
                    kept.drain(..).for_each(|task| queue.push(task));
                    self.notify_target(w);
                }
            }
        }
    }

    /// The hub detection was turned off (the controller found that hubs do not pay): the actors
    /// it marked that wait in pinned queues, where only their worker looks, become ordinary
    /// actors in that worker's yielded queue, where thieves look, and the others are told
    /// (docs/decisions/0109-auto-asks-whether-hubs-pay.md). Done once, by the worker that sees
    /// the switch first, as [`Self::release_to_thieves`] is; the pinned queues are multi-consumer, emptied as far as they were full when
    /// looked at, declared hubs pushed back in their order.
    fn release_detected_hubs(&self) {
        let mut kept = Vec::new();
        let mut released = false;
        for worker in self.workers.iter() {
            let pinned = &worker.queues.pinned;
            for _ in 0..pinned.len() {
                let Some(task) = pop(pinned) else { break };
                if crate::engine::placement::of(&task).forget_detected_hub() {
                    worker.queues.yielded.push(task);
                    released = true;
                } else {
                    kept.push(task);
                }
            }
            kept.drain(..).for_each(|task| pinned.push(task));
        }
        if released {
            self.notify_stealable(None);
        }
    }

    /// Leaving `hierarchical` for plain stealing: the actors of every worker's pinned and
    /// foreign queues go to that worker's yielded queue, where thieves look, and a parked worker
    /// is told. Plain stealing's thieves never look at those two queues, so an actor left there
    /// waited until its worker had nothing else to run while idle workers parked (under the
    /// simulation, cforall-executor on the Xeon ran at 0.53× of `cls` with `auto` settled on
    /// `cls`; docs/decisions/0074-auto-switches-release-queued-actors.md). Done once for every
    /// worker, by the first to see the switch, not by each worker at its next look: a worker
    /// inside a long handler would hold its queues until it returned. The queues are
    /// multi-consumer, so another thread may take from them; an actor pushed there afterwards by
    /// a worker not yet following plain stealing still runs (every worker under an adaptive
    /// `auto` serves its pinned and foreign queues whatever the policy, `worker/local_work.rs`).
    fn release_to_thieves(&self) {
        for worker in self.workers.iter() {
            if worker.queues.release_to_thieves(&self.foreign_waiting) > 0 {
                self.notify_stealable(None);
            }
        }
    }
}

impl Worker {
    /// Takes up the policy the adaptive `auto` runs now, if it changed: the routing of wake-ups
    /// from here, the neighbours helped, and (`victims`, when the caller has them) the victim
    /// order. Nothing queued moves here (a switch to plain stealing moved the pinned and foreign
    /// queues' actors once, for every worker: [`Engine::release_to_thieves`]); under an adaptive
    /// `auto` every worker serves its pinned and foreign queues whatever the policy
    /// (`worker/local_work.rs`), so an actor queued under the previous rules still runs.
    pub(super) fn follow_mechanism(&self, victims: Option<(&mut Victims, &mut Mechanism)>) {
        let engine = self.engine();
        let Some(adapt) = &engine.shared.adapt else {
            return;
        };
        let running = adapt.running();
        // The routing of the mechanism running, `hierarchical` with or without hub detection
        // (docs/decisions/0109-auto-asks-whether-hubs-pay.md).
        let routing = crate::engine::choices::routing_now(&engine.routings, &engine.shared.adapt);
        if running != self.mechanism() || routing != self.routing() {
            self.set_routing(running, routing);
        }
        if let Some((victims, theirs)) = victims {
            if *theirs != running {
                let layout = &engine.shared.machine.layout;
                *victims = Victims::new(adapt.policy(running), self.index(), self.policy(), layout);
                *theirs = running;
            }
        }
    }

    /// The mechanism this worker follows now.
    pub(super) fn mechanism(&self) -> Mechanism {
        Mechanism::from_index(self.mechanism_index())
    }
}

#[cfg(test)]
mod tests {
    use super::super::held_tests::{Blocker, Waiting};
    use crate::policy::adaptive::Mechanism;
    use crate::{Actor, Config, Context, Placement, SpawnOptions, System};
    use std::sync::Arc;

    /// A system under `auto` on a synthetic machine of two nodes of `cores` cores each, a worker
    /// per core.
    fn two_nodes(cores: usize) -> System {
        let config = Config {
            workers: 2 * cores,
            topology: format!("synthetic:package:2 numa:1 core:{cores} pu:1"),
            ..Config::default()
        };
        System::from_config(config).unwrap()
    }

    struct Nudge;

    impl Actor for Nudge {
        type Msg = ();
        fn handle(&mut self, _ctx: &mut Context<Self>, (): ()) {}
    }

    /// Under `hierarchical` a hub waits in its worker's pinned queue, which plain stealing's
    /// thieves never look at. A switch to plain stealing while that worker is held by a long
    /// handler must hand the hub to the other worker, not leave it until the handler returns
    /// (here: never, as the handler waits for the hub).
    #[test]
    fn a_switch_to_plain_stealing_releases_what_only_hierarchical_reached() {
        let system = two_nodes(1);
        let adapt = system
            .shared
            .adapt
            .as_ref()
            .expect("auto adapts on two nodes");
        assert_eq!(adapt.running(), Mechanism::Locality);
        let on = |w: usize| SpawnOptions::default().placement(Placement::Worker(w));
        let hub = system.spawn_with(Waiting, on(0).hub(true));
        let blocker = system.spawn_with(Blocker { waiting: hub }, on(0));
        let nudge = system.spawn_with(Nudge, on(1));
        let (answer, answered) = std::sync::mpsc::channel();
        blocker.send(answer).unwrap();
        // The blocker holds worker 0, the hub waits in its pinned queue; then the switch, and
        // a message that gets worker 1 looking.
        std::thread::sleep(std::time::Duration::from_millis(100));
        adapt.force(Mechanism::Plain);
        nudge.send(()).unwrap();
        let hub_ran_meanwhile = answered.recv().unwrap();
        assert!(hub_ran_meanwhile, "the hub ran while its worker was held");
        system.shutdown();
    }

    /// The policy flips between `cls` and `hierarchical` after every slice of sends while
    /// senders on both nodes flood receivers on both (hubs among them, so pinned and foreign
    /// queues fill under `hierarchical`): no message is lost, duplicated or reordered, and the
    /// system goes quiet (every actor queued under either policy ran).
    #[test]
    fn switching_policies_under_load_loses_and_reorders_nothing() {
        let system = two_nodes(2);
        let adapt = Arc::clone(&system.shared);
        assert!(adapt.adapt.is_some(), "auto adapts on two nodes");
        let on = |w: usize| SpawnOptions::default().placement(Placement::Worker(w));
        let receivers = (0..4).map(|i| on(i).hub(i % 2 == 0)).collect();
        let senders = (0..6).map(|index| on(3 - index % 4)).collect();
        // The last flip is to plain stealing: what `hierarchical` pinned must still run.
        let flip = Arc::new(move |slices: u64| {
            let m = Mechanism::from_index((slices as usize + 1) % 2);
            adapt.adapt.as_ref().unwrap().force(m);
        });
        super::super::flood_tests::flood(&system, receivers, senders, 4_000, flip);
        system.shutdown();
    }
}
