//! An activation's budget counts the work it does, not only the envelopes it takes
//! (docs/configuration.md, `throughput` and `backlog_gulp`;
//! docs/decisions/0091-sends-charged-and-backlogs-gulped.md):
//!
//! * **A send that adds to a queue is charged to the sending activation.** One that finds its
//!   receiver scheduled already (the message waits behind others) uses a unit of the budget, as
//!   an envelope taken does: an activation ends after `throughput` units. Erlang charges
//!   reductions for a send the same way. Counting envelopes alone, one activation of a producer
//!   that sends 10,000 messages per message it handles sent 1.28 M before its consumer, on the
//!   same worker, took 128 of them: the queue between them grew to the whole run, out of every
//!   cache.
//! * **An activation that finds a backlog gulps it.** When its budget runs out with more than
//!   `throughput` messages still queued, the activation goes on, a budget at a time, until the
//!   mailbox is empty, it has taken `backlog_gulp` envelopes in all, or it has gulped for
//!   [`GULP_NS`]: a consumer gets as much work as its producers put in its queue, as Cforall's
//!   executor gulps a whole queue and CAF runs an actor until its mailbox is empty. A budget
//!   that went more to sends than to envelopes is a producer's, and ends its activation backlog
//!   or not ([`Gulp::spent_on_sends`]; docs/decisions/0093-a-producer-does-not-gulp.md). A gulp
//!   also ends once an actor woken meanwhile waits on the worker: it is free only while nobody
//!   else waits (docs/decisions/0094-a-gulp-yields-to-woken-actors.md). The time
//!   limit keeps an actor whose messages are slow (a handler that blocks, a heavy computation) at
//!   about its budget: it is read once per budget, from the system's clock (virtual time under
//!   the simulation, so its runs stay reproducible).
//!
//! A send that wakes an idle receiver is not charged: it queues behind nothing.
//!
//! The budget is one word per thread, not a register of the activation's loop: the send path
//! decrements it, and the loop decrements it per envelope and stops when it reaches 0. An inline
//! run (`exec_policy/inline.rs`) is an activation nested in its sender's handler: it has a budget
//! of its own, and the interrupted activation's is put back when it returns.

use std::cell::Cell;

/// The longest a gulp goes on, in ns: half the time after which an activation is worth a closer
/// look (`exec_policy::blocking::LONG`, 2 ms), so a gulp alone never makes an activation look
/// blocked, and far longer than a budget of cheap messages (128 of ~20-100 ns: 3-13 µs).
pub(crate) const GULP_NS: u64 = 1_000_000;

thread_local! {
    /// Units of budget the activation running on this thread has left (≤ 0: none). A plain
    /// decrement per unit, wrapping: it would take 2^31 sends past the end of the budget, within
    /// one handler's run, to read as positive again.
    static LEFT: Cell<i32> = const { Cell::new(i32::MAX) };
}

/// `n` units as the budget word holds them (clamped).
pub(crate) fn units(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// An activation (or its gulp) starts on this thread with `units` of budget.
#[inline(always)]
pub(crate) fn start(units: i32) {
    LEFT.with(|left| left.set(units));
}

/// What the running activation has left (an inline run gives its caller this back, `start`).
#[inline]
pub(crate) fn left() -> i32 {
    LEFT.with(Cell::get)
}

/// An envelope taken: one unit. Whether the budget is spent.
#[inline(always)]
pub(crate) fn spend_one() -> bool {
    LEFT.with(|left| {
        let now = left.get().wrapping_sub(1);
        left.set(now);
        now <= 0
    })
}

/// A send added its message to the queue of a receiver that was scheduled already: one unit of
/// the running activation's budget (on a thread that runs no activation the word is never
/// read).
#[inline(always)]
pub(crate) fn charge_queued_send() {
    LEFT.with(|left| left.set(left.get().wrapping_sub(1)));
}

/// A gulp's state, kept by the activation's loop (two words set to 0 at its start) and looked
/// at only when a budget is spent.
#[derive(Default)]
pub(crate) struct Gulp {
    /// When the activation began to gulp, on the runtime's timer clock (0: it has not).
    pub(crate) since: u64,
    /// Envelopes the activation had taken when the running budget began (0: the first budget).
    from: usize,
}

impl Gulp {
    /// The units the running budget began with: `budget` for an activation's first, and what
    /// [`restart`](Self::restart) gave a later one.
    fn given(&self, budget: i32, most: usize) -> i32 {
        match self.from {
            0 => budget,
            from => budget.min(units(most.saturating_sub(from))),
        }
    }

    /// Whether the running budget (the activation's `budget` units at first, with at most
    /// `most` envelopes in all), now spent with `processed` envelopes taken in all, went more
    /// to sends into queues than to envelopes taken. Such an activation is a producer
    /// (fjcreate's driver sends 1,000 messages per message it handles): it yields, as Erlang's
    /// reductions make it, and is not a backlog's consumer to keep running. Counting both
    /// equally, a relay (one send per envelope) still gulps.
    pub(crate) fn spent_on_sends(&self, processed: usize, budget: i32, most: usize) -> bool {
        let taken = i64::try_from(processed - self.from).unwrap_or(i64::MAX);
        let sends = i64::from(self.given(budget, most)) - i64::from(left()) - taken;
        sends > taken
    }

    /// A further budget begins after `processed` envelopes (more than 0): `budget` units, or
    /// fewer if `most` envelopes in all come sooner. Returns the units.
    pub(crate) fn restart(&mut self, processed: usize, budget: i32, most: usize) -> i32 {
        debug_assert!(processed > 0, "a restart follows an envelope taken");
        self.from = processed;
        let units = self.given(budget, most);
        start(units);
        units
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_spent_on_sends_is_a_producers() {
        // 3 envelopes and 125 sends into queues: a producer.
        let gulp = Gulp::default();
        start(units(128));
        for _ in 0..125 {
            charge_queued_send();
        }
        for _ in 0..3 {
            spend_one();
        }
        assert!(gulp.spent_on_sends(3, 128, 16_384));
        // 64 envelopes, each forwarded into a queue: a relay, not a producer.
        let mut gulp = Gulp::default();
        start(units(128));
        for _ in 0..64 {
            spend_one();
            charge_queued_send();
        }
        assert!(!gulp.spent_on_sends(64, 128, 16_384));
        // The next budget counts from its own start, and ends at `most` (74) envelopes.
        assert_eq!(gulp.restart(64, 128, 74), 10);
        for _ in 0..9 {
            spend_one();
            charge_queued_send();
        }
        spend_one();
        assert!(!gulp.spent_on_sends(74, 128, 74), "9 sends, 10 envelopes");
        assert_eq!(left(), -9);
    }

    #[test]
    fn envelopes_and_sends_into_queues_spend_one_budget() {
        start(units(3));
        charge_queued_send();
        assert!(!spend_one());
        assert!(spend_one(), "two envelopes and a send: 3 units");
        charge_queued_send();
        assert!(spend_one(), "past the end it stays spent");
        start(units(1));
        assert!(spend_one());
    }

    #[test]
    fn an_inline_run_puts_its_callers_budget_back() {
        start(units(5));
        charge_queued_send();
        let callers = left();
        start(units(128));
        assert!(!spend_one());
        start(callers);
        assert_eq!(left(), 4);
    }

    #[test]
    fn a_budget_past_the_word_is_clamped() {
        start(units(usize::MAX));
        charge_queued_send();
        assert!(!spend_one());
        assert_eq!(left(), i32::MAX - 2);
    }
}
