//! Loom models of the mailbox protocol (`make loom`).

// Every `unsafe` call in this file is a mailbox's single-consumer operation made by the one thread
// that consumes that mailbox in the test, which is the contract of those functions.
#![allow(clippy::undocumented_unsafe_blocks)]

use super::*;
use crate::sync::AtomicBool;
use loom::sync::Arc;
use std::sync::atomic::Ordering::SeqCst;

/// Explores every interleaving with up to 3 preemptions (exhaustive search of this model does
/// not finish in minutes; bugs of this kind need at most 2–3 preemptions to show).
fn model(f: impl Fn() + Sync + Send + 'static) {
    model_bounded(3, f);
}

fn model_bounded(preemptions: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(preemptions);
    builder.check(f);
}

/// Pushes `values` to `mb` in order from a new thread.
fn send_from_thread(
    mb: &Arc<Mailbox<u32>>,
    values: std::ops::Range<u32>,
) -> loom::thread::JoinHandle<()> {
    let mb = mb.clone();
    loom::thread::spawn(move || {
        for i in values {
            let _ = mb.push(i);
        }
    })
}

/// Pops `n` values from `mb` as its consumer, yielding while the next is not there yet.
fn receive(mb: &Mailbox<u32>, n: usize) -> Vec<u32> {
    let mut got = Vec::new();
    while got.len() < n {
        match unsafe { mb.pop() } {
            Pop::Item(v) => got.push(v),
            Pop::Empty | Pop::NotReady => loom::thread::yield_now(),
        }
    }
    got
}

/// One activation run inline by the sender that woke the actor.
fn activation(mb: &Mailbox<u32>, running: &AtomicBool, seen: &loom::sync::Mutex<Vec<u32>>) {
    assert!(!running.swap(true, SeqCst), "two activations overlap");
    loop {
        match unsafe { mb.pop() } {
            Pop::Item(v) => seen.lock().unwrap().push(v),
            Pop::NotReady => loom::thread::yield_now(),
            Pop::Empty => {
                running.store(false, SeqCst);
                if unsafe { mb.try_idle() } {
                    return;
                }
                assert!(!running.swap(true, SeqCst), "two activations overlap");
            }
        }
    }
}

/// Two senders race over a block boundary (BLOCK_CAP = 2 under loom) with the activation they
/// trigger: every message is handled once, activations never overlap, the mailbox ends idle.
#[test]
fn idle_to_scheduled_protocol() {
    model(|| {
        let mb = Arc::new(Mailbox::new());
        unsafe { mb.settle() };
        let running = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(loom::sync::Mutex::new(Vec::new()));
        let senders: Vec<_> = (0..2u32)
            .map(|s| {
                let (mb, running, seen) = (mb.clone(), running.clone(), seen.clone());
                loom::thread::spawn(move || {
                    for i in 0..2 {
                        if mb.push(s * 10 + i) == Push::Wake {
                            activation(&mb, &running, &seen);
                        }
                    }
                })
            })
            .collect();
        for s in senders {
            s.join().unwrap();
        }
        assert_eq!(unsafe { mb.pop() }, Pop::Empty, "a message was stranded");
        assert_eq!(
            mb.push(99),
            Push::Wake,
            "ended idle, so the next send schedules"
        );
        let seen = seen.lock().unwrap().clone();
        let from = |s: u32| {
            seen.iter()
                .filter(|&&v| v / 10 == s)
                .copied()
                .collect::<Vec<_>>()
        };
        assert_eq!(from(0), vec![0, 1], "per-sender FIFO, once each");
        assert_eq!(from(1), vec![10, 11], "per-sender FIFO, once each");
    });
}

/// A sender streams six messages over four blocks (FIRST_CAP = 1 and BLOCK_CAP = 2 under
/// loom) while the consumer reads them: the first full block, once consumed, can come back as
/// the fourth, so the hand-over through the spare must order the consumer's reads and reset
/// before the sender's new writes (loom checks the cells' accesses), and FIFO must hold across
/// the reuse and across the small first block.
#[test]
fn recycled_block_is_reused_without_stale_slots() {
    // Two preemptions: the model has four block hand-overs, and three takes minutes.
    model_bounded(2, || {
        let mb = Arc::new(Mailbox::new());
        unsafe { mb.settle() };
        let sender = send_from_thread(&mb, 0..6);
        let got = receive(&mb, 6);
        sender.join().unwrap();
        assert_eq!(got, (0..6).collect::<Vec<_>>());
    });
}

