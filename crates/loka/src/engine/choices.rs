//! The policy choices a system fixes when it starts, whatever its engine: how runnable actors are
//! routed ([`Routing`]) and how an idle worker picks victims ([`Victims`]). The actor-centric
//! engine carries them out on threads (`actor_centric/routing.rs`, `steal.rs`), the simulation
//! engine on virtual workers (`sim/`).

use crate::engine::placement::ActorPlacement;
use crate::policy::cls::Cls;
use crate::policy::hierarchical::{self, StealStep};
use crate::policy::lgs::WeightedVictims;
use crate::policy::places::PlaceVictims;
use crate::policy::{LgsVariants, PolicyKind, Route};
use crate::telemetry::WorkerCounters;
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
    /// `places`: actors live in a place (LASSI); mode A queues them per place.
    Places(crate::policy::PlacesMode),
}

/// Every this-many activations a worker looks at its inbox and its yielded actors before anything
/// else, so actors pushed there cannot be starved by a busy deque or next-slot chain.
pub(crate) const INBOX_CHECK_INTERVAL: u32 = 61;
/// Consecutive activations from the next slot before queued actors get a turn: a ping-pong pair
/// keeps its locality without starving everyone else on a single worker.
pub(crate) const NEXT_SLOT_STREAK_LIMIT: u32 = 32;

/// At the periodic look of activation `tick` (a multiple of [`INBOX_CHECK_INTERVAL`]): whether
/// the inbox goes before the yielded actors. They take turns, so neither wake-ups from outside nor
/// actors that used their budget can starve the other (docs/decisions/0035-yielded-queue.md).
pub(crate) fn inbox_first(tick: u32) -> bool {
    (tick / INBOX_CHECK_INTERVAL) % 2 == 0
}

impl Routing {
    /// The workers whose inboxes worker `me` looks at before re-running an actor that used its
    /// budget (docs/decisions/0035-yielded-queue.md): its innermost victim group under `cls` and `lgs`, nobody
    /// under the policies with their own rules for what may move (`hierarchical`, `places`).
    pub(crate) fn helped(self, me: usize, layout: &WorkerLayout) -> Vec<usize> {
        match self {
            Routing::Local | Routing::Lgs(_) => {
                layout.groups(me).first().cloned().unwrap_or_default()
            }
            Routing::Hierarchical { .. } | Routing::Places(_) => Vec::new(),
        }
    }

    pub(crate) fn of(policy: PolicyKind) -> Routing {
        match policy {
            PolicyKind::Auto => unreachable!("`auto` is resolved before the engine starts"),
            PolicyKind::Cls => Routing::Local,
            PolicyKind::Lgs(v) if v.tp => Routing::Local,
            PolicyKind::Lgs(v) => Routing::Lgs(v),
            PolicyKind::Hierarchical { auto_hubs } => Routing::Hierarchical { auto_hubs },
            PolicyKind::Places(mode) => Routing::Places(mode),
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
    /// `places` mode B: a random worker of the own place, then of a random other place.
    Places(PlaceVictims),
    /// `places:a`: the shared queue of a random other place (`mine`: the thief's place).
    PlaceQueues {
        /// The thief's place.
        mine: usize,
        /// How many places there are.
        places: usize,
    },
}

impl Victims {
    /// The victim choice of worker `me` under `policy` (`cls` is its `cls` state).
    pub(crate) fn new(policy: PolicyKind, me: usize, cls: &Cls, layout: &WorkerLayout) -> Victims {
        match policy {
            PolicyKind::Auto => unreachable!("`auto` is resolved before the engine starts"),
            PolicyKind::Cls => Victims::Random(cls.clone()),
            PolicyKind::Lgs(_) => Victims::Weighted(WeightedVictims::new(layout.groups(me))),
            PolicyKind::Hierarchical { .. } => Victims::Plan(hierarchical::steal_plan(me, layout)),
            PolicyKind::Places(mode) if mode.shared_queues() => Victims::PlaceQueues {
                mine: layout.place_of(me),
                places: layout.place_count(),
            },
            PolicyKind::Places(_) => Victims::Places(PlaceVictims::new(me, layout)),
        }
    }
}

/// Where a woken actor goes under `hierarchical` (see [`hierarchical::wake_target`]): a hub to
/// its worker's pinned queue, an actor away from its home node to a foreign queue, others back
/// where they last ran. `sender` is the waking worker (`None`: a plain thread). `None` when the
/// actor never ran and no sender worker is known. Shared by every engine that queues actors.
#[inline]
pub(crate) fn hierarchical_route(
    layout: &WorkerLayout,
    placement: &ActorPlacement,
    sender: Option<usize>,
) -> Option<Route> {
    let hub = placement.is_hub();
    let sender_on_home_node = match (sender, placement.home()) {
        (Some(s), Some(home)) => layout.node_of(s) == layout.node_of(home),
        (Some(_), None) => true,
        (None, _) => false,
    };
    let target = hierarchical::wake_target(
        hub,
        placement.home(),
        placement.last(),
        sender,
        sender_on_home_node,
    )?;
    if hub {
        // Even on its own worker a hub skips the next slot, which spills into stealable
        // queues; the owner looks at its pinned queue first anyway.
        return Some(Route::Pinned(target));
    }
    if let Some(home) = placement.home() {
        let home_node = layout.node_of(home);
        if home_node != layout.node_of(target) {
            return Some(Route::Foreign {
                worker: target,
                home_node,
            });
        }
    }
    Some(if Some(target) == sender {
        Route::LocalNext
    } else {
        Route::Tail(target)
    })
}

/// The online hub detection of `hierarchical:auto`, for a wake-up by actor `waker` (a
/// [`crate::engine::placement::waker_id`]) from worker `me`: an actor woken again and again from
/// other workers than its own, by changing partners, talks with many partners spread over the
/// machine, so it becomes a hub (counted in `counters`) and stays put.
#[inline]
pub(crate) fn note_hierarchical_wake(
    placement: &ActorPlacement,
    me: usize,
    waker: u32,
    counters: &WorkerCounters,
) {
    if placement.is_hub() {
        return;
    }
    match placement.last() {
        Some(last) if last != me && placement.note_foreign_sender(waker) => counters.hubs.bump(1),
        Some(last) if last != me => {}
        Some(_) => placement.note_local_wake(),
        None => {}
    }
}

/// `places`: the home of a new actor — a worker of its hinted place (else of the place the
/// round robin gives), itself chosen round robin inside the place. `ticket` counts the engine's
/// spawns so far. Decided when the task is initialised, so a lazy actor has its place before its
/// first wake-up.
pub(crate) fn places_home(layout: &WorkerLayout, hint: Option<usize>, ticket: usize) -> usize {
    let n = layout.place_count();
    let place = crate::policy::places::spawn_place(hint, ticket, n);
    crate::policy::places::home_in_place(layout, place, ticket / n.max(1))
}

/// `places`: the route of a new actor's first activation, whose home is `home` (set at
/// initialisation), spawned from worker `from` (`None`: a plain thread).
pub(crate) fn places_spawn_route(
    mode: crate::policy::PlacesMode,
    layout: &WorkerLayout,
    home: usize,
    from: Option<usize>,
) -> Route {
    match mode {
        crate::policy::PlacesMode::Shared => Route::Place(layout.place_of(home)),
        crate::policy::PlacesMode::PerWorker if from == Some(home) => Route::LocalHead,
        crate::policy::PlacesMode::PerWorker => Route::Tail(home),
    }
}
