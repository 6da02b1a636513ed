//! [`System`]: a set of workers running actors, built from a [`Config`].
//!
//! | file | concern |
//! |---|---|
//! | this file | starting a system, spawning from plain threads, waiting for quiescence, inspection |
//! | `shutdown.rs` | prompt and graceful shutdown, also from inside a handler (docs/shutdown.md) |
//! | `signal.rs` | running a service until SIGINT or SIGTERM |
//! | `snapshot.rs` | every counter as one serializable value |
//! | `export.rs` | publishing the counters through the `metrics` facade (feature `metrics`) |
//! | `observe.rs` | serving snapshots on a Unix socket (`observe = "PATH"`, `loka top`) |
//! | `handler_sampler.rs` | sampling what each worker runs, for handler time per actor (`handler_sample_us`) |

#[cfg(feature = "metrics")]
mod export;
mod handler_sampler;
#[cfg(test)]
mod handler_time_tests;
mod introspect;
mod names;
#[cfg(unix)]
mod observe;
mod shutdown;
#[cfg(unix)]
mod signal;
mod snapshot;
mod supervise;

#[cfg(feature = "metrics")]
pub use export::{ExportError, MetricsCollector, MetricsExporter};
pub use introspect::ActorInfo;
#[cfg(unix)]
pub use observe::{MAX_CLIENTS as OBSERVE_MAX_CLIENTS, MIN_WATCH_MS};
pub use shutdown::{ShutdownReport, UnstoppedActor};
#[cfg(unix)]
pub use signal::{SignalError, StopSignal, DEFAULT_SIGNAL_GRACE};
pub use snapshot::{
    ActorTime, HandlerTime, RegisteredActor, Snapshot, TopologySnapshot, WorkerPlace,
    HANDLER_TIME_TOP,
};

use crate::actor::{Actor, ActorFailure, ActorRef, SpawnError, SpawnOptions};
use crate::config::{Config, ConfigError, EngineKind, IdleStrategy, PanicReport, StallGuard};
use crate::engine::dispatch::Engine;
use crate::machine::Machine;
use crate::policy::PolicyKind;
use crate::runtime::cell::{self, Life};
use crate::runtime::lifecycle::STOPPING;
use crate::runtime::{DeadLetter, Runtime, Shared};
use crate::telemetry::Stats;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// An actor system: an engine (worker threads and their queues) and the actors it runs.
///
/// Dropping a `System` shuts it down promptly (see [`System::shutdown`]; for a graceful
/// shutdown call [`System::shutdown_timeout`] first).
pub struct System {
    engine: Engine,
    pub(crate) shared: Arc<Shared>,
    /// The runtime handle kept by actors spawned from plain threads.
    pub(crate) runtime: Arc<Runtime>,
    /// The `observe` socket's server, when the configuration asked for one.
    #[cfg(unix)]
    observer: Option<observe::Server>,
    /// The handler-time sampler, when `handler_sample_us` asks for one (wall-clock engines).
    sampler: Option<handler_sampler::Sampler>,
}

impl System {
    /// A builder starting from the defaults.
    pub fn builder() -> SystemBuilder {
        SystemBuilder {
            config: Config::default(),
            extras: Extras::default(),
        }
    }

    /// Starts a system from a validated configuration.
    pub fn from_config(config: Config) -> Result<System, ConfigError> {
        Self::start(config, Extras::default())
    }

