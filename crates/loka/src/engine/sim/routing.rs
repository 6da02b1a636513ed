//! Where the simulation queues a woken or spawned actor: the actor-centric engine's decisions,
//! the same functions ([`choices::woken_route`], [`choices::external_woken_route`],
//! [`choices::spawn_route`]; the rules are in [`crate::policy`]), carried out on virtual
//! workers' queues, plus the wake-up of parked virtual workers.

use super::cost::Distances;
use super::{Engine, External, State};
use crate::engine::choices::{self, Hubs, Routing};
use crate::engine::placement;
use crate::policy::placement::Placement;
use crate::policy::{cls, Route};
use crate::runtime::options::SpawnOptions;
use crate::runtime::TaskRef;
use loka_topology::WorkerLayout;

impl Engine {
    /// An actor woken by a send from the activation running on worker `w` at virtual time `now`.
    pub(super) fn route_woken(&self, st: &mut State, w: usize, now: u64, task: TaskRef) {
        // The host ran the actor's latest activation to its end already, but in virtual time it
        // may still be running on another worker: then this message reaches a running actor,
        // which (as on real threads) handles it there after its current batch; no wake-up, no
        // routing decision.
        if let Some(&until) = st.busy_until.get(&key(task)) {
            if now < until {
                let place = placement::of(&task);
                if let Some(last) = place.last() {
                    st.woken_by.insert(key(task), w);
                    st.sender_of.insert(key(task), (w, st.waker));
                    self.note_writer(st, w, now, task);
                    // Where its own worker re-queues it: a hub stays pinned there.
                    let routing = self.routing();
                    if routing
                        == (Routing::Hierarchical {
                            hubs: Hubs::Counted,
                        })
                    {
                        place.forget_detected_hub();
                    }
                    let route = if place.is_hub() && matches!(routing, Routing::Hierarchical { .. })
                    {
                        Route::Pinned(last)
                    } else {
                        Route::Tail(last)
                    };
                    return self.push(st, route, task, Some(w), until);
                }
            }
        }
        let route = choices::woken_route(
            self.routing(),
            w,
            placement::of(&task),
            placement::Waker {
                id: st.waker,
                hub: st.waker_hub,
            },
            &self.shared.machine.layout,
            st.workers[w].cls.route_woken(),
            self.shared.counters.worker(w),
            // An idle hand-off: `v` has nothing to run (parked, whether it still polls or
            // sleeps) and neither has `w` (docs/decisions/0082-an-idle-hand-off-buys-nothing.md).
            |v| st.workers[v].parked && !st.workers[w].has_local_work(),
            |route| {
                let queued = match route {
                    Route::Tail(v) => st.workers[v].inbox.len(),
                    Route::Head(v) => st.workers[v].urgent.len(),
                    _ => 0,
                };
                queued > st.workers[w].stealable_len()
            },
        );
        st.woken_by.insert(key(task), w);
        st.sender_of.insert(key(task), (w, st.waker));
        self.note_writer(st, w, now, task);
        self.push(st, route, task, Some(w), now);
    }

    /// Worker `w` (its running activation's actor, `State::waker`) sent to `task` at `now`, a send
    /// the engine sees (a wake-up, or a message to a running actor): a writer of its mailbox
    /// (`mailbox_tail.rs`). A mailbox several workers
    /// write, or one a backlog waited for, is watched from now on, so that the rest of the
    /// running activation's sends into it, and the next activations', are counted.
    fn note_writer(&self, st: &mut State, w: usize, now: u64, task: TaskRef) {
        st.tails.wrote(key(task), w, st.waker, now);
        if st.tails.watched_when_woken(key(task)) {
            st.watch.woken(key(task), task);
        }
    }

    /// A new actor spawned by the activation on worker `w`.
    pub(super) fn place_spawned(
        &self,
        st: &mut State,
        task: TaskRef,
        options: &SpawnOptions,
        from: Option<usize>,
        now: u64,
    ) {
        st.memory
            .spawned(task.header().id.as_u64(), options.footprint as u64, from);
        let route = self.place_route(st, task, options, from);
        self.push(st, route, task, from, now);
    }

