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
