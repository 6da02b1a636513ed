//! `auto` runs on the workers that pay (docs/decisions/0108-auto-gathers-its-workers.md): on a
//! machine of one NUMA node, where `auto` is plain work stealing, a controller measures while the
//! system runs whether half of the workers handle more messages than all of them, and keeps the
//! work on that half while they do.
//!
//! **Why.** A second worker pays with parallel work and costs with every message that crosses
//! to it: a cache line moved between cores per message and per wake-up. Where that transfer is
//! slow against the work per message (this project's 2-vCPU VM swings between 80–110 and
//! 400–520 ns per line round trip within minutes), two workers handle fewer messages than one:
//! `big` at 2 workers ran at 16 M messages/s in the slow regime against ~25 M at 1
//! (docs/results/comparison.md). No fixed threshold converts a measured latency into that
//! verdict (it depends on the load's own communication), so the controller measures the verdict
//! itself: throughput, as .NET's thread pool tunes its thread count by hill climbing.
//!
//! **How.** The comparison is the adaptive `auto`'s ([`crate::policy::adaptive`]): probes of
//! windows in the order *current, other, other, current*, a margin and a significance the
//! gathered count must beat, evidence pooled over inconclusive probes, probes backing off while
//! they confirm. Its *plain* arm is all the workers (it wins ties: a load on which gathering
//! gains nothing keeps its parallelism) and its other arm the gathered count. A probe whose
//! first gathered window handles less than half of the spread ones ends at once, so a parallel
//! load (fib, fjthrput) pays about one window in every sixty-odd at half speed once the probes
//! have backed off.
//!
//! **What gathering does** (the actor-centric engine carries it out, `actor_centric/gather.rs`):
//! workers at or above the active count are *retired*: stealable work wakes none of them
//! (`engine/sleepers.rs`), messages from plain threads are routed to active workers, and a
//! retired worker hands what is queued on it to an active one at its next periodic look,
//! then parks and re-checks only its own queues. Work queued for it by name (an explicit
//! placement, its timers) still wakes it. The stall guard spreads the work at once when it must
//! rescue actors from a worker stuck in a handler: a long handler needs the other workers.

use crate::engine::adapt::Meter;
use crate::policy::adaptive::{Adaptive, Mechanism};
use crate::sync::{AtomicBool, AtomicU64, AtomicUsize};
use parking_lot::Mutex;
use serde::Serialize;
use std::sync::atomic::Ordering::Relaxed;

/// What the gathering `auto` has done, in [`crate::Stats::gather`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GatherStats {
    /// The workers of the system.
    pub workers: usize,
    /// The workers that take work while gathered (half of them, rounded up).
    pub gathered_to: usize,
    /// The workers that take work now.
    pub active: usize,
    /// The count the latest probe settled on.
    pub settled: usize,
    /// Probes made (each runs both counts in turn and compares their throughput).
    pub probes: u64,
    /// Times a probe moved the system to the other count.
    pub switches: u64,
    /// Times the stall guard spread the work over every worker while it was gathered.
    pub forced_spreads: u64,
    /// Actors a retired worker handed to an active one.
    pub handed_off: u64,
    /// The length of a measurement window now, in ns (as the adaptive `auto`'s).
    pub window_ns: u64,
}

/// The longest wait between probes: 128 ms of windows (512 of the first windows' length, 64
/// of the longest). A probe of a parallel load runs two windows gathered (the switch and the
/// window that ends it, [`CLEAR_FACTOR`]), one of a load that gathering slows by less than that
/// five; and each switch moves the retired workers' actors, which the spread workers then steal
/// back. At a probe every 32 ms fib lost 5–10% of its speed on this project's VM in its fast
/// regime (probes cost several times their windows); a bound in windows let the longest windows
/// stretch the wait to a second, and fib, gathered during a slow spell of the VM's regime,
/// stayed at its one-worker speed after the spell (10 against 14 M messages/s).
const LONGEST_WAIT_NS: u64 = 128_000_000;

/// A probe ends at its first gathered window when a spread window handled this many times
/// more: a parallel load gathered on half the workers handles about half as much (0.5–0.6 of it
/// at 2 workers on this project's VM), while a load that gathering helps handles more; a window
/// 30% below its load's mean (the spread the adaptive `auto`'s windows show) still stays above
/// two thirds of a load that gathering does not hurt.
const CLEAR_FACTOR: f64 = 1.5;

