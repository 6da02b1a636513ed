//! The per-actor mailbox: a segmented MPSC queue whose tail word also carries the actor's
//! scheduling state.
//!
//! Why hand-written: the mailbox is the hottest structure of the runtime, and on the machines we
//! measure a locked read-modify-write costs as much as the rest of a send. Here a send is exactly
//! one compare-and-swap, which both claims a slot and tells the sender whether it must schedule the
//! actor; the consumer does no atomic read-modify-write at all except one compare-and-swap when it
//! goes idle. Messages are stored inline in blocks of [`BLOCK_CAP`] slots (one allocation per block,
//! not per message), and a consumed block is kept as the mailbox's spare for the next one, so a
//! steady stream allocates nothing (see [`Mailbox::recycle`]). The first block is small
//! ([`FIRST_CAP`] slots) and lives inside the mailbox, in the bytes that keep the producers and the
//! consumer apart ([`FirstBlock`]): most actors only ever hold a few messages at a time, and many
//! short-lived actors (fork-join, request handlers) would otherwise each carry a kilobyte of empty
//! slots, or pay an allocation and a free for a block of three.
//!
//! ## The tail word
//! `position << 3 | DIRECT | CLOSED | IDLE`. Positions advance by one per slot; a block covers [`LAP`]
//! positions: its slots, then a marker (`offset == capacity`) meaning "the producer that took this
//! block's last slot is linking the next block"; others wait for it (a few instructions). The small
//! first block leaves the rest of lap 0 unused: its linker steps the position from the marker
//! straight to `LAP`, so `position % LAP` is the slot offset in every block.
//!
//! ## The protocol
//! * **Send**: CAS the tail from `(p, flags)` to `(p + 1, flags without IDLE)`. If `IDLE` was set,
//!   the actor was idle and this sender, and only this sender, schedules it ([`Push::Wake`]), after
//!   writing its slot. If `CLOSED` is set, nothing is claimed and the message is handed back.
//! * **Consume** (the single activation holding the schedule): read slots in order. When the next
//!   slot is unclaimed (`Empty`), try to go idle: CAS the tail from `(head, 0)` to `(head, IDLE)`.
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
//! [`Mailbox::len_estimate`] subtracts the consumer's position from the tail's. Only the consumer
//! writes its position, with `Relaxed` stores (a plain store on x86 and ARM, no read-modify-write),
//! so any thread may read it. It is no part of the protocol: nothing synchronises through it
//! (successive activations are ordered by the tail word), which is why it is a `std` atomic even
//! under loom: the model checks the protocol, not a statistic.

use crate::sync::{spin_hint, AtomicBool, AtomicPtr, AtomicUsize, UnsafeCell};
use std::mem::MaybeUninit;
use std::ptr;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};

/// Slots per block. Under loom the block is tiny so block hand-over is explored exhaustively.
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
/// Positions per block: the slots plus the "next block being linked" marker.
const LAP: usize = BLOCK_CAP + 1;

const IDLE: usize = 1;
const CLOSED: usize = 2;
/// The mailbox is unused: its actor's messages travel through the message-centric engine's
/// queues (see [`Push::Direct`]). Tested with `CLOSED` in one instruction, so the actor-centric
/// send path pays nothing for it.
const DIRECT: usize = 4;
const SHIFT: usize = 3;

struct Slot<T> {
    value: UnsafeCell<MaybeUninit<T>>,
    /// Set (Release) by the producer after writing `value`; read (Acquire) by the consumer.
    ready: AtomicBool,
}

/// A block of `N` slots. Blocks are handled as `*mut Block<T>` (the full size) whatever their
/// capacity: `repr(C)` gives every `N` the same `next` and slot offsets, and slots are reached by
/// raw pointer arithmetic within the capacity the position implies ([`capacity_at`]), never through
/// a reference to the whole array.
#[repr(C)]
struct Block<T, const N: usize = BLOCK_CAP> {
    /// Written once, by the producer that claims this block's last slot, before it marks that slot
    /// ready; so a consumer that has read the last slot always sees it non-null.
    next: AtomicPtr<Block<T>>,
    slots: [Slot<T>; N],
}

/// The capacity of the block holding `position`: the small first block in lap 0, full blocks after.
#[inline]
fn capacity_at(position: usize) -> usize {
    if position < LAP {
        FIRST_CAP
    } else {
        BLOCK_CAP
    }
}

