//! The way out to one other node ([`Peer`]): a bounded queue that senders fill without ever
//! waiting, and a thread that drains it into frames, control items first, data in batches.
//!
//! Two things keep latency low without giving up order:
//! - **Direct sends.** When the queue is empty, nothing is being published and no frame went
//!   out for [`DIRECT_QUIET`], the sending thread publishes its item itself instead of waking
//!   the drain thread (a wake-up costs tens of microseconds on a busy machine, twice per round
//!   trip). A burst goes through the thread, which batches it. Publishing and numbering happen
//!   under [`Peer::out`], which the drain thread takes before it lets go of the queue: an item
//!   published directly can never overtake one already taken from the queue.
//! - **Large payloads in pieces.** A payload over [`LARGE_BYTES`] goes out a piece per frame,
//!   and the messages for other destinations queued behind it go in the frames between its
//!   pieces: a 1 MiB message delays a small one by a piece, not by the whole. Messages for the
//!   same destination wait behind it, so FIFO holds per destination.

use crate::frame::{Dest, Frame, Item};
use crate::stats::Counters;
use parking_lot::{Condvar, Mutex, MutexGuard};
use std::collections::VecDeque;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::task::Waker;
use std::time::{Duration, Instant};
use zenoh::Wait;

/// The most bytes one frame gathers: small messages share a publication, and a frame of them
/// fits one Zenoh batch (64 KiB with Zenoh's headers), so the receiver gets it whole instead of
/// reassembling fragments.
const BATCH_BYTES: usize = 60 * 1024;
/// The size of a piece: with its frame's header it fits one Zenoh batch (64 KiB), so a piece
/// is one write, not two fragments.
pub(crate) const PIECE_BYTES: usize = 60 * 1024;
/// A payload larger than this goes out in pieces ([`Item::is_large`]): two pieces' worth, so a
/// 64 KiB message still goes whole.
pub(crate) const LARGE_BYTES: usize = 2 * PIECE_BYTES;
/// How long since the last frame before a sender publishes directly: closer together,
/// messages are a burst, and one frame for many beats a publication each (express
/// publications are a write each).
const DIRECT_QUIET: Duration = Duration::from_micros(50);
/// How many queued items held behind a large payload the drain thread skips at most, looking
/// for others' (bounds its work per frame; beyond, items wait for the next frame).
const LOOK_AHEAD: usize = 1024;

/// The queues toward one node.
#[derive(Default)]
struct Queues {
    /// Watch and stop reports: ahead of data.
    control: VecDeque<Item<'static>>,
    /// Messages, stop signals and replies, in the order they were queued.
    data: VecDeque<Item<'static>>,
    /// Bytes in `data` (what [`Peer::byte_capacity`] bounds).
    bytes: usize,
    /// The destination of a large payload going out in pieces (no direct send meanwhile).
    in_pieces: Option<Dest>,
    /// The node is lost or this node closes: nothing more goes out.
    closed: bool,
    /// Senders waiting for room (`send_async`).
    room_waiters: Vec<Waker>,
}

impl Queues {
    /// Whether a message may join the data: under both bounds (the last one in may pass the
    /// byte bound by its own size). The same test decides whether a sender waits for room: a
    /// stricter test for sending than for waiting had a sender spin between the two.
    fn has_room(&self, capacity: usize, byte_capacity: usize) -> bool {
        self.data.len() < capacity && self.bytes < byte_capacity
    }

    /// Whether senders waiting for room are woken: once the queue has drained to half of both
    /// bounds, so that a woken sender finds room for many messages, not for the dozen a frame
    /// took (a wake-up costs tens of microseconds here).
    fn below_low_water(&self, capacity: usize, byte_capacity: usize) -> bool {
        self.data.len() <= capacity / 2 && self.bytes <= byte_capacity / 2
    }
}

/// What publishes: the stream's numbering and the publisher, taken by whoever sends a frame.
struct Out {
    me: u128,
    seq: u64,
    publisher: zenoh::pubsub::Publisher<'static>,
    /// When the last frame went out.
    last: Instant,
}

