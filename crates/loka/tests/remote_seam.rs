//! loka's remote seam (`loka::remote`, feature `remote`) over a transport written here: two
//! "nodes" in one process, each a `System`, whose links hand bytes straight to the other's
//! inboxes. What it shows without a network: messages, asks, `ActorRef`s and `ReplyTo`s cross as
//! bytes and come out working; watchers and linked actors hear a remote stop and a node's loss;
//! a reference of the wrong type is refused; outside a node's scope a reference will not encode;
//! a transport's watch that panics is reported, and the worker that ran it goes on.

use loka::remote::{
    decode, encode, fingerprint, inbox, remote_ref, Host, Imported, Inbox, Link, LinkError,
    RemoteStatus, ReplyCompletion, Wire, WireAddress,
};
use loka::{Actor, ActorRef, AskError, Context, ReplyTo, StopReason, System};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::task::Waker;
use std::time::Duration;

/// One side: its system's host, what it exported, the reply handles it keeps, the faces of
/// the other side's actors.
struct FakeNode {
    id: u128,
    host: Host,
    exports: Mutex<HashMap<u64, Arc<dyn Inbox>>>,
    replies: Mutex<HashMap<u64, ReplyCompletion>>,
    statuses: Mutex<HashMap<u64, Weak<RemoteStatus>>>,
    next_reply: Mutex<u64>,
    other: Mutex<Weak<FakeNode>>,
    this: Weak<FakeNode>,
}

impl FakeNode {
    fn pair(a: &System, b: &System) -> (Arc<FakeNode>, Arc<FakeNode>) {
        let make = |id, system| {
            Arc::new_cyclic(|this| FakeNode {
                id,
                host: Host::of(system),
                exports: Mutex::default(),
                replies: Mutex::default(),
                statuses: Mutex::default(),
                next_reply: Mutex::new(1),
                other: Mutex::new(Weak::new()),
                this: this.clone(),
            })
        };
        let (na, nb) = (make(0xa, a), make(0xb, b));
        *na.other.lock().unwrap() = Arc::downgrade(&nb);
        *nb.other.lock().unwrap() = Arc::downgrade(&na);
        (na, nb)
    }

    fn other(&self) -> Arc<FakeNode> {
        self.other.lock().unwrap().upgrade().unwrap()
    }

    fn wire(&self) -> Arc<dyn Wire> {
        Arc::new(FakeWire(self.this.upgrade().unwrap()))
    }

    fn export(&self, inbox: Arc<dyn Inbox>) -> WireAddress {
        let id = inbox.id().as_u64();
        self.exports.lock().unwrap().insert(id, inbox);
        WireAddress { node: self.id, id }
    }

    /// This node's face of the other node's actor `id`.
    fn status(&self, id: u64) -> Arc<RemoteStatus> {
        let mut statuses = self.statuses.lock().unwrap();
        if let Some(status) = statuses.get(&id).and_then(Weak::upgrade) {
            return status;
        }
        // Weak: the other node may be gone (a watch firing as its system shuts down).
        let link = Arc::new(FakeLink {
            from: self.this.clone(),
            to: self.other.lock().unwrap().clone(),
            id,
        });
        let status = RemoteStatus::new(&self.host, link);
        statuses.insert(id, Arc::downgrade(&status));
        status
    }

    /// The other node is lost.
    fn lose_other(&self) {
        let statuses: Vec<_> = self.statuses.lock().unwrap().drain().collect();
        for (_, status) in statuses {
            if let Some(status) = status.upgrade() {
                status.terminated(StopReason::NodeDown);
            }
        }
        let replies: Vec<_> = self.replies.lock().unwrap().drain().collect();
        for (_, complete) in replies {
            complete(None);
        }
    }
}

struct FakeWire(Arc<FakeNode>);

impl Wire for FakeWire {
    fn export_actor(&self, inbox: Arc<dyn Inbox>) -> Result<WireAddress, String> {
        Ok(self.0.export(inbox))
    }

    fn import_actor(&self, address: WireAddress, _fingerprint: u64) -> Result<Imported, String> {
        if address.node == self.0.id {
            let exports = self.0.exports.lock().unwrap();
            let inbox = exports.get(&address.id).ok_or("not exported")?;
            return Ok(Imported::Local(Arc::clone(inbox)));
        }
        Ok(Imported::Remote(self.0.status(address.id)))
    }

