//! The actor API: the [`Actor`] trait, [`ActorRef`], [`Context`], spawn options, request/reply,
//! registered names, death watch and links.

pub(crate) mod ask;
mod async_actor;
mod context;
pub(crate) mod names;
mod pipe;
mod send_async;
mod timers;
mod watch;

pub use crate::runtime::errors::{
    AskBlockingError, HubError, Requirement, SendError, SendErrorReason, SpawnError, TrySendError,
};
pub use crate::runtime::options::{Overflow, Placement, SpawnOptions};
pub use crate::runtime::stop_reason::StopReason;
pub use crate::runtime::{ActorFailure, ActorId};
pub use ask::{AskError, Pending, ReplyTo};
pub use async_actor::{Async, AsyncActor, AsyncContext, Sleep};
pub use context::Context;
pub use names::{LookupError, RegisterError};
pub use send_async::{AskAsync, SendAsync};
pub use timers::{TimerError, TimerHandle};

use crate::runtime::{Behavior, CellContext, Deliver};
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
    /// unreferenced, after a panic, when a linked actor fails, or at system shutdown; the
    /// [`StopReason`] its watchers get says which).
    ///
    /// A panic here is a failure like a handler's: recorded in [`System::failures`] and
    /// `stats().panics` and reported to the parent's [`child_failed`](Self::child_failed), with a
    /// message that starts ``"`stopped` hook panicked: "``. If the actor is stopping because a
    /// handler panicked, it is still one failure, reported once: the handler's message followed
    /// by ``"; then its `stopped` hook panicked: …"``.
    ///
    /// [`System::failures`]: crate::System::failures
    fn stopped(&mut self, _ctx: &mut Context<Self>) {}

    /// A child spawned by this actor panicked and was stopped. The default logs it.
    fn child_failed(&mut self, _ctx: &mut Context<Self>, failure: ActorFailure) {
        log_child_failed(failure);
    }

    /// The receive timeout passed with no message (see [`Context::set_receive_timeout`]). The
    /// default does nothing.
    fn timeout(&mut self, _ctx: &mut Context<Self>) {}

    /// What this actor type is like (blocking, parallelism, communication, computation), for the
    /// `auto` execution mode: [`crate::exec_policy::map`] turns it into an execution policy. The
    /// default declares nothing: under `auto` the actor starts on the workers and is watched
    /// (docs/exec-policies.md).
    fn characteristics() -> Option<crate::exec_policy::Characteristics> {
        None
    }

    /// The execution policy of every actor of this type, in every execution mode (a
    /// [`SpawnOptions::exec`] still wins for one actor). The default leaves it to the mode:
    /// `all-task`, `all-thread`, or `auto`'s mapping of [`Actor::characteristics`].
    fn exec_policy() -> Option<crate::exec_policy::ExecPolicy> {
        None
    }

    /// What this actor type needs from its system beyond loka's workers: an actor whose
    /// futures use Tokio's timers or I/O (through [`Context::pipe`] or as an [`AsyncActor`])
    /// returns `&[Requirement::Tokio]`. Every spawn checks it: on a system without it the
    /// spawn is refused with [`SpawnError::MissingRuntime`] naming the actor type and what it
    /// lacks (`try_spawn`), or panics with that message (`spawn`), instead of the actor failing
    /// later inside a handler. The default needs nothing.
    fn requires() -> &'static [Requirement] {
        &[]
    }
}

/// Checks what spawning an `A` with `options` needs: the options against the machine's places,
/// and [`Actor::requires`] against what the system has.
pub(crate) fn check_spawn<A: Actor>(
    options: &SpawnOptions,
    shared: &crate::runtime::Shared,
) -> Result<(), SpawnError> {
    SpawnError::check(options, shared.machine.places())?;
    SpawnError::check_requirements(A::requires(), std::any::type_name::<A>(), shared)
}

