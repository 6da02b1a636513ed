//! The mailbox's blocks of slots: their layout, the two heap sizes, and the tag on `next` that
//! tells the consumer which size the next block is.

use super::{Gap, BIG_CAP, BIG_LAPS, BLOCK_CAP, FIRST_CAP, LAP};
use crate::sync::{AtomicBool, AtomicPtr, UnsafeCell};
use std::mem::MaybeUninit;
use std::ptr;
use std::sync::atomic::Ordering::Relaxed;

pub(super) struct Slot<T> {
    pub(super) value: UnsafeCell<MaybeUninit<T>>,
    /// Set (Release) by the producer after writing `value`; read (Acquire) by the consumer.
    pub(super) ready: AtomicBool,
}

/// A block of `N` slots. Blocks are handled as `*mut Block<T>` (the small heap size) whatever
/// their capacity: `repr(C)` gives every `N` the same `next` and slot offsets, and slots are
/// reached by raw pointer arithmetic within the capacity the position implies, never through a
/// reference to the whole array.
#[repr(C)]
pub(super) struct Block<T, const N: usize = BLOCK_CAP> {
    /// Written once, by the producer that claims this block's last slot, before it marks that slot
    /// ready; so a consumer that has read the last slot always sees it non-null. Tagged with
    /// [`BIG_TAG`] when the next block is a big one ([`Block::new_big`]).
    pub(super) next: AtomicPtr<Block<T>>,
    slots: [Slot<T>; N],
}

/// The low bit of a `next` pointer: the next block is big ([`BIG_SLOTS`] slots). Blocks are aligned to
/// at least 8 bytes (their `next` pointer), so the bit is free.
const BIG_TAG: usize = 1;

/// `block` with the tag saying whether it is big (in `next`, and in the mailbox's spare).
pub(super) fn tagged<T>(block: *mut Block<T>, big: bool) -> *mut Block<T> {
    block.map_addr(|addr| addr | (usize::from(big) * BIG_TAG))
}

/// A tagged pointer (`next`, or the mailbox's spare) split into the block and whether it is big.
pub(super) fn untagged<T>(next: *mut Block<T>) -> (*mut Block<T>, bool) {
    (
        next.map_addr(|addr| addr & !BIG_TAG),
        next.addr() & BIG_TAG != 0,
    )
}

/// The slots of the lap holding `position`: the small first block in lap 0, [`BLOCK_CAP`] after.
#[inline]
pub(super) fn capacity_at(position: usize) -> usize {
    if position < LAP {
        FIRST_CAP
    } else {
        BLOCK_CAP
    }
}

/// The slots a big block is made of: [`BIG_LAPS`] laps of [`LAP`] positions, less the last
/// marker. Each inner lap's marker position has a slot that is never used (7 of 255), so that a
/// position's slot is a remainder ([`slot_index`]), not a sum over laps.
pub(super) const BIG_SLOTS: usize = BIG_LAPS * LAP - 1;
const _: () = assert!(
    BIG_SLOTS == BIG_CAP + BIG_LAPS - 1,
    "one unused slot per inner lap"
);

/// Positions from one possible start of a big block to the next.
pub(super) const SPAN: usize = BIG_LAPS * LAP;

/// The slot of `position`, counted from its block's span base ([`span_base`]): one remainder,
/// whatever the block's size, so a send or a receive pays nothing for big blocks.
#[inline(always)]
pub(super) fn slot_index(position: usize) -> usize {
    position % SPAN
}

/// Bytes from a block's span base to the block itself, for a block holding `position`: a big block
/// starts a span; a small one, in lap `k` of its span, sits `k` laps of slots after its base.
fn span_offset<T>(position: usize, big: bool) -> usize {
    if big {
        0
    } else {
        position / LAP % BIG_LAPS * LAP * std::mem::size_of::<Slot<T>>()
    }
}

/// The address through which a block holding `position` is used: the block moved back by
/// [`span_offset`], so that slot `position % SPAN` of the base is the position's slot of the
/// block. The base may lie outside the block's allocation: it is only ever offset back into it
/// ([`Block::slot`], [`block_of`]), with wrapping arithmetic that keeps the block's provenance.
pub(super) fn span_base<T>(block: *mut Block<T>, position: usize, big: bool) -> *mut Block<T> {
    block.wrapping_byte_sub(span_offset::<T>(position, big))
}

