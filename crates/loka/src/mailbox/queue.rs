//! A segmented multi-producer single-consumer queue: the storage of every mailbox.
//!
//! Why hand-written: the mailbox is the hottest structure of the runtime. A node-per-message queue
//! (Vyukov's) pays one allocation and one free per message; this queue stores messages inline in
//! blocks of [`BLOCK_CAP`] slots, so it allocates once per block. Producers claim a slot with a single
//! compare-and-swap on the tail index and never wait for the consumer; the consumer never performs an
//! atomic read-modify-write at all.
//!
//! Layout of the tail index: positions advance by one per slot; a block covers [`LAP`] positions of
//! which the last (`offset == BLOCK_CAP`) is a marker meaning "this block is full and the producer that
//! took its last slot is installing the next block". Producers seeing the marker wait for that
//! installation (a few instructions, see [`SegQueue::push`]).
//!
//! The consumer can observe a *claimed but not yet written* slot: [`SegQueue::pop`] then reports
//! [`Pop::NotReady`] instead of spinning, and the mailbox protocol reschedules the actor (the
//! message is counted, so it cannot be forgotten).

use crate::sync::{spin_hint, AtomicBool, AtomicPtr, AtomicUsize, UnsafeCell};
use crossbeam_utils::CachePadded;
use std::mem::MaybeUninit;
use std::ptr;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};

/// Slots per block. Under loom the block is tiny so block hand-over is explored exhaustively.
#[cfg(not(loom))]
pub(crate) const BLOCK_CAP: usize = 31;
#[cfg(loom)]
pub(crate) const BLOCK_CAP: usize = 2;
/// Positions per block: the slots plus the "next block being installed" marker.
const LAP: usize = BLOCK_CAP + 1;

struct Slot<T> {
    value: UnsafeCell<MaybeUninit<T>>,
    /// Set (Release) by the producer after writing `value`; read (Acquire) by the consumer.
    ready: AtomicBool,
}

struct Block<T> {
    /// Written once, by the producer that claims this block's last slot, before it marks that slot
    /// ready; so a consumer that has read the last slot always sees it non-null.
    next: AtomicPtr<Block<T>>,
    slots: [Slot<T>; BLOCK_CAP],
}

impl<T> Block<T> {
    fn new_boxed() -> *mut Block<T> {
        let block = Block {
            next: AtomicPtr::new(ptr::null_mut()),
            slots: std::array::from_fn(|_| Slot {
                value: UnsafeCell::new(MaybeUninit::uninit()),
                ready: AtomicBool::new(false),
            }),
        };
        Box::into_raw(Box::new(block))
    }
}

/// The consumer's position; touched only by the single consumer.
struct Head<T> {
    index: usize,
    block: *mut Block<T>,
}

/// The producers' position.
struct Tail<T> {
    index: AtomicUsize,
    block: AtomicPtr<Block<T>>,
}

/// Result of a [`SegQueue::pop`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Pop<T> {
    /// The oldest message.
    Item(T),
    /// Nothing was ever claimed past the consumer's position.
    Empty,
    /// A producer has claimed the next slot but not finished writing it yet.
    NotReady,
}

/// Lock-free MPSC queue; see the module documentation.
pub(crate) struct SegQueue<T> {
    head: CachePadded<UnsafeCell<Head<T>>>,
    tail: CachePadded<Tail<T>>,
}

// SAFETY: values of `T` move from producers to the consumer, so `T: Send` suffices; all shared state
// is atomics, and `head` is only touched through `pop`, whose contract restricts it to one consumer.
unsafe impl<T: Send> Send for SegQueue<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for SegQueue<T> {}

impl<T> SegQueue<T> {
    /// An empty queue with its first block allocated.
    pub(crate) fn new() -> Self {
        let first = Block::<T>::new_boxed();
        SegQueue {
            head: CachePadded::new(UnsafeCell::new(Head {
                index: 0,
                block: first,
            })),
            tail: CachePadded::new(Tail {
                index: AtomicUsize::new(0),
                block: AtomicPtr::new(first),
            }),
        }
    }