    /// Starts a system from a configuration and what it cannot carry.
    fn start(config: Config, extras: Extras) -> Result<System, ConfigError> {
        config.validate("the configuration")?;
        let machine = Machine::load(&config)?;
        let requested = config.policy;
        let (chosen, reason) =
            config
                .engine
                .resolve_policy(requested, machine.layout.node_count(), config.workers);
        let config = Config {
            policy: chosen,
            ..config
        };
        config.validate("the configuration")?;
        if let Some(reason) = reason {
            tracing::info!(%requested, %chosen, reason, "scheduler policy chosen");
        }
        if config.panic_report == PanicReport::Tracing {
            crate::runtime::panic_report::install_hook();
        }
        // The socket before the engine: a bad path fails the build with nothing started.
        #[cfg(unix)]
        let bound = match &config.observe {
            Some(path) => Some(observe::Bound::bind(path).map_err(ConfigError::Observe)?),
            None => None,
        };
        let adapts = requested == crate::PolicyKind::Auto
            && chosen != crate::PolicyKind::Cls
            && config.engine.adapts();
        let mut shared = Shared::new(config, machine, reason);
        if adapts {
            shared.adapt = Some(crate::engine::adapt::Adapt::new(chosen));
        }
        // Only with the stall guard: its rescue is what keeps a long handler on an active
        // worker from holding the actors queued behind it while the others are retired.
        if requested == crate::PolicyKind::Auto
            && chosen == crate::PolicyKind::Cls
            && shared.config.engine.gathers()
            && shared.config.stall.runs(shared.config.workers)
        {
            shared.gather = crate::engine::gather::Gather::new(shared.config.workers);
        }
        extras.apply(&mut shared);
        let shared = Arc::new(shared);
        let (engine, runtime) = Engine::start(Arc::clone(&shared))?;
        #[cfg(unix)]
        let observer = match bound {
            Some(bound) => match bound.serve(engine.clone(), Arc::clone(&shared)) {
                Ok(server) => Some(server),
                Err(e) => {
                    // Stop what was started; the system was never handed out.
                    drop(System {
                        engine,
                        shared,
                        runtime,
                        observer: None,
                        sampler: None,
                    });
                    return Err(ConfigError::Observe(e));
                }
            },
            None => None,
        };
        let mut system = System {
            engine,
            shared,
            runtime,
            #[cfg(unix)]
            observer,
            sampler: None,
        };
        match handler_sampler::Sampler::start(&system.shared) {
            Ok(sampler) => system.sampler = sampler,
            Err(error) => {
                // Dropping the system stops what was started; it was never handed out.
                let value = system.shared.config.handler_sample_us.to_string();
                drop(system);
                return Err(ConfigError::Invalid {
                    key: "handler_sample_us",
                    value,
                    source_name: "the configuration".to_owned(),
                    reason: format!("the sampling thread did not start: {error}"),
                });
            }
        }
        Ok(system)
    }

    /// Spawns from a plain thread; `Err` with a stopped reference once the system has shut down.
    fn spawn_life<A: Actor>(
        &self,
        life: Life<A>,
        options: SpawnOptions,
    ) -> Result<ActorRef<A::Msg>, ActorRef<A::Msg>> {
        cell::spawn(&self.runtime, life, options, None, None)
            .map(|cell| ActorRef::from_cell(cell))
            .map_err(|stopped| ActorRef::from_cell(stopped))
    }

    /// Spawns an actor from a plain thread (placed round robin).
    ///
    /// Once the system has shut down (or its workers are stopping) the actor never runs: the
    /// reference returned is stopped — [`ActorRef::is_stopped`] is true, a send fails with
    /// [`SendErrorReason::Stopped`](crate::SendErrorReason::Stopped) and hands the message back,
    /// an [`ask`](ActorRef::ask) fails at once — like the identifier of a dead process in
    /// Erlang. [`try_spawn`](Self::try_spawn) says so instead ([`SpawnError::ShutDown`]), as
    /// Akka's `actorOf` does on a terminated system.
    pub fn spawn<A: Actor>(&self, actor: A) -> ActorRef<A::Msg> {
        self.spawn_with(actor, SpawnOptions::default())
    }

    /// [`spawn`](Self::spawn), or [`SpawnError::ShutDown`] (and nothing spawned) once the system
    /// has shut down or its workers are stopping.
    pub fn try_spawn<A: Actor>(&self, actor: A) -> Result<ActorRef<A::Msg>, SpawnError> {
        self.try_spawn_with(actor, SpawnOptions::default())
    }

    /// Spawns an actor with options (after shutdown: a stopped reference, as
    /// [`spawn`](Self::spawn) says).
    ///
    /// # Panics
    /// On a bad option, or an actor type whose [`Actor::requires`] the system lacks
    /// ([`SpawnError`]); [`try_spawn_with`](Self::try_spawn_with) returns it.
    pub fn spawn_with<A: Actor>(&self, actor: A, options: SpawnOptions) -> ActorRef<A::Msg> {
        if let Err(e) = crate::actor::check_spawn::<A>(&options, &self.shared) {
            panic!("{e}");
        }
        self.spawn_life(Life::Ready(actor), options)
            .unwrap_or_else(|stopped| stopped)
    }

    /// Spawns an actor with options, or says which option is bad, or that the system has shut
    /// down ([`SpawnError::ShutDown`]); then nothing is spawned.
    pub fn try_spawn_with<A: Actor>(
        &self,
        actor: A,
        options: SpawnOptions,
    ) -> Result<ActorRef<A::Msg>, SpawnError> {
        crate::actor::check_spawn::<A>(&options, &self.shared)?;
        if self.shared.lifecycle.phase() >= STOPPING {
            return Err(SpawnError::ShutDown);
        }
        self.spawn_life(Life::Ready(actor), options)
            .map_err(|_| SpawnError::ShutDown)
    }

