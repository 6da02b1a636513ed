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
//! * this file: the [`Scheduler`] boundary (what the runtime asks of an engine), the state every
//!   engine shares ([`Shared`]) and the handle cells keep ([`Runtime`]).
//!
//! The runtime knows no engine: it calls one through [`Scheduler`], and an engine gives it work
//! through [`TaskRef::run`]. The actor layer knows no engine either: it sees only this layer.
//! `docs/architecture.md` walks through the layers and their protocols.

pub(crate) mod cell;
pub(crate) mod clock;
pub(crate) mod dead_letters;
pub(crate) mod exec;
pub(crate) mod exec_policy;
mod handles;
pub(crate) mod id;
pub(crate) mod letter;
pub(crate) mod lifecycle;
#[cfg(all(test, loom))]
mod loom_tests;
pub(crate) mod registry;
pub(crate) mod task;
pub(crate) mod timer;

pub(crate) use cell::{Behavior, CellContext, Deliver, MAX_CAPACITY};
pub use dead_letters::{DeadLetter, DeadLetterReason, DEAD_LETTER_WINDOW};
pub(crate) use exec::Exec;
pub use id::ActorId;
pub(crate) use letter::{Letter, Slot};
pub(crate) use task::{Header, RunOutcome, SchedState, TaskRef};

use crate::actor::options::SpawnOptions;
use crate::config::Config;
use crate::machine::Machine;
use crate::telemetry::{Counters, Stats};
use id::ExternalIds;
use parking_lot::Mutex;
use registry::Registry;
use std::collections::{HashMap, VecDeque};
use std::ptr::NonNull;
use std::sync::Arc;

/// What the runtime asks of the engine that runs its actors: the engine boundary. Each method is
/// called by the runtime or the actor layer; nothing else of an engine is visible to them.
pub(crate) trait Scheduler: Send + Sync + 'static {
    /// Gives a new actor's per-actor scheduling state ([`Header::sched`]) its initial value.
    ///
    /// # Safety
    /// Called once per task, before the task is shared with any other thread. `from` is the
    /// worker spawning it (`None` for a plain thread).
    unsafe fn init_task(&self, header: &Header, options: &SpawnOptions, from: Option<&Exec>);

    /// Queues a new actor for its first activation. `from` is the worker that spawned it (`None`
    /// for a plain thread).
    fn schedule_spawned(&self, task: TaskRef, options: &SpawnOptions, from: Option<&Exec>);

    /// A send found `task` idle and made it runnable: queue it. Called exactly once per idle →
    /// scheduled transition of its mailbox, from any thread.
    fn schedule_woken(&self, task: TaskRef);

    /// Sets or clears the actor's hub mark; returns whether it changed.
    fn set_hub(&self, task: TaskRef, hub: bool) -> bool;

    /// Whether the actor is a hub.
    fn is_hub(&self, task: TaskRef) -> bool;

    /// Whether [`waiting`](Self::waiting) must be called when a plain thread starts waiting for
    /// a reply (read once, when a [`Runtime`] handle is made). Engines that run by themselves
    /// say no and cost nothing.
    fn wants_wait_notice(&self) -> bool {
        false
    }

    /// A plain thread starts waiting for a reply ([`crate::Pending`]) or for room in a bounded
    /// mailbox: an engine that runs only when someone waits (the simulation) runs now. May also
    /// be called from an actor's handler (a bounded mailbox found full), where it must do nothing
    /// harmful.
    fn waiting(&self) {}

    /// Whether actors get direct mailboxes: their envelopes come to the engine as [`Letter`]s
    /// through [`post`](Self::post) instead of waiting in the mailbox (the message-centric
    /// engine). Read once, when a [`Runtime`] handle is made. The other methods below are only
    /// called when this is `true`.
    fn direct(&self) -> bool {
        false
    }

    /// Queues a letter for `task`, sealed by `seal` straight where it will wait (it is called at
    /// most once, with a place to [`Letter::write_at`]); `false`, without calling `seal`, if
    /// the actor has closed (see [`close`](Self::close)). `append`: the letter may join the
    /// calling thread's running gulp instead of the queue.
    fn post_sealed(
        &self,
        task: TaskRef,
        append: bool,
        seal: &mut dyn FnMut(NonNull<Letter>),
    ) -> bool {
        let _ = (task, append, seal);
        unreachable!("letters are only posted to engines with direct mailboxes");
    }

    /// Where a letter to `task` sent from the calling thread goes: a place at the end of the
    /// gulp this thread's worker is processing, if `task` is one of its actors (written in place
    /// by the caller), or [`Slot::Elsewhere`] for [`post_sealed`](Self::post_sealed).
    fn append_slot(&self, task: TaskRef) -> Slot {
        let _ = task;
        Slot::Elsewhere
    }

    /// Publishes the letter to `task` written in a [`Slot::Queued`] place and releases its
    /// queue.
    fn finish_post(&self, task: TaskRef) {
        let _ = task;
        unreachable!("only engines with direct mailboxes hand out queued slots");
    }

    /// [`append_slot`](Self::append_slot) for a letter that must come after every letter already
    /// queued for `task` (a stop, the last handle's signal): it may join the gulp only while the
    /// actor's queue holds nothing. A method of its own, so that a message's path carries no
    /// extra argument.
    fn append_slot_after_queued(&self, task: TaskRef) -> Slot {
        let _ = task;
        Slot::Elsewhere
    }

    /// The actor `task` has stopped: refuse its later letters and queue its release letter (a
    /// `release` letter with no envelope, which frees the actor) behind those already queued;
    /// `None` for an actor that never lived (refused at spawn: no letter, nothing to free).
    /// The engine writes the letter where it goes: built by the caller and moved here, it was
    /// read back while its stores were still in flight.
    fn close(&self, task: TaskRef, release: Option<&'static letter::LetterVtable>) {
        let _ = (task, release);
        unreachable!("only engines with direct mailboxes close actors");
    }

    /// Whether letters to `task` are queued (behind the one being delivered). Called by the
    /// actor's own delivery, rarely (an actor about to stop because no reference is left).
    fn has_queued(&self, task: TaskRef) -> bool {
        let _ = task;
        unreachable!("only engines with direct mailboxes queue letters");
    }

    /// The engine's own clock in nanoseconds, if it keeps virtual time (the simulation): timers
    /// then run on it (`runtime/clock.rs`). `None`: wall-clock time.
    fn virtual_now_ns(&self) -> Option<u64> {
        None
    }

    /// A timer was armed in `shard` with an earlier deadline than any other there: whoever sleeps
    /// until that shard's next deadline (its worker) must wake and sleep again, shorter.
    fn timer_armed(&self, shard: usize);

    /// Where the actor is bound or last ran, and its state where the engine knows it better than
    /// the mailbox does (introspection: [`crate::System::actors`]). A snapshot, from any thread.
    fn locate(&self, task: TaskRef) -> crate::introspect::Location;
}

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
    /// Pending timers, one shard per worker (one in all under the simulation).
    pub(crate) timers: timer::Timers,
    /// Time zero of the timer clock (wall-clock engines).
    pub(crate) epoch: std::time::Instant,
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
    pub(crate) directory: crate::actor::names::Directory,
    /// The Tokio runtime whose context every poll of a piped future enters
    /// ([`crate::SystemBuilder::tokio_handle`]).
    #[cfg(feature = "tokio")]
    pub(crate) tokio: Option<tokio::runtime::Handle>,
}

