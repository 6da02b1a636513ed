//! The runtime layer: what every engine shares.
//!
//! ```text
//!   System ──► engine/ (actor-centric, …) ──► runtime/ ──► mailbox/, telemetry/, policy/
//!                         ▲                       ▲
//!   actor/ (Actor, ActorRef, Context, ask) ───────┘
//! ```
//!
//! * [`task`]: the type-erased task engines queue ([`TaskRef`]), its header and the
//!   [`RunOutcome`] of an activation;
//! * [`cell`]: the actor cell (mailbox, state, lifecycle) and its activation loop;
//! * [`exec`]: the execution context a worker passes to an activation ([`Exec`]);
//! * [`id`] and [`registry`]: actor ids and the live-actor registry;
//! * [`boundary`]: what the runtime asks of an engine ([`EngineCore`] and one of
//!   [`TaskQueues`] / [`LetterQueues`]);
//! * this file: the state every engine shares ([`Shared`]) and the handle cells keep ([`Runtime`]).
//!
//! The runtime knows no engine: it calls one through its [`Boundary`], and an engine gives it work
//! through [`TaskRef::run`]. The actor layer knows no engine either: it sees only this layer.
//! `docs/internals/architecture.md` walks through the layers and their protocols.

pub(crate) mod boundary;
pub(crate) mod budget;
pub(crate) mod cell;
pub(crate) mod clock;
pub(crate) mod dead_letters;
pub(crate) mod errors;
pub(crate) mod exec;
pub(crate) mod exec_policy;
mod handles;
pub(crate) mod id;
pub(crate) mod letter;
pub(crate) mod lifecycle;
pub(crate) mod location;
#[cfg(all(test, loom))]
mod loom_tests;
pub(crate) mod names;
pub(crate) mod options;
pub(crate) mod panic_report;
pub(crate) mod registry;
pub(crate) mod restart;
pub(crate) mod stop_reason;
pub(crate) mod task;
pub(crate) mod timer;

pub(crate) use boundary::{Boundary, Delivery, EngineCore, LetterQueues, TaskQueues};
pub(crate) use cell::{give_back_reserved, Behavior, CellContext, Deliver, MAX_CAPACITY};
pub use dead_letters::{DeadLetter, DeadLetterReason, DEAD_LETTER_WINDOW};
pub(crate) use exec::Exec;
pub use id::ActorId;
pub(crate) use letter::{Letter, Slot};
pub(crate) use task::{Header, RunOutcome, SchedState, TaskRef};

use crate::config::Config;
use crate::machine::Machine;
use crate::runtime::options::SpawnOptions;
use crate::telemetry::{Counters, Stats};
use id::ExternalIds;
use parking_lot::Mutex;
use registry::Registry;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// A record of an actor that failed: it panicked in a handler, in `started`, or in its `stopped`
/// hook (see [`crate::Actor::stopped`]), or it was a supervisor that gave up
/// ([`crate::StopReason::Escalated`]). A supervised child restarted in place is recorded at each
/// panic, though it did not stop.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ActorFailure {
    /// The actor that failed.
    pub actor: ActorId,
    /// Its name, if it was spawned with [`SpawnOptions::name`].
    pub name: Option<String>,
    /// Its Rust type name.
    pub actor_type: &'static str,
    /// The panic message (a `stopped` hook's says so), or the escalation's.
    pub message: String,
}

