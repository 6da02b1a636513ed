//! The per-actor mailbox: a segmented MPSC queue whose tail word also carries the actor's
//! scheduling state.
//!
//! Why hand-written: the mailbox is the hottest structure of the runtime, and on the machines we
//! measure a locked read-modify-write costs as much as the rest of a send. Here a send is exactly
//! one compare-and-swap, which both claims a slot and tells the sender whether it must schedule the
//! actor; the consumer does no atomic read-modify-write at all except one compare-and-swap when it
//! goes idle. Messages are stored inline in blocks of [`BLOCK_CAP`] slots (one allocation per block,
//! not per message), and a consumed block is kept as the mailbox's spare for the next one, so a
//! steady stream allocates nothing (see [`Mailbox::keep_spare`]). The first block is small
//! ([`FIRST_CAP`] slots) and lives inside the mailbox, in the bytes that keep the producers and the
//! consumer apart ([`FirstBlock`]): most actors only ever hold a few messages at a time, and many
//! short-lived actors (fork-join, request handlers) would otherwise each carry a kilobyte of empty
//! slots, or pay an allocation and a free for a block of three.
//!
//! ## Blocks sized by backlog
//! A backlog that grows (a driver flooding hundreds of actors faster than they run) outruns the
//! spare: every block is then allocated by the sender's thread and freed by the consumer's, and
//! with glibc that cross-thread free takes the allocating arena's lock, which drew ~23% of
//! fjthrput's time (docs/results/comparison.md). So the producer that links the next block makes it
//! a *big* one ([`BIG_CAP`] = [`BIG_LAPS`] × [`BLOCK_CAP`] slots, an eighth of the allocations)
//! when no spare is waiting and the consumer is [`BIG_LAG_LAPS`] or more blocks behind. While the
//! backlog lasts (the consumed big block's successor is big too) the consumer keeps the consumed
//! big block as the spare, and the sender takes it at its next block end where a big block may
//! start: a stream that stays behind then allocates nothing either, and no block crosses threads
//! through `free` (the arena lock drew a third of fjthrput's time even with big blocks,
//! docs/decisions/0033-big-block-recycling.md). A big block whose successor is small is freed, and so is a big spare
//! when the actor goes idle: an idle actor holds at most its current block, as before.
//!
//! ## The tail word
//! `position << 4 | BIG | DIRECT | CLOSED | IDLE`. Positions advance by one per slot, in laps of
//! [`LAP`] positions: [`BLOCK_CAP`] slots, then a marker (`offset == capacity`) meaning "the
//! producer that took this lap's last slot is linking the next block"; others wait for it (a few
//! instructions). A small block covers one lap; a big one covers [`BIG_LAPS`] laps, starting at a
//! lap that is a multiple of [`BIG_LAPS`], and a claim of the last slot of one of its laps other
//! than the last steps over that lap's marker in the same compare-and-swap, since no block needs
//! linking there. `BIG` says the block of the tail's lap is big, so senders know where a lap's slot
//! is without touching the block. The small first block leaves the rest of lap 0 unused: its
//! linker steps the position from the marker straight to `LAP`. So `position % LAP` is the slot
//! offset within its lap in every block, and every lap after the first holds exactly
//! [`BLOCK_CAP`] slots, which keeps the length a subtraction ([`Mailbox::len_estimate`]).
//!
//! ## The protocol
//! * **Send**: CAS the tail from `(p, flags)` to `(p + 1, flags without IDLE)`. If `IDLE` was set,
//!   the actor was idle and this sender, and only this sender, schedules it ([`Push::Wake`]), after
//!   writing its slot. If `CLOSED` is set, nothing is claimed and the message is handed back.
//! * **Consume** (the single activation holding the schedule): read slots in order. When the next
//!   slot is unclaimed (`Empty`), try to go idle: CAS the tail from the consumer's word (its
//!   position and its block's `BIG`) to the same word with `IDLE`.
//!   That fails exactly when a sender claimed a slot meanwhile, and then the consumer keeps going.
//!   When the next slot is claimed but not yet written (`NotReady`), or the throughput budget is
//!   spent, the actor stays scheduled and is re-queued without any atomic operation.
//!
//! So "scheduled" is exactly "IDLE clear": only a claim that clears it schedules, only the consumer
//! sets it, and it does so only when every claimed slot has been consumed. No message can be
//! stranded and no two activations can overlap.
//!
//! * **Close** (by the activation holding the schedule, or at shutdown): set `CLOSED` with one
//!   `fetch_or`. Claims fail from then on, so a send to a stopped actor always gets its message
//!   back; slots claimed before the close are drained by the closing activation or the cell's drop.
//!
//! ## Length
//! [`Mailbox::len_estimate`] subtracts the consumer's position from the tail's (counting slots,
//! not markers). Only the consumer writes its position, with `Relaxed` stores (a plain store on x86 and ARM, no read-modify-write),
//! so any thread may read it. It is no part of the protocol: nothing synchronises through it
//! (successive activations are ordered by the tail word), which is why it is a `std` atomic even
//! under loom: the model checks the protocol, not a statistic.

