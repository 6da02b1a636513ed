//! The adaptive `auto` as the engines carry it out (docs/decisions/0067-adaptive-auto.md): the
//! two policies it moves between, which one runs now, and what the controller
//! ([`crate::policy::adaptive`]) has done, shared between the thread that runs the controller
//! and the workers that follow its answer.

use crate::policy::adaptive::{self, Adaptive, Ladder, Mechanism};
use crate::policy::PolicyKind;
use crate::sync::{AtomicBool, AtomicU64, AtomicU8};
use serde::Serialize;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

/// The index ([`Mechanism::index`]) of the mechanism a system runs now: the one its adaptive
/// `auto` runs, else its configured policy's (an engine keeps its choices for both mechanisms,
/// the configured policy in the locality slot).
#[inline]
pub(crate) fn running_index(adapt: &Option<Adapt>) -> usize {
    match adapt {
        Some(adapt) => adapt.running().index(),
        None => Mechanism::Locality.index(),
    }
}

/// What an adaptive `auto` has done, in [`crate::Stats::adaptive`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AdaptiveStats {
    /// The policy running now (`cls` or the topology's locality policy).
    pub running: String,
    /// The policy the latest probe settled on.
    pub settled: String,
    /// Probes made (each runs both policies in turn and compares their throughput).
    pub probes: u64,
    /// Times a probe moved the system to the other policy.
    pub switches: u64,
    /// The length of a measurement window now, in ns: it starts at 0.25 ms and doubles, up to
    /// 2 ms, on loads whose throughput varies too much from one window to the next
    /// (docs/decisions/0099-auto-pools-its-evidence.md).
    pub window_ns: u64,
    /// Whether hubs are detected online now (`hierarchical:auto`'s rule), under the locality
    /// policy (docs/decisions/0109-auto-asks-whether-hubs-pay.md).
    pub hubs: bool,
    /// Probes of that question (each runs `hierarchical` with and without hub detection).
    pub hub_probes: u64,
    /// Times a probe turned hub detection on or off.
    pub hub_switches: u64,
}

/// The adaptive `auto` of one system.
pub(crate) struct Adapt {
    /// The policy of each mechanism, by [`Mechanism::index`].
    policies: [PolicyKind; 2],
    /// The mechanism running now (its index): written by the controller's thread, read by the
    /// workers when they look (a relaxed load: a worker that sees the change a little later
    /// runs a few activations under the previous rules, which every queue still serves).
    running: AtomicU8,
    settled: AtomicU8,
    probes: AtomicU64,
    switches: AtomicU64,
    window_ns: AtomicU64,
    /// Whether the locality policy runs with hub detection now ([`Ladder`]'s answer), written
    /// before `running` as `settled` is.
    hubs: AtomicBool,
    hub_probes: AtomicU64,
    hub_switches: AtomicU64,
}

impl Adapt {
    /// Moving between plain stealing and `locality`, starting on `locality`.
    pub(crate) fn new(locality: PolicyKind) -> Adapt {
        let start = Mechanism::Locality.index() as u8;
        Adapt {
            policies: [PolicyKind::Cls, locality],
            running: AtomicU8::new(start),
            settled: AtomicU8::new(start),
            probes: AtomicU64::new(0),
            switches: AtomicU64::new(0),
            window_ns: AtomicU64::new(adaptive::WINDOW_NS),
            hubs: AtomicBool::new(false),
            hub_probes: AtomicU64::new(0),
            hub_switches: AtomicU64::new(0),
        }
    }

    /// The meter of this system's controllers: plain stealing against locality, and whether
    /// hubs pay where the locality policy is `hierarchical` (docs/decisions/0109-auto-asks-whether-hubs-pay.md).
    pub(crate) fn meter(&self) -> Meter {
        Meter::with_ladder(if self.hub_question() {
            Ladder::with_hubs()
        } else {
            Ladder::single(Adaptive::new(Mechanism::Locality))
        })
    }

    /// Whether the controllers ask whether detected hubs pay (the locality policy is
    /// `hierarchical` without its own detection).
    fn hub_question(&self) -> bool {
        self.policies[Mechanism::Locality.index()] == PolicyKind::Hierarchical { auto_hubs: false }
    }

    /// Whether the locality policy runs with hub detection now.
    #[inline]
    pub(crate) fn hubs(&self) -> bool {
        self.hubs.load(Relaxed)
    }

    /// The mechanism running now.
    #[inline]
    pub(crate) fn running(&self) -> Mechanism {
        Mechanism::from_index(self.running.load(Relaxed) as usize)
    }

    /// The mechanism the latest probe settled on (`engine::choices::OnSwitch`).
    pub(crate) fn settled(&self) -> Mechanism {
        Mechanism::from_index(self.settled.load(Relaxed) as usize)
    }

    /// The mechanism running now and the one settled on, as one answer: [`Self::publish`]
    /// stores the settled one first and the running one with `Release`, read here with
    /// `Acquire`, so a thread that sees a settled switch's new running mechanism sees it
    /// settled too, and does not take it for a probe's (which would skip its release).
    pub(crate) fn running_and_settled(&self) -> (Mechanism, Mechanism) {
        let running = self.running.load(Acquire) as usize;
        let settled = self.settled.load(Relaxed) as usize;
        (
            Mechanism::from_index(running),
            Mechanism::from_index(settled),
        )
    }

