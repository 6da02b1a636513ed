//! The policy choices a system fixes when it starts, whatever its engine: how runnable actors are
//! routed ([`Routing`]) and how an idle worker picks victims ([`Victims`]), and the decisions
//! made from them, as pure functions of the state both engines have: where a woken or spawned
//! actor goes ([`woken_route`], [`external_woken_route`], [`spawn_route`]) here, and in which
//! order a thief tries its victims ([`steal_once`]) in `steal.rs`. The actor-centric engine carries them out on
//! threads (`actor_centric/routing.rs`, `steal.rs`), the simulation engine on virtual workers
//! (`sim/routing.rs`, `sim/driver.rs`, which adds its costs around the decisions).

use crate::engine::placement::ActorPlacement;
use crate::policy::hierarchical;
use crate::policy::placement::{Placement, PlacementStrategy};
use crate::policy::{LgsVariants, PlacesMode, PolicyKind, Route};
use crate::telemetry::WorkerCounters;
use loka_topology::WorkerLayout;

mod steal;
pub(crate) use steal::*;

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
    /// `erlang`: a woken actor goes back to the tail of the queue of the worker it last ran on.
    Erlang,
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
            Routing::Hierarchical { .. } | Routing::Places(_) | Routing::Erlang => Vec::new(),
        }
    }

    /// Whether every wake-up from a worker goes to that worker's own queues under this routing
    /// on `layout`, with no bookkeeping on the way: `cls` and `lgs:tp`, and LGS without `alt`
    /// where all workers share one innermost victim group (one NUMA node, the default
    /// grouping), since every sender is then a neighbour of every home (Listing 5.3). The
    /// actor-centric engine then takes the same fast path for them as for `cls` (locality costs
    /// nothing where it cannot help; docs/decisions/0078-a-home-that-is-behind-yields.md).
    /// `lgs:auto` too: its release rule needs remote wake-ups by actors, and there are none; the
    /// local ones it would count are only ever weighed against those
    /// (docs/decisions/0081-fast-paths-where-locality-decides-the-same.md).
    ///
    /// `places` (mode B) where the machine is one place: every sender is in every home's
    /// place, so [`crate::policy::places::route_woken`] always answers the `cls` route.
    pub(crate) fn wakes_locally(self, layout: &WorkerLayout) -> bool {
        match self {
            Routing::Local => true,
            Routing::Lgs(v) => !v.alt && (0..layout.workers()).all(|w| layout.same_group0(0, w)),
            Routing::Places(PlacesMode::PerWorker) => layout.place_count() == 1,
            _ => false,
        }
    }

    /// Whether this routing sends every wake-up of an actor that is not a hub to the waking
    /// worker's next slot on `layout`: `hierarchical` on one NUMA node, where every sender is on
    /// every actor's home node ([`hierarchical::wake_target`]). Hubs still go to their worker;
    /// under `hierarchical:auto` the wake-up is counted for the hub detection first
    /// ([`note_hierarchical_wake`]), as the routed decision does.
    pub(crate) fn wakes_locally_unless_hub(self, layout: &WorkerLayout) -> bool {
        matches!(self, Routing::Hierarchical { .. }) && layout.node_count() == 1
    }

    pub(crate) fn of(policy: PolicyKind) -> Routing {
        match policy {
            PolicyKind::Auto => unreachable!("`auto` is resolved before the engine starts"),
            PolicyKind::Cls => Routing::Local,
            PolicyKind::Lgs(v) if v.tp => Routing::Local,
            PolicyKind::Lgs(v) => Routing::Lgs(v),
            PolicyKind::Hierarchical { auto_hubs } => Routing::Hierarchical { auto_hubs },
            PolicyKind::Places(mode) => Routing::Places(mode),
            PolicyKind::Erlang => Routing::Erlang,
        }
    }
}

