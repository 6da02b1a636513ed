//! Talking to a running supervisor: [`SupervisorRef`] (blocking calls, for plain threads),
//! [`SupervisorMsg`] (its requests, to send or [`ask`](crate::Context::ask) from a handler),
//! what it reports ([`ChildInfo`], [`SupervisorStats`]), and spawning one.

use super::spec::AnyChild;
use super::{ChildSpec, Restart, Supervisor, SupervisorError, SupervisorSpec};
use crate::{Actor, ActorId, ActorRef, Context, ReplyTo, SpawnError};
use std::fmt;
use std::sync::Arc;

/// A request to a [`Supervisor`]: build one with the constructors below and send it, e.g. from
/// a handler with [`Context::ask`] (which does not block the worker):
///
/// ```
/// # use loka::supervisor::{SupervisorMsg, SupervisorRef, ChildInfo};
/// # use loka::{Actor, Context};
/// struct Monitor { supervisor: SupervisorRef }
/// impl Actor for Monitor {
///     type Msg = ();
///     fn handle(&mut self, ctx: &mut Context<Self>, _: ()) {
///         ctx.ask(self.supervisor.actor_ref(), SupervisorMsg::which_children, |_me, _ctx, children| {
///             let children: Vec<ChildInfo> = children.unwrap_or_default();
///             println!("{} children", children.len());
///         });
///     }
/// }
/// ```
pub struct SupervisorMsg(pub(super) Request);

/// What a [`SupervisorMsg`] does, run with the supervisor's state.
pub(super) type Request = Box<dyn FnOnce(&mut Supervisor, &mut Context<Supervisor>) + Send>;

impl SupervisorMsg {
    fn new(run: impl FnOnce(&mut Supervisor, &mut Context<Supervisor>) + Send + 'static) -> Self {
        SupervisorMsg(Box::new(run))
    }

    /// Starts a new child after the others (Erlang's `start_child`); replies with a reference
    /// to it. Refused for an id already used, a stopping supervisor, a bad spawn option.
    pub fn start_child<A: Actor>(
        spec: ChildSpec<A>,
        reply: ReplyTo<Result<ActorRef<A::Msg>, SupervisorError>>,
    ) -> Self {
        SupervisorMsg::new(move |supervisor, ctx| {
            let started = supervisor.start_child(ctx, Arc::new(spec) as Arc<dyn AnyChild>);
            reply.send(started.and_then(|at| supervisor.typed_ref(at)));
        })
    }

    /// Terminates child `id` for good, after the messages it already has (Erlang's
    /// `terminate_child`); replies once it has stopped. Its spec stays (unless it is
    /// [`Temporary`](Restart::Temporary)): [`restart_child`](Self::restart_child) starts it
    /// again, [`delete_child`](Self::delete_child) forgets it. Already stopped: `Ok` at once.
    pub fn terminate_child(
        id: impl Into<String>,
        reply: ReplyTo<Result<(), SupervisorError>>,
    ) -> Self {
        let id = id.into();
        SupervisorMsg::new(move |supervisor, ctx| {
            supervisor.terminate_child(ctx, &id, Box::new(move |result| reply.send(result)))
        })
    }

    /// Starts again a child that is not running (Erlang's `restart_child`): a new actor (the
    /// old references stay stopped); replies with its id. Refused for a running child.
    pub fn restart_child(
        id: impl Into<String>,
        reply: ReplyTo<Result<ActorId, SupervisorError>>,
    ) -> Self {
        let id = id.into();
        SupervisorMsg::new(move |supervisor, ctx| reply.send(supervisor.restart_child(ctx, &id)))
    }

    /// Forgets a child that is not running (Erlang's `delete_child`). Refused for a running
    /// child.
    pub fn delete_child(
        id: impl Into<String>,
        reply: ReplyTo<Result<(), SupervisorError>>,
    ) -> Self {
        let id = id.into();
        SupervisorMsg::new(move |supervisor, _| reply.send(supervisor.delete_child(&id)))
    }

