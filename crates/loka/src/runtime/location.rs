//! Where an actor is and what it is doing, as an engine reports it for introspection
//! ([`crate::System::actors`]).

use serde::Serialize;

/// What an actor is doing, as far as a look from outside can tell (see [`ActorInfo::state`](crate::ActorInfo::state)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ActorState {
    /// Nothing to do: its mailbox is empty and it is queued nowhere.
    Idle,
    /// Runnable: queued on a worker (or its thread) with messages to handle.
    Scheduled,
    /// A thread runs it now (or it is stopping: running its `stopped` hook).
    Running,
}

/// Where an engine says an actor is (see [`EngineCore::locate`](super::EngineCore::locate)).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Location {
    pub(crate) worker: Option<usize>,
    pub(crate) queue: Option<usize>,
    /// The engine's own reading of the state, where the mailbox cannot tell it.
    pub(crate) state: Option<ActorState>,
}
