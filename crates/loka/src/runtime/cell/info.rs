//! Introspection, the cell's side: what [`crate::System::actors`] reads of one actor without
//! knowing its type, through the task's vtable (`runtime/task.rs`).

use super::{ActorCell, Behavior, Deliver};
use crate::runtime::task::Header;
use std::ptr::NonNull;

/// One actor's part of an [`crate::ActorInfo`]: read from its cell, racing with its senders and
/// its activation (every field is a snapshot of an atomic, or written only at spawn).
pub(crate) struct CellInfo {
    /// The actor's Rust type.
    pub(crate) actor_type: &'static str,
    /// Spawned with a name (a label in the runtime's name table).
    pub(crate) named: bool,
    /// User messages queued (see `ActorRef::mailbox_len`).
    pub(crate) mailbox_len: usize,
    /// The mailbox is idle: not scheduled, not running. Meaningless for a direct mailbox.
    pub(crate) idle: bool,
    /// The mailbox has closed: the actor is stopping.
    pub(crate) closed: bool,
    /// The actor's messages travel through the engine's queues (message-centric engine).
    pub(crate) direct: bool,
}

impl<B: Behavior> ActorCell<B> {
    /// The actor that spawned this one (the live-actor registry reads it for the tree of actors).
    ///
    /// # Safety
    /// `ptr` is the header of a live `ActorCell<B>`.
    pub(super) unsafe fn parent_raw(ptr: NonNull<Header>) -> Option<super::ActorId> {
        // SAFETY: as `info_raw`; the parent is written at spawn only.
        unsafe { ptr.cast::<Self>().as_ref() }.parent()
    }

    /// Reads [`CellInfo`].
    ///
    /// # Safety
    /// `ptr` is the header of a live `ActorCell<B>`.
    pub(super) unsafe fn info_raw(ptr: NonNull<Header>) -> CellInfo {
        // SAFETY: the header is the first field of a live `ActorCell<B>` (repr(C), the caller's
        // contract); only fields that any thread may read are read.
        let cell = unsafe { ptr.cast::<Self>().as_ref() };
        CellInfo {
            actor_type: std::any::type_name::<B>(),
            named: cell.named,
            mailbox_len: Deliver::mailbox_len(cell),
            idle: cell.mailbox.is_idle(),
            closed: cell.mailbox.is_closed(),
            direct: cell.mailbox.is_direct(),
        }
    }
}
