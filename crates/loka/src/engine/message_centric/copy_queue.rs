//! Cforall's copy queue: the items themselves (letters, a few words each) are copied into a
//! growable array; pop takes the next one by index, so a queue that is filled, then taken whole
//! (a gulp) and emptied, costs O(1) per item and allocates nothing once it has grown.
//!
//! The array shrinks only when a gulp used less than half of it (Cforall's reclamation rule:
//! shrinking by a fixed step each gulp instead nearly doubled the high-water mark, because a queue
//! that regularly needs 19 slots kept shrinking below 19 and doubling again).

use std::ptr;

/// Smallest capacity kept by reclamation.
const MIN_CAPACITY: usize = 8;

/// A FIFO of `T` in one array: pushes append, pops read forward from `head`.
pub(crate) struct CopyQueue<T> {
    /// `items[head..len]` are live; `items[..head]` were moved out by `pop` (their slots are
    /// logically uninitialised, though `Vec` still counts them in its length).
    items: Vec<T>,
    head: usize,
}

impl<T> Default for CopyQueue<T> {
    fn default() -> Self {
        CopyQueue {
            items: Vec::new(),
            head: 0,
        }
    }
}

impl<T> CopyQueue<T> {
    /// Appends an item (amortised O(1); no allocation unless the array is full).
    #[inline]
    pub(crate) fn push(&mut self, item: T) {
        self.items.push(item);
    }

    /// Takes the oldest item.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<T> {
        if self.head == self.items.len() {
            return None;
        }
        // SAFETY: `head < len`, so the slot is in bounds and live (not yet moved out); advancing
        // `head` below makes it logically uninitialised, and no code reads or drops `..head`.
        let item = unsafe { ptr::read(self.items.as_ptr().add(self.head)) };
        self.head += 1;
        if self.head == self.items.len() {
            self.reset();
        }
        Some(item)
    }

    /// Reserves a place for one more item at the end and gives it, uninitialised; the caller
    /// must write it before anything else uses the queue (an item is written where it will wait,
    /// not moved there).
    ///
    /// # Safety
    /// The caller writes a valid `T` at the returned place before the next call on this queue
    /// (until then the queue counts an uninitialised item, which a pop or a drop would read).
    #[inline]
    pub(crate) unsafe fn reserve_slot(&mut self) -> *mut T {
        self.items.reserve(1);
        let len = self.items.len();
        // SAFETY: `reserve` made room for `len + 1` items; the caller initialises the new one
        // before it is read (its contract).
        unsafe {
            self.items.set_len(len + 1);
            self.items.as_mut_ptr().add(len)
        }
    }

    /// Takes the oldest item where it lies: the caller must read it (`ptr::read`) before the
    /// next push, which may reuse or move its place, and must not read it twice.
    #[inline]
    pub(crate) fn pop_in_place(&mut self) -> Option<*mut T> {
        if self.head == self.items.len() {
            return None;
        }
        // SAFETY: `head < len`: in bounds and live. It becomes logically uninitialised for the
        // queue (the caller moves it out), as in `pop`.
        let item = unsafe { self.items.as_mut_ptr().add(self.head) };
        self.head += 1;
        if self.head == self.items.len() {
            // The memory stays as it is until the next push.
            self.reset();
        }
        Some(item)
    }

    /// The oldest item, not taken.
    #[inline]
    pub(crate) fn front(&self) -> Option<&T> {
        self.items.get(self.head)
    }

    /// The item `k` places behind the oldest (`ahead(0)` is the oldest), if there is one.
    #[inline]
    pub(crate) fn ahead(&self, k: usize) -> Option<&T> {
        self.items.get(self.head + k)
    }

    /// Items not yet popped.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.items.len() - self.head
    }

    /// Whether nothing is left to pop.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The items not yet popped, oldest first.
    pub(crate) fn remaining(&self) -> &[T] {
        &self.items[self.head..]
    }

    /// Allocated slots.
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.items.capacity()
    }

    /// Everything was popped: forget the moved-out slots (without dropping them).
    fn reset(&mut self) {
        // SAFETY: every slot `..len` was moved out by `pop` (head == len), so none may be dropped;
        // a length of 0 is always valid.
        unsafe { self.items.set_len(0) };
        self.head = 0;
    }

    /// Cforall's reclamation, called when a gulp of `used` items from this array is done and the
    /// queue is empty: halve the array if less than half of it was used.
    pub(crate) fn reclaim(&mut self, used: usize) {
        debug_assert!(self.is_empty());
        let capacity = self.items.capacity();
        if capacity > MIN_CAPACITY && used < capacity / 2 {
            self.items.shrink_to((capacity / 2).max(MIN_CAPACITY));
        }
    }
}

