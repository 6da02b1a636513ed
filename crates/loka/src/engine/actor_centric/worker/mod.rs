//! One worker thread: run local actors, otherwise steal, otherwise park.

use super::stall::IN_USER;
use super::Engine;
use crate::engine::choices::{self, Routing, Victims};
use crate::engine::placement;
use crate::policy::cls::Cls;
use crate::policy::Route;
use crate::runtime::exec_policy::online;
use crate::runtime::{Exec, RunOutcome, TaskRef};
use crate::telemetry::{WorkerCounters, MAX_LEVELS};
use std::cell::Cell;
use std::ptr;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

/// Bounds of a worker's hold score (`Worker::hold_score`): how many holds in a row that found a
/// message outweigh the same number of fruitless ones.
const HOLD_SCORE_RANGE: i32 = 16;

mod local_work;

thread_local! {
    /// The worker running on this thread, if any (set for the whole life of a worker thread).
    static CURRENT: Cell<*const Worker> = const { Cell::new(ptr::null()) };
}

/// A worker's thread-local state.
pub(super) struct Worker {
    pub(super) exec: Exec,
    engine: Arc<Engine>,
    /// This worker's queues in `engine.workers`, found once (the index arithmetic and bounds
    /// check cost every activation ~10 instructions).
    own: *const super::queues::WorkerQueues,
    pub(super) deque: crossbeam_deque::Worker<TaskRef>,
    /// This worker's stall watch in `engine.workers`, found once as `own`. It keeps the *next
    /// slot* (the actor woken last by this worker's actors: runs next, no thief takes it) and the
    /// *held* actor (its activation emptied its mailbox and did not go idle,
    /// [`RunOutcome::Drained`]: still scheduled, in no queue; see [`Self::hold`]). Both are this
    /// worker's alone except while it runs user code for longer than the slot bound: then an
    /// idle worker or the monitor may take them (`stall.rs`).
    pub(super) watch: *const super::stall::StallWatch,
    /// The stall word of the latest activation here (`stall.rs`): even, +2 per activation.
    pub(super) stretch: Cell<u64>,
    /// How long this worker steals (spinning, then yielding) before it parks: the configured
    /// `idle.spin_us + idle.yield_us` while spinning catches work, less while it does not
    /// (`steal.rs`, `adapt_idle_window`).
    pub(super) idle_window: Cell<std::time::Duration>,
    /// A handler of the running activation published a wake-up as pending (`stall.rs`).
    pub(super) pending_set: Cell<bool>,
    /// The stall guard runs: rescuers may take the slots, so activations are bracketed.
    pub(super) guarded: bool,
    /// The monitor may promote an actor it saw block to its own thread.
    pub(super) promote: bool,
    /// The stall guard from this worker while idle: what it last saw of each worker's state
    /// word, and since when (`steal.rs`, `rescue_look`).
    pub(super) looks: std::cell::RefCell<Vec<super::stall::Sighting>>,
    /// Which worker the next look starts with.
    pub(super) look_turn: Cell<usize>,
    /// Children this worker gave a home in turn over its node (`hierarchical`,
    /// `choices::SpawnSite::home_turn`).
    pub(super) home_turn: Cell<usize>,
    /// Activations may end drained instead of idle: `wake_next` (every wake-up from here goes to
    /// the next slot anyway) and no blocking watch.
    holds: bool,
    /// Whether holds have been paying off here: up by one when a released actor had a message
    /// (a partner answered), down by one when it had none; holding is on while it is ≥ 0. See
    /// [`Self::release`].
    hold_score: Cell<i32>,
    /// Activations run holding now: `holds` and a score ≥ 0, recomputed at each release, so the
    /// activation loop tests one flag (a test of the score and the tick cost threadring 13
    /// instructions an activation, docs/decisions/0036-hold-drained-actor.md). While it is off, every periodic look
    /// (61 activations) turns it on for a probe: the next release scores it again.
    hold_now: Cell<bool>,
    next_streak: Cell<u32>,
    tick: Cell<u32>,
    pub(super) sample_tick: Cell<u32>,
    policy: Cls,
    /// How runnable actors are routed (the engine's decision, kept at hand; under an adaptive
    /// `auto`, the policy it ran when this worker last looked: `adaptive.rs`).
    routing: Cell<Routing>,
    /// `routing` wakes locally on this machine (`Routing::wakes_locally`: `Local`, LGS but `alt`
    /// on one victim group, `places` on one place) and the policy has the next slot: a wake-up
    /// from here always goes to the next slot (one test instead of the routing decision).
    wake_next: Cell<bool>,
    /// `routing` wakes every actor but a hub locally on this machine
    /// (`Routing::wakes_locally_unless_hub`: `hierarchical` on one NUMA node) and the policy has
    /// the next slot: a wake-up of an actor that is not a hub goes to the next slot.
    wake_next_unless_hub: Cell<bool>,
    /// This worker serves its pinned queue and follows migration paths (`hierarchical`), or
    /// serves its pinned and foreign queues whatever the policy (an adaptive `auto`, which may
    /// have queued actors there under `hierarchical`).
    serves_pinned: Cell<bool>,
    /// The system's `auto` adapts (`adaptive.rs`).
    adaptive: bool,
    /// The system's `auto` gathers its work on fewer workers while they handle more
    /// (`gather.rs`).
    pub(super) gathers: bool,
    /// The index of the mechanism `routing` belongs to ([`crate::policy::adaptive::Mechanism`]);
    /// 1 (the configured policy) unless `auto` adapts.
    mechanism: Cell<usize>,
    /// Group level of each other worker as seen from this one (for steals-by-level).
    level_of: Vec<u8>,
    /// The workers whose inboxes this one looks at before re-running an actor that used its
    /// budget ([`Routing::helped`], [`Self::peer_inbox`]), under each mechanism's routing.
    helped: [Box<[usize]>; 2],
    /// Which of `helped` to look at next (they take turns).
    help_turn: Cell<usize>,
    /// Activations since the last load-balancing round (hierarchical), and that round's number
    /// (`Engine::balance_epoch`).
    since_balance: Cell<(u64, usize)>,
    /// The actor of the latest activation here, as a waker ([`placement::waker_id`]): the
    /// partner the hub rules of `lgs:auto` and `hierarchical:auto` count (one store an activation).
    running: Cell<u32>,
    /// Whether that actor is a hub, kept under `hierarchical` only: the actors a hub wakes do
    /// not take its worker's next slot (`choices::hierarchical_route`).
    running_hub: Cell<bool>,
    /// `exec = "auto"`: time activations to catch actors that block (runtime/exec_policy/blocking.rs).
    watch_blocking: bool,
    /// `exec = "auto"`: figures of the undeclared actors run here (runtime/exec_policy/online.rs).
    pub(super) online: std::cell::RefCell<online::Watch>,
}

