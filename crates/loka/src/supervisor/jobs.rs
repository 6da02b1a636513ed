//! A supervisor's work items and the round under way (how rounds run is `rounds.rs`): the types
//! the supervisor actor holds, apart from the code that drives them, so neither file needs the
//! other's.

use super::SupervisorError;
use crate::runtime::cell::Command;
use crate::{ActorId, StopReason};
use std::collections::VecDeque;
use std::sync::Arc;

/// A reply to a request that completes later.
pub(super) type Reply = Box<dyn FnOnce(Result<(), SupervisorError>) + Send>;

/// Work for the supervisor, one at a time.
pub(super) enum Job {
    /// A child exited (stopped or failed) and waits suspended for a restart.
    Failure {
        child: Arc<str>,
        actor: ActorId,
        reason: StopReason,
    },
    /// `terminate_child`.
    Terminate { child: Arc<str>, reply: Reply },
    /// `stop`: every child, then the supervisor.
    Stop { reply: Reply },
}

/// One order of a round.
#[derive(Debug, Clone)]
pub(super) enum Step {
    /// Give the child this order (by id: the list may change during the round).
    Order(Arc<str>, Command),
}

/// What a round does once its last order is acknowledged.
pub(super) enum After {
    Nothing,
    Reply(Reply),
    /// Give up with this message.
    Escalate(String),
    /// Stop, then reply.
    Stop(Reply),
}

/// A round under way.
pub(super) struct Round {
    pub(super) steps: VecDeque<Step>,
    /// The child whose acknowledgement of order `seq` the round waits for.
    pub(super) waiting: Option<(ActorId, u64)>,
    pub(super) after: After,
}
