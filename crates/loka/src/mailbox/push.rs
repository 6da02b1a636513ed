//! The sending side of the mailbox: claiming a slot, and at a block's end linking the next one
//! (a recycled spare, a new small block, or a big one for a growing backlog). See the module
//! documentation of [`super`] for the protocol.

use super::block::{
    block_of, capacity_at, ends_block, ends_span, slot_index, span_base, tagged, untagged, Block,
};
use super::{Mailbox, Push, BIG, BIG_LAG_LAPS, CLOSED, DIRECT, IDLE, LAP, SHIFT};
use crate::sync::spin_hint;
use std::mem::MaybeUninit;
use std::ptr;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};

impl<T> Mailbox<T> {
    /// A block to link after the block holding `position` (whose last slot the caller is about
    /// to claim), and whether it is big: the spare if there is one that fits (a big spare only
    /// where a big block may start); else a big block if the next lap may start one and the
    /// consumer lags (module docs, *Blocks sized by backlog*); else a new small block.
    fn fresh_block(&self, position: usize) -> (*mut Block<T>, bool) {
        let may_start_big = ends_span(position);
        // Relaxed peek first: most boundaries of a mailbox whose consumer keeps up find the spare,
        // and an empty one costs no read-modify-write. Acquire on the swap pairs with
        // `keep_spare`'s Release, so the consumer's reads of the block (and a small block's reset)
        // come before our writes.
        let peek = self.spare.load(Relaxed);
        if !peek.is_null() && (may_start_big || !untagged(peek).1) {
            let (block, big) = untagged(self.spare.swap(ptr::null_mut(), Acquire));
            if !block.is_null() {
                if !big {
                    return (block, false);
                }
                if may_start_big {
                    // SAFETY: the swap made the consumed big block ours alone.
                    unsafe { Block::reset_big(block) };
                    return (block, true);
                }
                // A big block was kept between the peek and the swap, where none may start.
                // SAFETY: ours alone (the swap), consumed.
                unsafe { Block::free(block, true) };
            }
        }
        if may_start_big {
            // Relaxed: a hint, read once per block that finds no spare. Saturating: `position`
            // may be stale (its claim will then fail) and the consumer past it.
            let consumer = self.head.word.load(Relaxed) >> SHIFT;
            if (position / LAP).saturating_sub(consumer / LAP) >= BIG_LAG_LAPS {
                return (Block::new_big(), true);
            }
        }
        (Block::<T>::new_boxed(), false)
    }

    /// Keeps an exclusively owned block as the spare (a small one reset, a big one consumed or
    /// never published),
    /// freeing the spare it replaces. Every pointer enters the spare by this swap and leaves it
    /// by exactly one swap (here or in `fresh_block`), so none can be taken twice; nothing is
    /// compared, so there is no ABA. A mailbox so holds at most one spare, of either size.
    ///
    /// # Safety
    /// `block` is exclusively owned; big as `big` says; if small, reset.
    pub(super) unsafe fn keep_spare(&self, block: *mut Block<T>, big: bool) {
        // Release publishes the consumer's reads and resets to the taker; Acquire, the replaced
        // spare's to us before we free it.
        let (old, old_big) = untagged(self.spare.swap(tagged(block, big), AcqRel));
        if !old.is_null() {
            // SAFETY: the swap made it ours alone; a spare is never published in the chain.
            unsafe { Block::free(old, old_big) };
        }
    }

    /// Sends `value`; see [`Push`] for what the caller must do next.
    #[inline]
    pub(crate) fn push(&self, value: T) -> Push<T> {
        // Acquire: seeing a position implies seeing the block installed before it (the installer
        // publishes the block, then moves the position with a Release RMW; later claims extend that
        // release sequence).
        let mut word = self.tail_word.load(Acquire);
        loop {
            let position = word >> SHIFT;
            if word & (CLOSED | DIRECT) != 0 || position % LAP + 1 >= capacity_at(position) {
                // A direct mailbox hands the message back here, inlined in the sender: through
                // the out-of-line path it was copied twice more on its way to the engine.
                if word & (CLOSED | DIRECT) == DIRECT {
                    return Push::Direct(value);
                }
                // Closed, or the end of a lap: the general path.
                return self.push_slow(value, word);
            }
            let block = self.tail_block.load(Acquire);
            debug_assert!(!block.is_null(), "a mailbox used before `settle`");
            // Within a lap: claim the slot, keeping `BIG`, and take the schedule if the actor was
            // idle. Orderings as in `push_slow`.
            match self.tail_word.compare_exchange_weak(
                word,
                (word & !IDLE) + (1 << SHIFT),
                AcqRel,
                Acquire,
            ) {
                Ok(_) => {
                    // SAFETY: as in `push_slow`: the CAS made the slot ours alone, and the block
                    // lives until all its slots are read.
                    unsafe { Self::write(block, slot_index(position), value) };
                    return Self::woken(word);
                }
                Err(current) => word = current,
            }
        }
    }

