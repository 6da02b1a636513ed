//! Supervision, the cell's side (the supervisor itself is `crate::supervisor`; the user guide is
//! docs/supervision.md): a supervised child is restarted **in place** — same cell, mailbox and
//! [`ActorId`], fresh state from its factory — so every `ActorRef` to it stays valid.
//!
//! * **Out of line.** What a supervised child keeps (its factory, restart kind, the supervisor's
//!   orders, the stash) lives in the cell's extras (`extras.rs`), type-erased, and is read only on
//!   the failure and stop paths, on a `Start` envelope and while the child is suspended. An actor
//!   that is not supervised pays nothing per message; its stop pays one test of the extras
//!   pointer it already reads (`terminate` takes the extras anyway).
//! * **Suspended.** When a supervised child stops or fails and its restart kind wants it back,
//!   it does not terminate: its `stopped` hook runs on the old state, the state is dropped
//!   (`Life::Suspended`), its own timers and piped futures go, and its supervisor hears of it
//!   ([`ChildEvent::Exited`]). The mailbox stays open: envelopes that arrive meanwhile are
//!   *stashed*, in order, in the slot. The envelope whose handler panicked is not among them: it
//!   is dropped and counted (`lost`).
//! * **Orders.** The supervisor decides (restart, with its strategy and intensity; or terminate)
//!   and writes its order in the child's [`Orders`], then queues a `Start` envelope, the one
//!   envelope no user sends: the child obeys when it reaches it. A running sibling (one-for-all,
//!   rest-for-one) is thus suspended at that point of its mailbox, like a stop signal; a suspended
//!   child at once, since it only stashes. Restarting builds the new state, runs `started`,
//!   then hands the stash to the new instance, in order, before anything newer.
//! * **The supervisor hears** through an [`EventSink`]: a closure run in the supervisor's
//!   activation, through its mailbox. Acknowledgements carry the order's sequence number, so the
//!   supervisor can restart children one at a time, in order.
//!
//! This file: the slot, the events, stopping or suspending, retiring and reviving an instance.
//! `orders.rs`: the suspended child's activations, the stash, obeying an order, the replay.

mod orders;

use super::bound::Bound;
use super::failure::{panic_message, stopped_panicked};
use super::{ActorCell, Behavior, CellBase, CellContext, Envelope, Inner, Life, Stopping};
use super::{Continuation, Leftovers};
use crate::runtime::exec::Exec;
use crate::runtime::lifecycle::DRAINING;
use crate::runtime::restart::Restart;
use crate::runtime::stop_reason::StopReason;
use crate::runtime::ActorFailure;
use crate::runtime::ActorId;
use crate::runtime::RunOutcome;
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Weak};

/// What a supervisor orders a child to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Command {
    /// Run `stopped` on the current state, drop it, and wait (stashing) for the next order.
    Suspend,
    /// Build a fresh state and run `started`; a running child is suspended first.
    Restart,
    /// Stop for good (reason [`StopReason::Stopped`]); stashed messages become dead letters.
    Terminate,
}

/// A child's pending order, written by its supervisor and taken by the child when it reaches the
/// `Start` envelope queued with it. A later order replaces one not yet taken, except that nothing
/// replaces `Terminate`. Touched on the failure path only.
#[derive(Default)]
pub(crate) struct Orders(parking_lot::Mutex<Option<(Command, u64)>>);

impl Orders {
    /// Records `command` with its sequence number.
    pub(crate) fn give(&self, command: Command, seq: u64) {
        let mut pending = self.0.lock();
        if !matches!(*pending, Some((Command::Terminate, _))) || command == Command::Terminate {
            *pending = Some((command, seq));
        }
    }

    fn take(&self) -> Option<(Command, u64)> {
        self.0.lock().take()
    }
}

/// What a supervised child tells its supervisor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ChildEvent {
    /// It stopped or failed by itself and is suspended, waiting for an order. `lost`: envelopes
    /// dropped (1 when a handler or continuation panicked: the one it was handling). `ack`: set
    /// when a restart it was ordered failed (its factory or `started` panicked).
    Exited {
        reason: StopReason,
        lost: u64,
        ack: Option<u64>,
    },
    /// It obeyed a [`Command::Suspend`].
    Suspended { ack: u64 },
    /// It obeyed a [`Command::Restart`]: a fresh instance runs.
    Restarted { ack: u64 },
    /// It terminated for good: ordered to, its restart kind did not want it back, the system is
    /// shutting down, or its supervisor is gone. `lost` as for `Exited`.
    Terminated { reason: StopReason, lost: u64 },
}

