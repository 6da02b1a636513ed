//! The local face of a remote actor: [`RemoteCell`] is what an [`crate::ActorRef`] to it holds
//! (sends encode and queue on the [`Link`]), [`RemoteStatus`] what death watch and links wait on
//! (one per remote actor, shared by all its faces).

use super::{encode, Host, Link, LinkError, RemoteMessage, WireAddress};
use crate::runtime::cell::{Deliver, Notice, Watchable};
use crate::runtime::errors::TrySendError;
use crate::runtime::{ActorId, Runtime};
use crate::sync::AtomicBool;
use crate::StopReason;
use parking_lot::Mutex;
use std::marker::PhantomData;
use std::sync::atomic::Ordering::{Acquire, Release};
use std::sync::{Arc, Weak};
use std::task::Waker;

/// What is known of a remote actor's life, shared by every [`crate::ActorRef`] to it in this
/// process: its local id, its link, whether (and why) it stopped, and who waits for that.
///
/// The transport calls [`terminated`](Self::terminated) when the actor's node reports its
/// stop, or when the node is lost ([`StopReason::NodeDown`]); watchers and linked actors are
/// told then, and sends fail from then on.
pub struct RemoteStatus {
    id: ActorId,
    link: Arc<dyn Link>,
    runtime: Arc<Runtime>,
    /// `state.reason` is set: read on every send without taking the lock.
    stopped: AtomicBool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Why the actor stopped, once known.
    reason: Option<StopReason>,
    watchers: Vec<Box<dyn Notice>>,
    links: Vec<(ActorId, Weak<dyn Watchable>)>,
    /// Whether the actor's node was asked to report the stop ([`Link::watch`]).
    watch_asked: bool,
}

impl RemoteStatus {
    /// The status of the remote actor behind `link`, with a fresh local id.
    pub fn new(host: &Host, link: Arc<dyn Link>) -> Arc<RemoteStatus> {
        Arc::new(RemoteStatus {
            id: host.next_id(),
            link,
            runtime: Arc::clone(&host.runtime),
            stopped: AtomicBool::new(false),
            state: Mutex::new(State::default()),
        })
    }

    /// The local id of the remote actor ([`crate::ActorRef::id`] of every face of it).
    pub fn id(&self) -> ActorId {
        self.id
    }

    /// Where the actor lives.
    pub fn address(&self) -> WireAddress {
        self.link.address()
    }

    /// Records that the actor stopped with `reason`: its watchers and linked actors are told,
    /// sends fail from now on. Only the first call counts; `false` for the later ones.
    pub fn terminated(&self, reason: StopReason) -> bool {
        let (watchers, links) = {
            let mut state = self.state.lock();
            if state.reason.is_some() {
                return false;
            }
            state.reason = Some(reason.clone());
            // Release, under the lock: a sender that sees it stops sending; one that does not
            // yet queues a message its node drops, as a message sent just before the stop.
            self.stopped.store(true, Release);
            (
                std::mem::take(&mut state.watchers),
                std::mem::take(&mut state.links),
            )
        };
        // Told outside the lock: a notice queues a message, which may run code that watches.
        for notice in watchers {
            notice.fire(self.id, reason.clone());
        }
        if reason.is_failure() {
            for (_, peer) in links {
                if let Some(peer) = peer.upgrade() {
                    peer.exit_signal(self.id, reason.clone());
                }
            }
        }
        true
    }

    /// Whether the actor is known to have stopped.
    pub fn is_terminated(&self) -> bool {
        self.stopped.load(Acquire)
    }

    /// Asks the actor's node for the stop report, the first time someone waits for it.
    fn ask_watch(&self, state: &mut State) -> bool {
        !std::mem::replace(&mut state.watch_asked, true)
    }
}

impl std::fmt::Debug for RemoteStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RemoteStatus({} at {:?})", self.id, self.link.address())
    }
}

impl Watchable for RemoteStatus {
    fn watched_id(&self) -> ActorId {
        self.id
    }

    fn add_watcher(self: Arc<Self>, notice: Box<dyn Notice>) {
        let mut state = self.state.lock();
        if let Some(reason) = state.reason.clone() {
            drop(state);
            notice.fire(self.id, reason);
            return;
        }
        state.watchers.retain(|watcher| !watcher.is_gone());
        state.watchers.push(notice);
        let ask = self.ask_watch(&mut state);
        drop(state);
        if ask {
            self.link.watch();
        }
    }

    fn remove_watcher(&self, key: (ActorId, u64)) {
        self.state
            .lock()
            .watchers
            .retain(|watcher| watcher.key() != Some(key));
    }