/// A controller starting with every worker.
fn controller() -> Adaptive {
    Adaptive::new(Mechanism::Plain)
        .with_longest_wait_ns(LONGEST_WAIT_NS)
        .with_clear_factor(CLEAR_FACTOR)
}

/// The gathering `auto` of one system: which workers take work now, and the controller that
/// decides it.
pub(crate) struct Gather {
    workers: usize,
    gathered: usize,
    /// The workers that take work now, as the controller answered: written under `meter`'s
    /// lock; the engine carries it out (the actor-centric engine copies it into its sleepers at
    /// the next look of any worker, waking the workers it activates). Relaxed: a thread that
    /// sees a change late routes a few messages by the previous count, which every worker
    /// still serves.
    active: AtomicUsize,
    /// The controller and the window under way (the adaptive `auto`'s meter).
    meter: Mutex<Meter>,
    /// When the window under way ends: the test every worker makes before trying the lock.
    due: AtomicU64,
    forced_spreads: AtomicU64,
    handed_off: AtomicU64,
    /// The count stays where a test forced it: windows are not closed.
    held: AtomicBool,
}

impl Gather {
    /// The gathering `auto` of a system of `workers` workers: `None` for one worker (nothing to
    /// gather).
    pub(crate) fn new(workers: usize) -> Option<Gather> {
        (workers >= 2).then(|| {
            let meter = Meter::with(controller());
            Gather {
                workers,
                gathered: workers.div_ceil(2),
                active: AtomicUsize::new(workers),
                due: AtomicU64::new(meter.window_ns()),
                meter: Mutex::new(meter),
                forced_spreads: AtomicU64::new(0),
                handed_off: AtomicU64::new(0),
                held: AtomicBool::new(false),
            }
        })
    }

    /// The workers that take work now (`0..active`).
    #[inline]
    pub(crate) fn active(&self) -> usize {
        self.active.load(Relaxed)
    }

    /// The worker count of one of the controller's arms.
    fn count_of(&self, arm: Mechanism) -> usize {
        match arm {
            Mechanism::Plain => self.workers,
            Mechanism::Locality => self.gathered,
        }
    }

    /// Closes the window under way if it is over at `now_ns` (and no other thread is closing
    /// it), `messages()` having been handled by all workers since the system started (read only
    /// then: it sums every worker's counter); [`active`](Self::active) says the answer.
    pub(crate) fn tick(&self, now_ns: u64, messages: impl FnOnce() -> u64) {
        if now_ns < self.due.load(Relaxed) || self.held.load(Relaxed) {
            return;
        }
        let Some(mut meter) = self.meter.try_lock() else {
            return;
        };
        if !meter.due(now_ns) {
            return;
        }
        let window = meter.close_window(now_ns, messages());
        self.due.store(now_ns + meter.window_ns(), Relaxed);
        let after = self.count_of(meter.controller().current());
        tracing::trace!(
            at_ns = now_ns,
            before = self.active(),
            after,
            messages_per_ns = window.messages as f64 / window.elapsed_ns.max(1) as f64,
            "gathering auto: window"
        );
        self.active.store(after, Relaxed);
    }

    /// Runs on `active` workers from now on, and the controller closes no window any more
    /// (tests that move the work between counts under load, or hold it gathered).
    #[cfg(test)]
    pub(crate) fn force(&self, active: usize) {
        let _meter = self.meter.lock();
        self.held.store(true, Relaxed);
        self.active.store(active.clamp(1, self.workers), Relaxed);
    }

    /// Every worker takes work from now on: the stall guard must rescue actors from a worker
    /// stuck in a handler, which the gathered count leaves without a worker to take them. The
    /// controller takes it as a verdict for every worker, and probes again twice as late as
    /// it last waited (a producer whose long handlers hold its consumer back is rescued at
    /// every gathered probe; each of its probes ends within a slot bound). Returns the active
    /// count before, if it was smaller.
    pub(crate) fn spread_now(&self, now_ns: u64, messages: impl FnOnce() -> u64) -> Option<usize> {
        let mut meter = self.meter.lock();
        let before = self.active();
        if before == self.workers {
            return None;
        }
        meter.overrule(Mechanism::Plain, now_ns, messages());
        self.due.store(now_ns + meter.window_ns(), Relaxed);
        self.active.store(self.workers, Relaxed);
        self.forced_spreads.fetch_add(1, Relaxed);
        Some(before)
    }

