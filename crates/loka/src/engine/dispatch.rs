//! A running engine, whichever it is: the calls a [`System`](crate::System) makes (start, wait
//! for quiescence, stop, statistics). The one place above the engines that names each of them.

use super::{actor_centric, message_centric, sim};
use crate::config::ConfigError;
use crate::engine::kind::EngineKind;
use crate::policy::placement::PlacementStrategy;
use crate::runtime::{Runtime, Shared};
use std::sync::Arc;
use std::time::Duration;

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

    /// Actors queued on each worker now (a thief's view: deque, inbox, yielded), under the
    /// actor-centric engine; `None` under the others, whose queues are not per worker (message
    /// centric) or live inside the simulation's driver. One relaxed read per queue.
    pub(crate) fn queue_lengths(&self) -> Option<Vec<usize>> {
        match self {
            Engine::ActorCentric(e) => Some(e.queue_lengths()),
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
            crate::runtime::EngineCore::waiting(&**e);
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
