//! A worker's run queues, as every thread sees them.
//!
//! * the *deque* (crossbeam Chase-Lev): the owner pushes and pops at the head (CAF's internal
//!   enqueue); thieves take one actor from the other end through its [`Stealer`]. The owner's end
//!   lives in the worker itself (`worker/`), with the non-stealable *next slot*;
//! * the *inbox*: the tail where other threads push (CAF's external enqueue): actors woken from
//!   plain threads or routed here by other workers;
//! * *yielded*: actors that used up their throughput budget while others waited here. They run
//!   after the deque and the inbox, so a wake-up from outside waits for the activation that is
//!   running, not for one budget of every busy actor ahead of it (docs/decisions/0035-yielded-queue.md);
//! * *urgent*: wake-ups other workers push at this worker's head (LGS-DFS); taken first;
//! * *pinned*: actors only this worker may run (hubs under `hierarchical`); thieves never look;
//! * *foreign*, one per home NUMA node: actors runnable here that live away from home
//!   (`hierarchical`), where thieves of that node look first to bring them home.

use crate::runtime::TaskRef;
use crate::sync::AtomicUsize;
use crossbeam_deque::{Injector, Steal, Stealer};
use std::sync::atomic::Ordering::Relaxed;

/// How many actors wait in foreign queues, per home node, over every worker (`hierarchical`):
/// a thief skips the foreign queues of a node nobody waits for instead of looking at each
/// (`choices::steal_once`). On a machine of many nodes a thief's plan has a foreign queue per
/// (worker, node) pair (4,262 steps on the 192-PU UV 2000 preset), and looking at each of them
/// on every idle pass kept idle workers from the work that was queued
/// (docs/results/validation/second-run.md).
///
/// An upper bound of the actors queued, never below it for a thread that has seen one queued:
/// the count goes up before the push and down after a pop took an actor. The push is a release
/// in the queue, so a thread that has seen the actor queued (an acquire in the queue) also sees
/// the count it came with; Relaxed is enough. A lower count than that would let a thief skip an
/// actor it then finds in the parking re-check (`Engine::has_visible_work`, which looks at every
/// queue) again and again; a higher one only costs the looks this count saves.
pub(crate) struct ForeignWaiting(Box<[AtomicUsize]>);

impl ForeignWaiting {
    /// Counts for a machine of `nodes` NUMA nodes, all zero.
    pub(crate) fn new(nodes: usize) -> Self {
        ForeignWaiting((0..nodes).map(|_| AtomicUsize::new(0)).collect())
    }

    /// Whether an actor whose home is `node` may wait in some worker's foreign queue.
    #[inline]
    pub(crate) fn any(&self, node: usize) -> bool {
        self.0[node].load(Relaxed) != 0
    }
}

/// The queues of one worker that other threads push to or steal from.
pub(crate) struct WorkerQueues {
    pub(crate) inbox: Injector<TaskRef>,
    pub(crate) yielded: Injector<TaskRef>,
    pub(crate) urgent: Injector<TaskRef>,
    pub(crate) pinned: Injector<TaskRef>,
    /// One per home node; only through [`Self::push_foreign`] and the pops below, which keep
    /// [`ForeignWaiting`] right.
    foreign: Box<[Injector<TaskRef>]>,
    pub(crate) stealer: Stealer<TaskRef>,
}

impl WorkerQueues {
    /// The queues of a worker whose deque is `stealer`'s, on a machine of `nodes` NUMA nodes.
    pub(crate) fn new(stealer: Stealer<TaskRef>, nodes: usize) -> Self {
        WorkerQueues {
            inbox: Injector::new(),
            yielded: Injector::new(),
            urgent: Injector::new(),
            pinned: Injector::new(),
            foreign: (0..nodes).map(|_| Injector::new()).collect(),
            stealer,
        }
    }

    /// Every injector queue of this worker (all but the deque).
    pub(crate) fn injectors(&self) -> impl Iterator<Item = &Injector<TaskRef>> {
        [&self.inbox, &self.yielded, &self.urgent, &self.pinned]
            .into_iter()
            .chain(self.foreign.iter())
    }

    /// Whether any of these queues holds an actor.
    pub(crate) fn has_work(&self) -> bool {
        !self.stealer.is_empty() || self.injectors().any(|q| !q.is_empty())
    }

