//! The execution context of a running actor: which thread runs it (a worker, or a dedicated
//! thread of a `thread` actor), where that thread counts, the runtime handle actors spawned there
//! keep, and the worker's id source. Engines own one per worker and pass it to every activation,
//! so the actor layer never sees an engine's worker type.

use super::cell::give_back_reserved;
use super::id::ActorId;
use super::Runtime;
use crate::telemetry::WorkerCounters;
use crossbeam_utils::CachePadded;
use std::cell::Cell;
use std::ptr::NonNull;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

/// Index of the execution contexts of dedicated threads (they are no engine's workers).
const DEDICATED: usize = usize::MAX;

/// One thread's execution context (owned by that thread; not `Sync`).
pub(crate) struct Exec {
    index: usize,
    runtime: Arc<Runtime>,
    next_id: Cell<u64>,
    /// Compute the running activation declared with `Context::charge`, in ns. Only the
    /// simulation reads (and resets) it; real engines let it add up unread: a plain add on this
    /// thread's own context, no atomic.
    charged: Cell<u64>,
    /// The footprint the running activation declared with `Context::set_footprint` (`u64::MAX`:
    /// none). Only the simulation reads it.
    footprint: Cell<u64>,
    /// This thread's counters: the worker's block in the runtime's counters, or a dedicated
    /// thread's own block (`own`).
    counters: NonNull<WorkerCounters>,
    /// A dedicated thread's counter block (kept alive here; `counters` points into it).
    _own: Option<Arc<CachePadded<WorkerCounters>>>,
}

impl Exec {
    /// The context of worker `index`; `runtime` is the handle cells spawned there will clone.
    pub(crate) fn new(index: usize, runtime: Arc<Runtime>) -> Self {
        let counters = NonNull::from(runtime.shared.counters.worker(index));
        Exec {
            index,
            runtime,
            next_id: Cell::new(1),
            charged: Cell::new(0),
            footprint: Cell::new(u64::MAX),
            counters,
            _own: None,
        }
    }

    /// The context of a dedicated thread (a `thread` actor's): no worker of any engine, with a
    /// counter block of its own.
    pub(crate) fn dedicated(runtime: Arc<Runtime>) -> Self {
        let own = runtime.shared.counters.new_dedicated();
        Exec {
            index: DEDICATED,
            counters: NonNull::from(&**own),
            runtime,
            next_id: Cell::new(1),
            charged: Cell::new(0),
            footprint: Cell::new(u64::MAX),
            _own: Some(own),
        }
    }

    /// The worker's index. Only engines call this, on the contexts of their own workers.
    #[inline]
    pub(crate) fn index(&self) -> usize {
        debug_assert!(self.index != DEDICATED, "a dedicated thread is no worker");
        self.index
    }

    /// The worker's index, `None` on a dedicated thread.
    #[inline]
    pub(crate) fn worker(&self) -> Option<usize> {
        (self.index != DEDICATED).then_some(self.index)
    }

    /// This context if it is an engine's worker's (what the engine may be shown as "from").
    #[inline]
    pub(crate) fn as_worker(&self) -> Option<&Exec> {
        (self.index != DEDICATED).then_some(self)
    }

    /// The runtime handle of this worker. Cells spawned here clone it, so the reference count they
    /// touch stays in this worker's cache instead of one line shared by all workers.
    #[inline]
    pub(crate) fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }

    /// This thread's counters (only this thread writes them).
    #[inline]
    pub(crate) fn counters(&self) -> &WorkerCounters {
        // SAFETY: `counters` points into the runtime's counters (kept alive by `runtime`) or into
        // `_own` (kept alive by this context), and counter blocks are never moved or freed while
        // referenced.
        unsafe { self.counters.as_ref() }
    }

    /// An activation of actor `id` starts on this thread: [`crate::System::actors`] shows it
    /// running. Returns the activation it interrupts (an inline run's caller), for
    /// [`leave`](Self::leave). Two relaxed stores per activation to this thread's own counter line;
    /// nothing per message.
    #[inline]
    pub(crate) fn enter(&self, id: ActorId) -> u64 {
        let running = &self.counters().running;
        let outer = running.load(Relaxed);
        running.store(id.as_u64(), Relaxed);
        outer
    }

    /// The activation [`enter`](Self::enter) announced is over; `outer` runs again (0: none).
    /// Gives back the places the activation's sends reserved ahead in bounded mailboxes and did
    /// not use (`cell/bound/credit.rs`).
    #[inline]
    pub(crate) fn leave(&self, outer: u64) {
        give_back_reserved();
        self.counters().running.store(outer, Relaxed);
    }

    /// [`enter`](Self::enter) for an engine whose activations never nest on one thread (the
    /// message-centric engine: no inline execution): one store, nothing read or kept for the
    /// way out. [`done`](Self::done) ends it.
    #[inline(always)]
    pub(crate) fn announce(&self, id: ActorId) {
        self.counters().running.store(id.as_u64(), Relaxed);
    }

    /// The activation [`announce`](Self::announce)d is over: this thread runs no actor. Gives
    /// back unused places reserved ahead, as [`leave`](Self::leave).
    #[inline(always)]
    pub(crate) fn done(&self) {
        give_back_reserved();
        self.counters().running.store(0, Relaxed);
    }

    /// A fresh actor id (no shared counter touched).
    #[inline]
    pub(crate) fn next_actor_id(&self) -> ActorId {
        let n = self.next_id.get();
        self.next_id.set(n + 1);
        ActorId::from_worker(self.index, n)
    }

    /// Adds `ns` of declared compute to the running activation (`Context::charge`).
    #[inline(always)]
    pub(crate) fn charge(&self, ns: u64) {
        self.charged.set(self.charged.get().wrapping_add(ns));
    }

    /// The compute the running activation has declared so far (`Context::charge`), in ns: what
    /// the simulation's clock of a gulp counts (`Runtime::gulp_clock_ns`).
    pub(crate) fn charged(&self) -> u64 {
        self.charged.get()
    }

    /// Declares the running actor's footprint (`Context::set_footprint`).
    #[inline]
    pub(crate) fn set_footprint(&self, bytes: u64) {
        self.footprint.set(bytes);
    }

    /// The simulation, after an activation: the compute it declared and the footprint it set,
    /// both reset for the next one.
    pub(crate) fn take_declared(&self) -> (u64, Option<u64>) {
        let footprint = self.footprint.replace(u64::MAX);
        (
            self.charged.replace(0),
            (footprint != u64::MAX).then_some(footprint),
        )
    }
}
