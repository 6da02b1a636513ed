//! The way out to one other node ([`Peer`]): two lanes, each a bounded queue that senders fill
//! without ever waiting and a thread that drains it into numbered frames, control items first,
//! data in batches.
//!
//! - **Two lanes.** Messages over [`LARGE_BYTES`] go on the *bulk* lane, published at Zenoh's
//!   `DataLow` priority; the rest on the *main* lane, at `Data`. Zenoh cuts a large publication
//!   into fragments and sends higher priorities first between them, so a 1 MiB message delays a
//!   small one by a fragment, not by the whole. An actor that once received a large message
//!   stays on the bulk lane from then on: its messages stay in one lane, so FIFO per
//!   destination holds (a later message on the main lane could pass a large one still in
//!   Zenoh's queue). It moves only when none of its messages is still on the main lane (else
//!   the large one goes on the main lane, once). A large reply goes on the bulk lane alone (a
//!   reply handle is answered once).
//! - **Direct sends.** When the main lane is empty, nothing is being published and no frame went
//!   out for [`DIRECT_QUIET`], the sending thread publishes its item itself instead of waking
//!   the lane's thread (a wake-up costs tens of microseconds on a busy machine, twice per round
//!   trip). A burst goes through the thread, which batches it. Publishing and numbering happen
//!   under [`Lane::out`], which the thread takes before it lets go of the queue: an item
//!   published directly can never overtake one already taken from the queue.

use crate::frame::{Frame, Item};
use crate::stats::Counters;
use parking_lot::{Condvar, Mutex, MutexGuard};
use rustc_hash::FxHashSet;
use std::collections::VecDeque;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::task::Waker;
use std::time::{Duration, Instant};
use zenoh::Wait;

/// The most payload bytes one frame gathers: small messages share a publication.
const BATCH_BYTES: usize = 64 * 1024;
/// A message or reply larger than this goes on the bulk lane ([`Item::is_large`]).
pub(crate) const LARGE_BYTES: usize = 64 * 1024;
/// How long since the lane's last frame before a sender publishes directly: closer together,
/// messages are a burst, and one frame for many beats a publication each.
const DIRECT_QUIET: Duration = Duration::from_micros(50);

/// The main lane and the bulk lane.
pub(crate) const MAIN: u8 = 0;
pub(crate) const BULK: u8 = 1;

/// One lane's queues.
#[derive(Default)]
struct Queues {
    /// Watch and stop reports: ahead of data (main lane only).
    control: VecDeque<Item>,
    /// Messages, stop signals and replies, in the order they were queued.
    data: VecDeque<Item>,
    /// Bytes in `data` (what [`Peer::byte_capacity`] bounds).
    bytes: usize,
    /// The node is lost or this node closes: nothing more goes out.
    closed: bool,
    /// Senders waiting for room (`send_async`).
    room_waiters: Vec<Waker>,
    /// Main lane: the actors whose messages go on the bulk lane (they received a large one).
    bulk_actors: FxHashSet<u64>,
}

impl Queues {
    /// Whether a sender waiting for room should try again.
    fn has_room(&self, capacity: usize, byte_capacity: usize) -> bool {
        self.data.len() < capacity && self.bytes < byte_capacity
    }

    /// Whether a message of `weight` bytes may join the data: under both bounds, or alone.
    fn admits(&self, weight: usize, capacity: usize, byte_capacity: usize) -> bool {
        self.data.len() < capacity && (self.data.is_empty() || self.bytes + weight <= byte_capacity)
    }
}

/// What publishes on a lane: its stream's numbering and its publisher, taken by whoever sends
/// a frame.
struct Out {
    seq: u64,
    publisher: zenoh::pubsub::Publisher<'static>,
    /// When the lane's last frame went out.
    last: Instant,
}

/// One lane toward the node.
struct Lane {
    number: u8,
    queues: Mutex<Queues>,
    ready: Condvar,
    /// The publisher and numbering (`None` for a peer that was down from the start). Lock
    /// order: `queues`, then `out`.
    out: Mutex<Option<Out>>,
}

impl Lane {
    fn new(number: u8, publisher: Option<zenoh::pubsub::Publisher<'static>>, closed: bool) -> Lane {
        Lane {
            number,
            queues: Mutex::new(Queues {
                closed,
                ..Queues::default()
            }),
            ready: Condvar::new(),
            out: Mutex::new(publisher.map(|publisher| Out {
                seq: 0,
                publisher,
                last: Instant::now(),
            })),
        }
    }
}

