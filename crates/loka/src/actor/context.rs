//! [`Context`]: what a handler can do besides changing its own state.

use super::ask::{AskError, ReplyTo};
use super::cell::{self, ActorCell, Life};
use super::{Actor, ActorId, ActorRef, SpawnOptions};
use crate::engine::actor_centric::Worker;
use std::marker::PhantomData;
use std::ptr::NonNull;

/// The handler's view of the runtime: its own identity, spawning, stopping, non-blocking asks.
///
/// A context only exists during an activation of its actor and cannot leave the handler's thread.
pub struct Context<A: Actor> {
    cell: NonNull<ActorCell<A>>,
    worker: Option<NonNull<Worker>>,
    pub(crate) stopping: bool,
    /// Contexts are tied to the running worker thread.
    _not_send: PhantomData<*const ()>,
}

impl<A: Actor> Context<A> {
    pub(crate) fn new(cell: &ActorCell<A>, worker: Option<&Worker>) -> Self {
        Context {
            cell: NonNull::from(cell),
            worker: worker.map(NonNull::from),
            stopping: false,
            _not_send: PhantomData,
        }
    }

    fn cell(&self) -> &ActorCell<A> {
        // SAFETY: a context only lives during an activation (or the termination) of its actor,
        // which holds the actor alive through its life reference.
        unsafe { self.cell.as_ref() }
    }

    fn worker(&self) -> Option<&Worker> {
        // SAFETY: the worker outlives every activation it runs.
        self.worker.map(|w| unsafe { w.as_ref() })
    }

    /// This actor's id.
    pub fn id(&self) -> ActorId {
        self.cell().id()
    }

    /// A reference to this actor, e.g. to put in a request so the receiver can answer.
    pub fn myself(&self) -> ActorRef<A::Msg> {
        // SAFETY: the cell is alive through an Arc (see `cell()`).
        unsafe { self.cell().arc_from_ref() }.new_ref()
    }

    /// Stops this actor once the current handler returns. Messages still in its mailbox are
    /// dropped and counted as dead letters.
    pub fn stop(&mut self) {
        self.stopping = true;
    }

    /// Marks this actor as a communication hub (or clears the mark) from inside: under
    /// `hierarchical`, a hub stays on its worker and is never stolen or migrated.
    pub fn set_hub(&mut self, hub: bool) {
        if self.cell().placement().set_hub(hub) && hub {
            self.cell().engine.note_hub(self.worker());
        }
    }

    /// Whether this actor is currently a hub.
    pub fn is_hub(&self) -> bool {
        self.cell().placement().is_hub()
    }

    /// The index of the worker running this activation (`None` while stopping at shutdown).
    pub fn worker_index(&self) -> Option<usize> {
        self.worker().map(Worker::index)
    }

    /// Spawns a child actor. Its failures are reported to this actor's [`Actor::child_failed`].
    pub fn spawn<B: Actor>(&mut self, actor: B) -> ActorRef<B::Msg> {
        self.spawn_with(actor, SpawnOptions::default())
    }

    /// Spawns a child actor with options.
    pub fn spawn_with<B: Actor>(&mut self, actor: B, options: SpawnOptions) -> ActorRef<B::Msg> {
        self.spawn_life(Life::Ready(actor), options)
    }

    /// Spawns a child whose state is built by `factory` on its first activation, on the worker
    /// that runs it (its memory is first touched there).
    pub fn spawn_fn<B: Actor>(
        &mut self,
        factory: impl FnOnce() -> B + Send + 'static,
        options: SpawnOptions,
    ) -> ActorRef<B::Msg> {
        self.spawn_life(Life::Factory(Box::new(factory)), options)
    }

    fn spawn_life<B: Actor>(&mut self, life: Life<B>, options: SpawnOptions) -> ActorRef<B::Msg> {
        // SAFETY: the cell is alive through an Arc (see `cell()`).
        let me = unsafe { self.cell().arc_from_ref() };
        let sink = me.failure_sink();
        // Clone the running worker's engine handle (a core-local count), not the parent's.
        let engine = self.worker().map_or(&me.engine, Worker::handle);
        cell::spawn(engine, life, options, Some(sink), self.worker())
    }

    /// Sends a request built around a [`ReplyTo`] and, when the reply (or [`AskError::NoReply`])
    /// arrives, runs `then` with this actor's state, like a message. The worker is never blocked.
    ///
    /// If `target` has stopped, `then` runs with `Err(AskError::NoReply)`.
    pub fn ask<M: Send + 'static, R: Send + 'static>(
        &mut self,
        target: &ActorRef<M>,
        make: impl FnOnce(ReplyTo<R>) -> M,
        then: impl FnOnce(&mut A, &mut Context<A>, Result<R, AskError>) + Send + 'static,
    ) {
        // SAFETY: the cell is alive through an Arc (see `cell()`).
        let me = unsafe { self.cell().arc_from_ref() };
        // A rejected request drops its ReplyTo, which delivers NoReply to `then`.
        let _ = target.send(make(me.continuation(then)));
    }
}
