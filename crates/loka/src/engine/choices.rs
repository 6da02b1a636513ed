//! The policy choices a system fixes when it starts, whatever its engine: how runnable actors are
//! routed ([`Routing`]) and how an idle worker picks victims ([`Victims`]). The actor-centric
//! engine carries them out on threads (`actor_centric/routing.rs`, `steal.rs`), the simulation
//! engine on virtual workers (`sim/`).

use crate::policy::cls::Cls;
use crate::policy::hierarchical::{self, StealStep};
use crate::policy::lgs::WeightedVictims;
use crate::policy::{LgsVariants, PolicyKind};
use loka_topology::WorkerLayout;

/// How runnable actors are routed, decided once from the scheduler policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Routing {
    /// `cls`, and `lgs:tp` (pinned workers, free actors): a woken actor runs on the sender's
    /// worker.
    Local,
    /// `lgs` other than `tp`: wake-ups follow home PUs (Listing 5.3).
    Lgs(LgsVariants),
    /// `hierarchical`: pinned hubs, home nodes, foreign queues.
    Hierarchical {
        /// Mark hubs online (`hierarchical:auto`).
        auto_hubs: bool,
    },
}

impl Routing {
    pub(crate) fn of(policy: PolicyKind) -> Routing {
        match policy {
            PolicyKind::Auto => unreachable!("`auto` is resolved before the engine starts"),
            PolicyKind::Cls => Routing::Local,
            PolicyKind::Lgs(v) if v.tp => Routing::Local,
            PolicyKind::Lgs(v) => Routing::Lgs(v),
            PolicyKind::Hierarchical { auto_hubs } => Routing::Hierarchical { auto_hubs },
        }
    }
}

/// How a thief picks victims.
#[derive(Debug, Clone)]
pub(crate) enum Victims {
    /// `cls`: uniformly random other worker.
    Random(Cls),
    /// `lgs`: weighted over nested groups.
    Weighted(WeightedVictims),
    /// `hierarchical`: Alg. 4.4's plan.
    Plan(Vec<StealStep>),
}

impl Victims {
    /// The victim choice of worker `me` under `policy` (`cls` is its `cls` state).
    pub(crate) fn new(policy: PolicyKind, me: usize, cls: &Cls, layout: &WorkerLayout) -> Victims {
        match policy {
            PolicyKind::Auto => unreachable!("`auto` is resolved before the engine starts"),
            PolicyKind::Cls => Victims::Random(cls.clone()),
            PolicyKind::Lgs(_) => Victims::Weighted(WeightedVictims::new(layout.groups(me))),
            PolicyKind::Hierarchical { .. } => Victims::Plan(hierarchical::steal_plan(me, layout)),
        }
    }
}