/// The sending side toward one node.
pub(crate) struct Peer {
    /// The node this queue goes to.
    pub(crate) node: u128,
    me: u128,
    lanes: [Lane; 2],
    capacity: usize,
    byte_capacity: usize,
    counters: Arc<Counters>,
}

/// Why a push was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    Full,
    Down,
}

impl Peer {
    /// The lanes toward `node` (each at most `capacity` messages and `byte_capacity` bytes),
    /// and their threads publishing on `publishers` (main, bulk).
    pub(crate) fn start(
        node: u128,
        me: u128,
        (capacity, byte_capacity): (usize, usize),
        counters: Arc<Counters>,
        [main, bulk]: [zenoh::pubsub::Publisher<'static>; 2],
    ) -> Arc<Peer> {
        let peer = Arc::new(Peer {
            node,
            me,
            lanes: [
                Lane::new(MAIN, Some(main), false),
                Lane::new(BULK, Some(bulk), false),
            ],
            capacity,
            byte_capacity,
            counters,
        });
        for lane in [MAIN, BULK] {
            let drainer = Arc::clone(&peer);
            std::thread::Builder::new()
                .name("loka-remote-out".to_owned())
                .spawn(move || drainer.drain(lane))
                .expect("spawning a thread for a remote node");
        }
        peer
    }

    /// A peer that is lost already: every push is refused.
    pub(crate) fn down(node: u128, counters: Arc<Counters>) -> Arc<Peer> {
        Arc::new(Peer {
            node,
            me: 0,
            lanes: [Lane::new(MAIN, None, true), Lane::new(BULK, None, true)],
            capacity: 0,
            byte_capacity: 0,
            counters,
        })
    }

    /// The lane a data item goes on, with the main lane's queues locked (given back when that
    /// is the lane). A large message moves its actor to the bulk lane for good.
    fn lane_of<'a>(&'a self, item: &Item) -> (&'a Lane, Option<MutexGuard<'a, Queues>>) {
        let mut main = self.lanes[MAIN as usize].queues.lock();
        let bulk = match item {
            Item::Msg { to, .. } | Item::Stop { to } if main.bulk_actors.contains(to) => true,
            Item::Msg { to, .. } if item.is_large() => {
                // The actor moves only when nothing of its is left behind on the main lane:
                // none queued, and no frame being published (its lock is free while the
                // queue's is held, so none is between the two). Otherwise this one goes on
                // the main lane, and the move waits for a later large message.
                let behind = main.data.iter().any(|queued| queued.is_for(*to));
                let moves = !behind && self.lanes[MAIN as usize].out.try_lock().is_some();
                if moves {
                    main.bulk_actors.insert(*to);
                }
                moves
            }
            Item::Msg { .. } | Item::Stop { .. } => false,
            _ => item.is_large(),
        };
        if bulk {
            (&self.lanes[BULK as usize], None)
        } else {
            (&self.lanes[MAIN as usize], Some(main))
        }
    }

    /// Queues a message: refused when its lane is full (it never waits) or the node lost. A
    /// message larger than the byte bound goes when its lane is empty.
    pub(crate) fn push_message(&self, item: Item) -> Result<(), Refused> {
        let (lane, main) = self.lane_of(&item);
        let queues = main.unwrap_or_else(|| lane.queues.lock());
        if queues.closed {
            return Err(Refused::Down);
        }
        if !queues.admits(item.weight(), self.capacity, self.byte_capacity) {
            drop(queues);
            self.counters.refused.fetch_add(1, Relaxed);
            return Err(Refused::Full);
        }
        self.enqueue(lane, queues, item, false);
        Ok(())
    }

    /// Queues a data item that must not be refused for room (a reply, a stop signal: dropping
    /// them would leave an asker or a stop waiting); `false` if the node is lost.
    pub(crate) fn push_always(&self, item: Item) -> bool {
        let (lane, main) = self.lane_of(&item);
        let queues = main.unwrap_or_else(|| lane.queues.lock());
        if queues.closed {
            return false;
        }
        self.enqueue(lane, queues, item, false);
        true
    }

    /// Queues a control item (on the main lane, ahead of data); `false` if the node is lost.
    pub(crate) fn push_control(&self, item: Item) -> bool {
        let lane = &self.lanes[MAIN as usize];
        let queues = lane.queues.lock();
        if queues.closed {
            return false;
        }
        self.enqueue(lane, queues, item, true);
        true
    }

