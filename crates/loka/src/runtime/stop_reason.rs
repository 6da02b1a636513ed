//! Why an actor stopped ([`StopReason`]): what its watchers, linked actors and supervisor are
//! told. Kept in the runtime because the cell that stops an actor tells them; the actor API
//! re-exports it.

use super::ActorId;
use std::fmt;

/// Why an actor stopped, as its watchers and linked actors are told.
///
/// | reason | when |
/// |---|---|
/// | `Normal` | the actor stopped itself ([`Context::stop`](crate::Context::stop)), or stopped because no [`ActorRef`](crate::ActorRef) to it was left and its mailbox was empty |
/// | `Stopped` | it was stopped from outside: [`ActorRef::stop`](crate::ActorRef::stop)'s stop signal reached it |
/// | `Panicked` | its factory, `started`, a handler, a continuation or a piped future's poll panicked (the panic message) |
/// | `Killed` | the system shut down while it was alive ([`crate::System::shutdown`], or dropping the system) |
/// | `Linked` | an actor linked to it ([`Context::link`](crate::Context::link)) failed, and it did not trap exits |
/// | `Escalated` | it was a [`Supervisor`](crate::supervisor::Supervisor) whose children failed more often than its restart intensity allows: it terminated them and gave up |
/// | `NodeDown` | it lives on another node, which was lost (feature `remote`, docs/remote.md) |
///
/// A failure is `Panicked`, `Linked`, `Escalated` or `NodeDown` ([`is_failure`](Self::is_failure)): only
/// failures travel along links, and a supervisor restarts a
/// [`Transient`](crate::runtime::restart::Restart::Transient) child only after one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "remote", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum StopReason {
    /// Stopped itself, or became unreferenced.
    Normal,
    /// Stopped from outside by a stop signal.
    Stopped,
    /// A panic; the panic message.
    Panicked(String),
    /// The system shut down.
    Killed,
    /// The linked actor `peer` failed, and this actor was stopped with it.
    Linked {
        /// The linked actor whose failure stopped this one.
        peer: ActorId,
        /// The first failure's panic message, passed along every link it crossed.
        message: String,
    },
    /// A supervisor gave up: its children failed more often than its restart intensity allows
    /// ([`SupervisorSpec::max_restarts`](crate::supervisor::SupervisorSpec::max_restarts)). It
    /// terminated them, then stopped with this reason, which its own parent hears as a failure.
    Escalated {
        /// Which intensity was exceeded, and the last child failure.
        message: String,
    },
    /// The actor lives on another node, and that node was lost: it closed, or it stopped
    /// answering for longer than its lease (docs/remote.md). Whether the actor itself still runs
    /// is unknown. A failure, as Erlang's `noconnection`: it travels along links.
    NodeDown,
}

impl StopReason {
    /// Whether the actor failed (a panic, its own or a linked actor's, or a supervisor's
    /// escalation): what links propagate.
    pub fn is_failure(&self) -> bool {
        matches!(
            self,
            StopReason::Panicked(_)
                | StopReason::Linked { .. }
                | StopReason::Escalated { .. }
                | StopReason::NodeDown
        )
    }

    /// The message behind a failure: the panic's, or the escalation's (`None` for other
    /// reasons).
    pub fn panic_message(&self) -> Option<&str> {
        match self {
            StopReason::Panicked(message)
            | StopReason::Linked { message, .. }
            | StopReason::Escalated { message } => Some(message),
            StopReason::NodeDown => Some("its node was lost"),
            _ => None,
        }
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopReason::Normal => f.write_str("stopped normally"),
            StopReason::Stopped => f.write_str("stopped by a stop signal"),
            StopReason::Panicked(message) => write!(f, "panicked: {message}"),
            StopReason::Killed => f.write_str("killed by the system's shutdown"),
            StopReason::Linked { peer, message } => {
                write!(f, "stopped because linked actor {peer} failed: {message}")
            }
            StopReason::Escalated { message } => write!(f, "escalated: {message}"),
            StopReason::NodeDown => f.write_str("its node was lost"),
        }
    }
}
