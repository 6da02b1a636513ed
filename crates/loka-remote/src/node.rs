//! A node ([`Node`]): one Zenoh session serving one loka system. It keeps what crosses it (the
//! local actors reachable from elsewhere, the faces of remote actors, the reply handles out),
//! receives frames on its one subscriber and dispatches them by actor id, and hears other
//! nodes come and go through their liveliness tokens.

use crate::config::NodeConfig;
use crate::frame::{Dest, Frame, Item};
use crate::links::{ActorLink, PeerWire};
use crate::peer::Peer;
use crate::stats::{Counters, NodeStats};
use crate::{NodeId, RemoteError};
use loka::remote::{Host, Imported, Inbox, RemoteStatus, ReplyCompletion, Wire, WireAddress};
use loka::StopReason;
use parking_lot::Mutex;
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Weak};
use zenoh::sample::SampleKind;
use zenoh::Wait;

/// The key prefix every node listens under: `loka/n/<node id>`.
pub(crate) const INBOX_PREFIX: &str = "loka/n";
/// The liveliness token of a live node: `loka/alive/<node id>`.
const ALIVE_PREFIX: &str = "loka/alive";

/// A loka system's presence on the network: a Zenoh session in peer mode. Dropping it (or
/// [`close`](Self::close)) leaves: other nodes see it lost, its names vanish.
pub struct Node {
    pub(crate) inner: Arc<NodeInner>,
    _inbox: zenoh::pubsub::Subscriber<()>,
    _nodes: zenoh::pubsub::Subscriber<()>,
    _alive: zenoh::liveliness::LivelinessToken,
}

/// Everything the node's callbacks and links share.
pub(crate) struct NodeInner {
    pub(crate) me: u128,
    pub(crate) host: Host,
    pub(crate) session: zenoh::Session,
    pub(crate) config: NodeConfig,
    pub(crate) counters: Arc<Counters>,
    pub(crate) state: Mutex<State>,
    next_reply: AtomicU64,
    pub(crate) this: Weak<NodeInner>,
}

/// A local actor reachable from other nodes.
pub(crate) struct Export {
    pub(crate) inbox: Arc<dyn Inbox>,
    /// Nodes that asked to hear of its stop.
    watchers: Vec<u128>,
    /// Its names' liveliness tokens (dropped with the export: the names vanish).
    pub(crate) names: Vec<(String, zenoh::liveliness::LivelinessToken)>,
}

/// The node's tables.
#[derive(Default)]
pub(crate) struct State {
    peers: FxHashMap<u128, Arc<Peer>>,
    wires: FxHashMap<u128, Arc<dyn Wire>>,
    /// Nodes seen lost: never connected again (a restarted node has another id).
    down: FxHashSet<u128>,
    pub(crate) exports: FxHashMap<u64, Export>,
    /// Registered names of local actors, and their ids.
    pub(crate) names: FxHashMap<String, u64>,
    statuses: FxHashMap<WireAddress, Weak<RemoteStatus>>,
    /// How many statuses there were at the last pruning of dead ones.
    statuses_pruned_at: usize,
    /// Reply handles out: the node their request went to, and what to do with the answer.
    replies: FxHashMap<u64, (u128, ReplyCompletion)>,
    /// The next item number expected from each sender.
    streams: FxHashMap<u128, u64>,
    /// A large message or reply arriving in pieces from each sender.
    partials: FxHashMap<u128, Partial>,
    closed: bool,
}

/// The pieces of a large payload received so far from one node.
#[derive(Default)]
pub(crate) struct Partial {
    bytes: Vec<u8>,
    /// Items went missing since its first piece: it is dropped at its last.
    broken: bool,
}