impl Shared {
    pub(crate) fn new(
        config: Config,
        machine: Machine,
        policy_reason: Option<&'static str>,
    ) -> Self {
        Shared {
            policy_reason,
            counters: Counters::new(config.workers),
            dedicated: exec_policy::dedicated::Threads::default(),
            timers: timer::Timers::new(clock::shards(&config)),
            epoch: std::time::Instant::now(),
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

/// What an actor cell keeps to reach its system: the engine (as a [`Scheduler`]) and the shared
/// state. Each worker owns one and the `System` one more; a cell clones the handle of whoever
/// spawned it, so the reference counts cells touch stay in that worker's cache.
pub(crate) struct Runtime {
    scheduler: Arc<dyn Scheduler>,
    pub(crate) shared: Arc<Shared>,
    /// Messages one activation may handle (copied here: read once per activation).
    throughput: usize,
    /// The engine wants to hear when a plain thread waits for a reply.
    wait_notice: bool,
    /// Actors get direct mailboxes (see [`Scheduler::direct`]).
    direct: bool,
    /// The engine runs execution policies other than `task` (dedicated threads, inline runs).
    exec_policies: bool,
    /// Timers run on the engine's virtual clock (the simulation), in microsecond ticks.
    virtual_time: bool,
}

impl Runtime {
    pub(crate) fn new(scheduler: Arc<dyn Scheduler>, shared: Arc<Shared>) -> Self {
        Runtime {
            throughput: shared.config.throughput,
            wait_notice: scheduler.wants_wait_notice(),
            direct: scheduler.direct(),
            exec_policies: shared.config.engine.runs_exec_policies(),
            virtual_time: scheduler.virtual_now_ns().is_some(),
            scheduler,
            shared,
        }
    }

    /// The engine.
    #[inline]
    pub(crate) fn scheduler(&self) -> &dyn Scheduler {
        &*self.scheduler
    }

    #[inline]
    pub(crate) fn throughput(&self) -> usize {
        self.throughput
    }

    /// Whether actors get direct mailboxes (message-centric engine).
    #[inline]
    pub(crate) fn direct(&self) -> bool {
        self.direct
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
            crate::exec_policy::ExecPolicy::Task => self.scheduler.schedule_woken(task),
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
            _ => self.scheduler.schedule_spawned(task, options, from),
        }
    }
}
