//! Where a runnable actor is queued: the routing decisions of the policies (from
//! [`crate::policy`]) carried out, for actors woken by a send and for new actors.
//!
//! * `cls` (and `lgs:tp`): a woken actor runs on the sender's worker (next slot); from a plain
//!   thread, round robin.
//! * `lgs`: wake-ups follow the actor's home PU (Wölke, Listing 5.3; docs/references.md).
//! * `hierarchical`: hubs to their worker's pinned queue, actors away from their home node to a
//!   foreign queue, others back where they last ran (Francesquini §4.2; docs/references.md).
//! * `places`: into the actor's place — mode B the sender's worker if it is in the place, else
//!   the actor's home worker there; mode A the place's shared queue (LASSI; docs/places.md).

use super::worker::Worker;
use super::{queues, Engine};
use crate::engine::choices::{self, Routing};
use crate::engine::placement::{self, ActorPlacement};
use crate::policy::placement::{Placement, PlacementStrategy};
use crate::policy::{cls, lgs, places, LgsVariants, PlacesMode, Route};
use crate::runtime::options::SpawnOptions;
use crate::runtime::TaskRef;
use std::sync::atomic::Ordering::Relaxed;

/// One wake-up in this many gets its queue wait measured (two clock reads).
const QUEUE_WAIT_SAMPLE_INTERVAL: u32 = 16;

impl Engine {
    /// Queues an actor woken by a send from a plain thread. Out of line, so that the wake-up
    /// from a worker (`TaskQueues::schedule_woken`) stays a small function.
    #[inline(never)]
    pub(super) fn schedule_woken_external(&self, task: TaskRef) {
        self.shared.counters.system.external_sends.add_shared(1);
        let route = match self.routing {
            Routing::Hierarchical { .. } => self.hierarchical_route(task, None),
            // LGS, Listing 5.3: from a plain thread, to the tail of the actor's home.
            Routing::Lgs(variants) => placement::of(&task).pinned_home().map(|home| {
                let neighbours = |a, b| self.shared.machine.layout.same_group0(a, b);
                lgs::route_woken(variants, None, Some(home), neighbours, Route::LocalHead)
            }),
            Routing::Local => None,
            Routing::Places(mode) => placement::of(&task).home().map(|home| {
                places::route_woken(
                    mode,
                    &self.shared.machine.layout,
                    home,
                    None,
                    Route::LocalHead,
                )
            }),
        };
        let route = route.unwrap_or_else(|| self.external_route(Placement::Default));
        self.push_route_external(route, task);
    }

    /// Where a woken actor goes under `hierarchical` (see [`hierarchical::wake_target`]): a hub to
    /// its worker's pinned queue, an actor away from its home node to a foreign queue, others back
    /// where they last ran. `None` when the actor never ran and no sender worker is known.
    #[inline]
    pub(super) fn hierarchical_route(&self, task: TaskRef, sender: Option<usize>) -> Option<Route> {
        choices::hierarchical_route(&self.shared.machine.layout, placement::of(&task), sender)
    }

    /// Queues a freshly spawned actor for its first activation: an explicit `Placement` wins,
    /// then the placement strategy for its kind (hub or regular). Under LGS the worker it is placed
    /// on becomes its home PU; under `hierarchical` a hub is pinned there.
    pub(super) fn place_spawned(
        &self,
        task: TaskRef,
        options: &SpawnOptions,
        from: Option<&Worker>,
    ) {
        let placement = placement::of(&task);
        let hub = placement.is_hub();
        let strategy = self.placement_strategy(hub);
        let explicit = options.placement != Placement::Default;
        let route = if let (Routing::Places(mode), false) = (self.routing, explicit) {
            self.place_in_place(mode, task, from)
        } else if explicit || strategy == PlacementStrategy::Default {
            match from {
                Some(worker) => worker.policy().route_spawned(options.placement),
                None => self.external_route(options.placement),
            }
        } else {
            let ticket = self.tickets[usize::from(hub)].fetch_add(1, Relaxed);
            let mut rng = fastrand::Rng::with_seed(self.shared.config.seed ^ ticket as u64);
            let parent = from.map(Worker::index);
            match strategy.place(parent, ticket, &mut rng, &self.shared.machine.layout) {
                w if Some(w) == parent => Route::LocalHead,
                w => Route::Tail(w),
            }
        };
        let placed = match route {
            Route::LocalNext | Route::LocalHead => from.map(Worker::index),
            Route::Tail(w) | Route::Head(w) | Route::Pinned(w) => Some(w),
            Route::Foreign { worker, .. } => Some(worker),
            // (its home was set by `place_in_place`)
            Route::Place(_) => None,
        };
        match self.routing {
            Routing::Lgs(_) => placement.set_home(placed),
            Routing::Places(_) if placement.home().is_none() => placement.set_home(placed),
            _ => {}
        }
        let route = match (self.routing, placed) {
            // A hub lives on the worker it was placed on, out of every thief's reach.
            (Routing::Hierarchical { .. }, Some(w)) if hub => Route::Pinned(w),
            _ => route,
        };
        match from {
            Some(worker) => worker.schedule(route, task),
            None => self.push_route_external(route, task),
        }
    }

    /// `places`: the route of a new actor's first activation, to the home its place gave it at
    /// initialisation ([`choices::places_home`]).
    fn place_in_place(&self, mode: PlacesMode, task: TaskRef, from: Option<&Worker>) -> Route {
        let home = placement::of(&task)
            .home()
            .expect("`places` gives every actor a home at initialisation");
        choices::places_spawn_route(
            mode,
            &self.shared.machine.layout,
            home,
            from.map(Worker::index),
        )
    }

