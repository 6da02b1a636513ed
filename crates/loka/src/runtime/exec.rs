//! The execution context of a running actor: which worker runs it, where that worker counts, the
//! runtime handle actors spawned there keep, and the worker's id source. Engines own one per worker
//! and pass it to every activation, so the actor layer never sees an engine's worker type.

use super::id::ActorId;
use super::Runtime;
use crate::telemetry::WorkerCounters;
use std::cell::Cell;
use std::sync::Arc;

/// One worker's execution context (owned by that worker's thread; not `Sync`).
pub(crate) struct Exec {
    index: usize,
    runtime: Arc<Runtime>,
    next_id: Cell<u64>,
}

impl Exec {
    /// The context of worker `index`; `runtime` is the handle cells spawned there will clone.
    pub(crate) fn new(index: usize, runtime: Arc<Runtime>) -> Self {
        Exec {
            index,
            runtime,
            next_id: Cell::new(1),
        }
    }

    /// The worker's index.
    #[inline]
    pub(crate) fn index(&self) -> usize {
        self.index
    }

    /// The runtime handle of this worker. Cells spawned here clone it, so the reference count they
    /// touch stays in this worker's cache instead of one line shared by all workers.
    #[inline]
    pub(crate) fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }

    /// This worker's counters (only this worker writes them).
    #[inline]
    pub(crate) fn counters(&self) -> &WorkerCounters {
        self.runtime.shared.counters.worker(self.index)
    }

    /// A fresh actor id (no shared counter touched).
    #[inline]
    pub(crate) fn next_actor_id(&self) -> ActorId {
        let n = self.next_id.get();
        self.next_id.set(n + 1);
        ActorId::from_worker(self.index, n)
    }
}
