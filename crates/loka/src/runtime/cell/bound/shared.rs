//! How a cell holds its bound: shared, so that a sender's credit (`credit.rs`) keeps the
//! bookkeeping alive while it holds places in it, yet read as cheaply as a `Box`.
//!
//! An `Arc<Bound>` points to its reference counts, with the `Bound` 16 bytes after them: every
//! `Option<Arc<Bound>>::as_deref` of the activation loop then costs a test and an add, and on
//! pingpong (one message per activation) that came to about 14 instructions per activation
//! (callgrind, decision 0075). [`SharedBound`] keeps the same `Arc` as the pointer
//! [`Arc::into_raw`] returns, to the `Bound` itself, so `Option<&Bound>` is the same word.

use super::Bound;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::Arc;

/// One strong reference of an `Arc<Bound>`, kept as the pointer to the `Bound`.
pub(crate) struct SharedBound(NonNull<Bound>);

// SAFETY: it is an `Arc<Bound>` in another form, and `Bound` is `Send + Sync`.
unsafe impl Send for SharedBound {}
// SAFETY: as above.
unsafe impl Sync for SharedBound {}

impl SharedBound {
    /// Shares `bound`.
    pub(crate) fn new(bound: Bound) -> Self {
        let raw = Arc::into_raw(Arc::new(bound));
        // SAFETY: `Arc::into_raw` never returns null.
        SharedBound(unsafe { NonNull::new_unchecked(raw.cast_mut()) })
    }

    /// One more strong reference, as a raw pointer: give it back with [`let_go`](Self::let_go).
    pub(super) fn keep(&self) -> *const Bound {
        // SAFETY: our pointer came from `Arc::into_raw`, and our own reference keeps the
        // allocation alive while the count goes up.
        unsafe { Arc::increment_strong_count(self.0.as_ptr().cast_const()) };
        self.0.as_ptr().cast_const()
    }

    /// Drops a reference [`keep`](Self::keep) handed out.
    ///
    /// # Safety
    /// `kept` came from `keep` and is let go of once.
    pub(super) unsafe fn let_go(kept: *const Bound) {
        // SAFETY: forwarded contract: one strong reference of an `Arc` made by `new`.
        drop(unsafe { Arc::from_raw(kept) });
    }

    /// How many references exist (the cell's and the credits'): for tests.
    #[cfg(test)]
    pub(super) fn references(&self) -> usize {
        let kept = self.keep();
        // SAFETY: `kept` is a strong reference just made; it is turned back and let go below.
        let arc = unsafe { Arc::from_raw(kept) };
        Arc::strong_count(&arc) - 1
    }
}

impl Deref for SharedBound {
    type Target = Bound;
    #[inline(always)]
    fn deref(&self) -> &Bound {
        // SAFETY: the `Arc` this is a reference of keeps the `Bound` alive while `self` lives.
        unsafe { self.0.as_ref() }
    }
}

impl Drop for SharedBound {
    fn drop(&mut self) {
        // SAFETY: our own strong reference, made by `new`, dropped once.
        unsafe { Self::let_go(self.0.as_ptr().cast_const()) }
    }
}