    fn export_reply(&self, complete: ReplyCompletion) -> Result<WireAddress, String> {
        let mut next = self.0.next_reply.lock().unwrap();
        *next += 1;
        self.0.replies.lock().unwrap().insert(*next, complete);
        Ok(WireAddress {
            node: self.0.id,
            id: *next,
        })
    }

    fn send_reply(&self, address: WireAddress, reply: Option<Vec<u8>>) {
        let node = if address.node == self.0.id {
            Arc::clone(&self.0)
        } else {
            self.0.other()
        };
        let complete = node.replies.lock().unwrap().remove(&address.id);
        if let Some(complete) = complete {
            complete(reply.as_deref());
        }
    }
}

/// Bytes from `from` straight into `to`'s inbox of actor `id`.
struct FakeLink {
    from: Weak<FakeNode>,
    to: Weak<FakeNode>,
    id: u64,
}

impl FakeLink {
    fn target(&self) -> Option<(Arc<FakeNode>, Arc<dyn Inbox>)> {
        let to = self.to.upgrade()?;
        let inbox = to.exports.lock().unwrap().get(&self.id).cloned()?;
        Some((to, inbox))
    }
}

impl Link for FakeLink {
    fn address(&self) -> WireAddress {
        WireAddress {
            node: self.to.upgrade().map_or(0, |to| to.id),
            id: self.id,
        }
    }

    fn wire(&self) -> Arc<dyn Wire> {
        self.from.upgrade().unwrap().wire()
    }

    fn send(&self, payload: Vec<u8>) -> Result<(), LinkError> {
        let (to, inbox) = self.target().ok_or(LinkError::Down)?;
        // Decoded in the receiver's scope: references inside point back to the sender.
        inbox
            .deliver(&to.wire(), &payload)
            .map_err(|_| LinkError::Down)
    }

    fn stop(&self) -> bool {
        self.target().is_some_and(|(_, inbox)| inbox.stop())
    }

    fn watch(&self) {
        let Some((_, inbox)) = self.target() else {
            return;
        };
        let (from, id) = (self.from.clone(), self.id);
        inbox.watch(Box::new(move |reason| {
            if let Some(from) = from.upgrade() {
                from.status(id).terminated(reason);
            }
        }));
    }

    fn capacity(&self) -> usize {
        1024
    }

    fn queued(&self) -> usize {
        0
    }

    fn wait_for_room(&self, _waker: &Waker) -> bool {
        false
    }
}

#[derive(Debug, Serialize, Deserialize)]
enum Kv {
    Put(String, u64),
    Get(String, ReplyTo<Option<u64>>),
    /// Sends `n` to `to`.
    Tell(ActorRef<u64>, u64),
    /// Drops the reply handle unanswered.
    Ignore(ReplyTo<u64>),
    Quit,
}

#[derive(Default)]
struct Store(HashMap<String, u64>);

impl Actor for Store {
    type Msg = Kv;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: Kv) {
        match msg {
            Kv::Put(key, value) => {
                self.0.insert(key, value);
            }
            Kv::Get(key, reply) => reply.send(self.0.get(&key).copied()),
            Kv::Tell(to, n) => to.send(n).unwrap(),
            Kv::Ignore(_) => {}
            Kv::Quit => ctx.stop(),
        }
    }
}

struct Collect(Arc<Mutex<Vec<u64>>>);

impl Actor for Collect {
    type Msg = u64;
    fn handle(&mut self, _: &mut Context<Self>, n: u64) {
        self.0.lock().unwrap().push(n);
    }
}

/// Two systems and their nodes; node B exports a store, A holds a remote reference to it.
fn setup() -> (System, System, Arc<FakeNode>, Arc<FakeNode>, ActorRef<Kv>) {
    let (a, b) = (
        System::builder().workers(1).build().unwrap(),
        System::builder().workers(1).build().unwrap(),
    );
    let (na, nb) = FakeNode::pair(&a, &b);
    let store = b.spawn(Store::default());
    let address = nb.export(inbox(&store));
    let remote = remote_ref::<Kv>(na.status(address.id));
    (a, b, na, nb, remote)
}

