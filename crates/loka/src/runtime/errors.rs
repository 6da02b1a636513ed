//! Errors of the actor API.

use crate::runtime::ActorId;
use std::fmt;

/// A send failed; the message is handed back and [`reason`](SendError::reason) says why.
#[derive(PartialEq, Eq, thiserror::Error)]
#[error("actor {actor} {reason}; the message was not delivered")]
pub struct SendError<M> {
    /// The actor the message was for.
    pub actor: ActorId,
    /// The message that was not delivered.
    pub message: M,
    /// Why it was not delivered.
    pub reason: SendErrorReason,
}

/// Why a [`SendError`] happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum SendErrorReason {
    /// The actor has stopped: no send to it can ever succeed again.
    #[error("has stopped")]
    Stopped,
    /// The actor's mailbox is bounded ([`SpawnOptions::capacity`](crate::SpawnOptions::capacity)),
    /// full, and its overflow rule is [`Overflow::Reject`](crate::Overflow::Reject). A later send
    /// may succeed; [`ActorRef::send_async`](crate::ActorRef::send_async) waits for room.
    #[error("has a full mailbox (capacity {capacity}, overflow rule Reject)")]
    Full {
        /// The mailbox's capacity.
        capacity: usize,
    },
}

impl<M> SendError<M> {
    /// The message that was not delivered.
    pub fn into_inner(self) -> M {
        self.message
    }

    /// Whether the mailbox was full ([`SendErrorReason::Full`]: a later send may succeed), as
    /// opposed to the actor stopped (no send ever will).
    pub fn is_full(&self) -> bool {
        matches!(self.reason, SendErrorReason::Full { .. })
    }
}

impl<M> fmt::Debug for SendError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SendError")
            .field("actor", &self.actor)
            .field("reason", &self.reason)
            .finish_non_exhaustive()
    }
}

/// A [`try_send`](crate::ActorRef::try_send) that did not deliver its message, handed back.
///
/// `try_send` never drops a message and never waits, whatever the actor's overflow rule: a full
/// mailbox answers [`Full`](TrySendError::Full).
#[derive(PartialEq, Eq, thiserror::Error)]
pub enum TrySendError<M> {
    /// The actor's bounded mailbox is full; try again later (or use
    /// [`send_async`](crate::ActorRef::send_async)).
    #[error("the actor's mailbox is full; the message was not delivered")]
    Full(M),
    /// The actor has stopped.
    #[error("the actor has stopped; the message was not delivered")]
    Stopped(M),
}

impl<M> TrySendError<M> {
    /// The message that was not delivered.
    pub fn into_inner(self) -> M {
        match self {
            TrySendError::Full(message) | TrySendError::Stopped(message) => message,
        }
    }

    /// Whether the mailbox was full (as opposed to the actor stopped).
    pub fn is_full(&self) -> bool {
        matches!(self, TrySendError::Full(_))
    }
}

impl<M> fmt::Debug for TrySendError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrySendError::Full(_) => f.write_str("Full(..)"),
            TrySendError::Stopped(_) => f.write_str("Stopped(..)"),
        }
    }
}

/// An [`ask_blocking`](crate::ActorRef::ask_blocking) that got no reply.
#[derive(PartialEq, Eq, thiserror::Error)]
pub enum AskBlockingError<M> {
    /// The actor stopped before it took the request, which is handed back.
    #[error("{0}")]
    NotSent(SendError<M>),
    /// The request was taken but dropped without a reply: the actor stopped, panicked, or
    /// discarded the [`ReplyTo`](crate::ReplyTo).
    #[error("the request was dropped without a reply (the actor stopped, panicked or ignored it)")]
    NoReply,
}

impl<M> fmt::Debug for AskBlockingError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AskBlockingError::NotSent(error) => f.debug_tuple("NotSent").field(error).finish(),
            AskBlockingError::NoReply => f.write_str("NoReply"),
        }
    }
}

/// A hub toggle on an actor that has stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("cannot change the hub flag of actor {actor}: it has stopped")]
pub struct HubError {
    /// The stopped actor.
    pub actor: ActorId,
}