/// The block whose span base ([`span_base`]) is `base`, for a block holding `position`.
pub(super) fn block_of<T>(base: *mut Block<T>, position: usize, big: bool) -> *mut Block<T> {
    base.wrapping_byte_add(span_offset::<T>(position, big))
}

/// Whether `position` lies in the last lap of its span, so that a big block may start after
/// it (big blocks start at a lap that is a multiple of [`BIG_LAPS`]).
#[inline]
pub(super) fn ends_span(position: usize) -> bool {
    (position / LAP) % BIG_LAPS == BIG_LAPS - 1
}

/// Whether the slot at `position` (with `offset = position % LAP`) is the last of its block, and
/// not only of its lap.
#[inline]
pub(super) fn ends_block(position: usize, big: bool) -> bool {
    !big || ends_span(position)
}

impl<T, const N: usize> Block<T, N> {
    pub(super) fn new() -> Self {
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
    /// Slot `index` ([`slot_index`]) of the block whose span base is `base`.
    ///
    /// # Safety
    /// The block is live and holds the position whose index this is.
    #[inline(always)]
    pub(super) unsafe fn slot<'a>(base: *mut Block<T>, index: usize) -> &'a Slot<T> {
        // Wrapping arithmetic from a base that may lie before the block ([`span_base`]) back into
        // it; the caller's contract makes the result one of the block's slots.
        let slot = base
            .cast::<u8>()
            .wrapping_add(std::mem::offset_of!(Block<T>, slots))
            .cast::<Slot<T>>()
            .wrapping_add(index);
        // SAFETY: the caller's contract: in bounds of a live block, and aligned.
        unsafe { &*slot }
    }

    /// A new block of [`BLOCK_CAP`] slots on the heap.
    pub(super) fn new_boxed() -> *mut Block<T> {
        Box::into_raw(Box::new(Block::<T>::new()))
    }

    /// A new block of [`BIG_SLOTS`] slots on the heap, for a backlog.
    pub(super) fn new_big() -> *mut Block<T> {
        Box::into_raw(Box::new(Block::<T, BIG_SLOTS>::new())).cast()
    }

    /// Frees a heap block that no one else can reach.
    ///
    /// # Safety
    /// `block` was made by [`Block::new_big`] if `big`, else by [`Block::new_boxed`]; it is
    /// exclusively owned, and its values were already moved out or never written.
    pub(super) unsafe fn free(block: *mut Block<T>, big: bool) {
        // SAFETY: the caller's contract: the layout is the one the block was allocated with.
        unsafe {
            if big {
                drop(Box::from_raw(block.cast::<Block<T, BIG_SLOTS>>()));
            } else {
                drop(Box::from_raw(block));
            }
        }
    }

    /// Makes a consumed small block look fresh: no slot ready, no successor.
    ///
    /// # Safety
    /// `block` is a [`BLOCK_CAP`] block, exclusively owned (consumed or never published).
    pub(super) unsafe fn reset(block: *mut Block<T>) {
        // SAFETY: the caller's contract.
        unsafe { Self::reset_slots(block, BLOCK_CAP) }
    }

    /// Makes a consumed big block look fresh. The sender that takes it as the spare does this,
    /// not the consumer that kept it: a kept big block may be freed unused (`Mailbox::keep_spare`),
    /// and the sender writes those lines next anyway.
    ///
    /// # Safety
    /// `block` is a big block, exclusively owned (consumed or never published).
    pub(super) unsafe fn reset_big(block: *mut Block<T>) {
        // SAFETY: the caller's contract.
        unsafe { Self::reset_slots(block, BIG_SLOTS) }
    }

    /// # Safety
    /// `block` holds `slots` slots and is exclusively owned.
    unsafe fn reset_slots(block: *mut Block<T>, slots: usize) {
        // Relaxed: the block is handed over with a Release/Acquire pair on `Mailbox::spare` (or
        // stays with the sender that resets it), and republished to senders with the tail's
        // Release, so these stores precede every later use.
        // SAFETY: exclusive ownership of a block of `slots` slots (caller's contract).
        unsafe {
            (*block).next.store(ptr::null_mut(), Relaxed);
            for index in 0..slots {
                // A heap block starts at lap 0 of its span, so it is its own base.
                Block::slot(block, index).ready.store(false, Relaxed);
            }
        }
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
pub(super) union FirstBlock<T> {
    pub(super) block: std::mem::ManuallyDrop<Block<T, FIRST_CAP>>,
    pub(super) _gap: std::mem::ManuallyDrop<Gap>,
}
