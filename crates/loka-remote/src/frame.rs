//! What one node publishes to another: frames of items, numbered so that the receiver sees a
//! gap (a frame lost while the link was down) or a new stream (a restarted sender).

use loka::StopReason;
use serde::{Deserialize, Serialize};

/// One publication from `from` to a node: the items numbered `first_seq`, `first_seq + 1`, …
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Frame {
    /// The sending node (its incarnation).
    pub(crate) from: u128,
    /// The number of the first item; the stream from `from` to the receiver starts at 0.
    pub(crate) first_seq: u64,
    pub(crate) items: Vec<Item>,
}

/// One thing a node tells another.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Item {
    /// A message for actor `to`, encoded for its message type.
    Msg {
        to: u64,
        #[serde(with = "serde_bytes")]
        payload: Vec<u8>,
    },
    /// A stop signal for actor `to`, after the messages sent before it.
    Stop { to: u64 },
    /// Tell me when actor `to` stops (control: ahead of data).
    Watch { to: u64 },
    /// Actor `actor` of the sender stopped (control: ahead of data).
    Terminated { actor: u64, reason: StopReason },
    /// The answer to the receiver's reply handle `id` (`None`: no answer will come).
    Reply {
        id: u64,
        #[serde(with = "serde_bytes")]
        payload: Option<Vec<u8>>,
    },
    /// A piece of a large message or reply; the pieces of one follow each other in the stream
    /// (other destinations' items may come between them), the first with `first`.
    Part {
        first: bool,
        #[serde(with = "serde_bytes")]
        bytes: Vec<u8>,
    },
    /// The last piece of a large message or reply, and where the whole goes.
    Last {
        to: Dest,
        #[serde(with = "serde_bytes")]
        bytes: Vec<u8>,
    },
}

/// Where a data item goes: what FIFO order is kept per.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Dest {
    /// An actor of the receiver.
    Actor(u64),
    /// A reply handle of the receiver.
    Reply(u64),
}

/// What an item weighs besides its payload (an estimate of its header's bytes).
const HEADER: usize = 16;

impl Item {
    /// Whether the item's payload goes in pieces (it is larger than
    /// [`crate::peer::LARGE_BYTES`]).
    pub(crate) fn is_large(&self) -> bool {
        self.weight() > crate::peer::LARGE_BYTES + HEADER
    }

    /// Bytes the item takes (what batching and the queue's byte bound count).
    pub(crate) fn weight(&self) -> usize {
        match self {
            Item::Msg { payload, .. } => payload.len() + HEADER,
            Item::Reply {
                payload: Some(payload),
                ..
            } => payload.len() + HEADER,
            Item::Part { bytes, .. } | Item::Last { bytes, .. } => bytes.len() + HEADER,
            _ => HEADER,
        }
    }

    /// Where a data item goes (`None` for control items).
    pub(crate) fn dest(&self) -> Option<Dest> {
        match self {
            Item::Msg { to, .. } | Item::Stop { to } => Some(Dest::Actor(*to)),
            Item::Reply { id, .. } => Some(Dest::Reply(*id)),
            Item::Last { to, .. } => Some(*to),
            Item::Watch { .. } | Item::Terminated { .. } | Item::Part { .. } => None,
        }
    }

    /// A large message's or reply's payload, taken out of it (the item is left empty).
    pub(crate) fn take_payload(&mut self) -> Option<Vec<u8>> {
        match self {
            Item::Msg { payload, .. } => Some(std::mem::take(payload)),
            Item::Reply { payload, .. } => payload.take(),
            _ => None,
        }
    }
}