    /// Lists the children in start order (Erlang's `which_children`).
    pub fn which_children(reply: ReplyTo<Vec<ChildInfo>>) -> Self {
        SupervisorMsg::new(move |supervisor, _| reply.send(supervisor.which_children()))
    }

    /// A reference to child `id`, typed by its message type `M`: valid across its restarts.
    pub fn child<M: Send + 'static>(
        id: impl Into<String>,
        reply: ReplyTo<Result<ActorRef<M>, SupervisorError>>,
    ) -> Self {
        let id = id.into();
        SupervisorMsg::new(move |supervisor, _| {
            reply.send(supervisor.find(&id).and_then(|at| supervisor.typed_ref(at)))
        })
    }

    /// References to the running children that take messages of type `M`, in start order (the
    /// workers of a pool).
    pub fn children<M: Send + 'static>(reply: ReplyTo<Vec<ActorRef<M>>>) -> Self {
        SupervisorMsg::new(move |supervisor, _| reply.send(supervisor.typed_refs()))
    }

    /// The supervisor's counters.
    pub fn stats(reply: ReplyTo<SupervisorStats>) -> Self {
        SupervisorMsg::new(move |supervisor, _| reply.send(supervisor.stats()))
    }

    /// Terminates every child in reverse start order — each after the messages it already has —
    /// then stops the supervisor; replies once the children are gone. A supervisor that is
    /// itself a [`Permanent`](Restart::Permanent) child is restarted by its own supervisor, as
    /// after any stop.
    pub fn stop(reply: ReplyTo<Result<(), SupervisorError>>) -> Self {
        SupervisorMsg::new(move |supervisor, ctx| {
            supervisor.stop(ctx, Box::new(move |result| reply.send(result)))
        })
    }
}

impl fmt::Debug for SupervisorMsg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SupervisorMsg(..)")
    }
}

/// A child as [`which_children`](SupervisorRef::which_children) lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildInfo {
    /// Its id.
    pub id: String,
    /// Its actor while it runs (the same across restarts in place); `None` once terminated.
    pub actor: Option<ActorId>,
    /// Running, being restarted, or stopped.
    pub state: ChildState,
    /// Its restart kind.
    pub restart: Restart,
    /// Its Rust type name.
    pub actor_type: &'static str,
    /// Whether it is a supervisor itself.
    pub supervisor: bool,
    /// How many times it was restarted in place.
    pub restarts: u64,
}

/// Where a child is in its life, as its supervisor knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChildState {
    /// Running (as far as the supervisor has heard).
    Running,
    /// Between two instances: it exited or was ordered to, and waits to be restarted;
    /// messages sent to it wait for the new instance.
    Restarting,
    /// Terminated: ordered to, or a [`Transient`](Restart::Transient) child that stopped
    /// normally. Its references are stopped.
    Stopped,
}

/// A supervisor's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SupervisorStats {
    /// Restarts, as the intensity counts them: one per child exit that was acted on, whatever
    /// the strategy restarted.
    pub restarts: u64,
    /// Child instances restarted in place (a `OneForAll` restart of 3 children counts 3).
    pub child_restarts: u64,
    /// Child exits heard: failures and normal stops that wanted a restart, and children that
    /// terminated failing.
    pub failures: u64,
    /// Envelopes dropped by children's panics: the message (or continuation) whose handler
    /// panicked, one per panic. Everything else sent to a restarted child is handled.
    pub lost: u64,
    /// Children listed (running or not).
    pub children: usize,
    /// Children running (or being restarted).
    pub running: usize,
}

/// A handle on a running [`Supervisor`]: an [`ActorRef<SupervisorMsg>`] with blocking calls for
/// plain threads. Inside a handler, do not call these (they would hold the worker): send
/// [`SupervisorMsg`]s with [`Context::ask`] instead. Every call answers
/// [`SupervisorError::Stopped`] once the supervisor has stopped.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct SupervisorRef {
    actor: ActorRef<SupervisorMsg>,
}

impl SupervisorRef {
    /// Wraps a reference to a supervisor (one spawned as a plain actor).
    pub fn new(actor: ActorRef<SupervisorMsg>) -> Self {
        SupervisorRef { actor }
    }