    /// Actors a thief could take (deque, inbox, yielded): the queue length load balancing and
    /// the longest-queue victim choice compare.
    pub(crate) fn stealable_len(&self) -> usize {
        self.stealer.len() + self.inbox.len() + self.yielded.len()
    }

    /// Actors [`Self::steal`] could take (urgent wake-ups too): whether a searching worker holds
    /// more than the one it takes at its next look (`choices::steal_once`).
    pub(crate) fn stealable(&self) -> usize {
        self.urgent.len() + self.stealable_len()
    }

    /// One actor for a thief: urgent wake-ups first, then the inbox (oldest, external work), the
    /// yielded actors (busy ones: worth moving to an idle worker), then the deque's tail. Pinned
    /// and foreign queues are taken only by their own rules.
    pub(crate) fn steal(&self) -> Option<TaskRef> {
        steal_one(|| self.urgent.steal())
            .or_else(|| steal_one(|| self.inbox.steal()))
            .or_else(|| pop_rare(&self.yielded))
            .or_else(|| steal_one(|| self.stealer.steal()))
    }

    /// Queues `task`, whose home is `node`, in the foreign queue for that node.
    pub(crate) fn push_foreign(&self, node: usize, task: TaskRef, waiting: &ForeignWaiting) {
        // Counted before it can be seen (see `ForeignWaiting`).
        waiting.0[node].fetch_add(1, Relaxed);
        self.foreign[node].push(task);
    }

    /// An actor of home node `node` from the foreign queue for it (a thief bringing it home).
    pub(crate) fn pop_foreign_of(&self, node: usize, waiting: &ForeignWaiting) -> Option<TaskRef> {
        let task = pop(&self.foreign[node])?;
        waiting.0[node].fetch_sub(1, Relaxed);
        Some(task)
    }

    /// Any of the foreign queues, for the owner.
    pub(crate) fn pop_foreign(&self, waiting: &ForeignWaiting) -> Option<TaskRef> {
        self.foreign.iter().enumerate().find_map(|(node, q)| {
            let task = pop_rare(q)?;
            waiting.0[node].fetch_sub(1, Relaxed);
            Some(task)
        })
    }

    /// Moves every actor of the pinned and foreign queues to the yielded queue, where thieves
    /// find it: the adaptive `auto` leaving `hierarchical`, whose thieves under plain stealing
    /// never look at those queues (an actor there waited until its worker had nothing else to
    /// run, while idle workers parked). Returns how many moved.
    pub(crate) fn release_to_thieves(&self, waiting: &ForeignWaiting) -> usize {
        let mut moved = 0;
        while let Some(task) = pop_rare(&self.pinned).or_else(|| self.pop_foreign(waiting)) {
            self.yielded.push(task);
            moved += 1;
        }
        moved
    }

    /// Drops every queued pointer without touching the actors (shutdown: the runtime stops the
    /// actors afterwards).
    pub(crate) fn clear(&self) {
        for q in self.injectors() {
            while !q.steal().is_empty() {}
        }
        while !self.stealer.steal().is_empty() {}
    }
}

/// Takes one actor from an injector.
#[inline]
pub(crate) fn pop(queue: &Injector<TaskRef>) -> Option<TaskRef> {
    steal_one(|| queue.steal())
}

/// Takes one actor from a queue that is almost always empty (a hierarchical worker's pinned and
/// foreign queues, LGS-DFS's urgent queue), looking first whether it is empty:
/// `Injector::steal` on an empty queue issues a `SeqCst` fence (a full barrier on x86), and the
/// worker polls the pinned queue before every activation, so that fence alone cost
/// `hierarchical` ~17% of pingpong's time (docs/decisions/0017-look-before-stealing.md).
/// `is_empty` reads the two indices and nothing more. A push racing with the check is found on
/// the next poll, exactly as if `steal` had run just before the push: a pusher wakes a parked
/// worker after pushing, and a worker polls again before it parks.
#[inline]
pub(crate) fn pop_rare(queue: &Injector<TaskRef>) -> Option<TaskRef> {
    if queue.is_empty() {
        return None;
    }
    pop(queue)
}

/// Retries a steal until it succeeds or finds the queue empty.
#[inline]
pub(crate) fn steal_one(mut steal: impl FnMut() -> Steal<TaskRef>) -> Option<TaskRef> {
    loop {
        match steal() {
            Steal::Success(task) => return Some(task),
            Steal::Empty => return None,
            Steal::Retry => crate::sync::spin_hint(),
        }
    }
}