    /// The route of a new actor (the real engine's `place_spawned`): an explicit placement wins,
    /// then the placement strategy for its kind; LGS makes the chosen worker its home, and
    /// `hierarchical` pins a hub there.
    pub(super) fn place_route(
        &self,
        st: &mut State,
        task: TaskRef,
        options: &SpawnOptions,
        from: Option<usize>,
    ) -> Route {
        let place = placement::of(&task);
        let strategy = self.placement_strategy(place.is_hub());
        choices::spawn_route(
            self.routing(),
            place,
            options.placement,
            strategy,
            from,
            &self.shared.machine.layout,
            self.shared.config.seed,
            &mut Spawning { st, from },
        )
    }

    /// Where work from a plain thread goes: its explicit placement, else round robin over the
    /// workers relabelled by the seed ([`ExternalOrder`]).
    fn external_route(&self, st: &mut State, placement: Placement) -> Route {
        st.external_order.route(placement)
    }

    /// Folds the input plain threads buffered into the (quiescent) simulation, at the latest
    /// virtual time any worker reached.
    pub(super) fn fold_external(&self, st: &mut State) {
        let now = st.workers.iter().map(|w| w.clock).max().unwrap_or(0);
        while let Some(input) = st.external.pop_front() {
            match input {
                External::Spawned(task, route) => self.push(st, route, task, None, now),
                External::Woken(task) => {
                    let layout = &self.shared.machine.layout;
                    let route =
                        choices::external_woken_route(self.routing(), placement::of(&task), layout);
                    let route =
                        route.unwrap_or_else(|| self.external_route(st, Placement::Default));
                    self.push(st, route, task, None, now);
                }
            }
        }
    }

    /// Carries out a route at virtual time `now`; `from` is the pushing worker (`None`: a plain
    /// thread). Wakes the parked worker the push is for, or one parked worker for stealable work.
    pub(super) fn push(
        &self,
        st: &mut State,
        route: Route,
        task: TaskRef,
        from: Option<usize>,
        now: u64,
    ) {
        // When it became runnable: no worker may start it earlier (a thief whose clock is behind
        // would otherwise run it before it was sent). `+ 1`: 0 means unset.
        placement::of(&task)
            .enqueued_at
            .store(now + 1, std::sync::atomic::Ordering::Relaxed);
        let local = |r: &str| {
            from.unwrap_or_else(|| unreachable!("plain threads have no local queue: {r}"))
        };
        let target = match route {
            Route::LocalNext => {
                let w = local("next");
                if let Some(displaced) = st.workers[w].next.replace(task) {
                    st.workers[w].deque.push_back(displaced);
                    self.wake_any(st, now, from);
                }
                return;
            }
            Route::LocalHead => {
                let w = local("head");
                st.workers[w].deque.push_back(task);
                self.wake_any(st, now, from);
                return;
            }
            Route::Head(w) if Some(w) == from => {
                st.workers[w].deque.push_back(task);
                self.wake_any(st, now, from);
                return;
            }
            Route::Tail(w) => {
                st.workers[w].inbox.push_back(task);
                w
            }
            Route::Head(w) => {
                st.workers[w].urgent.push_back(task);
                w
            }
            Route::Pinned(w) => {
                st.workers[w].pinned.push_back(task);
                w
            }
            Route::Foreign { worker, home_node } => {
                st.workers[worker].foreign[home_node].push_back(task);
                worker
            }
            Route::Place(p) => {
                st.place_queues[p].push_back(task);
                let layout = &self.shared.machine.layout;
                match layout
                    .workers_of_place(p)
                    .iter()
                    .copied()
                    .find(|&w| st.workers[w].parked)
                {
                    Some(w) => self.unpark(st, w, now, from),
                    None => self.wake_any(st, now, from),
                }
                return;
            }
        };
        if st.workers[target].parked {
            // The policy chose it: it wakes (the real engine's `Sleepers::notify_target`).
            self.unpark(st, target, now, from);
        } else {
            // The target is busy: a searcher may take it, else a parked thief wakes for it.
            self.wake_any(st, now, from);
        }
    }