    /// The supervisor's actor reference.
    pub fn actor_ref(&self) -> &ActorRef<SupervisorMsg> {
        &self.actor
    }

    /// The supervisor's id.
    pub fn id(&self) -> ActorId {
        self.actor.id()
    }

    /// Whether the supervisor has stopped.
    pub fn is_stopped(&self) -> bool {
        self.actor.is_stopped()
    }

    /// Sends a request and waits for its reply.
    fn call<R: Send + 'static>(
        &self,
        make: impl FnOnce(ReplyTo<R>) -> SupervisorMsg,
    ) -> Result<R, SupervisorError> {
        let stopped = || SupervisorError::Stopped {
            supervisor: self.id(),
        };
        let pending = self.actor.ask(make).map_err(|_| stopped())?;
        pending.wait().map_err(|_| stopped())
    }

    /// See [`SupervisorMsg::start_child`].
    pub fn start_child<A: Actor>(
        &self,
        spec: ChildSpec<A>,
    ) -> Result<ActorRef<A::Msg>, SupervisorError> {
        self.call(|reply| SupervisorMsg::start_child(spec, reply))?
    }

    /// See [`SupervisorMsg::terminate_child`].
    pub fn terminate_child(&self, id: &str) -> Result<(), SupervisorError> {
        self.call(|reply| SupervisorMsg::terminate_child(id, reply))?
    }

    /// See [`SupervisorMsg::restart_child`].
    pub fn restart_child(&self, id: &str) -> Result<ActorId, SupervisorError> {
        self.call(|reply| SupervisorMsg::restart_child(id, reply))?
    }

    /// See [`SupervisorMsg::delete_child`].
    pub fn delete_child(&self, id: &str) -> Result<(), SupervisorError> {
        self.call(|reply| SupervisorMsg::delete_child(id, reply))?
    }

    /// See [`SupervisorMsg::which_children`].
    pub fn which_children(&self) -> Result<Vec<ChildInfo>, SupervisorError> {
        self.call(SupervisorMsg::which_children)
    }

    /// See [`SupervisorMsg::child`].
    pub fn child<M: Send + 'static>(&self, id: &str) -> Result<ActorRef<M>, SupervisorError> {
        self.call(|reply| SupervisorMsg::child(id, reply))?
    }

    /// See [`SupervisorMsg::children`].
    pub fn children<M: Send + 'static>(&self) -> Result<Vec<ActorRef<M>>, SupervisorError> {
        self.call(SupervisorMsg::children)
    }

    /// See [`SupervisorMsg::stats`].
    pub fn stats(&self) -> Result<SupervisorStats, SupervisorError> {
        self.call(SupervisorMsg::stats)
    }

    /// See [`SupervisorMsg::stop`].
    pub fn stop(&self) -> Result<(), SupervisorError> {
        self.call(SupervisorMsg::stop)?
    }
}

impl From<ActorRef<SupervisorMsg>> for SupervisorRef {
    fn from(actor: ActorRef<SupervisorMsg>) -> Self {
        SupervisorRef::new(actor)
    }
}

impl fmt::Debug for SupervisorRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SupervisorRef{}", self.id())
    }
}

pub(crate) fn spawn_error(error: SpawnError) -> SupervisorError {
    match error {
        SpawnError::ShutDown => SupervisorError::ShutDown,
        error => SupervisorError::Spawn {
            id: String::new(),
            error,
        },
    }
}

impl<A: Actor> Context<A> {
    /// Spawns a supervisor of `spec` as a child of this actor: when it gives up, this actor's
    /// [`Actor::child_failed`] hears of it. Checks the spec as
    /// [`System::spawn_supervisor`](crate::System::spawn_supervisor) does.
    pub fn spawn_supervisor(
        &mut self,
        spec: SupervisorSpec,
    ) -> Result<SupervisorRef, SupervisorError> {
        spec.check(&self.inner().runtime().shared)?;
        self.try_spawn_with(Supervisor::new(spec), crate::SpawnOptions::default())
            .map(SupervisorRef::new)
            .map_err(spawn_error)
    }
}
