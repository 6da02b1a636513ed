//! The futures an actor is waiting on through [`crate::Context::pipe`], as its cell sees them: a
//! set the cell owns and empties when the actor stops.
//!
//! Why the cell keeps them at all: a pending future is kept alive by whoever holds its waker (a
//! timer wheel, a socket's readiness slot, a channel's sender), and often the future itself owns
//! that holder (a Tokio `Sleep` owns its timer entry, which holds the waker, which holds the task,
//! which holds the future: a cycle). Only the actor can break it, by dropping its futures when it
//! stops; so the actor must be able to find them. The set lives in the cell's extras
//! (`extras.rs`, made on the first use of a feature) and is touched only by the activation holding
//! the schedule, or by `terminate`.

use std::sync::Arc;

/// A piped future as its actor's cell sees it (the actor layer's `PipeTask`, type-erased).
pub(crate) trait Piped: Send + Sync {
    /// The actor stops: drop the future and its continuation (neither runs) and release what the
    /// task holds of the actor (its handle and strong reference).
    ///
    /// # Safety
    /// Called by whoever may touch the actor's state: the activation holding the schedule, or
    /// `terminate`.
    unsafe fn cancel(&self);
}

/// The pending piped futures of one actor: a slab, so that a completed future leaves it in O(1)
/// by the index it was given.
#[derive(Default)]
pub(crate) struct Pipes {
    slots: Vec<Option<Arc<dyn Piped>>>,
    /// Empty slots, reused before the vector grows.
    free: Vec<usize>,
}

impl Pipes {
    /// The index the next [`insert`](Self::insert) must use (the task is built knowing it).
    pub(crate) fn next_index(&self) -> usize {
        self.free.last().copied().unwrap_or(self.slots.len())
    }

    /// Adds a pending task at `index`, which [`next_index`](Self::next_index) just returned.
    pub(crate) fn insert(&mut self, index: usize, task: Arc<dyn Piped>) {
        if index == self.slots.len() {
            self.slots.push(Some(task));
        } else {
            let reused = self.free.pop();
            debug_assert_eq!(reused, Some(index), "insert follows next_index");
            debug_assert!(self.slots[index].is_none(), "a free slot is empty");
            self.slots[index] = Some(task);
        }
    }

    /// Takes the task at `index` out (its future completed); `None` if it was not there.
    pub(crate) fn remove(&mut self, index: usize) -> Option<Arc<dyn Piped>> {
        let task = self.slots.get_mut(index)?.take()?;
        self.free.push(index);
        Some(task)
    }

    /// How many futures are pending.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Every pending task, leaving the set empty (the actor stops).
    pub(crate) fn take_all(&mut self) -> Vec<Arc<dyn Piped>> {
        self.free.clear();
        self.slots.drain(..).flatten().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    // atomic outside sync.rs: test-only, never run under loom (a cancel counter).
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    struct Counted(Arc<AtomicUsize>);
    impl Piped for Counted {
        unsafe fn cancel(&self) {
            self.0.fetch_add(1, SeqCst);
        }
    }

    #[test]
    fn slots_are_reused_and_take_all_empties_the_set() {
        let cancelled = Arc::new(AtomicUsize::new(0));
        let mut pipes = Pipes::default();
        let mut indices = Vec::new();
        for _ in 0..3 {
            let i = pipes.next_index();
            pipes.insert(i, Arc::new(Counted(Arc::clone(&cancelled))));
            indices.push(i);
        }
        assert_eq!(indices, [0, 1, 2]);
        assert!(pipes.remove(1).is_some());
        assert!(pipes.remove(1).is_none(), "removed once");
        assert_eq!(pipes.len(), 2);
        let i = pipes.next_index();
        assert_eq!(i, 1, "the free slot is reused");
        pipes.insert(i, Arc::new(Counted(Arc::clone(&cancelled))));
        let all = pipes.take_all();
        assert_eq!(all.len(), 3);
        assert_eq!(pipes.len(), 0);
        assert_eq!(pipes.next_index(), 0);
        for task in all {
            // SAFETY: a test double; nothing else touches it.
            unsafe { task.cancel() };
        }
        assert_eq!(cancelled.load(SeqCst), 3);
    }
}