    /// Spawns an actor whose state is built by `factory` on its first activation, on the worker
    /// that runs it (after shutdown: a stopped reference, and `factory` never runs).
    pub fn spawn_fn<A: Actor>(
        &self,
        factory: impl FnOnce() -> A + Send + 'static,
        options: SpawnOptions,
    ) -> ActorRef<A::Msg> {
        if let Err(e) = crate::actor::check_spawn::<A>(&options, &self.shared) {
            panic!("{e}");
        }
        self.spawn_life(Life::Factory(Box::new(factory)), options)
            .unwrap_or_else(|stopped| stopped)
    }

    /// Blocks until the system is quiescent: no actor runnable, no message in flight. Messages sent
    /// by other plain threads concurrently with this call may or may not be waited for. Once a
    /// shutdown has begun (from any thread, a handler's included) it waits for the shutdown to
    /// complete instead, and returns.
    pub fn run_until_idle(&self) {
        self.settle(None);
    }

    /// [`run_until_idle`](Self::run_until_idle) with a time limit; returns whether the system
    /// became quiescent (or finished shutting down) in time. [`Duration::ZERO`] asks once
    /// ("quiet now?"); a `timeout` too long for the clock to count (`Duration::MAX`) has no
    /// deadline, as [`run_until_idle`](Self::run_until_idle).
    pub fn run_until_idle_timeout(&self, timeout: Duration) -> bool {
        self.settle(Some(timeout))
    }

    /// Quiescence of the engine *and* of the dedicated threads of `thread` actors: both idle,
    /// seen twice with no hand-over to a dedicated thread in between (an actor on either side
    /// can wake one on the other; runtime/exec_policy/dedicated.rs). A shutdown beginning ends
    /// the wait, which then waits for the shutdown to complete: a stopped engine is never
    /// quiescent in the engines' sense (its workers are gone, not parked).
    fn settle(&self, timeout: Option<Duration>) -> bool {
        // Past the end of the clock (`Duration::MAX`): no deadline, not an overflow panic.
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        let threads = &self.shared.dedicated;
        loop {
            let handed = threads.handed();
            if let Some(answer) = self.engine_quiet(deadline) {
                return answer;
            }
            if !threads.is_idle() {
                if !threads.wait_idle(deadline) {
                    return false;
                }
                continue;
            }
            if handed == 0 && threads.handed() == 0 {
                // No dedicated thread ever ran: the engine's word is enough.
                return true;
            }
            if let Some(answer) = self.engine_quiet(deadline) {
                return answer;
            }
            if threads.is_idle() && threads.handed() == handed {
                return true;
            }
        }
    }

    /// Waits for the engine's quiescence: `None` once it is quiescent, else the answer `settle`
    /// gives — `false` at the deadline, or once a shutdown has begun whether it completed in
    /// time. Looked for in slices, so that a shutdown begun meanwhile (perhaps by a handler,
    /// with this thread none the wiser) ends the wait.
    fn engine_quiet(&self, deadline: Option<Instant>) -> Option<bool> {
        /// How long one slice waits: how late a waiter notices a shutdown.
        const SLICE: Duration = Duration::from_millis(20);
        loop {
            if self.shared.lifecycle.is_shutting_down() {
                return Some(self.wait_shut_down(deadline));
            }
            // The engine is asked at least once, even with no time left: a zero timeout is a
            // poll ("quiet now?"), and under the simulation the asking is also what folds a
            // plain thread's buffered input in (engine/sim/mod.rs, *Plain threads*).
            let slice = match deadline {
                Some(d) => d.saturating_duration_since(Instant::now()).min(SLICE),
                None => SLICE,
            };
            if self.engine.wait_quiescent(Some(slice)) {
                // A handler that began a shutdown ran before the engine could go quiet: look
                // again, or the shutdown it began would pass for quiescence.
                if self.shared.lifecycle.is_shutting_down() {
                    return Some(self.wait_shut_down(deadline));
                }
                return None;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Some(false);
            }
        }
    }

    /// Changes the initial placement strategy of hubs (`hubs = true`) or regular actors from now
    /// on; actors already placed stay where they are.
    pub fn set_placement(&self, hubs: bool, strategy: crate::PlacementStrategy) {
        self.engine.set_placement(hubs, strategy);
    }

