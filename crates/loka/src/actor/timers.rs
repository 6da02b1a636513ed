//! Time: delayed sends, delayed and periodic closures, asks with a timeout, the receive timeout
//! (docs/timers.md). What an actor that uses none of it pays: nothing on its sends, one null test
//! per message it handles.

use super::ask::{AskError, ReplyTo};
use super::{Actor, ActorRef, Context};
use crate::runtime::cell::{Hold, ReceiveTimeout};
use crate::runtime::timer::{Action, Fire, TimerId};
use crate::runtime::Runtime;
use crate::sync::AtomicBool;
use parking_lot::Mutex;
use std::fmt;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// A pending timer. [`cancel`](Self::cancel) stops it; dropping the handle does not (as with
/// Erlang's timer references and Akka's `Cancellable`). Cheap to clone.
#[derive(Clone)]
pub struct TimerHandle {
    /// The timer's name in the timer service (a one-shot's: its shard and wheel key, no
    /// allocation of its own).
    id: TimerId,
    /// The arming thread's runtime handle (a worker's own: its count stays in that worker's
    /// cache; a `Weak` of the shared state cost BenchErl's timer_wheel a contended
    /// compare-and-swap per timer on one line all workers share).
    runtime: Arc<Runtime>,
}

impl TimerHandle {
    fn new(id: TimerId, runtime: &Arc<Runtime>) -> Self {
        TimerHandle {
            id,
            runtime: Arc::clone(runtime),
        }
    }

    /// Cancels the timer: `true` if this call stopped it before it fired (a periodic timer:
    /// before its next firing), `false` if it had already fired (one-shot), been cancelled, or
    /// its system has shut down. A cancelled timer never fires and holds no memory.
    pub fn cancel(&self) -> bool {
        self.runtime.shared.timers.cancel(&self.id)
    }

    /// Whether the timer will still fire (a periodic one: again).
    pub fn is_pending(&self) -> bool {
        self.runtime.shared.timers.is_pending(&self.id)
    }
}

impl fmt::Debug for TimerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TimerHandle")
            .field("pending", &self.is_pending())
            .finish()
    }
}

/// A timer that cannot be armed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TimerError {
    /// A periodic timer (or a receive timeout) needs a period above zero.
    #[error("a period of {0:?} is not allowed: periodic timers and receive timeouts need a period above zero (periods under one tick, 1 ms, are rounded up to it)")]
    ZeroPeriod(Duration),
}

fn check_period(period: Duration) -> Result<(), TimerError> {
    if period.is_zero() {
        Err(TimerError::ZeroPeriod(period))
    } else {
        Ok(())
    }
}

impl<M: Send + 'static> ActorRef<M> {
    /// Sends `msg` once `delay` has passed (never earlier). Until then the timer keeps the actor
    /// referenced. If the actor has stopped by then, the message is a dead letter.
    pub fn send_after(&self, delay: Duration, msg: M) -> TimerHandle {
        let runtime = self.cell.system_runtime();
        let action = deliver_later(self, msg);
        let id = runtime.arm_timer(delay, None, action, None);
        TimerHandle::new(id, runtime)
    }
}

/// A delayed send's action: `msg` to `target`, a dead letter (of the target's system) if it has
/// stopped by then. Keeps `target` referenced until it runs; nothing else (the target's system
/// is reached through it), so the action stays small enough to live in its wheel entry.
fn deliver_later<M: Send + 'static>(target: &ActorRef<M>, msg: M) -> Action {
    let target = target.clone();
    Action::once(move || {
        if let Err(e) = target.send(msg) {
            target.cell.system_runtime().shared.note_dead_letters(
                e.actor,
                1,
                std::any::type_name::<M>(),
                true,
            );
        }
    })
}

