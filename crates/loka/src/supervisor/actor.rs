//! The [`Supervisor`] actor: its children, in start order, and the requests it answers. How it
//! restarts them is `rounds.rs`.

use super::handle::{ChildInfo, ChildState, SupervisorMsg, SupervisorStats};
use super::jobs::{Job, Round};
use super::spec::{AnyChild, Live};
use super::{Restart, SupervisorError, SupervisorSpec};
use crate::runtime::cell::{event_sink, Command, EventSink};
use crate::{Actor, ActorFailure, ActorId, ActorRef, Context};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

/// A supervisor: an actor that starts the children of its [`SupervisorSpec`] when it starts,
/// restarts them in place when they fail, and gives up when they fail too often. Spawn it with
/// [`System::spawn_supervisor`](crate::System::spawn_supervisor) or
/// [`Context::spawn_supervisor`] (which check the spec's spawn options) — or as any actor, with
/// [`Supervisor::new`] — and talk to it through a [`SupervisorRef`](super::SupervisorRef).
///
/// A supervisor keeps a reference to itself: it does not stop when its last outside reference
/// is dropped, only when it is stopped ([`SupervisorRef::stop`](super::SupervisorRef::stop), a
/// stop signal, a shutdown) or gives up.
pub struct Supervisor {
    pub(super) spec: SupervisorSpec,
    /// In start order.
    pub(super) children: Vec<Child>,
    pub(super) by_id: FxHashMap<Arc<str>, usize>,
    /// Running children by actor, for their events.
    pub(super) by_actor: FxHashMap<ActorId, usize>,
    pub(super) sink: Option<EventSink>,
    /// Keeps the supervisor alive until it is stopped.
    me: Option<ActorRef<SupervisorMsg>>,
    /// When the restarts of the current intensity window happened.
    pub(super) restarts_at: VecDeque<Duration>,
    pub(super) jobs: VecDeque<Job>,
    pub(super) current: Option<Round>,
    pub(super) next_seq: u64,
    /// Giving up or stopping: no new child, no restart.
    pub(super) closing: bool,
    pub(super) stats: SupervisorStats,
}

/// One child of a supervisor.
pub(super) struct Child {
    pub(super) spec: Arc<dyn AnyChild>,
    /// `None`: not running (terminated).
    pub(super) live: Option<Live>,
    pub(super) state: ChildState,
    pub(super) restarts: u64,
}

impl Supervisor {
    /// A supervisor of `spec`, not yet started: spawn it as an actor. Its children start when it
    /// does. ([`System::spawn_supervisor`](crate::System::spawn_supervisor) also checks the
    /// children's spawn options first; spawned this way, a bad option fails that child's start.)
    pub fn new(spec: SupervisorSpec) -> Self {
        Supervisor {
            spec,
            children: Vec::new(),
            by_id: FxHashMap::default(),
            by_actor: FxHashMap::default(),
            sink: None,
            me: None,
            restarts_at: VecDeque::new(),
            jobs: VecDeque::new(),
            current: None,
            next_seq: 1,
            closing: false,
            stats: SupervisorStats::default(),
        }
    }

    /// The error of a request the supervisor refuses because it is closing.
    pub(super) fn stopped_error(ctx: &Context<Self>) -> SupervisorError {
        SupervisorError::Stopped {
            supervisor: ctx.id(),
        }
    }

    /// Starts `spec` as a new child, after the others. Returns its index.
    pub(super) fn start_child(
        &mut self,
        ctx: &mut Context<Self>,
        spec: Arc<dyn AnyChild>,
    ) -> Result<usize, SupervisorError> {
        if self.closing {
            return Err(Self::stopped_error(ctx));
        }
        if spec.id().is_empty() {
            return Err(SupervisorError::EmptyChildId);
        }
        if self.by_id.contains_key(spec.id()) {
            return Err(SupervisorError::DuplicateChild {
                id: spec.id().to_string(),
            });
        }
        let live = self.spawn(ctx, &spec)?;
        let at = self.children.len();
        self.by_id.insert(Arc::clone(spec.id()), at);
        self.by_actor.insert(live.actor, at);
        self.children.push(Child {
            spec,
            live: Some(live),
            state: ChildState::Running,
            restarts: 0,
        });
        Ok(at)
    }

    fn spawn(
        &mut self,
        ctx: &mut Context<Self>,
        spec: &Arc<dyn AnyChild>,
    ) -> Result<Live, SupervisorError> {
        let sink = self
            .sink
            .as_ref()
            .expect("a started supervisor has its sink");
        spec.spawn(ctx, sink)
    }

    /// The index of child `id`.
    pub(super) fn find(&self, id: &str) -> Result<usize, SupervisorError> {
        self.by_id
            .get(id)
            .copied()
            .ok_or_else(|| SupervisorError::UnknownChild { id: id.to_owned() })
    }

    /// Starts again a child that is not running. Returns its new actor's id.
    pub(super) fn restart_child(
        &mut self,
        ctx: &mut Context<Self>,
        id: &str,
    ) -> Result<ActorId, SupervisorError> {
        if self.closing {
            return Err(Self::stopped_error(ctx));
        }
        let at = self.find(id)?;
        if self.children[at].live.is_some() {
            return Err(SupervisorError::ChildRunning { id: id.to_owned() });
        }
        let spec = Arc::clone(&self.children[at].spec);
        let live = self.spawn(ctx, &spec)?;
        let actor = live.actor;
        self.by_actor.insert(actor, at);
        let child = &mut self.children[at];
        child.live = Some(live);
        child.state = ChildState::Running;
        Ok(actor)
    }

