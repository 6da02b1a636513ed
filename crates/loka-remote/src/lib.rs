//! loka actors across processes and machines, over Zenoh (docs/remote.md).
//!
//! A [`Node`] is a Zenoh session in peer mode serving one loka [`loka::System`]. An actor
//! [`registered`](Node::register) under a name on one node is [`looked up`](Node::lookup) from
//! another as a plain [`loka::ActorRef`]: `send`, `ask`, `watch`, `watch_with` and `link` work
//! on it as on a local actor, and `ActorRef`s and `ReplyTo`s inside its messages travel too.
//! Messages are any `Serialize + Deserialize` type ([`loka::remote::RemoteMessage`]).
//!
//! What it guarantees: at most once, in order per (sender, receiver) while the nodes stay
//! connected; a send never blocks (a full queue toward a node fails with
//! [`loka::SendErrorReason::Full`]); a lost node reaches every watcher as
//! [`loka::StopReason::NodeDown`] and fails the asks waiting on it, within the lease; a
//! restarted node is a new incarnation (another id) and gets nothing meant for the old one.
//! Not: exactly-once delivery, sharding, consensus.
//!
//! ```no_run
//! use loka::{Actor, Context, ReplyTo, System};
//! use loka_remote::{Node, NodeConfig};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize)]
//! enum Msg { Get(ReplyTo<u64>) }
//! struct Counter;
//! impl Actor for Counter {
//!     type Msg = Msg;
//!     fn handle(&mut self, _: &mut Context<Self>, Msg::Get(reply): Msg) { reply.send(7) }
//! }
//!
//! // Process A
//! let system = System::builder().workers(2).build().unwrap();
//! let node = Node::open(&system, NodeConfig::default().listen("tcp/127.0.0.1:7447")).unwrap();
//! node.register("counter", &system.spawn(Counter)).unwrap();
//!
//! // Process B
//! let system = System::builder().workers(2).build().unwrap();
//! let node = Node::open(&system, NodeConfig::default().connect("tcp/127.0.0.1:7447")).unwrap();
//! let counter = node.lookup::<Msg>("counter").unwrap();
//! assert_eq!(counter.ask(Msg::Get).unwrap().wait().unwrap(), 7);
//! ```

mod config;
mod frame;
mod links;
mod names;
mod node;
mod peer;
mod stats;
mod tls;

pub use config::{
    NodeConfig, DEFAULT_LEASE, DEFAULT_LINK_FRAMES, DEFAULT_QUEUE_BYTES, DEFAULT_QUEUE_CAPACITY,
    MAX_LINK_FRAMES, MIN_LEASE,
};
pub use node::Node;
pub use stats::NodeStats;
pub use tls::TlsConfig;

use std::fmt;

/// A node's id: its Zenoh session's, fresh at every start, so it names one incarnation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u128);

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

impl fmt::Debug for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NodeId({self})")
    }
}

/// What went wrong, naming the bad input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RemoteError {
    /// A setting is out of range.
    #[error("bad node setting {setting}: {why}")]
    BadConfig {
        /// The setting.
        setting: &'static str,
        /// What is wrong with it.
        why: String,
    },
    /// An endpoint is malformed or of an unknown protocol.
    #[error("bad endpoint {endpoint:?}: {why}")]
    BadEndpoint {
        /// The endpoint as given.
        endpoint: String,
        /// What is wrong with it.
        why: String,
    },
    /// Plain TCP to or from an address that is not loopback, without
    /// [`NodeConfig::allow_plaintext`].
    #[error(
        "endpoint {endpoint:?} is plain TCP off loopback: anyone on the network could read and \
         send; use loopback, or allow it explicitly (NodeConfig::allow_plaintext)"
    )]
    PlaintextOffLoopback {
        /// The endpoint as given.
        endpoint: String,
    },
    /// Zenoh refused to open the session (a port in use, an unreachable peer...).
    #[error("the Zenoh session did not open: {0}")]
    Open(String),
    /// A name that cannot be one: empty, too long, or with a character outside
    /// `A-Z a-z 0-9 _ - .`.
    #[error("bad actor name {name:?}: {why}")]
    BadName {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The name is registered already, on this node or another.
    #[error("the name {name:?} is registered already (node {node})")]
    NameTaken {
        /// The name.
        name: String,
        /// The node that holds it.
        node: NodeId,
    },
    /// No node has an actor under the name (within [`NodeConfig::lookup_timeout`]).
    #[error("no node has an actor named {name:?}")]
    NotFound {
        /// The name.
        name: String,
    },
    /// The actor under the name takes another message type.
    #[error(
        "the actor named {name:?} takes another message type than {expected} \
         (fingerprint {found:#018x}, expected {expected_fingerprint:#018x})"
    )]
    TypeMismatch {
        /// The name.
        name: String,
        /// The message type the lookup asked for.
        expected: &'static str,
        /// Its fingerprint ([`loka::remote::fingerprint`]).
        expected_fingerprint: u64,
        /// The fingerprint of the registered actor's message type.
        found: u64,
    },
    /// The actor to register has stopped.
    #[error("actor {actor} has stopped; it cannot be registered")]
    Stopped {
        /// The actor.
        actor: loka::ActorId,
    },
    /// Zenoh failed an operation of an open session.
    #[error("zenoh: {0}")]
    Transport(String),
}
