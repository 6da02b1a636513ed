//! Unit tests of the mailbox (also run under Miri: `make miri`).

// Every `unsafe` call in this file is a mailbox's single-consumer operation made by the one thread
// that consumes that mailbox in the test, which is the contract of those functions.
#![allow(clippy::undocumented_unsafe_blocks)]

use super::*;
use std::sync::Arc;

#[test]
fn only_the_idle_to_scheduled_send_wakes() {
    let mb = Mailbox::new();
    unsafe { mb.settle() };
    assert_eq!(mb.push(1), Push::Wake);
    assert_eq!(mb.push(2), Push::Queued);
    unsafe {
        assert_eq!(mb.pop(), Pop::Item(1));
        assert!(mb.has_more());
        assert_eq!(mb.pop(), Pop::Item(2));
        assert_eq!(mb.pop(), Pop::Empty);
        assert!(!mb.has_more());
        assert!(mb.try_idle());
    }
    assert_eq!(
        mb.push(3),
        Push::Wake,
        "idle again: the next send schedules"
    );
}

#[test]
fn going_idle_fails_when_a_send_raced_in() {
    let mb = Mailbox::new();
    unsafe { mb.settle() };
    assert_eq!(mb.push(1), Push::Wake);
    unsafe {
        assert_eq!(mb.pop(), Pop::Item(1));
        assert_eq!(mb.pop(), Pop::Empty);
    }
    assert_eq!(
        mb.push(2),
        Push::Queued,
        "still scheduled: no second wake-up"
    );
    unsafe {
        assert!(!mb.try_idle(), "a slot was claimed: keep consuming");
        assert_eq!(mb.pop(), Pop::Item(2));
        assert!(mb.try_idle());
    }
}

#[test]
fn closed_mailbox_rejects_and_hands_the_message_back() {
    let mb = Mailbox::new();
    unsafe { mb.settle() };
    assert_eq!(mb.push(1), Push::Wake);
    mb.close();
    assert!(mb.is_closed());
    assert_eq!(mb.push(2), Push::Rejected(2));
    unsafe {
        assert_eq!(
            mb.pop(),
            Pop::Item(1),
            "claimed before the close: still there"
        );
        assert!(!mb.try_idle(), "a closed mailbox never goes idle");
    }
}

#[test]
fn fifo_across_blocks_and_close_at_a_block_boundary() {
    let mb = Mailbox::new();
    unsafe { mb.settle() };
    // The small first block, a full one, and all but the last slot of another.
    let before_last_slot = FIRST_CAP + 2 * BLOCK_CAP - 1;
    for i in 0..before_last_slot {
        let _ = mb.push(i);
    }
    mb.close(); // the next push would claim a block's last slot
    assert_eq!(mb.push(999), Push::Rejected(999));
    for i in 0..before_last_slot {
        assert_eq!(unsafe { mb.pop() }, Pop::Item(i));
    }
    assert_eq!(unsafe { mb.pop() }, Pop::Empty);
}

#[test]
fn a_consumed_block_becomes_the_next_tail_block() {
    let mb = Mailbox::new();
    unsafe { mb.settle() };
    let fill = |from: usize, n: usize| {
        for i in from..from + n {
            assert_ne!(mb.push(i), Push::Rejected(i));
        }
    };
    fill(0, FIRST_CAP);
    let second = tail_block(&mb);
    fill(FIRST_CAP, BLOCK_CAP);
    for i in 0..FIRST_CAP {
        assert_eq!(unsafe { mb.pop() }, Pop::Item(i));
    }
    assert!(
        mb.spare.load(Relaxed).is_null(),
        "the small first block is freed, never kept"
    );
    for i in FIRST_CAP..FIRST_CAP + BLOCK_CAP {
        assert_eq!(unsafe { mb.pop() }, Pop::Item(i));
    }
    assert_eq!(
        mb.spare.load(Relaxed),
        second,
        "a consumed full block is kept"
    );
    fill(100, BLOCK_CAP);
    assert_eq!(
        tail_block(&mb),
        second,
        "the spare is linked instead of a new allocation"
    );
    assert!(mb.spare.load(Relaxed).is_null());
    for i in 100..100 + BLOCK_CAP {
        assert_eq!(
            unsafe { mb.pop() },
            Pop::Item(i),
            "no slot of the reused block is seen before it is written"
        );
    }
    assert_eq!(unsafe { mb.pop() }, Pop::Empty);
}

#[test]
fn drop_frees_remaining_values() {
    let marker = Arc::new(());
    let mb = Mailbox::new();
    unsafe { mb.settle() };
    // Into a big block (Miri checks that each block is freed with its own layout).
    for _ in 0..(FIRST_CAP + (BIG_LAPS - 1) * BLOCK_CAP + BIG_CAP / 2) {
        let _ = mb.push(Arc::clone(&marker));
    }
    assert_eq!(unsafe { mb.pop() }, Pop::Item(Arc::clone(&marker)));
    drop(mb);
    assert_eq!(Arc::strong_count(&marker), 1);
}

