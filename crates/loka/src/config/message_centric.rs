//! The message-centric engine's settings (`[message_centric]` in TOML; docs/message-centric.md).

use serde::{Deserialize, Serialize};

/// How a message-centric worker whose queues are empty picks the worker it steals a queue from.
///
/// Names: `random`, `longest`, `none`, `nearest`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum VictimSelection {
    /// A uniformly random other worker.
    Random,
    /// Cforall's "longest victim": the worker whose last steal attempt is oldest (a worker busy
    /// for longest is the likeliest to have a backlog).
    #[default]
    Longest,
    /// No stealing: a worker runs only its own queues.
    None,
    /// loka's addition: the nearest workers first, by the topology's victim groups (same core,
    /// same cache, same node, then farther), random within a group.
    Nearest,
}

impl VictimSelection {
    /// Every selection, in the order sweeps visit them.
    pub const ALL: &'static [VictimSelection] = &[
        VictimSelection::Longest,
        VictimSelection::Random,
        VictimSelection::Nearest,
        VictimSelection::None,
    ];

    /// The name accepted by [`FromStr`](std::str::FromStr).
    pub const fn name(self) -> &'static str {
        match self {
            VictimSelection::Random => "random",
            VictimSelection::Longest => "longest",
            VictimSelection::None => "none",
            VictimSelection::Nearest => "nearest",
        }
    }
}

impl std::fmt::Display for VictimSelection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for VictimSelection {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        VictimSelection::ALL
            .iter()
            .copied()
            .find(|v| v.name() == s.trim())
            .ok_or_else(|| {
                format!("unknown victim selection `{s}` (known: random, longest, none, nearest)")
            })
    }
}

impl TryFrom<String> for VictimSelection {
    type Error = String;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<VictimSelection> for String {
    fn from(v: VictimSelection) -> String {
        v.name().to_owned()
    }
}

/// The data structure behind each message-centric queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueueKind {
    /// Cforall's copy queue: letters copied into a growable array, no allocation per send once
    /// grown, shrunk only when less than half used.
    #[default]
    Copy,
    /// A linked list, one node allocated per letter (the ablation Cforall compares against).
    List,
}

impl std::str::FromStr for QueueKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "copy" => Ok(QueueKind::Copy),
            "list" => Ok(QueueKind::List),
            _ => Err(format!("unknown queue kind `{s}` (known: copy, list)")),
        }
    }
}

/// The message-centric engine's settings (`[message_centric]` in TOML; docs/message-centric.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MessageCentricConfig {
    /// Queues each worker owns (Cforall's sharding; 1 to
    /// [`MAX_QUEUES_PER_WORKER`](Self::MAX_QUEUES_PER_WORKER)). Ignored when `queues` is set.
    pub queues_per_worker: usize,
    /// Total queues, split over the workers in contiguous ranges as evenly as possible (at least
    /// one per worker, at most [`MAX_QUEUES_PER_WORKER`](Self::MAX_QUEUES_PER_WORKER) per
    /// worker). `None`: `queues_per_worker` × workers.
    pub queues: Option<usize>,
    /// Whom an idle worker steals a queue from.
    pub victims: VictimSelection,
    /// Copy queues or linked lists.
    pub queue: QueueKind,
    /// Beyond Cforall: an actor whose posts come mostly from handlers on another worker (by a
    /// margin of 8) is re-bound, once it is idle (no letter queued, none being delivered), to
    /// the queue of the handler posting to it, so partners gather on one worker as the
    /// actor-centric engine's woken actors do (docs/message-centric.md, "Actors follow their
    /// partners"). `false`: every actor stays on the queue it was bound to at spawn, as in
    /// Cforall. No effect with one worker.
    pub follow: bool,
}

impl Default for MessageCentricConfig {
    fn default() -> Self {
        MessageCentricConfig {
            queues_per_worker: 16,
            queues: None,
            victims: VictimSelection::Longest,
            queue: QueueKind::Copy,
            follow: true,
        }
    }
}

impl MessageCentricConfig {
    /// The most queues one worker may own: the upper bound of `queues_per_worker`, and of
    /// `queues` as a multiple of the worker count ([`Config::validate`](crate::Config::validate)
    /// refuses more, naming the key and the allowed range).
    ///
    /// Why there is a bound at all: every queue is allocated when the system starts, so an
    /// unchecked count turned `--queues 18446744073709551615` into a "capacity overflow" panic,
    /// 10⁹ queues into an abort on a 128 GB allocation, and 10⁶ into a run that never finished.
    ///
    /// Why this one, per worker:
    /// * Time. A worker looks for letters by passing over all of its own queues (one load of each
    ///   queue's length hint, each on a cache line of its own), and an idle worker re-checks them
    ///   all under their locks before it parks; a letter waits for the pass to reach its queue. So
    ///   a pass costs in proportion to the queues a worker owns, whether they hold letters or
    ///   not: `pingpong` on one worker ran at 10.1 M messages/s with 16 queues, 3.7 M with 256,
    ///   1.1 M with 1,024, 0.34 M with 4,096 and 0.05 M with 16,384 (about 1 ns per queue per
    ///   message). What more queues buy — fewer posters meeting on one lock, finer pieces of a
    ///   backlog for thieves — is already had at the default 16 (a thief takes one queue, so
    ///   1,024 queues cut a worker's backlog into pieces of under 0.1 %), so beyond 1,024 a
    ///   queue only slows every worker down.
    /// * Memory. An idle queue costs one cache-padded `MessageQueue` (128 bytes on x86-64;
    ///   `engine/message_centric/queue.rs`)
    ///   and an 8-byte slot in the worker array, and allocates nothing until a letter arrives; so
    ///   1,024 queues are ~136 KiB per worker, less than a tenth of the worker's own 2 MiB thread
    ///   stack. With the worker count itself bounded by
    ///   [`Topology::MAX_PUS`](loka_topology::Topology::MAX_PUS) (4,096), the most any system
    ///   allocates for its queues is ~570 MB, and the queue index (32 bits in an actor's
    ///   binding) never overflows.
    pub const MAX_QUEUES_PER_WORKER: usize = 1024;

    /// The total number of queues for `workers` workers.
    pub fn total_queues(&self, workers: usize) -> usize {
        self.queues
            .unwrap_or(self.queues_per_worker.saturating_mul(workers))
    }
}
