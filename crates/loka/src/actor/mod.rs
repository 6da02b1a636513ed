//! The actor API: the [`Actor`] trait, [`ActorRef`], [`Context`], spawn options, request/reply.

mod ask;
pub(crate) mod cell;
mod context;

pub use ask::{AskError, Pending, ReplyTo};
pub use context::Context;

use std::fmt;
use std::sync::Arc;

/// An actor: private state plus a handler for one message type.
///
/// Handlers of one actor never run concurrently and see messages from each sender in the order they
/// were sent. A handler must not block: use [`Context::ask`] (not [`ActorRef::ask`]) to wait for a
/// reply without holding a worker.
///
/// ```
/// use loka::{Actor, Context, System};
///
/// struct Counter { total: u64 }
/// enum Msg { Add(u64), Get(loka::ReplyTo<u64>) }
///
/// impl Actor for Counter {
///     type Msg = Msg;
///     fn handle(&mut self, _ctx: &mut Context<Self>, msg: Msg) {
///         match msg {
///             Msg::Add(n) => self.total += n,
///             Msg::Get(reply) => reply.send(self.total),
///         }
///     }
/// }
///
/// let system = System::builder().workers(2).build().unwrap();
/// let counter = system.spawn(Counter { total: 0 });
/// for i in 1..=10 { counter.send(Msg::Add(i)).unwrap(); }
/// assert_eq!(counter.ask(Msg::Get).unwrap().wait().unwrap(), 55);
/// system.shutdown();
/// ```
pub trait Actor: Sized + Send + 'static {
    /// The type of message this actor handles (usually an enum).
    type Msg: Send + 'static;

    /// Handles one message.
    fn handle(&mut self, ctx: &mut Context<Self>, msg: Self::Msg);

    /// Runs once, on the actor's first activation, before any message.
    fn started(&mut self, _ctx: &mut Context<Self>) {}

    /// Runs once when the actor stops (by [`Context::stop`], a stop signal, when it becomes
    /// unreferenced, after a panic, or at system shutdown).
    fn stopped(&mut self, _ctx: &mut Context<Self>) {}

    /// A child spawned by this actor panicked and was stopped. The default logs it.
    fn child_failed(&mut self, _ctx: &mut Context<Self>, failure: ActorFailure) {
        tracing::warn!(actor = %failure.actor, kind = failure.actor_type, message = %failure.message, "child actor failed");
    }
}

/// The identity of an actor, unique within its system.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct ActorId(pub(crate) u64);

impl ActorId {
    /// The raw id.
    pub fn as_u64(self) -> u64 {
        self.0
    }
}

impl fmt::Debug for ActorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<{}.{}>", self.0 >> 48, self.0 & ((1 << 48) - 1))
    }
}

impl fmt::Display for ActorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A record of an actor that stopped because its handler panicked.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ActorFailure {
    /// The actor that failed.
    pub actor: ActorId,
    /// Its Rust type name.
    pub actor_type: &'static str,
    /// The panic message.
    pub message: String,
}

/// Where a new actor is first placed. Hints only: they never change what a program computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Placement {
    /// The policy's default: the spawning actor's worker, or round robin from a plain thread.
    #[default]
    Default,
    /// A specific worker (taken modulo the worker count).
    Worker(usize),
}

/// Optional spawn settings. Every field is a hint that never changes program meaning.
#[derive(Debug, Clone, Default)]
pub struct SpawnOptions {
    /// A name for logs and failure reports.
    pub name: Option<String>,
    /// Start on the first message instead of right away: no activation is spent before the
    /// first message arrives, and [`Actor::started`] runs just before that message.
    pub lazy: bool,
    /// Where the actor is first placed.
    pub placement: Placement,
    /// The actor is a communication hub (used by hub-aware policies).
    pub hub: bool,
    /// Do not soft-pin this actor to a home worker (used by locality-guided policies).
    pub unpinned: bool,
}

impl SpawnOptions {
    /// Default options.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets [`SpawnOptions::name`].
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Sets [`SpawnOptions::lazy`].
    pub fn lazy(mut self, lazy: bool) -> Self {
        self.lazy = lazy;
        self
    }
    /// Sets [`SpawnOptions::placement`].
    pub fn placement(mut self, placement: Placement) -> Self {
        self.placement = placement;
        self
    }
    /// Sets [`SpawnOptions::hub`].
    pub fn hub(mut self, hub: bool) -> Self {
        self.hub = hub;
        self
    }
    /// Sets [`SpawnOptions::unpinned`].
    pub fn unpinned(mut self, unpinned: bool) -> Self {
        self.unpinned = unpinned;
        self
    }
}