/// The worker's two next-slot fast paths under `routing` on `layout` (`wake_next`,
/// `wake_next_unless_hub`): none without the next slot. Two flags rather than one three-valued
/// field: `cls` tests its flag alone, one comparison with zero per wake-up (a `u8` enum cost it
/// three instructions a wake-up instead of two, callgrind on threadring).
fn next_slot_paths(
    routing: Routing,
    layout: &loka_topology::WorkerLayout,
    lifo_slot: bool,
) -> (bool, bool) {
    (
        lifo_slot && routing.wakes_locally(layout),
        lifo_slot && routing.wakes_locally_unless_hub(layout),
    )
}

impl Worker {
    pub(super) fn new(
        exec: Exec,
        engine: Arc<Engine>,
        deque: crossbeam_deque::Worker<TaskRef>,
    ) -> Self {
        let index = exec.index();
        let config = &engine.shared.config;
        let policy = Cls::new(index, config.workers, config.lifo_slot);
        let groups = engine.shared.machine.layout.groups(index);
        let mut level_of = vec![0u8; config.workers];
        for (level, group) in groups.iter().enumerate().rev() {
            for &w in group {
                level_of[w] = level.min(MAX_LEVELS - 1) as u8;
            }
        }
        let own: *const super::queues::WorkerQueues = &engine.workers[index].queues;
        let watch: *const super::stall::StallWatch = &*engine.workers[index].watch;
        let guarded = engine.guarded();
        let routing = engine.routing();
        let (wake_next, wake_next_unless_hub) =
            next_slot_paths(routing, &engine.shared.machine.layout, config.lifo_slot);
        let watch_blocking = config.exec == crate::exec_policy::ExecMode::Auto;
        let adaptive = engine.shared.adapt.is_some();
        let mechanism = crate::engine::adapt::running_index(&engine.shared.adapt);
        let layout = &engine.shared.machine.layout;
        let helped = engine
            .routings
            .map(|r| r.helped(index, layout).into_boxed_slice());
        Worker {
            exec,
            own,
            deque,
            watch,
            stretch: Cell::new(0),
            idle_window: Cell::new(config.idle.spin_and_yield()),
            pending_set: Cell::new(false),
            guarded,
            promote: guarded && config.stall.promote,
            looks: std::cell::RefCell::new(vec![
                super::stall::Sighting::new(
                    0,
                    std::time::Instant::now()
                );
                config.workers
            ]),
            look_turn: Cell::new(0),
            home_turn: Cell::new(0),
            hold_score: Cell::new(0),
            hold_now: Cell::new(false),
            // An adaptive `auto` may change `wake_next` while an actor is held: no holds there.
            // `hierarchical` on one node holds too: an actor that is not a hub goes to the next
            // slot anyway, and a hub only ever runs on its own worker, which is the one holding
            // it (docs/decisions/0081-fast-paths-where-locality-decides-the-same.md).
            holds: (wake_next || wake_next_unless_hub) && !watch_blocking && !adaptive,
            next_streak: Cell::new(0),
            tick: Cell::new(0),
            sample_tick: Cell::new(0),
            policy,
            routing: Cell::new(routing),
            wake_next: Cell::new(wake_next),
            wake_next_unless_hub: Cell::new(wake_next_unless_hub),
            serves_pinned: Cell::new(adaptive || matches!(routing, Routing::Hierarchical { .. })),
            adaptive,
            gathers: engine.shared.gather.is_some(),
            mechanism: Cell::new(mechanism),
            level_of,
            helped,
            help_turn: Cell::new(0),
            since_balance: Cell::new((0, 0)),
            running: Cell::new(placement::NO_WAKER),
            running_hub: Cell::new(false),
            watch_blocking,
            online: Default::default(),
            engine,
        }
    }

