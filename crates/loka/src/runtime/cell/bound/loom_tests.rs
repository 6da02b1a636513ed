use super::*;
use crate::sync::AtomicBool;
use std::sync::atomic::Ordering::SeqCst;
use std::task::Wake;

struct Flag(loom::sync::Arc<AtomicBool>);
impl Wake for Flag {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.store(true, SeqCst);
    }
}

/// A waker that sets a flag, and the flag.
fn flagged() -> (loom::sync::Arc<AtomicBool>, Waker) {
    let woken = loom::sync::Arc::new(AtomicBool::new(false));
    let waker = Waker::from(std::sync::Arc::new(Flag(woken.clone())));
    (woken, waker)
}

/// Registers a waiting sender on the full `bound` while `other` runs: it must have seen the
/// room (not registered) or been woken.
fn registers_or_is_woken(bound: &Bound, other: loom::thread::JoinHandle<()>) {
    let (woken, waker) = flagged();
    let mut key = None;
    let registered = bound.register(&mut key, &waker);
    other.join().unwrap();
    assert!(!registered || woken.load(SeqCst), "lost wake-up");
}

/// A sender registering on a full mailbox while the actor frees a place: either the
/// registration sees the room (and the sender retries) or the release wakes the sender.
#[test]
fn a_release_never_misses_a_registering_sender() {
    loom::model(|| {
        let bound = loom::sync::Arc::new(Bound::new(1, Overflow::Reject));
        assert_eq!(bound.reserve(), Room::Reserved);
        let actor = {
            let bound = bound.clone();
            loom::thread::spawn(move || assert_eq!(bound.take(), Taken::Handle))
        };
        registers_or_is_woken(&bound, actor);
    });
}

/// One sender waits; a second registers while the actor frees two places: the first is woken
/// by the first release, the second (if it registered at all) by the second.
#[test]
fn each_release_wakes_a_waiter() {
    loom::model(|| {
        let bound = loom::sync::Arc::new(Bound::new(2, Overflow::Reject));
        assert_eq!(bound.reserve(), Room::Reserved);
        assert_eq!(bound.reserve(), Room::Reserved);
        let (first, first_waker) = flagged();
        assert!(bound.register(&mut None, &first_waker));
        let actor = {
            let bound = bound.clone();
            loom::thread::spawn(move || {
                bound.take();
                bound.take();
            })
        };
        registers_or_is_woken(&bound, actor);
        assert!(first.load(SeqCst), "the first waiter was not woken");
    });
}

/// Batched releases (capacity 16: two places per batch): a sender registers on a full
/// mailbox while the actor takes three messages and ends its run (giving back the third):
/// the sender is woken or saw the room, and every place taken is given back.
#[test]
fn a_batched_release_never_misses_a_registering_sender() {
    loom::model(|| {
        let bound = loom::sync::Arc::new(Bound::new(16, Overflow::Reject));
        for _ in 0..16 {
            assert_eq!(bound.reserve(), Room::Reserved);
        }
        let actor = {
            let bound = bound.clone();
            loom::thread::spawn(move || {
                for _ in 0..3 {
                    assert_eq!(bound.take_batched(), Taken::Handle);
                }
                bound.release_taken();
            })
        };
        registers_or_is_woken(&bound, actor);
        assert_eq!(bound.len(), 13);
    });
}

/// Places reserved ahead (`credit.rs`; capacity 16, chunks of 2): a sender registers on a full
/// mailbox while another sender gives back the place it reserved ahead and did not use (the only
/// place that frees). The waiter is woken or saw the room, and the place is counted out.
#[test]
fn giving_back_reserved_places_never_misses_a_registering_sender() {
    loom::model(|| {
        let bound = loom::sync::Arc::new(Bound::new(16, Overflow::Reject));
        assert_eq!(bound.reserve_chunk(), 2, "a chunk while nearly empty");
        for _ in 0..14 {
            assert_eq!(bound.reserve(), Room::Reserved);
        }
        let sender = {
            let bound = bound.clone();
            loom::thread::spawn(move || bound.release(1))
        };
        registers_or_is_woken(&bound, sender);
        assert_eq!(bound.len(), 15);
    });
}

/// Chunks reserved concurrently never take the mailbox past its capacity, nor past half full
/// by chunks (capacity 16, chunks of 2, 6 places already taken: of two concurrent chunk
/// reservations at most one gets 2 places).
#[test]
fn concurrent_chunks_stop_at_half_the_capacity() {
    loom::model(|| {
        let bound = loom::sync::Arc::new(Bound::new(16, Overflow::Reject));
        for _ in 0..6 {
            assert_eq!(bound.reserve(), Room::Reserved);
        }
        let other = {
            let bound = bound.clone();
            loom::thread::spawn(move || bound.reserve_chunk())
        };
        let mine = bound.reserve_chunk();
        let theirs = other.join().unwrap();
        assert_eq!(mine.min(theirs), 1, "{mine} and {theirs} places");
        assert_eq!(mine + theirs, 3);
        assert_eq!(bound.len(), 9);
    });
}
