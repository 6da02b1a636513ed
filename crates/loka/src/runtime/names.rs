//! The registered names of a system (Erlang's `register`/`whereis`), as the runtime keeps them:
//! a type-erased table the cell clears an actor's name from when it stops. The typed operations
//! (register, look up by message type, unregister) are the actor layer's (`actor/names.rs`),
//! which is also where the rules are explained.

use super::ActorId;
use parking_lot::Mutex;
use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;

/// One registered name.
pub(crate) struct Entry {
    pub(crate) actor: ActorId,
    /// The actor's message type, for [`LookupError::WrongType`].
    pub(crate) message_type: &'static str,
    /// An `ActorRef<M>` of the actor's message type `M`.
    pub(crate) actor_ref: Box<dyn Any + Send + Sync>,
}

#[derive(Default)]
pub(crate) struct Table {
    pub(crate) by_name: HashMap<Arc<str>, Entry>,
    pub(crate) by_actor: HashMap<ActorId, Arc<str>, rustc_hash::FxBuildHasher>,
}

/// The registered names of one system. One lock: registering and looking up are rare next to
/// sends, and a lookup's result is meant to be kept.
#[derive(Default)]
pub(crate) struct Directory(pub(crate) Mutex<Table>);

impl Directory {
    /// The actor stopped: frees its name (called by `terminate`, when the actor was registered).
    pub(crate) fn remove_actor(&self, id: ActorId) {
        let entry = {
            let mut table = self.0.lock();
            let Some(name) = table.by_actor.remove(&id) else {
                return;
            };
            table.by_name.remove(&name)
        };
        drop(entry);
    }

    /// Frees every name (after shutdown).
    pub(crate) fn clear(&self) {
        let table = std::mem::take(&mut *self.0.lock());
        drop(table);
    }
}
