//! Engines: how runnable work is queued and handed to worker threads. One actor API, several
//! engines (docs/internals/architecture.md).
//!
//! An engine is started from a [`Config`](crate::Config) whose `engine` names it; it implements
//! the runtime's [`Scheduler`](crate::runtime::Scheduler) boundary (what actors need while they
//! run) and the handful of calls a [`System`](crate::System) makes, dispatched by [`Engine`].
//! Which policies an engine can run is declared by [`EngineKind::supports`] and checked when the
//! configuration is validated.

pub(crate) mod actor_centric;
pub(crate) mod balance_round;
pub(crate) mod choices;
pub(crate) mod message_centric;
pub(crate) mod placement;
pub(crate) mod sim;
pub(crate) mod sleepers;

use crate::config::{ConfigError, EngineKind};
use crate::policy::placement::PlacementStrategy;
use crate::runtime::{Exec, Runtime, Scheduler, Shared};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::Duration;

/// Starts the worker threads of a real engine: thread `i` is named `{name}-{i}`, pinned, and runs
/// `worker(exec, ready)` with its own runtime handle. The worker does its set-up (publishes its
/// thread handle, takes its queues), calls `ready()`, then runs its loop. Returns once every
/// worker has called `ready()`, so nobody can try to wake a worker that has not published its
/// handle; then the join handles and the plain threads' runtime handle.
///
/// Handler panics are caught per actor. A panic out of `worker` is a bug in loka itself: its
/// invariants no longer hold, and a dead worker would strand its work and hang the system, so
/// the process aborts with one line instead.
pub(crate) fn start_workers<F>(
    shared: &Arc<Shared>,
    scheduler: Arc<dyn Scheduler>,
    name: &str,
    worker: F,
) -> (Vec<JoinHandle<()>>, Arc<Runtime>)
where
    F: Fn(Exec, &dyn Fn()) + Send + Sync + 'static,
{
    let n = shared.config.workers;
    let worker = Arc::new(worker);
    let ready = Arc::new(Barrier::new(n + 1));
    let threads = (0..n)
        .map(|index| {
            let runtime = Arc::new(Runtime::new(Arc::clone(&scheduler), Arc::clone(shared)));
            let (ready, worker, shared) = (Arc::clone(&ready), Arc::clone(&worker), Arc::clone(shared));
            std::thread::Builder::new()
                .name(format!("{name}-{index}"))
                .spawn(move || {
                    crate::runtime::lifecycle::mark_thread(Arc::as_ptr(&shared));
                    shared.machine.pin_worker(&shared.config, index);
                    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        worker(Exec::new(index, runtime), &|| {
                            ready.wait();
                        })
                    }));
                    if run.is_err() {
                        eprintln!("loka: worker {index} panicked outside any actor handler (a bug in loka); aborting");
                        std::process::abort();
                    }
                })
                .expect("spawning a worker thread")
        })
        .collect();
    ready.wait();
    (
        threads,
        Arc::new(Runtime::new(scheduler, Arc::clone(shared))),
    )
}

/// A running engine: the calls a `System` makes, whatever the engine. Cloned (a handle) by a
/// shutdown that finishes on a thread of its own.
#[derive(Clone)]
pub(crate) enum Engine {
    /// Per-worker queues of actors.
    ActorCentric(Arc<actor_centric::Engine>),
    /// Virtual workers in virtual time.
    Sim(Arc<sim::Engine>),
    /// Sharded queues of messages (Cforall's executor).
    MessageCentric(Arc<message_centric::Engine>),
}

impl Engine {
    /// Starts the engine `shared.config.engine` names. Returns it and the runtime handle actors
    /// spawned from plain threads keep. Fails only on a bad simulation cost file.
    pub(crate) fn start(shared: Arc<Shared>) -> Result<(Engine, Arc<Runtime>), ConfigError> {
        Ok(match shared.config.engine {
            EngineKind::ActorCentric => {
                let (engine, root) = actor_centric::Engine::start(shared);
                (Engine::ActorCentric(engine), root)
            }
            EngineKind::Sim => {
                let cost = sim::CostModel::load(&shared.config, &shared.machine)?;
                let (engine, root) = sim::Engine::start(shared, cost);
                (Engine::Sim(engine), root)
            }
            EngineKind::MessageCentric => {
                let (engine, root) = message_centric::Engine::start(shared);
                (Engine::MessageCentric(engine), root)
            }
        })
    }

    /// The message-centric engine's statistics, under that engine.
    pub(crate) fn message_centric_stats(&self) -> Option<crate::telemetry::MessageCentricStats> {
        match self {
            Engine::MessageCentric(e) => Some(e.stats()),
            _ => None,
        }
    }

    /// After the actors were terminated at shutdown: drops what is still queued (the
    /// message-centric engine's letters; the other engines queue nothing by then).
    pub(crate) fn discard_queued(&self) {
        if let Engine::MessageCentric(e) = self {
            e.discard_queued();
        }
    }

    /// The simulation's progress, under the simulation engine.
    pub(crate) fn sim_stats(&self) -> Option<crate::telemetry::SimStats> {
        match self {
            Engine::Sim(e) => Some(e.sim_stats()),
            _ => None,
        }
    }

    /// Blocks until nothing is runnable and no message is in flight, or `timeout` passes; returns
    /// whether that happened.
    pub(crate) fn wait_quiescent(&self, timeout: Option<Duration>) -> bool {
        match self {
            Engine::ActorCentric(e) => e.wait_quiescent(timeout),
            Engine::Sim(e) => e.wait_quiescent(timeout),
            Engine::MessageCentric(e) => e.wait_quiescent(timeout),
        }
    }

    /// A plain thread made work for the engine and waits for it some other way than by a reply
    /// or quiescence (a graceful shutdown's stop signals): an engine that runs only when someone
    /// waits (the simulation) runs now.
    pub(crate) fn nudge(&self) {
        if let Engine::Sim(e) = self {
            crate::runtime::Scheduler::waiting(&**e);
        }
    }

    /// Stops and joins the worker threads: each finishes the activation it runs and leaves the
    /// rest queued (the shutdown terminates those actors); `false` if that had already been done.
    /// Never called on one of the engine's own threads (it would join itself).
    pub(crate) fn stop_workers(&self) -> bool {
        match self {
            Engine::ActorCentric(e) => e.stop_workers(),
            Engine::Sim(e) => e.stop_workers(),
            Engine::MessageCentric(e) => e.stop_workers(),
        }
    }

    /// Changes the initial placement strategy of hubs or regular actors from now on.
    pub(crate) fn set_placement(&self, hubs: bool, strategy: PlacementStrategy) {
        match self {
            Engine::ActorCentric(e) => e.set_placement(hubs, strategy),
            Engine::Sim(e) => e.set_placement(hubs, strategy),
            Engine::MessageCentric(e) => e.set_placement(hubs, strategy),
        }
    }
}
