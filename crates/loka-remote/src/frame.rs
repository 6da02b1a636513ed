//! What one node publishes to another: frames of items, numbered so that the receiver sees a
//! gap (a frame lost while the link was down) or a new stream (a restarted sender).

use loka::StopReason;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// A payload: owned on the way out, borrowed from the publication's bytes on the way in (one
/// copy fewer per message).
pub(crate) type Bytes<'a> = Cow<'a, [u8]>;

/// One publication from `from` to a node: the items numbered `first_seq`, `first_seq + 1`, …
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Frame<'a> {
    /// The sending node (its incarnation).
    pub(crate) from: u128,
    /// The number of the first item; the stream from `from` to the receiver starts at 0.
    pub(crate) first_seq: u64,
    #[serde(borrow)]
    pub(crate) items: Vec<Item<'a>>,
}

/// One thing a node tells another.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Item<'a> {
    /// A message for actor `to`, encoded for its message type.
    Msg {
        to: u64,
        #[serde(borrow, with = "serde_bytes")]
        payload: Bytes<'a>,
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
        #[serde(borrow, with = "serde_bytes")]
        payload: Option<Bytes<'a>>,
    },
    /// A piece of a large message or reply; the pieces of one follow each other in the stream
    /// (other destinations' items may come between them), the first with `first`.
    Part {
        first: bool,
        #[serde(borrow, with = "serde_bytes")]
        bytes: Bytes<'a>,
    },
    /// The last piece of a large message or reply, and where the whole goes.
    Last {
        to: Dest,
        #[serde(borrow, with = "serde_bytes")]
        bytes: Bytes<'a>,
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

/// A payload at least this long goes to Zenoh as it is, a slice of the frame of its own;
/// shorter ones are copied into the frame's buffer (cheaper than a slice's allocation).
const ZERO_COPY_MIN: usize = 2048;

impl Frame<'_> {
    /// The frame's bytes, exactly as postcard writes them, with its long owned payloads handed
    /// over uncopied: what the sender copied into a frame before is one copy fewer per message
    /// (a borrowed payload, a large message's piece, is copied here, once).
    pub(crate) fn encode(self) -> Result<zenoh::bytes::ZBytes, postcard::Error> {
        let mut out = zenoh::bytes::ZBytes::writer();
        postcard::to_io(
            &(self.from, self.first_seq, self.items.len() as u64),
            &mut out,
        )?;
        for item in self.items {
            // The item's fields before its payload, as postcard writes them: the variant's
            // index (the declaration order above), the fields, the payload's length.
            let (payload, head) = match item {
                Item::Msg { to, payload } if payload.len() >= ZERO_COPY_MIN => {
                    let head = postcard::to_io(&(0u32, to, payload.len() as u64), &mut out);
                    (payload, head)
                }
                Item::Reply {
                    id,
                    payload: Some(payload),
                } if payload.len() >= ZERO_COPY_MIN => {
                    let head = postcard::to_io(&(4u32, id, 1u8, payload.len() as u64), &mut out);
                    (payload, head)
                }
                Item::Part { first, bytes } if bytes.len() >= ZERO_COPY_MIN => {
                    let head = postcard::to_io(&(5u32, first, bytes.len() as u64), &mut out);
                    (bytes, head)
                }
                Item::Last { to, bytes } if bytes.len() >= ZERO_COPY_MIN => {
                    let head = postcard::to_io(&(6u32, to, bytes.len() as u64), &mut out);
                    (bytes, head)
                }
                short => {
                    postcard::to_io(&short, &mut out)?;
                    continue;
                }
            };
            head?;
            out.append(payload.into_owned().into());
        }
        Ok(out.finish())
    }
}

/// What an item weighs besides its payload (an estimate of its header's bytes).
const HEADER: usize = 16;

impl Item<'_> {
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
            Item::Msg { payload, .. } => Some(std::mem::take(payload).into_owned()),
            Item::Reply { payload, .. } => payload.take().map(Cow::into_owned),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_with_its_payloads_uncopied_is_what_postcard_writes() {
        let long = |n: u8| Bytes::Owned(vec![n; ZERO_COPY_MIN + usize::from(n)]);
        let items = || {
            vec![
                Item::Msg {
                    to: 300,
                    payload: long(1),
                },
                Item::Msg {
                    to: 1,
                    payload: Bytes::Owned(vec![9; 10]),
                },
                Item::Stop { to: 2 },
                Item::Watch { to: 3 },
                Item::Terminated {
                    actor: 4,
                    reason: StopReason::Panicked("boom".into()),
                },
                Item::Reply {
                    id: 70_000,
                    payload: Some(long(2)),
                },
                Item::Reply {
                    id: 6,
                    payload: None,
                },
                Item::Part {
                    first: true,
                    bytes: long(3),
                },
                Item::Last {
                    to: Dest::Reply(1 << 40),
                    bytes: long(4),
                },
                Item::Last {
                    to: Dest::Actor(5),
                    bytes: long(5),
                },
            ]
        };
        let frame = |items| Frame {
            from: u128::MAX - 5,
            first_seq: 1 << 33,
            items,
        };
        let expected = postcard::to_allocvec(&frame(items())).unwrap();
        let encoded = frame(items()).encode().unwrap();
        assert_eq!(encoded.to_bytes().as_ref(), expected.as_slice());
        // The long payloads went as slices of their own (one for each, plus the heads).
        assert!(
            encoded.slices().count() >= 6,
            "{}",
            encoded.slices().count()
        );
    }

    #[test]
    fn received_payloads_borrow_from_the_publication() {
        let frame = Frame {
            from: 7,
            first_seq: 3,
            items: vec![
                Item::Msg {
                    to: 1,
                    payload: Bytes::Owned(vec![1, 2, 3]),
                },
                Item::Reply {
                    id: 2,
                    payload: Some(Bytes::Owned(vec![4; 100])),
                },
                Item::Reply {
                    id: 3,
                    payload: None,
                },
            ],
        };
        let bytes = postcard::to_allocvec(&frame).unwrap();
        let back: Frame<'_> = postcard::from_bytes(&bytes).unwrap();
        match &back.items[..] {
            [Item::Msg { to: 1, payload }, Item::Reply {
                id: 2,
                payload: Some(reply),
            }, Item::Reply {
                id: 3,
                payload: None,
            }] => {
                assert!(matches!(payload, Cow::Borrowed([1, 2, 3])), "{payload:?}");
                assert!(
                    matches!(reply, Cow::Borrowed(b) if b.len() == 100),
                    "{reply:?}"
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