/// Where a child's events go: runs them in the supervisor's activation; `false` once the
/// supervisor has stopped.
pub(crate) type EventSink = Arc<dyn Fn(ActorId, ChildEvent) -> bool + Send + Sync>;

/// A supervised child's slot, in its extras (type-erased there).
pub(crate) struct Supervised<B: Behavior> {
    /// The supervision paths of the actor's type ([`Hooks`]).
    pub(in crate::runtime::cell) hooks: &'static Hooks<B>,
    factory: Arc<dyn Fn() -> B + Send + Sync>,
    restart: Restart,
    orders: Arc<Orders>,
    sink: EventSink,
    /// Envelopes that arrived while suspended, for the next instance.
    pub(super) stash: VecDeque<Envelope<B>>,
    /// Ordered to terminate (or the system is shutting down): the next stop is for good.
    terminating: bool,
    /// Envelopes dropped by the failure it terminates with.
    lost: u64,
}

impl<B: Behavior> Supervised<B> {
    pub(crate) fn new(
        factory: Arc<dyn Fn() -> B + Send + Sync>,
        restart: Restart,
        orders: Arc<Orders>,
        sink: EventSink,
    ) -> Self {
        Supervised {
            hooks: &Hooks::<B>::TABLE,
            factory,
            restart,
            orders,
            sink,
            stash: VecDeque::new(),
            terminating: false,
            lost: 0,
        }
    }
}

/// The supervision paths of a supervised actor type, reached through its slot: only an actor type
/// spawned under a supervisor (`Supervised::new`) instantiates them. The cell's code is
/// instantiated for every actor type a program spawns, and these paths, which most types never
/// take, were a tenth of it (docs/decisions/0072-one-cell-code-for-every-actor-type.md).
// The fields are the paths' own signatures: type aliases would only rename them.
#[allow(clippy::type_complexity)]
pub(crate) struct Hooks<B: Behavior> {
    pub(in crate::runtime::cell) adopt:
        fn(&ActorCell<B>, Box<Supervised<B>>) -> std::thread::Result<B>,
    activate_suspended: fn(&ActorCell<B>, &mut Inner<B>, &mut B::Ctx, &Exec) -> RunOutcome,
    receive_suspended: fn(&ActorCell<B>, &mut Inner<B>, &mut B::Ctx, Envelope<B>, &Exec),
    start_signal: fn(&ActorCell<B>, &mut Inner<B>, &mut B::Ctx, Option<&Bound>),
    stop_supervised:
        fn(&ActorCell<B>, &mut Inner<B>, &mut B::Ctx, Option<String>, usize, Option<&Exec>) -> bool,
    drain_stash: fn(&ActorCell<B>, &mut Supervised<B>, &mut Vec<Continuation<B>>) -> u64,
    told_terminated: fn(&ActorCell<B>, &Supervised<B>, &StopReason),
}

impl<B: Behavior> Hooks<B> {
    const TABLE: Hooks<B> = Hooks {
        adopt: ActorCell::<B>::adopt,
        activate_suspended: ActorCell::<B>::activate_suspended,
        receive_suspended: ActorCell::<B>::receive_suspended,
        start_signal: ActorCell::<B>::start_signal,
        stop_supervised: ActorCell::<B>::stop_supervised,
        drain_stash: ActorCell::<B>::drain_stash_of,
        told_terminated: ActorCell::<B>::told_terminated,
    };
}

/// A sink that runs `on` with the supervisor's state for each event, as a closure queued in its
/// mailbox (so in order with its messages, never concurrently with its handler).
pub(crate) fn event_sink<S: Behavior>(
    supervisor: &Arc<ActorCell<S>>,
    on: fn(&mut S, &mut S::Ctx, ActorId, ChildEvent),
) -> EventSink {
    let supervisor: Weak<ActorCell<S>> = Arc::downgrade(supervisor);
    Arc::new(move |child, event| match supervisor.upgrade() {
        Some(supervisor) => {
            supervisor.call_held(Box::new(move |state, ctx| on(state, ctx, child, event)))
        }
        None => false,
    })
}

