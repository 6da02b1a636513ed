//! The seam a transport fills to put actors of other processes behind [`ActorRef`] (feature
//! `remote`; the user guide is docs/remote.md, the transport the `loka-remote` crate).
//!
//! loka keeps everything that knows an actor's message type: a remote actor's side of
//! [`ActorRef`] (sends encode the message, death watch and links wait on a [`RemoteStatus`]),
//! the decoding side of a local actor made reachable ([`Inbox`]), and how an `ActorRef` or a
//! [`ReplyTo`](crate::ReplyTo) inside a message crosses the wire ([`Wire`]). The transport
//! moves bytes: what it implements, [`Link`] and [`Wire`], never sees a message type.
//!
//! Messages are encoded with postcard: compact (no field names, varint integers), and what
//! a `Serialize`/`Deserialize` pair written once reads back.

mod cell;
mod inbox;
mod wire;

pub use cell::RemoteStatus;
pub use inbox::{inbox, Inbox, InboxError};
pub use wire::{decode, encode, Imported, ReplyCompletion, Wire, WireAddress, WireError};

use crate::runtime::{ActorId, Runtime, Shared};
use crate::ActorRef;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::sync::Arc;
use std::task::Waker;

/// A message that can cross to another node: serialisable both ways, and a plain message.
/// Implemented for every such type.
pub trait RemoteMessage: Serialize + DeserializeOwned + Send + 'static {}

impl<M: Serialize + DeserializeOwned + Send + 'static> RemoteMessage for M {}

/// A stable fingerprint of the message type `M`: FNV-1a (64 bits) of its type name. Two
/// programs built from the same type definitions by the same compiler agree on it; a lookup
/// or a reference whose fingerprint differs from what the receiver expects is refused instead
/// of decoding bytes as the wrong type.
pub fn fingerprint<M: 'static>() -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;
    std::any::type_name::<M>()
        .bytes()
        .fold(OFFSET, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(PRIME)
        })
}

/// The system side of a node: what a transport needs of the [`crate::System`] it serves, to
/// make the local face of remote actors. Cheap to clone; keeps the system's runtime alive as an
/// [`ActorRef`] does.
#[derive(Clone)]
pub struct Host {
    runtime: Arc<Runtime>,
    shared: Arc<Shared>,
}

impl Host {
    /// The host of `system`.
    pub fn of(system: &crate::System) -> Host {
        Host {
            runtime: Arc::clone(&system.runtime),
            shared: Arc::clone(&system.shared),
        }
    }

    /// A fresh local id, for the face of a remote actor.
    fn next_id(&self) -> ActorId {
        self.shared.next_actor_id(None)
    }
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Host")
    }
}

/// Why a [`Link`] refused a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkError {
    /// The queue toward the actor's node is full (it never blocks a sender): the send fails
    /// with [`crate::SendErrorReason::Full`], the link's capacity.
    Full,
    /// The actor is known to have stopped, or its node is lost.
    Down,
}

/// The outgoing side of one remote actor, implemented by a transport: bytes in a bounded
/// queue toward the actor's node. Every method returns at once.
pub trait Link: Send + Sync + 'static {
    /// Where the actor lives.
    fn address(&self) -> WireAddress;
    /// The wire of the actor's node: how references inside messages to it are encoded.
    fn wire(&self) -> Arc<dyn Wire>;
    /// Queues an encoded message for the actor.
    fn send(&self, payload: Vec<u8>) -> Result<(), LinkError>;
    /// Queues a stop signal for the actor; `false` if it is known to have stopped.
    fn stop(&self) -> bool;
    /// Asks the actor's node to report the actor's stop ([`RemoteStatus::terminated`]). Called
    /// once per [`RemoteStatus`], when its first watcher or link comes.
    fn watch(&self);
    /// The capacity of the queue toward the actor's node.
    fn capacity(&self) -> usize;
    /// Messages waiting in that queue.
    fn queued(&self) -> usize;
    /// A sender waits for room: wake `waker` once the queue has drained some. `false`: there is
    /// room now, try again.
    fn wait_for_room(&self, waker: &Waker) -> bool;
}

/// The local face of the remote actor behind `status`: an [`ActorRef`] whose sends encode
/// the message (in the wire scope of the actor's node) and queue it on the status's link, whose
/// `watch`, `watch_with` and `link` wait on the status.
pub fn remote_ref<M: RemoteMessage>(status: Arc<RemoteStatus>) -> ActorRef<M> {
    ActorRef::from_cell(Arc::new(cell::RemoteCell::<M>::new(status)))
}