/// State every engine of one system shares: configuration, machine, live actors, counters,
/// failures.
pub(crate) struct Shared {
    pub(crate) config: Config,
    pub(crate) machine: Machine,
    pub(crate) registry: Registry,
    pub(crate) counters: Counters,
    /// The dedicated threads of `thread` actors.
    pub(crate) dedicated: exec_policy::dedicated::Threads,
    /// Why `config.policy` was chosen, when `auto` chose it.
    pub(crate) policy_reason: Option<&'static str>,
    /// `auto` adapting while it runs, between `cls` and `config.policy` (`engine/adapt.rs`).
    pub(crate) adapt: Option<crate::engine::adapt::Adapt>,
    /// `auto` running on fewer workers while they handle more (`engine/gather.rs`).
    pub(crate) gather: Option<crate::engine::gather::Gather>,
    /// Handler time per actor, when `handler_sample_us` asks for it: filled by the sampling
    /// thread (`system/handler_sampler.rs`) or, under the simulation, by the engine.
    pub(crate) handler_time: Option<crate::telemetry::HandlerTimes>,
    /// Pending timers, one shard per worker (one in all under the simulation).
    pub(crate) timers: timer::Timers,
    /// The timer clock of the wall-clock engines: its origin (the system's start, which its
    /// uptime counts from too) and which timers may read the coarse clock.
    pub(crate) timer_clock: clock::TimerClock,
    /// Round robin over the shards for timers armed outside the workers.
    timer_turn: crate::sync::AtomicUsize,
    ids: ExternalIds,
    /// The most recent failures, at most `config.failure_window`, oldest first.
    failures: Mutex<VecDeque<ActorFailure>>,
    /// Running, shutting down or terminated; which threads are the system's own.
    pub(crate) lifecycle: lifecycle::Lifecycle,
    /// The recent dead letters ([`crate::System::dead_letters`]).
    dead_letters: dead_letters::DeadLetters,
    /// Names of live actors spawned with one (unnamed actors pay nothing for the feature).
    names: Mutex<HashMap<ActorId, Arc<str>, rustc_hash::FxBuildHasher>>,
    /// Names actors are registered under ([`crate::System::register`]).
    pub(crate) directory: names::Directory,
    /// The Tokio runtime whose context every poll of a piped future enters
    /// ([`crate::SystemBuilder::tokio_handle`]).
    #[cfg(feature = "tokio")]
    pub(crate) tokio: Option<tokio::runtime::Handle>,
}

impl Shared {
    /// Whether the system was given a Tokio runtime ([`crate::SystemBuilder::tokio_handle`]).
    pub(crate) fn has_tokio(&self) -> bool {
        #[cfg(feature = "tokio")]
        return self.tokio.is_some();
        #[cfg(not(feature = "tokio"))]
        return false;
    }

    pub(crate) fn new(
        config: Config,
        machine: Machine,
        policy_reason: Option<&'static str>,
    ) -> Self {
        Shared {
            policy_reason,
            adapt: None,
            gather: None,
            counters: Counters::new(config.workers),
            handler_time: (config.handler_sample_us > 0).then(|| {
                // Exact virtual time under the simulation; one interval per sample otherwise.
                let interval_ns = match config.engine {
                    crate::config::EngineKind::Sim => 0,
                    _ => config.handler_sample_us * 1_000,
                };
                crate::telemetry::HandlerTimes::new(config.workers, interval_ns)
            }),
            dedicated: exec_policy::dedicated::Threads::default(),
            timers: timer::Timers::new(config.engine.timer_shards(config.workers)),
            timer_clock: clock::TimerClock::new(),
            timer_turn: crate::sync::AtomicUsize::new(0),
            config,
            machine,
            registry: Registry::new(),
            ids: ExternalIds::new(),
            failures: Mutex::new(VecDeque::new()),
            lifecycle: lifecycle::Lifecycle::new(),
            dead_letters: dead_letters::DeadLetters::new(),
            names: Mutex::new(HashMap::default()),
            directory: Default::default(),
            #[cfg(feature = "tokio")]
            tokio: None,
        }
    }

    /// A fresh actor id, made by the spawning worker if any.
    pub(crate) fn next_actor_id(&self, from: Option<&Exec>) -> ActorId {
        match from {
            Some(exec) => exec.next_actor_id(),
            None => self.ids.next(),
        }
    }

    /// Registers a new actor and counts the spawn; `false` (nothing registered or counted) once
    /// shutdown has closed the registry. The registry reads the actor's parent from its cell.
    #[must_use = "a refused actor must not run"]
    #[inline]
    pub(crate) fn register(&self, task: TaskRef, from: Option<&Exec>) -> bool {
        if !self.registry.insert(task) {
            return false;
        }
        match from {
            Some(exec) => exec.counters().spawned.bump(1),
            None => self.counters.system.external_spawns.add_shared(1),
        }
        true
    }

    pub(crate) fn name(&self, id: ActorId, name: &str) {
        self.names.lock().insert(id, name.into());
    }

    pub(crate) fn name_of(&self, id: ActorId) -> Option<Arc<str>> {
        self.names.lock().get(&id).cloned()
    }