impl<B: Behavior> ActorCell<B> {
    /// A supervised child's first activation: puts its slot in the extras, then builds its
    /// first state.
    #[cold]
    #[inline(never)]
    fn adopt(&self, slot: Box<Supervised<B>>) -> std::thread::Result<B> {
        let factory = Arc::clone(&slot.factory);
        // SAFETY: the first activation holds the schedule; no user code runs while borrowed.
        unsafe { self.extras() }.supervised = Some(slot);
        catch_unwind(AssertUnwindSafe(|| factory()))
    }

    /// The supervised slot, if this actor is supervised.
    ///
    /// # Safety
    /// As for [`ActorCell::extras`].
    #[allow(clippy::mut_from_ref)]
    unsafe fn supervised(&self) -> Option<&mut Supervised<B>> {
        // SAFETY: forwarded contract.
        let extras = unsafe { self.extras_if_any() }?;
        extras.supervised.as_mut()?.downcast_mut()
    }

    /// The actor terminates (`terminate`, with what it took out of its extras): a supervised
    /// child's stash is dropped unhandled. Returns the user messages in it (dead letters); its
    /// continuations go to `calls`, to be dropped once the actor is unregistered.
    pub(in crate::runtime::cell) fn drain_stash(
        &self,
        leftovers: &mut Leftovers,
        calls: &mut Vec<Continuation<B>>,
    ) -> u64 {
        let slot = leftovers.supervised.as_mut();
        match slot.and_then(|slot| slot.downcast_mut::<Supervised<B>>()) {
            Some(slot) => (slot.hooks.drain_stash)(self, slot, calls),
            None => 0,
        }
    }

    #[cold]
    #[inline(never)]
    fn drain_stash_of(&self, slot: &mut Supervised<B>, calls: &mut Vec<Continuation<B>>) -> u64 {
        let mut dropped = 0;
        for envelope in std::mem::take(&mut slot.stash) {
            match envelope {
                Envelope::Msg(_) => {
                    if let Some(bound) = &self.bound {
                        bound.take();
                    }
                    dropped += 1;
                }
                Envelope::Call(call) => calls.push(call),
                _ => {}
            }
        }
        dropped
    }

    /// A supervised child terminated for good (once it is unregistered): its supervisor hears
    /// why.
    pub(in crate::runtime::cell) fn tell_terminated(
        &self,
        slot: Box<dyn std::any::Any + Send>,
        reason: &StopReason,
    ) {
        if let Ok(slot) = slot.downcast::<Supervised<B>>() {
            (slot.hooks.told_terminated)(self, &slot, reason);
        }
    }

    #[cold]
    #[inline(never)]
    fn told_terminated(&self, slot: &Supervised<B>, reason: &StopReason) {
        let (reason, lost) = (reason.clone(), slot.lost);
        (slot.sink)(self.id(), ChildEvent::Terminated { reason, lost });
    }

