//! The recent dead letters of a system, kept for inspection ([`crate::System::dead_letters`]).
//!
//! Recorded only when letters die — a message to an actor that stopped, one dropped by a
//! shutdown, one a bounded mailbox's overflow rule dropped — never on the way of a message that
//! lives. Consecutive deaths alike (same actor, message type and reason) share one record with a
//! count, so a flood of dead letters to one actor keeps the window's other entries.

use super::id::ActorId;
use parking_lot::Mutex;
use std::collections::VecDeque;

/// How many records [`crate::System::dead_letters`] keeps: the most recent ones.
pub const DEAD_LETTER_WINDOW: usize = 256;

/// Why a message was never handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum DeadLetterReason {
    /// Its actor had stopped before handling it (it stopped itself, got a stop signal, panicked,
    /// or became unreferenced), or stopped before a delayed send fired. Counted in
    /// `stats().dead_letters`.
    Stopped,
    /// The system shut down before its actor handled it. Counted in `stats().dead_letters`.
    Shutdown,
    /// A full bounded mailbox's overflow rule dropped it (`DropNewest`, `DropOldest`). Counted
    /// in `stats().overflow_dropped`, not in `dead_letters`.
    Overflow,
}

impl std::fmt::Display for DeadLetterReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DeadLetterReason::Stopped => "the actor had stopped",
            DeadLetterReason::Shutdown => "the system shut down",
            DeadLetterReason::Overflow => "the bounded mailbox overflowed",
        })
    }
}

/// Messages to one actor that were never handled, for one reason.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DeadLetter {
    /// The actor they were sent to.
    pub actor: ActorId,
    /// Its name, if it was spawned with one and the name was still known when they died (an
    /// actor's name is forgotten once it has terminated).
    pub name: Option<String>,
    /// The Rust type name of the messages.
    pub message_type: &'static str,
    /// Why they were not handled.
    pub reason: DeadLetterReason,
    /// How many died in a row for this actor, type and reason (at least 1).
    pub count: u64,
}

/// The window of recent dead letters.
pub(crate) struct DeadLetters {
    window: Mutex<VecDeque<DeadLetter>>,
}

impl DeadLetters {
    pub(crate) fn new() -> Self {
        DeadLetters {
            window: Mutex::new(VecDeque::new()),
        }
    }

    /// Records `count` deaths of `message_type` letters to `actor`: merged into the newest
    /// record if it is alike, else added (with the name `name` gives), dropping the oldest
    /// record beyond [`DEAD_LETTER_WINDOW`]. The name is looked up only for a new record: letters
    /// dying one by one (a message-centric shutdown discards its queues letter by letter) mostly
    /// cost one uncontended lock each. `name` runs under the window's lock (it takes the name
    /// table's: nothing takes them in the other order).
    pub(crate) fn record(
        &self,
        actor: ActorId,
        message_type: &'static str,
        reason: DeadLetterReason,
        count: u64,
        name: impl FnOnce() -> Option<String>,
    ) {
        let mut window = self.window.lock();
        if let Some(last) = window.back_mut() {
            if last.actor == actor && last.reason == reason && last.message_type == message_type {
                last.count += count;
                return;
            }
        }
        if window.len() == DEAD_LETTER_WINDOW {
            window.pop_front();
        }
        window.push_back(DeadLetter {
            actor,
            name: name(),
            message_type,
            reason,
            count,
        });
    }

    /// The records, oldest first.
    pub(crate) fn snapshot(&self) -> Vec<DeadLetter> {
        self.window.lock().iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(d: &DeadLetters, actor: u64, reason: DeadLetterReason) {
        d.record(ActorId::from_worker(0, actor), "u64", reason, 1, || None);
    }

    #[test]
    fn alike_deaths_share_a_record_and_the_window_keeps_the_newest() {
        let d = DeadLetters::new();
        record(&d, 1, DeadLetterReason::Stopped);
        record(&d, 1, DeadLetterReason::Stopped);
        record(&d, 1, DeadLetterReason::Shutdown);
        let s = d.snapshot();
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].count, s[1].count), (2, 1));
        for i in 0..DEAD_LETTER_WINDOW as u64 + 10 {
            record(&d, 100 + i, DeadLetterReason::Overflow);
        }
        let s = d.snapshot();
        assert_eq!(s.len(), DEAD_LETTER_WINDOW);
        assert_eq!(
            s[0].actor,
            ActorId::from_worker(0, 110),
            "the oldest went first"
        );
        assert_eq!(
            s.last().unwrap().actor,
            ActorId::from_worker(0, 100 + DEAD_LETTER_WINDOW as u64 + 9)
        );
    }
}