#[test]
fn sends_and_asks_cross_as_bytes() {
    let (_a, b, _na, _nb, store) = setup();
    store.send(Kv::Put("x".to_owned(), 7)).unwrap();
    let got = store
        .ask(|reply| Kv::Get("x".to_owned(), reply))
        .unwrap()
        .wait_timeout(Duration::from_secs(5))
        .unwrap();
    assert_eq!(got, Some(7));
    // A reply handle dropped unanswered on the other side: the asker hears NoReply.
    let ignored = store.ask(Kv::Ignore).unwrap();
    assert_eq!(
        ignored.wait_timeout(Duration::from_secs(5)),
        Err(AskError::NoReply)
    );
    b.run_until_idle();
}

#[test]
fn an_actor_ref_inside_a_message_reaches_its_actor() {
    let (a, b, _na, _nb, store) = setup();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let collector = a.spawn(Collect(Arc::clone(&seen)));
    for n in 0..10 {
        store.send(Kv::Tell(collector.clone(), n)).unwrap();
    }
    // B's store sends each number to A's collector from its handler: once B is idle, all ten
    // are in the collector's mailbox.
    b.run_until_idle();
    a.run_until_idle();
    assert_eq!(*seen.lock().unwrap(), (0..10).collect::<Vec<_>>());
}

#[test]
fn watchers_hear_a_remote_stop_and_a_node_loss() {
    let (a, b, na, nb, store) = setup();
    let stopped = store.watch();
    store.send(Kv::Quit).unwrap();
    assert_eq!(
        stopped.wait_timeout(Duration::from_secs(5)).unwrap(),
        StopReason::Normal
    );
    assert!(store.is_stopped());
    assert!(store.send(Kv::Quit).is_err());

    // A second store, watched and linked by a local actor, then its node is lost.
    let other = b.spawn(Store::default());
    let id = nb.export(inbox(&other)).id;
    let remote = remote_ref::<Kv>(na.status(id));
    let lost = remote.watch();
    struct Linker(ActorRef<Kv>);
    impl Actor for Linker {
        type Msg = ();
        fn started(&mut self, ctx: &mut Context<Self>) {
            ctx.link(&self.0);
        }
        fn handle(&mut self, _: &mut Context<Self>, _: ()) {}
    }
    let linker = a.spawn(Linker(remote.clone()));
    let linker_down = linker.watch();
    a.run_until_idle();
    na.lose_other();
    assert_eq!(
        lost.wait_timeout(Duration::from_secs(5)).unwrap(),
        StopReason::NodeDown
    );
    match linker_down.wait_timeout(Duration::from_secs(5)).unwrap() {
        StopReason::Linked { peer, message } => {
            assert_eq!(peer, remote.id());
            assert!(message.contains("node"), "{message}");
        }
        other => panic!("the linked actor stopped with {other:?}"),
    }
}

#[test]
fn a_reference_of_the_wrong_type_is_refused() {
    let (_a, b, na, nb, _store) = setup();
    let store = b.spawn(Store::default());
    // Encoded on B as an ActorRef<Kv>, decoded on A as an ActorRef<u64>.
    let bytes = encode(&nb.wire(), &store).unwrap();
    let error = decode::<ActorRef<u64>>(&na.wire(), &bytes).unwrap_err();
    assert!(error.to_string().contains("fingerprint"), "{error}");
    assert_ne!(fingerprint::<Kv>(), fingerprint::<u64>());
    let back: ActorRef<Kv> = decode(&na.wire(), &bytes).unwrap();
    assert!(!back.is_stopped());
}

#[test]
fn outside_a_node_a_reference_does_not_encode() {
    let system = System::builder().workers(1).build().unwrap();
    let store = system.spawn(Store::default());
    let error = serde_json::to_string(&store).unwrap_err().to_string();
    assert!(error.contains("loka-remote"), "{error}");
}

#[test]
fn a_panicking_watch_of_the_transport_leaves_the_worker_running() {
    let system = System::builder().workers(1).build().unwrap();
    let store = system.spawn(Store::default());
    inbox(&store).watch(Box::new(|_| panic!("a bug in the transport")));
    store.send(Kv::Quit).unwrap();
    system.run_until_idle();
    assert!(store.is_stopped());
    // The worker that ended the store survived the callback's panic: it runs the next actor.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let collector = system.spawn(Collect(Arc::clone(&seen)));
    collector.send(1).unwrap();
    system.run_until_idle();
    assert_eq!(*seen.lock().unwrap(), [1]);
}
