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
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` writes one `timespec` to the valid pointer it is given;
    // `CLOCK_MONOTONIC` exists on every Unix this crate builds for (it cannot fail here).
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
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

impl Shared {
    /// Nanoseconds of the timer clock since the system started (wall-clock engines).
    #[inline]
    pub(crate) fn elapsed_ns(&self) -> u64 {
        monotonic_ns().saturating_sub(self.epoch_ns)
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
        match from.and_then(Exec::worker) {
            Some(w) if !self.virtual_time => w % shards,
            _ => self.shared.timer_turn.fetch_add(1, Relaxed) % shards,
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
        let when = self.ns_to_ticks(self.timer_now_ns().saturating_add(delay_ns));
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