impl<T, const N: usize> Block<T, N> {
    fn new() -> Self {
        Block::<T, N> {
            next: AtomicPtr::new(ptr::null_mut()),
            slots: std::array::from_fn(|_| Slot {
                value: UnsafeCell::new(MaybeUninit::uninit()),
                ready: AtomicBool::new(false),
            }),
        }
    }
}

impl<T> Block<T> {
    /// Slot `offset` of `block`.
    ///
    /// # Safety
    /// `block` is live and `offset` is below its capacity.
    #[inline]
    unsafe fn slot<'a>(block: *mut Block<T>, offset: usize) -> &'a Slot<T> {
        // SAFETY: the caller's contract; `addr_of!` makes no reference to the (maybe shorter)
        // array, it only computes the in-bounds address of its first element.
        unsafe { &*ptr::addr_of!((*block).slots).cast::<Slot<T>>().add(offset) }
    }

    /// A new full-size block on the heap.
    fn new_boxed() -> *mut Block<T> {
        Box::into_raw(Box::new(Block::<T>::new()))
    }

    /// Frees a full-size block that no one else can reach.
    ///
    /// # Safety
    /// `block` was made by [`Block::new_boxed`], is exclusively owned, and its values were
    /// already moved out or never written.
    unsafe fn free(block: *mut Block<T>) {
        // SAFETY: the caller's contract.
        drop(unsafe { Box::from_raw(block) });
    }

    /// Makes a consumed full-size block look fresh: no slot ready, no successor.
    ///
    /// # Safety
    /// `block` is a full-size block, exclusively owned (consumed or never published).
    unsafe fn reset(block: *mut Block<T>) {
        // Relaxed: the block is handed over with a Release/Acquire pair on `Mailbox::spare`, and
        // republished to senders with the tail's Release, so these stores precede every later use.
        // SAFETY: exclusive ownership of a full block (caller's contract).
        unsafe {
            (*block).next.store(ptr::null_mut(), Relaxed);
            for offset in 0..BLOCK_CAP {
                Block::slot(block, offset).ready.store(false, Relaxed);
            }
        }
    }
}

/// Moves the consumer past the slot just taken (`Mailbox::pop_with`), freeing or recycling its
/// block after the block's last slot.
struct Advance<'a, T> {
    mailbox: &'a Mailbox<T>,
    /// The consumer's block pointer ([`ConsumerSide::block`]).
    block: &'a mut *mut Block<T>,
    /// The position of the slot just taken.
    position: usize,
}

