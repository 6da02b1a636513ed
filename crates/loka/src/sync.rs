//! Synchronisation primitives, swapped for loom's model-checked versions under `--cfg loom`.
//!
//! Every lock-free structure in loka takes its atomics and cells from here, so the same code runs in
//! production, under Miri and inside loom's exhaustive interleaving checker.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize,
};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize,
};

/// The value of an atomic the caller holds exclusively (`&mut`, e.g. in `Drop`): std's
/// `get_mut`, which loom's atomics lack. No atomic access in production.
pub(crate) trait ReadMut {
    /// What the atomic holds.
    type Value;
    /// The value, read through the exclusive borrow.
    fn read_mut(&mut self) -> Self::Value;
}

macro_rules! read_mut {
    ($($atomic:ty => $value:ty),* $(,)?) => {$(
        impl ReadMut for $atomic {
            type Value = $value;
            #[inline(always)]
            fn read_mut(&mut self) -> $value {
                // Under loom a Relaxed load: `&mut` excludes every other access.
                #[cfg(loom)]
                return self.load(std::sync::atomic::Ordering::Relaxed);
                #[cfg(not(loom))]
                return *self.get_mut();
            }
        }
    )*};
}

read_mut!(AtomicBool => bool, AtomicU8 => u8, AtomicU32 => u32, AtomicU64 => u64, AtomicUsize => usize);

impl<T> ReadMut for AtomicPtr<T> {
    type Value = *mut T;
    #[inline(always)]
    fn read_mut(&mut self) -> *mut T {
        // Under loom a Relaxed load: `&mut` excludes every other access.
        #[cfg(loom)]
        return self.load(std::sync::atomic::Ordering::Relaxed);
        #[cfg(not(loom))]
        return *self.get_mut();
    }
}

/// Spin hint inside busy-wait loops (a yield under loom, so the model can make progress).
#[inline]
pub(crate) fn spin_hint() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}

/// An `UnsafeCell` with loom's closure-based access API, so loom can track every access.
#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

/// An `UnsafeCell` with loom's closure-based access API, so loom can track every access.
#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    #[inline]
    pub(crate) const fn new(value: T) -> Self {
        Self(std::cell::UnsafeCell::new(value))
    }
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }
    #[inline]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// Asymmetric fences: a cheap *light* barrier for the side that runs on every activation, and
/// an expensive *heavy* one for the side that runs rarely (an idle worker or the monitor taking
/// a stalled worker's next slot, `engine/actor_centric/stall.rs`).
///
/// The pair gives what a `SeqCst` fence on both sides gives (the Dekker pattern: a store before
/// the barrier on one side and a load after it on the other cannot both miss each other), while
/// the light side costs a compiler fence: no instruction. The heavy side asks the kernel to run a
/// full memory barrier on every CPU currently running a thread of this process
/// (`membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, Linux ≥ 4.14): a thread that is not running
/// passed a barrier when it was switched out, so every other thread is serialised at some point
/// between the heavy barrier's start and its end. The same technique as folly's
/// `asymmetricHeavyBarrier` and Windows' `FlushProcessWriteBuffers`.
///
/// Where the kernel refuses (another OS, an old kernel, a sandbox filtering the call),
/// [`heavy_barrier`] returns `false` and the caller must not rely on it: the stall guard is then
/// off (`docs/stalls.md`). Under loom and Miri both sides are `SeqCst` fences, which is the
/// guarantee the pair gives, so the models check the protocol built on it.
pub(crate) mod asymmetric {
    /// The cheap side: orders this thread's earlier stores before its later loads against a
    /// concurrent [`heavy_barrier`].
    #[inline(always)]
    pub(crate) fn light_barrier() {
        #[cfg(any(loom, miri))]
        super::fence(std::sync::atomic::Ordering::SeqCst);
        #[cfg(not(any(loom, miri)))]
        std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
    }

    /// The expensive side (a system call and an interrupt to every CPU running this process):
    /// returns whether it took place. `false` means no barrier happened and the caller must not
    /// go on as if it had.
    pub(crate) fn heavy_barrier() -> bool {
        #[cfg(any(loom, miri))]
        {
            super::fence(std::sync::atomic::Ordering::SeqCst);
            true
        }
        #[cfg(all(not(any(loom, miri)), target_os = "linux"))]
        {
            if !available() {
                return false;
            }
            // SAFETY: `membarrier` takes two integer arguments and touches no memory of ours.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_membarrier,
                    MEMBARRIER_CMD_PRIVATE_EXPEDITED,
                    0 as libc::c_uint,
                )
            };
            r == 0
        }
        #[cfg(all(not(any(loom, miri)), not(target_os = "linux")))]
        {
            false
        }
    }

    /// Whether [`heavy_barrier`] works in this process: registers the process for the expedited
    /// command once (the kernel requires it before the first use).
    pub(crate) fn available() -> bool {
        #[cfg(any(loom, miri))]
        {
            true
        }
        #[cfg(all(not(any(loom, miri)), target_os = "linux"))]
        {
            static REGISTERED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
            *REGISTERED.get_or_init(|| {
                // SAFETY: as in `heavy_barrier`: two integer arguments, no memory.
                let r = unsafe {
                    libc::syscall(
                        libc::SYS_membarrier,
                        MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
                        0 as libc::c_uint,
                    )
                };
                r == 0
            })
        }
        #[cfg(all(not(any(loom, miri)), not(target_os = "linux")))]
        {
            false
        }
    }

    /// `linux/membarrier.h`.
    #[cfg(all(not(any(loom, miri)), target_os = "linux"))]
    const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
    /// `linux/membarrier.h`.
    #[cfg(all(not(any(loom, miri)), target_os = "linux"))]
    const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;
}

/// Gives the core away inside a wait that spun long enough (loom: a model yield).
#[inline]
pub(crate) fn yield_now() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::thread::yield_now();
}