    /// Stealable work appeared at `now`, pushed by `waker` (`None`: a plain thread, the
    /// controller), as the real engine's `Sleepers::notify_stealable` handles it. Every parked
    /// worker still polling (spinning, yielding: a searcher) sees it without a wake-up; a
    /// sleeper wakes only while nobody searches (a searcher: awake at `now` with nothing queued,
    /// it steals at its next step), the lowest-numbered one. A searcher that then finds work
    /// hands the search on ([`end_search`](Self::end_search)). Until 2026-12-07 the simulation
    /// woke the lowest-numbered parked worker for every such push, searchers or not, long after
    /// the real engine stopped doing so (docs/decisions/0070-searchers-spare-wake-ups.md): on
    /// the simulated Altix `cls` parked 395,824 times on chameneos
    /// (docs/decisions/0100-sim-searchers-spare-wake-ups.md).
    pub(super) fn wake_any(&self, st: &mut State, now: u64, waker: Option<usize>) {
        for w in 0..st.workers.len() {
            if st.workers[w].parked && Self::polls(&st.workers[w], now) {
                self.unpark(st, w, now, waker);
            }
        }
        // `places:a`'s thieves take only from the places' queues: a searcher need not reach the
        // work, so a sleeper wakes whatever (the real engine's `searchers_reach_all`).
        let reach_all = !matches!(self.routing(), Routing::Places(mode) if mode.shared_queues());
        if reach_all && Self::searcher_awake(st, now, waker) {
            return;
        }
        if let Some(w) = st.workers.iter().position(|w| w.parked) {
            self.unpark(st, w, now, waker);
        }
    }

    /// Whether a worker other than `except` searches at `now`: awake, idle by then (its clock
    /// not ahead: a worker whose clock is ahead still runs what it last took), nothing queued.
    fn searcher_awake(st: &State, now: u64, except: Option<usize>) -> bool {
        st.workers
            .iter()
            .enumerate()
            .any(|(i, w)| Some(i) != except && !w.parked && w.clock <= now && !w.has_local_work())
    }

    /// A searcher `w` found work at `now`: if it was the last one, work it was left may still
    /// be queued elsewhere, and a sleeper wakes for it (the real engine's `end_search`).
    pub(super) fn end_search(&self, st: &mut State, now: u64, w: usize) {
        if st.workers.iter().any(|v| v.stealable() > 0) {
            self.wake_any(st, now, Some(w));
        }
    }

    /// Whether parked worker `worker` still polls at `now` (spinning, yielding: searching).
    fn polls(worker: &super::worker::VirtualWorker, now: u64) -> bool {
        now <= worker.polling_until
    }

    /// Worker `w` has work from virtual time `now` on. Still polling (spinning, yielding), it
    /// sees the work at once; asleep, it runs `wake` later, and `waker` (the worker whose push
    /// or balancing round woke it; `None`: a plain thread, the controller, or the kernel's timer
    /// at a deadline) pays the system call that woke it, `wake_call`: within its running
    /// activation, or on its clock between activations.
    pub(super) fn unpark(&self, st: &mut State, w: usize, now: u64, waker: Option<usize>) {
        let worker = &mut st.workers[w];
        worker.parked = false;
        if Self::polls(worker, now) {
            worker.clock = worker.clock.max(now);
            worker.resumed_poll = true;
            return;
        }
        // A wake-up: the only case the real engine counts as an unpark (a searcher is not woken).
        self.shared.counters.system.unparks.add_shared(1);
        worker.clock = worker.clock.max(now + self.cost.wake as u64);
        worker.busy_until = worker.clock;
        let Some(waker) = waker else { return };
        let call = self.cost.wake_call;
        st.stats.waking_ns += call as u64;
        match st.running {
            Some((running, _)) if running == waker => st.waking += call,
            _ => {
                st.workers[waker].clock += call as u64;
                st.stats.busy_ns += call as u64;
            }
        }
    }
}