    /// Forgets a child that is not running.
    pub(super) fn delete_child(&mut self, id: &str) -> Result<(), SupervisorError> {
        let at = self.find(id)?;
        if self.children[at].live.is_some() {
            return Err(SupervisorError::ChildRunning { id: id.to_owned() });
        }
        self.remove(at);
        Ok(())
    }

    /// Removes the child at `at` from the list (it is not running).
    pub(super) fn remove(&mut self, at: usize) {
        self.children.remove(at);
        self.by_id.clear();
        self.by_actor.clear();
        for (i, child) in self.children.iter().enumerate() {
            self.by_id.insert(Arc::clone(child.spec.id()), i);
            if let Some(live) = &child.live {
                self.by_actor.insert(live.actor, i);
            }
        }
    }

    /// Terminates child `id` (it handles what it was sent first), then calls `reply`.
    pub(super) fn terminate_child(
        &mut self,
        ctx: &mut Context<Self>,
        id: &str,
        reply: Box<dyn FnOnce(Result<(), SupervisorError>) + Send>,
    ) {
        if self.closing {
            return reply(Err(Self::stopped_error(ctx)));
        }
        match self.find(id) {
            Err(e) => reply(Err(e)),
            Ok(at) if self.children[at].live.is_none() => reply(Ok(())),
            Ok(at) => {
                let child = Arc::clone(self.children[at].spec.id());
                self.jobs.push_back(Job::Terminate { child, reply });
                self.advance(ctx);
            }
        }
    }

    /// Terminates every child in reverse start order, then stops; `reply` once the children are
    /// gone.
    pub(super) fn stop(
        &mut self,
        ctx: &mut Context<Self>,
        reply: Box<dyn FnOnce(Result<(), SupervisorError>) + Send>,
    ) {
        if self.closing {
            return reply(Err(Self::stopped_error(ctx)));
        }
        self.jobs.push_back(Job::Stop { reply });
        self.advance(ctx);
    }

    /// What `which_children` answers.
    pub(super) fn which_children(&self) -> Vec<ChildInfo> {
        self.children
            .iter()
            .map(|child| ChildInfo {
                id: child.spec.id().to_string(),
                actor: child.live.as_ref().map(|live| live.actor),
                state: child.state,
                restart: child.spec.restart(),
                actor_type: child.spec.actor_type(),
                supervisor: child.spec.is_supervisor(),
                restarts: child.restarts,
            })
            .collect()
    }

    /// A reference to running child `at`, if it takes messages of type `M`.
    pub(super) fn typed_ref<M: Send + 'static>(
        &self,
        at: usize,
    ) -> Result<ActorRef<M>, SupervisorError> {
        let child = &self.children[at];
        let id = || child.spec.id().to_string();
        let live = child
            .live
            .as_ref()
            .ok_or_else(|| SupervisorError::NotRunning { id: id() })?;
        live.actor_ref
            .downcast_ref::<ActorRef<M>>()
            .cloned()
            .ok_or_else(|| SupervisorError::WrongType {
                id: id(),
                requested: std::any::type_name::<M>(),
                actual: child.spec.message_type(),
            })
    }

    /// References to the running children that take messages of type `M`, in start order.
    pub(super) fn typed_refs<M: Send + 'static>(&self) -> Vec<ActorRef<M>> {
        (0..self.children.len())
            .filter_map(|at| self.typed_ref(at).ok())
            .collect()
    }

    /// The counters, with the children counted now.
    pub(super) fn stats(&self) -> SupervisorStats {
        SupervisorStats {
            children: self.children.len(),
            running: self.children.iter().filter(|c| c.live.is_some()).count(),
            ..self.stats.clone()
        }
    }

    /// Gives child `at` an order; returns what to wait for: its actor and the order's number.
    /// `None` if it has stopped (its `Terminated` event is on the way or came).
    pub(super) fn order(&mut self, at: usize, command: Command) -> Option<(ActorId, u64)> {
        let seq = self.next_seq;
        let live = self.children[at].live.as_ref()?;
        live.orders.give(command, seq);
        if !live.control.start_signal() {
            return None;
        }
        self.next_seq += 1;
        Some((live.actor, seq))
    }
}

impl Actor for Supervisor {
    type Msg = SupervisorMsg;

    fn handle(&mut self, ctx: &mut Context<Self>, msg: SupervisorMsg) {
        (msg.0)(self, ctx)
    }

    /// Starts the children, in order.
    fn started(&mut self, ctx: &mut Context<Self>) {
        self.me = Some(ctx.myself());
        self.sink = Some(event_sink(&ctx.inner().cell_arc(), Supervisor::on_event));
        let specs = self.spec.children.clone();
        for spec in specs {
            if let Err(error) = self.start_child(ctx, spec) {
                // Only once the system shuts down (a spec's options were checked when it was
                // spawned through `spawn_supervisor`).
                tracing::debug!(supervisor = %ctx.id(), %error, "child not started");
            }
        }
    }

    /// Terminates the children still running (they handle what they were sent first): a
    /// supervisor that stops, or is replaced by its own supervisor, takes its children with it.
    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        for at in (0..self.children.len()).rev() {
            self.order(at, Command::Terminate);
        }
        self.me = None;
    }

    /// Children report through their supervision, not through this hook.
    fn child_failed(&mut self, _ctx: &mut Context<Self>, _failure: ActorFailure) {}
}

impl Restart {
    /// Whether a child of this kind is restarted with its siblings (`OneForAll`, `RestForOne`).
    pub(super) fn with_siblings(self) -> bool {
        self != Restart::Temporary
    }
}
