//! Actor ids: one encoding for every engine.
//!
//! An id is `(worker + 1) << 48 | n` when a worker made it (each worker counts on its own, so a
//! spawn touches no shared counter) and `n` when a plain thread did (one shared counter). Ids are
//! unique within a system and never reused.

use crate::sync::AtomicU64;
use std::fmt;
use std::sync::atomic::Ordering::Relaxed;

/// Bits of an id below the worker part.
const WORKER_SHIFT: u32 = 48;

/// The identity of an actor, unique within its system.
///
/// Printed as `<w.n>`: `w` is one more than the index of the worker that spawned it (0 for a plain
/// thread), `n` its sequence number there.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[cfg_attr(feature = "remote", derive(serde::Deserialize))]
pub struct ActorId(u64);

impl ActorId {
    /// The id whose raw value is `raw` (from [`Self::as_u64`]).
    pub(crate) fn from_raw(raw: u64) -> ActorId {
        ActorId(raw)
    }

    /// The raw id.
    pub fn as_u64(self) -> u64 {
        self.0
    }

    /// The `n`-th id made by worker `worker`.
    #[inline]
    pub(crate) fn from_worker(worker: usize, n: u64) -> ActorId {
        ActorId(((worker as u64 + 1) << WORKER_SHIFT) | n)
    }

    /// The worker part, spread so that ids of different workers land on different registry shards.
    #[inline]
    pub(crate) fn shard_hash(self) -> u64 {
        self.0 ^ (self.0 >> WORKER_SHIFT).wrapping_mul(0x9E37_79B9)
    }
}

impl fmt::Debug for ActorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "<{}.{}>",
            self.0 >> WORKER_SHIFT,
            self.0 & ((1 << WORKER_SHIFT) - 1)
        )
    }
}

impl fmt::Display for ActorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// The id counter of plain threads (workers count in their [`super::Exec`]).
#[derive(Debug)]
pub(crate) struct ExternalIds(AtomicU64);

impl ExternalIds {
    pub(crate) fn new() -> Self {
        ExternalIds(AtomicU64::new(1))
    }

    /// A fresh id. Relaxed: uniqueness needs only the atomicity of the increment.
    pub(crate) fn next(&self) -> ActorId {
        ActorId(self.0.fetch_add(1, Relaxed))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn worker_and_external_ids_never_collide_and_print_their_origin() {
        let ext = ExternalIds::new();
        let a = ext.next();
        let b = ActorId::from_worker(0, 1);
        let c = ActorId::from_worker(1, 1);
        assert_ne!(a, b);
        assert_ne!(b, c);
        assert_eq!(format!("{a}"), "<0.1>");
        assert_eq!(format!("{b}"), "<1.1>");
        assert_eq!(format!("{c:?}"), "<2.1>");
        assert_ne!(b.shard_hash() % 64, c.shard_hash() % 64);
    }
}