impl<T> Drop for Advance<'_, T> {
    #[inline(always)]
    fn drop(&mut self) {
        let capacity = capacity_at(self.position);
        if self.position % LAP + 1 == capacity {
            // Last slot read: every producer of this block is done with it (each one's last
            // access is its `ready` store; one that read a stale tail block pointer failed its
            // claim and never dereferenced it), so the block is ours to reuse.
            let block = *self.block;
            // SAFETY: see above; `next` was published before this slot became ready.
            unsafe {
                let next = (*block).next.load(Acquire);
                debug_assert!(!next.is_null());
                if capacity == BLOCK_CAP {
                    Block::reset(block);
                    self.mailbox.recycle(block);
                }
                // The small first block is part of the mailbox and is never reused: spares must
                // be full-size, and its bytes go back to being the gap between the two groups.
                *self.block = next;
            }
            // Past the marker (and the rest of lap 0) to the next block's first slot. Within a
            // block, `pop_with` already stored the next position.
            self.mailbox
                .head
                .position
                .store(self.position + 1 + LAP - capacity, Relaxed);
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
    /// The next position to read. Only the consumer writes it, with `Relaxed` stores (a plain
    /// store on x86 and ARM, no read-modify-write); [`Mailbox::len_estimate`] reads it from any
    /// thread (module docs, *Length*). A `std` atomic even under loom: the model checks the
    /// protocol, which never synchronises through it (activations are ordered by the tail word),
    /// and the block pointer beside it stays a checked cell.
    position: std::sync::atomic::AtomicUsize,
    /// The block holding `position`: in lap 0 the mailbox's own [`FirstBlock`] (from
    /// [`Mailbox::settle`] on), then heap blocks.
    block: UnsafeCell<*mut Block<T>>,
}

/// Bytes kept between two groups of fields that different threads write, so that the groups
/// never share a cache line nor an adjacent-line prefetch pair (128 bytes on x86).
///
/// Distance, not alignment: the padding of `CachePadded` raised the mailbox's alignment, and so
/// the actor cell's, to 128 bytes, and an over-aligned `Arc` is allocated by `posix_memalign`,
/// which cost every spawn ~720 instructions and left split chunks that glibc's `free` later
/// merged (docs/decisions.md §28). With gaps the cell keeps the alignment of its fields (8), and
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

/// The mailbox's first block, stored in the gap between the producers' group and the consumer's.
///
/// The gap exists so that a stream between two workers does not bounce one line between the
/// producers' tail word and the consumer's position; a block of [`FIRST_CAP`] slots for small
/// messages (two lines) fits in it. While the mailbox is in its first block (lap 0) the two
/// groups are apart by fewer bytes, but the block's own slots are what producers and the consumer
/// share then anyway; from lap 1 on the block is never touched again and the full gap separates
/// them. An idle actor so pays neither an allocation of its own for a first block nor its
/// `malloc` header (docs/results/actor-footprint.md). For a message type large enough that the
/// block exceeds [`GAP`] bytes, the union is the block's size, which keeps the groups further
/// apart still.
#[repr(C)]
union FirstBlock<T> {
    block: std::mem::ManuallyDrop<Block<T, FIRST_CAP>>,
    _gap: std::mem::ManuallyDrop<Gap>,
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
    /// A consumed block waiting to become the next tail block (null when none). Without it every
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
                position: std::sync::atomic::AtomicUsize::new(0),
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

    /// A block for the next lap: the spare if there is one, else a new allocation.
    fn fresh_block(&self) -> *mut Block<T> {
        // Relaxed peek first: most boundaries of a mailbox whose consumer keeps up find the spare,
        // and an empty one costs no read-modify-write. Acquire on the swap pairs with `recycle`'s
        // Release, so the reset slots are seen.
        if !self.spare.load(Relaxed).is_null() {
            let block = self.spare.swap(ptr::null_mut(), Acquire);
            if !block.is_null() {
                return block;
            }
        }
        Block::<T>::new_boxed()
    }

    /// Keeps an exclusively owned, reset, full-size block as the spare, or frees it when a spare
    /// is already kept. The swap in `fresh_block` hands a spare to exactly one taker, and putting
    /// one back only ever replaces null, so no pointer can be taken twice (no ABA).
    ///
    /// # Safety
    /// `block` is a full-size block, exclusively owned and reset.
    unsafe fn recycle(&self, block: *mut Block<T>) {
        if self
            .spare
            .compare_exchange(ptr::null_mut(), block, Release, Relaxed)
            .is_err()
        {
            // SAFETY: exclusively owned (caller's contract), and not kept as the spare.
            unsafe { Block::free(block) };
        }
    }

    /// Sends `value`; see [`Push`] for what the caller must do next.
    #[inline]
    pub(crate) fn push(&self, value: T) -> Push<T> {
        let mut next_block: *mut Block<T> = ptr::null_mut();
        // Acquire: seeing a position implies seeing the block installed before it (the installer
        // publishes the block, then moves the position with a Release RMW; later claims extend that
        // release sequence).
        let mut word = self.tail_word.load(Acquire);
        loop {
            if word & (CLOSED | DIRECT) != 0 {
                if !next_block.is_null() {
                    // SAFETY: never published, so we own it, and it is fresh.
                    unsafe { self.recycle(next_block) };
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
            if offset == capacity {
                // The next block is being linked (right after its installer's claim).
                spin_hint();
                word = self.tail_word.load(Acquire);
                continue;
            }
            // Allocate before claiming a block's last slot, so others wait only a few instructions.
            if offset + 1 == capacity && next_block.is_null() {
                next_block = self.fresh_block();
            }
            let block = self.tail_block.load(Acquire);
            debug_assert!(!block.is_null(), "a mailbox used before `settle`");
            // Claim the slot and take the schedule if the actor was idle. AcqRel: Acquire pairs with
            // the consumer's Release when it went idle (its reads are done before we wake it);
            // Release keeps the chain of claims a release sequence for the block pointer.
            match self.tail_word.compare_exchange_weak(
                word,
                (position + 1) << SHIFT,
                AcqRel,
                Acquire,
            ) {
                Ok(_) => {
                    // SAFETY: the CAS made slot `offset` of `block` ours alone (a stale `block`
                    // would have failed the CAS, since the position moves past a marker only after
                    // the block pointer changed); the block lives until all its slots are read.
                    unsafe {
                        if offset + 1 == capacity {
                            let next = next_block;
                            next_block = ptr::null_mut();
                            self.tail_block.store(next, Release);
                            // Step over the marker (and the rest of lap 0 after the small first
                            // block) to the next block's first slot, keeping any CLOSED bit.
                            self.tail_word.fetch_add((LAP - capacity) << SHIFT, Release);
                            (*block).next.store(next, Release);
                        }
                        let slot = Block::slot(block, offset);
                        slot.value.with_mut(|p| p.write(MaybeUninit::new(value)));
                        // Release publishes the value (and, for a last slot, `next`).
                        slot.ready.store(true, Release);
                    }
                    if !next_block.is_null() {
                        // SAFETY: taken for a last slot someone else claimed; never published, so
                        // we own it, and it is fresh.
                        unsafe { self.recycle(next_block) };
                    }
                    return if word & IDLE != 0 {
                        Push::Wake
                    } else {
                        Push::Queued
                    };
                }
                Err(current) => word = current,
            }
        }
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
    /// forwarding (docs/decisions.md §26).
    ///
    /// # Safety
    /// As [`Self::pop`]; besides, `take` must move the value out of the pointer (`ptr::read`)
    /// exactly once, before anything in it can unwind, and must not call this mailbox's consumer
    /// side (`pop`, `pop_with`, `try_idle`, `has_more`): the consumer's block pointer still
    /// points at the block of the slot being taken, which may be its last.
    #[inline(always)]
    pub(crate) unsafe fn pop_with<R>(&self, take: impl FnOnce(*const T) -> R) -> Pop<R> {
        let position = self.head.position.load(Relaxed);
        self.head.block.with_mut(|block| {
            // SAFETY: the caller guarantees a single consumer.
            let block = unsafe { &mut *block };
            let offset = position % LAP;
            let current = *block;
            // SAFETY: a heap block is freed only by `Advance::drop`, by this consumer, after its
            // last slot, and `offset` is below the capacity of the block at this position.
            let slot = unsafe { Block::slot(current, offset) };
            // Acquire pairs with the producer's Release: the value (and `next`) are visible.
            if !slot.ready.load(Acquire) {
                return if self.tail_word.load(Acquire) >> SHIFT == position {
                    Pop::Empty
                } else {
                    Pop::NotReady
                };
            }
            // Published before `take` runs, so the handler taking the message reads a length
            // (`len_estimate`) that no longer counts it. Past a block's last slot the position
            // jumps further than this (`Advance` stores it), but `index_of` maps both to the
            // same count of slots.
            self.head.position.store(position + 1, Relaxed);
            // Advances past the slot when dropped: after `take`, also when it unwinds (the value
            // was moved out first, so it is never taken twice).
            let _advance = Advance {
                mailbox: self,
                block,
                position,
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
        let position = self.head.position.load(Relaxed);
        // Release: our reads of the slots happen before the next activation, which starts after a
        // sender's Acquire claim sees IDLE. Fails if the tail moved (or is CLOSED).
        self.tail_word
            .compare_exchange(
                position << SHIFT,
                (position << SHIFT) | IDLE,
                AcqRel,
                Relaxed,
            )
            .is_ok()
    }

    /// Whether slots are claimed past the consumer (messages queued behind the current one).
    ///
    /// # Safety
    /// Only the activation holding the schedule may call this.
    pub(crate) unsafe fn has_more(&self) -> bool {
        // Written only by the consumer, which we are (caller's contract).
        let position = self.head.position.load(Relaxed);
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

    /// Messages claimed and not yet consumed, from any thread: best effort. It counts slots being
    /// written, may lag the consumer by the messages it is taking out right now, and is 0 for a
    /// direct mailbox (which queues nothing).
    pub(crate) fn len_estimate(&self) -> usize {
        let consumed = self.head.position.load(Relaxed);
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
        if self.head.position.load(Relaxed) < LAP {
            let first = self.first_block();
            // SAFETY: exclusive access.
            self.head.block.with_mut(|block| unsafe { *block = first });
        }
        // SAFETY: exclusive access makes us the single consumer.
        while let Pop::Item(value) = unsafe { self.pop() } {
            drop(value);
        }
        let position = self.head.position.load(Relaxed);
        self.head.block.with_mut(|block| {
            // SAFETY: exclusive access; the head block is the only heap block still in the
            // chain (in lap 0 it is the first block, part of the mailbox, and there is none).
            unsafe {
                if position >= LAP {
                    Block::free(*block);
                }
            }
        });
        let spare = self.spare.load(Acquire);
        if !spare.is_null() {
            // SAFETY: exclusive access; the spare is a full block owned by the mailbox alone.
            unsafe { Block::free(spare) };
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests;

#[cfg(all(test, loom))]
mod loom_tests;