impl Out {
    /// Publishes `items` as the next frame of the stream.
    fn publish(&mut self, items: Vec<Item<'_>>, peer: &Peer) {
        let count = items.len() as u64;
        let frame = Frame {
            from: self.me,
            first_seq: self.seq,
            items,
        };
        self.seq += count;
        let counters = &peer.counters;
        match frame.encode() {
            Ok(bytes) => {
                if let Err(error) = self.publisher.put(bytes).wait() {
                    tracing::warn!(node = %crate::NodeId(peer.node), %error, "publishing a frame failed");
                    counters.lost.fetch_add(count, Relaxed);
                } else {
                    counters.frames_out.fetch_add(1, Relaxed);
                    counters.items_out.fetch_add(count, Relaxed);
                }
            }
            Err(error) => {
                tracing::error!(%error, "encoding a frame failed");
                counters.lost.fetch_add(count, Relaxed);
            }
        }
        self.last = Instant::now();
    }
}

/// What the sending side needs from the node: the counters, the stream numbering.
pub(crate) struct Peer {
    /// The node this queue goes to.
    pub(crate) node: u128,
    queues: Mutex<Queues>,
    ready: Condvar,
    /// The publisher and numbering (`None` for a peer that was down from the start). Lock
    /// order: `queues`, then `out`.
    out: Mutex<Option<Out>>,
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

/// A large payload going out in pieces (the drain thread's).
struct InPieces {
    to: Dest,
    payload: Vec<u8>,
    sent: usize,
}

impl Peer {
    /// The queue toward `node` (at most `capacity` messages and `byte_capacity` bytes), and
    /// its thread publishing on `publisher`.
    pub(crate) fn start(
        node: u128,
        me: u128,
        (capacity, byte_capacity): (usize, usize),
        counters: Arc<Counters>,
        publisher: zenoh::pubsub::Publisher<'static>,
    ) -> Arc<Peer> {
        let peer = Arc::new(Peer {
            node,
            queues: Mutex::new(Queues::default()),
            ready: Condvar::new(),
            out: Mutex::new(Some(Out {
                me,
                seq: 0,
                publisher,
                last: Instant::now(),
            })),
            capacity,
            byte_capacity,
            counters,
        });
        let drainer = Arc::clone(&peer);
        std::thread::Builder::new()
            .name("loka-remote-out".to_owned())
            .spawn(move || drainer.drain())
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
            out: Mutex::new(None),
            capacity: 0,
            byte_capacity: 0,
            counters,
        })
    }

    /// Queues a message: refused when the queue is full (it never waits) or the node lost.
    pub(crate) fn push_message(&self, item: Item<'static>) -> Result<(), Refused> {
        let queues = self.queues.lock();
        if queues.closed {
            return Err(Refused::Down);
        }
        if !queues.has_room(self.capacity, self.byte_capacity) {
            drop(queues);
            self.counters.refused.fetch_add(1, Relaxed);
            return Err(Refused::Full);
        }
        self.enqueue(queues, item, false);
        Ok(())
    }

    /// Queues a data item that must not be refused for room (a reply, a stop signal: dropping
    /// them would leave an asker or a stop waiting); `false` if the node is lost.
    pub(crate) fn push_always(&self, item: Item<'static>) -> bool {
        self.push(item, false)
    }

    /// Queues a control item (ahead of data); `false` if the node is lost.
    pub(crate) fn push_control(&self, item: Item<'static>) -> bool {
        self.push(item, true)
    }

    fn push(&self, item: Item<'static>, control: bool) -> bool {
        let queues = self.queues.lock();
        if queues.closed {
            return false;
        }
        self.enqueue(queues, item, control);
        true
    }

    /// Publishes `item` at once when nothing is queued or going out (see the module's notes),
    /// else queues it and wakes the drain thread.
    fn enqueue(&self, mut queues: MutexGuard<'_, Queues>, item: Item<'static>, control: bool) {
        let idle =
            queues.data.is_empty() && queues.control.is_empty() && queues.in_pieces.is_none();
        if idle && !item.is_large() {
            if let Some(mut out) = self.out.try_lock() {
                if let Some(out) = out
                    .as_mut()
                    .filter(|out| out.last.elapsed() >= DIRECT_QUIET)
                {
                    drop(queues);
                    out.publish(vec![item], self);
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
        self.ready.notify_one();
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
        if queues.closed || queues.has_room(self.capacity, self.byte_capacity) {
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
        queues.bytes = 0;
        let waiters = std::mem::take(&mut queues.room_waiters);
        drop(queues);
        self.ready.notify_all();
        waiters.into_iter().for_each(Waker::wake);
        dropped
    }

    /// The thread: waits for items, takes every control item, a batch of data and the next
    /// piece of a large payload, and publishes them as one numbered frame.
    fn drain(&self) {
        let mut pieces: Option<InPieces> = None;
        loop {
            let mut queues = self.queues.lock();
            while !queues.closed
                && queues.control.is_empty()
                && queues.data.is_empty()
                && pieces.is_none()
            {
                self.ready.wait(&mut queues);
            }
            if queues.closed {
                break;
            }
            let mut items: Vec<Item<'_>> = queues.control.drain(..).collect();
            let taken = take_batch(&mut queues.data, &mut items, &mut pieces);
            queues.bytes -= taken;
            // Senders see the pieces as over once their last is in this frame: the frame goes
            // out before any direct send can, as the drain holds `out` until it has published.
            let finished = pieces.as_ref().is_some_and(InPieces::last_piece_is_next);
            queues.in_pieces = pieces.as_ref().filter(|_| !finished).map(|large| large.to);
            let waiters = if queues.below_low_water(self.capacity, self.byte_capacity) {
                std::mem::take(&mut queues.room_waiters)
            } else {
                Vec::new()
            };
            // Taken before the queue is let go: no direct send slips in ahead of these items.
            let mut out = self.out.lock();
            drop(queues);
            waiters.into_iter().for_each(Waker::wake);
            // The piece is cut out of the queue's lock: senders are not held while it is.
            if let Some(large) = pieces.as_mut() {
                items.push(next_piece(large));
            }
            if let Some(out) = out.as_mut() {
                out.publish(items, self);
            }
            if finished {
                pieces = None;
            }
        }
        if let Some(out) = self.out.lock().take() {
            let _ = out.publisher.undeclare().wait();
        }
    }
}

/// Moves up to [`BATCH_BYTES`] of data from `data` into `items`; a large payload becomes
/// `pieces` when none is going out. Items for the destination of a large payload (going out, or
/// waiting for its turn) stay queued, in order. Returns the bytes taken from the queue.
fn take_batch(
    data: &mut VecDeque<Item<'static>>,
    items: &mut Vec<Item<'_>>,
    pieces: &mut Option<InPieces>,
) -> usize {
    let mut held: Vec<Dest> = pieces.iter().map(|large| large.to).collect();
    let (mut batch, mut taken, mut index) = (0, 0, 0);
    while index < data.len() && index < LOOK_AHEAD {
        let item = &data[index];
        let weight = item.weight();
        let dest = item.dest().expect("data items have a destination");
        if held.contains(&dest) {
            index += 1;
            continue;
        }
        if item.is_large() {
            held.push(dest);
            if pieces.is_none() {
                let mut item = data.remove(index).expect("looked at");
                taken += weight;
                *pieces = Some(InPieces {
                    to: dest,
                    payload: item.take_payload().unwrap_or_default(),
                    sent: 0,
                });
            } else {
                index += 1;
            }
            continue;
        }
        if !items.is_empty() && batch + weight > BATCH_BYTES {
            break;
        }
        batch += weight;
        taken += weight;
        items.push(data.remove(index).expect("looked at"));
    }
    taken
}

impl InPieces {
    /// Whether the next piece is the payload's last.
    fn last_piece_is_next(&self) -> bool {
        self.sent + PIECE_BYTES >= self.payload.len()
    }
}

/// The next piece of `large`, borrowed from it: a `Part`, or the `Last` with its destination.
fn next_piece(large: &mut InPieces) -> Item<'_> {
    let start = large.sent;
    let end = (start + PIECE_BYTES).min(large.payload.len());
    large.sent = end;
    let bytes = large.payload[start..end].into();
    if end == large.payload.len() {
        Item::Last {
            to: large.to,
            bytes,
        }
    } else {
        Item::Part {
            first: start == 0,
            bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(to: u64, len: usize) -> Item<'static> {
        Item::Msg {
            to,
            payload: vec![to as u8; len].into(),
        }
    }

    fn dests(items: &[Item<'static>]) -> Vec<(Option<Dest>, usize)> {
        items.iter().map(|i| (i.dest(), i.weight() - 16)).collect()
    }

    #[test]
    fn small_messages_pass_a_large_one_but_not_its_destination_s_own() {
        let big = 3 * PIECE_BYTES + 10;
        let mut data: VecDeque<Item<'static>> =
            [msg(1, 10), msg(2, big), msg(2, 5), msg(3, 7), msg(1, 8)]
                .into_iter()
                .collect();
        let (mut items, mut pieces) = (Vec::new(), None);
        let taken = take_batch(&mut data, &mut items, &mut pieces);
        // Actor 2's large message goes in pieces; its small one waits behind it.
        assert_eq!(
            dests(&items),
            [
                (Some(Dest::Actor(1)), 10),
                (Some(Dest::Actor(3)), 7),
                (Some(Dest::Actor(1)), 8)
            ]
        );
        assert_eq!(taken, 10 + 7 + 8 + big + 4 * 16);
        assert_eq!(dests(data.make_contiguous()), [(Some(Dest::Actor(2)), 5)]);
        let large = pieces.as_mut().unwrap();
        assert!(
            matches!(next_piece(large), Item::Part { first: true, ref bytes } if bytes.len() == PIECE_BYTES)
        );
        // While the pieces go, actor 2's small message still waits.
        let mut items = Vec::new();
        assert_eq!(take_batch(&mut data, &mut items, &mut pieces), 0);
        assert!(items.is_empty());
        let large = pieces.as_mut().unwrap();
        assert!(matches!(next_piece(large), Item::Part { first: false, .. }));
        assert!(matches!(next_piece(large), Item::Part { first: false, .. }));
        match next_piece(large) {
            Item::Last { to, bytes } => assert_eq!((to, bytes.len()), (Dest::Actor(2), 10)),
            other => panic!("{other:?}"),
        }
        // Once it is out, the small one goes.
        let mut items = Vec::new();
        take_batch(&mut data, &mut items, &mut None);
        assert_eq!(dests(&items), [(Some(Dest::Actor(2)), 5)]);
    }

    #[test]
    fn a_second_large_payload_waits_for_the_first() {
        let big = LARGE_BYTES + 1;
        let mut data: VecDeque<Item<'static>> = [msg(1, big), msg(2, big), msg(2, 1), msg(3, 1)]
            .into_iter()
            .collect();
        let (mut items, mut pieces) = (Vec::new(), None);
        take_batch(&mut data, &mut items, &mut pieces);
        assert_eq!(pieces.as_ref().unwrap().to, Dest::Actor(1));
        assert_eq!(dests(&items), [(Some(Dest::Actor(3)), 1)]);
        assert_eq!(
            dests(data.make_contiguous()),
            [(Some(Dest::Actor(2)), big), (Some(Dest::Actor(2)), 1)]
        );
    }

    #[test]
    fn a_payload_just_over_the_bound_goes_in_three_pieces_and_one_at_it_whole() {
        assert!(!msg(1, LARGE_BYTES).is_large());
        let mut data: VecDeque<Item<'static>> = [msg(1, LARGE_BYTES + 1)].into_iter().collect();
        let (mut items, mut pieces) = (Vec::new(), None);
        take_batch(&mut data, &mut items, &mut pieces);
        let large = pieces.as_mut().unwrap();
        assert!(matches!(next_piece(large), Item::Part { first: true, .. }));
        assert!(matches!(next_piece(large), Item::Part { first: false, .. }));
        assert!(matches!(next_piece(large), Item::Last { ref bytes, .. } if bytes.len() == 1));
    }

    #[test]
    fn the_queue_has_room_under_both_bounds_and_wakes_at_half() {
        let mut queues = Queues::default();
        assert!(queues.has_room(2, 100), "empty");
        queues.data.push_back(msg(1, 80));
        queues.bytes = 96;
        assert!(
            queues.has_room(2, 100),
            "under both: the next may pass the byte bound"
        );
        queues.bytes = 100;
        assert!(!queues.has_room(2, 100), "at the byte bound");
        queues.bytes = 96;
        queues.data.push_back(msg(1, 0));
        assert!(!queues.has_room(2, 100), "at the count");
        assert!(
            !queues.below_low_water(4, 100),
            "two of four, 96 of 100 bytes"
        );
        assert!(queues.below_low_water(4, 200));
    }

    #[test]
    fn a_batch_stops_at_its_byte_bound() {
        let mut data: VecDeque<Item<'static>> = (0..10).map(|n| msg(n, BATCH_BYTES / 4)).collect();
        let mut items = Vec::new();
        take_batch(&mut data, &mut items, &mut None);
        assert_eq!(
            items.len(),
            3,
            "three fit with their headers, the fourth does not"
        );
        assert_eq!(data.len(), 7);
    }
}
