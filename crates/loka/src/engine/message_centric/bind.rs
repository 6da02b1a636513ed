//! Where a new actor is bound: the placement strategies over the sharded queues, and the
//! blocks in which a worker's queues fill (docs/message-centric.md, "A child joins its parent's
//! queue" and "Actors created together share a queue").

use super::{running, worker, Engine};
use crate::policy::placement::PlacementStrategy;
use crate::runtime::options::{Placement, SpawnOptions};
use crate::runtime::Exec;
use std::sync::atomic::Ordering::Relaxed;

/// Actors bound to one of a worker's queues before the next one takes over, when the engine
/// spreads them over that worker's queues (`Engine::bind`). Actors created one after another
/// usually work together (a fan-out and its partners, a group built in a loop); bound to one
/// queue, their letters travel in one gulp, where a handler's letter to a partner is appended
/// (no lock) and the partners' cells are still cached. Bound one per queue in turn, as
/// Cforall does, every gulp reached every group: with 40,000 actors the executor's deliveries
/// missed the cache on each cell, at the send and again at the delivery (
/// docs/decisions/0041-gulp-prefetch.md). The same number as the backlog that wakes a thief ([`worker::WAKE_BACKLOG`]): a queue
/// of `FILL` actors is the unit worth stealing, and 16 queues of a worker still spread 512.
pub(super) const FILL: usize = worker::WAKE_BACKLOG;

impl Engine {
    /// Changes the placement strategy for hubs or regular actors from now on.
    pub(crate) fn set_placement(&self, hubs: bool, strategy: PlacementStrategy) {
        self.strategies[usize::from(hubs)].store(strategy_index(strategy), Relaxed);
    }

    /// The queue a new actor is bound to, by the placement strategy, as in the other engine:
    /// `default` and `compact` keep an actor spawned by an actor in its spawner's worker (its
    /// running queue while that gulp is short, else that worker's queues in turn, [`FILL`] actors
    /// each: a parent and its children stay on one core, as actor-centric placement does);
    /// `circular` and `scatter` lay actors out round robin over all queues in creation order,
    /// Cforall's layout (each spawner keeps its own cursor, so spawning touches no shared
    /// counter); `random` picks any queue. Actors spawned from plain threads go round robin over
    /// all queues; `Placement::Worker(w)` fills worker `w`'s queues in turn, in blocks of
    /// [`FILL`] actors that grow as the worker's placed actors double
    /// ([`filled_growing`](Self::filled_growing)).
    pub(super) fn bind(&self, options: &SpawnOptions, from: Option<&Exec>) -> usize {
        let total = self.queues.len();
        if let Placement::Worker(w) = options.placement {
            let w = w % self.workers();
            return self.filled_growing(w, self.hinted[w].fetch_add(1, Relaxed));
        }
        let strategy = PlacementStrategy::ALL
            [self.strategies[usize::from(options.hub)].load(Relaxed) as usize];
        let Some(exec) = from else {
            return self.cursors[self.workers()].fetch_add(1, Relaxed) % total;
        };
        // Only this worker writes its cursor: a load and a store, no read-modify-write.
        let cursor = &self.cursors[exec.index()];
        match strategy {
            PlacementStrategy::Random => fastrand::usize(0..total),
            PlacementStrategy::Default | PlacementStrategy::Compact => {
                if let Some(q) = running::running_queue_below(worker::WAKE_BACKLOG) {
                    return self.index_of(q);
                }
                let spawned = cursor.load(Relaxed);
                cursor.store(spawned.wrapping_add(1), Relaxed);
                self.filled(exec.index(), spawned)
            }
            PlacementStrategy::Circular | PlacementStrategy::Scatter => {
                let q = cursor.load(Relaxed) % total;
                cursor.store((q + 1) % total, Relaxed);
                q
            }
        }
    }

    /// The queue of worker `w`'s that its `n`-th actor spread over its queues is bound to:
    /// [`FILL`] actors to a queue, then the next one.
    pub(super) fn filled(&self, w: usize, n: usize) -> usize {
        let range = &self.ranges[w];
        range.start + n / FILL % range.len()
    }

    /// The queue of worker `w`'s that its `n`-th actor placed with `Placement::Worker` is
    /// bound to: blocks of consecutive actors, one queue each, in turn over the worker's Q
    /// queues. The first 2·Q·[`FILL`] go in blocks of `FILL`, as [`filled`](Self::filled) lays
    /// them out; from there each doubling of the worker's placed actors is one round over its
    /// queues in blocks of `FILL`·2ᵏ (actors Q·FILL·2ᵏ to Q·FILL·2ᵏ⁺¹, k ≥ 1). Every queue gets
    /// an equal share of each doubling (what a thief takes stays a Qth of them), and a large
    /// population keeps long runs of consecutive actors together: 40,000 actors in groups of
    /// 100 (Cforall's executor) find most of their groups within one queue, where fixed blocks
    /// spread every group over four queues (docs/decisions/0046-longer-visits-growing-blocks.md). Only for placed actors: a
    /// population laid out at set-up, whose neighbours in creation order work together.
    /// Children spawned as the program runs (a fork tree) keep fixed blocks, which spread
    /// them for thieves (growing blocks cost fjcreate a third at 1 worker).
    pub(super) fn filled_growing(&self, w: usize, n: usize) -> usize {
        let range = &self.ranges[w];
        let queues = range.len();
        let round = FILL * queues;
        if n < 2 * round {
            return self.filled(w, n);
        }
        let k = (n / round).ilog2();
        range.start + (n - (round << k)) / (FILL << k) % queues
    }
}

/// The index of `strategy` in [`PlacementStrategy::ALL`], as the engine stores it.
pub(super) fn strategy_index(strategy: PlacementStrategy) -> u8 {
    PlacementStrategy::ALL
        .iter()
        .position(|s| *s == strategy)
        .expect("every strategy is listed") as u8
}
