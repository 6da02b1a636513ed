//! The timer clock: what a tick is, which shard a timer goes to, arming one, firing the due ones,
//! and how long an idle worker may sleep (docs/timers.md).
//!
//! Real engines count wall-clock milliseconds since the system started; the simulation counts
//! microseconds of its virtual time, so a timer there fires at the virtual instant it names, and a
//! one-second timeout costs no second of real time. Deadlines are rounded *up* to the next tick
//! and a timer fires once the clock has reached its tick, so it never fires early; how late it
//! fires is measured (docs/results/timers.md).
//!
//! Each worker has its own shard of timers (a wheel behind its own lock): a timer armed by an
//! actor goes to the shard of the worker running it and normally fires there, where the actor's
//! state is warm, as Erlang's per-scheduler timer wheels do. Timers armed outside the workers are
//! spread round robin. A worker looks at its shard every few dozen activations (one relaxed load
//! while the shard is empty) and before it parks; a parked worker sleeps until its shard's next
//! deadline and no longer.

use super::timer::{Action, TimerId};
use super::{Exec, Runtime, Shared};
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

/// One tick of the wall clock, in nanoseconds (1 ms, as Erlang's and tokio's wheels).
pub(crate) const WALL_TICK_NS: u64 = 1_000_000;
/// One tick of the simulation's virtual clock, in nanoseconds (1 µs).
pub(crate) const VIRTUAL_TICK_NS: u64 = 1_000;

