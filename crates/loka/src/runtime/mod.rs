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
pub(crate) mod exec;
pub(crate) mod exec_policy;
mod handles;
pub(crate) mod id;
pub(crate) mod letter;
#[cfg(all(test, loom))]
mod loom_tests;
pub(crate) mod registry;
pub(crate) mod task;

pub(crate) use cell::{Behavior, CellContext, Deliver};
pub(crate) use exec::Exec;
pub use id::ActorId;
pub(crate) use letter::Letter;
pub(crate) use task::{Header, RunOutcome, SchedState, TaskRef};

use crate::actor::options::SpawnOptions;
use crate::config::Config;
use crate::machine::Machine;
use crate::telemetry::{Counters, Stats};
use id::ExternalIds;
use parking_lot::Mutex;
use registry::Registry;
use std::collections::HashMap;
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

    /// A plain thread starts waiting for a reply ([`crate::Pending`]): an engine that runs only
    /// when someone waits (the simulation) runs now.
    fn waiting(&self) {}

    /// Whether actors get direct mailboxes: their envelopes come to the engine as [`Letter`]s
    /// through [`post`](Self::post) instead of waiting in the mailbox (the message-centric
    /// engine). Read once, when a [`Runtime`] handle is made. The other methods below are only
    /// called when this is `true`.
    fn direct(&self) -> bool {
        false
    }

    /// Queues a letter for its actor; hands it back if the actor has closed (see
    /// [`close`](Self::close)).
    fn post(&self, letter: Letter) -> Result<(), Letter> {
        drop(letter);
        unreachable!("letters are only posted to engines with direct mailboxes");
    }

    /// The actor `task` has stopped: refuse its later letters and queue `release` (which frees
    /// the actor) behind those already queued.
    fn close(&self, task: TaskRef, release: Letter) {
        let _ = (task, release);
        unreachable!("only engines with direct mailboxes close actors");
    }

    /// Whether letters to `task` are queued (behind the one being delivered). Called by the
    /// actor's own delivery, rarely (an actor about to stop because no reference is left).
    fn has_queued(&self, task: TaskRef) -> bool {
        let _ = task;
        unreachable!("only engines with direct mailboxes queue letters");
    }
}

/// A record of an actor that stopped because its handler panicked.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ActorFailure {
    /// The actor that failed.
    pub actor: ActorId,
    /// Its name, if it was spawned with [`SpawnOptions::name`].
    pub name: Option<String>,
    /// Its Rust type name.
    pub actor_type: &'static str,
    /// The panic message.
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
    ids: ExternalIds,
    failures: Mutex<Vec<ActorFailure>>,
    /// Names of live actors spawned with one (unnamed actors pay nothing for the feature).
    names: Mutex<HashMap<ActorId, Arc<str>, rustc_hash::FxBuildHasher>>,
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
            config,
            machine,
            registry: Registry::new(),
            ids: ExternalIds::new(),
            failures: Mutex::new(Vec::new()),
            names: Mutex::new(HashMap::default()),
        }
    }

    /// A fresh actor id, made by the spawning worker if any.
    pub(crate) fn next_actor_id(&self, from: Option<&Exec>) -> ActorId {
        match from {
            Some(exec) => exec.next_actor_id(),
            None => self.ids.next(),
        }
    }

    pub(crate) fn register(&self, id: ActorId, task: TaskRef, from: Option<&Exec>) {
        self.registry.insert(id, task);
        match from {
            Some(exec) => exec.counters().spawned.bump(1),
            None => self.counters.system.external_spawns.add_shared(1),
        }
    }

    pub(crate) fn name(&self, id: ActorId, name: &str) {
        self.names.lock().insert(id, name.into());
    }

    pub(crate) fn name_of(&self, id: ActorId) -> Option<Arc<str>> {
        self.names.lock().get(&id).cloned()
    }

    /// Removes a terminated actor (and its name).
    pub(crate) fn unregister(&self, id: ActorId, named: bool) {
        self.registry.remove(id);
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

    pub(crate) fn note_dead_letters(&self, actor: ActorId, n: u64) {
        if n > 0 {
            self.counters.system.dead_letters.add_shared(n);
            tracing::debug!(%actor, dropped = n, "messages to a stopped actor dropped (dead letters)");
        }
    }

    /// Counts an actor newly marked as a hub.
    pub(crate) fn note_hub(&self, from: Option<&Exec>) {
        match from {
            Some(exec) => exec.counters().hubs.bump(1),
            None => self.counters.system.external_hubs.add_shared(1),
        }
    }

    pub(crate) fn record_failure(&self, failure: ActorFailure) {
        self.counters.system.panics.add_shared(1);
        self.failures.lock().push(failure);
    }

    pub(crate) fn failures(&self) -> Vec<ActorFailure> {
        self.failures.lock().clone()
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

    /// Terminates every live actor, repeating until none is left (stopping one may spawn or
    /// release others). Their `stopped` hooks run on the calling thread.
    ///
    /// # Safety
    /// No activation runs any more, and none will: the engine's workers have stopped.
    pub(crate) unsafe fn terminate_all(&self) {
        loop {
            let live = self.registry.drain();
            if live.is_empty() {
                break;
            }
            for task in live {
                // SAFETY: no activation runs (caller's contract); each task was registered (alive)
                // and is shut down once because the registry handed it out once.
                unsafe { task.shutdown() };
            }
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
}

impl Runtime {
    pub(crate) fn new(scheduler: Arc<dyn Scheduler>, shared: Arc<Shared>) -> Self {
        Runtime {
            throughput: shared.config.throughput,
            wait_notice: scheduler.wants_wait_notice(),
            direct: scheduler.direct(),
            exec_policies: shared.config.engine.runs_exec_policies(),
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