    /// Writes `value` into slot `index` of `block` and publishes it.
    ///
    /// # Safety
    /// The caller's claim made the slot its own, and the block is live.
    #[inline(always)]
    unsafe fn write(block: *mut Block<T>, index: usize, value: T) {
        // SAFETY: the caller's contract.
        let slot = unsafe { Block::slot(block, index) };
        slot.value.with_mut(|p| {
            // SAFETY: the slot is ours alone (the caller's contract).
            unsafe { p.write(MaybeUninit::new(value)) }
        });
        // Release publishes the value (and, for a block's last slot, `next`).
        slot.ready.store(true, Release);
    }

    /// What a sender whose claim succeeded over `word` must do.
    #[inline(always)]
    fn woken(word: usize) -> Push<T> {
        if word & IDLE != 0 {
            Push::Wake
        } else {
            Push::Queued
        }
    }

    /// [`Self::push`] from `word` onward when it is closed, direct, or at the end of a lap: the
    /// claim of a lap's last slot, which steps over the marker or links the next block, and any
    /// claim after a retry.
    #[inline(never)]
    fn push_slow(&self, value: T, mut word: usize) -> Push<T> {
        // The block this sender made ready to link, if it found its claim at a block's last slot.
        let mut next_block: *mut Block<T> = ptr::null_mut();
        let mut next_big = false;
        loop {
            if word & (CLOSED | DIRECT) != 0 {
                if !next_block.is_null() {
                    // SAFETY: from `fresh_block`, never published: ours, and fresh.
                    unsafe { self.keep_spare(next_block, next_big) };
                }
                return if word & CLOSED != 0 {
                    Push::Rejected(value)
                } else {
                    Push::Direct(value)
                };
            }
            let position = word >> SHIFT;
            let offset = position % LAP;
            let capacity = capacity_at(position);
            let big = word & BIG != 0;
            // Within a lap (the common case) the claim steps one position and links nothing.
            let mut step = 1;
            let mut links = false;
            if offset + 1 >= capacity {
                if offset == capacity {
                    // The next block is being linked (right after its installer's claim).
                    spin_hint();
                    word = self.tail_word.load(Acquire);
                    continue;
                }
                links = ends_block(position, big);
                if !links {
                    // The last slot of a big block's inner lap also steps over its marker.
                    step = 2;
                } else if next_block.is_null() || (next_big && !ends_span(position)) {
                    // Allocate before claiming a block's last slot, so others wait only a few
                    // instructions. A big block kept from a failed claim fits only where big
                    // blocks may start; elsewhere it waits as the spare for a place that fits.
                    if !next_block.is_null() {
                        // SAFETY: from `fresh_block`, never published: ours, and fresh.
                        unsafe { self.keep_spare(next_block, true) };
                    }
                    (next_block, next_big) = self.fresh_block(position);
                }
            }
            let block = self.tail_block.load(Acquire);
            debug_assert!(!block.is_null(), "a mailbox used before `settle`");
            // Claim the slot and take the schedule if the actor was idle (keeping `BIG`; CLOSED and
            // DIRECT are clear). AcqRel: Acquire pairs with the consumer's Release when it went
            // idle (its reads are done before we wake it); Release keeps the chain of claims a
            // release sequence for the block pointer.
            match self.tail_word.compare_exchange_weak(
                word,
                (word & !IDLE) + (step << SHIFT),
                AcqRel,
                Acquire,
            ) {
                Ok(_) => {
                    // SAFETY: the CAS made slot `offset` of `block`'s lap ours alone (a stale
                    // `block` would have failed the CAS, since the position moves past a marker
                    // only after the block pointer changed); the block lives until all its slots
                    // are read.
                    unsafe {
                        if links {
                            let next = next_block;
                            next_block = ptr::null_mut();
                            let next_position = position + 1 + LAP - capacity;
                            self.tail_block
                                .store(span_base(next, next_position, next_big), Release);
                            // Step over the marker (and the rest of lap 0 after the small first
                            // block) to the next block's first slot, keeping any CLOSED bit and
                            // setting BIG as the next block is (wrapping: one bit flips, no
                            // carry).
                            let flag = |big: bool| if big { BIG } else { 0 };
                            let delta = ((LAP - capacity) << SHIFT)
                                .wrapping_add(flag(next_big))
                                .wrapping_sub(flag(big));
                            self.tail_word.fetch_add(delta, Release);
                            (*block_of(block, position, big))
                                .next
                                .store(tagged(next, next_big), Release);
                        }
                        Self::write(block, slot_index(position), value);
                    }
                    if !next_block.is_null() {
                        // SAFETY: from `fresh_block` for a last slot someone else claimed; never
                        // published: ours, and fresh.
                        unsafe { self.keep_spare(next_block, next_big) };
                    }
                    return Self::woken(word);
                }
                Err(current) => word = current,
            }
        }
    }
}
