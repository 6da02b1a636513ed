//! What a supervisor is made of: [`ChildSpec`]s (a factory, a restart kind, spawn options) and a
//! [`SupervisorSpec`] (a strategy, a restart intensity, children), and how a child is spawned
//! supervised.

use super::{Restart, Strategy, Supervisor, SupervisorError};
use crate::runtime::cell::{self, EventSink, Orders, Supervised};
use crate::runtime::task::Control;
use crate::runtime::Shared;
use crate::{Actor, ActorId, ActorRef, Context, SpawnOptions};
use std::any::Any;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// How to start (and restart) one child: an id unique among its supervisor's children, a
/// factory that builds the child's state — called once per start, on the worker that runs it —
/// a [`Restart`] kind and spawn options.
///
/// ```
/// use loka::supervisor::{ChildSpec, Restart};
/// # struct Worker; impl loka::Actor for Worker { type Msg = (); fn handle(&mut self, _: &mut loka::Context<Self>, _: ()) {} }
/// let spec = ChildSpec::new("worker-1", || Worker).restart(Restart::Transient);
/// assert_eq!(spec.id(), "worker-1");
/// ```
pub struct ChildSpec<A: Actor> {
    id: Arc<str>,
    factory: Arc<dyn Fn() -> A + Send + Sync>,
    restart: Restart,
    options: SpawnOptions,
    /// The spec of a child that is itself a supervisor (checked with its parent's).
    nested: Option<Box<SupervisorSpec>>,
}

impl<A: Actor> ChildSpec<A> {
    /// A [`Permanent`](Restart::Permanent) child `id` whose state `factory` builds.
    pub fn new(id: impl Into<String>, factory: impl Fn() -> A + Send + Sync + 'static) -> Self {
        ChildSpec {
            id: Arc::from(id.into()),
            factory: Arc::new(factory),
            restart: Restart::Permanent,
            options: SpawnOptions::default(),
            nested: None,
        }
    }

    /// Sets the restart kind.
    pub fn restart(mut self, restart: Restart) -> Self {
        self.restart = restart;
        self
    }

    /// Sets the spawn options (mailbox bound, placement, execution policy…). The child's label
    /// ([`SpawnOptions::name`]) is its id unless the options name one.
    pub fn options(mut self, options: SpawnOptions) -> Self {
        self.options = options;
        self
    }

    /// The child's id.
    pub fn id(&self) -> &str {
        &self.id
    }
}

impl ChildSpec<Supervisor> {
    /// A child that is itself a supervisor, built from `spec` at each start: supervisors nest
    /// into trees. When it gives up, this child fails and its parent supervisor restarts it per
    /// its own strategy and intensity; the new instance starts its children afresh.
    pub fn supervisor(id: impl Into<String>, spec: SupervisorSpec) -> Self {
        let nested = Box::new(spec.clone());
        let mut child = ChildSpec::new(id, move || Supervisor::new(spec.clone()));
        child.nested = Some(nested);
        child
    }
}

impl<A: Actor> Clone for ChildSpec<A> {
    fn clone(&self) -> Self {
        ChildSpec {
            id: Arc::clone(&self.id),
            factory: Arc::clone(&self.factory),
            restart: self.restart,
            options: self.options.clone(),
            nested: self.nested.clone(),
        }
    }
}

impl<A: Actor> fmt::Debug for ChildSpec<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChildSpec")
            .field("id", &self.id)
            .field("actor_type", &std::any::type_name::<A>())
            .field("restart", &self.restart)
            .finish_non_exhaustive()
    }
}

/// A running child, as its supervisor holds it.
pub(super) struct Live {
    pub(super) actor: ActorId,
    /// Queues the `Start` envelope that carries an order.
    pub(super) control: Arc<dyn Control>,
    pub(super) orders: Arc<Orders>,
    /// The child's `ActorRef<A::Msg>`: it keeps the child referenced while supervised.
    pub(super) actor_ref: Box<dyn Any + Send>,
}

/// A child spec whatever its actor type.
pub(crate) trait AnyChild: Send + Sync {
    fn id(&self) -> &Arc<str>;
    fn restart(&self) -> Restart;
    fn actor_type(&self) -> &'static str;
    fn message_type(&self) -> &'static str;
    fn is_supervisor(&self) -> bool;
    /// Checks the spawn options against the system's machine and the actor type's
    /// [`Actor::requires`] against what the system has, and a nested supervisor's children too.
    fn check(&self, shared: &Shared) -> Result<(), SupervisorError>;
    /// Spawns the child under the running supervisor `ctx`, reporting to `sink`.
    fn spawn(
        &self,
        ctx: &mut Context<Supervisor>,
        sink: &EventSink,
    ) -> Result<Live, SupervisorError>;
}

impl<A: Actor> ChildSpec<A> {
    /// The spawn options the child gets: its id is its label unless the options name one.
    fn spawn_options(&self) -> SpawnOptions {
        let mut options = self.options.clone();
        options.name.get_or_insert_with(|| self.id.to_string());
        options
    }
}

impl<A: Actor> AnyChild for ChildSpec<A> {
    fn id(&self) -> &Arc<str> {
        &self.id
    }

    fn restart(&self) -> Restart {
        self.restart
    }