    /// [`name_of`](Self::name_of) without waiting: `None` while the table is locked (a panic
    /// report, which may run where this thread holds the lock, must not wait for it).
    pub(crate) fn try_name_of(&self, id: ActorId) -> Option<Arc<str>> {
        self.names.try_lock()?.get(&id).cloned()
    }

    /// Queues a child's failure for its parent's `child_failed` hook; `false` if the parent has
    /// stopped (no longer registered, or its mailbox closed).
    #[cold]
    pub(crate) fn tell_parent(&self, parent: ActorId, failure: ActorFailure) -> bool {
        // SAFETY: `with_live` calls us under the registry's lock while the parent is registered,
        // and a registered actor's cell is alive (it unregisters before its life reference goes).
        // The strong reference taken here keeps it alive after the lock, for the queueing.
        let Some(parent) = self
            .registry
            .with_live(parent, |task| unsafe { task.control() })
        else {
            return false;
        };
        parent.child_failed(failure)
    }

    /// Removes a terminated actor (and its name); a graceful shutdown waiting for it hears of it.
    /// Counted before it leaves the registry: a graceful shutdown that finds the registry empty
    /// has counted every actor that stopped (its report's `stopped`). The other order left the
    /// last one uncounted now and then.
    #[inline]
    pub(crate) fn unregister(&self, id: ActorId, named: bool) {
        self.lifecycle.note_terminated();
        self.registry.remove(id);
        self.forget_name(id, named);
    }

    /// Forgets the name of an actor that is gone, or was never registered.
    #[inline]
    pub(crate) fn forget_name(&self, id: ActorId, named: bool) {
        if named {
            self.names.lock().remove(&id);
        }
    }

    pub(crate) fn note_stopped(&self, from: Option<&Exec>) {
        match from {
            Some(exec) => exec.counters().stopped.bump(1),
            None => self.counters.system.actors_stopped.add_shared(1),
        }
    }

    /// `n` messages of type `message_type` to `actor` will never be handled (none if `n` is 0):
    /// counted, logged and recorded, as stopped by a shutdown once one has begun. `named`: the
    /// actor may have a name to look up (false spares unnamed actors the name table's lock).
    pub(crate) fn note_dead_letters(
        &self,
        actor: ActorId,
        n: u64,
        message_type: &'static str,
        named: bool,
    ) {
        if n > 0 {
            self.counters.system.dead_letters.add_shared(n);
            let reason = if self.lifecycle.is_shutting_down() {
                DeadLetterReason::Shutdown
            } else {
                DeadLetterReason::Stopped
            };
            tracing::debug!(%actor, dropped = n, message_type, %reason, "messages never handled (dead letters)");
            self.record_dead_letter(actor, n, message_type, reason, named);
        }
    }

    /// Counts and records messages dropped by a bounded mailbox's overflow rule (`DropOldest`,
    /// `DropNewest`).
    pub(crate) fn note_overflow_dropped(
        &self,
        actor: ActorId,
        n: u64,
        message_type: &'static str,
        named: bool,
    ) {
        self.counters.system.overflow_dropped.add_shared(n);
        let reason = DeadLetterReason::Overflow;
        self.record_dead_letter(actor, n, message_type, reason, named);
    }

    #[cold]
    fn record_dead_letter(
        &self,
        actor: ActorId,
        count: u64,
        message_type: &'static str,
        reason: DeadLetterReason,
        named: bool,
    ) {
        self.dead_letters
            .record(actor, message_type, reason, count, || {
                named
                    .then(|| self.name_of(actor))
                    .flatten()
                    .map(|n| n.to_string())
            });
    }

    /// The recent dead letters, oldest first.
    pub(crate) fn dead_letters(&self) -> Vec<DeadLetter> {
        self.dead_letters.snapshot()
    }

    /// Counts a send refused (or a `try_send` answered) because a bounded mailbox was full.
    pub(crate) fn note_mailbox_full(&self) {
        self.counters.system.mailbox_full.add_shared(1);
    }

    /// Counts an actor newly marked as a hub.
    pub(crate) fn note_hub(&self, from: Option<&Exec>) {
        match from {
            Some(exec) => exec.counters().hubs.bump(1),
            None => self.counters.system.external_hubs.add_shared(1),
        }
    }

