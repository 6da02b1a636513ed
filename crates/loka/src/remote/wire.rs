//! How messages cross the wire: postcard bytes, written and read inside the scope of a [`Wire`]
//! (the node at the other end), so that an [`ActorRef`] or a [`ReplyTo`] inside a message
//! travels as an address and comes out on the other side as a working reference.

use super::inbox::InboxOf;
use super::{fingerprint, inbox, remote_ref, Inbox, RemoteMessage, RemoteStatus};
use crate::actor::ask::Deliver as ReplyDelivery;
use crate::{ActorRef, AskError, ReplyTo};
use serde::de::{DeserializeOwned, Error as _};
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cell::RefCell;
use std::sync::Arc;

/// An actor or a reply handle on some node: the node's id (its incarnation: a restarted node
/// has another) and the id there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct WireAddress {
    /// The node.
    pub node: u128,
    /// The actor's id on that node, or the reply handle's number.
    pub id: u64,
}

/// A message that could not be encoded or decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct WireError(String);

/// What a reference that arrived resolves to.
pub enum Imported {
    /// An actor of this node, exported earlier: the reference is the actor's own.
    Local(Arc<dyn Inbox>),
    /// An actor of another node: its shared status (one per actor and node incarnation).
    Remote(Arc<RemoteStatus>),
}

/// Called once with the encoded reply (`None`: the request was dropped unanswered, or its
/// node was lost) when the answer to an exported [`ReplyTo`] comes back.
pub type ReplyCompletion = Box<dyn FnOnce(Option<&[u8]>) + Send>;

/// The transport's side of the encoding, for one node at the other end: where references
/// inside messages are exported to and imported from. Errors are text for the encoder.
pub trait Wire: Send + Sync + 'static {
    /// Makes a local actor reachable from other nodes (or finds it made so already): its
    /// address.
    fn export_actor(&self, inbox: Arc<dyn Inbox>) -> Result<WireAddress, String>;
    /// The actor at `address`, whose message type has fingerprint `fingerprint`.
    fn import_actor(&self, address: WireAddress, fingerprint: u64) -> Result<Imported, String>;
    /// Keeps a reply handle whose request goes to this wire's node: its address.
    /// `complete` runs when the reply arrives, or with `None` when its node is lost.
    fn export_reply(&self, complete: ReplyCompletion) -> Result<WireAddress, String>;
    /// Sends a reply (`None`: no reply) to the reply handle at `address`.
    fn send_reply(&self, address: WireAddress, reply: Option<Vec<u8>>);
}

thread_local! {
    /// The wires of the encodings under way on this thread, innermost last.
    static SCOPE: RefCell<Vec<Arc<dyn Wire>>> = const { RefCell::new(Vec::new()) };
    /// Why a reference failed to encode or decode: postcard keeps only "a serde error", so the
    /// reason is kept here for [`WireError`].
    static REASON: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// A custom serde error whose text survives the format.
fn fail<E: std::fmt::Display>(error: impl FnOnce(String) -> E, reason: String) -> E {
    REASON.with(|kept| *kept.borrow_mut() = Some(reason.clone()));
    error(reason)
}

/// The error of a failed encoding or decoding: the kept reason if a reference failed.
fn wire_error(error: postcard::Error) -> WireError {
    match REASON.with(|kept| kept.borrow_mut().take()) {
        Some(reason) => WireError(reason),
        None => WireError(error.to_string()),
    }
}

/// Pops the scope entry pushed for an encoding, even if it panics.
struct ScopeGuard;

impl Drop for ScopeGuard {
    fn drop(&mut self) {
        SCOPE.with(|scope| scope.borrow_mut().pop());
    }
}

fn in_scope<T>(wire: &Arc<dyn Wire>, f: impl FnOnce() -> T) -> T {
    SCOPE.with(|scope| scope.borrow_mut().push(Arc::clone(wire)));
    let _guard = ScopeGuard;
    f()
}

/// The wire of the encoding under way, or why a reference cannot be written.
fn current<E: std::fmt::Display>(
    what: &str,
    error: impl FnOnce(String) -> E,
) -> Result<Arc<dyn Wire>, E> {
    SCOPE
        .with(|scope| scope.borrow().last().cloned())
        .ok_or_else(|| {
            fail(
                error,
                format!("{what} crosses processes only inside a message a loka-remote node sends"),
            )
        })
}

/// Encodes `value` for the node of `wire`.
pub fn encode<T: Serialize>(wire: &Arc<dyn Wire>, value: &T) -> Result<Vec<u8>, WireError> {
    REASON.with(|kept| kept.borrow_mut().take());
    in_scope(wire, || postcard::to_allocvec(value)).map_err(wire_error)
}

/// Decodes a `T` that came from the node of `wire`.
pub fn decode<T: DeserializeOwned>(wire: &Arc<dyn Wire>, bytes: &[u8]) -> Result<T, WireError> {
    REASON.with(|kept| kept.borrow_mut().take());
    in_scope(wire, || postcard::from_bytes(bytes)).map_err(wire_error)
}

/// An `ActorRef` travels as its actor's address and its message type's fingerprint: a local
/// actor is exported first, a remote one keeps its own node's address.
impl<M: RemoteMessage> Serialize for ActorRef<M> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let address = match self.cell().wire_address() {
            Some((node, id)) => WireAddress { node, id },
            None => current("an ActorRef", S::Error::custom)?
                .export_actor(inbox(self))
                .map_err(|reason| fail(S::Error::custom, reason))?,
        };
        (address.node, address.id, fingerprint::<M>()).serialize(serializer)
    }
}

