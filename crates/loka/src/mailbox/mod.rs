//! The per-actor mailbox and its idle → scheduled protocol.
//!
//! State is one atomic word: the number of messages pushed and not yet acknowledged by the consumer,
//! plus a `CLOSED` bit. The protocol:
//!
//! * **Sender**: push the message into the queue, *then* increment the count. The sender whose
//!   increment moves the count from 0 is the one (and only one) that must schedule the actor
//!   ([`Push::Wake`]). A message is therefore always fully written before it is counted.
//! * **Consumer** (the single activation holding the schedule): pop up to `throughput` messages, but
//!   never more than the count (a pushed message may not be counted yet, and its sender may still
//!   see the count at 0 and schedule), then subtract what it processed. If the count is still non-zero, messages arrived meanwhile (or a
//!   counted slot was claimed but not yet written): the actor stays scheduled and is re-queued.
//!   Otherwise it is idle, and the next sender's 0 → 1 increment schedules it again.
//!
//! So "scheduled" is exactly "count > 0", no message can be stranded (the count never reaches 0 with
//! a message inside), and two activations can never overlap (only a 0 → 1 transition schedules, and
//! the count only returns to 0 at the end of an activation).
//!
//! Closing sets `CLOSED` while the count is still non-zero (the closing activation has not
//! acknowledged its messages), so no sender can schedule a closed mailbox. Senders check `CLOSED`
//! before pushing and get their message back; a sender racing with the close gets [`Push::Closed`]
//! after its push, and its message is dropped with the mailbox and counted as a dead letter.

pub(crate) mod queue;

use crate::sync::AtomicUsize;
use crossbeam_utils::CachePadded;
use queue::{Pop, SegQueue};
use std::sync::atomic::Ordering::{AcqRel, Acquire};

const CLOSED: usize = 1 << (usize::BITS - 1);
const COUNT: usize = !CLOSED;

/// What a sender must do after [`Mailbox::push`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Push<T> {
    /// The mailbox was idle: the caller must schedule the actor (exactly once).
    Wake,
    /// The actor is already scheduled or running; nothing to do.
    Queued,
    /// The mailbox was closed before the push; the message is handed back.
    Rejected(T),
    /// The mailbox closed while we pushed; the message stays inside and is dropped (and counted)
    /// with the mailbox.
    Closed,
}

/// An actor's mailbox: lock-free for senders, single consumer.
pub(crate) struct Mailbox<T> {
    state: CachePadded<AtomicUsize>,
    queue: SegQueue<T>,
}

impl<T> Mailbox<T> {
    pub(crate) fn new() -> Self {
        Mailbox {
            state: CachePadded::new(AtomicUsize::new(0)),
            queue: SegQueue::new(),
        }
    }

    /// Sends `msg`; see [`Push`] for what the caller must do next.
    #[inline]
    pub(crate) fn push(&self, msg: T) -> Push<T> {
        // A plain load keeps sends to stopped actors cheap and lets us hand the message back.
        if self.state.load(Acquire) & CLOSED != 0 {
            return Push::Rejected(msg);
        }
        self.queue.push(msg);
        // Release: the consumer that observes this count observes the pushed message.
        // Acquire: if we schedule, we see the consumer's last acknowledgement.
        let prev = self.state.fetch_add(1, AcqRel);
        if prev & CLOSED != 0 {
            Push::Closed
        } else if prev == 0 {
            Push::Wake
        } else {
            Push::Queued
        }
    }

    /// Takes the oldest message.
    ///
    /// # Safety
    /// Only the activation that owns the schedule (count > 0, not yet acknowledged) may call this.
    #[inline]
    pub(crate) unsafe fn pop(&self) -> Pop<T> {
        // SAFETY: forwarded contract: one consumer at a time.
        unsafe { self.queue.pop() }
    }

    /// Acknowledges `processed` messages at the end of an activation. Returns `true` when messages
    /// remain, i.e. the actor is still scheduled and must be re-queued by the caller.
    #[inline]
    pub(crate) fn complete(&self, processed: usize) -> bool {
        if processed == 0 {
            // Nothing consumed (the next slot was not written yet): we still hold the schedule.
            return true;
        }
        // AcqRel: Release orders our pops before a later sender's 0 → 1 transition (the next
        // activation, maybe on another worker, starts after ours); Acquire sees pushes counted since.
        let prev = self.state.fetch_sub(processed, AcqRel);
        debug_assert!(prev & COUNT >= processed);
        (prev & COUNT) - processed != 0
    }