mod block;
mod push;

use crate::sync::{AtomicPtr, AtomicUsize, UnsafeCell};
use block::{
    block_of, capacity_at, ends_block, slot_index, span_base, untagged, Block, FirstBlock,
};
use std::mem::MaybeUninit;
use std::ptr;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed};

/// Slots per lap, and per small block. Under loom the block is tiny so block hand-over is
/// explored exhaustively.
#[cfg(not(loom))]
pub(crate) const BLOCK_CAP: usize = 31;
#[cfg(loom)]
pub(crate) const BLOCK_CAP: usize = 2;
/// Slots of a mailbox's first block (lap 0). Three hold a request, a stop signal and a reply, the
/// whole life of a typical short-lived actor, in a block of two cache lines for small messages.
#[cfg(not(loom))]
pub(crate) const FIRST_CAP: usize = 3;
#[cfg(loom)]
pub(crate) const FIRST_CAP: usize = 1;
/// Laps per big block (module docs, *Blocks sized by backlog*): 248 slots (4–8 KB for messages
/// of a word or two). With the big spare, eight laps ran fjthrput fastest; sixteen and more made
/// glibc return and re-fault a single long backlog's pages (counting, docs/decisions/0033-big-block-recycling.md).
pub(crate) const BIG_LAPS: usize = if cfg!(loom) { 2 } else { 8 };
/// Messages a big block holds.
pub(crate) const BIG_CAP: usize = BIG_LAPS * BLOCK_CAP;
/// How many blocks the consumer must be behind the block being closed before its successor is
/// big. Two: a consumer that keeps within a block of its senders finds a block to recycle before
/// they need one, whatever the distance; only a backlog that grows gets past that. One under
/// loom, so that a model of a few messages reaches a big block.
const BIG_LAG_LAPS: usize = if cfg!(loom) { 1 } else { 2 };
/// Positions per lap: the slots plus the "next block being linked" marker.
const LAP: usize = BLOCK_CAP + 1;

const IDLE: usize = 1;
const CLOSED: usize = 2;
/// The mailbox is unused: its actor's messages travel through the message-centric engine's
/// queues (see [`Push::Direct`]). Tested with `CLOSED` in one instruction, so the actor-centric
/// send path pays nothing for it.
const DIRECT: usize = 4;
/// The tail's block is big ([`BIG_CAP`] slots over [`BIG_LAPS`] laps).
const BIG: usize = 8;
const SHIFT: usize = 4;

/// Moves the consumer past the slot just taken (`Mailbox::pop_with`), freeing or recycling its
/// block after the block's last slot.
struct Advance<'a, T> {
    mailbox: &'a Mailbox<T>,
    /// The consumer's block pointer ([`ConsumerSide::block`]).
    block: &'a mut *mut Block<T>,
    /// The consumer's word ([`ConsumerSide::word`]) at the slot just taken.
    word: usize,
}

impl<T> Drop for Advance<'_, T> {
    #[inline(always)]
    fn drop(&mut self) {
        let position = self.word >> SHIFT;
        if position % LAP + 1 != capacity_at(position) {
            // Within a lap `pop_with` already stored the next word.
            return;
        }
        self.past_lap_end();
    }
}