    fn actor_type(&self) -> &'static str {
        std::any::type_name::<A>()
    }

    fn message_type(&self) -> &'static str {
        std::any::type_name::<A::Msg>()
    }

    fn is_supervisor(&self) -> bool {
        self.nested.is_some()
    }

    fn check(&self, shared: &Shared) -> Result<(), SupervisorError> {
        if self.id.is_empty() {
            return Err(SupervisorError::EmptyChildId);
        }
        crate::actor::check_spawn::<A>(&self.options, shared).map_err(|error| {
            SupervisorError::Spawn {
                id: self.id.to_string(),
                error,
            }
        })?;
        match &self.nested {
            Some(spec) => spec.check(shared),
            None => Ok(()),
        }
    }

    fn spawn(
        &self,
        ctx: &mut Context<Supervisor>,
        sink: &EventSink,
    ) -> Result<Live, SupervisorError> {
        let inner = ctx.inner();
        self.check(&inner.runtime().shared)?;
        let orders = Arc::new(Orders::default());
        let slot = Supervised::new(
            Arc::clone(&self.factory),
            self.restart,
            Arc::clone(&orders),
            Arc::clone(sink),
        );
        // The supervisor hears of its children through `sink`: the failure sink every child
        // has says it was told, so nothing is logged twice.
        let parent: cell::Parent = (inner.cell().id(), cell::FailureSink::Supervisor);
        let spawned = cell::spawn_supervised(
            inner.runtime(),
            slot,
            self.spawn_options(),
            parent,
            inner.exec(),
        );
        match spawned {
            Ok(cell) => {
                let control: Arc<dyn Control> = cell.clone();
                Ok(Live {
                    actor: cell.id(),
                    control,
                    orders,
                    actor_ref: Box::new(ActorRef::<A::Msg>::from_cell(cell)),
                })
            }
            Err(stopped) => {
                drop(ActorRef::<A::Msg>::from_cell(stopped));
                Err(SupervisorError::ShutDown)
            }
        }
    }
}

/// A supervisor's make-up: its [`Strategy`], its restart intensity and its children, started in
/// the order they were added (and stopped in the reverse order).
///
/// The default intensity is 3 restarts within 5 seconds (Elixir's): one restart more within the
/// period and the supervisor gives up ([`StopReason::Escalated`](crate::StopReason::Escalated)).
#[derive(Clone)]
pub struct SupervisorSpec {
    pub(super) strategy: Strategy,
    pub(super) max_restarts: u32,
    pub(super) within: Duration,
    pub(super) children: Vec<Arc<dyn AnyChild>>,
}

impl SupervisorSpec {
    /// A supervisor with `strategy`, the default intensity and no child yet.
    pub fn new(strategy: Strategy) -> Self {
        SupervisorSpec {
            strategy,
            max_restarts: 3,
            within: Duration::from_secs(5),
            children: Vec::new(),
        }
    }

    /// The restart intensity: at most `n` restarts within any period of `within`; one more and
    /// the supervisor terminates its children and gives up. `n = 0` gives up at the first
    /// failure that wants a restart. A zero `within` is refused
    /// ([`SupervisorError::ZeroPeriod`]). Time is the system's clock
    /// ([`Context::now`](crate::Context::now): virtual under the simulation engine).
    pub fn max_restarts(mut self, n: u32, within: Duration) -> Result<Self, SupervisorError> {
        if within.is_zero() {
            return Err(SupervisorError::ZeroPeriod { max_restarts: n });
        }
        self.max_restarts = n;
        self.within = within;
        Ok(self)
    }

    /// Adds a child, started after those added before. Refused if its id is empty or already
    /// used ([`SupervisorError::EmptyChildId`], [`SupervisorError::DuplicateChild`]).
    pub fn child<A: Actor>(mut self, child: ChildSpec<A>) -> Result<Self, SupervisorError> {
        self.add(Arc::new(child))?;
        Ok(self)
    }

    /// Adds a pool of `n` identical children `"{prefix}-0"` … `"{prefix}-{n-1}"`, each built by
    /// `factory`, with restart kind `restart`: N workers behind one supervisor. Refused for
    /// `n = 0` ([`SupervisorError::EmptyPool`]) or an id already used (then none is added).
    pub fn pool<A: Actor>(
        mut self,
        prefix: &str,
        n: usize,
        restart: Restart,
        factory: impl Fn() -> A + Send + Sync + 'static,
    ) -> Result<Self, SupervisorError> {
        if n == 0 {
            return Err(SupervisorError::EmptyPool {
                prefix: prefix.to_owned(),
            });
        }
        let factory: Arc<dyn Fn() -> A + Send + Sync> = Arc::new(factory);
        let before = self.children.len();
        for i in 0..n {
            let factory = Arc::clone(&factory);
            let child = ChildSpec::new(format!("{prefix}-{i}"), move || factory()).restart(restart);
            if let Err(e) = self.add(Arc::new(child)) {
                self.children.truncate(before);
                return Err(e);
            }
        }
        Ok(self)
    }

    fn add(&mut self, child: Arc<dyn AnyChild>) -> Result<(), SupervisorError> {
        let id = child.id();
        if id.is_empty() {
            return Err(SupervisorError::EmptyChildId);
        }
        if self.children.iter().any(|c| c.id() == id) {
            return Err(SupervisorError::DuplicateChild { id: id.to_string() });
        }
        self.children.push(child);
        Ok(())
    }

    /// Checks every child's spawn options and actor type's [`Actor::requires`] (nested
    /// supervisors' included) against the system.
    pub(crate) fn check(&self, shared: &Shared) -> Result<(), SupervisorError> {
        self.children.iter().try_for_each(|c| c.check(shared))
    }

    /// The strategy.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// The restart intensity: (restarts allowed, within).
    pub fn intensity(&self) -> (u32, Duration) {
        (self.max_restarts, self.within)
    }

    /// The children's ids, in start order.
    pub fn child_ids(&self) -> Vec<&str> {
        self.children.iter().map(|c| &**c.id()).collect()
    }
}

impl fmt::Debug for SupervisorSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SupervisorSpec")
            .field("strategy", &self.strategy)
            .field("max_restarts", &self.max_restarts)
            .field("within", &self.within)
            .field("children", &self.child_ids())
            .finish()
    }
}
