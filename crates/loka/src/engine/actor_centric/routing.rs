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
use crate::engine::choices;
use crate::engine::placement::{self, ActorPlacement};
use crate::policy::placement::Placement;
use crate::policy::{cls, Route};
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
        let layout = &self.shared.machine.layout;
        let route = choices::external_woken_route(self.routing(), placement::of(&task), layout);
        let route = route.unwrap_or_else(|| self.external_wake_route());
        self.push_route_external(route, task);
    }

    /// Where an actor woken from a plain thread goes when its policy leaves it free: to the
    /// worker pinned to the CPU the caller runs on, else round robin. Waking a parked thread on
    /// the waker's own CPU needs no interrupt to another CPU, and the worker starts as soon as
    /// the caller blocks or is preempted (a caller that sends and then waits, the common case);
    /// a worker on another CPU, halted, takes an inter-processor interrupt first, which on a VM
    /// is a round trip through the hypervisor (docs/decisions/0055-wake-on-the-callers-cpu.md).
    /// A caller that keeps sending loses nothing: the woken worker's queue is stealable and the
    /// notice wakes another sleeper when this one is awake.
    fn external_wake_route(&self) -> Route {
        if let Some(w) = self.worker_on_callers_cpu() {
            return Route::Tail(w);
        }
        self.external_route(Placement::Default)
    }

    /// The worker pinned to the calling thread's current CPU, if workers are pinned and one is.
    fn worker_on_callers_cpu(&self) -> Option<usize> {
        if self.worker_on_cpu.is_empty() {
            return None;
        }
        let w = *self.worker_on_cpu.get(current_cpu()?)?;
        // Not a worker `auto` retired (`gather.rs`).
        (w < self.sleepers.active()).then_some(w)
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
        let strategy = self.placement_strategy(placement.is_hub());
        let route = choices::spawn_route(
            self.routing(),
            placement,
            options.placement,
            strategy,
            from.map(Worker::index),
            &self.shared.machine.layout,
            self.shared.config.seed,
            &mut Spawning { engine: self, from },
        );
        match from {
            Some(worker) => worker.schedule(route, task),
            None => self.push_route_external(route, task),
        }
    }

    /// Where work from a plain thread goes (`cls`: round robin unless placed).
    fn external_route(&self, placement: Placement) -> Route {
        let ticket = self.round_robin.fetch_add(1, Relaxed);
        // Round robin over the workers `auto` keeps active (`gather.rs`); an explicit worker
        // is that worker.
        let workers = match placement {
            Placement::Default => self.sleepers.active(),
            Placement::Worker(_) => self.workers.len(),
        };
        cls::route_external(placement, ticket, workers)
    }

    /// Carries out a route decided for a plain thread (no local queue of its own).
    pub(super) fn push_route_external(&self, route: Route, task: TaskRef) {
        match route {
            Route::Tail(w) => self.push_tail(w, task),
            Route::Head(w) => self.push_to(w, task, |q| &q.urgent),
            Route::Pinned(w) => {
                // Only `w` runs its pinned actors: wake it, whoever searches.
                self.workers[w].queues.pinned.push(task);
                self.notify(Some(w));
            }
            Route::Foreign { worker, home_node } => {
                let queues = &self.workers[worker].queues;
                queues.push_foreign(home_node, task, &self.foreign_waiting);
                self.notify(Some(worker));
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

    /// How many actors wait in the queue `route` pushes to: another worker's inbox for
    /// [`Route::Tail`], its urgent queue for [`Route::Head`] (two loads of that queue's ends; a
    /// stale answer costs one wake-up's locality or one wait, never the actor).
    fn queued_len(&self, route: Route) -> usize {
        match route {
            Route::Tail(w) => self.workers[w].queues.inbox.len(),
            Route::Head(w) => self.workers[w].queues.urgent.len(),
            _ => 0,
        }
    }

    /// External enqueue: the tail of worker `w`'s queue, then wake someone (`w` first).
    pub(super) fn push_tail(&self, w: usize, task: TaskRef) {
        self.push_to(w, task, |q| &q.inbox);
    }

    /// Pushes to one of worker `w`'s stealable queues, then wakes `w` if it sleeps, else someone
    /// unless a worker searches.
    #[inline]
    fn push_to(
        &self,
        w: usize,
        task: TaskRef,
        queue: impl FnOnce(&queues::WorkerQueues) -> &crossbeam_deque::Injector<TaskRef>,
    ) {
        queue(&self.workers[w].queues).push(task);
        self.notify_target(w);
    }
}

impl Worker {
    /// Routes an actor woken by a message from an actor running here.
    #[inline]
    pub(super) fn schedule_woken(&self, task: TaskRef) {
        if self.wakes_to_next_slot() {
            // `cls` and `lgs:tp` with the next slot, and LGS where every worker neighbours every
            // other (`Routing::wakes_locally`): every such wake-up goes to this worker's next
            // slot, whatever the actor, so there is no routing decision to make (the policy's
            // routing, inlined here, cost a same-worker wake-up ~20 instructions).
            self.sample_queue_wait(placement::of(&task));
            self.push_next(task);
        } else if self.wakes_to_next_slot_unless_hub() && self.woken_here_unless_hub(&task) {
            // `hierarchical` on one node: the routed decision for every actor but a hub (here:
            // the next slot, or the deque when a hub woke it).
            self.sample_queue_wait(placement::of(&task));
            self.schedule(
                crate::policy::hierarchical::route_here(self.waker().hub),
                task,
            );
        } else {
            self.schedule_woken_routed(task);
        }
    }

    /// `hierarchical` on one node: counts the wake-up for `hierarchical:auto`'s hub detection (as
    /// [`choices::woken_route`] does) and says whether the actor is not a hub, so it runs here.
    /// A hub takes the routed path, which counts nothing more for it.
    #[inline]
    fn woken_here_unless_hub(&self, task: &TaskRef) -> bool {
        let placement = placement::of(task);
        if let choices::Routing::Hierarchical {
            hubs: choices::Hubs::Detected,
        } = self.routing()
        {
            choices::note_hierarchical_wake(
                placement,
                self.index(),
                self.waker().id,
                self.counters(),
                true,
            );
        }
        !placement.is_hub()
    }

    /// [`Self::schedule_woken`] under a policy that routes each wake-up (LGS, `hierarchical`,
    /// `places`, or `cls` without the next slot).
    #[inline(never)]
    fn schedule_woken_routed(&self, task: TaskRef) {
        let route = choices::woken_route(
            self.routing(),
            self.index(),
            placement::of(&task),
            self.waker(),
            &self.engine().shared.machine.layout,
            self.policy().route_woken(),
            self.counters(),
            // An idle hand-off: `w` searches or sleeps, and this worker has nothing else to run
            // (docs/decisions/0082-an-idle-hand-off-buys-nothing.md).
            |w| self.engine().is_idle(w) && self.watch().next_is_empty() && !self.has_local_work(),
            |route| self.engine().queued_len(route) > self.own_queues().stealable_len(),
        );
        self.sample_queue_wait(placement::of(&task));
        self.schedule(route, task);
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

/// The OS index of the CPU the calling thread runs on (a vDSO read, ~20 ns).
#[cfg(target_os = "linux")]
fn current_cpu() -> Option<usize> {
    // SAFETY: `sched_getcpu` only reads the calling thread's CPU number, no memory of ours; it
    // returns -1 on failure, which `try_from` rejects.
    usize::try_from(unsafe { libc::sched_getcpu() }).ok()
}

#[cfg(not(target_os = "linux"))]
fn current_cpu() -> Option<usize> {
    None
}

/// The actor-centric engine's state a spawn's route reads ([`choices::spawn_route`]).
struct Spawning<'a> {
    engine: &'a Engine,
    from: Option<&'a Worker>,
}

impl choices::SpawnSite for Spawning<'_> {
    fn default_route(&mut self, placement: Placement) -> Route {
        match self.from {
            Some(worker) => worker.policy().route_spawned(placement),
            None => self.engine.external_route(placement),
        }
    }

    fn ticket(&mut self, hub: bool) -> usize {
        self.engine.tickets[usize::from(hub)].fetch_add(1, Relaxed)
    }

    fn home_turn(&mut self) -> usize {
        let worker = self.from.expect("only a worker's spawn takes a home turn");
        let turn = worker.home_turn.get();
        worker.home_turn.set(turn.wrapping_add(1));
        turn
    }
}