impl<T> Advance<'_, T> {
    /// After a lap's last slot: on to the next lap, of this big block or of the next block.
    /// Out of line, so that the per-message drop stays one comparison.
    #[inline(never)]
    fn past_lap_end(&mut self) {
        let position = self.word >> SHIFT;
        let capacity = capacity_at(position);
        let big = self.word & BIG != 0;
        // Past the marker (and the rest of lap 0) to the next lap's first slot.
        let next_position = position + 1 + LAP - capacity;
        let next_lap = next_position << SHIFT;
        if !ends_block(position, big) {
            // A big block's inner lap: the block goes on.
            self.mailbox.head.word.store(next_lap | BIG, Relaxed);
            return;
        }
        // Last slot read: every producer of this block is done with it (each one's last access
        // is its `ready` store; one that read a stale tail block pointer failed its claim and
        // never dereferenced it), so the block is ours to reuse.
        let block = block_of(*self.block, position, big);
        // SAFETY: see above; `next` was published before this slot became ready.
        unsafe {
            let (next, next_big) = untagged((*block).next.load(Acquire));
            debug_assert!(!next.is_null());
            if big && next_big {
                // The backlog goes on: its sender will want a big block again (`fresh_block`).
                self.mailbox.keep_spare(block, true);
            } else if big {
                Block::free(block, true);
            } else if capacity == BLOCK_CAP {
                Block::reset(block);
                self.mailbox.keep_spare(block, false);
            }
            // The small first block is part of the mailbox and is never reused: spares must
            // be full-size, and its bytes go back to being the gap between the two groups.
            *self.block = span_base(next, next_position, next_big);
            self.mailbox
                .head
                .word
                .store(next_lap | if next_big { BIG } else { 0 }, Relaxed);
        }
    }
}

/// What a sender must do after [`Mailbox::push`].
#[must_use = "a Wake obliges the sender to schedule the actor, and a Rejected hands the message back"]
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Push<T> {
    /// The actor was idle: the caller must schedule it (exactly once).
    Wake,
    /// The actor is already scheduled or running; nothing to do.
    Queued,
    /// The mailbox is closed; the message is handed back.
    Rejected(T),
    /// The mailbox is direct ([`Mailbox::new_direct`]): nothing was queued, the caller must hand
    /// the message to the engine.
    Direct(T),
}

/// Result of [`Mailbox::pop`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Pop<T> {
    /// The oldest message.
    Item(T),
    /// No slot is claimed past the consumer.
    Empty,
    /// A sender has claimed the next slot and is still writing it.
    NotReady,
}

/// The consumer's side: its position and block, written only by the single consumer.
struct ConsumerSide<T> {
    /// The next position to read, shifted and flagged as the tail word would be once every
    /// claimed slot is read: `position << SHIFT`, with `BIG` when the consumer's block is big. So
    /// going idle is one compare-and-swap from this word. Only the consumer writes it, with
    /// `Relaxed` stores (a plain store on x86 and ARM, no read-modify-write);
    /// [`Mailbox::len_estimate`] reads it from any thread (module docs, *Length*). A `std` atomic
    /// even under loom: the model checks the protocol, which never synchronises through it
    /// (activations are ordered by the tail word), and the block pointer beside it stays a
    /// checked cell.
    // atomic outside sync.rs: a statistic the models need not see (above), and a loom atomic
    // would add a scheduling point to every pop of every mailbox model.
    word: std::sync::atomic::AtomicUsize,
    /// The block holding the position: in lap 0 the mailbox's own [`FirstBlock`] (from
    /// [`Mailbox::settle`] on), then heap blocks.
    block: UnsafeCell<*mut Block<T>>,
}

/// Bytes kept between two groups of fields that different threads write, so that the groups
/// never share a cache line nor an adjacent-line prefetch pair (128 bytes on x86).
///
/// Distance, not alignment: the padding of `CachePadded` raised the mailbox's alignment, and so
/// the actor cell's, to 128 bytes, and an over-aligned `Arc` is allocated by `posix_memalign`,
/// which cost every spawn ~720 instructions and left split chunks that glibc's `free` later
/// merged (docs/decisions/0028-spawn-stop-cost.md). With gaps the cell keeps the alignment of its fields (8), and
/// its allocation takes `malloc`'s fast path.
pub(crate) const GAP: usize = 128;

/// [`GAP`] bytes that are never read or written, so building one costs nothing.
#[repr(transparent)]
pub(crate) struct Gap(MaybeUninit<[u8; GAP]>);

impl Gap {
    pub(crate) const fn new() -> Self {
        Gap(MaybeUninit::uninit())
    }
}

