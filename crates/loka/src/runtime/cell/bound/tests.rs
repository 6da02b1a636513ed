use super::*;
// atomic outside sync.rs: test-only (`not(loom)`), a waker's counter on real threads.
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::Wake;

/// A waker that counts its wake-ups.
pub(super) struct Count(pub(super) AtomicUsize);
impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, SeqCst);
    }
}

/// A counting waker and its count.
pub(super) fn waker() -> (Arc<Count>, Waker) {
    let count = Arc::new(Count(AtomicUsize::new(0)));
    (Arc::clone(&count), Waker::from(count))
}

#[test]
fn reserve_stops_at_capacity_and_take_frees_a_place() {
    let bound = Bound::new(2, Overflow::Reject);
    assert_eq!(bound.reserve(), Room::Reserved);
    assert_eq!(bound.reserve(), Room::Reserved);
    assert_eq!(bound.reserve(), Room::Full);
    assert_eq!(bound.len(), 2);
    assert_eq!(bound.take(), Taken::Handle);
    assert_eq!(bound.len(), 1);
    assert_eq!(bound.reserve(), Room::Reserved);
    bound.unreserve(Room::Reserved);
    assert_eq!(bound.len(), 1);
}

#[test]
fn make_room_dooms_the_next_messages_taken_out() {
    let bound = Bound::new(1, Overflow::DropOldest);
    assert_eq!(bound.make_room(), Room::Reserved);
    assert_eq!(bound.make_room(), Room::Evicting);
    assert_eq!(bound.make_room(), Room::Evicting);
    // Three queued: the first two are doomed, the last is handled; len never exceeds 1.
    assert_eq!(bound.len(), 1);
    assert_eq!(bound.take(), Taken::Discard);
    assert_eq!(bound.take(), Taken::Discard);
    assert_eq!(bound.take(), Taken::Handle);
    assert_eq!(bound.len(), 0);
}

#[test]
fn a_release_wakes_one_waiter_and_a_dropped_waiter_passes_its_wake_on() {
    let bound = Bound::new(1, Overflow::Reject);
    assert_eq!(bound.reserve(), Room::Reserved);
    let (first, w1) = waker();
    let (second, w2) = waker();
    let (mut k1, mut k2) = (None, None);
    assert!(bound.register(&mut k1, &w1));
    assert!(bound.register(&mut k2, &w2));
    assert_eq!(bound.take(), Taken::Handle);
    assert_eq!((first.0.load(SeqCst), second.0.load(SeqCst)), (1, 0));
    // The first waiter gives up without using the room: the second is woken instead.
    bound.unregister(k1.unwrap(), true);
    assert_eq!(second.0.load(SeqCst), 1);
    // Room now: registering answers "try again" and leaves nothing registered.
    let (_, w3) = waker();
    let mut k3 = None;
    assert!(!bound.register(&mut k3, &w3));
    assert_eq!(bound.word.load(SeqCst) & WAITERS, 0);
}

#[test]
fn the_batch_is_an_eighth_of_the_capacity_at_most_32_and_1_under_drop_oldest() {
    let batch = |capacity, overflow| Bound::new(capacity, overflow).batch;
    assert_eq!(batch(15, Overflow::Reject), 1);
    assert_eq!(batch(16, Overflow::Reject), 2);
    assert_eq!(batch(100, Overflow::DropNewest), 12);
    assert_eq!(batch(1_000, Overflow::Reject), 32);
    assert_eq!(batch(1_000, Overflow::DropOldest), 1);
}

#[test]
fn batched_takes_give_their_places_back_per_batch_and_when_released() {
    let bound = Bound::new(16, Overflow::Reject); // batch 2
    for _ in 0..16 {
        assert_eq!(bound.reserve(), Room::Reserved);
    }
    assert_eq!(bound.take_batched(), Taken::Handle);
    // One taken, not given back yet: still counted, and the mailbox still full.
    assert_eq!(bound.len(), 16);
    assert_eq!(bound.reserve(), Room::Full);
    assert_eq!(bound.take_batched(), Taken::Handle);
    assert_eq!(bound.len(), 14, "the second take completes the batch");
    assert_eq!(bound.take_batched(), Taken::Handle);
    assert_eq!(bound.len(), 14);
    bound.release_taken();
    assert_eq!(bound.len(), 13);
    bound.release_taken();
    assert_eq!(bound.len(), 13, "nothing left to give back");
}

#[test]
fn a_batched_release_wakes_as_many_waiters_as_it_frees_places() {
    let bound = Bound::new(16, Overflow::Reject); // batch 2
    for _ in 0..16 {
        assert_eq!(bound.reserve(), Room::Reserved);
    }
    let counts: Vec<_> = (0..3)
        .map(|_| {
            let (count, w) = waker();
            assert!(bound.register(&mut None, &w));
            count
        })
        .collect();
    bound.take_batched();
    assert_eq!(counts[0].0.load(SeqCst), 0, "no place given back yet");
    bound.take_batched();
    let woken: Vec<usize> = counts.iter().map(|c| c.0.load(SeqCst)).collect();
    assert_eq!(woken, [1, 1, 0]);
    bound.take_batched();
    bound.release_taken();
    assert_eq!(counts[2].0.load(SeqCst), 1);
    assert_eq!(bound.word.load(SeqCst) & WAITERS, 0);
}

#[test]
fn close_wakes_every_waiter() {
    let bound = Bound::new(1, Overflow::Reject);
    assert_eq!(bound.reserve(), Room::Reserved);
    let (count, w) = waker();
    for _ in 0..3 {
        assert!(bound.register(&mut None, &w));
    }
    bound.close();
    assert_eq!(count.0.load(SeqCst), 3);
    assert_eq!(bound.word.load(SeqCst) & WAITERS, 0);
}