    /// Counts a failure and keeps it among the `config.failure_window` most recent (the oldest
    /// kept one makes room): memory stays bounded however many actors fail.
    /// `panicked`: a panic (counted in `panics`), else a supervisor's escalation (counted in
    /// `escalations`).
    pub(crate) fn record_failure(&self, failure: ActorFailure, panicked: bool) {
        let counter = match panicked {
            true => &self.counters.system.panics,
            false => &self.counters.system.escalations,
        };
        counter.add_shared(1);
        let window = self.config.failure_window;
        if window == 0 {
            return;
        }
        let mut failures = self.failures.lock();
        if failures.len() == window {
            failures.pop_front();
        }
        failures.push_back(failure);
    }

    pub(crate) fn failures(&self) -> Vec<ActorFailure> {
        self.failures.lock().iter().cloned().collect()
    }

    pub(crate) fn stats(&self) -> Stats {
        Stats {
            policy: self.config.policy.to_string(),
            policy_reason: self
                .policy_reason
                .unwrap_or("named by the configuration")
                .to_owned(),
            adaptive: self.adapt.as_ref().map(|a| a.stats()),
            gather: self.gather.as_ref().map(|g| g.stats()),
            ..self.counters.stats()
        }
    }

    /// Terminates every live actor and closes the registry: a later spawn (a `stopped` hook's,
    /// or any thread's) is refused and gets a stopped actor. Their `stopped` hooks run on the
    /// calling thread.
    ///
    /// # Safety
    /// No activation runs any more, and none will: the engine's workers have stopped.
    pub(crate) unsafe fn terminate_all(&self) {
        for task in self.registry.drain_and_close() {
            // SAFETY: no activation runs (caller's contract); each task was registered (alive) and
            // is shut down once because the registry handed it out once.
            unsafe { task.shutdown() };
        }
    }
}

/// What an actor cell keeps to reach its system: the engine (its [`Boundary`]) and the shared
/// state. Each worker owns one and the `System` one more; a cell clones the handle of whoever
/// spawned it, so the reference counts cells touch stay in that worker's cache.
pub(crate) struct Runtime {
    /// What every engine implements.
    core: Arc<dyn EngineCore>,
    /// How the engine takes work: runnable actors or letters.
    delivery: Delivery,
    pub(crate) shared: Arc<Shared>,
    /// Messages one activation may handle (copied here: read once per activation).
    throughput: usize,
    /// `throughput` as the budget word counts it (`budget.rs`), beside it.
    budget: i32,
    /// The most messages an activation that finds a backlog takes in all (`budget.rs`).
    backlog_gulp: usize,
    /// `panic_report = "tracing"`: activations announce themselves to the panic hook
    /// (`panic_report.rs`). Beside `throughput`, read in the same line once per activation.
    panic_events: bool,
    /// The engine wants to hear when a plain thread waits for a reply.
    wait_notice: bool,
    /// The engine runs execution policies other than `task` (dedicated threads, inline runs).
    exec_policies: bool,
    /// Timers run on the engine's virtual clock (the simulation), in microsecond ticks.
    virtual_time: bool,
}

impl Runtime {
    pub(crate) fn new(boundary: Boundary, shared: Arc<Shared>) -> Self {
        let Boundary { core, delivery } = boundary;
        Runtime {
            throughput: shared.config.throughput,
            budget: budget::units(shared.config.throughput),
            backlog_gulp: shared.config.backlog_gulp,
            panic_events: shared.config.panic_report == crate::config::PanicReport::Tracing,
            wait_notice: core.wants_wait_notice(),
            exec_policies: shared.config.engine.runs_exec_policies(),
            virtual_time: core.virtual_now_ns().is_some(),
            core,
            delivery,
            shared,
        }
    }

    /// What every engine implements.
    #[inline]
    pub(crate) fn core(&self) -> &dyn EngineCore {
        &*self.core
    }

    /// [`TaskQueues::woken_waiting`] of this runtime's engine (`false` for one that queues
    /// letters: its workers gulp by their own rules).
    pub(crate) fn woken_waiting(&self) -> bool {
        match &self.delivery {
            Delivery::Tasks(engine) => engine.woken_waiting(),
            Delivery::Letters(_) => false,
        }
    }

