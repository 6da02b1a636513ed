//! Registered names (Erlang's `register`/`whereis`): [`System::register`](crate::System::register) gives a live actor a
//! name unique in its system, [`System::lookup`](crate::System::lookup) finds it again by name, typed, from anywhere
//! (also [`Context::lookup`] inside a handler). The name is freed when the actor stops.
//!
//! A spawn name ([`SpawnOptions::name`](super::SpawnOptions::name)) does not register: it stays a
//! label for failure reports and introspection, which any number of actors may share (a pool of
//! `"worker"`s). Registering is explicit, as in Erlang, because a unique name is a claim on a
//! system-wide resource that can fail (the name is taken), and a spawn that could fail for a
//! label would burden every spawn site. Akka's per-parent unique child names need a path
//! hierarchy loka does not have.
//!
//! A registered name holds a reference to its actor, as an [`ActorRef`] would: a registered actor
//! does not stop as unreferenced (it can still be reached by name). It stops when it stops itself,
//! is stopped, fails, or the system shuts down; or, once [`System::unregister`](crate::System::unregister)ed, as
//! unreferenced like any other actor.

use super::{Actor, ActorId, ActorRef, Context};
use crate::runtime::names::{Directory, Entry};
use std::sync::Arc;

/// A [`System::register`](crate::System::register) that was refused; nothing was registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    /// Another actor holds the name.
    #[error("the name {name:?} is already registered to actor {holder}")]
    Taken {
        /// The name asked for.
        name: String,
        /// The actor registered under it.
        holder: ActorId,
    },
    /// The actor has already stopped.
    #[error("cannot register actor {actor} as {name:?}: it has stopped")]
    Stopped {
        /// The name asked for.
        name: String,
        /// The stopped actor.
        actor: ActorId,
    },
    /// The actor is already registered under another name (one name per actor, as in Erlang).
    #[error("cannot register actor {actor} as {name:?}: it is already registered as {existing:?}")]
    AlreadyNamed {
        /// The name asked for.
        name: String,
        /// The actor.
        actor: ActorId,
        /// The name it holds.
        existing: String,
    },
    /// The name is empty.
    #[error("cannot register actor {actor} under an empty name")]
    EmptyName {
        /// The actor.
        actor: ActorId,
    },
    /// The actor belongs to another system (names are per system).
    #[error("cannot register actor {actor} as {name:?}: it belongs to another system")]
    OtherSystem {
        /// The name asked for.
        name: String,
        /// The other system's actor.
        actor: ActorId,
    },
}

/// A [`System::try_lookup`](crate::System::try_lookup) that found no actor of the type asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    /// No actor is registered under the name (never was, was unregistered, or has stopped).
    #[error("no actor is registered as {name:?}")]
    NotRegistered {
        /// The name looked up.
        name: String,
    },
    /// The actor registered under the name takes another message type.
    #[error("the actor registered as {name:?} takes `{registered}` messages, not `{requested}`")]
    WrongType {
        /// The name looked up.
        name: String,
        /// The message type asked for.
        requested: &'static str,
        /// The message type of the actor registered under the name.
        registered: &'static str,
    },
}

impl Directory {
    pub(crate) fn register<M: Send + 'static>(
        &self,
        shared: &crate::runtime::Shared,
        name: &str,
        actor: &ActorRef<M>,
    ) -> Result<(), RegisterError> {
        let id = actor.id();
        if name.is_empty() {
            return Err(RegisterError::EmptyName { actor: id });
        }
        if !std::ptr::eq(&*actor.cell().system_runtime().shared, shared) {
            return Err(RegisterError::OtherSystem {
                name: name.to_owned(),
                actor: id,
            });
        }
        let mut table = self.0.lock();
        if let Some(entry) = table.by_name.get(name) {
            return match entry.actor == id {
                true => Ok(()),
                false => Err(RegisterError::Taken {
                    name: name.to_owned(),
                    holder: entry.actor,
                }),
            };
        }
        if let Some(existing) = table.by_actor.get(&id) {
            return Err(RegisterError::AlreadyNamed {
                name: name.to_owned(),
                actor: id,
                existing: existing.to_string(),
            });
        }
        // Under the actor's registry shard lock: either the actor is still registered there, and
        // its `terminate` (which unregisters it under that lock, then reads the mark) will see the
        // mark and free the name, waiting for this lock until the name is in; or it has stopped.
        let live = shared.registry.with_alive(id, |live| {
            if live {
                actor.cell().mark_registered();
            }
            live
        });
        if !live {
            return Err(RegisterError::Stopped {
                name: name.to_owned(),
                actor: id,
            });
        }
        let name: Arc<str> = name.into();
        table.by_actor.insert(id, Arc::clone(&name));
        let entry = Entry {
            actor: id,
            message_type: std::any::type_name::<M>(),
            actor_ref: Box::new(actor.clone()),
        };
        table.by_name.insert(name, entry);
        Ok(())
    }

    pub(crate) fn lookup<M: Send + 'static>(&self, name: &str) -> Result<ActorRef<M>, LookupError> {
        let table = self.0.lock();
        let entry = table
            .by_name
            .get(name)
            .ok_or_else(|| LookupError::NotRegistered {
                name: name.to_owned(),
            })?;
        match entry.actor_ref.downcast_ref::<ActorRef<M>>() {
            Some(actor) => Ok(actor.clone()),
            None => Err(LookupError::WrongType {
                name: name.to_owned(),
                requested: std::any::type_name::<M>(),
                registered: entry.message_type,
            }),
        }
    }

    pub(crate) fn unregister(&self, name: &str) -> Option<ActorId> {
        let entry = {
            let mut table = self.0.lock();
            let entry = table.by_name.remove(name)?;
            table.by_actor.remove(&entry.actor);
            entry
        };
        let actor = entry.actor;
        // Dropped unlocked: the last reference's drop queues the actor's `Unreferenced` signal.
        drop(entry);
        Some(actor)
    }
}

impl<A: Actor> Context<A> {
    /// [`System::register`](crate::System::register) from inside a handler.
    pub fn register<M: Send + 'static>(
        &mut self,
        name: &str,
        actor: &ActorRef<M>,
    ) -> Result<(), RegisterError> {
        let shared = &self.inner().runtime().shared;
        shared.directory.register(shared, name, actor)
    }

    /// [`System::lookup`](crate::System::lookup) from inside a handler.
    pub fn lookup<M: Send + 'static>(&self, name: &str) -> Option<ActorRef<M>> {
        self.try_lookup(name).ok()
    }

    /// [`System::try_lookup`](crate::System::try_lookup) from inside a handler.
    pub fn try_lookup<M: Send + 'static>(&self, name: &str) -> Result<ActorRef<M>, LookupError> {
        self.inner().runtime().shared.directory.lookup(name)
    }

    /// [`System::unregister`](crate::System::unregister) from inside a handler.
    pub fn unregister(&mut self, name: &str) -> Option<ActorId> {
        self.inner().runtime().shared.directory.unregister(name)
    }
}