impl<T> Drop for CopyQueue<T> {
    fn drop(&mut self) {
        // Drop the live items in order, then forget every slot (the moved-out ones included).
        while let Some(item) = self.pop() {
            drop(item);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::rc::Rc;

    #[test]
    fn fifo_through_growth_and_reuse() {
        let mut q = CopyQueue::default();
        for round in 0..3 {
            for i in 0..100 {
                q.push(format!("{round}-{i}"));
            }
            assert_eq!(q.len(), 100);
            assert_eq!(q.remaining()[0], format!("{round}-0"));
            for i in 0..100 {
                assert_eq!(q.pop().unwrap(), format!("{round}-{i}"));
            }
            assert!(q.pop().is_none());
            assert!(q.is_empty());
        }
    }

    #[test]
    fn no_allocation_once_grown() {
        let mut q = CopyQueue::default();
        for i in 0..64 {
            q.push(i);
        }
        while q.pop().is_some() {}
        let capacity = q.capacity();
        for _ in 0..10 {
            for i in 0..64 {
                q.push(i);
            }
            assert_eq!(
                q.capacity(),
                capacity,
                "a refill of the same size reuses the array"
            );
            while q.pop().is_some() {}
            q.reclaim(64);
        }
    }

    #[test]
    fn reclaim_halves_only_when_under_half_used() {
        let mut q: CopyQueue<u64> = CopyQueue::default();
        for i in 0..1000 {
            q.push(i);
        }
        while q.pop().is_some() {}
        let big = q.capacity();
        q.reclaim(big / 2 + 1);
        assert_eq!(q.capacity(), big, "more than half used: kept");
        q.reclaim(10);
        assert!(q.capacity() <= big / 2 + 1 && q.capacity() >= big / 2 - 1);
        for _ in 0..20 {
            q.reclaim(0);
        }
        assert!(q.capacity() >= MIN_CAPACITY && q.capacity() < 2 * MIN_CAPACITY);
    }

    /// Items written in reserved places and read where they lie, interleaved with plain pushes
    /// and pops, through growth (the reserved place moves with the array) and the reset of an
    /// emptied queue (the next reservation reuses the first place): each item is read once, in
    /// order, and none is dropped twice or leaked (Miri checks the reads and the frees).
    #[test]
    fn reserved_places_and_in_place_pops_keep_order_and_ownership() {
        let token = Rc::new(());
        let mut q: CopyQueue<(u32, Rc<()>)> = CopyQueue::default();
        let mut next = 0;
        let mut expected = 0;
        for round in 0..4 {
            for i in 0..(5 + 7 * round) {
                if i % 2 == 0 {
                    // SAFETY: written at once, before the next call on the queue.
                    unsafe { q.reserve_slot().write((next, Rc::clone(&token))) };
                } else {
                    q.push((next, Rc::clone(&token)));
                }
                next += 1;
            }
            while let Some(at) = q.pop_in_place() {
                // SAFETY: read once, before the next push.
                let (n, t) = unsafe { at.read() };
                assert_eq!(n, expected);
                expected += 1;
                drop(t);
            }
        }
        assert_eq!(expected, next);
        // Some left in the queue at its drop, one taken in place and not read (forgotten).
        for _ in 0..3 {
            // SAFETY: as above.
            unsafe { q.reserve_slot().write((next, Rc::clone(&token))) };
            next += 1;
        }
        let at = q.pop_in_place().expect("three queued");
        // SAFETY: read once; the queue no longer owns it.
        drop(unsafe { at.read() });
        assert_eq!(Rc::strong_count(&token), 3);
        drop(q);
        assert_eq!(
            Rc::strong_count(&token),
            1,
            "the two live items dropped once"
        );
    }

    #[test]
    fn drop_releases_live_items_only_once() {
        let token = Rc::new(());
        let mut q = CopyQueue::default();
        for _ in 0..10 {
            q.push(Rc::clone(&token));
        }
        for _ in 0..4 {
            drop(q.pop());
        }
        assert_eq!(Rc::strong_count(&token), 7);
        drop(q);
        assert_eq!(
            Rc::strong_count(&token),
            1,
            "the 6 live items dropped, the 4 popped not again"
        );
    }

    #[test]
    fn interleaved_push_and_pop_match_a_deque() {
        let mut q = CopyQueue::default();
        let mut model = std::collections::VecDeque::new();
        let mut rng = 12345u64;
        for i in 0..2000u64 {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if rng >> 62 != 0 {
                q.push(i);
                model.push_back(i);
            } else {
                assert_eq!(q.pop(), model.pop_front());
            }
            assert_eq!(q.len(), model.len());
            // What a gulp prefetches: the item k places behind the oldest.
            for k in [0, 3, model.len()] {
                assert_eq!(q.ahead(k), model.get(k), "ahead({k})");
            }
        }
        while let Some(x) = model.pop_front() {
            assert_eq!(q.pop(), Some(x));
        }
        assert_eq!(q.pop(), None);
    }
}