/// The bytes one queued value of type `T` takes in a mailbox block (its slot: the value and its
/// ready flag, padded to the value's alignment): what a receiver reads per message, and what the
/// simulation prices a message by (`engine/sim/cost.rs`, `CostModel::slot_lines`).
pub(crate) const fn slot_bytes<T>() -> usize {
    std::mem::size_of::<block::Slot<T>>()
}

/// An actor's mailbox; see the module documentation.
///
/// `repr(C)`, two groups a [`GAP`] apart: what producers write (the tail word on every send, the
/// block pointers at a block's end), then what the consumer writes on every message (its
/// position), which the cell's fields after the mailbox (the actor's state) join. The bytes
/// between the two groups hold the first block ([`FirstBlock`]). The gap before
/// the producers keeps them off the line of the fields written at spawn, which every send and
/// every activation read. Two gaps, not one per field: every gap is 128 bytes that an idle actor
/// pays for too (docs/results/actor-footprint.md).
#[repr(C)]
pub(crate) struct Mailbox<T> {
    /// Apart from whatever precedes the mailbox in its cell.
    _before: Gap,
    tail_word: AtomicUsize,
    tail_block: AtomicPtr<Block<T>>,
    /// A consumed block waiting to become the next tail block (null when none), tagged when big
    /// (`block::tagged`). Without it every
    /// block is allocated by a sender's thread and freed by the consumer's, and a stream between
    /// two workers pays a cross-thread `free`: with glibc that takes the allocating arena's lock,
    /// and it cost counting and fjthrput half their throughput at 2 workers.
    spare: AtomicPtr<Block<T>>,
    /// Apart from the producers' group, and the first block.
    first: FirstBlock<T>,
    head: ConsumerSide<T>,
}

// SAFETY: values of `T` move from producers to the consumer, so `T: Send` suffices; shared state is
// atomics, and `head` is only touched by the single consumer (the `unsafe fn`s' contract).
unsafe impl<T: Send> Send for Mailbox<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Mailbox<T> {}

impl<T> Mailbox<T> {
    /// An empty, idle mailbox.
    pub(crate) fn new() -> Self {
        Mailbox {
            _before: Gap::new(),
            tail_word: AtomicUsize::new(IDLE),
            // Lap 0's block is `first`, whose address is known once the mailbox has come to rest
            // (`settle`).
            tail_block: AtomicPtr::new(ptr::null_mut()),
            spare: AtomicPtr::new(ptr::null_mut()),
            first: FirstBlock {
                block: std::mem::ManuallyDrop::new(Block::new()),
            },
            head: ConsumerSide {
                // atomic outside sync.rs: see `ConsumerSide::word`.
                word: std::sync::atomic::AtomicUsize::new(0),
                block: UnsafeCell::new(ptr::null_mut()),
            },
        }
    }

    /// A mailbox that queues nothing: every [`push`](Self::push) answers [`Push::Direct`] (or
    /// `Rejected` once closed). It keeps only the closed state, for actors whose messages the
    /// message-centric engine queues.
    pub(crate) fn new_direct() -> Self {
        let mailbox = Self::new();
        mailbox.tail_word.store(DIRECT, Relaxed);
        mailbox
    }

    /// Whether the mailbox was made by [`new_direct`](Self::new_direct).
    pub(crate) fn is_direct(&self) -> bool {
        self.tail_word.load(Relaxed) & DIRECT != 0
    }

    /// The mailbox's own first block, as the block pointers hold it.
    fn first_block(&self) -> *mut Block<T> {
        // Writes through this pointer reach only interior-mutable fields (`next`, the slots'
        // `UnsafeCell`s and `ready` flags), so deriving it from `&self` is sound.
        ptr::addr_of!(self.first).cast_mut().cast()
    }

    /// Points the producers and the consumer at the first block, which lives inside the
    /// mailbox: until then the mailbox may be moved, after it never. One call, where the
    /// mailbox has come to rest (the actor cell, right after its allocation), so that no send or
    /// receive pays to find the first block (a test of the position on every one cost threadring
    /// ~12 instructions a message).
    ///
    /// # Safety
    /// Called once, before the mailbox is shared or used, and the mailbox never moves after it
    /// (it is dropped in place).
    pub(crate) unsafe fn settle(&self) {
        let first = self.first_block();
        // Relaxed: the mailbox is not shared yet; whoever it is shared with later synchronises
        // with this thread through that hand-over.
        self.tail_block.store(first, Relaxed);
        // SAFETY: not shared yet, so no consumer runs (the caller's contract).
        self.head.block.with_mut(|block| unsafe { *block = first });
    }