    /// The actor of the latest activation here, as a waker ([`placement::waker_id`]).
    #[inline]
    pub(super) fn waker(&self) -> placement::Waker {
        placement::Waker {
            id: self.running.get(),
            hub: self.running_hub.get(),
        }
    }

    /// The worker of `engine` running on this thread, if any.
    #[inline]
    pub(super) fn current_of(engine: &Engine) -> Option<&Worker> {
        CURRENT.with(|c| {
            let w = c.get();
            // SAFETY: `CURRENT` is set only while the worker is alive on this thread (see `run`),
            // and the reference does not outlive the caller's use on this thread.
            (!w.is_null())
                .then(|| unsafe { &*w })
                .filter(|w| ptr::eq(Arc::as_ptr(&w.engine), engine))
        })
    }

    #[inline]
    pub(super) fn index(&self) -> usize {
        self.exec.index()
    }

    #[inline]
    pub(super) fn engine(&self) -> &Engine {
        &self.engine
    }

    #[inline]
    pub(super) fn routing(&self) -> Routing {
        self.routing.get()
    }

    /// Takes up `routing`, the routing of `mechanism` (an adaptive `auto` moved: `adaptive.rs`).
    pub(super) fn set_routing(
        &self,
        mechanism: crate::policy::adaptive::Mechanism,
        routing: Routing,
    ) {
        self.mechanism.set(mechanism.index());
        self.routing.set(routing);
        let lifo_slot = self.engine.shared.config.lifo_slot;
        let layout = &self.engine.shared.machine.layout;
        let (wake_next, wake_next_unless_hub) = next_slot_paths(routing, layout, lifo_slot);
        self.wake_next.set(wake_next);
        self.wake_next_unless_hub.set(wake_next_unless_hub);
        self.serves_pinned
            .set(self.adaptive || matches!(routing, Routing::Hierarchical { .. }));
        self.since_balance.set((0, 0));
        self.help_turn.set(0);
    }

    /// The index of the mechanism this worker follows (see `mechanism`).
    pub(super) fn mechanism_index(&self) -> usize {
        self.mechanism.get()
    }

