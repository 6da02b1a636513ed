//! The queues' lock: test-and-test-and-set, released with a plain store.
//!
//! A queue's critical sections are a few instructions (push a letter, swap two buffers), so a
//! spin lock fits, as in Cforall. Against `parking_lot::Mutex` it saves one atomic
//! read-modify-write per critical section (its unlock is a compare-and-swap, to find parked
//! waiters; here nobody parks), two per message: one in the send, one in the gulp. A holder that
//! is preempted makes waiters spin, so after a short spin they yield their core to it.
//!
//! The value is reached only through [`SpinLock::with`], whose closure runs with the lock held:
//! no guard can escape, and loom can check every access (`loom_tests.rs`).

use crate::sync::{spin_hint, AtomicBool, UnsafeCell};
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

/// Spins before a waiter starts yielding its core.
const SPINS_BEFORE_YIELD: u32 = 64;

/// A spin lock around a `T`.
pub(crate) struct SpinLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the value is only reached by the thread holding the lock (`with`), one at a time, so
// sharing the lock shares nothing but `T: Send` values handed between threads.
unsafe impl<T: Send> Sync for SpinLock<T> {}

/// Releases the lock when dropped (also if the closure unwinds).
struct Unlock<'a>(&'a AtomicBool);

impl Drop for Unlock<'_> {
    fn drop(&mut self) {
        // Release: our writes to the value happen before the next holder's Acquire.
        self.0.store(false, Release);
    }
}

impl<T> SpinLock<T> {
    pub(crate) fn new(value: T) -> Self {
        SpinLock {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// Runs `f` with the lock held and the value borrowed mutably.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        self.acquire();
        let _unlock = Unlock(&self.locked);
        // SAFETY: we hold the lock, so no other thread reaches the value until `_unlock` drops,
        // after `f` returns; the reference does not outlive `f`.
        self.value.with_mut(|value| f(unsafe { &mut *value }))
    }

    /// Takes the lock and keeps it past this call: for a critical section split in two, around
    /// a step of the caller's that runs no user code and cannot panic (a letter written in the
    /// place the first half reserved). [`Held::with`] is the first half; [`Held::keep`] leaves
    /// the lock held, to be ended by [`finish`](Self::finish). Dropped without `keep` (also
    /// when the first half unwinds), a `Held` releases the lock.
    #[inline]
    pub(crate) fn hold(&self) -> Held<'_, T> {
        self.acquire();
        Held(self)
    }

    /// The second half of a split critical section: runs `f` on the value and releases the lock.
    ///
    /// # Safety
    /// The calling thread holds the lock, kept by [`Held::keep`].
    #[inline]
    pub(crate) unsafe fn finish<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let _unlock = Unlock(&self.locked);
        // SAFETY: we hold the lock (the caller's contract) until `_unlock` drops, after `f`.
        self.value.with_mut(|value| f(unsafe { &mut *value }))
    }

    #[inline]
    fn acquire(&self) {
        // Acquire on success: the previous holder's writes (Release in `Unlock`) are visible.
        if self
            .locked
            .compare_exchange_weak(false, true, Acquire, Relaxed)
            .is_ok()
        {
            return;
        }
        self.acquire_slow();
    }

    #[cold]
    fn acquire_slow(&self) {
        let mut spins = 0u32;
        loop {
            // Test before test-and-set: waiters read a shared line instead of bouncing it.
            while self.locked.load(Relaxed) {
                if spins < SPINS_BEFORE_YIELD {
                    spins += 1;
                    spin_hint();
                } else {
                    yield_now();
                }
            }
            if self
                .locked
                .compare_exchange_weak(false, true, Acquire, Relaxed)
                .is_ok()
            {
                return;
            }
        }
    }
}

/// A lock taken by [`SpinLock::hold`]: released when dropped, unless [`kept`](Held::keep).
pub(crate) struct Held<'a, T>(&'a SpinLock<T>);

impl<T> Held<'_, T> {
    /// Runs `f` on the value, under the lock.
    #[inline]
    pub(crate) fn with<R>(&mut self, f: impl FnOnce(&mut T) -> R) -> R {
        // SAFETY: we hold the lock (`hold`), and `&mut self` makes this the only use of the
        // value through it; the reference does not outlive `f`.
        self.0.value.with_mut(|value| f(unsafe { &mut *value }))
    }

    /// Leaves the lock held: the caller must end it with [`SpinLock::finish`].
    #[inline]
    pub(crate) fn keep(self) {
        std::mem::forget(self);
    }
}

impl<T> Drop for Held<'_, T> {
    fn drop(&mut self) {
        // Release, as `Unlock`.
        self.0.locked.store(false, Release);
    }
}

#[cfg(not(loom))]
fn yield_now() {
    std::thread::yield_now();
}

#[cfg(loom)]
fn yield_now() {
    loom::thread::yield_now();
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn threads_incrementing_under_the_lock_lose_nothing() {
        let lock = Arc::new(SpinLock::new(0u64));
        let per_thread = if cfg!(miri) { 200 } else { 100_000 };
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let lock = Arc::clone(&lock);
                std::thread::spawn(move || {
                    for _ in 0..per_thread {
                        lock.with(|n| *n += 1);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(lock.with(|n| *n), 4 * per_thread);
    }

    /// A critical section split in two (a place reserved, then filled, then published) keeps
    /// the lock from the first half to the second: threads doing so lose no increment, and see
    /// no other thread's step between their two halves. Red when `keep` releases the lock.
    #[test]
    fn split_critical_sections_exclude_each_other() {
        let lock = Arc::new(SpinLock::new((0u64, 0u64)));
        let per_thread = if cfg!(miri) { 100 } else { 50_000 };
        let threads: Vec<_> = (0..3)
            .map(|_| {
                let lock = Arc::clone(&lock);
                std::thread::spawn(move || {
                    for _ in 0..per_thread {
                        let mut held = lock.hold();
                        let seen = held.with(|(a, _)| {
                            *a += 1;
                            *a
                        });
                        held.keep();
                        // SAFETY: kept above.
                        unsafe {
                            lock.finish(|(a, b)| {
                                assert_eq!(*a, seen, "nobody ran between the halves");
                                *b += 1;
                            })
                        };
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(lock.with(|v| *v), (3 * per_thread, 3 * per_thread));
        drop(lock.hold());
        assert_eq!(
            lock.with(|v| v.0),
            3 * per_thread,
            "a dropped hold released"
        );
    }

    #[test]
    fn a_panicking_closure_releases_the_lock() {
        let lock = SpinLock::new(vec![1]);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            lock.with(|_| panic!("inside the lock"))
        }));
        assert!(caught.is_err());
        assert_eq!(lock.with(|v| v.len()), 1, "the lock was released");
    }
}
