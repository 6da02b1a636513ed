//! Errors of the supervision API: each names the bad input; a refused call changes nothing.

use crate::{ActorId, SpawnError};

/// A supervision call refused; nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SupervisorError {
    /// [`SupervisorSpec::max_restarts`](super::SupervisorSpec::max_restarts) with a zero period:
    /// a restart intensity counts restarts within a time window, and an empty window counts
    /// none.
    #[error("max_restarts({max_restarts}, 0s): the period must be longer than zero (it is the window the restarts are counted in)")]
    ZeroPeriod {
        /// The restarts allowed that were asked for.
        max_restarts: u32,
    },
    /// A child spec with an empty id: ids name children in every call.
    #[error("a child id must not be empty")]
    EmptyChildId,
    /// A second child with an id the supervisor (or spec) already has.
    #[error("child id `{id}` is already used by another child of this supervisor")]
    DuplicateChild {
        /// The id asked for.
        id: String,
    },
    /// [`SupervisorSpec::pool`](super::SupervisorSpec::pool) of zero children.
    #[error("pool `{prefix}` of 0 children: a pool needs at least one")]
    EmptyPool {
        /// The pool's id prefix.
        prefix: String,
    },
    /// No child has this id.
    #[error("this supervisor has no child `{id}`")]
    UnknownChild {
        /// The id asked for.
        id: String,
    },
    /// [`restart_child`](super::SupervisorRef::restart_child) or
    /// [`delete_child`](super::SupervisorRef::delete_child) of a child that still runs (or is
    /// being restarted): terminate it first.
    #[error("child `{id}` is running: terminate it first (terminate_child)")]
    ChildRunning {
        /// The child's id.
        id: String,
    },
    /// [`child`](super::SupervisorRef::child) with a message type the child does not take.
    #[error("child `{id}` takes messages of type {actual}, not {requested}")]
    WrongType {
        /// The child's id.
        id: String,
        /// The message type asked for.
        requested: &'static str,
        /// The child's message type.
        actual: &'static str,
    },
    /// [`child`](super::SupervisorRef::child) of a child that is not running (terminated, or a
    /// transient child that stopped normally): it has no reference to hand out.
    #[error("child `{id}` is not running")]
    NotRunning {
        /// The child's id.
        id: String,
    },
    /// A child's spawn options are bad for this machine.
    #[error("child `{id}`: {error}")]
    Spawn {
        /// The child's id.
        id: String,
        /// What was wrong.
        error: SpawnError,
    },
    /// The supervisor has stopped, or is stopping (it gave up, or was asked to stop): it takes
    /// no child and answers no request.
    #[error("supervisor {supervisor} has stopped or is stopping: it takes no request")]
    Stopped {
        /// The supervisor.
        supervisor: ActorId,
    },
    /// The actor system has shut down (or its workers are stopping): no supervisor or child can
    /// be spawned.
    #[error("the actor system has shut down: no supervisor or child can be spawned")]
    ShutDown,
}
