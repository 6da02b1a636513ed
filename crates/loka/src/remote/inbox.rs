//! A local actor made reachable from other nodes: [`Inbox`] decodes what arrives for it and
//! sends it on, and tells the transport when the actor stops.

use super::{decode, fingerprint, RemoteMessage, Wire};
use crate::runtime::cell::Notice;
use crate::{ActorId, ActorRef, SendErrorReason, StopReason};
use std::any::Any;
use std::sync::Arc;

/// Why an [`Inbox`] refused bytes that arrived for its actor.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InboxError {
    /// The bytes are not a message of the actor's type (a sender built from other type
    /// definitions, or damaged bytes).
    #[error("bytes for actor {actor} are not a {message_type}: {error}")]
    Decode {
        /// The actor.
        actor: ActorId,
        /// Its message type.
        message_type: &'static str,
        /// What the decoder said.
        error: String,
    },
    /// The actor refused the message: it stopped, or its bounded mailbox was full.
    #[error("actor {actor} refused the message: {reason:?}")]
    Refused {
        /// The actor.
        actor: ActorId,
        /// Why.
        reason: SendErrorReason,
    },
}

/// The receiving side of a local actor reachable from other nodes, without its message type:
/// what a transport keeps in its table of exported actors.
pub trait Inbox: Send + Sync + 'static {
    /// The actor.
    fn id(&self) -> ActorId;
    /// The [`fingerprint`] of its message type.
    fn fingerprint(&self) -> u64;
    /// Its message type's name (for errors).
    fn message_type(&self) -> &'static str;
    /// Decodes `payload` (in the scope of `wire`, the sender's node: references inside it
    /// point there) and sends the message to the actor, as [`ActorRef::send`] does.
    fn deliver(&self, wire: &Arc<dyn Wire>, payload: &[u8]) -> Result<(), InboxError>;
    /// Sends the actor a stop signal ([`ActorRef::stop`]).
    fn stop(&self) -> bool;
    /// Calls `on_stop` with the actor's reason once it stops (at once if it has). It runs on the
    /// thread that ends the actor, often a worker: a panic in it is caught and reported on
    /// standard error, and the worker goes on.
    fn watch(&self, on_stop: Box<dyn FnOnce(StopReason) + Send>);
    /// The typed side, for a reference that comes back to its own node.
    fn as_any(&self) -> &dyn Any;
}

/// The [`Inbox`] of `actor`.
pub fn inbox<M: RemoteMessage>(actor: &ActorRef<M>) -> Arc<dyn Inbox> {
    Arc::new(InboxOf {
        actor: actor.clone(),
    })
}

/// An [`Inbox`] of a known message type.
pub(super) struct InboxOf<M: Send + 'static> {
    pub(super) actor: ActorRef<M>,
}

impl<M: RemoteMessage> Inbox for InboxOf<M> {
    fn id(&self) -> ActorId {
        self.actor.id()
    }

    fn fingerprint(&self) -> u64 {
        fingerprint::<M>()
    }

    fn message_type(&self) -> &'static str {
        std::any::type_name::<M>()
    }

    fn deliver(&self, wire: &Arc<dyn Wire>, payload: &[u8]) -> Result<(), InboxError> {
        let message: M = decode(wire, payload).map_err(|error| InboxError::Decode {
            actor: self.actor.id(),
            message_type: std::any::type_name::<M>(),
            error: error.to_string(),
        })?;
        self.actor
            .send(message)
            .map_err(|error| InboxError::Refused {
                actor: error.actor,
                reason: error.reason,
            })
    }

    fn stop(&self) -> bool {
        self.actor.stop()
    }

    fn watch(&self, on_stop: Box<dyn FnOnce(StopReason) + Send>) {
        let target = self.actor.cell_arc().watchable();
        target.add_watcher(Box::new(CallOnStop(on_stop)));
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A watch that calls a function.
struct CallOnStop(Box<dyn FnOnce(StopReason) + Send>);

impl Notice for CallOnStop {
    fn key(&self) -> Option<(ActorId, u64)> {
        None
    }

    fn is_gone(&self) -> bool {
        false
    }

    fn fire(self: Box<Self>, target: ActorId, reason: StopReason) {
        // The transport's code, run by whichever thread ends the actor (a worker, mid-way
        // through ending it): unwinding into the worker would abort the process.
        let call = std::panic::AssertUnwindSafe(|| (self.0)(reason));
        if let Err(panic) = std::panic::catch_unwind(call) {
            let panic = crate::runtime::cell::failure::panic_message(panic);
            eprintln!("loka: the transport's watch of actor {target} panicked: {panic}");
        }
    }
}