    /// The neighbours helped under the routing followed now.
    fn helped(&self) -> &[usize] {
        &self.helped[self.mechanism.get()]
    }

    #[inline]
    pub(super) fn counters(&self) -> &WorkerCounters {
        self.exec.counters()
    }

    pub(super) fn policy(&self) -> &Cls {
        &self.policy
    }

    pub(super) fn level_of(&self, victim: usize) -> usize {
        (self.level_of[victim] as usize).min(MAX_LEVELS - 1)
    }

    /// Counts a wake-up for the queue-wait sampling; returns the new count.
    #[inline]
    pub(super) fn sample_tick(&self) -> u32 {
        let tick = self.sample_tick.get().wrapping_add(1);
        self.sample_tick.set(tick);
        tick
    }

    /// Whether every wake-up from this worker goes to its next slot (see `wake_next`).
    #[inline]
    pub(super) fn wakes_to_next_slot(&self) -> bool {
        self.wake_next.get()
    }

    /// Whether a wake-up from this worker of an actor that is not a hub goes to its next slot
    /// (see `wake_next_unless_hub`).
    #[inline]
    pub(super) fn wakes_to_next_slot_unless_hub(&self) -> bool {
        self.wake_next_unless_hub.get()
    }

    fn is_hierarchical(&self) -> bool {
        matches!(self.routing.get(), Routing::Hierarchical { .. })
    }

    /// The next slot; a displaced actor goes to the deque's head.
    #[inline]
    pub(super) fn push_next(&self, task: TaskRef) {
        // In user code (a handler's wake-up; only under the guard) the slot is not the owner's:
        // the wake-up is published as pending, or a second one steps out of user code.
        let state = self.watch().own_state();
        if state & IN_USER != 0 {
            if !self.pending_set.get() {
                // The activation's first wake-up: published in one store (`stall.rs`), put in
                // the next slot when the activation is over.
                self.pending_set.set(true);
                return self.watch().publish_pending(task);
            }
            return self.push_next_from_handler(task, state);
        }
        if let Some(displaced) = self.watch().replace_next(task) {
            self.push_head(displaced);
        }
    }

    /// The head of this worker's deque (stealable), then wake an idle worker to steal. Out of
    /// line: the wake-up path that inlines `push_next` keeps fewer registers live (a ping-pong
    /// pair never displaces anyone).
    #[inline(never)]
    pub(super) fn push_head(&self, task: TaskRef) {
        self.deque.push(task);
        self.engine.notify_stealable(None);
    }