/// An `ActorRef` read back: the actor's own reference on its node, a remote face elsewhere.
/// Refused if the sender's message type is not `M`.
impl<'de, M: RemoteMessage> Deserialize<'de> for ActorRef<M> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (node, id, sent) = <(u128, u64, u64)>::deserialize(deserializer)?;
        let expected = fingerprint::<M>();
        if sent != expected {
            return Err(fail(
                D::Error::custom,
                format!(
                    "an ActorRef<{}> arrived for a message type of another fingerprint \
                     ({sent:#018x}, expected {expected:#018x})",
                    std::any::type_name::<M>()
                ),
            ));
        }
        let wire = current("an ActorRef", D::Error::custom)?;
        match wire
            .import_actor(WireAddress { node, id }, sent)
            .map_err(|reason| fail(D::Error::custom, reason))?
        {
            Imported::Remote(status) => Ok(remote_ref(status)),
            Imported::Local(inbox) => match inbox.as_any().downcast_ref::<InboxOf<M>>() {
                Some(local) => Ok(local.actor.clone()),
                None => Err(fail(
                    D::Error::custom,
                    format!(
                        "actor {} takes {}, not {}",
                        inbox.id(),
                        inbox.message_type(),
                        std::any::type_name::<M>()
                    ),
                )),
            },
        }
    }
}

/// A `ReplyTo` travels as a reply address on the sending node: the right to answer moves with
/// it (the local handle is disarmed, so its drop no longer answers `NoReply`), and the answer,
/// or its absence, comes back over the wire.
impl<R: RemoteMessage> Serialize for ReplyTo<R> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let wire = current("a ReplyTo", S::Error::custom)?;
        let Some(deliver) = self.take_delivery() else {
            return Err(fail(
                S::Error::custom,
                "this ReplyTo was already sent".to_owned(),
            ));
        };
        let reply_wire = Arc::clone(&wire);
        let address = wire
            .export_reply(Box::new(move |bytes: Option<&[u8]>| {
                complete(deliver, &reply_wire, bytes)
            }))
            .map_err(|reason| fail(S::Error::custom, reason))?;
        (address.node, address.id).serialize(serializer)
    }
}

/// Decodes an answer that came back for an exported [`ReplyTo`] and delivers it to the asker.
fn complete<R: RemoteMessage>(
    deliver: ReplyDelivery<R>,
    wire: &Arc<dyn Wire>,
    bytes: Option<&[u8]>,
) {
    let reply = match bytes.map(|bytes| decode::<R>(wire, bytes)) {
        Some(Ok(reply)) => Ok(reply),
        Some(Err(error)) => {
            tracing::error!(
                reply_type = std::any::type_name::<R>(),
                %error,
                "a remote reply could not be decoded; the asker gets no reply"
            );
            Err(AskError::NoReply)
        }
        None => Err(AskError::NoReply),
    };
    deliver(reply);
}

/// A `ReplyTo` read back: answering it (or dropping it) sends the answer to the asker's node.
impl<'de, R: RemoteMessage> Deserialize<'de> for ReplyTo<R> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (node, id) = <(u128, u64)>::deserialize(deserializer)?;
        let wire = current("a ReplyTo", D::Error::custom)?;
        let address = WireAddress { node, id };
        Ok(ReplyTo::new(move |reply: Result<R, AskError>| {
            let bytes = match reply {
                Ok(reply) => match encode(&wire, &reply) {
                    Ok(bytes) => Some(bytes),
                    Err(error) => {
                        tracing::error!(
                            reply_type = std::any::type_name::<R>(),
                            %error,
                            "a reply to a remote asker could not be encoded; it gets no reply"
                        );
                        None
                    }
                },
                Err(_) => None,
            };
            wire.send_reply(address, bytes);
        }))
    }
}