    /// The engine as one that queues runnable actors. Called only for a cell whose mailbox is
    /// not direct (its idle → scheduled transitions, its first activation) and by execution
    /// policies, which only engines that queue actors run.
    #[inline]
    pub(crate) fn tasks(&self) -> &dyn TaskQueues {
        match &self.delivery {
            Delivery::Tasks(engine) => &**engine,
            Delivery::Letters(_) => {
                debug_assert!(
                    false,
                    "an engine that queues letters was asked to queue an actor"
                );
                // SAFETY: cells choose their way by their mailbox, which is direct exactly when
                // the delivery is `Letters` (`cell::spawn` reads `direct()` of the runtime it
                // clones, and every runtime of a system holds one boundary): a direct mailbox
                // never reports an idle → scheduled transition, so no caller reaches this under
                // `Letters`; execution policies other than `task` run only under the
                // actor-centric engine (`EngineKind::runs_exec_policies`). The send path then
                // reads the interface without testing which one it is.
                unsafe { std::hint::unreachable_unchecked() }
            }
        }
    }

    /// The engine as one that queues letters. Called only for a cell whose mailbox is direct.
    #[inline]
    pub(crate) fn letters(&self) -> &dyn LetterQueues {
        match &self.delivery {
            Delivery::Letters(engine) => &**engine,
            Delivery::Tasks(_) => {
                debug_assert!(false, "an engine that queues actors was handed a letter");
                // SAFETY: a mailbox is direct exactly when the delivery is `Letters` (see
                // `tasks`), and only cells with direct mailboxes post, close or ask about
                // letters.
                unsafe { std::hint::unreachable_unchecked() }
            }
        }
    }

    #[inline]
    pub(crate) fn throughput(&self) -> usize {
        self.throughput
    }

    /// An activation's budget: `throughput` units, as `budget.rs` counts them (envelopes taken
    /// and sends into queues).
    #[inline]
    pub(crate) fn budget(&self) -> i32 {
        self.budget
    }

    /// The most messages an activation that finds a backlog takes in all (`budget.rs`).
    #[inline]
    pub(crate) fn backlog_gulp(&self) -> usize {
        self.backlog_gulp
    }

    /// Whether this system's panics in actor code are reported as `tracing` events.
    #[inline]
    pub(crate) fn panic_events(&self) -> bool {
        self.panic_events
    }

    /// Whether actors get direct mailboxes: the engine queues letters (message-centric).
    #[inline]
    pub(crate) fn direct(&self) -> bool {
        matches!(self.delivery, Delivery::Letters(_))
    }

    /// Whether the engine wants to hear when a plain thread waits for a reply.
    pub(crate) fn wants_wait_notice(&self) -> bool {
        self.wait_notice
    }

    /// The execution policy of a new actor: the explicit one, else the system's mode's choice
    /// for its declared characteristics; always `task` under engines that run nothing else. And
    /// whether to measure the actor and map it online (`auto`, nothing named or declared).
    pub(crate) fn exec_policy_of(
        &self,
        explicit: Option<crate::exec_policy::ExecPolicy>,
        declared: Option<&crate::exec_policy::Characteristics>,
    ) -> (crate::exec_policy::ExecPolicy, bool) {
        if !self.exec_policies {
            return (crate::exec_policy::ExecPolicy::Task, false);
        }
        let mode = self.shared.config.exec;
        let watched =
            mode == crate::exec_policy::ExecMode::Auto && explicit.is_none() && declared.is_none();
        (
            explicit.unwrap_or_else(|| mode.policy_for(declared)),
            watched,
        )
    }

    /// A send made `task` runnable: hand it to whoever runs it under its execution policy (the
    /// engine for `task`, the cost of the feature for every other actor: one byte read).
    #[inline]
    pub(crate) fn wake(self: &Arc<Self>, task: TaskRef) {
        match task.header().exec.policy() {
            crate::exec_policy::ExecPolicy::Task => self.tasks().schedule_woken(task),
            other => exec_policy::wake(self, task, other),
        }
    }

    /// A new actor's first activation: a `thread` actor starts its thread, every other actor is
    /// queued by the engine (a `monitor` actor's start runs on a worker, not inline in its
    /// spawner).
    pub(crate) fn schedule_spawned(
        self: &Arc<Self>,
        task: TaskRef,
        options: &SpawnOptions,
        from: Option<&Exec>,
    ) {
        match task.header().exec.policy() {
            crate::exec_policy::ExecPolicy::Thread => exec_policy::dedicated::hand_over(self, task),
            _ => self.tasks().schedule_spawned(task, options, from),
        }
    }
}
