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