    /// Appends `value`. Lock-free for producers with respect to the consumer; producers only wait for
    /// each other while the one that took a block's last slot links the next block.
    pub(crate) fn push(&self, value: T) {
        let mut next_block: *mut Block<T> = ptr::null_mut();
        // Acquire pairs with the Release stores of a block installer below: seeing its index implies
        // seeing its block pointer.
        let mut tail = self.tail.index.load(Acquire);
        let mut block = self.tail.block.load(Acquire);
        loop {
            let offset = tail % LAP;
            if offset == BLOCK_CAP {
                // Another producer is installing the next block; it does so right after its CAS.
                spin_hint();
                tail = self.tail.index.load(Acquire);
                block = self.tail.block.load(Acquire);
                continue;
            }
            // Allocate before claiming the last slot so the window in which others wait stays tiny.
            if offset + 1 == BLOCK_CAP && next_block.is_null() {
                next_block = Block::new_boxed();
            }
            // AcqRel: the claim must not be reordered after our slot write, and must observe the
            // block pointer that goes with this index (a stale block fails the CAS because the index
            // moved on when the block changed).
            match self
                .tail
                .index
                .compare_exchange_weak(tail, tail + 1, AcqRel, Acquire)
            {
                Ok(_) => {
                    // SAFETY: the successful CAS gave us exclusive ownership of slot `offset` of
                    // `block`; the block cannot be freed before its every slot was read, including
                    // ours, which is not ready yet.
                    unsafe {
                        if offset + 1 == BLOCK_CAP {
                            // We took the last slot: publish the next block, then skip the marker.
                            let next = next_block;
                            next_block = ptr::null_mut();
                            self.tail.block.store(next, Release);
                            self.tail.index.store(tail + 2, Release);
                            (*block).next.store(next, Release);
                        }
                        let slot = (*block).slots.as_ptr().add(offset);
                        (*slot).value.with_mut(|p| p.write(MaybeUninit::new(value)));
                        // Release publishes the value (and, for the last slot, `next`).
                        (*slot).ready.store(true, Release);
                    }
                    if !next_block.is_null() {
                        // Allocated for a last slot someone else ended up taking.
                        // SAFETY: never published; we still own it.
                        drop(unsafe { Box::from_raw(next_block) });
                    }
                    return;
                }
                Err(current) => {
                    tail = current;
                    block = self.tail.block.load(Acquire);
                }
            }
        }
    }

    /// Removes the oldest value.
    ///
    /// # Safety
    /// Only one thread may call `pop` at a time (the single consumer); the mailbox protocol
    /// guarantees it by running an actor on at most one worker at a time.
    pub(crate) unsafe fn pop(&self) -> Pop<T> {
        self.head.with_mut(|head| {
            // SAFETY: the caller guarantees exclusive access to `head`.
            let head = unsafe { &mut *head };
            let offset = head.index % LAP;
            // SAFETY: `head.block` is live: it is freed only below, by this consumer, after its
            // last slot was read.
            let slot = unsafe { &*(*head.block).slots.as_ptr().add(offset) };
            // Acquire pairs with the producer's Release: the value (and `next`) are visible.
            if !slot.ready.load(Acquire) {
                // Claimed-but-unwritten and truly empty look alike here; tell them apart by the
                // tail (a claim moved it past us).
                return if self.tail.index.load(Relaxed) == head.index {
                    Pop::Empty
                } else {
                    Pop::NotReady
                };
            }
            // SAFETY: the slot is ready and we are its only reader; reading moves the value out.
            let value = slot.value.with(|p| unsafe { p.read().assume_init() });
            if offset + 1 == BLOCK_CAP {
                // Last slot read: every producer of this block is done with it (each one's last
                // access is its `ready` store), so the block can go.
                // SAFETY: see above; `next` was published before this slot became ready.
                unsafe {
                    let next = (*head.block).next.load(Acquire);
                    debug_assert!(!next.is_null());
                    drop(Box::from_raw(head.block));
                    head.block = next;
                }
                head.index += 2;
            } else {
                head.index += 1;
            }
            Pop::Item(value)
        })
    }
}