/// A spawn refused because of a bad option, or because the system has shut down; nothing was
/// spawned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SpawnError {
    /// [`SpawnOptions::place`](crate::SpawnOptions::place) names a place this machine does not
    /// have.
    #[error("unknown place {place}: this machine has {places} place(s) (0..{places}; `place_level` decides what a place is)")]
    UnknownPlace {
        /// The place asked for.
        place: usize,
        /// How many places there are.
        places: usize,
    },
    /// [`SpawnOptions::capacity`](crate::SpawnOptions::capacity) is 0: such a mailbox could never
    /// hold a message.
    #[error("mailbox capacity {capacity} (SpawnOptions::capacity) must be at least 1; leave it unset for an unbounded mailbox")]
    ZeroCapacity {
        /// The capacity asked for (0).
        capacity: usize,
    },
    /// [`SpawnOptions::capacity`](crate::SpawnOptions::capacity) is above what a bounded mailbox
    /// counts.
    #[error("mailbox capacity {capacity} (SpawnOptions::capacity) is above the maximum {max}; leave it unset for an unbounded mailbox")]
    CapacityTooLarge {
        /// The capacity asked for.
        capacity: usize,
        /// The largest capacity a bounded mailbox supports.
        max: usize,
    },
    /// The system has shut down, or its workers are stopping ([`System::shutdown`]): the actor
    /// would never run. The infallible spawns return a stopped reference instead, whose sends
    /// fail with [`SendErrorReason::Stopped`](crate::SendErrorReason::Stopped).
    ///
    /// [`System::shutdown`]: crate::System::shutdown
    #[error("the actor system has shut down: no actor can be spawned in it any more")]
    ShutDown,
    /// The actor type needs something the system was built without ([`Actor::requires`]): for
    /// [`Requirement::Tokio`], a Tokio runtime's handle. Refused at spawn, so that the actor
    /// does not fail later, inside a handler, where only its askers would hear of it (as
    /// [`AskError::NoReply`](crate::AskError::NoReply)).
    ///
    /// [`Actor::requires`]: crate::Actor::requires
    #[error("actor type {actor_type} needs {requirement}, which this system was built without; nothing was spawned")]
    MissingRuntime {
        /// The actor type spawned (`std::any::type_name`).
        actor_type: &'static str,
        /// What it needs and the system lacks.
        requirement: Requirement,
    },
}

/// Something an actor type needs from its system beyond loka's own workers, declared by
/// [`Actor::requires`](crate::Actor::requires) (or
/// [`AsyncActor::requires`](crate::AsyncActor::requires)) and checked at every spawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Requirement {
    /// A Tokio runtime, for futures that use Tokio's timers or I/O (`tokio::time`,
    /// `tokio::net`): the system must be built with `SystemBuilder::tokio_handle` (feature
    /// `tokio`).
    Tokio,
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            #[cfg(feature = "tokio")]
            Requirement::Tokio => f.write_str(
                "a Tokio runtime (give its handle to SystemBuilder::tokio_handle)",
            ),
            #[cfg(not(feature = "tokio"))]
            Requirement::Tokio => f.write_str(
                "a Tokio runtime (build loka with its `tokio` feature and give the handle to SystemBuilder::tokio_handle)",
            ),
        }
    }
}

impl SpawnError {
    /// Checks `requires` (an actor type's [`Actor::requires`](crate::Actor::requires)) against
    /// what the system has; `actor_type` names the type in the error.
    pub(crate) fn check_requirements(
        requires: &[Requirement],
        actor_type: &'static str,
        shared: &super::Shared,
    ) -> Result<(), SpawnError> {
        for &requirement in requires {
            let met = match requirement {
                Requirement::Tokio => shared.has_tokio(),
            };
            if !met {
                return Err(SpawnError::MissingRuntime {
                    actor_type,
                    requirement,
                });
            }
        }
        Ok(())
    }

    /// Checks `options` against a machine of `places` places.
    pub(crate) fn check(
        options: &super::options::SpawnOptions,
        places: usize,
    ) -> Result<(), SpawnError> {
        if let Some(place) = options.place {
            if place >= places {
                return Err(SpawnError::UnknownPlace { place, places });
            }
        }
        match options.capacity {
            Some(0) => Err(SpawnError::ZeroCapacity { capacity: 0 }),
            Some(capacity) if capacity > crate::runtime::MAX_CAPACITY => {
                Err(SpawnError::CapacityTooLarge {
                    capacity,
                    max: crate::runtime::MAX_CAPACITY,
                })
            }
            _ => Ok(()),
        }
    }
}