    /// Takes the oldest message.
    ///
    /// # Safety
    /// Only the activation holding the schedule (or an owner with exclusive access) may call this.
    #[inline]
    pub(crate) unsafe fn pop(&self) -> Pop<T> {
        // SAFETY: the caller's contract; `read` moves the value out, and cannot unwind.
        unsafe { self.pop_with(|value| value.read()) }
    }

    /// Takes the oldest message in place: `take` gets a pointer to it in its slot, moves it out
    /// and may go on to use it (the activation runs the handler there). The consumer's position
    /// advances once `take` returns or unwinds. Moving a message straight from its slot into
    /// the handler's argument avoided a copy through the stack that stalled on store
    /// forwarding (docs/decisions/0026-micro-benchmark-losses.md).
    ///
    /// # Safety
    /// As [`Self::pop`]; besides, `take` must move the value out of the pointer (`ptr::read`)
    /// exactly once, before anything in it can unwind, and must not call this mailbox's consumer
    /// side (`pop`, `pop_with`, `try_idle`, `has_more`): the consumer's block pointer still
    /// points at the block of the slot being taken, which may be its last.
    #[inline(always)]
    pub(crate) unsafe fn pop_with<R>(&self, take: impl FnOnce(*const T) -> R) -> Pop<R> {
        let word = self.head.word.load(Relaxed);
        self.head.block.with_mut(|block| {
            // SAFETY: the caller guarantees a single consumer.
            let block = unsafe { &mut *block };
            let position = word >> SHIFT;
            let index = slot_index(position);
            let current = *block;
            // SAFETY: a heap block is freed only by `Advance::drop`, by this consumer, after its
            // last slot, and `index` is below the capacity of the block at this position.
            let slot = unsafe { Block::slot(current, index) };
            // Acquire pairs with the producer's Release: the value (and `next`) are visible.
            if !slot.ready.load(Acquire) {
                return if self.tail_word.load(Acquire) >> SHIFT == position {
                    Pop::Empty
                } else {
                    Pop::NotReady
                };
            }
            // Published before `take` runs, so the handler taking the message reads a length
            // (`len_estimate`) that no longer counts it. Past a lap's last slot the position
            // jumps further than this (`Advance` stores it), but `index_of` maps both to the
            // same count of slots.
            self.head.word.store(word + (1 << SHIFT), Relaxed);
            // Advances past the slot when dropped: after `take`, also when it unwinds (the value
            // was moved out first, so it is never taken twice).
            let _advance = Advance {
                mailbox: self,
                block,
                word,
            };
            // SAFETY: ready, and we are its only reader; `take` moves the value out.
            Pop::Item(slot.value.with(|p| take(p.cast::<T>())))
        })
    }
    /// After [`Pop::Empty`]: try to go idle. `false` means a sender claimed a slot meanwhile and
    /// the consumer must keep going (it still holds the schedule).
    ///
    /// # Safety
    /// Only the activation holding the schedule may call this.
    #[inline]
    #[must_use = "on `false` a send raced in and the consumer must keep going"]
    pub(crate) unsafe fn try_idle(&self) -> bool {
        // Written only by the consumer, which we are (caller's contract).
        let word = self.head.word.load(Relaxed);
        // Release: our reads of the slots happen before the next activation, which starts after a
        // sender's Acquire claim sees IDLE. Fails if the tail moved (or is CLOSED).
        let idle = self
            .tail_word
            .compare_exchange(word, word | IDLE, AcqRel, Relaxed)
            .is_ok();
        // A big spare outlives its backlog only while the actor works: an idle actor keeps
        // at most its current block. Relaxed: a hint (the line is ours after the CAS).
        if idle && untagged(self.spare.load(Relaxed)).1 {
            self.free_big_spare();
        }
        idle
    }

    /// Frees the spare if it is big (a small one, kept meanwhile, is put back). Out of line: only
    /// an actor going idle after a backlog comes here.
    #[cold]
    #[inline(never)]
    fn free_big_spare(&self) {
        let (block, big) = untagged(self.spare.swap(ptr::null_mut(), Acquire));
        if block.is_null() {
            return;
        }
        // SAFETY: the swap made it ours alone; a small spare is reset, a big one consumed.
        unsafe {
            if big {
                Block::free(block, true);
            } else {
                self.keep_spare(block, false);
            }
        }
    }