    /// Publishes `item` at once when the main lane is quiet (see the module's notes), else
    /// queues it and wakes the lane's thread.
    fn enqueue(&self, lane: &Lane, mut queues: MutexGuard<'_, Queues>, item: Item, control: bool) {
        if lane.number == MAIN && queues.data.is_empty() && queues.control.is_empty() {
            if let Some(mut out) = lane.out.try_lock() {
                if let Some(out) = out
                    .as_mut()
                    .filter(|out| out.last.elapsed() >= DIRECT_QUIET)
                {
                    drop(queues);
                    self.publish(lane.number, out, vec![item]);
                    self.counters.direct_out.fetch_add(1, Relaxed);
                    return;
                }
            }
        }
        if control {
            queues.control.push_back(item);
        } else {
            queues.bytes += item.weight();
            queues.data.push_back(item);
        }
        drop(queues);
        lane.ready.notify_one();
    }

    /// Messages waiting on the lane of actor `to`.
    pub(crate) fn queued(&self, to: u64) -> usize {
        self.lane_for_actor(to).queues.lock().data.len()
    }

    /// The capacity of each lane.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    fn lane_for_actor(&self, to: u64) -> &Lane {
        let bulk = self.lanes[MAIN as usize]
            .queues
            .lock()
            .bulk_actors
            .contains(&to);
        &self.lanes[usize::from(bulk)]
    }

    /// Registers a sender to actor `to` waiting for room; `false` if there is room now (or
    /// never will be).
    pub(crate) fn wait_for_room(&self, to: u64, waker: &Waker) -> bool {
        let mut queues = self.lane_for_actor(to).queues.lock();
        if queues.closed || queues.has_room(self.capacity, self.byte_capacity) {
            return false;
        }
        queues.room_waiters.push(waker.clone());
        true
    }

    /// Whether the node is lost (or this node closed).
    pub(crate) fn is_down(&self) -> bool {
        self.lanes[MAIN as usize].queues.lock().closed
    }

    /// The node is lost, or this node closes: what waits is dropped, the threads end.
    /// Returns how many items were dropped.
    pub(crate) fn close(&self) -> usize {
        let mut dropped = 0;
        for lane in &self.lanes {
            let mut queues = lane.queues.lock();
            queues.closed = true;
            dropped += queues.data.len() + queues.control.len();
            queues.data.clear();
            queues.control.clear();
            queues.bytes = 0;
            let waiters = std::mem::take(&mut queues.room_waiters);
            drop(queues);
            lane.ready.notify_all();
            waiters.into_iter().for_each(Waker::wake);
        }
        dropped
    }

    /// Publishes `items` as the next frame of lane `lane`'s stream.
    fn publish(&self, lane: u8, out: &mut Out, items: Vec<Item>) {
        let count = items.len() as u64;
        let frame = Frame {
            from: self.me,
            lane,
            first_seq: out.seq,
            items,
        };
        out.seq += count;
        let counters = &self.counters;
        match postcard::to_allocvec(&frame) {
            Ok(bytes) => {
                if let Err(error) = out.publisher.put(bytes).wait() {
                    tracing::warn!(node = %crate::NodeId(self.node), %error, "publishing a frame failed");
                    counters.lost.fetch_add(count, Relaxed);
                } else {
                    if lane == BULK {
                        counters.bulk_out.fetch_add(1, Relaxed);
                    }
                    counters.frames_out.fetch_add(1, Relaxed);
                    counters.items_out.fetch_add(count, Relaxed);
                }
            }
            Err(error) => {
                tracing::error!(%error, "encoding a frame failed");
                counters.lost.fetch_add(count, Relaxed);
            }
        }
        out.last = Instant::now();
    }

    /// A lane's thread: waits for items, takes every control item and a batch of data, and
    /// publishes them as one numbered frame.
    fn drain(&self, number: u8) {
        let lane = &self.lanes[number as usize];
        loop {
            let mut queues = lane.queues.lock();
            while !queues.closed && queues.control.is_empty() && queues.data.is_empty() {
                lane.ready.wait(&mut queues);
            }
            if queues.closed {
                break;
            }
            let mut items: Vec<Item> = queues.control.drain(..).collect();
            queues.bytes -= take_batch(&mut queues.data, &mut items);
            let waiters = if queues.has_room(self.capacity, self.byte_capacity) {
                std::mem::take(&mut queues.room_waiters)
            } else {
                Vec::new()
            };
            // Taken before the queue is let go: no direct send slips in ahead of these items.
            let mut out = lane.out.lock();
            drop(queues);
            waiters.into_iter().for_each(Waker::wake);
            if let Some(out) = out.as_mut() {
                self.publish(number, out, items);
            }
        }
        if let Some(out) = lane.out.lock().take() {
            let _ = out.publisher.undeclare().wait();
        }
    }
}

