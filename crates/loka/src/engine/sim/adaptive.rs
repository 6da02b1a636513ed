//! The adaptive `auto` under the simulation: its windows run in virtual time, and a switch
//! re-equips every virtual worker with the victims and helpers of the policy it moves to, as
//! the real workers re-equip themselves (`policy/adaptive.rs`, `engine/adapt.rs`).

use super::{Engine, State};
use crate::engine::choices::{Routing, Victims};
use crate::policy::adaptive::{self, Adaptive, Mechanism};

/// The controller and the window under way.
pub(super) struct Window {
    controller: Adaptive,
    /// Virtual time (ns) the window started at.
    start_ns: u64,
    /// Messages handled by all workers when it started.
    start_messages: u64,
}

impl Window {
    pub(super) fn new(controller: Adaptive) -> Window {
        Window {
            controller,
            start_ns: 0,
            start_messages: 0,
        }
    }
}

impl Engine {
    /// After a step taken at virtual time `now` (the clock the stepped worker had: the earliest
    /// of the workers at work, the simulation's present; a worker's clock after its step may be
    /// far ahead of the others'): closes the window if it has run its length, and carries out
    /// the controller's answer.
    pub(super) fn adapt_at(&self, st: &mut State, now: u64) {
        let Some(window) = st.adaptive.as_mut() else {
            return;
        };
        if now < window.start_ns + adaptive::WINDOW_NS {
            return;
        }
        let messages: u64 = (0..st.workers.len())
            .map(|i| self.shared.counters.worker(i).messages.get())
            .sum();
        let before = window.controller.current();
        window.controller.observe(adaptive::Window {
            elapsed_ns: now - window.start_ns,
            messages: messages - window.start_messages,
        });
        tracing::trace!(
            at_ns = now,
            ran = ?before,
            messages_per_ns = (messages - window.start_messages) as f64 / (now - window.start_ns) as f64,
            "adaptive auto: window"
        );
        window.start_ns = now;
        window.start_messages = messages;
        let adapt = self
            .shared
            .adapt
            .as_ref()
            .expect("an adaptive window has its state");
        let next = adapt.publish(&window.controller);
        if next != before {
            self.equip(st, next);
        }
    }

    /// Gives every virtual worker the victims and helpers of `mechanism`'s policy. Nothing
    /// queued moves: each worker keeps serving all its queues (pinned and foreign ones
    /// included) whatever the policy, so an actor queued under the previous rules still runs.
    /// A pending `hierarchical` migration is dropped (plain stealing has none; a fresh round
    /// assigns one if `hierarchical` comes back).
    fn equip(&self, st: &mut State, mechanism: Mechanism) {
        let adapt = self
            .shared
            .adapt
            .as_ref()
            .expect("only an adaptive auto switches");
        let policy = adapt.policy(mechanism);
        let layout = &self.shared.machine.layout;
        let routing = Routing::of(policy);
        for (i, worker) in st.workers.iter_mut().enumerate() {
            worker.victims = Victims::new(policy, i, &worker.cls, layout);
            worker.helped = routing.helped(i, layout);
            worker.help_turn = 0;
            worker.migration = None;
            worker.out_of_work = false;
            worker.since_balance = 0;
        }
    }
}