    fn add_link(self: Arc<Self>, peer: ActorId, peer_ref: Weak<dyn Watchable>) {
        let mut state = self.state.lock();
        if let Some(reason) = state.reason.clone() {
            drop(state);
            if let Some(peer) = peer_ref.upgrade() {
                if reason.is_failure() {
                    peer.exit_signal(self.id, reason);
                }
            }
            return;
        }
        state.links.push((peer, peer_ref));
        let ask = self.ask_watch(&mut state);
        drop(state);
        if ask {
            self.link.watch();
        }
    }

    fn remove_link(&self, peer: ActorId) {
        self.state.lock().links.retain(|(id, _)| *id != peer);
    }

    /// A linked local actor failed: the remote actor is sent a stop signal (the link's other
    /// direction reaches it as a stop, not as its own failure: docs/remote.md).
    fn exit_signal(&self, _from: ActorId, reason: StopReason) {
        if reason.is_failure() {
            self.link.stop();
        }
    }

    fn exit_reason(&self) -> Option<StopReason> {
        self.state.lock().reason.clone()
    }
}

/// What an [`crate::ActorRef`] to a remote actor holds: the status, and the message type.
pub(super) struct RemoteCell<M> {
    status: Arc<RemoteStatus>,
    _message: PhantomData<fn(M)>,
}

impl<M: RemoteMessage> RemoteCell<M> {
    pub(super) fn new(status: Arc<RemoteStatus>) -> Self {
        RemoteCell {
            status,
            _message: PhantomData,
        }
    }

    /// Encodes `msg` and queues it; hands it back, with why, when it cannot go.
    fn push(&self, msg: M) -> Result<(), TrySendError<M>> {
        if self.status.is_terminated() {
            return Err(TrySendError::Stopped(msg));
        }
        let payload = match encode(&self.status.link.wire(), &msg) {
            Ok(payload) => payload,
            Err(error) => {
                // A type that serde cannot write with postcard (a map with non-string keys is
                // fine; `serialize_any`-style formats are not): the message cannot travel.
                tracing::error!(
                    actor = %self.status.id,
                    message_type = std::any::type_name::<M>(),
                    %error,
                    "a message to a remote actor could not be encoded; it was not sent"
                );
                return Err(TrySendError::Stopped(msg));
            }
        };
        match self.status.link.send(payload) {
            Ok(()) => Ok(()),
            Err(LinkError::Full) => Err(TrySendError::Full(msg)),
            Err(LinkError::Down) => Err(TrySendError::Stopped(msg)),
        }
    }
}

impl<M: RemoteMessage> Deliver<M> for RemoteCell<M> {
    fn deliver(&self, msg: M) -> Result<(), M> {
        self.push(msg).map_err(TrySendError::into_inner)
    }

    fn try_deliver(&self, msg: M, _counted: bool) -> Result<(), TrySendError<M>> {
        self.push(msg)
    }

    fn capacity(&self) -> Option<usize> {
        Some(self.status.link.capacity())
    }

    fn mailbox_len(&self) -> usize {
        self.status.link.queued()
    }

    fn register_waiter(&self, _key: &mut Option<u64>, waker: &Waker) -> bool {
        self.status.link.wait_for_room(waker)
    }

    fn unregister_waiter(&self, _key: u64, _pass_on: bool) {}

    fn stop_signal(&self) -> bool {
        !self.status.is_terminated() && self.status.link.stop()
    }

    fn id(&self) -> ActorId {
        self.status.id
    }

    fn is_stopped(&self) -> bool {
        self.status.is_terminated()
    }

    /// Hub marks steer local scheduling; a remote actor is scheduled by its own node.
    fn set_hub(&self, _hub: bool) -> bool {
        !self.status.is_terminated()
    }

    // A remote reference keeps the actor's export alive on its node, not a local count.
    fn acquire_handle(&self) {}

    fn release_handle(&self) {}

    fn system_runtime(&self) -> &Arc<Runtime> {
        &self.status.runtime
    }

    fn watchable(self: Arc<Self>) -> Arc<dyn Watchable> {
        Arc::clone(&self.status) as Arc<dyn Watchable>
    }

    /// A name in the local registry for a remote actor is not freed when it stops: the
    /// registry learns of local stops only (docs/remote.md).
    fn mark_registered(&self) {}

    fn wire_address(&self) -> Option<(u128, u64)> {
        let address = self.status.link.address();
        Some((address.node, address.id))
    }
}