#[test]
fn per_producer_fifo_and_one_wake_per_idle_period_with_concurrent_producers() {
    let producers = if cfg!(miri) { 2 } else { 4 };
    let per = if cfg!(miri) { 100 } else { 50_000 };
    let mb = Arc::new(Mailbox::new());
    unsafe { mb.settle() };
    let wakes = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..producers)
        .map(|p| {
            let (mb, wakes) = (Arc::clone(&mb), Arc::clone(&wakes));
            std::thread::spawn(move || {
                for i in 0..per {
                    if mb.push((p, i)) == Push::Wake {
                        wakes.fetch_add(1, Relaxed);
                    }
                }
            })
        })
        .collect();
    // The consumer behaves like an activation that is always re-run: it counts its idle
    // periods, which must match the wake-ups one to one.
    let mut next = vec![0usize; producers];
    let (mut got, mut idles) = (0, 0);
    while got < producers * per {
        match unsafe { mb.pop() } {
            Pop::Item((p, i)) => {
                assert_eq!(next[p], i, "producer {p} out of order");
                next[p] += 1;
                got += 1;
            }
            Pop::Empty => {
                if unsafe { mb.try_idle() } {
                    idles += 1;
                    // Wait for the sender that will wake us.
                    while wakes.load(Acquire) < idles + 1 && got < producers * per {
                        std::thread::yield_now();
                    }
                }
            }
            Pop::NotReady => std::thread::yield_now(),
        }
    }
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(
        wakes.load(Acquire),
        idles + 1,
        "one wake-up per idle period"
    );
}

#[test]
fn len_estimate_counts_queued_messages_across_blocks() {
    let mb = Mailbox::new();
    unsafe { mb.settle() };
    assert_eq!(mb.len_estimate(), 0);
    // Across the small first block, the lap-0 gap, several small blocks and, the backlog having
    // grown, big ones with their inner laps.
    let n = FIRST_CAP + (BIG_LAPS - 1) * BLOCK_CAP + 2 * BIG_CAP + 5;
    for i in 0..n {
        let _ = mb.push(i);
        assert_eq!(mb.len_estimate(), i + 1);
    }
    for i in 0..n {
        unsafe {
            assert_eq!(mb.pop(), Pop::Item(i));
        }
        assert_eq!(mb.len_estimate(), n - i - 1);
    }
    assert_eq!(Mailbox::<u8>::new_direct().len_estimate(), 0);
}

/// `pop_with` advances past the slot when its closure unwinds after moving the value out: the
/// next pop gets the next message, the taken one is neither seen nor dropped twice (Miri checks
/// the drops), across a block boundary too.
#[test]
fn pop_with_advances_when_the_taker_unwinds() {
    let mb = Mailbox::new();
    unsafe { mb.settle() };
    // Across small blocks, and the inner laps and the end of a big one.
    let total = FIRST_CAP + (BIG_LAPS - 1) * BLOCK_CAP + BIG_CAP + 3;
    for i in 0..total {
        let _ = mb.push(Box::new(i));
    }
    for i in 0..total {
        if i % 2 == 0 {
            let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe {
                mb.pop_with(|slot| {
                    let value = slot.read();
                    assert_eq!(*value, i);
                    panic!("the handler of {i} panicked");
                })
            }));
            assert!(unwound.is_err());
        } else {
            assert_eq!(unsafe { mb.pop_with(|slot| *slot.read()) }, Pop::Item(i));
        }
    }
    assert_eq!(unsafe { mb.pop() }, Pop::Empty);
}

/// The producers' group (tail word, block pointers) and the consumer's are [`GAP`] bytes apart,
/// the producers' group is a gap away from what precedes the mailbox, and the mailbox asks for no
/// alignment beyond its fields': an over-aligned cell is allocated by `posix_memalign`, which
/// cost every spawn hundreds of instructions (docs/decisions/0028-spawn-stop-cost.md).
#[test]
fn writers_are_a_gap_apart_without_over_alignment() {
    type M = Mailbox<u64>;
    let tail = std::mem::offset_of!(M, tail_word);
    let spare_end = std::mem::offset_of!(M, spare) + std::mem::size_of::<usize>();
    let consumer = std::mem::offset_of!(M, head);
    for producer in [
        tail,
        std::mem::offset_of!(M, tail_block),
        std::mem::offset_of!(M, spare),
    ] {
        assert!(producer >= GAP, "apart from what precedes: {producer}");
        assert!(producer < spare_end);
    }
    assert!(
        consumer >= spare_end + GAP,
        "producers end at {spare_end}, consumer at {consumer}"
    );
    assert!(std::mem::align_of::<M>() <= 16, "no over-alignment");
}

