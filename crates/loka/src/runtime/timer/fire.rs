//! Firing a shard's due timers: the batch taken out of the wheel under the shard's lock, run
//! with the lock released, intervals re-armed, the batch's timers counted out once it is done
//! (the protocol is in the parent module's documentation).

use super::wheel::Key;
use super::{retired, Entry, TimerState, Timers, FIRED, PENDING};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

impl Timers {
    /// Fires every timer of `shard` due at tick `now`: takes them out under the shard's lock,
    /// runs their actions with it released, and re-arms intervals (unless cancelled meanwhile or
    /// their action returned `false`). Returns how many actions ran.
    ///
    /// If an action panics, the panic goes on to the caller; the timers due after it in this
    /// batch are put back, due at once, to run at the next call.
    pub(crate) fn fire_due(&self, shard: usize, now: u64) -> usize {
        let slot = &self.shards[shard];
        if now < slot.next.load(Relaxed) {
            return 0;
        }
        let mut due = Vec::new();
        {
            let mut wheel = slot.wheel.lock();
            // Taking a one-shot out makes its key stale: from here `cancel` says `false`.
            wheel.advance(now, &mut due);
            slot.publish(&wheel);
        }
        let fired = due.len();
        Batch {
            timers: self,
            shard,
            due: due.into_iter(),
            retired: 0,
            retired_once: 0,
            now,
        }
        .run();
        fired
    }

    /// Puts an interval whose action just ran back into its wheel at its next tick, if it is
    /// still pending and `again`; else marks it stopped and hands its parts back, to be dropped
    /// outside the lock.
    #[allow(clippy::type_complexity)]
    fn rearm(
        &self,
        shard: usize,
        now: u64,
        when: u64,
        state: Arc<TimerState>,
        f: Box<dyn FnMut() -> bool + Send>,
        again: bool,
    ) -> Result<(), (Arc<TimerState>, Box<dyn FnMut() -> bool + Send>)> {
        let slot = &self.shards[shard];
        let mut wheel = slot.wheel.lock();
        if state.status.load(Relaxed) != PENDING {
            return Err((state, f));
        }
        if !again {
            state.status.store(FIRED, Relaxed);
            return Err((state, f));
        }
        // Another thread may have advanced the wheel past `now` while the action ran: skip
        // to after the later of the two, or the wheel would fire a catch-up at once.
        let next = next_tick(when, state.period, now.max(wheel.elapsed()));
        let entry = Entry::Every {
            f,
            state: Arc::clone(&state),
            when: next,
        };
        let key = wheel.insert(next, entry);
        state.key.store(key.to_bits(), Relaxed);
        slot.publish(&wheel);
        drop(wheel);
        drop(state);
        Ok(())
    }
}

/// The next tick of a fixed-rate schedule `when + k * period` that is after `now` (`k >= 1`):
/// missed ticks are skipped, not fired in a burst.
pub(super) fn next_tick(when: u64, period: u64, now: u64) -> u64 {
    let next = when.saturating_add(period);
    if next > now {
        return next;
    }
    let periods = (now - when) / period + 1;
    when.saturating_add(periods.saturating_mul(period))
}

/// Stops an interval whose action panics, as it unwinds: marks it stopped and counts it out
/// (its action is dropped by the unwinding, outside the lock).
struct Unwinding<'a> {
    /// The service the interval belongs to.
    timers: &'a Timers,
    /// The interval.
    state: &'a TimerState,
}

impl Drop for Unwinding<'_> {
    fn drop(&mut self) {
        let slot = &self.timers.shards[self.state.shard as usize];
        let wheel = slot.wheel.lock();
        if self.state.status.load(Relaxed) == PENDING {
            self.state.status.store(FIRED, Relaxed);
        }
        slot.count(&wheel, 0, retired(0, 1));
        drop(wheel);
    }
}

/// The due entries of one `fire_due`, run with no lock held.
struct Batch<'a> {
    /// The service the batch belongs to.
    timers: &'a Timers,
    /// The shard it was taken from (where intervals are re-armed).
    shard: usize,
    /// The entries not yet run, in the order they are due.
    due: std::vec::IntoIter<(Key, Entry)>,
    /// The tick the batch fired at.
    now: u64,
    /// Intervals of the batch that stopped (or were cancelled while they ran), not yet counted
    /// out: one atomic update per batch, not per timer.
    retired: usize,
    /// One-shots of the batch, counted out once the batch is done.
    retired_once: usize,
}

impl Batch<'_> {
    /// Runs the actions in order and re-arms the intervals that go on.
    fn run(mut self) {
        let now = self.now;
        for (_, entry) in self.due.by_ref() {
            let (mut f, state, when) = match entry {
                Entry::Once(f) => {
                    // Counted out when the batch is dropped: after the action, even if it panics.
                    self.retired_once += 1;
                    f.run();
                    continue;
                }
                Entry::Shared(f) => {
                    self.retired_once += 1;
                    f.fire();
                    continue;
                }
                Entry::Every { f, state, when } => (f, state, when),
            };
            let unwinding = Unwinding {
                timers: self.timers,
                state: &state,
            };
            let again = f();
            std::mem::forget(unwinding);
            let rearmed = self.timers.rearm(self.shard, now, when, state, f, again);
            if let Err(leftover) = rearmed {
                // Cancelled meanwhile, or stopped: dropped outside the lock.
                drop(leftover);
                self.retired += 1;
            }
        }
    }
}

impl Drop for Batch<'_> {
    /// Gives back the places the actions reserved ahead and counts the batch's finished timers
    /// out. If an action panicked, the entries after it have not run: they go back into the
    /// wheel, due at once, for the next `fire_due` (a one-shot among them goes back under a new
    /// key, so its old one still matches nothing: a `cancel` may already have been told it
    /// fired, and it will run).
    fn drop(&mut self) {
        // The actions ran outside any activation: places their sends reserved ahead in bounded
        // mailboxes come back with the batch, whichever engine fired it (`cell/bound/credit.rs`).
        crate::runtime::give_back_reserved();
        let done = retired(self.retired_once, self.retired_once + self.retired);
        if self.due.len() == 0 && done == 0 {
            return;
        }
        let slot = &self.timers.shards[self.shard];
        let mut wheel = slot.wheel.lock();
        if self.due.len() > 0 {
            for (_, entry) in self.due.by_ref() {
                // (This clone is dropped under the lock: harmless, the entry holds another.)
                let state = entry.state().cloned();
                // Due at once: any tick the wheel has passed puts it on the ready list, behind
                // the entries put back before it.
                let key = wheel.insert(self.now, entry);
                if let Some(state) = state {
                    state.key.store(key.to_bits(), Relaxed);
                }
            }
            slot.publish(&wheel);
        }
        slot.count(&wheel, 0, done);
    }
}
