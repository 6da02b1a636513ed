//! [`Context`]: what a handler can do besides changing its own state.

use super::ask::{AskError, ReplyTo};
use super::{Actor, ActorId, ActorRef, SpawnError, SpawnOptions};
use crate::runtime::cell::{self, CellContext, Envelope, Life};

/// The handler's view of the runtime: its own identity, spawning, stopping, non-blocking asks.
///
/// A context only exists during an activation of its actor and cannot leave the handler's thread.
pub struct Context<A: Actor> {
    inner: CellContext<A>,
}

impl<A: Actor> Context<A> {
    pub(crate) fn new(inner: CellContext<A>) -> Self {
        Context { inner }
    }

    pub(crate) fn inner_mut(&mut self) -> &mut CellContext<A> {
        &mut self.inner
    }

    pub(crate) fn inner(&self) -> &CellContext<A> {
        &self.inner
    }

    /// This actor's id.
    pub fn id(&self) -> ActorId {
        self.inner.cell().id()
    }

    /// A reference to this actor, e.g. to put in a request so the receiver can answer.
    pub fn myself(&self) -> ActorRef<A::Msg> {
        let me = self.inner.cell_arc();
        me.acquire_handle();
        ActorRef::from_cell(me)
    }

    /// Stops this actor once the current handler returns. Messages still in its mailbox are
    /// dropped and counted as dead letters.
    pub fn stop(&mut self) {
        self.inner.stopping = crate::runtime::cell::Stopping::Normal;
    }

    /// Marks this actor as a communication hub (or clears the mark) from inside: under
    /// `hierarchical`, a hub stays on its worker and is never stolen or migrated.
    pub fn set_hub(&mut self, hub: bool) {
        // `false` only once the actor is stopping (e.g. from its `stopped` hook): nothing to mark.
        let _ = self.inner.cell().set_hub(hub, self.inner.exec());
    }

    /// Whether this actor is currently a hub.
    pub fn is_hub(&self) -> bool {
        self.inner.cell().is_hub()
    }

    /// Declares that this activation computes for `time` on this machine's cores, beyond what
    /// loka itself costs: under the simulation engine (docs/simulation.md) the running
    /// activation's virtual cost grows by `time` (× `compute_scale`), so a handler's compute is
    /// priced the same on every run. Several calls add up. The real engines ignore it: the
    /// call is a plain add to a per-thread field, never read.
    ///
    /// `time` is what the work takes on the host the constant was measured on (say how in a
    /// comment); it is not a sleep and never delays anything.
    #[inline(always)]
    pub fn charge(&mut self, time: std::time::Duration) {
        if let Some(exec) = self.inner.exec() {
            exec.charge(time.as_nanos() as u64);
        }
    }

    /// Declares how many bytes of data this actor owns beyond its own struct (heap buffers,
    /// tables that grew), replacing what [`SpawnOptions::footprint`] or an earlier call said.
    /// The simulation engine's memory model prices an activation by where this many bytes
    /// (plus `size_of` the actor) lie in the caches and in memory; real engines ignore it.
    #[inline]
    pub fn set_footprint(&mut self, bytes: usize) {
        if let Some(exec) = self.inner.exec() {
            exec.set_footprint(bytes as u64);
        }
    }

    /// The index of the worker running this activation (`None` while stopping at shutdown, and
    /// on the dedicated thread of a `thread` actor).
    pub fn worker_index(&self) -> Option<usize> {
        self.inner.exec().and_then(|exec| exec.worker())
    }

    /// Spawns a child actor. Its failures are reported to this actor's [`Actor::child_failed`].
    /// Once the system is shutting down past its graceful part, the child never runs: the
    /// reference returned is stopped (see [`System::spawn`](crate::System::spawn)).
    pub fn spawn<B: Actor>(&mut self, actor: B) -> ActorRef<B::Msg> {
        self.spawn_with(actor, SpawnOptions::default())
    }

    /// Spawns a child actor with options (a stopped reference once the system is shutting down,
    /// as [`spawn`](Self::spawn) says).
    ///
    /// # Panics
    /// On a bad option, or an actor type whose [`Actor::requires`] the system lacks
    /// ([`SpawnError`]); [`try_spawn_with`](Self::try_spawn_with) returns it.
    pub fn spawn_with<B: Actor>(&mut self, actor: B, options: SpawnOptions) -> ActorRef<B::Msg> {
        if let Err(e) = crate::actor::check_spawn::<B>(&options, &self.inner.runtime().shared) {
            panic!("{e}");
        }
        self.spawn_life(Life::Ready(actor), options)
    }

    /// Spawns a child actor with options, or says which option is bad (then nothing is spawned).
    ///
    /// Once the system is shutting down (its workers are stopping: a `stopped` hook run by
    /// [`System::shutdown`](crate::System::shutdown)), [`SpawnError::ShutDown`]: the child would
    /// never run. [`spawn_with`](Self::spawn_with) then returns a stopped reference instead.
    pub fn try_spawn_with<B: Actor>(
        &mut self,
        actor: B,
        options: SpawnOptions,
    ) -> Result<ActorRef<B::Msg>, SpawnError> {
        crate::actor::check_spawn::<B>(&options, &self.inner.runtime().shared)?;
        let cell = self.inner.cell();
        if cell.system_stopping() {
            return Err(SpawnError::ShutDown);
        }
        self.try_spawn_life(Life::Ready(actor), options)
            .map_err(|_| SpawnError::ShutDown)
    }

    /// Spawns a child whose state is built by `factory` on its first activation, on the worker
    /// that runs it (its memory is first touched there).
    pub fn spawn_fn<B: Actor>(
        &mut self,
        factory: impl FnOnce() -> B + Send + 'static,
        options: SpawnOptions,
    ) -> ActorRef<B::Msg> {
        if let Err(e) = crate::actor::check_spawn::<B>(&options, &self.inner.runtime().shared) {
            panic!("{e}");
        }
        self.spawn_life(Life::Factory(Box::new(factory)), options)
    }

    /// Spawns a child; once the system has shut down, a stopped reference.
    fn spawn_life<B: Actor>(&mut self, life: Life<B>, options: SpawnOptions) -> ActorRef<B::Msg> {
        self.try_spawn_life(life, options)
            .unwrap_or_else(|stopped| stopped)
    }

    /// Spawns a child; `Err` with a stopped reference once the system has shut down.
    fn try_spawn_life<B: Actor>(
        &mut self,
        life: Life<B>,
        options: SpawnOptions,
    ) -> Result<ActorRef<B::Msg>, ActorRef<B::Msg>> {
        let parent = self.inner.cell().failure_sink();
        cell::spawn(
            self.inner.runtime(),
            life,
            options,
            Some(parent),
            self.inner.exec(),
        )
        .map(|child| ActorRef::from_cell(child))
        .map_err(|stopped| ActorRef::from_cell(stopped))
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
        let me = self.inner.cell_arc();
        // Waiting for a reply keeps the asker referenced, so it cannot stop as unreferenced.
        me.acquire_handle();
        let reply = ReplyTo::new(move |result| {
            let _ = me.enqueue(Envelope::Call(Box::new(move |actor, ctx| {
                then(actor, ctx, result)
            })));
            me.release_handle();
        });
        // A rejected request drops its ReplyTo, which delivers NoReply to `then`.
        let _ = target.send(make(reply));
    }
}
