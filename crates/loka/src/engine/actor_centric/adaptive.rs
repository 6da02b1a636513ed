//! The adaptive `auto` on real workers (`policy/adaptive.rs`, `engine/adapt.rs`): whichever
//! worker finds a window over closes it and runs the controller; every worker follows the
//! policy it answers, at its periodic look (every `INBOX_CHECK_INTERVAL` activations) and when
//! it goes looking for work. Systems that do not adapt pay one test of a flag at those places.

use super::worker::Worker;
use super::Engine;
use crate::engine::adapt::Meter;
use crate::engine::choices::Victims;
use crate::policy::adaptive::{self, Mechanism};
use crate::sync::AtomicU64;
use parking_lot::Mutex;
use std::sync::atomic::Ordering::Relaxed;

/// The meter of the adaptive `auto`, behind a lock any worker may try.
pub(super) struct Windows {
    meter: Mutex<Meter>,
    /// When the window under way ends (the engine's ns): the test every worker makes before
    /// trying the lock.
    due: AtomicU64,
}

impl Windows {
    pub(super) fn new() -> Windows {
        Windows {
            meter: Mutex::new(Meter::new()),
            due: AtomicU64::new(adaptive::WINDOW_NS),
        }
    }
}

impl Engine {
    /// Closes the window under way if it is over (and no other worker is closing it).
    pub(super) fn adapt_tick(&self) {
        let (Some(windows), Some(adapt)) = (&self.adaptive, &self.shared.adapt) else {
            return;
        };
        let now = self.now_ns();
        if now < windows.due.load(Relaxed) {
            return;
        }
        let Some(mut meter) = windows.meter.try_lock() else {
            return;
        };
        if meter.due(now) {
            meter.close(now, self.shared.counters.worker_messages(), adapt);
            windows.due.store(now + adaptive::WINDOW_NS, Relaxed);
        }
    }
}

impl Worker {
    /// Takes up the policy the adaptive `auto` runs now, if it changed: the routing of wake-ups
    /// from here, the neighbours helped, and (`victims`, when the caller has them) the victim
    /// order. Nothing queued moves: under an adaptive `auto` every worker serves its pinned and
    /// foreign queues whatever the policy (`worker/local_work.rs`), so an actor queued under the previous
    /// rules still runs.
    pub(super) fn follow_mechanism(&self, victims: Option<(&mut Victims, &mut Mechanism)>) {
        let engine = self.engine();
        let Some(adapt) = &engine.shared.adapt else {
            return;
        };
        let running = adapt.running();
        if running != self.mechanism() {
            self.set_routing(running, engine.routings[running.index()]);
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
    use crate::policy::adaptive::Mechanism;
    use crate::runtime::Shared;
    use crate::sync::AtomicU64;
    use crate::{Actor, ActorRef, Config, Context, Placement, SpawnOptions, System};
    use std::sync::atomic::Ordering;
    use std::sync::Arc;

    /// Checks that each sender's numbers arrive in order, once each.
    struct Receiver {
        next: Vec<u64>,
        received: Arc<AtomicU64>,
    }

    impl Actor for Receiver {
        type Msg = (usize, u64);
        fn handle(&mut self, _ctx: &mut Context<Self>, (sender, n): (usize, u64)) {
            assert_eq!(self.next[sender], n, "sender {sender}: FIFO, once each");
            self.next[sender] += 1;
            self.received.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Sends its numbers to every receiver, a slice per activation, and flips the policy after
    /// each slice.
    struct Sender {
        index: usize,
        receivers: Vec<ActorRef<(usize, u64)>>,
        sent: u64,
        total: u64,
        shared: Arc<Shared>,
        flips: Arc<AtomicU64>,
    }

    impl Actor for Sender {
        type Msg = ();
        fn handle(&mut self, ctx: &mut Context<Self>, (): ()) {
            for _ in 0..20 {
                if self.sent == self.total {
                    return;
                }
                for r in &self.receivers {
                    r.send((self.index, self.sent)).unwrap();
                }
                self.sent += 1;
            }
            let flips = self.flips.fetch_add(1, Ordering::Relaxed);
            // The last flip is to plain stealing: what `hierarchical` pinned must still run.
            let m = Mechanism::from_index((flips as usize + 1) % 2);
            self.shared.adapt.as_ref().unwrap().force(m);
            ctx.myself().send(()).unwrap();
        }
    }

    /// The policy flips between `cls` and `hierarchical:auto` after every slice of sends while
    /// senders on both nodes flood receivers on both (hubs among them, so pinned and foreign
    /// queues fill under `hierarchical`): no message is lost, duplicated or reordered, and the
    /// system goes quiet (every actor queued under either policy ran).
    #[test]
    fn switching_policies_under_load_loses_and_reorders_nothing() {
        let config = Config {
            workers: 4,
            topology: "synthetic:package:2 numa:1 core:2 pu:1".to_owned(),
            ..Config::default()
        };
        let system = System::from_config(config).unwrap();
        assert!(system.shared.adapt.is_some(), "auto adapts on two nodes");
        let received = Arc::new(AtomicU64::new(0));
        let flips = Arc::new(AtomicU64::new(0));
        let (senders, total) = (6, 4_000);
        let receivers: Vec<_> = (0..4)
            .map(|i| {
                let options = SpawnOptions::default()
                    .placement(Placement::Worker(i))
                    .hub(i % 2 == 0);
                system.spawn_with(
                    Receiver {
                        next: vec![0; senders],
                        received: Arc::clone(&received),
                    },
                    options,
                )
            })
            .collect();
        let handles: Vec<_> = (0..senders)
            .map(|index| {
                system.spawn_with(
                    Sender {
                        index,
                        receivers: receivers.clone(),
                        sent: 0,
                        total,
                        shared: Arc::clone(&system.shared),
                        flips: Arc::clone(&flips),
                    },
                    SpawnOptions::default().placement(Placement::Worker(3 - index % 4)),
                )
            })
            .collect();
        for h in &handles {
            h.send(()).unwrap();
        }
        let quiet = system.run_until_idle_timeout(std::time::Duration::from_secs(30));
        assert!(quiet, "every actor queued under either policy ran");
        assert_eq!(
            received.load(Ordering::Relaxed),
            senders as u64 * total * receivers.len() as u64
        );
        assert_eq!(flips.load(Ordering::Relaxed), senders as u64 * total / 20);
        system.shutdown();
    }
}