/// A send failed because the actor has stopped; the message is handed back.
#[derive(PartialEq, Eq, thiserror::Error)]
#[error("actor {actor} has stopped; the message was not delivered")]
pub struct SendError<M> {
    /// The stopped actor.
    pub actor: ActorId,
    /// The message that was not delivered.
    pub message: M,
}

impl<M> fmt::Debug for SendError<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SendError")
            .field("actor", &self.actor)
            .finish_non_exhaustive()
    }
}

/// A hub toggle on an actor that has stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("cannot change the hub flag of actor {actor}: it has stopped")]
pub struct HubError {
    /// The stopped actor.
    pub actor: ActorId,
}

/// The type-erased receiving side of an actor, as seen by an [`ActorRef`].
pub(crate) trait Deliver<M>: Send + Sync {
    fn deliver(&self, msg: M) -> Result<(), SendError<M>>;
    fn stop_signal(&self) -> bool;
    fn id(&self) -> ActorId;
    fn is_stopped(&self) -> bool;
    fn set_hub(&self, hub: bool) -> bool;
    fn acquire_handle(&self);
    fn release_handle(&self);
}

/// A reference to a running actor accepting messages of type `M`: cheap to clone, `Send`, and
/// sending never blocks.
///
/// An actor stops by itself once every `ActorRef` to it is dropped and its mailbox is empty (the
/// actor can no longer receive anything), unless it keeps a reference to itself.
pub struct ActorRef<M: Send + 'static> {
    cell: Arc<dyn Deliver<M>>,
}

impl<M: Send + 'static> ActorRef<M> {
    /// Wraps a cell whose handle count already includes this reference.
    pub(crate) fn from_cell(cell: Arc<dyn Deliver<M>>) -> Self {
        ActorRef { cell }
    }

    /// Sends `msg` (fire and forget). Fails, handing the message back, if the actor has stopped.
    #[inline]
    pub fn send(&self, msg: M) -> Result<(), SendError<M>> {
        self.cell.deliver(msg)
    }

    /// Sends a request built around a fresh [`ReplyTo`] and returns a [`Pending`] reply that a plain
    /// thread can [`wait`](Pending::wait) for or any executor can `.await`. From inside an actor use
    /// [`Context::ask`], which does not block the worker.
    pub fn ask<R: Send + 'static>(
        &self,
        make: impl FnOnce(ReplyTo<R>) -> M,
    ) -> Result<Pending<R>, SendError<M>> {
        let (reply, pending) = ask::oneshot();
        self.send(make(reply))?;
        Ok(pending)
    }

    /// Asks the actor to stop after the messages already in its mailbox (a poison pill).
    /// Returns `false` if it had already stopped.
    pub fn stop(&self) -> bool {
        self.cell.stop_signal()
    }

    /// The actor's id.
    pub fn id(&self) -> ActorId {
        self.cell.id()
    }

    /// Marks the actor as a communication hub, or clears the mark (used by hub-aware policies:
    /// under `hierarchical` a hub stays on its worker and is never stolen). Fails on a stopped actor.
    pub fn set_hub(&self, hub: bool) -> Result<(), HubError> {
        if self.cell.set_hub(hub) {
            Ok(())
        } else {
            Err(HubError { actor: self.id() })
        }
    }

    /// Whether the actor has stopped (sends would fail).
    pub fn is_stopped(&self) -> bool {
        self.cell.is_stopped()
    }
}

impl<M: Send + 'static> Clone for ActorRef<M> {
    fn clone(&self) -> Self {
        self.cell.acquire_handle();
        ActorRef {
            cell: Arc::clone(&self.cell),
        }
    }
}

impl<M: Send + 'static> Drop for ActorRef<M> {
    fn drop(&mut self) {
        self.cell.release_handle();
    }
}

impl<M: Send + 'static> PartialEq for ActorRef<M> {
    fn eq(&self, other: &Self) -> bool {
        self.id() == other.id()
    }
}

impl<M: Send + 'static> Eq for ActorRef<M> {}

impl<M: Send + 'static> std::hash::Hash for ActorRef<M> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id().hash(state)
    }
}

impl<M: Send + 'static> fmt::Debug for ActorRef<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ActorRef{}", self.id())
    }
}