    /// Counts actors a retired worker handed to an active one.
    pub(crate) fn handed_off(&self, actors: u64) {
        self.handed_off.fetch_add(actors, Relaxed);
    }

    pub(crate) fn stats(&self) -> GatherStats {
        let meter = self.meter.lock();
        let controller = meter.controller();
        GatherStats {
            workers: self.workers,
            gathered_to: self.gathered,
            active: self.active(),
            settled: self.count_of(controller.settled()),
            probes: controller.probes(),
            switches: controller.switches(),
            forced_spreads: self.forced_spreads.load(Relaxed),
            handed_off: self.handed_off.load(Relaxed),
            window_ns: controller.window_ns(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `gather` windows of `WINDOW` ns in which the system handles `rate(active)`
    /// messages per ns, and returns the active count after `windows` of them.
    fn run(gather: &Gather, windows: u64, rate: impl Fn(usize) -> f64) -> (u64, u64) {
        let (mut now, mut messages) = (0u64, 0u64);
        let mut gathered_windows = 0;
        for _ in 0..windows {
            let window = gather.stats().window_ns;
            if gather.active() < gather.workers {
                gathered_windows += 1;
            }
            now += window;
            messages += (rate(gather.active()) * window as f64) as u64;
            gather.tick(now, || messages);
        }
        (gathered_windows, windows)
    }

    #[test]
    fn one_worker_has_nothing_to_gather() {
        assert!(Gather::new(1).is_none());
        assert_eq!(Gather::new(2).unwrap().gathered, 1);
        assert_eq!(Gather::new(16).unwrap().gathered, 8);
        assert_eq!(Gather::new(3).unwrap().gathered, 2);
    }

    #[test]
    fn a_load_that_runs_faster_on_fewer_workers_gathers() {
        let gather = Gather::new(2).unwrap();
        // The slow cross-core regime: one worker handles 25 messages per µs, two 16.
        let (gathered, all) = run(
            &gather,
            400,
            |active| if active == 1 { 0.025 } else { 0.016 },
        );
        assert_eq!(gather.stats().settled, 1, "{:?}", gather.stats());
        assert_eq!(gather.active(), 1);
        assert!(
            gathered * 10 > all * 8,
            "gathered {gathered} of {all} windows"
        );
    }

    #[test]
    fn a_parallel_load_keeps_its_workers_and_pays_few_gathered_windows() {
        let gather = Gather::new(2).unwrap();
        // fib: two workers handle twice as many messages.
        let (gathered, all) = run(&gather, 4_000, |active| 0.01 * active as f64);
        let stats = gather.stats();
        assert_eq!(stats.settled, 2, "{stats:?}");
        assert_eq!(stats.switches, 0, "{stats:?}");
        assert!(stats.probes >= 5, "it keeps looking: {stats:?}");
        // Two gathered windows a probe (the switch, then the one that ends it), once the probes
        // have backed off one in ~520 windows.
        assert!(gathered * 100 < all, "gathered {gathered} of {all} windows");
    }

    #[test]
    fn a_tie_keeps_every_worker() {
        let gather = Gather::new(2).unwrap();
        // A load that does not care (the offered load decides the rate): parallelism kept.
        run(&gather, 2_000, |_| 0.02);
        assert_eq!(gather.stats().settled, 2, "{:?}", gather.stats());
        assert_eq!(gather.active(), 2);
    }

    #[test]
    fn the_stall_guard_spreads_at_once_and_the_next_probe_comes_later() {
        let gather = Gather::new(4).unwrap();
        run(&gather, 400, |active| if active == 2 { 0.03 } else { 0.01 });
        assert_eq!(gather.active(), 2);
        assert_eq!(gather.spread_now(1 << 40, || 0), Some(2));
        assert_eq!(gather.active(), 4);
        assert_eq!(gather.stats().settled, 4);
        assert_eq!(gather.stats().forced_spreads, 1);
        assert_eq!(gather.spread_now(1 << 40, || 0), None, "spread already");
        // The next probe waits at least as long as the wait before the spread did (which had
        // backed off while gathering kept winning).
        let mut now = 1u64 << 40;
        let mut messages = 0;
        for window in 0..64 {
            now += gather.stats().window_ns;
            messages += (0.01 * gather.stats().window_ns as f64) as u64;
            gather.tick(now, || messages);
            assert_eq!(gather.active(), 4, "window {window}: {:?}", gather.stats());
        }
    }
}
