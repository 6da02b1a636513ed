//! Errors of the actor API.

use crate::runtime::ActorId;
use std::fmt;

/// A send failed because the actor has stopped; the message is handed back.
#[derive(PartialEq, Eq, thiserror::Error)]
#[error("actor {actor} has stopped; the message was not delivered")]
pub struct SendError<M> {
    /// The stopped actor.
    pub actor: ActorId,
    /// The message that was not delivered.
    pub message: M,
}

impl<M> fmt::Debug for SendError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SendError")
            .field("actor", &self.actor)
            .finish_non_exhaustive()
    }
}

/// A hub toggle on an actor that has stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("cannot change the hub flag of actor {actor}: it has stopped")]
pub struct HubError {
    /// The stopped actor.
    pub actor: ActorId,
}

/// A spawn refused because of a bad option; nothing was spawned.
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
}

impl SpawnError {
    /// Checks `options` against a machine of `places` places.
    pub(crate) fn check(options: &crate::SpawnOptions, places: usize) -> Result<(), SpawnError> {
        match options.place {
            Some(place) if place >= places => Err(SpawnError::UnknownPlace { place, places }),
            _ => Ok(()),
        }
    }
}