/// The first block lives inside the mailbox: the first `FIRST_CAP` messages need no allocation,
/// and lap 1's block is the first on the heap (linked by the claim of the first block's last slot).
#[test]
fn the_first_block_is_part_of_the_mailbox() {
    let mb = Mailbox::new();
    unsafe { mb.settle() };
    let start = &mb as *const Mailbox<u64> as usize;
    let inside =
        |p: *mut Block<u64>| (start..start + std::mem::size_of_val(&mb)).contains(&(p as usize));
    for i in 0..FIRST_CAP as u64 {
        assert!(inside(tail_block(&mb)), "message {i} in the mailbox");
        let _ = mb.push(i);
    }
    // The first block's last slot linked lap 1's block.
    assert!(!inside(tail_block(&mb)), "lap 1 on the heap");
    let _ = mb.push(FIRST_CAP as u64);
    for i in 0..=FIRST_CAP as u64 {
        assert_eq!(unsafe { mb.pop() }, Pop::Item(i));
    }
    assert_eq!(unsafe { mb.pop() }, Pop::Empty);
}

/// The tail's block (the tail holds its span base).
fn tail_block<T>(mb: &Mailbox<T>) -> *mut Block<T> {
    let word = mb.tail_word.load(Relaxed);
    block::block_of(mb.tail_block.load(Relaxed), word >> SHIFT, word & BIG != 0)
}

/// Whether the tail's block is big.
fn tail_is_big<T>(mb: &Mailbox<T>) -> bool {
    mb.tail_word.load(Relaxed) & BIG != 0
}

/// A backlog that grows past two blocks while the consumer does not run is linked in big blocks
/// (an eighth of the allocations), FIFO holds through their inner laps, the big blocks go with the
/// backlog, and the mailbox then goes idle and wakes as before.
#[test]
fn a_growing_backlog_is_linked_in_big_blocks() {
    let mb = Mailbox::new();
    unsafe { mb.settle() };
    let n = FIRST_CAP + (BIG_LAPS - 1) * BLOCK_CAP + 3 * BIG_CAP + 7;
    let mut big_seen = 0;
    for i in 0..n {
        let _ = mb.push(i);
        big_seen += usize::from(tail_is_big(&mb));
    }
    assert!(
        big_seen >= 2 * BIG_CAP,
        "a growing backlog links big blocks ({big_seen} sends into one)"
    );
    for i in 0..n {
        assert_eq!(unsafe { mb.pop() }, Pop::Item(i));
    }
    assert_eq!(unsafe { mb.pop() }, Pop::Empty);
    assert!(unsafe { mb.try_idle() }, "goes idle inside a big block");
    assert_eq!(mb.push(n), Push::Wake);
    assert_eq!(unsafe { mb.pop() }, Pop::Item(n));
}

/// A consumer that keeps up (here within one message, and within one block) never makes its
/// senders link a big block: the spare comes back before it is needed.
#[test]
fn a_stream_that_keeps_up_stays_in_small_blocks() {
    let mb = Mailbox::new();
    unsafe { mb.settle() };
    for lag in [1, BLOCK_CAP - 1] {
        for i in 0..lag {
            let _ = mb.push(i);
        }
        for i in lag..lag + 20 * BIG_CAP {
            let _ = mb.push(i);
            assert!(!tail_is_big(&mb), "a big block with a backlog of {lag}");
            assert_eq!(unsafe { mb.pop() }, Pop::Item(i - lag));
        }
        for i in 20 * BIG_CAP..lag + 20 * BIG_CAP {
            assert_eq!(unsafe { mb.pop() }, Pop::Item(i));
        }
    }
}

/// A backlog that stays behind recycles its big blocks: the consumer keeps a consumed big block
/// whose successor is big as the spare, the sender links that very block at its next block end,
/// FIFO holds through it, and the actor going idle frees the big spare it no longer needs.
#[test]
fn a_lasting_backlog_recycles_its_big_blocks() {
    let mb = Mailbox::new();
    unsafe { mb.settle() };
    let before_big = FIRST_CAP + (BIG_LAPS - 1) * BLOCK_CAP;
    // Small blocks, a first big block, and a second one but for its last slot.
    let mut sent = 0;
    while sent < before_big + 2 * BIG_CAP - 1 {
        let _ = mb.push(sent);
        sent += 1;
    }
    for i in 0..before_big + BIG_CAP {
        assert_eq!(unsafe { mb.pop() }, Pop::Item(i));
    }
    let (kept, big) = block::untagged(mb.spare.load(Relaxed));
    assert!(
        big && !kept.is_null(),
        "the first big block, consumed, is kept while the backlog lasts"
    );
    // The second big block's last slot: its sender links the next block.
    let _ = mb.push(sent);
    sent += 1;
    assert!(
        mb.spare.load(Relaxed).is_null(),
        "the sender took the spare"
    );
    assert_eq!(
        mb.tail_block.load(Relaxed),
        kept,
        "the kept big block is linked again instead of a new allocation"
    );
    assert!(tail_is_big(&mb));
    for _ in 0..5 {
        let _ = mb.push(sent);
        sent += 1;
    }
    for i in before_big + BIG_CAP..sent {
        assert_eq!(unsafe { mb.pop() }, Pop::Item(i));
    }
    assert_eq!(unsafe { mb.pop() }, Pop::Empty);
    assert!(
        block::untagged(mb.spare.load(Relaxed)).1,
        "the second big block is kept (its successor is big)"
    );
    assert!(unsafe { mb.try_idle() });
    assert!(
        mb.spare.load(Relaxed).is_null(),
        "an idle actor keeps no big spare"
    );
}