/// Where unplaced work from plain threads goes: round robin, as in the real engine, over the
/// workers relabelled by a symmetry of the machine drawn from the seed.
///
/// The real engine sends a plain thread's `k`-th input to worker `k mod n`. In virtual time all
/// such input lands at one instant, so which of two interchangeable workers gets which actor is
/// a tie, and the seed decides it: before, every seed got the same placement, and on 2 workers,
/// with one steal victim, the same schedule. Only *twins* are exchanged: workers on one node at
/// the same distance from every other worker, in the cost model and in the policies' layout. So
/// a relabelling maps the round robin's placement onto one the cost model prices the same, and
/// its balance is round robin's; a fresh draw per actor instead scattered neighbours across the
/// machine (a ring of 8 on 16 `lgs` workers of the Opteron took 2–5× the virtual time).
pub(super) struct ExternalOrder {
    /// `order[k mod n]`: the worker of the `k`-th input.
    order: Vec<usize>,
    ticket: usize,
}

impl ExternalOrder {
    /// The relabelling for `seed`: each class of twins shuffled among its own members.
    pub(super) fn new(layout: &WorkerLayout, distances: &Distances, seed: u64) -> ExternalOrder {
        let n = layout.workers();
        let twins = |a: usize, b: usize| {
            layout.node_of(a) == layout.node_of(b)
                && layout.place_of(a) == layout.place_of(b)
                && (0..n).filter(|&x| x != a && x != b).all(|x| {
                    distances.get(a, x) == distances.get(b, x)
                        && distances.get(x, a) == distances.get(x, b)
                        && layout.cost(a, x) == layout.cost(b, x)
                        && layout.same_group0(a, x) == layout.same_group0(b, x)
                })
        };
        let mut rng = fastrand::Rng::with_seed(seed ^ 0x0E47_E5A1);
        let mut order: Vec<usize> = (0..n).collect();
        let mut classed = vec![false; n];
        for first in 0..n {
            if classed[first] {
                continue;
            }
            let class: Vec<usize> = (first..n)
                .filter(|&b| !classed[b] && (b == first || twins(first, b)))
                .collect();
            let mut shuffled = class.clone();
            rng.shuffle(&mut shuffled);
            for (&w, &to) in class.iter().zip(&shuffled) {
                classed[w] = true;
                order[w] = to;
            }
        }
        ExternalOrder { order, ticket: 0 }
    }

    /// The route of the next input from a plain thread (an explicit placement takes its turn
    /// too, as in the real engine).
    pub(super) fn route(&mut self, placement: Placement) -> Route {
        let worker = self.order[self.ticket % self.order.len()];
        self.ticket += 1;
        cls::route_external(placement, worker, self.order.len())
    }
}

/// The simulation's state a spawn's route reads ([`choices::spawn_route`]).
struct Spawning<'a> {
    st: &'a mut State,
    from: Option<usize>,
}

impl choices::SpawnSite for Spawning<'_> {
    fn default_route(&mut self, placement: Placement) -> Route {
        match self.from {
            Some(w) => self.st.workers[w].cls.route_spawned(placement),
            None => self.st.external_order.route(placement),
        }
    }

    fn ticket(&mut self, hub: bool) -> usize {
        let ticket = self.st.tickets[usize::from(hub)];
        self.st.tickets[usize::from(hub)] += 1;
        ticket
    }

    fn home_turn(&mut self) -> usize {
        let w = self.from.expect("only a worker's spawn takes a home turn");
        let turn = self.st.workers[w].home_turn;
        self.st.workers[w].home_turn = turn.wrapping_add(1);
        turn
    }
}

/// A task's key in side tables: its actor id, never its address. An entry can outlive its actor
/// (a `woken_by` of an actor that stopped before it ran again), and the allocator hands a stopped
/// actor's memory to the next spawn; keyed by address, the newcomer inherited the entry, and
/// whether it did depended on the allocator's state, so two runs of one program could take
/// different schedules. Ids are never reused and are made in the same order on every run.
pub(super) fn key(task: TaskRef) -> u64 {
    task.header().id.as_u64()
}