impl<T> Drop for SegQueue<T> {
    fn drop(&mut self) {
        // `&mut self`: no producer or consumer is active. Drop what is left, then the last block.
        // SAFETY: exclusive access makes us the single consumer.
        while let Pop::Item(value) = unsafe { self.pop() } {
            drop(value);
        }
        self.head.with_mut(|head| {
            // SAFETY: exclusive access; the head block is the only block still allocated (claimed
            // slots are always written before a producer lets go of the queue).
            unsafe { drop(Box::from_raw((*head).block)) }
        });
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn fifo_single_thread_across_blocks() {
        let q = SegQueue::new();
        for i in 0..(BLOCK_CAP * 5 + 3) {
            q.push(i);
        }
        for i in 0..(BLOCK_CAP * 5 + 3) {
            assert_eq!(unsafe { q.pop() }, Pop::Item(i));
        }
        assert_eq!(unsafe { q.pop() }, Pop::Empty);
    }

    #[test]
    fn drop_frees_remaining_values() {
        let marker = Arc::new(());
        let q = SegQueue::new();
        for _ in 0..(BLOCK_CAP * 2 + 1) {
            q.push(Arc::clone(&marker));
        }
        assert_eq!(unsafe { q.pop() }, Pop::Item(Arc::clone(&marker)));
        drop(q);
        assert_eq!(Arc::strong_count(&marker), 1);
    }

    #[test]
    fn per_producer_fifo_with_concurrent_producers() {
        let producers = if cfg!(miri) { 2 } else { 4 };
        let per = if cfg!(miri) { 200 } else { 50_000 };
        let q = Arc::new(SegQueue::new());
        let handles: Vec<_> = (0..producers)
            .map(|p| {
                let q = Arc::clone(&q);
                std::thread::spawn(move || {
                    for i in 0..per {
                        q.push((p, i));
                    }
                })
            })
            .collect();
        let mut next = vec![0usize; producers];
        let mut got = 0;
        while got < producers * per {
            match unsafe { q.pop() } {
                Pop::Item((p, i)) => {
                    assert_eq!(next[p], i, "producer {p} out of order");
                    next[p] += 1;
                    got += 1;
                }
                Pop::Empty | Pop::NotReady => std::thread::yield_now(),
            }
        }
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(unsafe { q.pop() }, Pop::Empty);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    /// Two producers race over a block boundary (BLOCK_CAP = 2 under loom) while the consumer reads:
    /// every value arrives exactly once and in per-producer order, and no block is freed early.
    #[test]
    fn two_producers_one_consumer() {
        loom::model(|| {
            let q = Arc::new(SegQueue::new());
            let producers: Vec<_> = (0..2)
                .map(|p| {
                    let q = q.clone();
                    loom::thread::spawn(move || {
                        q.push((p, 0));
                        q.push((p, 1));
                    })
                })
                .collect();
            let mut next = [0usize; 2];
            let mut got = 0;
            // Bounded number of polls; drain the rest after the producers joined.
            for _ in 0..3 {
                if let Pop::Item((p, i)) = unsafe { q.pop() } {
                    assert_eq!(next[p], i);
                    next[p] += 1;
                    got += 1;
                }
            }
            for h in producers {
                h.join().unwrap();
            }
            loop {
                match unsafe { q.pop() } {
                    Pop::Item((p, i)) => {
                        assert_eq!(next[p], i);
                        next[p] += 1;
                        got += 1;
                    }
                    Pop::Empty => break,
                    Pop::NotReady => panic!("not ready after all producers finished"),
                }
            }
            assert_eq!(got, 4);
        });
    }
}
