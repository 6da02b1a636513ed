//! What one node publishes to another: frames of items, numbered so that the receiver sees a
//! gap (a frame lost while the link was down) or a new stream (a restarted sender).

use loka::StopReason;
use serde::{Deserialize, Serialize};

/// One publication from `from` to a node: the items numbered `first_seq`, `first_seq + 1`, …
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Frame {
    /// The sending node (its incarnation).
    pub(crate) from: u128,
    /// The lane (`peer::MAIN` or `peer::BULK`): each is a stream of its own.
    pub(crate) lane: u8,
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
}

/// What an item weighs besides its payload (an estimate of its header's bytes).
const HEADER: usize = 16;

impl Item {
    /// Whether the item is a message or reply over [`crate::peer::LARGE_BYTES`] (it goes on
    /// the bulk lane).
    pub(crate) fn is_large(&self) -> bool {
        self.weight() > crate::peer::LARGE_BYTES + HEADER
    }

    /// Whether the item is a message or stop signal for actor `actor`.
    pub(crate) fn is_for(&self, actor: u64) -> bool {
        matches!(self, Item::Msg { to, .. } | Item::Stop { to } if *to == actor)
    }

    /// Bytes the item takes (what batching and the queue's byte bound count).
    pub(crate) fn weight(&self) -> usize {
        match self {
            Item::Msg { payload, .. } => payload.len() + HEADER,
            Item::Reply {
                payload: Some(payload),
                ..
            } => payload.len() + HEADER,
            _ => HEADER,
        }
    }
}