    /// The hooks of a supervised child (`None` for any other actor).
    ///
    /// # Safety
    /// As for [`ActorCell::extras`].
    #[inline]
    unsafe fn hooks(&self) -> Option<&'static Hooks<B>> {
        // SAFETY: forwarded contract; the borrow ends here.
        unsafe { self.supervised() }.map(|slot| slot.hooks)
    }

    /// An activation of a suspended child ([`activate_suspended`](Self::activate_suspended),
    /// through its hooks).
    #[cold]
    #[inline(never)]
    pub(in crate::runtime::cell) fn suspended_activation(
        &self,
        inner: &mut Inner<B>,
        ctx: &mut B::Ctx,
        exec: &Exec,
    ) -> RunOutcome {
        // SAFETY: the activation holds the schedule.
        let hooks = unsafe { self.hooks() }.expect("only a supervised child is suspended");
        (hooks.activate_suspended)(self, inner, ctx, exec)
    }

    /// A letter for a suspended child ([`receive_suspended`](Self::receive_suspended), through
    /// its hooks).
    #[cold]
    #[inline(never)]
    pub(in crate::runtime::cell) fn suspended_letter(
        &self,
        inner: &mut Inner<B>,
        ctx: &mut B::Ctx,
        envelope: Envelope<B>,
        exec: &Exec,
    ) {
        // SAFETY: the letter's delivery holds the schedule.
        let hooks = unsafe { self.hooks() }.expect("only a supervised child is suspended");
        (hooks.receive_suspended)(self, inner, ctx, envelope, exec)
    }

    /// The `Start` envelope reached a started actor with extras: a supervisor's order, if it is
    /// a supervised child and one is pending ([`start_signal`](Self::start_signal)).
    #[cold]
    #[inline(never)]
    pub(in crate::runtime::cell) fn supervisor_order(
        &self,
        inner: &mut Inner<B>,
        ctx: &mut B::Ctx,
        bound: Option<&Bound>,
    ) {
        // SAFETY: the activation holds the schedule.
        if let Some(hooks) = unsafe { self.hooks() } {
            (hooks.start_signal)(self, inner, ctx, bound);
        }
    }

    /// [`stop_supervised`](Self::stop_supervised), through the hooks.
    #[cold]
    #[inline(never)]
    fn supervised_stop(
        &self,
        inner: &mut Inner<B>,
        ctx: &mut B::Ctx,
        failure: Option<String>,
        taken: usize,
        exec: Option<&Exec>,
    ) -> bool {
        // SAFETY: the caller holds the schedule.
        let hooks = unsafe { self.hooks() }.expect("the slot is of the actor's type");
        (hooks.stop_supervised)(self, inner, ctx, failure, taken, exec)
    }

    /// Ends an activation (or a letter) that stops the actor: terminates it, or suspends a
    /// supervised child whose restart kind wants it back. `failure`: a panic's message; `taken`:
    /// envelopes taken out of the mailbox by this run (a panic after one dropped the last).
    /// Returns whether the actor terminated. Inlined: an actor that is not supervised pays one
    /// test before `terminate`, as if called directly.
    #[inline(always)]
    pub(super) fn stop_or_suspend(
        &self,
        inner: &mut Inner<B>,
        ctx: &mut B::Ctx,
        failure: Option<String>,
        taken: usize,
        exec: Option<&crate::runtime::exec::Exec>,
    ) -> bool {
        // SAFETY: we hold the schedule. One test of a pointer `terminate` reads anyway.
        if unsafe { self.extras_if_any() }.is_some_and(|e| e.supervised.is_some()) {
            return self.supervised_stop(inner, ctx, failure, taken, exec);
        }
        let reason = B::inner(ctx).stop_reason(failure);
        self.terminate(inner, reason, exec);
        true
    }

    /// [`stop_or_suspend`](Self::stop_or_suspend) for a supervised child.
    #[cold]
    #[inline(never)]
    fn stop_supervised(
        &self,
        inner: &mut Inner<B>,
        ctx: &mut B::Ctx,
        failure: Option<String>,
        taken: usize,
        exec: Option<&crate::runtime::exec::Exec>,
    ) -> bool {
        let lost = u64::from(failure.is_some() && taken > 0);
        if failure.is_none() && B::inner(ctx).stopping == Stopping::Suspended {
            // Suspended by an order during the activation: nothing stops.
            B::inner(ctx).stopping = Stopping::No;
            return false;
        }
        let reason = B::inner(ctx).stop_reason(failure);
        match self.suspend(inner, ctx, reason, lost) {
            Ok(()) => false,
            Err(reason) => {
                // SAFETY: as above; told to the supervisor with the termination.
                if let Some(slot) = unsafe { self.supervised() } {
                    slot.lost += lost;
                }
                self.terminate(inner, reason, exec);
                true
            }
        }
    }

    /// A supervised child stops with `reason`: suspends it and tells its supervisor, unless it
    /// must terminate (restart kind, an order, the shutdown, no supervisor): then `Err` with the
    /// reason to terminate with.
    #[cold]
    #[inline(never)]
    fn suspend(
        &self,
        inner: &mut Inner<B>,
        ctx: &mut B::Ctx,
        reason: StopReason,
        lost: u64,
    ) -> Result<(), StopReason> {
        // SAFETY: we hold the schedule; the borrow ends before user code runs.
        let Some(slot) = (unsafe { self.supervised() }) else {
            return Err(reason);
        };
        let wanted = match slot.restart {
            Restart::Permanent => true,
            Restart::Transient => reason.is_failure(),
            Restart::Temporary => false,
        };
        if !wanted || slot.terminating || self.shutting_down() {
            return Err(reason);
        }
        if matches!(inner.life, Life::Suspended) {
            // A stop asked while suspended (not for good): nothing to stop.
            return Ok(());
        }
        let sink = Arc::clone(&slot.sink);
        let reason = match self.retire(inner, ctx) {
            None => reason,
            Some(panic) => StopReason::Panicked(stopped_panicked(
                reason.panic_message().map(str::to_owned),
                panic,
            )),
        };
        let event = ChildEvent::Exited {
            reason: reason.clone(),
            lost,
            ack: None,
        };
        if !sink(self.id(), event) {
            // The supervisor is gone: nobody will restart it (its state is already dropped).
            return Err(reason);
        }
        self.note_failure(&reason, std::any::type_name::<B>());
        Ok(())
    }

    /// The old instance goes: its `stopped` hook runs (if it started), its state is dropped, its
    /// timers are cancelled and its piped futures dropped. Returns the hook's panic, if any.
    fn retire(&self, inner: &mut Inner<B>, ctx: &mut B::Ctx) -> Option<String> {
        let stopping = B::inner(ctx).stopping;
        let mut panic = None;
        if let Life::Ready(actor) = &mut inner.life {
            if self.is_started() {
                panic = catch_unwind(AssertUnwindSafe(|| actor.stopped(ctx)))
                    .err()
                    .map(panic_message);
            }
        }
        let old = std::mem::replace(&mut inner.life, Life::Suspended);
        // Not started: the next activation (or letter) takes the suspended path.
        self.set_started(false);
        // Dropping user state is user code.
        if let Err(dropped) = catch_unwind(AssertUnwindSafe(|| drop(old))) {
            panic.get_or_insert_with(|| panic_message(dropped));
        }
        self.drop_instance_extras();
        // A stop asked by the `stopped` hook is the old instance's.
        B::inner(ctx).stopping = stopping;
        panic
    }

    /// Builds a fresh instance from the factory and runs its `started` hook. On a panic the child
    /// stays suspended (a `started` that panicked is followed by the instance's `stopped`).
    fn revive(&self, inner: &mut Inner<B>, ctx: &mut B::Ctx) -> Result<(), StopReason> {
        // SAFETY: we hold the schedule; the borrow ends before user code runs.
        let factory = match unsafe { self.supervised() } {
            Some(slot) => Arc::clone(&slot.factory),
            None => return Err(StopReason::Stopped),
        };
        let actor = catch_unwind(AssertUnwindSafe(|| factory()))
            .map_err(|p| StopReason::Panicked(panic_message(p)))?;
        inner.life = Life::Ready(actor);
        self.set_started(true);
        let Life::Ready(actor) = &mut inner.life else {
            unreachable!("built above")
        };
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| actor.started(ctx))) {
            let message = panic_message(panic);
            let message = match self.retire(inner, ctx) {
                None => message,
                Some(then) => stopped_panicked(Some(message), then),
            };
            return Err(StopReason::Panicked(message));
        }
        self.runtime.shared.counters.system.restarts.add_shared(1);
        Ok(())
    }
}

