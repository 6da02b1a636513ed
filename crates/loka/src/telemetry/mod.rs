//! Counters and their snapshot (what they mean: docs/guide.md, "Telemetry").
//!
//! Each worker owns a cache-padded block of counters that only it writes (a relaxed load and store,
//! no read-modify-write on the hot path); any thread may read them for a snapshot. Events that
//! happen outside workers (sends from plain threads, dead letters, panics) go to system-wide
//! counters updated with `fetch_add`. [`Stats`], the snapshot of them all, is in `stats.rs`;
//! handler time per actor, recorded by sampling, in `handler_time.rs`.

mod handler_time;
mod stats;

pub use handler_time::CAPACITY as HANDLER_TIME_CAPACITY;
pub(crate) use handler_time::{HandlerTimes, Thread};
pub use stats::Stats;

use crate::sync::AtomicU64;
use crossbeam_utils::CachePadded;
use serde::Serialize;
use std::sync::atomic::Ordering::Relaxed;

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

/// Deepest victim-group level counted separately (deeper levels count in the last slot).
pub const MAX_LEVELS: usize = 8;
/// Queue-wait histogram buckets: bucket `b` counts waits in `[2^b, 2^(b+1))` ns.
const WAIT_BUCKETS: usize = 40;

macro_rules! worker_counters {
    ($($(#[doc = $doc:literal])* $name:ident),* $(,)?) => {
        /// The live counters of one worker.
        #[derive(Debug)]
        pub(crate) struct WorkerCounters {
            $(pub(crate) $name: Counter,)*
            /// Successful steals by the level of the victim's group (innermost first).
            pub(crate) steals_by_level: [Counter; MAX_LEVELS],
            /// Sampled time woken actors waited in a queue, log2 ns buckets.
            pub(crate) queue_wait: [Counter; WAIT_BUCKETS],
            /// The raw id of the actor this thread runs now, 0 for none: no counter, but written
            /// as often as one, by the same thread (`Exec::enter`); read by `System::actors`.
            pub(crate) running: AtomicU64,
        }

        /// A snapshot of one worker's counters (or their sum over workers).
        #[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
        pub struct WorkerStats {
            $($(#[doc = $doc])* pub $name: u64,)*
            /// Successful steals by victim-group level, innermost (g0) first.
            pub steals_by_level: Vec<u64>,
            /// 99th percentile of the sampled queue wait of woken actors, in ns (an upper bound:
            /// the top of the histogram bucket). Exposes convoys behind long jobs.
            pub queue_wait_ns_p99: u64,
            /// Median of the same samples, in ns.
            pub queue_wait_ns_p50: u64,
            /// The sampled queue-wait histogram (bucket `b`: `[2^b, 2^(b+1))` ns).
            #[serde(skip)]
            pub queue_wait_hist: Vec<u64>,
        }

        impl Default for WorkerCounters {
            fn default() -> Self {
                WorkerCounters {
                    $($name: Counter::default(),)*
                    steals_by_level: std::array::from_fn(|_| Counter::default()),
                    queue_wait: std::array::from_fn(|_| Counter::default()),
                    running: AtomicU64::new(0),
                }
            }
        }

        impl WorkerCounters {
            pub(crate) fn snapshot(&self) -> WorkerStats {
                let mut stats = WorkerStats {
                    $($name: self.$name.get(),)*
                    steals_by_level: self.steals_by_level.iter().map(Counter::get).collect(),
                    queue_wait_hist: self.queue_wait.iter().map(Counter::get).collect(),
                    ..WorkerStats::default()
                };
                stats.derive_percentiles();
                stats
            }

            /// Records one sampled queue wait (owner only).
            pub(crate) fn record_queue_wait(&self, ns: u64) {
                let bucket = (u64::BITS - ns.max(1).leading_zeros() - 1) as usize;
                self.queue_wait[bucket.min(WAIT_BUCKETS - 1)].bump(1);
            }
        }

        impl WorkerStats {
            /// The name and meaning of every plain counter (all but `steals_by_level` and the
            /// queue-wait histogram), in the order of [`counter_values`](Self::counter_values):
            /// what the metrics export publishes (docs/observability.md).
            #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
            pub(crate) const COUNTERS: &'static [(&'static str, &'static str)] =
                &[$((stringify!($name), concat!($($doc),*))),*];

            /// The value of every plain counter, in the order of [`COUNTERS`](Self::COUNTERS).
            #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
            pub(crate) fn counter_values(&self) -> impl Iterator<Item = u64> {
                [$(self.$name),*].into_iter()
            }

            /// Adds every counter of `other` to `self`.
            pub fn accumulate(&mut self, other: &WorkerStats) {
                $(self.$name += other.$name;)*
                add_vec(&mut self.steals_by_level, &other.steals_by_level);
                add_vec(&mut self.queue_wait_hist, &other.queue_wait_hist);
                self.derive_percentiles();
            }

            /// `self` less every counter of `other` (0 where `other` has more): the dedicated
            /// threads' share of a total, with `other` the sum of the workers read for it.
            pub(crate) fn minus(&self, other: &WorkerStats) -> WorkerStats {
                let sub = |a: &[u64], b: &[u64]| -> Vec<u64> {
                    a.iter()
                        .enumerate()
                        .map(|(i, &x)| x.saturating_sub(b.get(i).copied().unwrap_or(0)))
                        .collect()
                };
                let mut diff = WorkerStats {
                    $($name: self.$name.saturating_sub(other.$name),)*
                    steals_by_level: sub(&self.steals_by_level, &other.steals_by_level),
                    queue_wait_hist: sub(&self.queue_wait_hist, &other.queue_wait_hist),
                    ..WorkerStats::default()
                };
                diff.derive_percentiles();
                diff
            }

            fn derive_percentiles(&mut self) {
                self.queue_wait_ns_p99 = percentile(&self.queue_wait_hist, 0.99);
                self.queue_wait_ns_p50 = percentile(&self.queue_wait_hist, 0.50);
            }

            /// Executions on the actor's home PU as a share of all activations with a home.
            pub fn home_pu_share(&self) -> f64 {
                let all = self.exec_home_pu + self.exec_home_node + self.exec_remote_node;
                if all == 0 { 0.0 } else { self.exec_home_pu as f64 / all as f64 }
            }
        }
    };
}

fn add_vec(into: &mut Vec<u64>, from: &[u64]) {
    if into.len() < from.len() {
        into.resize(from.len(), 0);
    }
    for (a, b) in into.iter_mut().zip(from) {
        *a += b;
    }
}

/// The upper edge of queue-wait bucket `bucket`, in ns: `2^(bucket+1) - 1`.
pub(crate) fn wait_bucket_upper_ns(bucket: usize) -> u64 {
    (1u64 << (bucket + 1).min(63)) - 1
}

/// The upper edge of the histogram bucket holding quantile `q` (0 with no samples).
fn percentile(hist: &[u64], q: f64) -> u64 {
    let total: u64 = hist.iter().sum();
    if total == 0 {
        return 0;
    }
    let rank = ((total as f64) * q).ceil().max(1.0) as u64;
    let mut seen = 0;
    for (bucket, &n) in hist.iter().enumerate() {
        seen += n;
        if seen >= rank {
            return wait_bucket_upper_ns(bucket);
        }
    }
    u64::MAX
}

worker_counters! {
    /// Messages (and control envelopes) handled.
    messages,
    /// Actor activations (one activation handles up to `throughput` messages and sends into
    /// queues, or a backlog's gulp: `runtime/budget.rs`).
    activations,
    /// Activations taken from the worker's non-stealable next slot.
    lifo_runs,
    /// Steal attempts (one victim probed).
    steal_attempts,
    /// Successful steals (one actor each).
    steals,
    /// Idle cycles that restarted weighted stealing at g0 (LGS back-off resets).
    backoff_resets,
    /// Times the worker parked its thread.
    parks,
    /// Actors spawned by actors running on this worker.
    spawned,
    /// Actors that stopped on this worker.
    stopped,
    /// Activations that ended with messages left, re-queued for fairness.
    requeues,
    /// Of those, activations that stopped at a message a sender had claimed but not yet written
    /// (that sender was preempted mid-send); the worker yields its core before running the actor
    /// again.
    requeues_waiting,
    /// Wake-ups this worker took from a neighbour's inbox before re-running an actor that had
    /// used its budget (a neighbour descheduled by the OS would otherwise hold them).
    inbox_helps,
    /// Actors this worker took, while idle, from the next slot or the hold of a worker that had
    /// stayed in one handler past the stall guard's slot bound (docs/stalls.md).
    slot_rescues,
    /// Rescues this worker tried and gave up because the stalled handler was still feeding the
    /// actors it held (more messages queued at each look; docs/stalls.md).
    slot_rescues_declined,
    /// Activations on the actor's home PU (its HPU; under `cls` the worker that first ran it).
    exec_home_pu,
    /// Activations elsewhere on the home PU's NUMA node.
    exec_home_node,
    /// Activations on another NUMA node than the home PU's.
    exec_remote_node,
    /// Wake-ups sent to the tail (or head) of a distant home PU's queue (LGS Listing 5.3).
    hpu_pushes,
    /// Actors unpinned by the automatic hub release (`lgs:auto`).
    hubs_released,
    /// Queue-wait samples taken.
    queue_wait_samples,
    /// Activations on another worker than the actor's previous activation.
    migrations,
    /// Steals of foreign actors back to their home node (hierarchical, Alg. 4.4 step 1).
    bring_home_steals,
    /// Actors marked as hubs here (spawn option, `set_hub`, online detection).
    hubs,
    /// Wake-ups after which the online hub detection would have marked the actor a hub, counted
    /// while `auto` runs `hierarchical` without it (nothing is marked): whether the question
    /// "do detected hubs pay?" has anything to answer (docs/decisions/0109-auto-asks-whether-hubs-pay.md).
    hub_candidates,
    /// Load-balancing rounds this worker computed (hierarchical, Alg. 4.1).
    balance_rounds,
    /// Actors this worker pulled along a migration path (hierarchical, Alg. 4.2).
    balance_migrations,
    /// Message-centric: queues this worker gulped (took whole).
    gulps,
    /// Message-centric: letters those gulps took.
    gulped,
    /// Message-centric: gulps skipped because another worker was processing the queue (it had
    /// been stolen while its previous gulp ran).
    missed_gulps,
    /// Message-centric: steal attempts that found no candidate queue at the victim.
    steal_no_candidate,
    /// Message-centric: steal attempts that found a candidate and watch it: it is taken at a
    /// later attempt if its letters are still waiting.
    steal_deferred,
    /// Message-centric: steal attempts whose wait-free swap failed (another thief).
    steal_failed_swap,
    /// Message-centric: letters in the queues this worker stole, at the moment of the steal.
    letters_stolen,
    /// Message-centric: idle actors re-bound to this worker's queues because one of its
    /// handlers posted to them (they follow their posters).
    actors_followed,
    /// Message-centric: letters that moved with those actors, taken out of their old queue
    /// into the gulp of the handler they followed.
    letters_followed,
    /// Places: steals of a hinted actor from a worker (or a place's shared queue) of another
    /// place than the thief's (LASSI's "counter-productive steals": the actor leaves the place
    /// its hint named; an actor without a hint has no place to leave).
    cross_place_steals,
    /// Execution policies: activations run inline on the sending thread (`monitor`, `seq`).
    inline_runs,
    /// Execution policies: messages handled by those inline runs (included in `messages`).
    inline_messages,
    /// Execution policies: inline runs refused because the inline chain on this thread was
    /// already at its cap; the actor was queued instead.
    inline_depth_fallbacks,
    /// Wake-ups LGS would have sent to a distant home PU that could not take them at once (its
    /// queue longer than this worker's, or asleep on this worker's node while this worker had
    /// nothing else to run), run here instead.
    hpu_yields,
    /// LGS steal attempts that left an idle victim on another NUMA node its own queue (the
    /// victim takes it at its next look; docs/decisions/0105-an-idle-home-takes-its-own.md).
    /// Last in the block, so that the counters before it keep their places.
    steals_left_home,
}

pub use crate::engine::stats::{MessageCentricStats, SimStats};

/// Every counter of one system: a cache-padded block per worker, and the system-wide ones.
#[derive(Debug)]
pub(crate) struct Counters {
    workers: Box<[CachePadded<WorkerCounters>]>,
    /// The counters of dedicated threads (`thread` actors), one block each, added to the total.
    dedicated: parking_lot::Mutex<Vec<std::sync::Arc<CachePadded<WorkerCounters>>>>,
    pub(crate) system: SystemCounters,
}

impl Counters {
    /// Messages handled by the workers so far (the dedicated threads' not included): what the
    /// adaptive `auto` measures its windows by (`engine/adapt.rs`).
    pub(crate) fn worker_messages(&self) -> u64 {
        self.workers.iter().map(|w| w.messages.get()).sum()
    }

    /// Hub candidates counted by all workers so far (`hub_candidates`): what an adaptive
    /// `auto`'s meter reads at the end of each window.
    pub(crate) fn worker_hub_candidates(&self) -> u64 {
        self.workers.iter().map(|w| w.hub_candidates.get()).sum()
    }

    pub(crate) fn new(workers: usize) -> Self {
        Counters {
            workers: (0..workers)
                .map(|_| CachePadded::new(WorkerCounters::default()))
                .collect(),
            dedicated: parking_lot::Mutex::new(Vec::new()),
            system: SystemCounters::default(),
        }
    }

    /// A counter block for a new dedicated thread (only that thread bumps it).
    pub(crate) fn new_dedicated(&self) -> std::sync::Arc<CachePadded<WorkerCounters>> {
        let block = std::sync::Arc::new(CachePadded::new(WorkerCounters::default()));
        self.dedicated.lock().push(std::sync::Arc::clone(&block));
        block
    }

    /// Worker `w`'s counters (only worker `w` may bump them).
    #[inline]
    pub(crate) fn worker(&self, w: usize) -> &WorkerCounters {
        &self.workers[w]
    }

    /// The raw ids of the actors the workers and dedicated threads run now (a snapshot).
    pub(crate) fn running(&self) -> Vec<u64> {
        let dedicated = self.dedicated.lock();
        let threads = self.workers.iter().map(|w| &**w);
        threads
            .chain(dedicated.iter().map(|d| &***d))
            .map(|c| c.running.load(Relaxed))
            .filter(|&id| id != 0)
            .collect()
    }

    /// What each worker and dedicated thread runs now (raw actor ids, 0: none), for the
    /// handler-time sampler: collected into `into`, which is cleared first (reused between
    /// rounds, so a round allocates nothing once it has grown).
    pub(crate) fn running_by_thread(&self, into: &mut Vec<(Thread, u64)>) {
        into.clear();
        into.extend(
            self.workers
                .iter()
                .enumerate()
                .map(|(w, c)| (Thread::Worker(w), c.running.load(Relaxed))),
        );
        let dedicated = self.dedicated.lock();
        into.extend(
            dedicated
                .iter()
                .map(|d| (Thread::Dedicated, d.running.load(Relaxed))),
        );
    }

    /// A snapshot of every counter.
    pub(crate) fn stats(&self) -> Stats {
        let workers: Vec<_> = self.workers.iter().map(|w| w.snapshot()).collect();
        let mut total = WorkerStats::default();
        for w in &workers {
            total.accumulate(w);
        }
        for d in self.dedicated.lock().iter() {
            total.accumulate(&d.snapshot());
        }
        let system = &self.system;
        Stats {
            policy: String::new(),
            policy_reason: String::new(),
            actors_spawned: total.spawned + system.external_spawns.get(),
            actors_stopped: total.stopped + system.actors_stopped.get(),
            external_sends: system.external_sends.get(),
            dead_letters: system.dead_letters.get(),
            mailbox_full: system.mailbox_full.get(),
            overflow_dropped: system.overflow_dropped.get(),
            panics: system.panics.get(),
            restarts: system.restarts.get(),
            escalations: system.escalations.get(),
            unparks: system.unparks.get(),
            hubs: total.hubs + system.external_hubs.get(),
            sim: None,
            adaptive: None,
            gather: None,
            message_centric: None,
            dedicated_threads: system.dedicated_threads.get(),
            promoted_to_thread: system.promoted_to_thread.get(),
            stall_rescues: system.stall_rescues.get(),
            stall_timers: system.stall_timers.get(),
            stalls_blocked: system.stalls_blocked.get(),
            monitor_cycles: system.monitor_cycles.get(),
            mapped_online: system.mapped_online.get(),
            seq_demotions: system.seq_demotions.get(),
            workers,
            total,
        }
    }
}

/// System-wide counters updated from any thread.
#[derive(Debug, Default)]
pub(crate) struct SystemCounters {
    pub(crate) external_spawns: Counter,
    pub(crate) actors_stopped: Counter,
    pub(crate) external_sends: Counter,
    pub(crate) dead_letters: Counter,
    pub(crate) mailbox_full: Counter,
    pub(crate) overflow_dropped: Counter,
    pub(crate) panics: Counter,
    pub(crate) restarts: Counter,
    pub(crate) escalations: Counter,
    pub(crate) unparks: Counter,
    pub(crate) external_hubs: Counter,
    pub(crate) dedicated_threads: Counter,
    pub(crate) promoted_to_thread: Counter,
    pub(crate) monitor_cycles: Counter,
    pub(crate) stall_rescues: Counter,
    pub(crate) stall_timers: Counter,
    pub(crate) stalls_blocked: Counter,
    pub(crate) seq_demotions: Counter,
    pub(crate) mapped_online: Counter,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_come_from_the_histogram() {
        let c = WorkerCounters::default();
        for _ in 0..98 {
            c.record_queue_wait(100); // bucket 6: [64, 128)
        }
        c.record_queue_wait(5_000); // bucket 12
        c.record_queue_wait(1_000_000); // bucket 19
        let s = c.snapshot();
        assert_eq!(s.queue_wait_ns_p50, 127);
        assert_eq!(s.queue_wait_ns_p99, 8191);
        let mut total = WorkerStats::default();
        total.accumulate(&s);
        total.accumulate(&s);
        assert_eq!(total.queue_wait_ns_p99, 8191);
        assert_eq!(total.queue_wait_hist.iter().sum::<u64>(), 200);
        let half = total.minus(&s);
        assert_eq!(half, s, "the total less one of its two parts is the other");
    }

    /// Every system-wide counter of `Stats` (a number at the top level of its JSON) is in
    /// `system_counters`, and every per-worker counter of `WorkerStats` in `COUNTERS`: the
    /// metrics export publishes them all (docs/observability.md).
    #[test]
    fn the_export_lists_every_counter() {
        let listed: Vec<&str> = Stats::default()
            .system_counters()
            .iter()
            .map(|c| c.0)
            .collect();
        let json = serde_json::to_value(Stats::default()).unwrap();
        for (key, value) in json.as_object().unwrap() {
            if value.is_number() {
                assert!(
                    listed.contains(&key.as_str()),
                    "`Stats::{key}` is not exported"
                );
            }
        }
        let listed: Vec<&str> = WorkerStats::COUNTERS.iter().map(|c| c.0).collect();
        let json = serde_json::to_value(WorkerStats::default()).unwrap();
        for (key, value) in json.as_object().unwrap() {
            let derived = key.starts_with("queue_wait_ns_");
            if value.is_number() && !derived {
                assert!(
                    listed.contains(&key.as_str()),
                    "`WorkerStats::{key}` is not exported"
                );
            }
        }
        assert_eq!(
            WorkerStats::default().counter_values().count(),
            WorkerStats::COUNTERS.len()
        );
        for (name, doc) in WorkerStats::COUNTERS {
            assert!(!doc.trim().is_empty(), "`{name}` has no description");
        }
    }
}