/// Moves data from `data` into `items`: at least one item, then up to [`BATCH_BYTES`]. Returns
/// the bytes taken.
fn take_batch(data: &mut VecDeque<Item>, items: &mut Vec<Item>) -> usize {
    let (mut batch, mut taken) = (0, 0);
    while let Some(item) = data.front() {
        let weight = item.weight();
        if !items.is_empty() && batch + weight > BATCH_BYTES {
            break;
        }
        batch += weight;
        taken += weight;
        items.push(data.pop_front().expect("looked at"));
    }
    taken
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(to: u64, len: usize) -> Item {
        Item::Msg {
            to,
            payload: vec![to as u8; len],
        }
    }

    #[test]
    fn an_actor_that_received_a_large_message_stays_on_the_bulk_lane() {
        let peer = Peer::down(1, Arc::default());
        let lane = |item: &Item| peer.lane_of(item).0.number;
        assert_eq!(lane(&msg(7, 10)), MAIN);
        assert_eq!(lane(&msg(7, LARGE_BYTES)), MAIN, "64 KiB is not large");
        assert_eq!(lane(&msg(7, LARGE_BYTES + 1)), BULK);
        // From then on, its small messages and its stop signal follow the large one.
        assert_eq!(lane(&msg(7, 10)), BULK);
        assert_eq!(lane(&Item::Stop { to: 7 }), BULK);
        assert_eq!(peer.lane_for_actor(7).number, BULK);
        // Other actors stay on the main lane; a large reply goes on the bulk lane alone.
        assert_eq!(lane(&msg(8, 10)), MAIN);
        let reply = |len| Item::Reply {
            id: 8,
            payload: Some(vec![0; len]),
        };
        assert_eq!(lane(&reply(LARGE_BYTES + 1)), BULK);
        assert_eq!(lane(&reply(10)), MAIN);
    }

    #[test]
    fn an_actor_with_messages_still_on_the_main_lane_does_not_move() {
        let peer = Peer::down(1, Arc::default());
        peer.lanes[MAIN as usize]
            .queues
            .lock()
            .data
            .push_back(msg(7, 10));
        assert_eq!(peer.lane_of(&msg(7, LARGE_BYTES + 1)).0.number, MAIN);
        assert_eq!(peer.lane_of(&msg(8, LARGE_BYTES + 1)).0.number, BULK);
        peer.lanes[MAIN as usize].queues.lock().data.clear();
        // A frame going out on the main lane (its lock held): no move either.
        let publishing = peer.lanes[MAIN as usize].out.lock();
        assert_eq!(peer.lane_of(&msg(7, LARGE_BYTES + 1)).0.number, MAIN);
        drop(publishing);
        assert_eq!(peer.lane_of(&msg(7, LARGE_BYTES + 1)).0.number, BULK);
    }

    #[test]
    fn the_queue_admits_under_both_bounds_or_a_message_alone() {
        let mut queues = Queues::default();
        assert!(queues.admits(1 << 30, 2, 100), "alone, whatever its size");
        queues.data.push_back(msg(1, 60));
        queues.bytes = 76;
        assert!(queues.admits(24, 2, 100));
        assert!(!queues.admits(25, 2, 100), "over the byte bound");
        queues.data.push_back(msg(1, 0));
        assert!(!queues.admits(1, 2, 100), "over the count");
        assert!(!queues.has_room(2, 100));
    }

    #[test]
    fn a_batch_stops_at_its_byte_bound() {
        let mut data: VecDeque<Item> = (0..10).map(|n| msg(n, BATCH_BYTES / 4)).collect();
        let mut items = Vec::new();
        let taken = take_batch(&mut data, &mut items);
        assert_eq!(
            items.len(),
            3,
            "three fit with their headers, the fourth does not"
        );
        assert_eq!(taken, 3 * (BATCH_BYTES / 4 + 16));
        assert_eq!(data.len(), 7);
    }
}