impl Node {
    /// Opens a node for `system`: checks `config` ([`NodeConfig::validate`]), opens the Zenoh
    /// session, starts listening. Nothing is opened when the configuration is refused.
    pub fn open(system: &loka::System, config: NodeConfig) -> Result<Node, RemoteError> {
        config.validate()?;
        let zenoh_config = config.zenoh()?;
        let session = zenoh::open(zenoh_config)
            .wait()
            .map_err(|error| RemoteError::Open(error.to_string()))?;
        let me = u128::from_le_bytes(session.zid().to_le_bytes());
        let inner = Arc::new_cyclic(|this| NodeInner {
            me,
            host: Host::of(system),
            session: session.clone(),
            config,
            counters: Arc::new(Counters::default()),
            state: Mutex::new(State::default()),
            next_reply: AtomicU64::new(1),
            this: this.clone(),
        });
        let transport = |error: zenoh::Error| RemoteError::Transport(error.to_string());
        let receiver = Arc::downgrade(&inner);
        let inbox = session
            .declare_subscriber(format!("{INBOX_PREFIX}/{}", NodeId(me)))
            .callback(move |sample| {
                if let Some(node) = receiver.upgrade() {
                    node.received(&sample.payload().to_bytes());
                }
            })
            .wait()
            .map_err(transport)?;
        let watcher = Arc::downgrade(&inner);
        let nodes = session
            .liveliness()
            .declare_subscriber(format!("{ALIVE_PREFIX}/*"))
            .history(true)
            .callback(move |sample| {
                if sample.kind() != SampleKind::Delete {
                    return;
                }
                let key = sample.key_expr().as_str();
                let id = key
                    .rsplit('/')
                    .next()
                    .and_then(|hex| u128::from_str_radix(hex, 16).ok());
                if let (Some(node), Some(id)) = (watcher.upgrade(), id) {
                    node.node_lost(id);
                }
            })
            .wait()
            .map_err(transport)?;
        let alive = session
            .liveliness()
            .declare_token(format!("{ALIVE_PREFIX}/{}", NodeId(me)))
            .wait()
            .map_err(transport)?;
        Ok(Node {
            inner,
            _inbox: inbox,
            _nodes: nodes,
            _alive: alive,
        })
    }

    /// This node's id (this incarnation's).
    pub fn id(&self) -> NodeId {
        NodeId(self.inner.me)
    }

    /// What the node has done so far.
    pub fn stats(&self) -> NodeStats {
        self.inner.counters.read()
    }

    /// Other nodes this one is linked to now. Under TLS, a node whose certificate the
    /// authority signed but whose name the access list does not allow is linked, and gets
    /// nothing through the link ([`crate::TlsConfig`]).
    pub fn peers(&self) -> Vec<NodeId> {
        self.inner
            .session
            .info()
            .peers_zid()
            .wait()
            .map(|zid| NodeId(u128::from_le_bytes(zid.to_le_bytes())))
            .collect()
    }

    /// Leaves: queued messages are dropped, the faces of remote actors stop with
    /// [`StopReason::NodeDown`] and asks waiting on other nodes fail, other nodes see this one
    /// lost. Also what dropping the node does.
    pub fn close(self) {}
}

impl Drop for Node {
    fn drop(&mut self) {
        self.inner.close();
    }
}

impl NodeInner {
    /// The queue toward `node` (started at the first use).
    pub(crate) fn peer(&self, node: u128) -> Arc<Peer> {
        {
            let state = self.state.lock();
            if let Some(peer) = state.peers.get(&node) {
                return Arc::clone(peer);
            }
            if state.down.contains(&node) || state.closed {
                return Peer::down(node, Arc::clone(&self.counters));
            }
        }
        // Declared outside the lock: Zenoh may take a moment, and the callbacks need the lock.
        let publisher = self
            .session
            .declare_publisher(format!("{INBOX_PREFIX}/{}", NodeId(node)))
            .congestion_control(zenoh::qos::CongestionControl::Block)
            // The drain thread batches already: Zenoh's own batching would only add its wait.
            .express(true)
            .wait();
        let mut state = self.state.lock();
        if let Some(peer) = state.peers.get(&node) {
            return Arc::clone(peer);
        }
        match publisher {
            Ok(publisher) if !state.down.contains(&node) && !state.closed => {
                let peer = Peer::start(
                    node,
                    self.me,
                    (self.config.queue_capacity, self.config.queue_bytes),
                    Arc::clone(&self.counters),
                    publisher,
                );
                state.peers.insert(node, Arc::clone(&peer));
                peer
            }
            Ok(_) => Peer::down(node, Arc::clone(&self.counters)),
            Err(error) => {
                tracing::error!(node = %NodeId(node), %error, "no publisher toward a node");
                Peer::down(node, Arc::clone(&self.counters))
            }
        }
    }