/// The monotonic clock in nanoseconds: `CLOCK_MONOTONIC`, the clock `std::time::Instant` reads
/// on Unix, without `Instant`'s arithmetic (a `timespec` subtraction with its overflow checks and
/// a 128-bit `Duration` product: about 50 instructions of a read). The timer clock (every timer
/// armed reads it, docs/decisions/0076-inline-timer-actions.md) and the actor-centric engine's
/// sampled queue waits read it.
#[cfg(unix)]
#[inline]
pub(crate) fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// `clock` read in nanoseconds. Only for clocks that exist wherever the caller is compiled:
/// `CLOCK_MONOTONIC` on every Unix, `CLOCK_MONOTONIC_COARSE` on Linux.
#[cfg(unix)]
#[inline]
fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` writes one `timespec` to the valid pointer it is given; the
    // callers pass clocks that exist on their targets (it cannot fail with them).
    unsafe { libc::clock_gettime(clock, &mut ts) };
    timespec_ns(&ts)
}

/// A `timespec` in nanoseconds (a monotonic clock's: never negative, wrapping after 584 years).
#[cfg(unix)]
#[inline]
fn timespec_ns(ts: &libc::timespec) -> u64 {
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// Nanoseconds since the first call (elsewhere than Unix).
#[cfg(not(unix))]
pub(crate) fn monotonic_ns() -> u64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    ORIGIN.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// A long timer's lateness that reading the coarse clock may add, at most, against its delay:
/// one part in this many. A timer whose delay is shorter reads the precise clock.
const COARSE_PRECISION: u64 = 100;
/// The coarsest tick of the coarse clock worth reading: a kernel ticking less often than this
/// (or a coarse clock that says so) leaves every timer on the precise clock.
const COARSE_MAX_RESOLUTION_NS: u64 = 10_000_000;

/// The timer clock of a wall-clock system: its origin, and when a timer may read the coarse clock
/// instead of the precise one (docs/decisions/0088-long-timers-read-the-coarse-clock.md).
///
/// `CLOCK_MONOTONIC_COARSE` is the kernel's monotonic clock as of its last tick: 5 ns a read
/// against 23 ns for `CLOCK_MONOTONIC` on this project's VM, a fifth of arming and cancelling a
/// timer, and behind the precise clock by less than one kernel tick (`clock_getres`: 4 ms at
/// 250 Hz, 1 ms at 1000 Hz). A timer due far enough ahead reads it and adds two ticks of it to
/// its delay: it cannot fire early, and fires late by at most two kernel ticks more, a hundredth
/// of its delay or less. Shorter timers read the precise clock.
pub(crate) struct TimerClock {
    /// [`monotonic_ns`] when the system started.
    epoch_ns: u64,
    /// Added to a delay counted from the coarse clock: two of its ticks.
    coarse_margin_ns: u64,
    /// The shortest delay counted from the coarse clock (`u64::MAX`: none, there is no coarse
    /// clock here).
    coarse_from_ns: u64,
}

impl TimerClock {
    /// The clock of a system starting now.
    pub(crate) fn new() -> Self {
        Self::with_coarse_resolution(coarse_resolution_ns())
    }

    /// [`new`](Self::new) with the coarse clock's resolution given (`None`: no coarse clock).
    fn with_coarse_resolution(resolution: Option<u64>) -> Self {
        let (coarse_margin_ns, coarse_from_ns) = match resolution {
            Some(r) if r > 0 && r <= COARSE_MAX_RESOLUTION_NS => (2 * r, 2 * r * COARSE_PRECISION),
            _ => (0, u64::MAX),
        };
        TimerClock {
            epoch_ns: monotonic_ns(),
            coarse_margin_ns,
            coarse_from_ns,
        }
    }

    /// Nanoseconds of the precise clock since the system started.
    #[inline]
    pub(crate) fn elapsed_ns(&self) -> u64 {
        monotonic_ns().saturating_sub(self.epoch_ns)
    }

    /// Now, for a deadline `delay_ns` ahead, in nanoseconds since the system started: never
    /// before `elapsed_ns()` read at the call, and from the coarse clock (later by up to its
    /// margin) when the delay is long enough for it.
    #[inline]
    pub(crate) fn stamp_ns(&self, delay_ns: u64) -> u64 {
        if delay_ns >= self.coarse_from_ns {
            coarse_monotonic_ns()
                .saturating_sub(self.epoch_ns)
                .saturating_add(self.coarse_margin_ns)
        } else {
            self.elapsed_ns()
        }
    }
}

/// `CLOCK_MONOTONIC_COARSE` in nanoseconds (see [`TimerClock`]).
#[cfg(all(target_os = "linux", not(miri)))]
#[inline]
fn coarse_monotonic_ns() -> u64 {
    // (`CLOCK_MONOTONIC_COARSE` exists on Linux since 2.6.32.)
    clock_ns(libc::CLOCK_MONOTONIC_COARSE)
}

/// The resolution of `CLOCK_MONOTONIC_COARSE` (the kernel's tick), if it has one.
#[cfg(all(target_os = "linux", not(miri)))]
fn coarse_resolution_ns() -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_getres` writes one `timespec` to the valid pointer it is given.
    let ok = unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC_COARSE, &mut ts) } == 0;
    ok.then(|| timespec_ns(&ts))
}

/// No coarse clock elsewhere (nor under Miri): every timer reads the precise clock.
#[cfg(not(all(target_os = "linux", not(miri))))]
fn coarse_resolution_ns() -> Option<u64> {
    None
}

/// Never read without a coarse clock ([`TimerClock`] has no delay long enough).
#[cfg(not(all(target_os = "linux", not(miri))))]
fn coarse_monotonic_ns() -> u64 {
    monotonic_ns()
}

impl Shared {
    /// Nanoseconds of the timer clock since the system started (wall-clock engines).
    #[inline]
    pub(crate) fn elapsed_ns(&self) -> u64 {
        self.timer_clock.elapsed_ns()
    }

    /// The wall clock in ticks (floored: a timer due at tick `t` fires once this reaches `t`).
    #[inline]
    pub(crate) fn wall_tick(&self) -> u64 {
        self.elapsed_ns() / WALL_TICK_NS
    }

