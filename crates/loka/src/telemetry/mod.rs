//! Counters and their snapshot (SPEC §6).
//!
//! Each worker owns a cache-padded block of counters that only it writes (a relaxed load and store,
//! no read-modify-write on the hot path); any thread may read them for a snapshot. Events that
//! happen outside workers (sends from plain threads, dead letters, panics) go to system-wide
//! counters updated with `fetch_add`.

use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// One counter written by a single thread and read by any.
#[derive(Debug, Default)]
pub(crate) struct Counter(AtomicU64);

impl Counter {
    /// Adds `n`; only the owning worker may call this (load + store, no lock prefix).
    #[inline]
    pub(crate) fn bump(&self, n: u64) {
        self.0.store(self.0.load(Relaxed).wrapping_add(n), Relaxed);
    }
    /// Adds `n` from any thread.
    #[inline]
    pub(crate) fn add_shared(&self, n: u64) {
        self.0.fetch_add(n, Relaxed);
    }
    #[inline]
    pub(crate) fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

macro_rules! worker_counters {
    ($($(#[doc = $doc:literal])* $name:ident),* $(,)?) => {
        /// The live counters of one worker.
        #[derive(Debug, Default)]
        pub(crate) struct WorkerCounters { $(pub(crate) $name: Counter,)* }

        /// A snapshot of one worker's counters (or their sum over workers).
        #[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
        pub struct WorkerStats { $($(#[doc = $doc])* pub $name: u64,)* }

        impl WorkerCounters {
            pub(crate) fn snapshot(&self) -> WorkerStats {
                WorkerStats { $($name: self.$name.get(),)* }
            }
        }

        impl WorkerStats {
            /// Adds every counter of `other` to `self`.
            pub fn accumulate(&mut self, other: &WorkerStats) {
                $(self.$name += other.$name;)*
            }
        }
    };
}

worker_counters! {
    /// Messages (and control envelopes) handled.
    messages,
    /// Actor activations (one activation handles up to `throughput` messages).
    activations,
    /// Activations taken from the worker's non-stealable LIFO slot.
    lifo_runs,
    /// Steal attempts (one victim probed).
    steal_attempts,
    /// Successful steals (one actor each).
    steals,
    /// Times the worker parked its thread.
    parks,
    /// Actors spawned by actors running on this worker.
    spawned,
    /// Activations that ended with messages left, re-queued for fairness.
    requeues,
}

/// A snapshot of the whole system's counters, from [`crate::System::stats`].
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Per-worker counters, indexed by worker.
    pub workers: Vec<WorkerStats>,
    /// The sum of `workers`.
    pub total: WorkerStats,
    /// Actors spawned since the system started (from workers and from plain threads).
    pub actors_spawned: u64,
    /// Actors that have stopped (normally, by signal, by panic or at shutdown).
    pub actors_stopped: u64,
    /// Messages sent from threads that are not workers of this system.
    pub external_sends: u64,
    /// Messages that reached a stopped actor's mailbox and were dropped (Erlang/Akka "dead
    /// letters"); never silent: counted here and logged at debug level.
    pub dead_letters: u64,
    /// Handler panics (each stopped its actor).
    pub panics: u64,
    /// Parked workers woken because work arrived.
    pub unparks: u64,
}

impl Stats {
    /// Actors alive now (spawned and not yet stopped).
    pub fn actors_live(&self) -> u64 {
        self.actors_spawned.saturating_sub(self.actors_stopped)
    }
}

/// System-wide counters updated from any thread.
#[derive(Debug, Default)]
pub(crate) struct SystemCounters {
    pub(crate) external_spawns: Counter,
    pub(crate) actors_stopped: Counter,
    pub(crate) external_sends: Counter,
    pub(crate) dead_letters: Counter,
    pub(crate) panics: Counter,
    pub(crate) unparks: Counter,
}
