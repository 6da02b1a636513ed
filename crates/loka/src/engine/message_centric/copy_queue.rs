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
        // SAFETY: written at once, before anything else uses the queue.
        unsafe { self.reserve_slot().write(item) };
    }

    /// The array is full: if at least half of it was popped, moves the live items down to the
    /// front instead of letting the array grow; else grows it. A gulp that its handlers keep
    /// feeding (a group whose letters make the next ones) pops from the front while it appends
    /// at the end and never empties until its visit ends; without this its array grew by every
    /// letter it ever held (192,000 letters, ~9 MiB, for a visit of the executor at Cforall's
    /// size), with each append writing a fresh line. The move costs at most one copy per item
    /// popped since the last one.
    #[cold]
    #[inline(never)]
    fn make_room(&mut self) {
        if self.head != 0 && 2 * self.head >= self.items.len() {
            self.compact();
        } else {
            self.items.reserve(1);
        }
    }

    /// Moves the live items to the front of the array.
    #[cold]
    fn compact(&mut self) {
        let live = self.items.len() - self.head;
        // SAFETY: `head..len` are live and in bounds, `..head` were moved out (logically
        // uninitialised); `ptr::copy` allows the overlap. Afterwards `..live` are the live
        // items, in order, and nothing else is counted.
        unsafe {
            let base = self.items.as_mut_ptr();
            ptr::copy(base.add(self.head), base, live);
            self.items.set_len(live);
        }
        self.head = 0;
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
        // The array's own capacity check is the only one on the way: `make_room` runs only
        // when it fails.
        if self.items.len() == self.items.capacity() {
            self.make_room();
        }
        let len = self.items.len();
        // SAFETY: `make_room` left `len < capacity`; the caller initialises the new item before
        // it is read (its contract).
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

    /// Moves every item `take` picks out of the queue, oldest first, into `sink`, and closes
    /// the gap: the items left keep their order. Returns how many moved. O(items) and no
    /// allocation. An actor that
    /// follows its partners to another worker takes its queued letters along this way
    /// (`follow::follow_target`).
    ///
    /// If `take` or `sink` unwinds, the items not yet looked at stay queued behind those kept,
    /// the one being looked at is lost (leaked or dropped, never twice), and the queue stays
    /// sound.
    pub(crate) fn move_out_where(
        &mut self,
        mut take: impl FnMut(&T) -> bool,
        mut sink: impl FnMut(T),
    ) -> usize {
        /// The compaction's state: `items[head..kept]` are the items kept so far, packed;
        /// `items[next..len]` are not looked at yet; the places between hold nothing live.
        /// Dropped at the end or on unwinding: moves the unread items down behind the kept ones
        /// and sets the length.
        struct Gap<'a, T> {
            items: &'a mut Vec<T>,
            len: usize,
            kept: usize,
            next: usize,
        }
        impl<T> Drop for Gap<'_, T> {
            fn drop(&mut self) {
                let unread = self.len - self.next;
                // SAFETY: `next..len` are live and `kept <= next`, both in bounds; `ptr::copy`
                // allows the ranges to overlap. Afterwards `..kept + unread` holds the moved-out
                // slots below `head` and the live items, the length the queue counts.
                unsafe {
                    let base = self.items.as_mut_ptr();
                    if self.kept != self.next {
                        ptr::copy(base.add(self.next), base.add(self.kept), unread);
                    }
                    self.items.set_len(self.kept + unread);
                }
            }
        }
        let len = self.items.len();
        // While the gap is open the vector counts none of the items from `head` on, so an unwind
        // inside `take` or `sink` drops nothing twice (the guard restores the count).
        // SAFETY: `head <= len`; the items below `head` were moved out already.
        unsafe { self.items.set_len(self.head) };
        let mut gap = Gap {
            items: &mut self.items,
            len,
            kept: self.head,
            next: self.head,
        };
        while gap.next < gap.len {
            let base = gap.items.as_mut_ptr();
            // SAFETY: `next < len`: in bounds, and live (not looked at yet).
            let at = unsafe { base.add(gap.next) };
            // SAFETY: `at` is live; `take` gets a shared look only.
            let picked = take(unsafe { &*at });
            gap.next += 1;
            if picked {
                // SAFETY: live, and no longer counted as such (`next` moved past it): read once.
                sink(unsafe { ptr::read(at) });
            } else {
                if gap.kept != gap.next - 1 {
                    // SAFETY: `kept < next - 1`: the place at `kept` holds nothing live, and
                    // the two places are distinct and in bounds.
                    unsafe { ptr::copy_nonoverlapping(at, base.add(gap.kept), 1) };
                }
                gap.kept += 1;
            }
        }
        let moved = gap.next - gap.kept;
        drop(gap);
        if self.head == self.items.len() {
            self.reset();
        }
        moved
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

    /// Moving some items out: they come out oldest first, the rest stay queued in order behind
    /// what was popped before, and every item is owned once (Miri checks the copies and the
    /// drops). A sink that panics midway loses nothing else and leaves a sound queue.
    #[test]
    fn moving_items_out_keeps_both_orders_and_ownership() {
        let token = Rc::new(());
        let mut q = CopyQueue::default();
        for i in 0..40u32 {
            q.push((i, Rc::clone(&token)));
        }
        for _ in 0..5 {
            drop(q.pop());
        }
        let mut moved = Vec::new();
        let n = q.move_out_where(|(i, _)| i % 3 == 0, |item| moved.push(item));
        assert_eq!(n, moved.len(), "counted");
        let moved: Vec<u32> = moved.into_iter().map(|(i, _)| i).collect();
        assert_eq!(moved, (5..40).filter(|i| i % 3 == 0).collect::<Vec<_>>());
        let left: Vec<u32> = q.remaining().iter().map(|(i, _)| *i).collect();
        assert_eq!(left, (5..40).filter(|i| i % 3 != 0).collect::<Vec<_>>());
        assert_eq!(Rc::strong_count(&token), 1 + left.len());
        // The queue goes on as before: pushes behind, pops in order.
        q.push((100, Rc::clone(&token)));
        assert_eq!(q.pop().map(|(i, _)| i), Some(5));
        // Everything moved out: the queue is empty and reusable.
        let mut all = 0;
        q.move_out_where(|_| true, |_| all += 1);
        assert_eq!(all, left.len());
        assert!(q.is_empty());
        assert_eq!(Rc::strong_count(&token), 1);
        // Nothing moved out: unchanged.
        for i in 0..6u32 {
            q.push((i, Rc::clone(&token)));
        }
        q.move_out_where(|_| false, |_| unreachable!());
        assert_eq!(q.len(), 6);
        // A sink that panics on the third item taken.
        let mut n = 0;
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            q.move_out_where(
                |(i, _)| i % 2 == 0,
                |item| {
                    n += 1;
                    if n == 3 {
                        panic!("sink");
                    }
                    drop(item);
                },
            )
        }));
        assert!(unwound.is_err());
        let left: Vec<u32> = q.remaining().iter().map(|(i, _)| *i).collect();
        assert_eq!(left, vec![1, 3, 5], "the odd ones stay, in order");
        drop(q);
        assert_eq!(
            Rc::strong_count(&token),
            1,
            "none leaked, none dropped twice"
        );
    }

    /// A queue fed at the end while it is popped at the front, never emptied (a gulp whose
    /// handlers keep appending): its array stays within twice the live items instead of
    /// growing by every item it ever held, and order and ownership hold across the moves
    /// (Miri checks the copies), with in-place pops and reserved places as a gulp uses them.
    #[test]
    fn a_queue_fed_while_popped_reuses_its_popped_front() {
        let token = Rc::new(());
        let mut q = CopyQueue::default();
        for i in 0..10u32 {
            q.push((i, Rc::clone(&token)));
        }
        let (mut next, mut expected) = (10u32, 0u32);
        for round in 0..3_000u32 {
            let (n, t) = if round % 2 == 0 {
                q.pop().expect("ten live")
            } else {
                let at = q.pop_in_place().expect("ten live");
                // SAFETY: read once, before the next push.
                unsafe { at.read() }
            };
            assert_eq!(n, expected);
            expected += 1;
            drop(t);
            if round % 3 == 0 {
                // SAFETY: written at once, before the next call on the queue.
                unsafe { q.reserve_slot().write((next, Rc::clone(&token))) };
            } else {
                q.push((next, Rc::clone(&token)));
            }
            next += 1;
            assert_eq!(q.len(), 10);
        }
        assert!(
            q.capacity() <= 32,
            "ten live items, {} slots: the popped front was not reused",
            q.capacity()
        );
        assert_eq!(Rc::strong_count(&token), 11);
        drop(q);
        assert_eq!(Rc::strong_count(&token), 1);
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
