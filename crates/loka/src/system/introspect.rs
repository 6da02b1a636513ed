//! Introspection: [`System::actors`] lists the live actors, what they are and where they run.

use super::System;
use crate::actor::ActorId;
use crate::exec_policy::ExecPolicy;
use crate::runtime::location::ActorState;
use serde::Serialize;

/// One live actor, as [`System::actors`] saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ActorInfo {
    /// Its id.
    pub id: ActorId,
    /// The label it was spawned with ([`crate::SpawnOptions::name`]).
    pub name: Option<String>,
    /// The name it is registered under ([`System::register`]).
    pub registered: Option<String>,
    /// Its Rust type.
    pub actor_type: &'static str,
    /// The actor that spawned it (`None`: spawned from a plain thread).
    pub parent: Option<ActorId>,
    /// User messages in its mailbox (the reading of [`crate::ActorRef::mailbox_len`]: exact for
    /// a bounded mailbox, best effort otherwise, 0 for an unbounded actor under the
    /// message-centric engine).
    pub mailbox_len: usize,
    /// The worker it last ran on, else the one it is homed on (actor-centric and simulation
    /// engines); the worker that owns its queue (message-centric engine). `None` before its first
    /// activation without a home, and for a `thread` actor (it runs on a thread of its own).
    pub worker: Option<usize>,
    /// The queue it is bound to (message-centric engine only).
    pub queue: Option<usize>,
    /// Idle, scheduled or running. Actor-centric and simulation engines: from its mailbox and from
    /// what each thread announces it runs. Message-centric engine: its *queue's* state, shared
    /// with the other actors bound there (running: a worker processes the queue; scheduled: the
    /// queue holds letters).
    pub state: ActorState,
}

impl System {
    /// The live actors: spawned, not yet stopped, in no particular order.
    ///
    /// Cheap enough to call while the system runs: it walks the live-actor registry one shard
    /// lock at a time (spawns and stops on that shard wait for it) and reads a few atomics per
    /// actor; it sends nothing and stops no worker. Each actor's entry is a snapshot taken at a
    /// slightly different moment, racing with its senders and its activation: `mailbox_len`,
    /// `worker` and `state` may be stale by the time they are read, and an actor spawned or
    /// stopped during the call may or may not be listed. Exact once the system is quiescent
    /// ([`run_until_idle`](Self::run_until_idle)).
    pub fn actors(&self) -> Vec<ActorInfo> {
        let shared = &self.shared;
        let running = shared.counters.running();
        let engine = self.runtime.core();
        let mut actors = Vec::new();
        let mut labelled = Vec::new();
        shared.registry.for_each(|id, task, parent| {
            // SAFETY: registered, and kept so while `for_each` holds its shard's lock.
            let cell = unsafe { task.info() };
            let location = engine.locate(task);
            let thread = task.header().exec.policy() == ExecPolicy::Thread;
            let state = if cell.closed || running.contains(&id.as_u64()) {
                ActorState::Running
            } else if cell.direct {
                location.state.unwrap_or(ActorState::Idle)
            } else if cell.idle {
                ActorState::Idle
            } else {
                ActorState::Scheduled
            };
            if cell.named {
                labelled.push(actors.len());
            }
            actors.push(ActorInfo {
                id,
                name: None,
                registered: None,
                actor_type: cell.actor_type,
                parent,
                mailbox_len: cell.mailbox_len,
                worker: if thread { None } else { location.worker },
                queue: location.queue,
                state,
            });
        });
        // Names after the walk: no other lock is taken under a registry shard's.
        for at in labelled {
            let info = &mut actors[at];
            info.name = shared.name_of(info.id).map(|name| name.to_string());
        }
        shared.directory.names_of(&mut actors);
        actors
    }
}

impl crate::runtime::names::Directory {
    /// Fills in the registered names of `actors` (introspection).
    pub(crate) fn names_of(&self, actors: &mut [ActorInfo]) {
        let table = self.0.lock();
        if table.by_actor.is_empty() {
            return;
        }
        for info in actors {
            info.registered = table.by_actor.get(&info.id).map(|name| name.to_string());
        }
    }
}
