//! `auto`'s gathering on real workers (`engine/gather.rs`,
//! docs/decisions/0108-auto-gathers-its-workers.md): whichever active worker finds a window
//! over closes it; a worker the answer retires hands what is queued on it to an active worker
//! at its next periodic look and then parks, re-checking only its own queues; a worker the
//! answer activates again is woken to steal. Systems that do not gather pay one test of a
//! flag at the periodic look and when a worker runs out of work.

use super::queues::pop;
use super::worker::Worker;
use super::Engine;
use crate::runtime::TaskRef;

impl Engine {
    /// Closes the gathering window under way if it is over (a clock read: at periodic looks
    /// only), then [`gather_sync`](Self::gather_sync).
    pub(super) fn gather_tick(&self) {
        let Some(gather) = &self.shared.gather else {
            return;
        };
        gather.tick(self.now_ns(), || self.shared.counters.worker_messages());
        self.gather_sync();
    }

    /// Carries out the active count the controller answered if the engine does not run it
    /// yet: two relaxed loads when it does. Two workers that both see a change both carry it
    /// out, which is harmless (a worker is claimed once).
    pub(super) fn gather_sync(&self) {
        let Some(gather) = &self.shared.gather else {
            return;
        };
        let (running, answered) = (self.sleepers.active(), gather.active());
        if running != answered {
            self.activate(running, answered);
        }
    }

    /// Every worker takes work from now on (the stall guard is about to rescue actors from a
    /// worker stuck in a handler, or to wake a sleeper for the actors queued behind it: a
    /// retired sleeper would take neither).
    pub(super) fn spread_for_rescue(&self) {
        let Some(gather) = &self.shared.gather else {
            return;
        };
        gather.spread_now(self.now_ns(), || self.shared.counters.worker_messages());
        self.gather_sync();
    }

    /// Workers `0..after` take stealable work from now on (`before` did). Workers activated
    /// again are woken if they sleep, to steal; retired ones hand their queues on at their next
    /// look (a retired worker inside a handler cannot be interrupted, and one that sleeps holds
    /// nothing: it handed its queues on before it parked).
    fn activate(&self, before: usize, after: usize) {
        self.sleepers.set_active(after);
        for w in before..after {
            if self.sleepers.claim_one(w) {
                self.unpark(w);
            }
        }
    }
}

impl Worker {
    /// Whether `auto`'s gathering has retired this worker.
    #[inline]
    pub(super) fn is_retired(&self) -> bool {
        self.index() >= self.engine().sleepers.active()
    }

    /// At the periodic look of a system that gathers: closes a window if one is over, and if
    /// this worker is retired, hands every actor queued on it (next slot, held, deque, inbox,
    /// yielded, urgent) to an active worker's inbox. The pinned queue stays: only this worker
    /// may run it.
    pub(super) fn gather_look(&self) {
        let engine = self.engine();
        engine.gather_tick();
        let active = engine.sleepers.active();
        if self.index() < active {
            return;
        }
        let to = self.index() % active;
        let queues = self.own_queues();
        let mut moved = 0;
        let mut hand = |task: TaskRef| {
            engine.push_tail(to, task);
            moved += 1;
        };
        if let Some(task) = self.watch().take_next() {
            hand(task);
        }
        if let Some(task) = self.release_held() {
            hand(task);
        }
        while let Some(task) = self.deque.pop() {
            hand(task);
        }
        for queue in [&queues.inbox, &queues.yielded, &queues.urgent] {
            for _ in 0..queue.len() {
                let Some(task) = pop(queue) else { break };
                hand(task);
            }
        }
        if moved > 0 {
            if let Some(gather) = &engine.shared.gather {
                gather.handed_off(moved);
            }
        }
    }

    /// A retired worker out of local work: what its due timers wake, or what was queued for
    /// it by name, else it parks (no stealing: the active workers take the stealable work).
    pub(super) fn retired_idle(&self) -> Option<TaskRef> {
        let engine = self.engine();
        // What a timer wakes is queued here (next slot, deque): the loop's next look finds it.
        if engine.shared.fire_timers(self.index()) {
            return None;
        }
        let task = self.pop_own_queues();
        if task.is_none() && !engine.is_shutdown() {
            engine.park(self.index());
        }
        task
    }
}