/// A periodic timer's action: queue `call` into the actor each tick, unless the previous tick's
/// call is still queued (a slow actor skips ticks instead of piling them up); stops once the
/// actor has stopped.
fn tick_into<A: Actor>(
    me: Hold<A>,
    call: impl Fn(&mut A, &mut Context<A>) + Send + Sync + 'static,
) -> Action {
    let call = Arc::new(call);
    let queued = Arc::new(AtomicBool::new(false));
    Action::Every(Box::new(move || {
        if me.is_stopped() {
            return false;
        }
        // Relaxed: the flag only thins out ticks; the mailbox orders the calls themselves.
        if queued.swap(true, Relaxed) {
            return true;
        }
        let (call, queued) = (Arc::clone(&call), Arc::clone(&queued));
        me.call(move |actor, ctx| {
            queued.store(false, Relaxed);
            call(actor, ctx)
        })
    }))
}

impl<A: Actor> Context<A> {
    /// The time since the system started on the clock its timers run on: wall-clock time, or
    /// the simulation's virtual time under `engine = "sim"` (so code that measures with it runs
    /// unchanged in the simulation).
    pub fn now(&self) -> Duration {
        Duration::from_nanos(self.inner().runtime().timer_now_ns())
    }

    /// Arms a timer owned by this actor: cancelled when it stops.
    fn arm_own(
        &mut self,
        delay: Duration,
        period: Option<Duration>,
        action: Action,
    ) -> TimerHandle {
        let id = self.arm_own_id(delay, period, action);
        TimerHandle {
            id,
            runtime: Arc::clone(self.inner().runtime()),
        }
    }

    /// [`arm_own`](Self::arm_own) without the [`TimerHandle`] (and its reference count of the
    /// runtime), for the runtime's own timers.
    fn arm_own_id(&mut self, delay: Duration, period: Option<Duration>, action: Action) -> TimerId {
        let inner = self.inner_mut();
        let id = inner
            .runtime()
            .arm_timer(delay, period, action, inner.exec());
        if inner.own_timers().add(id.clone()) {
            let runtime = Arc::clone(inner.runtime());
            inner.own_timers().prune(&runtime.shared.timers);
        }
        id
    }

    /// Arms a timer owned by this actor that runs `f` (on the timer's thread) once `delay` has
    /// passed: an async actor's `sleep` (`async_actor/context.rs`). Cancelled if the actor stops.
    pub(crate) fn arm_once(
        &mut self,
        delay: Duration,
        f: impl FnOnce() + Send + 'static,
    ) -> TimerHandle {
        self.arm_own(delay, None, Action::once(f))
    }

    /// This actor, held by a pending timer (a strong reference counted as a handle).
    fn hold(&self) -> Hold<A> {
        self.inner().hold()
    }

