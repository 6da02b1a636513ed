//! The policy choices a system fixes when it starts, whatever its engine: how runnable actors are
//! routed ([`Routing`]) and how an idle worker picks victims ([`Victims`]), and the decisions
//! made from them, as pure functions of the state both engines have: where a woken or spawned
//! actor goes ([`woken_route`], [`external_woken_route`], [`spawn_route`]) here, and in which
//! order a thief tries its victims ([`steal_once`]) in `steal.rs`. The actor-centric engine carries them out on
//! threads (`actor_centric/routing.rs`, `steal.rs`), the simulation engine on virtual workers
//! (`sim/routing.rs`, `sim/driver.rs`, which adds its costs around the decisions).

use crate::engine::adapt::Adapt;
use crate::engine::placement::{ActorPlacement, Waker};
use crate::policy::hierarchical;
use crate::policy::placement::{Placement, PlacementStrategy};
use crate::policy::{LgsVariants, PlacesMode, PolicyKind, Route};
use crate::runtime::TaskRef;
use crate::telemetry::WorkerCounters;
use loka_topology::WorkerLayout;

mod steal;
pub(crate) use steal::*;

/// Which hubs `hierarchical` knows (docs/decisions/0109-auto-asks-whether-hubs-pay.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hubs {
    /// Declared ones only (spawn option, `set_hub`): `hierarchical`, which never detects any.
    Declared,
    /// Declared ones only, while the wake-ups that would make an actor a hub are counted
    /// (`hub_candidates`) and nothing is marked: `auto` with the detection off, which asks the
    /// question "do detected hubs pay?" only where there are candidates. A hub the detection
    /// marked while `auto` had it on is an ordinary actor again at its next wake-up or requeue
    /// (the only routing that meets such hubs without marking them).
    Counted,
    /// Declared ones and those the online detection marks: `hierarchical:auto`.
    Detected,
}

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
        /// Which hubs it knows: declared ones, or detected ones too (`hierarchical:auto`).
        hubs: Hubs,
    },
    /// `places`: actors live in a place (LASSI); mode A queues them per place.
    Places(crate::policy::PlacesMode),
    /// `erlang`: a woken actor goes back to the tail of the queue of the worker it last ran on.
    Erlang,
}

/// What moves between queues when an adaptive `auto` switches to `running`, whose policy routes
/// as `routing`: the one rule of both engines (`actor_centric/adaptive.rs`, `sim/adaptive.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnSwitch {
    /// Away from `hierarchical` for good (the controller settled on it, `settled == running`):
    /// the actors it queued out of thieves' reach (pinned and foreign queues) go where thieves
    /// look (docs/decisions/0074-auto-switches-release-queued-actors.md). A probe's windows leave
    /// them where `hierarchical` put them (docs/decisions/0102-a-probe-leaves-locality-in-place.md).
    ReleaseToThieves,
    /// To `hierarchical`, probe or not: the hubs that plain stealing requeued in ordinary queues
    /// go to their homes' pinned queues ([`gathered_home`];
    /// docs/decisions/0103-hubs-go-home-at-requeue.md).
    GatherHubs,
    /// A probe's switch away from `hierarchical`: nothing moves.
    Nothing,
}

impl OnSwitch {
    pub(crate) fn of(
        routing: Routing,
        running: crate::policy::adaptive::Mechanism,
        settled: crate::policy::adaptive::Mechanism,
    ) -> OnSwitch {
        if matches!(routing, Routing::Hierarchical { .. }) {
            OnSwitch::GatherHubs
        } else if settled == running {
            OnSwitch::ReleaseToThieves
        } else {
            OnSwitch::Nothing
        }
    }
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
    /// Whether an actor keeps the home it was given at spawn when it first runs (`places`: in its
    /// place; `hierarchical`: on its parent's node, docs/decisions/0104-hierarchical-homes-at-spawn.md),
    /// rather than taking its first activation's worker (Listing 5.2,
    /// `ActorPlacement::account_run`).
    pub(crate) fn keeps_spawn_home(self) -> bool {
        matches!(self, Routing::Places(_) | Routing::Hierarchical { .. })
    }

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
            PolicyKind::Hierarchical { auto_hubs } => Routing::Hierarchical {
                hubs: if auto_hubs {
                    Hubs::Detected
                } else {
                    Hubs::Declared
                },
            },
            PolicyKind::Places(mode) => Routing::Places(mode),
            PolicyKind::Erlang => Routing::Erlang,
        }
    }
}