#[cfg(test)]
mod tests {
    use super::super::held_tests::{Blocker, Waiting};
    use crate::{Actor, ActorRef, Config, Context, Placement, SpawnOptions, System};
    use std::sync::Arc;
    use std::time::Duration;

    /// A system under `auto` on a synthetic machine of one node of `workers` cores.
    fn one_node(workers: usize) -> System {
        one_node_with(workers, |_| {})
    }

    /// [`one_node`] with the configuration changed by `change`.
    fn one_node_with(workers: usize, change: impl FnOnce(&mut Config)) -> System {
        let mut config = Config {
            workers,
            topology: format!("synthetic:package:1 numa:1 core:{workers} pu:1"),
            ..Config::default()
        };
        change(&mut config);
        let system = System::from_config(config).unwrap();
        assert!(system.shared.gather.is_some(), "auto gathers on one node");
        system
    }

    /// `cls` named, one worker, or the stall guard off: every worker stays.
    #[test]
    fn only_auto_with_the_stall_guard_gathers() {
        let topology = "synthetic:package:1 numa:1 core:2 pu:1".to_owned();
        for (policy, workers, guard) in [("cls", 2, true), ("auto", 1, true), ("auto", 2, false)] {
            let mut config = Config {
                workers,
                topology: topology.clone(),
                policy: policy.parse().unwrap(),
                ..Config::default()
            };
            config.stall.guard = guard;
            let system = System::from_config(config).unwrap();
            assert!(system.shared.gather.is_none(), "{policy} {workers} {guard}");
            assert!(system.stats().gather.is_none());
            system.shutdown();
        }
    }

    /// The worker count moves between 4, 2, 1 and 3 after every slice of sends while senders
    /// placed on every worker flood receivers placed on every worker: no message is lost,
    /// duplicated or reordered, and the system goes quiet (every actor queued on a retired
    /// worker ran).
    #[test]
    fn moving_the_worker_count_under_load_loses_and_reorders_nothing() {
        let system = one_node(4);
        let shared = Arc::clone(&system.shared);
        let on = |w: usize| SpawnOptions::default().placement(Placement::Worker(w));
        let receivers = (0..4).map(on).collect();
        let senders = (0..6).map(|index| on(3 - index % 4)).collect();
        let flip = Arc::new(move |slices: u64| {
            let active = [4, 2, 1, 3][slices as usize % 4];
            shared.gather.as_ref().unwrap().force(active);
        });
        super::super::flood_tests::flood(&system, receivers, senders, 4_000, flip);
        system.shutdown();
    }

    /// With the work gathered on worker 0, a rally started on worker 3 (the server placed
    /// there, work queued for it by name, which wakes it; its partner spawned from there): each
    /// stroke wakes the other player into worker 3's next slot, and at its periodic look worker 3
    /// hands the waiting player to worker 0, where the rally finishes. An active worker may take
    /// the server from worker 3's inbox before worker 3 runs it (it is stealable there), so the
    /// rally is started again, up to ten times, until worker 3 has run it; a worker that never
    /// hands anything on fails every time.
    #[test]
    fn a_retired_worker_hands_its_queued_actors_on() {
        let system = one_node(4);
        gather_on(&system, 1);
        let on3 = || SpawnOptions::default().placement(Placement::Worker(3));
        for _ in 0..10 {
            assert!(system.run_until_idle_timeout(Duration::from_secs(10)));
            let (done, finished) = std::sync::mpsc::channel();
            let _server = system.spawn_with(
                Player {
                    done: Some(done),
                    serve: Some(301),
                },
                on3(),
            );
            finished.recv_timeout(Duration::from_secs(10)).unwrap();
            if system.stats().gather.unwrap().handed_off > 0 {
                break;
            }
        }
        let stats = system.stats();
        let gather = stats.gather.as_ref().unwrap();
        assert!(gather.handed_off >= 1, "{gather:?}");
        system.shutdown();
    }

    /// A ball with the strokes left, and who hit it.
    struct Ball(u64, Option<ActorRef<Ball>>);

    /// Returns every ball until the rally is over, then says so; with strokes to serve, spawns
    /// its partner when it starts (from its own worker) and serves.
    struct Player {
        done: Option<std::sync::mpsc::Sender<()>>,
        serve: Option<u64>,
    }

