//! Cforall's wait-free queue swap on the permutable worker array.
//!
//! Workers own contiguous ranges of `slots`, each slot a pointer to one of the sharded queues.
//! Actors keep their own, fixed reference to their queue, so senders never look at `slots`; a
//! thief *steals a queue* by swapping a pointer in the victim's range with one in its own:
//!
//! 0. read both pointers; 1. give up if the victim's is null (being swapped by another thief);
//! 2. CAS its own slot to null (fails if another thief just took that queue: give up);
//! 3. CAS the victim's slot from the read value to its own queue (fails if another thief got there
//!    first: restore its own slot and give up); 4. store the victim's queue in its own slot.
//!
//! No step loops or retries, so it is wait-free. The invariant: a slot a thief set to null is next
//! written by that thief only, so no queue is ever lost or duplicated. Of M thieves on one victim
//! slot at least one wins; in a chain of thieves at least one wins; a cycle of thieves may all
//! fail, harmlessly (the loom models in `loom_tests.rs` check all three).

use crate::sync::AtomicPtr;
use std::ptr;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};

/// How a swap ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Swap {
    /// The queues were exchanged.
    Done,
    /// The victim's slot was null or changed, or the thief's own slot was taken meanwhile.
    Failed,
}

/// Swaps the queue at `victim` with the thief's queue at `mine` (both indices into `slots`; `mine`
/// in the thief's own range). Wait-free; see the module documentation.
pub(crate) fn try_swap<T>(slots: &[AtomicPtr<T>], victim: usize, mine: usize) -> Swap {
    // Step 0.
    let my_queue = slots[mine].load(Acquire);
    let victim_queue = slots[victim].load(Acquire);
    // Step 1. (Our own slot is never null here: only we null it, inside this function.)
    if victim_queue.is_null() {
        return Swap::Failed;
    }
    debug_assert!(!my_queue.is_null());
    // Step 2. AcqRel: the null publishes nothing but orders us after the thief that gave us this
    // pointer.
    if slots[mine]
        .compare_exchange(my_queue, ptr::null_mut(), AcqRel, Relaxed)
        .is_err()
    {
        return Swap::Failed;
    }
    // Step 3.
    if slots[victim]
        .compare_exchange(victim_queue, my_queue, AcqRel, Relaxed)
        .is_err()
    {
        // Fix-up: the slot we nulled is written next by us (the invariant).
        slots[mine].store(my_queue, Release);
        return Swap::Failed;
    }
    // Step 4. Nobody else writes a null slot, so a plain store completes the swap.
    slots[mine].store(victim_queue, Release);
    Swap::Done
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn slots(values: &mut [u32]) -> Vec<AtomicPtr<u32>> {
        values
            .iter_mut()
            .map(|v| AtomicPtr::new(v as *mut u32))
            .collect()
    }

    fn read(slots: &[AtomicPtr<u32>]) -> Vec<u32> {
        // SAFETY: every slot points into the caller's live array.
        slots.iter().map(|s| unsafe { *s.load(Relaxed) }).collect()
    }

    #[test]
    fn a_swap_exchanges_two_slots() {
        let mut values = [0, 1, 2, 3];
        let s = slots(&mut values);
        assert_eq!(try_swap(&s, 3, 0), Swap::Done);
        assert_eq!(read(&s), vec![3, 1, 2, 0]);
    }

    #[test]
    fn a_null_victim_slot_fails_without_change() {
        let mut values = [0, 1];
        let s = slots(&mut values);
        let taken = s[1].swap(ptr::null_mut(), Relaxed);
        assert_eq!(try_swap(&s, 1, 0), Swap::Failed);
        s[1].store(taken, Relaxed);
        assert_eq!(read(&s), vec![0, 1]);
    }

    #[test]
    fn many_threads_swapping_keep_a_permutation() {
        use std::sync::Arc;
        let values: Arc<Vec<u32>> = Arc::new((0..8).collect());
        let s: Arc<Vec<AtomicPtr<u32>>> = Arc::new(
            values
                .iter()
                .map(|v| AtomicPtr::new(v as *const u32 as *mut u32))
                .collect(),
        );
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let s = Arc::clone(&s);
                std::thread::spawn(move || {
                    let mut rng = fastrand::Rng::with_seed(t);
                    let mut done = 0;
                    for _ in 0..if cfg!(miri) { 50 } else { 20_000 } {
                        // Thread t owns slots 2t and 2t+1.
                        let mine = 2 * t as usize + rng.usize(0..2);
                        let victim = rng.usize(0..8);
                        if victim / 2 != t as usize && try_swap(&s, victim, mine) == Swap::Done {
                            done += 1;
                        }
                    }
                    done
                })
            })
            .collect();
        let done: u32 = threads.into_iter().map(|t| t.join().unwrap()).sum();
        assert!(done > 0);
        let mut seen = read(&s);
        seen.sort();
        assert_eq!(
            seen,
            (0..8).collect::<Vec<_>>(),
            "no queue lost or duplicated"
        );
    }
}
