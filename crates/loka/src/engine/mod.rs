//! Engines: how runnable work is queued and handed to worker threads. One actor API, several
//! engines (docs/architecture.md).
//!
//! An engine is started from a [`Config`](crate::Config) whose `engine` names it; it implements
//! the runtime's [`Scheduler`](crate::runtime::Scheduler) boundary (what actors need while they
//! run) and the handful of calls a [`System`](crate::System) makes, dispatched by [`Engine`].
//! Which policies an engine can run is declared by [`EngineKind::supports`] and checked when the
//! configuration is validated.

pub(crate) mod actor_centric;

use crate::config::EngineKind;
use crate::policy::placement::PlacementStrategy;
use crate::runtime::{Runtime, Shared};
use std::sync::Arc;
use std::time::Duration;

/// A running engine: the calls a `System` makes, whatever the engine.
pub(crate) enum Engine {
    /// Per-worker queues of actors.
    ActorCentric(Arc<actor_centric::Engine>),
}

impl Engine {
    /// Starts the engine `shared.config.engine` names. Returns it and the runtime handle actors
    /// spawned from plain threads keep.
    pub(crate) fn start(shared: Arc<Shared>) -> (Engine, Arc<Runtime>) {
        match shared.config.engine {
            EngineKind::ActorCentric => {
                let (engine, root) = actor_centric::Engine::start(shared);
                (Engine::ActorCentric(engine), root)
            }
        }
    }

    /// Blocks until nothing is runnable and no message is in flight, or `timeout` passes; returns
    /// whether that happened.
    pub(crate) fn wait_quiescent(&self, timeout: Option<Duration>) -> bool {
        match self {
            Engine::ActorCentric(e) => e.wait_quiescent(timeout),
        }
    }

    /// Stops and joins the worker threads; `false` if that had already been done.
    pub(crate) fn stop_workers(&self) -> bool {
        match self {
            Engine::ActorCentric(e) => e.stop_workers(),
        }
    }

    /// Changes the initial placement strategy of hubs or regular actors from now on.
    pub(crate) fn set_placement(&self, hubs: bool, strategy: PlacementStrategy) {
        match self {
            Engine::ActorCentric(e) => e.set_placement(hubs, strategy),
        }
    }
}