    /// Where work from a plain thread goes (`cls`: round robin unless placed).
    fn external_route(&self, placement: Placement) -> Route {
        let ticket = self.round_robin.fetch_add(1, Relaxed);
        cls::route_external(placement, ticket, self.workers.len())
    }

    /// Carries out a route decided for a plain thread (no local queue of its own).
    pub(super) fn push_route_external(&self, route: Route, task: TaskRef) {
        match route {
            Route::Tail(w) => self.push_tail(w, task),
            Route::Head(w) => self.push_to(w, task, |q| &q.urgent),
            Route::Pinned(w) => self.push_to(w, task, |q| &q.pinned),
            Route::Foreign { worker, home_node } => {
                self.push_to(worker, task, |q| &q.foreign[home_node])
            }
            Route::Place(p) => {
                self.place_queues[p].push(task);
                let layout = &self.shared.machine.layout;
                self.notify(Some(layout.workers_of_place(p)[0]));
            }
            Route::LocalNext | Route::LocalHead => {
                unreachable!("plain threads have no local queue: {route:?}")
            }
        }
    }

    /// External enqueue: the tail of worker `w`'s queue, then wake someone (`w` first).
    pub(super) fn push_tail(&self, w: usize, task: TaskRef) {
        self.push_to(w, task, |q| &q.inbox);
    }

    /// Pushes to one of worker `w`'s queues, then wakes someone (`w` first).
    #[inline]
    fn push_to(
        &self,
        w: usize,
        task: TaskRef,
        queue: impl FnOnce(&queues::WorkerQueues) -> &crossbeam_deque::Injector<TaskRef>,
    ) {
        queue(&self.workers[w].queues).push(task);
        self.notify(Some(w));
    }
}

impl Worker {
    /// Routes an actor woken by a message from an actor running here.
    #[inline]
    pub(super) fn schedule_woken(&self, task: TaskRef) {
        if self.wakes_to_next_slot() {
            // `cls` and `lgs:tp` with the next slot: every such wake-up goes to this worker's
            // next slot, whatever the actor, so there is no routing decision to make (the
            // policy's routing, inlined here, cost a same-worker wake-up ~20 instructions).
            self.sample_queue_wait(placement::of(&task));
            self.push_next(task);
        } else {
            self.schedule_woken_routed(task);
        }
    }

    /// [`Self::schedule_woken`] under a policy that routes each wake-up (LGS, `hierarchical`,
    /// `places`, or `cls` without the next slot).
    #[inline(never)]
    fn schedule_woken_routed(&self, task: TaskRef) {
        let local = self.policy().route_woken();
        let route = match self.routing() {
            Routing::Local => local,
            Routing::Lgs(variants) => self.lgs_route(variants, task, local),
            Routing::Hierarchical { auto_hubs } => self.hierarchical_route(auto_hubs, task),
            Routing::Places(mode) => {
                let layout = &self.engine().shared.machine.layout;
                let home = placement::of(&task).home().unwrap_or(self.index());
                places::route_woken(mode, layout, home, Some(self.index()), local)
            }
        };
        self.sample_queue_wait(placement::of(&task));
        self.schedule(route, task);
    }

    /// Listing 5.3, plus the bookkeeping of the hub rule.
    fn lgs_route(&self, variants: LgsVariants, task: TaskRef, local: Route) -> Route {
        let placement = placement::of(&task);
        let home = placement.pinned_home();
        let layout = &self.engine().shared.machine.layout;
        let route = lgs::route_woken(
            variants,
            Some(self.index()),
            home,
            |a, b| layout.same_group0(a, b),
            local,
        );
        match route {
            Route::Tail(_) | Route::Head(_) => {
                self.counters().hpu_pushes.bump(1);
                if variants.auto && placement.note_remote_wake(self.waker()) {
                    self.counters().hubs_released.bump(1);
                    // Released: from now on it runs where its partners are.
                    return local;
                }
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

    /// `hierarchical` routing, plus the online hub detection of `hierarchical:auto`: an actor woken
    /// again and again from other workers than its own talks with many partners spread over the
    /// machine, so it becomes a hub and stays put.
    fn hierarchical_route(&self, auto_hubs: bool, task: TaskRef) -> Route {
        if auto_hubs {
            choices::note_hierarchical_wake(
                placement::of(&task),
                self.index(),
                self.waker(),
                self.counters(),
            );
        }
        self.engine()
            .hierarchical_route(task, Some(self.index()))
            .unwrap_or(Route::LocalNext)
    }

    /// Carries out a routing decision for a runnable actor.
    #[inline]
    pub(super) fn schedule(&self, route: Route, task: TaskRef) {
        match route {
            Route::LocalNext => self.push_next(task),
            Route::LocalHead => self.push_head(task),
            Route::Head(w) if w == self.index() => self.push_head(task),
            other => self.engine().push_route_external(other, task),
        }
    }

    /// Every few wake-ups, stamps the actor so its queue wait is measured when it runs.
    #[inline]
    fn sample_queue_wait(&self, placement: &ActorPlacement) {
        if self.sample_tick() % QUEUE_WAIT_SAMPLE_INTERVAL == 0 {
            self.stamp(placement);
        }
    }

    /// The clock read of a sampled wake-up, out of line: one wake-up in 16 pays for it.
    #[cold]
    #[inline(never)]
    fn stamp(&self, placement: &ActorPlacement) {
        placement.enqueued_at.store(self.engine().now_ns(), Relaxed);
    }
}
