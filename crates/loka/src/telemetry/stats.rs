//! [`Stats`]: the snapshot of a whole system's counters that [`crate::System::stats`] returns
//! (the live counters it is read from: `mod.rs`).

use super::{MessageCentricStats, SimStats, WorkerStats};
use serde::Serialize;

/// A snapshot of the whole system's counters, from [`crate::System::stats`].
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct Stats {
    /// The scheduler policy the system runs (what `auto` resolved to, if it was asked for).
    pub policy: String,
    /// Why that policy: the reason `auto` gave, or "named by the configuration".
    pub policy_reason: String,
    /// Per-worker counters, indexed by worker.
    pub workers: Vec<WorkerStats>,
    /// The sum of `workers`.
    pub total: WorkerStats,
    /// Actors spawned since the system started (from workers and from plain threads).
    pub actors_spawned: u64,
    /// Actors that have stopped (normally, by signal, by panic or at shutdown).
    pub actors_stopped: u64,
    /// Sends from threads that are not workers of this system that woke their actor (queued
    /// it): a send to an actor already queued or running is not counted.
    pub external_sends: u64,
    /// Messages that reached a stopped actor's mailbox and were dropped (Erlang/Akka "dead
    /// letters"); never silent: counted here and logged at debug level.
    pub dead_letters: u64,
    /// Bounded mailboxes: sends refused because the mailbox was full (overflow rule `Reject`)
    /// and `try_send`s answered `Full`. A `send_async` waiting for room is not counted.
    pub mailbox_full: u64,
    /// Bounded mailboxes: messages dropped by the overflow rule, `DropNewest` (the new message, at
    /// the send) and `DropOldest` (the oldest queued one, when the actor discards it). Not dead
    /// letters: those went to stopped actors (a doomed message still queued when its actor stops
    /// counts as a dead letter instead, never as both).
    pub overflow_dropped: u64,
    /// Actors stopped by a panic (in a handler or hook; one per actor, even when its `stopped`
    /// hook panicked after a handler did), and panics of supervised children, which are
    /// restarted in place instead of stopping (one per failure).
    pub panics: u64,
    /// Supervised children restarted in place (docs/supervision.md): fresh instances that
    /// started.
    pub restarts: u64,
    /// Supervisors that gave up because their children failed more often than their restart
    /// intensity allows ([`StopReason::Escalated`](crate::StopReason::Escalated)).
    pub escalations: u64,
    /// Parked workers woken because work arrived.
    pub unparks: u64,
    /// Actors marked as hubs (spawn option, `set_hub`, online detection).
    pub hubs: u64,
    /// Under the simulation engine: virtual time, events and the trace hash (`None` otherwise).
    pub sim: Option<SimStats>,
    /// Under an adaptive `auto` (several NUMA nodes, the actor-centric or simulation engine):
    /// the policy running, the one settled on, probes and switches (`None` otherwise).
    pub adaptive: Option<crate::AdaptiveStats>,
    /// Under `auto` on one NUMA node with several workers (the actor-centric engine): the
    /// workers taking work now, probes and switches of the controller that gathers the work on
    /// fewer of them while they handle more (`None` otherwise).
    pub gather: Option<crate::GatherStats>,
    /// Under the message-centric engine: gulps and queue steals (`None` otherwise).
    pub message_centric: Option<MessageCentricStats>,
    /// Execution policies: dedicated threads started (`thread` actors, promotions included).
    pub dedicated_threads: u64,
    /// Execution policies: actors promoted to `thread` because they were caught blocking a worker
    /// (`exec = "auto"`).
    pub promoted_to_thread: u64,
    /// Stall guard (docs/stalls.md): actors taken from the next slot or the hold of a worker
    /// that stayed in one handler past the slot bound, and queued elsewhere by the monitor
    /// (those an idle worker took and ran are counted in its `stall_rescues`).
    pub stall_rescues: u64,
    /// Stall guard: looks of the monitor that fired a stalled worker's due timers.
    pub stall_timers: u64,
    /// Stall guard: handlers the monitor saw blocking a worker in the kernel past 2 ms.
    pub stalls_blocked: u64,
    /// Execution policies: sends from an inline run to an actor further down the same inline
    /// chain (a cycle): queued, handled as a task message, never by re-entering the handler.
    pub monitor_cycles: u64,
    /// Execution policies: undeclared actors whose characteristics were measured under `auto`
    /// and that the heuristics moved off `task`.
    pub mapped_online: u64,
    /// Execution policies: `seq` actors demoted to `monitor` because wake-ups came from a second
    /// thread.
    pub seq_demotions: u64,
}

impl Stats {
    /// Actors alive now (spawned and not yet stopped).
    pub fn actors_live(&self) -> u64 {
        self.actors_spawned.saturating_sub(self.actors_stopped)
    }

    /// The name, meaning and value of every system-wide counter: what the metrics export
    /// publishes without a worker label (docs/observability.md). A unit test checks that no
    /// counter of `Stats` is missing.
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub(crate) fn system_counters(&self) -> [(&'static str, &'static str, u64); 19] {
        [
            (
                "actors_spawned",
                "Actors spawned (from workers and from plain threads).",
                self.actors_spawned,
            ),
            (
                "actors_stopped",
                "Actors stopped (normally, by signal, by panic or at shutdown).",
                self.actors_stopped,
            ),
            (
                "external_sends",
                "Sends from threads that are not workers that woke their actor.",
                self.external_sends,
            ),
            (
                "dead_letters",
                "Messages that reached a stopped actor and were dropped.",
                self.dead_letters,
            ),
            (
                "mailbox_full",
                "Sends refused by a full bounded mailbox, and try_sends answered Full.",
                self.mailbox_full,
            ),
            (
                "overflow_dropped",
                "Messages dropped by a bounded mailbox's overflow rule.",
                self.overflow_dropped,
            ),
            (
                "panics",
                "Actors stopped by a panic, and panics of supervised children.",
                self.panics,
            ),
            (
                "restarts",
                "Supervised children restarted in place.",
                self.restarts,
            ),
            (
                "escalations",
                "Supervisors that gave up (restart intensity exceeded).",
                self.escalations,
            ),
            (
                "unparks",
                "Parked workers woken because work arrived.",
                self.unparks,
            ),
            (
                "hubs",
                "Actors marked as hubs (spawn option, set_hub, online detection).",
                self.hubs,
            ),
            (
                "dedicated_threads",
                "Dedicated threads started for thread actors.",
                self.dedicated_threads,
            ),
            (
                "promoted_to_thread",
                "Actors promoted to a dedicated thread for blocking a worker.",
                self.promoted_to_thread,
            ),
            (
                "stall_rescues",
                "Actors the stall guard's monitor took from a stalled worker.",
                self.stall_rescues,
            ),
            (
                "stall_timers",
                "Looks of the stall monitor that fired a stalled worker's timers.",
                self.stall_timers,
            ),
            (
                "stalls_blocked",
                "Handlers seen blocking a worker in the kernel past 2 ms.",
                self.stalls_blocked,
            ),
            (
                "monitor_cycles",
                "Sends from an inline run to an actor further down its chain.",
                self.monitor_cycles,
            ),
            (
                "mapped_online",
                "Undeclared actors the auto execution mode moved off task.",
                self.mapped_online,
            ),
            (
                "seq_demotions",
                "Seq actors demoted to monitor (woken from a second thread).",
                self.seq_demotions,
            ),
        ]
    }
}
