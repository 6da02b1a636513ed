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
    /// Queues each worker owns (Cforall's sharding; ≥ 1). Ignored when `queues` is set.
    pub queues_per_worker: usize,
    /// Total queues, split over the workers in contiguous ranges as evenly as possible (at least
    /// one per worker). `None`: `queues_per_worker` × workers.
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
    /// The total number of queues for `workers` workers.
    pub fn total_queues(&self, workers: usize) -> usize {
        self.queues
            .unwrap_or(self.queues_per_worker.saturating_mul(workers))
    }
}
