//! The way out to one other node ([`Peer`]): a bounded queue that senders fill without ever
//! waiting, and a thread that drains it into frames, control items first, data in batches.

use crate::frame::{Frame, Item};
use crate::stats::Counters;
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::task::Waker;
use zenoh::Wait;

/// The most payload bytes one frame gathers (a larger message goes alone): small messages
/// share a publication, a large one is not copied into a larger buffer behind others.
const BATCH_BYTES: usize = 64 * 1024;

/// The queues toward one node.
#[derive(Default)]
struct Queues {
    /// Watch and stop reports: ahead of data.
    control: VecDeque<Item>,
    /// Messages, stop signals and replies, in the order they were queued.
    data: VecDeque<Item>,
    /// The node is lost or this node closes: nothing more goes out.
    closed: bool,
    /// Senders waiting for room (`send_async`).
    room_waiters: Vec<Waker>,
}

/// What the sending side needs from the node: the counters, the stream numbering.
pub(crate) struct Peer {
    /// The node this queue goes to.
    pub(crate) node: u128,
    queues: Mutex<Queues>,
    ready: Condvar,
    capacity: usize,
    counters: Arc<Counters>,
}

/// Why a push was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    Full,
    Down,
}

impl Peer {
    /// The queue toward `node`, and its thread publishing on `publisher`.
    pub(crate) fn start(
        node: u128,
        me: u128,
        capacity: usize,
        counters: Arc<Counters>,
        publisher: zenoh::pubsub::Publisher<'static>,
    ) -> Arc<Peer> {
        let peer = Arc::new(Peer {
            node,
            queues: Mutex::new(Queues::default()),
            ready: Condvar::new(),
            capacity,
            counters,
        });
        let drainer = Arc::clone(&peer);
        std::thread::Builder::new()
            .name("loka-remote-out".to_owned())
            .spawn(move || drainer.drain(me, publisher))
            .expect("spawning a thread for a remote node");
        peer
    }

    /// A peer that is lost already: every push is refused.
    pub(crate) fn down(node: u128, counters: Arc<Counters>) -> Arc<Peer> {
        Arc::new(Peer {
            node,
            queues: Mutex::new(Queues {
                closed: true,
                ..Queues::default()
            }),
            ready: Condvar::new(),
            capacity: 0,
            counters,
        })
    }

    /// Queues a message: refused when the queue is full (it never waits) or the node lost.
    pub(crate) fn push_message(&self, item: Item) -> Result<(), Refused> {
        let mut queues = self.queues.lock();
        if queues.closed {
            return Err(Refused::Down);
        }
        if queues.data.len() >= self.capacity {
            drop(queues);
            self.counters.refused.fetch_add(1, Relaxed);
            return Err(Refused::Full);
        }
        queues.data.push_back(item);
        let first = queues.data.len() == 1 && queues.control.is_empty();
        drop(queues);
        if first {
            self.ready.notify_one();
        }
        Ok(())
    }

    /// Queues a data item that must not be refused for room (a reply, a stop signal: dropping
    /// them would leave an asker or a stop waiting); `false` if the node is lost.
    pub(crate) fn push_always(&self, item: Item) -> bool {
        self.push(item, false)
    }

    /// Queues a control item (ahead of data); `false` if the node is lost.
    pub(crate) fn push_control(&self, item: Item) -> bool {
        self.push(item, true)
    }

    fn push(&self, item: Item, control: bool) -> bool {
        let mut queues = self.queues.lock();
        if queues.closed {
            return false;
        }
        if control {
            queues.control.push_back(item);
        } else {
            queues.data.push_back(item);
        }
        drop(queues);
        self.ready.notify_one();
        true
    }

    /// Messages waiting.
    pub(crate) fn queued(&self) -> usize {
        self.queues.lock().data.len()
    }

    /// The capacity.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Registers a sender waiting for room; `false` if there is room now (or never will be).
    pub(crate) fn wait_for_room(&self, waker: &Waker) -> bool {
        let mut queues = self.queues.lock();
        if queues.closed || queues.data.len() < self.capacity {
            return false;
        }
        queues.room_waiters.push(waker.clone());
        true
    }

    /// Whether the node is lost (or this node closed).
    pub(crate) fn is_down(&self) -> bool {
        self.queues.lock().closed
    }

    /// The node is lost, or this node closes: what waits is dropped, the thread ends.
    /// Returns the replies that were waiting to go (their askers hear nothing more).
    pub(crate) fn close(&self) -> usize {
        let mut queues = self.queues.lock();
        queues.closed = true;
        let dropped = queues.data.len() + queues.control.len();
        queues.data.clear();
        queues.control.clear();
        let waiters = std::mem::take(&mut queues.room_waiters);
        drop(queues);
        self.ready.notify_all();
        waiters.into_iter().for_each(Waker::wake);
        dropped
    }

    /// The thread: waits for items, takes every control item and a batch of data, publishes
    /// them as one numbered frame.
    fn drain(&self, me: u128, publisher: zenoh::pubsub::Publisher<'static>) {
        let mut seq = 0u64;
        loop {
            let (items, waiters) = {
                let mut queues = self.queues.lock();
                while !queues.closed && queues.control.is_empty() && queues.data.is_empty() {
                    self.ready.wait(&mut queues);
                }
                if queues.closed {
                    break;
                }
                let mut items: Vec<Item> = queues.control.drain(..).collect();
                let mut bytes = 0;
                while let Some(item) = queues.data.front() {
                    let weight = item.weight();
                    if !items.is_empty() && bytes + weight > BATCH_BYTES {
                        break;
                    }
                    bytes += weight;
                    items.push(queues.data.pop_front().expect("looked at"));
                }
                let waiters = if queues.room_waiters.is_empty() {
                    Vec::new()
                } else {
                    std::mem::take(&mut queues.room_waiters)
                };
                (items, waiters)
            };
            waiters.into_iter().for_each(Waker::wake);
            let count = items.len() as u64;
            let frame = Frame {
                from: me,
                first_seq: seq,
                items,
            };
            seq += count;
            match postcard::to_allocvec(&frame) {
                Ok(bytes) => {
                    if let Err(error) = publisher.put(bytes).wait() {
                        tracing::warn!(node = %crate::NodeId(self.node), %error, "publishing a frame failed");
                        self.counters.lost.fetch_add(count, Relaxed);
                    } else {
                        self.counters.frames_out.fetch_add(1, Relaxed);
                        self.counters.items_out.fetch_add(count, Relaxed);
                    }
                }
                Err(error) => {
                    tracing::error!(%error, "encoding a frame failed");
                    self.counters.lost.fetch_add(count, Relaxed);
                }
            }
        }
        let _ = publisher.undeclare().wait();
    }
}
