//! The routing rules' unit tests.

use super::*;
use crate::SpawnOptions;
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
    lgs_wake(
        &layout_of(machine),
        LgsVariants::ALT,
        false,
        (0, 1),
        idle,
        queued,
    )
}

/// Where LGS (`variants`) routes a wake-up from worker `me` of an actor (`small` or not) whose
/// home is worker `home`, given what the engine says of the home: idle while `me` has nothing
/// else to run (`idle`), its queue longer than `me`'s (`queued`). Returns the route, the
/// (pushes, yields) counted and the home after it.
fn lgs_wake(
    layout: &WorkerLayout,
    variants: LgsVariants,
    small: bool,
    (me, home): (usize, usize),
    idle: bool,
    queued: bool,
) -> (Route, u64, u64, Option<usize>) {
    let placement = ActorPlacement::new(&crate::runtime::options::SpawnOptions::default(), small);
    placement.set_home(Some(home));
    let counters = WorkerCounters::default();
    let route = woken_route(
        Routing::Lgs(variants),
        me,
        &placement,
        Waker { id: 7, hub: false },
        layout,
        Route::LocalNext,
        &counters,
        |w| idle && w == home,
        |r| queued && (r == Route::Tail(home) || r == Route::Head(home)),
    );
    (
        route,
        counters.hpu_pushes.get(),
        counters.hpu_yields.get(),
        placement.pinned_home(),
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
    assert!(!Routing::Hierarchical {
        hubs: Hubs::Declared
    }
    .wakes_locally(&one_node));
}

/// The actor-centric engine's fast paths (`wakes_locally`, `wakes_locally_unless_hub`)
/// skip `woken_route`: on a machine where they apply, it must answer the waking worker's
/// next slot for every sender, home, last worker and engine state (and a hub's own worker).
#[test]
fn the_fast_paths_take_the_routed_decision() {
    let one_node = layout_of("synthetic:package:1 core:4 pu:1");
    let two_nodes = layout_of("synthetic:package:2 numa:1 core:2 pu:1");
    let hierarchical = Routing::Hierarchical {
        hubs: Hubs::Declared,
    };
    let places = Routing::Places(PlacesMode::PerWorker);
    assert!(places.wakes_locally(&one_node));
    assert!(hierarchical.wakes_locally_unless_hub(&one_node));
    assert!(!places.wakes_locally(&two_nodes));
    assert!(!hierarchical.wakes_locally_unless_hub(&two_nodes));
    let auto = Routing::Hierarchical {
        hubs: Hubs::Detected,
    };
    assert!(auto.wakes_locally_unless_hub(&one_node));
    assert!(!Routing::Places(PlacesMode::Shared).wakes_locally(&one_node));
    let counters = WorkerCounters::default();
    let lgs_auto = Routing::Lgs(LgsVariants::AUTO);
    for routing in [hierarchical, auto, places, lgs_auto] {
        for hub in [false, true] {
            for (me, home, last, idle) in (0..64).map(|i| (i % 4, i / 4 % 4, i / 16, i % 3 == 0)) {
                let options = crate::runtime::options::SpawnOptions::default().hub(hub);
                let placement = ActorPlacement::new(&options, false);
                placement.set_home(Some(home));
                placement.swap_last(last);
                let route = woken_route(
                    routing,
                    me,
                    &placement,
                    Waker { id: 7, hub: false },
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

/// Under LGS a wake-up from another node whose home is neither behind nor idle: an actor with
/// data goes to its home PU's tail (Listing 5.3); a small one runs on the waking worker and keeps
/// its home (docs/decisions/0098-lgs-small-actors-run-where-woken.md). Under every LGS variant
/// but `tp` (which pins no actor).
#[test]
fn a_small_actor_woken_from_another_node_runs_on_its_waker_under_lgs() {
    let layout = layout_of("synthetic:package:2 numa:1 core:2 pu:1");
    let (me, home) = (0, 3);
    assert_ne!(layout.node_of(me), layout.node_of(home));
    for variants in ["lgs", "lgs:dfs", "lgs:alt", "lgs:auto"] {
        let Ok(crate::PolicyKind::Lgs(variants)) = variants.parse() else {
            unreachable!("an LGS variant")
        };
        let pushed = if variants.dfs {
            Route::Head(home)
        } else {
            Route::Tail(home)
        };
        assert_eq!(
            lgs_wake(&layout, variants, false, (me, home), false, false),
            (pushed, 1, 0, Some(home)),
            "{variants:?}: an actor with data goes home"
        );
        assert_eq!(
            lgs_wake(&layout, variants, true, (me, home), false, false),
            (Route::LocalNext, 0, 1, Some(home)),
            "{variants:?}: a small actor runs on its waker and keeps its home"
        );
    }
}

/// A [`SpawnSite`] that counts tickets and places by default on the spawning worker.
struct Tickets {
    regular: usize,
    hubs: usize,
    turns: usize,
}

impl SpawnSite for Tickets {
    fn default_route(&mut self, _placement: Placement) -> Route {
        Route::LocalHead
    }
    fn ticket(&mut self, hub: bool) -> usize {
        let t = if hub {
            &mut self.hubs
        } else {
            &mut self.regular
        };
        *t += 1;
        *t - 1
    }
    fn home_turn(&mut self) -> usize {
        self.turns += 1;
        self.turns - 1
    }
}

/// Under `hierarchical` the actors a worker spawns get homes on its node, in turn over the
/// node's workers, and keep them when a thief of another node runs them first (Francesquini's
/// home node: where the parent's scheduler allocated the heap); under `cls` the first
/// activation's worker is the home, as Listing 5.2 has it. A hub placed by default lands on each
/// node in turn, and its home is the worker it is pinned to.
#[test]
fn hierarchical_homes_are_on_the_parents_node_whoever_runs_them_first() {
    let layout = layout_of("preset:xeon-x7560"); // 4 nodes × 8 workers
    let counters = WorkerCounters::default();
    let hierarchical = Routing::Hierarchical {
        hubs: Hubs::Declared,
    };
    let mut site = Tickets {
        regular: 0,
        hubs: 0,
        turns: 0,
    };
    let parent = layout.workers_of_node(1)[2];
    let thief = layout.workers_of_node(3)[0];
    let spawn = |routing, options: &SpawnOptions, site: &mut Tickets| {
        let placement = ActorPlacement::new(options, false);
        let strategy = if options.hub {
            crate::Config::default().hub_placement
        } else {
            PlacementStrategy::Default
        };
        let route = spawn_route(
            routing,
            &placement,
            options.placement,
            strategy,
            Some(parent),
            &layout,
            1,
            site,
        );
        (route, placement)
    };
    let homes: Vec<_> = (0..9)
        .map(|k| {
            let (route, placement) = spawn(hierarchical, &SpawnOptions::new(), &mut site);
            assert!(matches!(route, Route::LocalHead), "{route:?}");
            // Run first where it was queued, its parent's worker (a neighbour of its home,
            // which Listing 5.2 would make its home), or stolen before it ever ran by a
            // worker of another node.
            let first = if k % 2 == 0 { parent } else { thief };
            placement.account_run(first, true, &layout, &counters);
            placement.home().unwrap()
        })
        .collect();
    let node = layout.workers_of_node(1);
    let expected: Vec<_> = (0..9).map(|k| node[k % node.len()]).collect();
    assert_eq!(homes, expected);
    let (_, under_cls) = spawn(Routing::Local, &SpawnOptions::new(), &mut site);
    under_cls.account_run(thief, false, &layout, &counters);
    assert_eq!(under_cls.home(), Some(thief));
    let hub_nodes: Vec<_> = (0..4)
        .map(|_| {
            let (route, placement) = spawn(hierarchical, &SpawnOptions::new().hub(true), &mut site);
            let Route::Pinned(w) = route else {
                panic!("a hub is pinned: {route:?}")
            };
            assert_eq!(placement.home(), Some(w));
            layout.node_of(w)
        })
        .collect();
    let mut sorted = hub_nodes.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), 4, "four hubs on four nodes: {hub_nodes:?}");
}

/// Under `hierarchical` an actor woken on its waker's worker takes the next slot, unless the
/// waker is a hub: then the head of the worker's deque, where its node-mates steal it
/// (docs/decisions/0106-a-hub-keeps-its-worker.md). On one node and on two; a hub woken by a hub
/// is pinned at home either way.
#[test]
fn what_a_hub_wakes_on_its_worker_is_stealable() {
    for machine in [
        "synthetic:package:1 core:4 pu:1",
        "synthetic:package:2 core:2 pu:1",
    ] {
        let layout = layout_of(machine);
        let counters = WorkerCounters::default();
        for (woken_hub, waker_hub) in [(false, false), (false, true), (true, false), (true, true)] {
            let options = SpawnOptions::default().hub(woken_hub);
            let placement = ActorPlacement::new(&options, false);
            placement.set_home(Some(1));
            placement.swap_last(1);
            let route = woken_route(
                Routing::Hierarchical {
                    hubs: Hubs::Declared,
                },
                0,
                &placement,
                Waker {
                    id: 7,
                    hub: waker_hub,
                },
                &layout,
                Route::LocalNext,
                &counters,
                |_| false,
                |_| false,
            );
            let expected = match (woken_hub, waker_hub) {
                (true, _) => Route::Pinned(1),
                (false, true) => Route::LocalHead,
                (false, false) => Route::LocalNext,
            };
            assert_eq!(
                route, expected,
                "{machine}: woken hub {woken_hub}, waker hub {waker_hub}"
            );
        }
    }
}
