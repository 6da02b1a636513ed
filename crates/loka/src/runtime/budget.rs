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
//!   executor gulps a whole queue and CAF runs an actor until its mailbox is empty. The time
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

#[cfg(test)]
mod tests {
    use super::*;

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