impl<B: Behavior> CellContext<B> {
    /// Stops the actor as a failure, [`StopReason::Escalated`] with `message`, once the current
    /// handler returns: a supervisor gives up.
    pub(crate) fn escalate(&mut self, message: String) {
        // SAFETY: a context exists only in its actor's activation; no user code runs while
        // borrowed.
        unsafe { self.cell().extras() }.escalation = Some(message);
        self.stopping = Stopping::Escalated;
    }
}

impl CellBase {
    /// Whether the system is shutting down (gracefully or not): no restart any more.
    pub(crate) fn shutting_down(&self) -> bool {
        self.runtime.shared.lifecycle.phase() >= DRAINING
    }

    /// A failure is recorded once, where it happens: a panic in `failures()` and
    /// `stats().panics`, a supervisor's escalation in `failures()` and `stats().escalations`.
    /// `None` (nothing recorded) for a stop that is not one of those. `actor_type`: the actor's
    /// type name, as `failures()` reports it.
    #[inline]
    pub(in crate::runtime::cell) fn note_failure(
        &self,
        reason: &StopReason,
        actor_type: &'static str,
    ) -> Option<ActorFailure> {
        match reason {
            StopReason::Panicked(_) | StopReason::Escalated { .. } => {
                self.record(reason, actor_type)
            }
            _ => None,
        }
    }

    #[cold]
    #[inline(never)]
    fn record(&self, reason: &StopReason, actor_type: &'static str) -> Option<ActorFailure> {
        let (message, panicked) = match reason {
            StopReason::Panicked(message) => (message, true),
            StopReason::Escalated { message } => (message, false),
            _ => return None,
        };
        let failure = ActorFailure {
            actor: self.id(),
            name: self.name().map(|n| n.to_string()),
            actor_type,
            message: message.clone(),
        };
        self.runtime
            .shared
            .record_failure(failure.clone(), panicked);
        Some(failure)
    }
}