    impl Actor for Player {
        type Msg = Ball;
        fn started(&mut self, ctx: &mut Context<Self>) {
            if let Some(strokes) = self.serve.take() {
                let partner = ctx.spawn(Player {
                    done: None,
                    serve: None,
                });
                partner.send(Ball(strokes, Some(ctx.myself()))).unwrap();
            }
        }
        fn handle(&mut self, ctx: &mut Context<Self>, Ball(left, from): Ball) {
            match from {
                Some(from) if left > 0 => from.send(Ball(left - 1, Some(ctx.myself()))).unwrap(),
                _ => {
                    if let Some(done) = self.done.take() {
                        let _ = done.send(());
                    }
                }
            }
        }
    }

    /// Holds `system`'s work on `active` workers, and waits until a worker has carried the
    /// count out (a worker looks at it when it runs out of work: one message gets one looking).
    fn gather_on(system: &System, active: usize) {
        system.shared.gather.as_ref().unwrap().force(active);
        let (done, finished) = std::sync::mpsc::channel();
        let nudge = system.spawn(Player {
            done: Some(done),
            serve: None,
        });
        nudge.send(Ball(0, None)).unwrap();
        finished.recv().unwrap();
    }

    /// Gathered on one worker, pairs rallying from plain threads (each wake-up from outside
    /// a push to a worker's inbox, each answer a stealable wake-up) run on the active worker:
    /// the retired worker is neither routed to nor woken to steal.
    #[test]
    fn a_retired_worker_is_neither_routed_to_nor_woken_to_steal() {
        // Only a handler stuck for a second spreads the work: on a loaded test machine the OS
        // may hold a worker for longer than the default bound, which would spread it rightly.
        let system = one_node_with(2, |config| config.stall.slot_us = 1_000_000);
        gather_on(&system, 1);
        assert!(system.run_until_idle_timeout(Duration::from_secs(10)));
        let before = &system.stats().workers[1];
        let (before, parks_before) = (before.activations, before.parks);
        let pairs: Vec<_> = (0..8)
            .map(|_| {
                let (done, finished) = std::sync::mpsc::channel();
                let a = system.spawn(Player {
                    done: Some(done),
                    serve: None,
                });
                let b = system.spawn(Player {
                    done: None,
                    serve: None,
                });
                (a, b, finished)
            })
            .collect();
        for (a, b, _) in &pairs {
            // Odd: `a` gets the even counts, the last stroke (0) among them, and says so.
            b.send(Ball(20_001, Some(a.clone()))).unwrap();
        }
        for (_, _, finished) in &pairs {
            finished.recv_timeout(Duration::from_secs(30)).unwrap();
        }
        let after = &system.stats().workers[1];
        assert!(
            after.activations - before < 100,
            "the retired worker ran {} activations",
            after.activations - before
        );
        // Each wake-up of the retired worker ends in a park: it was not woken for the
        // stealable pushes (an actor displaced from the next slot goes to the deque's head).
        assert!(
            after.parks - parks_before < 20,
            "the retired worker parked {} times",
            after.parks - parks_before
        );
        let gather = system.stats().gather.unwrap();
        assert_eq!((gather.active, gather.forced_spreads), (1, 0), "{gather:?}");
        system.shutdown();
    }

    /// Gathered on one worker, a handler that holds it while the actor it woke waits behind
    /// it: the stall guard spreads the work, and the retired worker runs the waiting actor
    /// within the handler (no hostage because of gathering).
    #[test]
    fn the_stall_guard_spreads_a_gathered_system() {
        let system = one_node(2);
        let on0 = SpawnOptions::default().placement(Placement::Worker(0));
        let waiting = system.spawn_with(Waiting, on0.clone());
        let blocker = system.spawn_with(Blocker { waiting }, on0);
        // Worker 1 retires and parks.
        gather_on(&system, 1);
        let (answer, answered) = std::sync::mpsc::channel();
        blocker.send(answer).unwrap();
        assert!(
            answered.recv().unwrap(),
            "the woken actor ran during the handler"
        );
        let stats = system.stats().gather.unwrap();
        assert_eq!(stats.forced_spreads, 1, "{stats:?}");
        assert_eq!(stats.active, 2);
        system.shutdown();
    }
}
