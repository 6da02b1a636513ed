//! The stall guard's settings (`[stall]`; docs/stalls.md).

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The stall guard of the actor-centric engine (`[stall]` in TOML; docs/stalls.md): while a
/// worker stays in one handler, the actors only it could run (its next slot and its held actor)
/// move to a worker that is free, its due timers fire elsewhere, and an actor caught blocking in
/// the kernel twice moves to a thread of its own. Off with one worker (nowhere else to run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StallGuard {
    /// Whether the guard runs (a monitor thread per system, and the rescue protocol).
    pub guard: bool,
    /// Microseconds a woken actor may wait in a busy worker's next slot before an idle worker
    /// takes it ([`SLOT_US`](Self::SLOT_US) by default; `docs/stalls.md` derives it).
    pub slot_us: u64,
    /// Microseconds between two looks of the monitor, which rescues for workers that are all
    /// asleep or busy ([`TICK_US`](Self::TICK_US) by default).
    pub tick_us: u64,
    /// Whether an actor the monitor caught blocking a worker twice moves to its own thread
    /// (execution policy `thread`).
    pub promote: bool,
}

impl Default for StallGuard {
    fn default() -> Self {
        StallGuard {
            guard: true,
            slot_us: Self::SLOT_US,
            tick_us: Self::TICK_US,
            promote: true,
        }
    }
}

impl StallGuard {
    /// The default slot bound: 50 µs. Moving an actor to another core costs it its cache lines
    /// (a few µs for a small actor on this host's ~100 ns cross-core line transfers), so an
    /// actor that has waited ten times that is better off moved; shorter would tear ping-pong
    /// pairs whose handlers are merely long-ish.
    pub const SLOT_US: u64 = 50;
    /// The default monitor period: 1 ms, a few µs of the monitor's time per look (well under 1%
    /// of a core) and a rescue within about two periods when no worker is idle and looking.
    pub const TICK_US: u64 = 1_000;
    /// The shortest accepted monitor period: 100 µs. Each look wakes a thread (~5 µs on a VM);
    /// more often than this, the monitor itself takes a noticeable share of a core.
    pub const MIN_TICK_US: u64 = 100;
    /// The longest accepted bound or period: one second; beyond it the guard would not guard.
    pub const MAX_US: u64 = 1_000_000;

    /// Whether the guard runs on an actor-centric system of `workers` workers: configured on,
    /// another worker to take what it rescues, and the heavy barrier its protocol needs
    /// available on this kernel (docs/stalls.md).
    pub(crate) fn runs(&self, workers: usize) -> bool {
        self.guard && workers > 1 && crate::sync::asymmetric::available()
    }

    pub(crate) fn slot_bound(&self) -> Duration {
        Duration::from_micros(self.slot_us)
    }
    pub(crate) fn tick(&self) -> Duration {
        Duration::from_micros(self.tick_us)
    }
}

impl StallGuard {
    /// The first key out of its range, with its value and why (`Config::validate` words the
    /// error).
    pub(crate) fn out_of_range(&self) -> Option<(&'static str, String, String)> {
        if !(1..=StallGuard::MAX_US).contains(&self.slot_us) {
            return Some((
                "stall.slot_us",
                self.slot_us.to_string(),
                format!(
                    "between 1 and {} µs: the longest a woken actor waits behind a busy handler",
                    StallGuard::MAX_US
                ),
            ));
        }
        if !(StallGuard::MIN_TICK_US..=StallGuard::MAX_US).contains(&self.tick_us) {
            return Some((
                "stall.tick_us",
                self.tick_us.to_string(),
                format!(
                    "between {} and {} µs: a faster monitor takes a share of a core, a slower one \
                     guards nothing",
                    StallGuard::MIN_TICK_US,
                    StallGuard::MAX_US
                ),
            ));
        }
        None
    }
}
