//! Introspection, the cell's side: what [`crate::System::actors`] reads of one actor without
//! knowing its type, through the task's vtable (`runtime/task.rs`).

use super::{ActorCell, Behavior, Deliver};
use crate::runtime::task::{CellInfo, Header};
use std::ptr::NonNull;

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
        // SAFETY: the header is at offset 0 of a live `ActorCell<B>` (the first field of its
        // `CellBase`, itself the first field; both repr(C), the caller's contract); only fields
        // that any thread may read are read.
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