    /// The worker loop.
    pub(super) fn run(self) {
        CURRENT.with(|c| c.set(&self));
        // `monitor` actors woken from here run inline on this thread.
        let _inline = crate::runtime::exec_policy::inline::enter_thread(&self.exec);
        let mut rng = fastrand::Rng::with_seed(
            self.engine
                .shared
                .config
                .seed
                .wrapping_add((self.index() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        );
        let shared = &self.engine.shared;
        let mut mechanism = self.mechanism();
        let mut victims = Victims::new(
            shared
                .adapt
                .as_ref()
                .map_or(shared.config.policy, |a| a.policy(mechanism)),
            self.index(),
            &self.policy,
            &shared.machine.layout,
        );
        // Shutdown is prompt: the activation that runs finishes, everything still queued is left
        // to the shutdown, which terminates those actors (their messages become dead letters).
        // One load of a line nobody writes until then, per activation or idle search.
        while !self.engine.is_shutdown() {
            // One call site of `run_task`, so that it stays inlined here (two made it a call:
            // +3.7% instructions on pingpong).
            if let Some(task) = self.next_local().or_else(|| {
                if self.adaptive {
                    // Out of local work: a moment to close a window and follow the answer.
                    self.engine.adapt_tick();
                    self.follow_mechanism(Some((&mut victims, &mut mechanism)));
                }
                if self.gathers {
                    // `auto`'s worker count as the controller last answered (`gather.rs`): no
                    // clock read here, a worker runs out of local work too often for one.
                    self.engine.gather_sync();
                }
                self.search(&mut victims, &mut rng)
            }) {
                self.run_task(task);
            }
        }
        CURRENT.with(|c| c.set(ptr::null()));
        // Whatever is still queued here is dropped as plain pointers; shutdown stops the actors.
    }

    /// Counts an activation towards the next load-balancing round and runs one when this worker
    /// has done `balance_interval` activations since the last round anyone ran: as Erlang, which
    /// restarts every run queue's reduction count at each round, the interval is the system's
    /// (with a count per worker, 16 workers ran 16 rounds per interval;
    /// docs/decisions/0079-balancing-pulls-while-it-helps.md).
    fn count_towards_balance(&self) {
        let interval = self.engine.shared.config.balance_interval;
        let epoch = self.engine.balance_epoch.load(Relaxed);
        let (since, seen) = self.since_balance.get();
        let since = if seen == epoch { since + 1 } else { 1 };
        if interval > 0 && since >= interval {
            self.since_balance.set((0, epoch));
            self.engine.balance(self.index(), epoch);
        } else {
            self.since_balance.set((since, epoch));
        }
    }

    fn run_task(&self, task: TaskRef) {
        self.counters().activations.bump(1);
        if self.is_hierarchical() {
            // Alg. 4.2 lines 16–18: enough work done since the last round → try one.
            self.count_towards_balance();
            self.running_hub.set(placement::of(&task).is_hub());
        }
        self.account_locality(task);
        self.running.set(placement::waker_id(&task));
        if self.watch_blocking {
            return self.run_task_auto(task);
        }
        // The stall guard's bracket (`stall.rs`), its fields read once: after the fence in
        // `leave_user` every field of `self` is read again.
        let (guarded, watch) = (self.guarded, self.watch());
        let word = if guarded { self.enter_user() } else { 0 };
        let outcome = if self.hold_now.get() {
            // SAFETY: the task came out of a run queue (or the next slot, or the hold) of this
            // system, so this worker now holds its schedule.
            unsafe { task.run_holding(&self.exec) }
        } else {
            // SAFETY: as above.
            unsafe { task.run(&self.exec) }
        };
        if guarded && self.end_user(watch, word) {
            return self.after_blocked(task, outcome);
        }
        self.finish(task, outcome);
    }

    /// What an activation's outcome obliges this worker to do with the task.
    #[inline]
    pub(super) fn finish(&self, task: TaskRef, outcome: RunOutcome) {
        match outcome {
            RunOutcome::Drained => self.hold(task),
            RunOutcome::Idle | RunOutcome::Stopped => {}
            RunOutcome::Requeue => self.requeue(task, false),
            RunOutcome::Waiting => self.requeue(task, true),
        }
    }

    /// Holds an actor that emptied its mailbox, instead of letting it go idle, and ends the hold
    /// of the one held before: idle if no message came meanwhile, otherwise it runs next, as a
    /// woken actor would.
    ///
    /// Why: in a ping-pong pair each actor empties its mailbox just after sending to the other,
    /// which then answers. Going idle is a compare-and-swap on the mailbox's tail word, and the
    /// answer's send then finds the actor idle and must schedule it (a second routing decision).
    /// Held, the actor stays scheduled: the answer only claims its slot, and the worker finds
    /// the message with a plain load when the next activation drains. One compare-and-swap a
    /// message instead of two (docs/decisions/0036-hold-drained-actor.md). A held actor is not stealable, as the
    /// next slot is not; a message for it from elsewhere waits for this worker's next pick at the
    /// latest, and the hold ends as soon as the next-slot chain breaks (`release_held`).
    #[inline]
    fn hold(&self, task: TaskRef) {
        if let Some(previous) = self.watch().replace_held(task) {
            if let Some(answered) = self.release(previous) {
                self.push_next(answered);
            }
        }
    }

    /// Ends the hold, if any: `Some` if a message came for the held actor (run it now).
    #[inline]
    pub(super) fn release_held(&self) -> Option<TaskRef> {
        let task = self.watch().take_held()?;
        self.release(task)
    }

    /// Releases a held actor, scoring the hold: `Some` if a message came (run it).
    #[inline]
    fn release(&self, task: TaskRef) -> Option<TaskRef> {
        // SAFETY: a held actor is drained and its schedule is this worker's.
        let idle = unsafe { task.release() };
        let score = self.hold_score.get();
        let score = if idle {
            (score - 1).max(-HOLD_SCORE_RANGE)
        } else {
            (score + 1).min(HOLD_SCORE_RANGE)
        };
        self.hold_score.set(score);
        self.hold_now.set(score >= 0);
        (!idle).then_some(task)
    }

    /// An actor that used its budget (or stopped at a half-written message: `waiting`) and is
    /// still scheduled.
    fn requeue(&self, task: TaskRef, waiting: bool) {
        self.counters().requeues.bump(1);
        // A busy actor is no ping-pong partner: end the hold now, since a chain of budgets through
        // the next slot never breaks it otherwise. An answered held actor runs next, the busy one
        // behind it.
        if let Some(held) = self.release_held() {
            self.push_next(held);
        }
        if waiting {
            // The sender of the next message was preempted between claiming its slot and writing
            // it. Re-running the actor at once spins on that slot, and on a machine with more
            // threads than cores it takes the very core the sender needs: hundreds of thousands of
            // requeues in one run. Give the core away once, then re-queue as usual.
            self.counters().requeues_waiting.bump(1);
            std::thread::yield_now();
        }
        if self.is_hierarchical() {
            // Hubs stay pinned here; foreign actors stay findable by their home node.
            let layout = &self.engine.shared.machine.layout;
            if let Some(route) = choices::hierarchical_requeue(
                layout,
                placement::of(&task),
                self.index(),
                self.routing(),
            ) {
                return self.schedule(route, task);
            }
        }
        if let Routing::Places(mode) = self.routing.get() {
            if mode.shared_queues() {
                // Mode A: the place's workers share its queue; an actor that used its budget
                // goes behind the others there, unless nothing else waits.
                let layout = &self.engine.shared.machine.layout;
                let place = layout.place_of(self.index());
                if self.watch().next_is_empty() && self.engine.place_queues[place].is_empty() {
                    let _ = self.watch().replace_next(task);
                } else {
                    self.schedule(Route::Place(place), task);
                }
                return;
            }
        }
        if self.watch().next_is_empty() && !self.has_local_work() {
            // Nothing else to run here: keep going with this actor.
            let _ = self.watch().replace_next(task);
        } else {
            // Fairness: behind everything else (CAF's `resume_later`), the inbox included: an
            // actor that used its budget while others waited there used to take the next slot
            // whenever the deque was empty, and ran up to `NEXT_SLOT_STREAK_LIMIT` budgets in a
            // row (or 61 activations, until the periodic inbox check) ahead of them: a message
            // from a plain thread waited a median 3 ms behind 8 busy actors on 2 workers
            // (docs/results/latency.md). Its own queue, not the inbox: a wake-up that arrives
            // there meanwhile runs before it instead of behind every busy actor (docs/decisions/0035-yielded-queue.md).
            self.own_queues().yielded.push(task);
            self.engine.notify_stealable(Some(self.index()));
        }
    }

    /// Before an activation: the first-activation home rule (Listing 5.2; under `cls` the first
    /// worker to run an actor is its home), where it runs relative to its home, its queue wait.
    #[inline]
    fn account_locality(&self, task: TaskRef) {
        let placement = placement::of(&task);
        let me = self.index();
        if placement.stays_home(me) {
            // Ran here last time and lives here: no first activation, no migration, no other
            // node to look up, only the home-PU count (the branches and loads below cost a
            // ping-pong pair ~10 instructions an activation).
            self.counters().exec_home_pu.bump(1);
        } else {
            self.account_moved(placement, me);
        }
        let stamped = placement.enqueued_at.load(Relaxed);
        if stamped != 0 {
            self.record_queue_wait(placement, stamped);
        }
    }

    /// [`Self::account_locality`] for an actor that runs for the first time, away from where it
    /// last ran, or away from its home.
    #[inline(never)]
    fn account_moved(&self, placement: &placement::ActorPlacement, me: usize) {
        placement.account_run(
            me,
            self.routing.get().keeps_spawn_home(),
            &self.engine.shared.machine.layout,
            self.counters(),
        );
    }

    /// A sampled wake-up's queue wait (one activation in 16 under `cls`), out of line.
    #[cold]
    #[inline(never)]
    fn record_queue_wait(&self, placement: &placement::ActorPlacement, stamped: u64) {
        placement.enqueued_at.store(0, Relaxed);
        let counters = self.counters();
        counters.queue_wait_samples.bump(1);
        counters.record_queue_wait(self.engine.now_ns().saturating_sub(stamped));
    }
}
