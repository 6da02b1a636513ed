//! `FutureSlot`: the heap buffer an async actor's handler futures are built in, reused from
//! one handler to the next (`mod.rs` writes the futures into it and drops them in place).

use std::alloc::Layout;
use std::ptr::NonNull;

/// A heap buffer for handler futures, reused from one handler to the next: a handler whose
/// future fits allocates nothing (a `Box` per handler cost an allocation and a free per message,
/// even for a future ready at its first poll). Grows to the largest future seen (an actor's
/// handler futures all have one type, its `started` another). Holds no value of its own: the
/// adapter writes a future into it, and drops it in place before reusing or freeing it.
pub(super) struct FutureSlot {
    ptr: NonNull<u8>,
    layout: Layout,
}

impl FutureSlot {
    /// No allocation yet.
    pub(super) const EMPTY: FutureSlot = FutureSlot {
        ptr: NonNull::dangling(),
        layout: Layout::new::<()>(),
    };

    /// A place for an `F`: the buffer, grown first if `F` does not fit. The caller must have
    /// dropped any future it held.
    pub(super) fn place<F>(&mut self) -> NonNull<F> {
        let need = Layout::new::<F>();
        if need.size() == 0 {
            return NonNull::dangling();
        }
        if need.size() > self.layout.size() || need.align() > self.layout.align() {
            let layout = Layout::from_size_align(
                need.size().max(self.layout.size()),
                need.align().max(self.layout.align()),
            )
            .expect("a future's layout");
            // SAFETY: `layout` has a non-zero size.
            let ptr = unsafe { std::alloc::alloc(layout) };
            let Some(ptr) = NonNull::new(ptr) else {
                std::alloc::handle_alloc_error(layout)
            };
            self.free();
            self.ptr = ptr;
            self.layout = layout;
        }
        self.ptr.cast()
    }

    fn free(&mut self) {
        if self.layout.size() > 0 {
            // SAFETY: allocated by `place` with this layout, freed once (reset below).
            unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) };
        }
        // Field by field: assigning `*self` would drop the old value, which frees again.
        self.ptr = NonNull::dangling();
        self.layout = Layout::new::<()>();
    }
}

impl Drop for FutureSlot {
    fn drop(&mut self) {
        self.free();
    }
}

/// The slot's contract as the adapter uses it (write a future into the place, poll it through an
/// erased pointer, drop it in place, reuse the place), run under Miri by `make miri`: a future
/// that moved while pinned, a place too small or misaligned, a double drop or a leak is an error
/// there.
#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::future::Future;
    use std::pin::Pin;
    use std::task::{Context, Poll, Waker};

    /// Pending at its first poll, ready at its second.
    struct YieldOnce(bool);

    impl Future for YieldOnce {
        type Output = ();
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if self.0 {
                return Poll::Ready(());
            }
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    /// Counts its drops.
    struct Guard<'a>(&'a Cell<usize>);

    impl Drop for Guard<'_> {
        fn drop(&mut self) {
            self.0.set(self.0.get() + 1);
        }
    }

    /// Writes `future` into the slot's place, as the adapter does.
    fn put<F: Future<Output = ()>>(slot: &mut FutureSlot, future: F) -> NonNull<F> {
        let place = slot.place::<F>();
        // SAFETY: `place` is valid and aligned for an `F` and holds no live value (the caller
        // dropped the previous future).
        unsafe { place.as_ptr().write(future) };
        place
    }

    /// Writes `future` into the slot as the adapter does and polls it to completion through the
    /// erased pointer, dropping it in place; returns how many polls it took.
    fn run_in<F: Future<Output = ()>>(slot: &mut FutureSlot, future: F) -> usize {
        let erased: *mut (dyn Future<Output = ()> + '_) = put(slot, future).as_ptr();
        let mut cx = Context::from_waker(Waker::noop());
        let mut polls = 0;
        loop {
            polls += 1;
            // SAFETY: the live future in the slot, never moved while it lives.
            if unsafe { Pin::new_unchecked(&mut *erased) }
                .poll(&mut cx)
                .is_ready()
            {
                break;
            }
        }
        // SAFETY: completed, dropped once.
        unsafe { std::ptr::drop_in_place(erased) };
        polls
    }

    #[test]
    fn futures_of_growing_size_and_alignment_reuse_one_place_and_drop_once() {
        let drops = Cell::new(0);
        let mut slot = FutureSlot::EMPTY;
        // A future that borrows its own local across an await: it must stay where it was
        // polled first.
        let small = async {
            let guard = Guard(&drops);
            let local = [7u8; 16];
            let borrowed = &local;
            YieldOnce(false).await;
            assert_eq!(borrowed.iter().map(|&b| b as usize).sum::<usize>(), 7 * 16);
            drop(guard);
        };
        assert_eq!(run_in(&mut slot, small), 2);
        let first = (slot.ptr, slot.layout);
        // The same size again: the same place, no allocation.
        let again = async {
            let _guard = Guard(&drops);
            YieldOnce(false).await;
        };
        assert_eq!(run_in(&mut slot, again), 2);
        assert_eq!(slot.ptr, first.0);
        // A larger one: the place grows.
        let large = async {
            let _guard = Guard(&drops);
            let big = [5u64; 64];
            YieldOnce(false).await;
            assert_eq!(big.iter().sum::<u64>(), 320);
        };
        assert_eq!(run_in(&mut slot, large), 2);
        assert!(slot.layout.size() > first.1.size());
        // A small one that is over-aligned: it fits the size, not the alignment; the place is
        // made again with the stricter one.
        #[repr(align(64))]
        struct Wide([u64; 2]);
        let wide = async {
            let _guard = Guard(&drops);
            let w = Wide([3; 2]);
            YieldOnce(false).await;
            assert_eq!(w.0.iter().sum::<u64>(), 6);
        };
        assert_eq!(run_in(&mut slot, wide), 2);
        assert!(slot.layout.align() >= 64);
        assert_eq!(slot.ptr.as_ptr() as usize % 64, 0);
        // A smaller one after it fits the grown place.
        let grown = slot.layout;
        let ready = async {
            let _guard = Guard(&drops);
        };
        assert_eq!(run_in(&mut slot, ready), 1);
        assert_eq!(slot.layout, grown);
        assert_eq!(drops.get(), 5);
    }

    #[test]
    fn a_zero_sized_future_needs_no_allocation_and_a_pending_one_drops_in_place() {
        /// Ready at once, and of no size.
        struct Done;
        impl Future for Done {
            type Output = ();
            fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
                Poll::Ready(())
            }
        }
        let mut slot = FutureSlot::EMPTY;
        assert_eq!(run_in(&mut slot, Done), 1);
        assert_eq!(slot.layout.size(), 0);
        // Dropped while pending, as when its actor stops: its guard runs, the slot is reused.
        let drops = Cell::new(0);
        let pending = async {
            let _guard = Guard(&drops);
            std::future::pending::<()>().await;
        };
        let erased: *mut (dyn Future<Output = ()> + '_) = put(&mut slot, pending).as_ptr();
        let mut cx = Context::from_waker(Waker::noop());
        // SAFETY: the live future in the slot.
        let poll = unsafe { Pin::new_unchecked(&mut *erased) }.poll(&mut cx);
        assert!(poll.is_pending());
        // SAFETY: dropped once, pending.
        unsafe { std::ptr::drop_in_place(erased) };
        assert_eq!(drops.get(), 1);
        let drops_again = Cell::new(0);
        let after = async {
            let _guard = Guard(&drops_again);
        };
        assert_eq!(run_in(&mut slot, after), 1);
        assert_eq!(drops_again.get(), 1);
    }
}