/// Where a woken actor goes under `hierarchical` (see [`hierarchical::wake_target`]): a hub to
/// its worker's pinned queue, an actor away from its home node to a foreign queue, others back
/// where they last ran; a small actor ([`ActorPlacement::is_small`]) to the waking worker.
/// `sender` is the waking worker (`None`: a plain thread), `sender_is_hub` whether the waking
/// actor is a hub; `idle_hand_off` says whether a push
/// to a worker would hand the actor to an idle one (asleep or searching) while the sender's
/// worker has nothing else to run (a hint: a wrong answer costs a hand-off or some locality,
/// never work). `None` when the actor never ran and no sender worker is known. Shared by every
/// engine that queues actors.
#[inline]
pub(crate) fn hierarchical_route(
    layout: &WorkerLayout,
    placement: &ActorPlacement,
    sender: Option<usize>,
    sender_is_hub: bool,
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
        // home node. Woken by a hub: the deque instead (`route_here`).
        return Some(hierarchical::route_here(sender_is_hub));
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

/// Where an actor that used its budget on worker `me` waits under `hierarchical`: a hub in its
/// home worker's pinned queue (`me`'s when it has no home), an actor away from its home node in
/// `me`'s foreign queue for that node (its home node's idle workers bring it home), `None`: the
/// engine's ordinary requeue.
///
/// A hub runs on its home worker whenever `hierarchical` routed it, so the home is `me` but
/// for a hub that another mechanism moved: `auto`'s probe of plain stealing (or a switch back
/// from it). Kept where it was, a hub that always has mail left (bencherl-big's all-to-all
/// actors) never waits for a wake-up again, so it never went home: on the simulated Altix the
/// 1.25 ms of one probe left them off their homes for 8 ms
/// (docs/decisions/0103-hubs-go-home-at-requeue.md).
#[inline]
pub(crate) fn hierarchical_requeue(
    layout: &WorkerLayout,
    placement: &ActorPlacement,
    me: usize,
    routing: Routing,
) -> Option<Route> {
    if routing
        == (Routing::Hierarchical {
            hubs: Hubs::Counted,
        })
    {
        placement.forget_detected_hub();
    }
    if placement.is_hub() {
        return Some(Route::Pinned(placement.home().unwrap_or(me)));
    }
    let home_node = layout.node_of(placement.home()?);
    (home_node != layout.node_of(me)).then_some(Route::Foreign {
        worker: me,
        home_node,
    })
}

/// The routing a system follows now: its configured policy's (`routings[1]`), or under an
/// adaptive `auto` the one of the mechanism it runs, `hierarchical` with hub detection while
/// the controller finds that hubs pay (docs/decisions/0109-auto-asks-whether-hubs-pay.md): the
/// locality policy `auto` runs is `hierarchical` without its own detection (`policy/auto.rs`).
/// `routings` as the engines keep them, by [`crate::policy::adaptive::Mechanism::index`].
#[inline]
pub(crate) fn routing_now(routings: &[Routing; 2], adapt: &Option<Adapt>) -> Routing {
    match adapt {
        None => routings[1],
        Some(adapt) => match routings[adapt.running().index()] {
            Routing::Hierarchical { .. } => Routing::Hierarchical {
                hubs: if adapt.hubs() {
                    Hubs::Detected
                } else {
                    Hubs::Counted
                },
            },
            other => other,
        },
    }
}

/// Where an actor found in an ordinary queue goes when an adaptive `auto` moves (back) to
/// `hierarchical`: a hub with a home to its home worker's pinned queue (`None`: it stays).
/// Plain stealing requeues a hub that used its budget like any actor, behind the others; under
/// `hierarchical` again, a hub that always has mail left is never woken, so it would never go
/// home, and every worker serves its pinned hubs before those queues
/// (docs/decisions/0103-hubs-go-home-at-requeue.md).
pub(crate) fn gathered_home(task: &TaskRef) -> Option<usize> {
    let placement = crate::engine::placement::of(task);
    if placement.is_hub() {
        placement.home()
    } else {
        None
    }
}

/// The online hub detection of `hierarchical:auto`, for a wake-up by actor `waker` (a
/// [`crate::engine::placement::waker_id`]) from worker `me`: an actor woken again and again from
/// other workers than its own, by changing partners, talks with many partners spread over the
/// machine, so it becomes a hub (counted in `counters`) and stays put. Without `mark` (`auto`
/// with the detection off, [`Hubs::Counted`]) nothing is marked: a wake-up after which the
/// actor would have been is counted in `hub_candidates` instead
/// (docs/decisions/0109-auto-asks-whether-hubs-pay.md).
#[inline]
pub(crate) fn note_hierarchical_wake(
    placement: &ActorPlacement,
    me: usize,
    waker: u32,
    counters: &WorkerCounters,
    mark: bool,
) {
    if placement.is_hub() {
        return;
    }
    match placement.last() {
        Some(last) if last != me && mark && placement.note_foreign_sender(waker) => {
            counters.hubs.bump(1)
        }
        Some(last) if last != me && !mark && placement.note_foreign_sender_unmarked(waker) => {
            counters.hub_candidates.bump(1)
        }
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
    waker: Waker,
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
            // its data is remote from this worker. A small actor (no more state than the lines
            // the hand-off moves) has no data for its home to keep: it runs here, as under
            // `hierarchical`, and keeps its home for the wake-ups from plain threads
            // (docs/decisions/0078-a-home-that-is-behind-yields.md,
            // docs/decisions/0082-an-idle-hand-off-buys-nothing.md,
            // docs/decisions/0084-small-actors-stay-with-an-idle-waker.md,
            // docs/decisions/0098-lgs-small-actors-run-where-woken.md).
            let home = placement.pinned_home();
            let neighbours = |a, b| layout.same_group0(a, b);
            let route =
                crate::policy::lgs::route_woken(variants, Some(me), home, neighbours, local);
            match route {
                Route::Tail(h) | Route::Head(h) => {
                    if variants.auto && placement.note_remote_wake(waker.id) {
                        counters.hubs_released.bump(1);
                        return local;
                    }
                    let near = layout.node_of(h) == layout.node_of(me);
                    if placement.is_small() || longer_queue(route) || (near && idle_hand_off(h)) {
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
        Routing::Hierarchical { hubs } => {
            match hubs {
                Hubs::Detected => note_hierarchical_wake(placement, me, waker.id, counters, true),
                Hubs::Counted => {
                    placement.forget_detected_hub();
                    note_hierarchical_wake(placement, me, waker.id, counters, false);
                }
                Hubs::Declared => {}
            }
            hierarchical_route(layout, placement, Some(me), waker.hub, idle_hand_off)
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
        Routing::Hierarchical { .. } => {
            hierarchical_route(layout, placement, None, false, |_| false)
        }
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
    /// The spawning worker's own count of the children it gave a home in turn over its node
    /// (`hierarchical`): its own, not a shared counter, so a spawn writes no line that other
    /// workers' spawns write.
    fn home_turn(&mut self) -> usize;
}

/// The route of a new actor's first activation, spawned from worker `from` (`None`: a plain
/// thread): an explicit placement wins, then `places` putting a hinted actor in its place
/// ([`places_spawn_route`]), then the placement strategy for its kind (hub or regular). Under
/// LGS the worker it is placed on becomes its home PU. Under `hierarchical` a hub is pinned
/// there, and an actor's home node is fixed now: Francesquini's home node is where the spawning
/// scheduler allocated the actor's heap, as loka's spawning worker allocates its cell, not where
/// a thief first ran it. A regular actor that starts on its parent's worker gets the next worker
/// of that node in turn as its home worker, so that the actors one parent spawns do not all share
/// one home worker (where `hierarchical:auto` would pin those it marks as hubs)
/// (docs/decisions/0104-hierarchical-homes-at-spawn.md). The one rule of both engines
/// (`actor_centric/routing.rs`, `sim/routing.rs`).
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
    match routing {
        Routing::Lgs(_) => placement.set_home(placed),
        Routing::Hierarchical { .. } => placement.set_home(match (placed, from) {
            (Some(p), Some(parent)) if p == parent && !hub && !explicit => {
                let node = layout.workers_of_node(layout.node_of(p));
                Some(node[site.home_turn() % node.len()])
            }
            _ => placed,
        }),
        _ => {}
    }
    match (routing, placed) {
        // A hub lives on the worker it was placed on, out of every thief's reach.
        (Routing::Hierarchical { .. }, Some(w)) if hub => Route::Pinned(w),
        _ => route,
    }
}

#[cfg(test)]
mod tests;