/// Where a woken actor goes under `hierarchical` (see [`hierarchical::wake_target`]): a hub to
/// its worker's pinned queue, an actor away from its home node to a foreign queue, others back
/// where they last ran; a small actor ([`ActorPlacement::is_small`]) to the waking worker.
/// `sender` is the waking worker (`None`: a plain thread); `idle_hand_off` says whether a push
/// to a worker would hand the actor to an idle one (asleep or searching) while the sender's
/// worker has nothing else to run (a hint: a wrong answer costs a hand-off or some locality,
/// never work). `None` when the actor never ran and no sender worker is known. Shared by every
/// engine that queues actors.
#[inline]
pub(crate) fn hierarchical_route(
    layout: &WorkerLayout,
    placement: &ActorPlacement,
    sender: Option<usize>,
    idle_hand_off: impl Fn(usize) -> bool,
) -> Option<Route> {
    let hub = placement.is_hub();
    let sender_on_home_node = match (sender, placement.home()) {
        (Some(s), Some(home)) => layout.node_of(s) == layout.node_of(home),
        (Some(_), None) => true,
        (None, _) => false,
    };
    let target = hierarchical::wake_target(
        hub,
        placement.is_small(),
        placement.home(),
        placement.last(),
        sender,
        sender_on_home_node,
        idle_hand_off,
    )?;
    if hub {
        // Even on its own worker a hub skips the next slot, which spills into stealable
        // queues; the owner looks at its pinned queue first anyway.
        return Some(Route::Pinned(target));
    }
    if Some(target) == sender {
        // Here, the worker it last ran on or in place of an idle hand-off: next, as under `cls`,
        // even away from its home node. Queued as foreign, it would be stealable work, and the
        // push would wake a sleeper to look at it: a wake-up per message of a chain that lives
        // off its home node (docs/decisions/0071-hierarchical-spares-sleepers.md). An actor that
        // waits here (one that used its budget: [`hierarchical_requeue`]) stays findable by its
        // home node.
        return Some(Route::LocalNext);
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
    Some(Route::Tail(target))
}

/// Where an actor that used its budget on worker `me` waits under `hierarchical`: a hub in
/// `me`'s pinned queue, an actor away from its home node in `me`'s foreign queue for that node
/// (its home node's idle workers bring it home), `None`: the engine's ordinary requeue.
#[inline]
pub(crate) fn hierarchical_requeue(
    layout: &WorkerLayout,
    placement: &ActorPlacement,
    me: usize,
) -> Option<Route> {
    if placement.is_hub() {
        return Some(Route::Pinned(me));
    }
    let home_node = layout.node_of(placement.home()?);
    (home_node != layout.node_of(me)).then_some(Route::Foreign {
        worker: me,
        home_node,
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

/// `places`: the homes given so far in each place, so that the hinted actors of one place go
/// round robin over its workers whatever the hints of the others. Shared by the engine's
/// spawning threads (a relaxed counter each: only the spread depends on it).
pub(crate) struct PlaceTickets(Box<[crate::sync::AtomicUsize]>);

impl PlaceTickets {
    /// Counters for the places of `layout` (none when the policy is not `places`).
    pub(crate) fn new(routing: Routing, layout: &WorkerLayout) -> Self {
        let places = match routing {
            Routing::Places(_) => layout.place_count(),
            _ => 0,
        };
        PlaceTickets(
            (0..places)
                .map(|_| crate::sync::AtomicUsize::new(0))
                .collect(),
        )
    }

    /// The home of a new actor under `places`: for an actor hinted to a place (and not placed on
    /// a worker explicitly), a worker of that place, round robin inside it; `None` for every
    /// other actor, which has no place and is routed as under `cls`
    /// (docs/decisions/0083-unhinted-actors-have-no-place.md). Decided when the task is
    /// initialised, so a lazy actor has its place before its first wake-up.
    pub(crate) fn home(
        &self,
        layout: &WorkerLayout,
        options: &crate::runtime::options::SpawnOptions,
    ) -> Option<usize> {
        let hint = options
            .place
            .filter(|_| options.placement == Placement::Default)?;
        if self.0.is_empty() {
            return None;
        }
        let place = crate::policy::places::spawn_place(hint, self.0.len());
        let ticket = self.0[place].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Some(crate::policy::places::home_in_place(layout, place, ticket))
    }
}

/// The placement state of a new actor spawned with `options`, under the policy whose routing is
/// `routing` (the policy's, not `auto`'s current one: an actor keeps its class): under LGS and
/// `hierarchical` whether it is small (LGS keeps a small actor with an idle waker on another
/// node, docs/decisions/0084-small-actors-stay-with-an-idle-waker.md; `hierarchical` runs it
/// where it is woken, docs/decisions/0085-hierarchical-small-actors-follow-their-wakers.md; the
/// other policies' spawns skip the test), under `places` its home in its hinted place
/// (`tickets`). What both engines' `init_task` store.
pub(crate) fn initial_placement(
    routing: Routing,
    tickets: &PlaceTickets,
    layout: &WorkerLayout,
    header: &crate::runtime::task::Header,
    options: &crate::runtime::options::SpawnOptions,
) -> ActorPlacement {
    let small = matches!(routing, Routing::Lgs(_) | Routing::Hierarchical { .. })
        && crate::engine::placement::is_small_state(header.state_bytes(), options.footprint);
    let placement = ActorPlacement::new(options, small);
    // No store for an actor without a place.
    if let Some(home) = tickets.home(layout, options) {
        placement.set_home(Some(home));
    }
    placement
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

/// Where an actor woken by a send from worker `me` goes under `routing`, whose policy routes
/// each wake-up (`local`: the `cls` route of the waking worker, for the policies that keep
/// wake-ups local), with the bookkeeping the decision carries (LGS's home-PU pushes and hub
/// release, `hierarchical:auto`'s hub detection). `waker`: the waking actor
/// ([`crate::engine::placement::waker_id`]); `idle_hand_off`: whether a push to a worker would
/// hand the actor to an idle one while this worker has nothing else to run (see
/// [`hierarchical_route`]);
/// `longer_queue`: whether the queue a [`Route::Tail`] or [`Route::Head`] to another worker pushes
/// to already holds more actors than this worker's (LGS's yielding home). The one rule both
/// engines carry out: the actor-centric engine on its threads (`actor_centric/routing.rs`), the
/// simulation on virtual workers (`sim/routing.rs`).
#[inline]
#[allow(clippy::too_many_arguments)]
pub(crate) fn woken_route(
    routing: Routing,
    me: usize,
    placement: &ActorPlacement,
    waker: u32,
    layout: &WorkerLayout,
    local: Route,
    counters: &WorkerCounters,
    idle_hand_off: impl Fn(usize) -> bool,
    longer_queue: impl Fn(Route) -> bool,
) -> Route {
    match routing {
        Routing::Local => local,
        Routing::Lgs(variants) => {
            // LGS, Listing 5.3, plus the hub rule's bookkeeping: a push to a home PU elsewhere
            // is counted, and under `lgs:auto` an actor woken again and again from elsewhere is
            // released (it runs where its partners are from then on). Beyond the text, a home
            // that cannot take the actor at once yields: a wake-up whose home PU's queue holds
            // more actors than this worker's, or whose home on this worker's own node is idle
            // (asleep or searching) while this worker has nothing else to run (`hierarchical`'s
            // idle hand-off), runs here instead, as under `cls`, and keeps its home for the next
            // one. An idle home on another node gets an actor with data, as in the text: there
            // its data is remote from this worker; a small actor (no more state than the lines
            // the hand-off moves) stays here wherever its home is
            // (docs/decisions/0078-a-home-that-is-behind-yields.md,
            // docs/decisions/0082-an-idle-hand-off-buys-nothing.md,
            // docs/decisions/0084-small-actors-stay-with-an-idle-waker.md).
            let home = placement.pinned_home();
            let neighbours = |a, b| layout.same_group0(a, b);
            let route =
                crate::policy::lgs::route_woken(variants, Some(me), home, neighbours, local);
            match route {
                Route::Tail(h) | Route::Head(h) => {
                    if variants.auto && placement.note_remote_wake(waker) {
                        counters.hubs_released.bump(1);
                        return local;
                    }
                    let near = placement.is_small() || layout.node_of(h) == layout.node_of(me);
                    if longer_queue(route) || (near && idle_hand_off(h)) {
                        counters.hpu_yields.bump(1);
                        return local;
                    }
                    counters.hpu_pushes.bump(1);
                }
                Route::LocalNext | Route::LocalHead => {
                    if variants.auto && home.is_some() {
                        placement.note_local_wake();
                    }
                }
                Route::Pinned(_) | Route::Foreign { .. } | Route::Place(_) => {
                    unreachable!("LGS routes only locally or to a home PU's head or tail")
                }
            }
            route
        }
        Routing::Hierarchical { auto_hubs } => {
            if auto_hubs {
                note_hierarchical_wake(placement, me, waker, counters);
            }
            hierarchical_route(layout, placement, Some(me), idle_hand_off)
                .unwrap_or(Route::LocalNext)
        }
        Routing::Places(mode) => {
            // Without a hint an actor has no place: it is routed as if its home were the waking
            // worker, so as under `cls` in mode B, and to the waking worker's place, whose queue
            // the place's workers share and thieves look at, in mode A
            // (docs/decisions/0083-unhinted-actors-have-no-place.md).
            let home = placement.home().unwrap_or(me);
            crate::policy::places::route_woken(mode, layout, home, Some(me), local)
        }
        Routing::Erlang => {
            // Back to the tail of its own run queue, even when that is this worker's.
            let target = crate::policy::erlang::wake_target(placement.last(), Some(me));
            Route::Tail(target.unwrap_or(me))
        }
    }
}

/// Where an actor woken by a send from a plain thread goes under `routing`; `None`: round robin
/// over the workers (the engine's own counter, `cls::route_external`).
#[inline]
pub(crate) fn external_woken_route(
    routing: Routing,
    placement: &ActorPlacement,
    layout: &WorkerLayout,
) -> Option<Route> {
    match routing {
        Routing::Hierarchical { .. } => hierarchical_route(layout, placement, None, |_| false),
        // LGS, Listing 5.3: from a plain thread, to the tail of the actor's home.
        Routing::Lgs(variants) => placement.pinned_home().map(|home| {
            let neighbours = |a, b| layout.same_group0(a, b);
            crate::policy::lgs::route_woken(
                variants,
                None,
                Some(home),
                neighbours,
                Route::LocalHead,
            )
        }),
        Routing::Local => None,
        Routing::Erlang => {
            crate::policy::erlang::wake_target(placement.last(), None).map(Route::Tail)
        }
        Routing::Places(mode) => placement.home().map(|home| {
            crate::policy::places::route_woken(mode, layout, home, None, Route::LocalHead)
        }),
    }
}

/// What a spawn's route depends on besides the policy: the engine's state, which each engine
/// keeps its own way (atomics on threads, the simulation's state under its lock).
pub(crate) trait SpawnSite {
    /// The route of an unplaced actor by the `cls` rule: the spawning worker's choice for
    /// `placement`, or, from a plain thread, the next in the engine's round robin.
    fn default_route(&mut self, placement: Placement) -> Route;
    /// The next ticket of the placement strategy for hubs (`true`) or regular actors.
    fn ticket(&mut self, hub: bool) -> usize;
}

/// The route of a new actor's first activation, spawned from worker `from` (`None`: a plain
/// thread): an explicit placement wins, then `places` putting a hinted actor in its place
/// ([`places_spawn_route`]), then the placement strategy for its kind (hub or regular). Under
/// LGS the worker it is placed on becomes its home PU; under `hierarchical` a hub is pinned
/// there. The one rule of both engines (`actor_centric/routing.rs`, `sim/routing.rs`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn spawn_route(
    routing: Routing,
    placement: &ActorPlacement,
    requested: Placement,
    strategy: PlacementStrategy,
    from: Option<usize>,
    layout: &WorkerLayout,
    seed: u64,
    site: &mut impl SpawnSite,
) -> Route {
    let hub = placement.is_hub();
    let explicit = requested != Placement::Default;
    let route =
        if let (Routing::Places(mode), false, Some(home)) = (routing, explicit, placement.home()) {
            // A hinted actor (its home was set at initialisation, `PlaceTickets::home`).
            places_spawn_route(mode, layout, home, from)
        } else if let (Routing::Erlang, false, PlacementStrategy::Default, Some(parent)) =
            (routing, explicit, strategy, from)
        {
            // The tail of the parent's run queue (BEAM's `erl_create_process`).
            Route::Tail(parent)
        } else if explicit || strategy == PlacementStrategy::Default {
            site.default_route(requested)
        } else {
            let ticket = site.ticket(hub);
            let mut rng = fastrand::Rng::with_seed(seed ^ ticket as u64);
            match strategy.place(from, ticket, &mut rng, layout) {
                w if Some(w) == from => Route::LocalHead,
                w => Route::Tail(w),
            }
        };
    let placed = match route {
        Route::LocalNext | Route::LocalHead => from,
        Route::Tail(w) | Route::Head(w) | Route::Pinned(w) => Some(w),
        Route::Foreign { worker, .. } => Some(worker),
        // (its home was set with its place, at initialisation)
        Route::Place(_) => None,
    };
    if let Routing::Lgs(_) = routing {
        placement.set_home(placed);
    }
    match (routing, placed) {
        // A hub lives on the worker it was placed on, out of every thief's reach.
        (Routing::Hierarchical { .. }, Some(w)) if hub => Route::Pinned(w),
        _ => route,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loka_topology::{CostMatrix, LayoutOptions, Topology};

    /// Hinted actors go round robin over the workers of their own place, whatever the hints of
    /// the others (with one counter for all places, hints alternating between two places of
    /// two workers gave every actor of a place the same worker); unhinted actors, and actors
    /// placed on a worker, get no home.
    #[test]
    fn places_homes_go_round_robin_inside_each_place() {
        let layout = layout_of("synthetic:package:2 core:2 pu:1");
        let tickets = PlaceTickets::new(Routing::Places(PlacesMode::PerWorker), &layout);
        let homes: Vec<_> = [0, 1, 0, 1, 0, 1]
            .into_iter()
            .map(|p| tickets.home(&layout, &crate::SpawnOptions::new().place(p)))
            .collect();
        let (p0, p1) = (layout.workers_of_place(0), layout.workers_of_place(1));
        assert_eq!(
            homes,
            [p0[0], p1[0], p0[1], p1[1], p0[0], p1[0]].map(Some),
            "{p0:?} {p1:?}"
        );
        assert_eq!(tickets.home(&layout, &crate::SpawnOptions::new()), None);
        let on_worker = crate::SpawnOptions::new()
            .place(1)
            .placement(Placement::Worker(0));
        assert_eq!(tickets.home(&layout, &on_worker), None);
        let cls = PlaceTickets::new(Routing::Local, &layout);
        assert_eq!(
            cls.home(&layout, &crate::SpawnOptions::new().place(1)),
            None
        );
    }

    /// The worker layout of `machine` (a topology spec) with the default options.
    fn layout_of(machine: &str) -> WorkerLayout {
        let topo = Topology::load(&machine.parse().unwrap()).unwrap();
        WorkerLayout::new(
            &topo,
            &CostMatrix::hierarchical(&topo),
            &LayoutOptions::default(),
        )
        .unwrap()
    }

    /// Where `lgs:alt` routes a wake-up from worker 0 of an actor whose home is worker 1, on a
    /// one-node machine of four PUs, given what the engine says of worker 1: idle while
    /// worker 0 has nothing else to run (`idle`), and its inbox holding more actors than
    /// worker 0's queues (`queued`). Returns the route, the (pushes, yields) counted and the home
    /// after it.
    fn alt_wake(idle: bool, queued: bool) -> (Route, u64, u64, Option<usize>) {
        alt_wake_on("synthetic:package:1 core:4 pu:1", idle, queued)
    }

    /// [`alt_wake`] on another machine of four PUs.
    fn alt_wake_on(machine: &str, idle: bool, queued: bool) -> (Route, u64, u64, Option<usize>) {
        let layout = layout_of(machine);
        let placement =
            ActorPlacement::new(&crate::runtime::options::SpawnOptions::default(), false);
        placement.set_home(Some(1));
        let counters = WorkerCounters::default();
        let route = woken_route(
            Routing::Lgs(LgsVariants::ALT),
            0,
            &placement,
            7,
            &layout,
            Route::LocalNext,
            &counters,
            |w| idle && w == 1,
            |r| queued && r == Route::Tail(1),
        );
        let home = placement.pinned_home();
        (
            route,
            counters.hpu_pushes.get(),
            counters.hpu_yields.get(),
            home,
        )
    }

    #[test]
    fn a_home_that_cannot_take_the_actor_at_once_yields_the_wake_up() {
        // Listing 5.3: an awake home with nothing queued gets the actor at its tail.
        assert_eq!(alt_wake(false, false), (Route::Tail(1), 1, 0, Some(1)));
        // Its inbox is the longer queue: the waking worker runs this one, and the actor
        // keeps its home for the next wake-up.
        assert_eq!(alt_wake(false, true), (Route::LocalNext, 0, 1, Some(1)));
        // It sleeps and the waking worker has nothing else to do: no wake-up, run here.
        assert_eq!(alt_wake(true, false), (Route::LocalNext, 0, 1, Some(1)));
        // One PU per node, worker 0 on one and the home on another: the sleeping home
        // is woken (the actor's data is remote from the waking worker); a longer queue there
        // still yields.
        let four_nodes = "synthetic:package:4 numa:1 core:1 pu:1";
        assert_eq!(
            alt_wake_on(four_nodes, true, false),
            (Route::Tail(1), 1, 0, Some(1))
        );
        assert_eq!(
            alt_wake_on(four_nodes, false, true),
            (Route::LocalNext, 0, 1, Some(1))
        );
    }

    #[test]
    fn lgs_wakes_locally_where_every_worker_neighbours_every_other() {
        let one_node = layout_of("synthetic:package:1 core:4 pu:1");
        let two_nodes = layout_of("synthetic:package:2 numa:1 core:2 pu:1");
        let lgs = |v| Routing::Lgs(v);
        assert!(Routing::Local.wakes_locally(&two_nodes));
        assert!(lgs(LgsVariants::NONE).wakes_locally(&one_node));
        assert!(lgs(LgsVariants::DFS).wakes_locally(&one_node));
        // Only the home PU is local under `alt`; `auto` has no remote wake-up to count here.
        assert!(!lgs(LgsVariants::ALT).wakes_locally(&one_node));
        assert!(lgs(LgsVariants::AUTO).wakes_locally(&one_node));
        // Two nodes: a wake-up from the other node goes home.
        assert!(!lgs(LgsVariants::NONE).wakes_locally(&two_nodes));
        assert!(!Routing::Hierarchical { auto_hubs: false }.wakes_locally(&one_node));
    }

    /// The actor-centric engine's fast paths (`wakes_locally`, `wakes_locally_unless_hub`)
    /// skip `woken_route`: on a machine where they apply, it must answer the waking worker's
    /// next slot for every sender, home, last worker and engine state (and a hub's own worker).
    #[test]
    fn the_fast_paths_take_the_routed_decision() {
        let one_node = layout_of("synthetic:package:1 core:4 pu:1");
        let two_nodes = layout_of("synthetic:package:2 numa:1 core:2 pu:1");
        let hierarchical = Routing::Hierarchical { auto_hubs: false };
        let places = Routing::Places(PlacesMode::PerWorker);
        assert!(places.wakes_locally(&one_node));
        assert!(hierarchical.wakes_locally_unless_hub(&one_node));
        assert!(!places.wakes_locally(&two_nodes));
        assert!(!hierarchical.wakes_locally_unless_hub(&two_nodes));
        let auto = Routing::Hierarchical { auto_hubs: true };
        assert!(auto.wakes_locally_unless_hub(&one_node));
        assert!(!Routing::Places(PlacesMode::Shared).wakes_locally(&one_node));
        let counters = WorkerCounters::default();
        let lgs_auto = Routing::Lgs(LgsVariants::AUTO);
        for routing in [hierarchical, auto, places, lgs_auto] {
            for hub in [false, true] {
                for (me, home, last, idle) in
                    (0..64).map(|i| (i % 4, i / 4 % 4, i / 16, i % 3 == 0))
                {
                    let options = crate::runtime::options::SpawnOptions::default().hub(hub);
                    let placement = ActorPlacement::new(&options, false);
                    placement.set_home(Some(home));
                    placement.swap_last(last);
                    let route = woken_route(
                        routing,
                        me,
                        &placement,
                        7,
                        &one_node,
                        Route::LocalNext,
                        &counters,
                        |_| idle,
                        |_| idle,
                    );
                    let expected = match routing {
                        Routing::Hierarchical { .. } if hub => Route::Pinned(home),
                        _ => Route::LocalNext,
                    };
                    assert_eq!(
                        route, expected,
                        "{routing:?} hub {hub}: from {me}, home {home}, last {last}, idle {idle}"
                    );
                }
            }
        }
        // Nor does the routed decision count anything the fast path skips: no push home, no
        // release.
        assert_eq!(
            (counters.hpu_pushes.get(), counters.hubs_released.get()),
            (0, 0)
        );
    }
}