    /// The time since the system started on the clock its timers run on (virtual time under
    /// the simulation engine; see [`Context::now`](crate::Context::now)).
    pub fn now(&self) -> Duration {
        Duration::from_nanos(self.runtime.timer_now_ns())
    }

    /// Timers pending: armed, not yet fired (one-shot) or cancelled.
    pub fn pending_timers(&self) -> usize {
        self.shared.timers.pending()
    }

    /// A snapshot of the counters. [`snapshot`](Self::snapshot) adds the system's age and its
    /// registered actors' mailboxes; with feature `metrics`, `MetricsCollector`
    /// publishes the same figures through the `metrics` facade (docs/observability.md).
    pub fn stats(&self) -> Stats {
        stats_of(&self.engine, &self.shared)
    }

    /// The path of the socket the system serves its snapshots on (`observe`), while it does:
    /// `None` when none was configured, and once the system has shut down.
    #[cfg(unix)]
    pub fn observe_path(&self) -> Option<&Path> {
        self.observer
            .as_ref()
            .filter(|_| !self.shared.lifecycle.is_shutting_down())
            .map(observe::Server::path)
    }

    /// Stops serving the `observe` socket and removes its file, and stops the handler-time
    /// sampler (part of the shutdown).
    pub(crate) fn stop_observer(&self) {
        #[cfg(unix)]
        if let Some(observer) = &self.observer {
            observer.stop();
        }
        if let Some(sampler) = &self.sampler {
            sampler.stop();
        }
    }

    /// Actors that stopped because a handler or hook panicked: the most recent
    /// [`Config::failure_window`] of them (1,000 by default), oldest first. `stats().panics`
    /// counts every one, including those no longer kept here.
    pub fn failures(&self) -> Vec<ActorFailure> {
        self.shared.failures()
    }

    /// The most recent dead letters, oldest first: messages that were never handled, with their
    /// actor, its name, their type and why ([`DeadLetter`]). At most
    /// [`DEAD_LETTER_WINDOW`](crate::DEAD_LETTER_WINDOW) records; consecutive alike deaths share
    /// one record and its count. Recorded only when letters die, so the messages that live pay
    /// nothing for it. [`stats`](Self::stats)`().dead_letters` counts every dead letter (overflow
    /// drops apart: `overflow_dropped`).
    pub fn dead_letters(&self) -> Vec<DeadLetter> {
        self.shared.dead_letters()
    }

    /// The configuration the system runs with. A requested `auto` policy appears as the policy
    /// it resolved to (see [`policy_reason`](Self::policy_reason)).
    pub fn config(&self) -> &Config {
        &self.shared.config
    }

    /// The machine model the system was built on (topology and worker layout).
    pub fn machine(&self) -> &Machine {
        &self.shared.machine
    }

    /// Why the scheduler policy is what it is, when `auto` chose it (`None` when the
    /// configuration named the policy).
    pub fn policy_reason(&self) -> Option<&'static str> {
        self.shared.policy_reason
    }

    /// The number of workers.
    pub fn workers(&self) -> usize {
        self.shared.config.workers
    }

    /// The running engine (unit tests of the engines).
    #[cfg(test)]
    pub(crate) fn engine(&self) -> &Engine {
        &self.engine
    }
}

/// Every counter of the system `engine` runs on `shared`: [`System::stats`].
pub(crate) fn stats_of(engine: &Engine, shared: &Shared) -> Stats {
    Stats {
        sim: engine.sim_stats(),
        message_centric: engine.message_centric_stats(),
        ..shared.stats()
    }
}

impl Drop for System {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl std::fmt::Debug for System {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("System")
            .field("config", &self.shared.config)
            .finish_non_exhaustive()
    }
}

/// Builds a [`System`]: defaults, then optionally a TOML file and the environment, then explicit
/// settings.
#[derive(Debug, Clone)]
pub struct SystemBuilder {
    config: Config,
    extras: Extras,
}

/// What a system is given besides its [`Config`]: things a configuration file cannot hold.
#[derive(Debug, Clone, Default)]
struct Extras {
    /// See [`SystemBuilder::tokio_handle`].
    #[cfg(feature = "tokio")]
    tokio: Option<tokio::runtime::Handle>,
}

impl Extras {
    fn apply(self, shared: &mut Shared) {
        #[cfg(feature = "tokio")]
        {
            if let Some(handle) = &self.tokio {
                if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread {
                    // Its timers and sockets progress only while some thread is inside its
                    // `block_on`; loka cannot tell whether one is, so it says so once.
                    tracing::warn!(
                        "SystemBuilder::tokio_handle: a current-thread Tokio runtime drives its timers and I/O only while a thread runs its block_on; if none does, futures awaiting them never complete (a multi-thread runtime drives itself)"
                    );
                }
            }
            shared.tokio = self.tokio;
        }
        #[cfg(not(feature = "tokio"))]
        let _ = shared;
    }
}