/// A backlog of two laps makes the sender link a big block (BIG_LAPS = 2 and BLOCK_CAP = 2
/// under loom: laps 2 and 3), then it streams through the big block's inner lap, past its end and
/// into the next block while the consumer reads: the inner lap's step over its marker, the big
/// block's free by the consumer and the link after it must keep FIFO, and loom checks that no
/// slot is read before it is written nor touched after the free.
#[test]
fn a_big_block_is_crossed_and_freed_in_order() {
    model_bounded(2, || {
        let mb = Arc::new(Mailbox::new());
        unsafe { mb.settle() };
        // Lap 0 and lap 1, unread: the link after lap 1 is big.
        for i in 0..3u32 {
            let _ = mb.push(i);
        }
        assert!(
            mb.tail_word.load(SeqCst) & BIG != 0,
            "a backlog links a big block"
        );
        let sender = send_from_thread(&mb, 3..8);
        let got = receive(&mb, 8);
        sender.join().unwrap();
        assert_eq!(got, (0..8).collect::<Vec<_>>());
        assert!(unsafe { mb.try_idle() });
    });
}

/// A lasting backlog recycles a big block while its sender races to the next block end (under
/// loom: lap 0 one slot, lap 1 two, big blocks of four slots over laps 2–3 and 4–5): the consumer
/// reads the first big block and keeps it as the spare, since its successor is big, while the
/// sender claims the second big block's last slot and links whatever it finds (the kept block,
/// reset, or a new one). Loom checks that the sender's reset and writes come after the
/// consumer's reads of that block, FIFO holds across the reuse, and the idle actor frees the
/// spare.
#[test]
fn a_kept_big_block_is_handed_to_the_sender_in_order() {
    model_bounded(2, || {
        let mb = Arc::new(Mailbox::new());
        unsafe { mb.settle() };
        // Laps 0 and 1, the first big block and the second but for its last slot, unread.
        for i in 0..10u32 {
            let _ = mb.push(i);
        }
        assert!(
            mb.tail_word.load(SeqCst) & BIG != 0,
            "the backlog is in big blocks"
        );
        let sender = send_from_thread(&mb, 10..13);
        let got = receive(&mb, 13);
        sender.join().unwrap();
        assert_eq!(got, (0..13).collect::<Vec<_>>());
        assert!(unsafe { mb.try_idle() });
        assert!(
            !super::block::untagged(mb.spare.load(SeqCst)).1,
            "an idle actor keeps no big spare"
        );
    });
}

/// A send racing with the close: either it claimed a slot before the close (and the message is
/// in the mailbox) or it gets the message back. Never both, never neither.
#[test]
fn close_races_with_send() {
    model(|| {
        let mb = Arc::new(Mailbox::new());
        unsafe { mb.settle() };
        assert_eq!(mb.push(0), Push::Wake);
        let sender = {
            let mb = mb.clone();
            loom::thread::spawn(move || mb.push(1))
        };
        mb.close();
        let pushed = sender.join().unwrap();
        let mut got = Vec::new();
        while let Pop::Item(v) = unsafe { mb.pop() } {
            got.push(v);
        }
        match pushed {
            Push::Queued => assert_eq!(got, vec![0, 1]),
            Push::Rejected(1) => assert_eq!(got, vec![0]),
            other => panic!("unexpected {other:?}"),
        }
    });
}

/// A drained actor held by its worker (docs/decisions/0036-hold-drained-actor.md): its consumer does not go idle when
/// the mailbox empties, and later ends the hold with `has_claims` (a plain load) and, if that saw
/// nothing, `try_idle`. A send racing with the release is never lost: either the release fails
/// and the consumer takes the message, or the actor went idle and the sender schedules it; never
/// both (no second activation), never neither (no stranded message).
#[test]
fn a_held_actor_released_while_a_message_comes() {
    model(|| {
        let mb = Arc::new(Mailbox::new());
        unsafe { mb.settle() };
        // Scheduled, one message handled, mailbox empty: drained and held.
        assert_eq!(mb.push(1), Push::Wake);
        assert_eq!(unsafe { mb.pop() }, Pop::Item(1));
        assert_eq!(unsafe { mb.pop() }, Pop::Empty);
        let sender = {
            let mb = mb.clone();
            loom::thread::spawn(move || mb.push(2))
        };
        let released = unsafe { !mb.has_claims() && mb.try_idle() };
        let pushed = sender.join().unwrap();
        if released {
            assert_eq!(
                pushed,
                Push::Wake,
                "idle: the sender must schedule the actor"
            );
            // The activation the sender started takes the message.
        } else {
            assert_eq!(
                pushed,
                Push::Queued,
                "still held: the sender must not schedule it"
            );
        }
        assert_eq!(
            receive(&mb, 1),
            vec![2],
            "the message is taken exactly once"
        );
    });
}
