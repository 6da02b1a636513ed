//! The catalogue of engines: their names, what each can run, and the few facts about an engine
//! that the layers below the engines read (how many timer shards it keeps, how it resolves
//! `auto`). The engines themselves are the sibling folders; this file names no code of theirs.

use crate::policy::PolicyKind;
use serde::{Deserialize, Serialize};

/// The engine running the actors: how runnable work is queued and handed to worker threads. Every
/// engine runs the same actors with the same guarantees; they differ in what they queue and where.
///
/// Names (`engine = "..."` in TOML, `LOKA_ENGINE`, `--engine`): `actor-centric`, `sim`,
/// `message-centric`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum EngineKind {
    /// Per-worker queues of runnable actors (CAF, Erlang, LGS, hierarchical): a worker dequeues an
    /// actor and runs a batch of its messages.
    #[default]
    ActorCentric,
    /// The simulation engine: the same actors and policies on virtual workers of the configured
    /// topology, in virtual time, on one thread, reproducibly (docs/simulation.md).
    Sim,
    /// Cforall's inverted executor: *messages* wait in sharded queues owned by the workers, which
    /// take a queue's whole contents at once (gulping) and steal whole queues
    /// (docs/message-centric.md).
    MessageCentric,
}

impl EngineKind {
    /// Every engine, in the order sweeps and tests visit them.
    pub const ALL: &'static [EngineKind] = &[
        EngineKind::ActorCentric,
        EngineKind::Sim,
        EngineKind::MessageCentric,
    ];

    /// The engine's name, as accepted by [`FromStr`](std::str::FromStr).
    pub const fn name(self) -> &'static str {
        match self {
            EngineKind::ActorCentric => "actor-centric",
            EngineKind::Sim => "sim",
            EngineKind::MessageCentric => "message-centric",
        }
    }

    /// Whether this engine can carry out `policy`'s decisions. The actor-centric engine runs every
    /// policy loka has, and so does the simulation engine (without `hierarchical`'s periodic load
    /// balancing, docs/simulation.md); an engine added later declares here what it supports, and
    /// [`Config::validate`](crate::Config::validate) turns an unsupported pair into [`ConfigError::Unsupported`](crate::ConfigError::Unsupported). The
    /// message-centric engine queues messages, not actors, so the actor-placing policies mean
    /// nothing there: it runs `cls` (and `auto`, which resolves to it); its own choice is the
    /// victim selection ([`MessageCentricConfig::victims`](crate::MessageCentricConfig::victims)).
    pub fn supports(self, policy: PolicyKind) -> bool {
        match self {
            EngineKind::ActorCentric | EngineKind::Sim => true,
            EngineKind::MessageCentric => matches!(policy, PolicyKind::Cls | PolicyKind::Auto),
        }
    }

    /// Whether this engine carries out execution policies other than `Task` (dedicated threads,
    /// inline runs). The message-centric engine delivers letters from its own queues and the
    /// simulation engine runs virtual workers on one thread, so both run every actor as a task.
    pub const fn runs_exec_policies(self) -> bool {
        matches!(self, EngineKind::ActorCentric)
    }

    /// Whether this engine carries out `hierarchical`'s periodic load balancing (Erlang's
    /// migration limits and paths): the actor-centric engine and its simulation.
    pub const fn balances(self) -> bool {
        matches!(self, EngineKind::ActorCentric | EngineKind::Sim)
    }

    /// Whether this engine carries out an adaptive `auto` (`engine/adapt.rs`): the ones that
    /// queue actors under the locality policies `auto` moves away from.
    pub const fn adapts(self) -> bool {
        matches!(self, EngineKind::ActorCentric | EngineKind::Sim)
    }

    /// Whether this engine carries out `auto`'s gathering of work on fewer workers
    /// (`engine/gather.rs`): the actor-centric engine, whose workers pay a cache line moved
    /// between cores for each message that crosses; the simulation prices no such regime.
    pub const fn gathers(self) -> bool {
        matches!(self, EngineKind::ActorCentric)
    }

    /// Whether this engine runs on the real machine (its timings are wall-clock time); the
    /// simulation engine's are virtual.
    pub const fn is_real(self) -> bool {
        matches!(self, EngineKind::ActorCentric | EngineKind::MessageCentric)
    }

    /// The policy this engine runs when `requested` is asked for on a machine of `nodes` NUMA
    /// nodes and `workers` workers, and why when it chose (`auto`). The message-centric engine
    /// queues messages, not actors: `auto` is plain work stealing there, and its real choice is
    /// its victim selection. The other engines let the policy layer's `auto` decide.
    pub(crate) fn resolve_policy(
        self,
        requested: PolicyKind,
        nodes: usize,
        workers: usize,
    ) -> (PolicyKind, Option<&'static str>) {
        match (self, requested) {
            (EngineKind::MessageCentric, PolicyKind::Auto) => (
                PolicyKind::Cls,
                Some("message-centric engine: it queues messages, not actors; its victim selection is its policy"),
            ),
            _ => requested.resolve(nodes, workers),
        }
    }

    /// How many timer shards a system of `workers` workers keeps under this engine: one per
    /// worker (each fires its own, where the actors that armed them run), one in all under the
    /// simulation (its single driver thread fires every timer).
    pub(crate) fn timer_shards(self, workers: usize) -> usize {
        match self {
            EngineKind::Sim => 1,
            EngineKind::ActorCentric | EngineKind::MessageCentric => workers.max(1),
        }
    }
}

impl std::fmt::Display for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An engine name loka does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown engine `{name}` (known: {known})", known = EngineKind::ALL.iter().map(|e| e.name()).collect::<Vec<_>>().join(", "))]
pub struct UnknownEngine {
    /// The name given.
    pub name: String,
}

impl std::str::FromStr for EngineKind {
    type Err = UnknownEngine;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        EngineKind::ALL
            .iter()
            .copied()
            .find(|e| e.name() == s.trim())
            .ok_or_else(|| UnknownEngine { name: s.to_owned() })
    }
}

impl TryFrom<String> for EngineKind {
    type Error = UnknownEngine;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<EngineKind> for String {
    fn from(e: EngineKind) -> String {
        e.name().to_owned()
    }
}
