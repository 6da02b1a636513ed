//! A node's counters ([`NodeStats`]): relaxed atomics bumped on the way in and out, read
//! together on demand.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The live counters of a node.
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) frames_out: AtomicU64,
    pub(crate) direct_out: AtomicU64,
    pub(crate) items_out: AtomicU64,
    pub(crate) frames_in: AtomicU64,
    pub(crate) items_in: AtomicU64,
    pub(crate) refused: AtomicU64,
    pub(crate) lost: AtomicU64,
    pub(crate) gaps: AtomicU64,
    pub(crate) undeliverable: AtomicU64,
    pub(crate) bad_frames: AtomicU64,
    pub(crate) nodes_down: AtomicU64,
}

/// What a node has done so far ([`crate::Node::stats`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NodeStats {
    /// Frames published to other nodes.
    pub frames_out: u64,
    /// Of those, frames the sending thread published itself: its node's queue was empty and
    /// nothing was going out (the others went through the queue's thread).
    pub direct_out: u64,
    /// Items (messages, stop signals, replies, watch reports, pieces of large ones) in them.
    pub items_out: u64,
    /// Frames received.
    pub frames_in: u64,
    /// Items in them.
    pub items_in: u64,
    /// Sends refused because the queue toward their node was full.
    pub refused: u64,
    /// Items that could not be published (encoding or transport failed), or were waiting
    /// toward a node when it was lost.
    pub lost: u64,
    /// Items missing in the numbered streams received (sent, never arrived).
    pub gaps: u64,
    /// Messages for an actor that is gone or refused them, or not of its type.
    pub undeliverable: u64,
    /// Publications that were not frames.
    pub bad_frames: u64,
    /// Nodes seen lost.
    pub nodes_down: u64,
}

impl Counters {
    pub(crate) fn read(&self) -> NodeStats {
        NodeStats {
            frames_out: self.frames_out.load(Relaxed),
            direct_out: self.direct_out.load(Relaxed),
            items_out: self.items_out.load(Relaxed),
            frames_in: self.frames_in.load(Relaxed),
            items_in: self.items_in.load(Relaxed),
            refused: self.refused.load(Relaxed),
            lost: self.lost.load(Relaxed),
            gaps: self.gaps.load(Relaxed),
            undeliverable: self.undeliverable.load(Relaxed),
            bad_frames: self.bad_frames.load(Relaxed),
            nodes_down: self.nodes_down.load(Relaxed),
        }
    }
}