/// A reference to a running actor accepting messages of type `M`: cheap to clone, `Send`, and
/// sending never blocks ([`send_async`](Self::send_async) waits for room in a bounded mailbox
/// without blocking a thread).
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

    /// The actor's receiving side.
    pub(crate) fn cell(&self) -> &dyn Deliver<M> {
        &*self.cell
    }

    /// The actor's receiving side, shared (what death watch holds).
    #[cfg(feature = "remote")]
    pub(crate) fn cell_arc(&self) -> Arc<dyn Deliver<M>> {
        Arc::clone(&self.cell)
    }

    /// A weak reference to the actor's cell: tests see when its memory is freed.
    #[cfg(test)]
    pub(crate) fn cell_weak(&self) -> std::sync::Weak<dyn Deliver<M>> {
        Arc::downgrade(&self.cell)
    }

    /// Sends `msg` (fire and forget). Fails, handing the message back, if the actor has stopped
    /// ([`SendErrorReason::Stopped`]), or if its bounded mailbox is full and its overflow rule is
    /// [`Overflow::Reject`] ([`SendErrorReason::Full`]). Under [`Overflow::DropNewest`] and
    /// [`Overflow::DropOldest`] a send to a full mailbox succeeds and a message is dropped
    /// (docs/bounded-mailboxes.md).
    #[inline]
    pub fn send(&self, msg: M) -> Result<(), SendError<M>> {
        self.cell
            .deliver(msg)
            .map_err(|message| self.send_error(message))
    }

    /// The [`SendError`] of a refused send. A bounded actor that has not stopped refused it for
    /// room (were it to stop meanwhile, `Stopped` is as true).
    #[cold]
    fn send_error(&self, message: M) -> SendError<M> {
        let reason = match self.cell.capacity() {
            Some(capacity) if !self.cell.is_stopped() => SendErrorReason::Full { capacity },
            _ => SendErrorReason::Stopped,
        };
        SendError {
            actor: self.cell.id(),
            message,
            reason,
        }
    }

    /// Sends `msg` if the mailbox has room now; never waits and never drops a message, whatever
    /// the overflow rule: a full bounded mailbox answers [`TrySendError::Full`] with the message
    /// (counted in `stats().mailbox_full`). For an unbounded actor it is [`send`](Self::send).
    #[inline]
    pub fn try_send(&self, msg: M) -> Result<(), TrySendError<M>> {
        self.cell.try_deliver(msg, true)
    }

    /// Sends `msg`, waiting for room if the bounded mailbox is full: the returned future
    /// completes once the message is queued, or fails with [`SendErrorReason::Stopped`] (and the
    /// message) if the actor stops first. Works under any executor; a plain thread calls
    /// [`send_blocking`](Self::send_blocking) instead. Never drops a message, whatever the
    /// overflow rule. For an unbounded actor it completes at its first poll, like
    /// [`send`](Self::send). Do not wait on it inside a sync handler: a full mailbox would hold
    /// the worker; use [`try_send`](Self::try_send) there.
    pub fn send_async(&self, msg: M) -> SendAsync<'_, M> {
        SendAsync::new(self, msg)
    }

    /// Sends `msg` from a plain thread, blocking it until the bounded mailbox has room: what
    /// [`send_async`](Self::send_async) does, with the thread parked (and unparked by the
    /// mailbox's wake-up) instead of an executor. Fails with [`SendErrorReason::Stopped`] and
    /// the message if the actor stops first; never drops a message, whatever the overflow rule.
    /// For an unbounded actor it is [`send`](Self::send). Never call it inside a handler: a full
    /// mailbox would hold the worker (use [`try_send`](Self::try_send) or an async actor's
    /// `send_async(..).await` there).
    pub fn send_blocking(&self, msg: M) -> Result<(), SendError<M>> {
        let runtime = self.cell.system_runtime();
        let notify = runtime.wants_wait_notice().then_some(runtime);
        send_async::block_on(self.send_async(msg), || {
            // The simulation's driver runs the actors only when told a thread waits.
            if let Some(runtime) = notify {
                runtime.core().waiting();
            }
        })
    }

    /// User messages in the actor's mailbox now. For a bounded mailbox the count its bound keeps
    /// (messages a `DropOldest` send doomed are not counted), exact while neither the actor nor
    /// a sending actor runs; while they run it may include up to a batch of places the actor
    /// already freed or a sending handler reserved ahead (docs/bounded-mailboxes.md). For an unbounded one, a best-effort reading
    /// that costs its sends and receives nothing: it also counts control envelopes (start, stop,
    /// ask continuations) and may be off by the sends and receives under way; under the
    /// message-centric engine, whose queues hold an unbounded actor's messages among everyone
    /// else's, it is 0 (docs/bounded-mailboxes.md).
    pub fn mailbox_len(&self) -> usize {
        self.cell.mailbox_len()
    }

    /// The capacity of the actor's mailbox ([`SpawnOptions::capacity`]); `None` if unbounded.
    pub fn capacity(&self) -> Option<usize> {
        self.cell.capacity()
    }

    /// Sends a request built around a fresh [`ReplyTo`] and returns a [`Pending`] reply that a plain
    /// thread can [`wait`](Pending::wait) for or any executor can `.await`. From inside an actor use
    /// [`Context::ask`], which does not block the worker.
    pub fn ask<R: Send + 'static>(
        &self,
        make: impl FnOnce(ReplyTo<R>) -> M,
    ) -> Result<Pending<R>, SendError<M>> {
        let (reply, mut pending) = ask::oneshot();
        let runtime = self.cell.system_runtime();
        if runtime.wants_wait_notice() {
            pending.notify = Some(std::sync::Arc::clone(runtime));
        }
        self.send(make(reply))?;
        Ok(pending)
    }

    /// Asks from a plain thread and blocks it until the reply comes, as `gen_server:call` does:
    /// waits for room in a bounded mailbox as [`send_blocking`](Self::send_blocking) does, then
    /// for the reply as [`Pending::wait`] does. Fails with [`AskBlockingError::NotSent`] and the
    /// request if the actor stops before taking it, or [`AskBlockingError::NoReply`] if the
    /// request is dropped unanswered; [`ask`](Self::ask) with
    /// [`Pending::wait_timeout`] bounds the wait instead. Never call it inside a handler (the
    /// worker would wait on itself): use [`Context::ask`] there.
    pub fn ask_blocking<R: Send + 'static>(
        &self,
        make: impl FnOnce(ReplyTo<R>) -> M,
    ) -> Result<R, AskBlockingError<M>> {
        let runtime = self.cell.system_runtime();
        let notify = runtime.wants_wait_notice().then_some(runtime);
        let pending = send_async::block_on(self.ask_async(make), || {
            // The simulation's driver runs the actors only when told a thread waits.
            if let Some(runtime) = notify {
                runtime.core().waiting();
            }
        })
        .map_err(AskBlockingError::NotSent)?;
        pending.wait().map_err(|_| AskBlockingError::NoReply)
    }

    /// Like [`ask`](Self::ask), but waits for room in a bounded mailbox instead of failing (or
    /// dropping a message) when it is full: the returned future completes with the [`Pending`]
    /// reply once the request is queued (`.await` that too), or with
    /// [`SendErrorReason::Stopped`] and the request if the actor stops first. As
    /// [`send_async`](Self::send_async), for async code outside the actor's own handlers.
    pub fn ask_async<R: Send + 'static>(
        &self,
        make: impl FnOnce(ReplyTo<R>) -> M,
    ) -> AskAsync<'_, M, R> {
        let (reply, mut pending) = ask::oneshot();
        let runtime = self.cell.system_runtime();
        if runtime.wants_wait_notice() {
            pending.notify = Some(std::sync::Arc::clone(runtime));
        }
        AskAsync {
            send: self.send_async(make(reply)),
            pending: Some(pending),
        }
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