    /// Sends `msg` to `target` once `delay` has passed (never earlier), like Erlang's
    /// `erlang:send_after`. The timer belongs to this actor: it is cancelled if this actor stops
    /// first. Until it fires it keeps `target` referenced.
    pub fn send_after<M: Send + 'static>(
        &mut self,
        target: &ActorRef<M>,
        delay: Duration,
        msg: M,
    ) -> TimerHandle {
        let action = deliver_later(target, msg);
        self.arm_own(delay, None, action)
    }

    /// Runs `f` with this actor's state once `delay` has passed, like a message (in order with
    /// the others, never concurrently with a handler). Cancelled if the actor stops first; until
    /// then the actor stays alive even with no reference left.
    pub fn run_after(
        &mut self,
        delay: Duration,
        f: impl FnOnce(&mut A, &mut Context<A>) + Send + 'static,
    ) -> TimerHandle {
        let me = self.hold();
        let action = Action::once(move || {
            me.call(f);
        });
        self.arm_own(delay, None, action)
    }

    /// Runs `f` with this actor's state every `period` (first after one period), like a message,
    /// at a fixed rate: ticks do not drift, and ticks missed while the worker was busy are
    /// skipped, not run in a burst; a tick that finds the previous one still queued is skipped
    /// too. Runs until cancelled or the actor stops (it keeps the actor alive meanwhile).
    pub fn run_interval(
        &mut self,
        period: Duration,
        f: impl FnMut(&mut A, &mut Context<A>) + Send + 'static,
    ) -> Result<TimerHandle, TimerError> {
        check_period(period)?;
        let f = Mutex::new(f);
        // A tick already queued when the timer is cancelled does not run: once `cancel` returned
        // `true`, `f` never runs again.
        let this: Arc<OnceLock<TimerId>> = Arc::new(OnceLock::new());
        let ours = Arc::clone(&this);
        let action = tick_into(self.hold(), move |actor, ctx| {
            let timers = &ctx.inner().runtime().shared.timers;
            if this.get().is_none_or(|t| timers.is_pending(t)) {
                (f.lock())(actor, ctx)
            }
        });
        let handle = self.arm_own(period, Some(period), action);
        let _ = ours.set(handle.id.clone());
        Ok(handle)
    }

    /// [`ask`](Self::ask) with a time limit: `then` runs with the reply, or with
    /// `Err(AskError::Timeout(timeout))` if none came in time (a late reply is dropped), or with
    /// `Err(AskError::NoReply)` if the request was dropped. Once `then` is queued the asker is no
    /// longer referenced by the request, so asking a silent actor again and again does not grow
    /// memory.
    pub fn ask_timeout<M: Send + 'static, R: Send + 'static>(
        &mut self,
        target: &ActorRef<M>,
        make: impl FnOnce(ReplyTo<R>) -> M,
        timeout: Duration,
        then: impl FnOnce(&mut A, &mut Context<A>, Result<R, AskError>) + Send + 'static,
    ) {
        // Whoever takes the asker and `then` out of the slot first answers: the reply or the
        // timer. The loser finds it empty. The timer shares the slot (`Action::Shared`): arming
        // it allocates nothing more.
        let slot = Arc::new(Waiting {
            slot: Mutex::new(Some((self.hold(), then))),
            timeout,
            reply: std::marker::PhantomData,
        });
        let timer = self.arm_own_id(timeout, None, Action::Shared(slot.clone()));
        let runtime = Arc::clone(self.inner().runtime());
        let reply = ReplyTo::new(move |result| {
            let Some((me, then)) = slot.slot.lock().take() else {
                return; // timed out already
            };
            runtime.shared.timers.cancel(&timer);
            me.call(move |actor, ctx| then(actor, ctx, result));
        });
        // A rejected request drops its ReplyTo, which delivers NoReply to `then`.
        let _ = target.send(make(reply));
    }

    /// Calls [`Actor::timeout`] once `after` passes with no message handled, and again after
    /// each further `after` of silence, until [`clear_receive_timeout`](Self::clear_receive_timeout)
    /// (like Akka's receive timeout and gen_server's timeout). Never earlier than `after` after
    /// the later of: the last message's handling, the return of the previous `timeout`, this
    /// call; late by at most one tick of the timer clock (1 ms) plus the time the worker takes to
    /// get to it (docs/timers.md). Closures run through the context (timers, asks) are not
    /// messages and do not reset it. A timeout too long to come (up to `Duration::MAX`) never
    /// fires. Replaces an earlier one.
    pub fn set_receive_timeout(&mut self, after: Duration) -> Result<(), TimerError> {
        check_period(after)?;
        self.clear_receive_timeout();
        let since = self.inner().runtime().timer_now_ns();
        let (check, generation) = self.arm_receive_check(after, after);
        self.inner_mut().own_timers().receive = Some(ReceiveTimeout {
            check,
            generation,
            after,
            after_ns: u64::try_from(after.as_nanos()).unwrap_or(u64::MAX),
            since,
        });
        Ok(())
    }

    /// Arms the receive timeout's check: first after `delay`, then every `after` (a fallback:
    /// each check re-arms it for the deadline it finds). Returns the timer and its generation.
    fn arm_receive_check(&mut self, delay: Duration, after: Duration) -> (TimerId, u64) {
        let inner = self.inner_mut();
        let timers = inner.own_timers();
        timers.checks += 1;
        let generation = timers.checks;
        let action = tick_into(self.hold(), move |actor, ctx| {
            receive_check::<A>(generation, actor, ctx)
        });
        let inner = self.inner_mut();
        let id = inner
            .runtime()
            .arm_timer(delay, Some(after), action, inner.exec());
        (id, generation)
    }

    /// Turns the receive timeout off (nothing if none is set).
    pub fn clear_receive_timeout(&mut self) {
        let inner = self.inner_mut();
        if let Some(receive) = inner.own_timers().receive.take() {
            inner.runtime().shared.timers.cancel(&receive.check);
        }
    }

    /// The receive timeout set, if any.
    pub fn receive_timeout(&mut self) -> Option<Duration> {
        self.inner_mut()
            .own_timers()
            .receive
            .as_ref()
            .map(|r| r.after)
    }
}