    /// The wire of `node`: how references inside messages to and from it are written.
    pub(crate) fn wire(&self, node: u128) -> Arc<dyn Wire> {
        self.wire_in(&mut self.state.lock(), node)
    }

    /// [`wire`](Self::wire) with the tables locked.
    fn wire_in(&self, state: &mut State, node: u128) -> Arc<dyn Wire> {
        Arc::clone(state.wires.entry(node).or_insert_with(|| {
            Arc::new(PeerWire {
                node: self.this.clone(),
                peer: node,
            })
        }))
    }

    /// Makes a local actor reachable from other nodes (once); its address.
    pub(crate) fn export(&self, inbox: Arc<dyn Inbox>) -> WireAddress {
        let id = inbox.id().as_u64();
        let fresh = {
            let mut state = self.state.lock();
            match state.exports.get(&id) {
                Some(_) => false,
                None => {
                    state.exports.insert(
                        id,
                        Export {
                            inbox: Arc::clone(&inbox),
                            watchers: Vec::new(),
                            names: Vec::new(),
                        },
                    );
                    true
                }
            }
        };
        if fresh {
            // Outside the lock: fires at once if the actor has stopped.
            let node = self.this.clone();
            inbox.watch(Box::new(move |reason| {
                if let Some(node) = node.upgrade() {
                    node.unexport(id, reason);
                }
            }));
        }
        WireAddress { node: self.me, id }
    }

    /// An exported actor stopped: its names vanish, its watchers hear why.
    fn unexport(&self, id: u64, reason: StopReason) {
        let export = {
            let mut state = self.state.lock();
            let Some(export) = state.exports.remove(&id) else {
                return;
            };
            for (name, _) in &export.names {
                state.names.remove(name);
            }
            export
        };
        for watcher in export.watchers {
            self.peer(watcher).push_control(Item::Terminated {
                actor: id,
                reason: reason.clone(),
            });
        }
    }

    /// The actor at `address`, as a reference of this node sees it.
    pub(crate) fn import(&self, address: WireAddress) -> Imported {
        if address.node == self.me {
            if let Some(export) = self.state.lock().exports.get(&address.id) {
                return Imported::Local(Arc::clone(&export.inbox));
            }
            // A local actor that stopped since the reference left: a face that has stopped.
            let status = RemoteStatus::new(&self.host, self.link(address));
            status.terminated(StopReason::Normal);
            return Imported::Remote(status);
        }
        if let Some(status) = self
            .state
            .lock()
            .statuses
            .get(&address)
            .and_then(Weak::upgrade)
        {
            return Imported::Remote(status);
        }
        let status = RemoteStatus::new(&self.host, self.link(address));
        let down = {
            let mut state = self.state.lock();
            if let Some(existing) = state.statuses.get(&address).and_then(Weak::upgrade) {
                return Imported::Remote(existing);
            }
            if state.statuses.len() >= 2 * state.statuses_pruned_at.max(64) {
                state.statuses.retain(|_, status| status.strong_count() > 0);
                state.statuses_pruned_at = state.statuses.len();
            }
            state.statuses.insert(address, Arc::downgrade(&status));
            state.down.contains(&address.node) || state.closed
        };
        if down {
            status.terminated(StopReason::NodeDown);
        }
        Imported::Remote(status)
    }

    fn link(&self, address: WireAddress) -> Arc<ActorLink> {
        Arc::new(ActorLink {
            peer: self.peer(address.node),
            wire: self.wire(address.node),
            address,
        })
    }