    /// Fires the timers of `shard` that are due by the wall clock (real engines). One relaxed load
    /// when the shard is empty. Returns whether anything fired.
    #[inline]
    pub(crate) fn fire_timers(&self, shard: usize) -> bool {
        match self.timers.next_deadline(shard) {
            None => false,
            Some(due) => {
                let now = self.wall_tick();
                due <= now && self.timers.fire_due(shard, now) > 0
            }
        }
    }

    /// How long `shard`'s worker may sleep before its next timer is due: `None` with no timer,
    /// zero when one is due now.
    pub(crate) fn timer_sleep(&self, shard: usize) -> Option<Duration> {
        let due = self.timers.next_deadline(shard)?;
        let at = Duration::from_nanos(due.saturating_mul(WALL_TICK_NS));
        Some(at.saturating_sub(Duration::from_nanos(self.elapsed_ns())))
    }

    /// Parks the calling worker thread until it is unparked or its shard's next timer is due;
    /// returns whether a timer is due (the worker should leave its parking loop and fire it).
    pub(crate) fn park_until_timer(&self, shard: usize) -> bool {
        self.park_until_timer_within(shard, None).0
    }

    /// As [`park_until_timer`](Self::park_until_timer), but for at most `cap` if given. Returns
    /// whether a timer is due and whether `cap` ran out (either way the worker should leave its
    /// parking loop: to fire the timer, or to take the look it parked for).
    pub(crate) fn park_until_timer_within(
        &self,
        shard: usize,
        cap: Option<Duration>,
    ) -> (bool, bool) {
        let timer = self.timer_sleep(shard);
        if timer.is_some_and(|d| d.is_zero()) {
            return (true, false);
        }
        // Read only with a cap: an uncapped park needs no clock.
        let start = cap.map(|cap| (std::time::Instant::now(), cap));
        match (timer, cap) {
            (None, None) => std::thread::park(),
            (Some(d), None) | (None, Some(d)) => std::thread::park_timeout(d),
            (Some(d), Some(c)) => std::thread::park_timeout(d.min(c)),
        }
        (
            self.timer_sleep(shard).is_some_and(|d| d.is_zero()),
            start.is_some_and(|(start, cap)| start.elapsed() >= cap),
        )
    }
}

impl Runtime {
    /// [`timer_now_ns`](Self::timer_now_ns) for a deadline `delay_ns` ahead: never earlier, and
    /// under the wall clock read from the coarse clock when the delay is long enough for it
    /// ([`TimerClock::stamp_ns`]).
    #[inline]
    pub(crate) fn timer_stamp_ns(&self, delay_ns: u64) -> u64 {
        if self.virtual_time {
            self.timer_now_ns()
        } else {
            self.shared.timer_clock.stamp_ns(delay_ns)
        }
    }

    /// The clock a gulp's time limit reads (`runtime/budget.rs`), after `processed` envelopes
    /// and `charged_ns` of declared compute in the running activation: the timer clock, except
    /// under virtual time, whose clock stands still while an activation runs on the host (its
    /// cost is known only at its end): there the engine's estimate of the time the activation
    /// has reached.
    pub(crate) fn gulp_clock_ns(&self, processed: usize, charged_ns: u64) -> u64 {
        if self.virtual_time {
            self.core
                .activation_clock_ns(processed, charged_ns)
                .unwrap_or_else(|| self.timer_now_ns())
        } else {
            self.shared.elapsed_ns()
        }
    }

    /// Nanoseconds of the timer clock now: the engine's virtual time, or wall-clock time since
    /// the system started.
    pub(crate) fn timer_now_ns(&self) -> u64 {
        if self.virtual_time {
            self.core.virtual_now_ns().unwrap_or(0)
        } else {
            self.shared.elapsed_ns()
        }
    }

