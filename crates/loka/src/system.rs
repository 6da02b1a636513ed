//! [`System`]: a set of workers running actors, built from a [`Config`].

use crate::actor::{Actor, ActorFailure, ActorRef, SpawnError, SpawnOptions};
use crate::config::{Config, ConfigError, EngineKind, IdleStrategy};
use crate::engine::Engine;
use crate::machine::Machine;
use crate::policy::PolicyKind;
use crate::runtime::cell::{self, Life};
use crate::runtime::{Runtime, Shared};
use crate::telemetry::Stats;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// An actor system: an engine (worker threads and their queues) and the actors it runs.
///
/// Dropping a `System` shuts it down (see [`System::shutdown`]).
pub struct System {
    engine: Engine,
    shared: Arc<Shared>,
    /// The runtime handle kept by actors spawned from plain threads.
    runtime: Arc<Runtime>,
}

impl System {
    /// A builder starting from the defaults.
    pub fn builder() -> SystemBuilder {
        SystemBuilder {
            config: Config::default(),
        }
    }

    /// Starts a system from a validated configuration.
    pub fn from_config(config: Config) -> Result<System, ConfigError> {
        config.validate("the configuration")?;
        let machine = Machine::load(&config)?;
        let requested = config.policy;
        let (chosen, reason) = match (config.engine, requested) {
            (EngineKind::MessageCentric, PolicyKind::Auto) => (
                PolicyKind::Cls,
                Some("message-centric engine: it queues messages, not actors; its victim selection is its policy"),
            ),
            _ => requested.resolve(machine.layout.node_count(), config.workers),
        };
        let config = Config {
            policy: chosen,
            ..config
        };
        config.validate("the configuration")?;
        if let Some(reason) = reason {
            tracing::info!(%requested, %chosen, reason, "scheduler policy chosen");
        }
        let shared = Arc::new(Shared::new(config, machine, reason));
        let (engine, runtime) = Engine::start(Arc::clone(&shared))?;
        Ok(System {
            engine,
            shared,
            runtime,
        })
    }

    fn spawn_life<A: Actor>(&self, life: Life<A>, options: SpawnOptions) -> ActorRef<A::Msg> {
        ActorRef::from_cell(cell::spawn(&self.runtime, life, options, None, None))
    }

    /// Spawns an actor from a plain thread (placed round robin).
    pub fn spawn<A: Actor>(&self, actor: A) -> ActorRef<A::Msg> {
        self.spawn_with(actor, SpawnOptions::default())
    }

    /// Spawns an actor with options.
    ///
    /// # Panics
    /// On a bad option ([`SpawnError`]); [`try_spawn_with`](Self::try_spawn_with) returns it.
    pub fn spawn_with<A: Actor>(&self, actor: A, options: SpawnOptions) -> ActorRef<A::Msg> {
        self.try_spawn_with(actor, options)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Spawns an actor with options, or says which option is bad (then nothing is spawned).
    pub fn try_spawn_with<A: Actor>(
        &self,
        actor: A,
        options: SpawnOptions,
    ) -> Result<ActorRef<A::Msg>, SpawnError> {
        SpawnError::check(&options, self.shared.machine.places())?;
        Ok(self.spawn_life(Life::Ready(actor), options))
    }

    /// Spawns an actor whose state is built by `factory` on its first activation, on the worker
    /// that runs it.
    pub fn spawn_fn<A: Actor>(
        &self,
        factory: impl FnOnce() -> A + Send + 'static,
        options: SpawnOptions,
    ) -> ActorRef<A::Msg> {
        if let Err(e) = SpawnError::check(&options, self.shared.machine.places()) {
            panic!("{e}");
        }
        self.spawn_life(Life::Factory(Box::new(factory)), options)
    }

    /// Blocks until the system is quiescent: no actor runnable, no message in flight. Messages sent
    /// by other plain threads concurrently with this call may or may not be waited for.
    pub fn run_until_idle(&self) {
        self.settle(None);
    }

    /// [`run_until_idle`](Self::run_until_idle) with a time limit; returns whether the system
    /// became quiescent in time.
    pub fn run_until_idle_timeout(&self, timeout: Duration) -> bool {
        self.settle(Some(timeout))
    }

    /// Quiescence of the engine *and* of the dedicated threads of `thread` actors: both idle,
    /// seen twice with no hand-over to a dedicated thread in between (an actor on either side
    /// can wake one on the other; runtime/exec_policy/dedicated.rs).
    fn settle(&self, timeout: Option<Duration>) -> bool {
        let deadline = timeout.map(|t| std::time::Instant::now() + t);
        let left = || deadline.map(|d| d.saturating_duration_since(std::time::Instant::now()));
        let threads = &self.shared.dedicated;
        loop {
            let handed = threads.handed();
            if !self.engine.wait_quiescent(left()) {
                return false;
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
            if !self.engine.wait_quiescent(left()) {
                return false;
            }
            if threads.is_idle() && threads.handed() == handed {
                return true;
            }
        }
    }

    /// Stops the workers (each finishes its current activation), then stops every live actor:
    /// their [`Actor::stopped`] hooks run on the calling thread, and messages still queued are
    /// dropped and counted as dead letters. Call [`run_until_idle`](Self::run_until_idle) first to
    /// let pending work finish. Idempotent.
    pub fn shutdown(&self) {
        if self.engine.stop_workers() {
            // Dedicated threads finish their activation and exit; none starts afterwards.
            self.shared.dedicated.stop();
            // SAFETY: every worker and dedicated thread has been joined, so no activation runs or
            // will run.
            unsafe { self.shared.terminate_all() };
            // Letters still queued (message-centric): dead letters, and the stopped actors'
            // release letters behind them.
            self.engine.discard_queued();
        }
    }

    /// Changes the initial placement strategy of hubs (`hubs = true`) or regular actors from now
    /// on; actors already placed stay where they are.
    pub fn set_placement(&self, hubs: bool, strategy: crate::PlacementStrategy) {
        self.engine.set_placement(hubs, strategy);
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> Stats {
        Stats {
            sim: self.engine.sim_stats(),
            message_centric: self.engine.message_centric_stats(),
            ..self.shared.stats()
        }
    }

    /// Actors that stopped because a handler panicked, oldest first.
    pub fn failures(&self) -> Vec<ActorFailure> {
        self.shared.failures()
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

    /// Messages per activation (≥ 1).
    pub fn throughput(mut self, throughput: usize) -> Self {
        self.config.throughput = throughput;
        self
    }

    /// The idle strategy.
    pub fn idle(mut self, idle: IdleStrategy) -> Self {
        self.config.idle = idle;
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

    /// The topology source (`host`, `preset:NAME`, `synthetic:DESC`, `xml:FILE`).
    pub fn topology(mut self, spec: impl Into<String>) -> Self {
        self.config.topology = spec.into();
        self
    }

    /// The configuration as it stands.
    pub fn current(&self) -> &Config {
        &self.config
    }

    /// Validates the configuration and starts the system.
    pub fn build(self) -> Result<System, ConfigError> {
        System::from_config(self.config)
    }
}