    /// Keeps a reply handle whose request goes to `dest`; its number.
    pub(crate) fn export_reply(&self, dest: u128, complete: ReplyCompletion) -> u64 {
        let id = self.next_reply.fetch_add(1, Relaxed);
        let mut state = self.state.lock();
        if state.down.contains(&dest) || state.closed {
            drop(state);
            complete(None);
        } else {
            state.replies.insert(id, (dest, complete));
        }
        id
    }

    /// An answer for reply handle `id` of this node.
    pub(crate) fn complete_reply(&self, id: u64, payload: Option<&[u8]>) {
        let complete = self.state.lock().replies.remove(&id);
        match complete {
            Some((_, complete)) => complete(payload),
            None => {
                self.counters.undeliverable.fetch_add(1, Relaxed);
            }
        }
    }

    /// A publication arrived on this node's key.
    fn received(&self, bytes: &[u8]) {
        let frame: Frame<'_> = match postcard::from_bytes(bytes) {
            Ok(frame) => frame,
            Err(error) => {
                self.counters.bad_frames.fetch_add(1, Relaxed);
                tracing::warn!(%error, "a publication on this node's key is not a frame");
                return;
            }
        };
        let count = frame.items.len() as u64;
        self.counters.frames_in.fetch_add(1, Relaxed);
        self.counters.items_in.fetch_add(count, Relaxed);
        let from = frame.from;
        let wire = {
            let mut state = self.state.lock();
            if state.down.contains(&from) || state.closed {
                return;
            }
            let next = state.streams.entry(from).or_insert(0);
            let missing = frame.first_seq.saturating_sub(*next);
            *next = frame.first_seq + count;
            if missing > 0 {
                self.counters.gaps.fetch_add(missing, Relaxed);
                tracing::warn!(node = %NodeId(from), missing, "items from a node went missing");
                if let Some(partial) = state.partials.get_mut(&from) {
                    partial.broken = true;
                }
            }
            self.wire_in(&mut state, from)
        };
        // A frame's messages mostly go to a few actors: the last one's inbox is kept.
        let mut last: Option<(u64, Arc<dyn Inbox>)> = None;
        for item in frame.items {
            self.dispatch(from, &wire, item, &mut last);
        }
    }

    /// One item from node `from`; `last` is the inbox of the frame's previous message.
    fn dispatch(
        &self,
        from: u128,
        wire: &Arc<dyn Wire>,
        item: Item<'_>,
        last: &mut Option<(u64, Arc<dyn Inbox>)>,
    ) {
        match item {
            Item::Msg { to, payload } => match self.cached_inbox(to, last) {
                Some(inbox) => {
                    if let Err(error) = inbox.deliver(wire, &payload) {
                        self.counters.undeliverable.fetch_add(1, Relaxed);
                        tracing::debug!(%error, "a remote message was not delivered");
                    }
                }
                None => {
                    self.counters.undeliverable.fetch_add(1, Relaxed);
                }
            },
            Item::Stop { to } => {
                if let Some(inbox) = self.inbox(to) {
                    inbox.stop();
                }
            }
            Item::Watch { to } => {
                let known = {
                    let mut state = self.state.lock();
                    match state.exports.get_mut(&to) {
                        Some(export) => {
                            if !export.watchers.contains(&from) {
                                export.watchers.push(from);
                            }
                            true
                        }
                        None => false,
                    }
                };
                if !known {
                    // Gone before the watch came (Erlang's `noproc`): it stopped, reason unknown.
                    self.peer(from).push_control(Item::Terminated {
                        actor: to,
                        reason: StopReason::Normal,
                    });
                }
            }
            Item::Terminated { actor, reason } => {
                let address = WireAddress {
                    node: from,
                    id: actor,
                };
                let status = self
                    .state
                    .lock()
                    .statuses
                    .get(&address)
                    .and_then(Weak::upgrade);
                if let Some(status) = status {
                    status.terminated(reason);
                }
            }
            Item::Reply { id, payload } => self.complete_reply(id, payload.as_deref()),
            Item::Part { first, bytes } => {
                let mut state = self.state.lock();
                let partial = state.partials.entry(from).or_default();
                if first {
                    *partial = Partial::default();
                }
                partial.bytes.extend_from_slice(&bytes);
            }
            Item::Last { to, bytes } => {
                let partial = self.state.lock().partials.remove(&from);
                let Some(Partial {
                    bytes: mut payload,
                    broken: false,
                }) = partial
                else {
                    self.counters.undeliverable.fetch_add(1, Relaxed);
                    return;
                };
                payload.extend_from_slice(&bytes);
                let item = match to {
                    Dest::Actor(to) => Item::Msg {
                        to,
                        payload: payload.into(),
                    },
                    Dest::Reply(id) => Item::Reply {
                        id,
                        payload: Some(payload.into()),
                    },
                };
                self.dispatch(from, wire, item, last);
            }
        }
    }

    /// The inbox of `id`, from `last` if it is that actor's.
    fn cached_inbox(
        &self,
        id: u64,
        last: &mut Option<(u64, Arc<dyn Inbox>)>,
    ) -> Option<Arc<dyn Inbox>> {
        if let Some((cached, inbox)) = last {
            if *cached == id {
                return Some(Arc::clone(inbox));
            }
        }
        let inbox = self.inbox(id)?;
        *last = Some((id, Arc::clone(&inbox)));
        Some(inbox)
    }

    fn inbox(&self, id: u64) -> Option<Arc<dyn Inbox>> {
        self.state
            .lock()
            .exports
            .get(&id)
            .map(|export| Arc::clone(&export.inbox))
    }

    /// Node `node` is lost (its liveliness token vanished): what waits on it fails.
    fn node_lost(&self, node: u128) {
        if node == self.me {
            return;
        }
        let (peer, statuses, replies) = {
            let mut state = self.state.lock();
            if !state.down.insert(node) {
                return;
            }
            let peer = state.peers.remove(&node);
            let statuses: Vec<_> = state
                .statuses
                .iter()
                .filter(|(address, _)| address.node == node)
                .filter_map(|(_, status)| status.upgrade())
                .collect();
            state.statuses.retain(|address, _| address.node != node);
            let (replies, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut state.replies)
                .into_iter()
                .partition(|(_, (dest, _))| *dest == node);
            state.replies = kept.into_iter().collect();
            for export in state.exports.values_mut() {
                export.watchers.retain(|watcher| *watcher != node);
            }
            state.streams.remove(&node);
            state.partials.remove(&node);
            (peer, statuses, replies)
        };
        self.counters.nodes_down.fetch_add(1, Relaxed);
        tracing::info!(node = %NodeId(node), "a node was lost");
        if let Some(peer) = peer {
            let dropped = peer.close();
            self.counters.lost.fetch_add(dropped as u64, Relaxed);
        }
        for status in statuses {
            status.terminated(StopReason::NodeDown);
        }
        for (_, (_, complete)) in replies {
            complete(None);
        }
    }

    /// This node leaves.
    fn close(&self) {
        let (peers, statuses, replies, exports) = {
            let mut state = self.state.lock();
            if std::mem::replace(&mut state.closed, true) {
                return;
            }
            let statuses: Vec<_> = state
                .statuses
                .drain()
                .filter_map(|(_, status)| status.upgrade())
                .collect();
            (
                std::mem::take(&mut state.peers),
                statuses,
                std::mem::take(&mut state.replies),
                std::mem::take(&mut state.exports),
            )
        };
        for peer in peers.values() {
            peer.close();
        }
        for status in statuses {
            status.terminated(StopReason::NodeDown);
        }
        for (_, (_, complete)) in replies {
            complete(None);
        }
        // The names' tokens go with the exports.
        drop(exports);
        if let Err(error) = self.session.close().wait() {
            tracing::warn!(%error, "closing the Zenoh session");
        }
    }
}
