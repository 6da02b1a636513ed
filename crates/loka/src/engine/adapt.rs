//! The adaptive `auto` as the engines carry it out (docs/decisions/0067-adaptive-auto.md): the
//! two policies it moves between, which one runs now, and what the controller
//! ([`crate::policy::adaptive`]) has done, shared between the thread that runs the controller
//! and the workers that follow its answer.

use crate::policy::adaptive::{Adaptive, Mechanism};
use crate::policy::PolicyKind;
use crate::sync::{AtomicU64, AtomicU8};
use serde::Serialize;
use std::sync::atomic::Ordering::Relaxed;

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
        }
    }

    /// The controller an engine runs for this system.
    pub(crate) fn controller(&self) -> Adaptive {
        Adaptive::new(Mechanism::Locality)
    }

    /// The mechanism running now.
    #[inline]
    pub(crate) fn running(&self) -> Mechanism {
        Mechanism::from_index(self.running.load(Relaxed) as usize)
    }

    /// The policy of `mechanism`.
    pub(crate) fn policy(&self, mechanism: Mechanism) -> PolicyKind {
        self.policies[mechanism.index()]
    }

    /// Publishes the controller's state after a window; returns the mechanism to run.
    pub(crate) fn publish(&self, controller: &Adaptive) -> Mechanism {
        let running = controller.current();
        self.running.store(running.index() as u8, Relaxed);
        self.settled
            .store(controller.settled().index() as u8, Relaxed);
        self.probes.store(controller.probes(), Relaxed);
        self.switches.store(controller.switches(), Relaxed);
        running
    }

    /// Runs `mechanism` from now on, whatever the controller said (tests that switch often).
    #[cfg(test)]
    pub(crate) fn force(&self, mechanism: Mechanism) {
        self.running.store(mechanism.index() as u8, Relaxed);
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
        }
    }
}