/// The receive timeout's check (generation `generation`), due when it was armed. A message
/// handled since moved the deadline: the check re-arms for the remainder instead of firing, so
/// no message ever re-arms a timer itself. When it fires, the next deadline counts from the
/// return of `Actor::timeout`.
fn receive_check<A: Actor>(generation: u64, actor: &mut A, ctx: &mut Context<A>) {
    let now = ctx.inner().runtime().timer_now_ns();
    let Some(receive) = ctx.inner_mut().own_timers().receive.as_ref() else {
        return; // cleared meanwhile
    };
    if receive.generation != generation {
        return; // queued by a check replaced since
    }
    let due = receive.due();
    if now < due {
        let remainder = Duration::from_nanos(due - now);
        rearm_receive_check(ctx, remainder);
        return;
    }
    actor.timeout(ctx);
    let now = ctx.inner().runtime().timer_now_ns();
    match ctx.inner_mut().own_timers().receive.as_mut() {
        // The handler did not clear or replace it: the next one is due `after` from now. Re-armed
        // now, not left to the check's period, which started at the deadline and would come
        // early by however late this call came (one more check, one more call into the actor).
        Some(receive) if receive.generation == generation => {
            receive.since = now;
            let after = receive.after;
            rearm_receive_check(ctx, after);
        }
        _ => {}
    }
}

/// Replaces the receive timeout's check by one due after `delay`.
fn rearm_receive_check<A: Actor>(ctx: &mut Context<A>, delay: Duration) {
    let Some(receive) = ctx.inner_mut().own_timers().receive.as_ref() else {
        return;
    };
    let (old, after) = (receive.check.clone(), receive.after);
    ctx.inner().runtime().shared.timers.cancel(&old);
    let (check, generation) = ctx.arm_receive_check(delay, after);
    if let Some(receive) = ctx.inner_mut().own_timers().receive.as_mut() {
        receive.check = check;
        receive.generation = generation;
    }
}

/// An [`Context::ask_timeout`] waiting for its reply: the asker and its continuation `F`, taken
/// out by the reply or the timeout, whichever comes first. Its timer fires it.
struct Waiting<A: Actor, R, F> {
    /// The asker and `then`; `None` once answered.
    slot: Mutex<Option<(Hold<A>, F)>>,
    /// The time limit (what the timeout error names).
    timeout: Duration,
    /// The reply's type (`fn(R)`: the slot holds no `R`, so it is `Sync` whatever `R` is).
    reply: std::marker::PhantomData<fn(R)>,
}

impl<A, R, F> Fire for Waiting<A, R, F>
where
    A: Actor,
    R: Send + 'static,
    F: FnOnce(&mut A, &mut Context<A>, Result<R, AskError>) + Send + 'static,
{
    /// The timeout: answers `then` with `AskError::Timeout` unless the reply came first.
    fn fire(&self) {
        if let Some((me, then)) = self.slot.lock().take() {
            let timeout = self.timeout;
            me.call(move |actor, ctx| then(actor, ctx, Err(AskError::Timeout(timeout))));
        }
    }
}