/// The runtime runs every [`Actor`] through [`Behavior`]; its context is [`Context`].
impl<A: Actor> Behavior for A {
    type Msg = A::Msg;
    type Ctx = Context<A>;

    #[inline]
    fn context(inner: CellContext<A>) -> Context<A> {
        Context::new(inner)
    }
    #[inline]
    fn inner(ctx: &mut Context<A>) -> &mut CellContext<A> {
        ctx.inner_mut()
    }
    // An actor type that declares a runtime ([`Actor::requires`]) has it entered around each of
    // its hooks, so a Tokio future it creates there (`ctx.pipe(tokio::time::sleep(d), ..)`)
    // registers with it. For every other type `requires()` is the empty default: the test is a
    // constant once inlined, and the plain call is all that is left.
    #[inline]
    fn handle(&mut self, ctx: &mut Context<A>, msg: A::Msg) {
        if A::requires().is_empty() {
            Actor::handle(self, ctx, msg)
        } else {
            with_runtime(ctx, |ctx| Actor::handle(self, ctx, msg))
        }
    }
    fn started(&mut self, ctx: &mut Context<A>) {
        with_runtime_if_required(ctx, |ctx| Actor::started(self, ctx))
    }
    fn stopped(&mut self, ctx: &mut Context<A>) {
        with_runtime_if_required(ctx, |ctx| Actor::stopped(self, ctx))
    }
    fn child_failed(&mut self, ctx: &mut Context<A>, failure: ActorFailure) {
        with_runtime_if_required(ctx, |ctx| Actor::child_failed(self, ctx, failure))
    }
    fn characteristics() -> Option<crate::exec_policy::Characteristics> {
        A::characteristics()
    }
    fn exec_policy() -> Option<crate::exec_policy::ExecPolicy> {
        A::exec_policy()
    }
}

/// [`Actor::child_failed`]'s default: one function for every actor type (a `tracing` event's
/// expansion is large, and the default method is instantiated per type:
/// docs/decisions/0072-one-cell-code-for-every-actor-type.md).
#[cold]
#[inline(never)]
fn log_child_failed(failure: ActorFailure) {
    tracing::warn!(actor = %failure.actor, kind = failure.actor_type, message = %failure.message, "child actor failed");
}

/// Runs `f` inside the system's runtime ([`with_runtime`]) if `A` declares one
/// ([`Actor::requires`]), else plainly.
#[inline]
fn with_runtime_if_required<A: Actor, R>(
    ctx: &mut Context<A>,
    f: impl FnOnce(&mut Context<A>) -> R,
) -> R {
    if A::requires().is_empty() {
        f(ctx)
    } else {
        with_runtime(ctx, f)
    }
}

/// Runs `f` inside the system's Tokio runtime, if it has one (feature `tokio`): Tokio timers
/// and I/O that `f` creates or polls register with it.
#[cfg(feature = "tokio")]
pub(crate) fn with_runtime<A: Actor, R>(
    ctx: &mut Context<A>,
    f: impl FnOnce(&mut Context<A>) -> R,
) -> R {
    let handle = ctx.inner().runtime().shared.tokio.clone();
    let _entered = handle.as_ref().map(tokio::runtime::Handle::enter);
    f(ctx)
}

/// Runs `f` (nothing to enter without the `tokio` feature).
#[cfg(not(feature = "tokio"))]
#[inline(always)]
pub(crate) fn with_runtime<A: Actor, R>(
    ctx: &mut Context<A>,
    f: impl FnOnce(&mut Context<A>) -> R,
) -> R {
    f(ctx)
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
