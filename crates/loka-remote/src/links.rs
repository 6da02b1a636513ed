//! The transport's side of loka's remote seam: [`ActorLink`] (bytes out to one remote actor)
//! and [`PeerWire`] (references inside messages to and from one node).

use crate::frame::Item;
use crate::node::NodeInner;
use crate::peer::{Peer, Refused};
use loka::remote::{Imported, Inbox, Link, LinkError, ReplyCompletion, Wire, WireAddress};
use std::sync::{Arc, Weak};
use std::task::Waker;

/// One remote actor's way out: its node's queue, and its id there.
pub(crate) struct ActorLink {
    pub(crate) peer: Arc<Peer>,
    /// The wire of the actor's node, kept: every send encodes in its scope.
    pub(crate) wire: Arc<dyn Wire>,
    pub(crate) address: WireAddress,
}

impl Link for ActorLink {
    fn address(&self) -> WireAddress {
        self.address
    }

    fn wire(&self) -> Arc<dyn Wire> {
        Arc::clone(&self.wire)
    }

    fn send(&self, payload: Vec<u8>) -> Result<(), LinkError> {
        self.peer
            .push_message(Item::Msg {
                to: self.address.id,
                payload: payload.into(),
            })
            .map_err(|refused| match refused {
                Refused::Full => LinkError::Full,
                Refused::Down => LinkError::Down,
            })
    }

    fn stop(&self) -> bool {
        self.peer.push_always(Item::Stop {
            to: self.address.id,
        })
    }

    fn watch(&self) {
        self.peer.push_control(Item::Watch {
            to: self.address.id,
        });
    }

    fn capacity(&self) -> usize {
        self.peer.capacity()
    }

    fn queued(&self) -> usize {
        self.peer.queued()
    }

    fn wait_for_room(&self, waker: &Waker) -> bool {
        !self.peer.is_down() && self.peer.wait_for_room(waker)
    }
}

/// References inside messages exchanged with node `peer`.
pub(crate) struct PeerWire {
    pub(crate) node: Weak<NodeInner>,
    pub(crate) peer: u128,
}

impl PeerWire {
    fn node(&self) -> Result<Arc<NodeInner>, String> {
        self.node
            .upgrade()
            .ok_or_else(|| "the loka-remote node has closed".to_owned())
    }
}

impl Wire for PeerWire {
    fn export_actor(&self, inbox: Arc<dyn Inbox>) -> Result<WireAddress, String> {
        Ok(self.node()?.export(inbox))
    }

    fn import_actor(&self, address: WireAddress, _fingerprint: u64) -> Result<Imported, String> {
        Ok(self.node()?.import(address))
    }

    fn export_reply(&self, complete: ReplyCompletion) -> Result<WireAddress, String> {
        let node = self.node()?;
        let id = node.export_reply(self.peer, complete);
        Ok(WireAddress { node: node.me, id })
    }

    fn send_reply(&self, address: WireAddress, reply: Option<Vec<u8>>) {
        let Some(node) = self.node.upgrade() else {
            return;
        };
        if address.node == node.me {
            node.complete_reply(address.id, reply.as_deref());
        } else {
            node.peer(address.node).push_always(Item::Reply {
                id: address.id,
                payload: reply.map(Into::into),
            });
        }
    }
}