    /// Closes the mailbox: later sends are rejected. Called by the activation that holds the schedule.
    pub(crate) fn close(&self) {
        self.state.fetch_or(CLOSED, AcqRel);
    }

    /// Whether the mailbox is closed.
    #[inline]
    pub(crate) fn is_closed(&self) -> bool {
        self.state.load(Acquire) & CLOSED != 0
    }

    /// Messages counted but not yet acknowledged.
    pub(crate) fn pending(&self) -> usize {
        self.state.load(Acquire) & COUNT
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn wake_only_on_idle_to_scheduled() {
        let mb = Mailbox::new();
        assert_eq!(mb.push(1), Push::Wake);
        assert_eq!(mb.push(2), Push::Queued);
        assert_eq!(unsafe { mb.pop() }, Pop::Item(1));
        assert!(mb.complete(1), "one message left: stays scheduled");
        assert_eq!(unsafe { mb.pop() }, Pop::Item(2));
        assert!(!mb.complete(1));
        assert_eq!(mb.push(3), Push::Wake, "idle again: next send schedules");
    }

    #[test]
    fn pushed_but_uncounted_message_is_not_consumed_ahead_of_its_count() {
        // Simulate a sender between its push and its count: the queue holds the message, the
        // count does not.
        let mb = Mailbox::new();
        mb.queue.push(1);
        assert_eq!(mb.pending(), 0, "the consumer must not take it yet");
        // That sender now counts, sees 0 and is the one to schedule.
        assert_eq!(mb.state.fetch_add(1, AcqRel), 0);
        assert_eq!(unsafe { mb.pop() }, Pop::Item(1));
        assert!(!mb.complete(1));
    }

    #[test]
    fn closed_mailbox_rejects_and_returns_message() {
        let mb = Mailbox::new();
        assert_eq!(mb.push(1), Push::Wake);
        mb.close();
        assert!(mb.is_closed());
        assert_eq!(mb.push(2), Push::Rejected(2));
        assert_eq!(mb.pending(), 1);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::sync::AtomicBool;
    use loom::sync::Arc;
    use std::sync::atomic::Ordering::SeqCst;

    /// Runs one activation inline (as if scheduled): processes everything, re-checking as the
    /// protocol says. Asserts that no two activations overlap.
    fn activation(mb: &Mailbox<u32>, running: &AtomicBool, seen: &loom::sync::Mutex<Vec<u32>>) {
        assert!(!running.swap(true, SeqCst), "two activations overlap");
        loop {
            let mut processed = 0;
            // As the runtime does: consume at most what has been counted.
            while processed < mb.pending() {
                match unsafe { mb.pop() } {
                    Pop::Item(v) => {
                        seen.lock().unwrap().push(v);
                        processed += 1;
                    }
                    Pop::Empty | Pop::NotReady => break,
                }
            }
            running.store(false, SeqCst);
            if !mb.complete(processed) {
                return;
            }
            // Still scheduled: "re-queue" = run again here.
            assert!(!running.swap(true, SeqCst), "two activations overlap");
            loom::thread::yield_now();
        }
    }

    /// Two senders and the activation they trigger: exactly the messages sent are processed, once,
    /// never concurrently, and the mailbox ends idle (no stranded message, no lost wake-up).
    #[test]
    fn idle_to_scheduled_protocol() {
        loom::model(|| {
            let mb = Arc::new(Mailbox::new());
            let running = Arc::new(AtomicBool::new(false));
            let seen = Arc::new(loom::sync::Mutex::new(Vec::new()));
            let senders: Vec<_> = (0..2u32)
                .map(|s| {
                    let (mb, running, seen) = (mb.clone(), running.clone(), seen.clone());
                    loom::thread::spawn(move || {
                        if mb.push(s) == Push::Wake {
                            activation(&mb, &running, &seen);
                        }
                    })
                })
                .collect();
            for s in senders {
                s.join().unwrap();
            }
            assert_eq!(mb.pending(), 0, "a message was stranded");
            let mut seen = seen.lock().unwrap().clone();
            seen.sort_unstable();
            assert_eq!(seen, vec![0, 1]);
        });
    }
}