    /// Whether slots are claimed past the consumer (messages queued behind the current one).
    ///
    /// # Safety
    /// Only the activation holding the schedule may call this.
    pub(crate) unsafe fn has_more(&self) -> bool {
        // Written only by the consumer, which we are (caller's contract).
        let position = self.head.word.load(Relaxed) >> SHIFT;
        self.tail_word.load(Acquire) >> SHIFT != position
    }

    /// Closes the mailbox: every later send is rejected with its message. Called by the activation
    /// holding the schedule, or at shutdown.
    pub(crate) fn close(&self) {
        self.tail_word.fetch_or(CLOSED, AcqRel);
    }

    /// Whether the mailbox is idle (not scheduled): a snapshot for introspection, no part of the
    /// protocol.
    pub(crate) fn is_idle(&self) -> bool {
        self.tail_word.load(Relaxed) & IDLE != 0
    }

    /// Whether the mailbox is closed.
    #[inline]
    pub(crate) fn is_closed(&self) -> bool {
        self.tail_word.load(Acquire) & CLOSED != 0
    }

    /// Whether a sender claimed a slot the consumer has not taken: the consumer's test, before it
    /// tries to go idle, of whether a message came (a plain load, where the compare-and-swap of
    /// [`Self::try_idle`] would fail at the same cost as it succeeds). A claim that lands just
    /// after the load makes `try_idle` fail instead: nothing is missed either way.
    ///
    /// # Safety
    /// Only the consumer may call this (it reads the consumer's own word).
    #[inline]
    pub(crate) unsafe fn has_claims(&self) -> bool {
        // Relaxed: a hint; `try_idle`'s compare-and-swap is what decides.
        (self.tail_word.load(Relaxed) >> SHIFT) != (self.head.word.load(Relaxed) >> SHIFT)
    }

    /// Messages claimed and not yet consumed, from any thread: best effort. It counts slots being
    /// written, may lag the consumer by the messages it is taking out right now, and is 0 for a
    /// direct mailbox (which queues nothing).
    pub(crate) fn len_estimate(&self) -> usize {
        let consumed = self.head.word.load(Relaxed) >> SHIFT;
        let claimed = self.tail_word.load(Relaxed) >> SHIFT;
        index_of(claimed).saturating_sub(index_of(consumed))
    }
}

/// How many slots come before `position` (the positions skipped over by markers and by the rest
/// of lap 0 hold no slot).
fn index_of(position: usize) -> usize {
    if position < LAP {
        position.min(FIRST_CAP)
    } else {
        FIRST_CAP + (position / LAP - 1) * BLOCK_CAP + (position % LAP).min(BLOCK_CAP)
    }
}

impl<T> Drop for Mailbox<T> {
    fn drop(&mut self) {
        // `&mut self`: no producer or consumer is active; every claimed slot was written.
        // In lap 0 the consumer's pointer is the first block's address, taken through a shared
        // reference at `settle`; re-derive it from `&mut self`, which is what may access the
        // mailbox now (and covers a mailbox never settled).
        if self.head.word.load(Relaxed) >> SHIFT < LAP {
            let first = self.first_block();
            // SAFETY: exclusive access.
            self.head.block.with_mut(|block| unsafe { *block = first });
        }
        // SAFETY: exclusive access makes us the single consumer.
        while let Pop::Item(value) = unsafe { self.pop() } {
            drop(value);
        }
        let word = self.head.word.load(Relaxed);
        self.head.block.with_mut(|block| {
            // SAFETY: exclusive access; the head block is the only heap block still in the
            // chain (in lap 0 it is the first block, part of the mailbox, and there is none).
            unsafe {
                let (position, big) = (word >> SHIFT, word & BIG != 0);
                if position >= LAP {
                    Block::free(block_of(*block, position, big), big);
                }
            }
        });
        let (spare, big) = untagged(self.spare.load(Acquire));
        if !spare.is_null() {
            // SAFETY: exclusive access; the spare is owned by the mailbox alone.
            unsafe { Block::free(spare, big) };
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests;

#[cfg(all(test, loom))]
mod loom_tests;