    /// `ns` in ticks of this system's timer clock, rounded up. By the constant of each clock,
    /// not by a tick length read at run time: a division by a constant is a multiplication, by a
    /// variable a `div` of 20 to 40 cycles, a sixth of arming a timer.
    #[inline]
    fn ns_to_ticks(&self, ns: u64) -> u64 {
        if self.virtual_time {
            ns.div_ceil(VIRTUAL_TICK_NS)
        } else {
            ns.div_ceil(WALL_TICK_NS)
        }
    }

    /// `d` in ticks, rounded up, at least one (a period).
    pub(crate) fn ticks(&self, d: Duration) -> u64 {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.ns_to_ticks(ns).max(1)
    }

    /// The shard a timer armed from `from` goes to: the running worker's, else round robin.
    fn timer_shard(&self, from: Option<&Exec>) -> usize {
        let shards = self.shared.timers.shards();
        // A compare before the remainder: a worker's index is below the shard count whenever
        // there is a shard per worker (the real engines), and a `div` costs 20 to 40 cycles.
        let within = |i: usize| if i < shards { i } else { i % shards };
        match from.and_then(Exec::worker) {
            Some(w) if !self.virtual_time => within(w),
            _ => within(self.shared.timer_turn.fetch_add(1, Relaxed)),
        }
    }

    /// Arms a timer: `action` runs once `delay` has passed (never earlier), then every `period`
    /// if one is given. `from`: the thread arming it, if it is an engine's worker (or a dedicated
    /// thread).
    pub(crate) fn arm_timer(
        &self,
        delay: Duration,
        period: Option<Duration>,
        action: Action,
        from: Option<&Exec>,
    ) -> TimerId {
        let delay_ns = u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX / 2);
        let when = self.ns_to_ticks(self.timer_stamp_ns(delay_ns).saturating_add(delay_ns));
        let period = period.map(|p| self.ticks(p));
        let shard = self.timer_shard(from);
        let (id, earliest) = self.shared.timers.insert(shard, when, period, action);
        // The worker that owns the shard looks at it before it parks: no need to wake itself.
        let own = !self.virtual_time && from.and_then(Exec::worker) == Some(shard);
        if earliest && !own {
            self.core.timer_armed(shard);
        }
        id
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A deadline never counts from before the precise clock read just before it: a long delay
    /// counted from the coarse clock (when there is one) and a short one from the precise clock
    /// ([`TimerClock::stamp_ns`], what arming a timer and a receive timeout's mark read).
    /// Without the margin, the coarse clock's lag (up to a kernel tick) shows on nearly every
    /// reading.
    #[test]
    fn a_deadline_never_counts_from_before_the_precise_clock() {
        let clock = TimerClock::new();
        let long = clock.coarse_from_ns.min(10_000_000_000);
        for _ in 0..20_000 {
            let before = clock.elapsed_ns();
            assert!(clock.stamp_ns(long) >= before, "a long timer early");
            let before = clock.elapsed_ns();
            assert!(clock.stamp_ns(1_000_000) >= before, "a short one early");
        }
        if coarse_resolution_ns().is_some() {
            // Late by no more than the margin and the time between the readings.
            let stamp = clock.stamp_ns(long);
            let after = clock.elapsed_ns();
            assert!(
                stamp <= after + clock.coarse_margin_ns,
                "a long timer too late"
            );
        }
    }

    /// Long timers read the coarse clock only when it is fine enough: a hundredth of the delay
    /// for two of its ticks; with no coarse clock, or one coarser than 10 ms, every timer reads
    /// the precise clock.
    #[test]
    fn the_coarse_clock_serves_only_delays_a_hundred_times_its_margin() {
        let clock = TimerClock::with_coarse_resolution(Some(4_000_000));
        assert_eq!(clock.coarse_margin_ns, 8_000_000);
        assert_eq!(clock.coarse_from_ns, 800_000_000);
        for resolution in [None, Some(0), Some(20_000_000)] {
            let clock = TimerClock::with_coarse_resolution(resolution);
            assert_eq!(clock.coarse_from_ns, u64::MAX, "{resolution:?}");
        }
    }
}