    /// The policy of `mechanism`.
    pub(crate) fn policy(&self, mechanism: Mechanism) -> PolicyKind {
        self.policies[mechanism.index()]
    }

    /// Publishes the controllers' state after a window; returns the mechanism to run.
    fn publish(&self, ladder: &Ladder) -> Mechanism {
        let arm = ladder.current();
        let controller = ladder.base();
        // Settled and hubs first, then running with `Release`: see `running_and_settled`.
        self.settled
            .store(controller.settled().index() as u8, Relaxed);
        self.hubs.store(arm.hubs, Relaxed);
        self.running.store(arm.mechanism.index() as u8, Release);
        self.probes.store(controller.probes(), Relaxed);
        self.switches.store(controller.switches(), Relaxed);
        self.window_ns.store(ladder.window_ns(), Relaxed);
        self.hub_probes.store(ladder.hub_probes(), Relaxed);
        self.hub_switches.store(ladder.hub_switches(), Relaxed);
        arm.mechanism
    }

    /// Runs `mechanism` from now on, whatever the controller said, as if a probe had settled on
    /// it (tests that switch often).
    #[cfg(test)]
    pub(crate) fn force(&self, mechanism: Mechanism) {
        self.settled.store(mechanism.index() as u8, Relaxed);
        self.running.store(mechanism.index() as u8, Release);
    }

    pub(crate) fn stats(&self) -> AdaptiveStats {
        let name = |i: &AtomicU8| {
            self.policy(Mechanism::from_index(i.load(Relaxed) as usize))
                .to_string()
        };
        AdaptiveStats {
            running: name(&self.running),
            settled: name(&self.settled),
            probes: self.probes.load(Relaxed),
            switches: self.switches.load(Relaxed),
            window_ns: self.window_ns.load(Relaxed),
            hubs: self.hubs(),
            hub_probes: self.hub_probes.load(Relaxed),
            hub_switches: self.hub_switches.load(Relaxed),
        }
    }
}

/// The controller and the window under way, as an engine runs them: it says when the window is
/// over ([`due`](Self::due)) and closes it with the count of messages handled so far
/// ([`close`](Self::close)); the engine supplies the clock (wall or virtual) and the count. The
/// gathering `auto` (`engine/gather.rs`) runs one over its own two arms
/// ([`with`](Self::with), [`close_window`](Self::close_window)).
pub(crate) struct Meter {
    controllers: Ladder,
    /// When the window under way started (the engine's ns).
    start_ns: u64,
    /// Messages handled by all workers when it started.
    start_messages: u64,
}

impl Meter {
    /// `controller` alone, its first window starting at 0.
    pub(crate) fn with(controller: Adaptive) -> Meter {
        Meter::with_ladder(Ladder::single(controller))
    }

    /// `controllers`, their first window starting at 0.
    pub(crate) fn with_ladder(controllers: Ladder) -> Meter {
        Meter {
            controllers,
            start_ns: 0,
            start_messages: 0,
        }
    }

    /// The controller of the first question (the one controller of [`with`](Self::with)).
    pub(crate) fn controller(&self) -> &Adaptive {
        self.controllers.base()
    }

    /// Overrules the controller ([`Adaptive::overrule`]) and starts a fresh window at `now_ns`
    /// (`messages` handled so far): the one under way mixed both arms.
    pub(crate) fn overrule(&mut self, mechanism: Mechanism, now_ns: u64, messages: u64) {
        self.controllers.overrule(mechanism);
        self.start_ns = now_ns;
        self.start_messages = messages;
    }

    /// Closes the window at `now_ns`, `messages` having been handled by all workers since the
    /// system started: the controller observes it, and the next window starts. Returns it.
    pub(crate) fn close_window(&mut self, now_ns: u64, messages: u64) -> adaptive::Window {
        let window = adaptive::Window {
            elapsed_ns: now_ns.saturating_sub(self.start_ns),
            messages: messages.wrapping_sub(self.start_messages),
        };
        self.controllers.observe(window);
        self.start_ns = now_ns;
        self.start_messages = messages;
        window
    }

    /// Whether the window under way has run its length at `now_ns`.
    pub(crate) fn due(&self, now_ns: u64) -> bool {
        now_ns >= self.start_ns + self.controllers.window_ns()
    }

    /// The length of the window under way (the controller lengthens it on noisy loads).
    pub(crate) fn window_ns(&self) -> u64 {
        self.controllers.window_ns()
    }

    /// Closes the window at `now_ns`, `messages` having been handled by all workers since the
    /// system started; publishes the controller's answer in `adapt` and returns the mechanism
    /// that ran and the one to run from now on.
    /// `hub_candidates`: the wake-ups counted so far after which the hub detection would have
    /// marked an actor (`telemetry`'s `hub_candidates`).
    pub(crate) fn close(
        &mut self,
        now_ns: u64,
        messages: u64,
        hub_candidates: u64,
        adapt: &Adapt,
    ) -> (Mechanism, Mechanism) {
        if hub_candidates > 0 {
            self.controllers.hub_candidates_seen();
        }
        let ran = self.controllers.current().mechanism;
        let window = self.close_window(now_ns, messages);
        let next = adapt.publish(&self.controllers);
        tracing::trace!(
            at_ns = now_ns,
            ?ran,
            ?next,
            messages_per_ns = window.messages as f64 / window.elapsed_ns.max(1) as f64,
            "adaptive auto: window"
        );
        (ran, next)
    }
}