impl SystemBuilder {
    /// Replaces the whole configuration.
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// Loads a TOML file over the current settings' defaults.
    pub fn config_file(mut self, path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        self.config = Config::from_file(path)?;
        Ok(self)
    }

    /// Applies `LOKA_*` environment variables (see [`Config::apply_env`]).
    pub fn env(mut self) -> Result<Self, ConfigError> {
        self.config.apply_env()?;
        Ok(self)
    }

    /// Worker threads (≥ 1).
    pub fn workers(mut self, workers: usize) -> Self {
        self.config.workers = workers;
        self
    }

    /// Messages per activation (≥ 1); also the sends into queues one activation may make.
    pub fn throughput(mut self, throughput: usize) -> Self {
        self.config.throughput = throughput;
        self
    }

    /// The most messages an activation that finds a backlog takes in all (≤ `throughput`: it
    /// stops at `throughput`; [`Config::backlog_gulp`](crate::Config::backlog_gulp)).
    pub fn backlog_gulp(mut self, messages: usize) -> Self {
        self.config.backlog_gulp = messages;
        self
    }

    /// The idle strategy.
    pub fn idle(mut self, idle: IdleStrategy) -> Self {
        self.config.idle = idle;
        self
    }

    /// The stall guard (see [`StallGuard`], docs/stalls.md).
    pub fn stall(mut self, stall: StallGuard) -> Self {
        self.config.stall = stall;
        self
    }

    /// The engine (see [`EngineKind`]).
    pub fn engine(mut self, engine: EngineKind) -> Self {
        self.config.engine = engine;
        self
    }

    /// The scheduler policy.
    pub fn policy(mut self, policy: PolicyKind) -> Self {
        self.config.policy = policy;
        self
    }

    /// Whether woken actors use the non-stealable next slot.
    pub fn lifo_slot(mut self, on: bool) -> Self {
        self.config.lifo_slot = on;
        self
    }

    /// The RNG seed of the workers.
    pub fn seed(mut self, seed: u64) -> Self {
        self.config.seed = seed;
        self
    }

    /// Where a panic in an actor's code is reported (see [`PanicReport`]; docs/observability.md).
    pub fn panic_report(mut self, report: PanicReport) -> Self {
        self.config.panic_report = report;
        self
    }

    /// Serve snapshots on a Unix socket at `path` (`observe`; docs/observability.md, "Live
    /// view"): [`build`](Self::build) binds it, and fails with [`ConfigError::Observe`] naming the
    /// path if something exists there or the socket cannot be created.
    pub fn observe(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.config.observe = Some(path.into());
        self
    }

    /// Record handler time per actor, sampling what each worker runs every `us` microseconds
    /// (`handler_sample_us`; docs/observability.md, "Handler time"); 0 turns it off.
    /// [`build`](Self::build) refuses a value outside 100..=1,000,000 with
    /// [`ConfigError::Invalid`].
    pub fn handler_sample_us(mut self, us: u64) -> Self {
        self.config.handler_sample_us = us;
        self
    }

    /// The topology source (`host`, `preset:NAME`, `synthetic:DESC`, `xml:FILE`).
    pub fn topology(mut self, spec: impl Into<String>) -> Self {
        self.config.topology = spec.into();
        self
    }

    /// The configuration as it stands.
    pub fn current(&self) -> &Config {
        &self.config
    }

    /// Runs every poll of a future piped by an actor ([`crate::Context::pipe`]) inside this
    /// Tokio runtime's context (`Handle::enter`), so that `tokio::net` and `tokio::time`
    /// resources register with its reactor and timer. loka's workers only poll; the runtime's
    /// own threads drive the reactor and wake the actors. So the handle must belong to a
    /// multi-thread runtime, or to a current-thread runtime that some thread keeps driving
    /// (`block_on`); otherwise Tokio resources never become ready. Feature `tokio`.
    #[cfg(feature = "tokio")]
    pub fn tokio_handle(mut self, handle: tokio::runtime::Handle) -> Self {
        self.extras.tokio = Some(handle);
        self
    }

    /// Validates the configuration and starts the system.
    pub fn build(self) -> Result<System, ConfigError> {
        System::start(self.config, self.extras)
    }
}
