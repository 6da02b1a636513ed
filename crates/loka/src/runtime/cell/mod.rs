//! The actor cell: mailbox, state and lifecycle of one actor, and its activation loop.
//!
//! Ownership: a cell lives in an `Arc`. Actor references hold strong references; the runtime holds
//! one more, the *life reference*, from spawn until the actor terminates (see [`super::task`] for
//! why queued tasks are therefore alive).
//!
//! The cell knows actors only through [`Behavior`], which the actor layer implements for every
//! [`crate::Actor`]; it knows the engine only through its boundary (`runtime/boundary.rs`).

mod activation;
mod base;
mod bound;
mod deliver;
mod direct;
mod extras;
pub(crate) mod failure;
mod info;
mod observe;
mod pipes;
mod shutdown;
mod supervised;
mod timers;
mod watch;

pub(crate) use base::CellBase;
pub(crate) use failure::panic_message;
pub(crate) use pipes::{Piped, Pipes};
pub(crate) use supervised::{event_sink, ChildEvent, Command, EventSink, Orders, Supervised};
pub(crate) use timers::{Hold, ReceiveTimeout};
use watch::Exit;
pub(crate) use watch::{Notice, Stopping, Watchable};

pub(crate) use bound::{give_back_reserved, mark_runtime_thread, MAX_CAPACITY};
pub(crate) use deliver::Deliver;

use super::exec::Exec;
use super::handles::Handles;
use super::id::ActorId;
use super::task::{Header, Vtable};
use super::{ActorFailure, Runtime};
use crate::mailbox::{Mailbox, Pop, Push};
use crate::runtime::options::SpawnOptions;
use crate::runtime::stop_reason::StopReason;
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;
use std::sync::Arc;

/// What the runtime needs of an actor type: its message type, its hooks, and the context its
/// handlers receive. The actor layer implements it for every [`crate::Actor`]; `Ctx` is
/// [`crate::Context`], a wrapper around the runtime's [`CellContext`].
pub(crate) trait Behavior: Sized + Send + 'static {
    /// The message type.
    type Msg: Send + 'static;
    /// The context handlers receive.
    type Ctx;
    /// Wraps the runtime's context.
    fn context(inner: CellContext<Self>) -> Self::Ctx;
    /// The runtime's context inside.
    fn inner(ctx: &mut Self::Ctx) -> &mut CellContext<Self>;
    /// Handles one message.
    fn handle(&mut self, ctx: &mut Self::Ctx, msg: Self::Msg);
    /// The first activation, before any message.
    fn started(&mut self, ctx: &mut Self::Ctx);
    /// The actor stops.
    fn stopped(&mut self, ctx: &mut Self::Ctx);
    /// A child failed.
    fn child_failed(&mut self, ctx: &mut Self::Ctx, failure: ActorFailure);
    /// The type's declared characteristics (execution policies).
    fn characteristics() -> Option<crate::exec_policy::Characteristics>;
    /// The type's own execution policy, if it names one.
    fn exec_policy() -> Option<crate::exec_policy::ExecPolicy>;
}

/// The runtime's part of a handler's context: the cell, the worker running it, the stop request.
/// Exists only during an activation (or the termination) of its actor, on that thread.
pub(crate) struct CellContext<B: Behavior> {
    cell: NonNull<ActorCell<B>>,
    exec: Option<NonNull<Exec>>,
    /// Set by `stop` (and stop signals, links): the actor stops once the current handler returns.
    pub(crate) stopping: Stopping,
    /// Contexts are tied to the running worker thread.
    _not_send: PhantomData<*const ()>,
}

impl<B: Behavior> CellContext<B> {
    fn new(cell: &ActorCell<B>, exec: Option<&Exec>) -> Self {
        CellContext {
            cell: NonNull::from(cell),
            exec: exec.map(NonNull::from),
            stopping: Stopping::No,
            _not_send: PhantomData,
        }
    }

    /// The running actor's cell.
    #[inline]
    pub(crate) fn cell(&self) -> &ActorCell<B> {
        // SAFETY: a context only lives during an activation (or the termination) of its actor,
        // which keeps the actor alive through its life reference.
        unsafe { self.cell.as_ref() }
    }

    /// The worker running this activation (`None` while stopping at shutdown).
    #[inline]
    pub(crate) fn exec(&self) -> Option<&Exec> {
        // SAFETY: the worker's execution context outlives every activation it runs.
        self.exec.map(|e| unsafe { e.as_ref() })
    }

    /// A new strong reference to the running actor's cell.
    pub(crate) fn cell_arc(&self) -> Arc<ActorCell<B>> {
        let ptr = self.cell.as_ptr() as *const ActorCell<B>;
        // SAFETY: cells always live in an `Arc`, and this one is alive (see `cell`).
        unsafe {
            Arc::increment_strong_count(ptr);
            Arc::from_raw(ptr)
        }
    }

    /// The runtime handle a child spawned now should keep: the running worker's (a core-local
    /// count), else the actor's own.
    pub(crate) fn runtime(&self) -> &Arc<Runtime> {
        self.exec().map_or(&self.cell().runtime, Exec::runtime)
    }
}

/// A closure that runs like a message, with the actor's state and context.
pub(crate) type Continuation<B> = Box<dyn FnOnce(&mut B, &mut <B as Behavior>::Ctx) + Send>;

/// What travels through a mailbox.
pub(crate) enum Envelope<B: Behavior> {
    /// A user message.
    Msg(B::Msg),
    /// A closure run with the actor's state: ask continuations, child-failure notices.
    Call(Continuation<B>),
    /// The first activation of an eagerly started actor.
    Start,
    /// A stop signal (poison pill): queued messages before it are still handled.
    Stop,
    /// The last handle was dropped (see [`super::handles`]).
    Unreferenced,
}

/// How the actor's state comes to be.
pub(crate) enum Life<B: Behavior> {
    /// Built on the first activation, on the worker that runs it (deferred initialisation: its
    /// memory is first touched where it runs).
    Factory(Box<dyn FnOnce() -> B + Send>),
    /// A supervised child, built by its slot's factory on the first activation, which also
    /// puts the slot in the extras (`supervised/`).
    Supervised(Box<Supervised<B>>),
    /// Built.
    Ready(B),
    /// A supervised child between two instances: the old one's state is dropped, the next one
    /// waits for its supervisor's order (`supervised/`).
    Suspended,
    /// Stopped and dropped.
    Gone,
}

struct Inner<B: Behavior> {
    life: Life<B>,
}

/// Where a child's failure goes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailureSink {
    /// To the parent actor's `child_failed` hook. The parent is found by id in the live-actor
    /// registry when the failure happens, which is rare: a child holds no reference to its
    /// parent, so a spawn allocates nothing for it and touches no reference count of the
    /// parent's, a line every spawn and every stop on other workers wrote (
    /// docs/decisions/0028-spawn-stop-cost.md).
    Hook,
    /// The parent is a supervisor, which hears of its children through its own sink: the
    /// failure counts as told, so nothing is logged twice.
    Supervisor,
}

/// A child's parent: its id (for introspection and the children-first shutdown, which read it
/// through the live-actor registry's task) and where the child's failure goes.
pub(crate) type Parent = (ActorId, FailureSink);

/// One actor. `repr(C)` keeps the header first (it is the first field of [`CellBase`]), so a
/// header pointer is a cell pointer.
///
/// The fields written only at spawn (`bound`, `runtime`, `parent`, `sink`, `named`; `extras`,
/// `exit`, `registered` and `started` until the actor uses a feature, stops, is registered or
/// first runs) sit between the 64-byte header and the mailbox, whose leading gap keeps them off
/// the line senders write: a line no one writes after spawn, so every sender and the actor keep
/// it cached and the `bound` test of a send costs no miss. Every word here counts: an idle actor
/// is this cell's `malloc` chunk plus one word of the registry (docs/results/actor-footprint.md).
#[repr(C)]
pub(crate) struct ActorCell<B: Behavior> {
    /// Everything that does not depend on the actor's type (reached through `Deref`).
    base: CellBase,
    mailbox: Mailbox<Envelope<B>>,
    handles: Handles,
    /// Touched only by the activation holding the schedule.
    inner: std::cell::UnsafeCell<Inner<B>>,
}

impl<B: Behavior> std::ops::Deref for ActorCell<B> {
    type Target = CellBase;
    #[inline(always)]
    fn deref(&self) -> &CellBase {
        &self.base
    }
}

// SAFETY: `inner` is only accessed by the single activation holding the schedule (mailbox
// protocol), or at shutdown when no activation runs; everything else is `Sync`.
unsafe impl<B: Behavior> Sync for ActorCell<B> {}
// SAFETY: the actor state and messages are `Send`.
unsafe impl<B: Behavior> Send for ActorCell<B> {}

/// Creates, registers and (unless lazy) schedules a new actor. The returned cell counts as one
/// handle. `parent`: the spawning actor's id and the sink for this actor's failures. Once the
/// system has shut down the actor is refused: `Err` with the cell stopped (`shutdown.rs`).
pub(crate) fn spawn<B: Behavior>(
    runtime: &Arc<Runtime>,
    life: Life<B>,
    options: SpawnOptions,
    parent: Option<Parent>,
    from: Option<&Exec>,
) -> Result<Arc<ActorCell<B>>, Arc<ActorCell<B>>> {
    // A dedicated thread spawns like a plain thread: engines only ever see their own workers.
    let from = from.and_then(Exec::as_worker);
    let shared = &runtime.shared;
    let id = shared.next_actor_id(from);
    let (parent_id, sink) = parent.unzip();
    let cell = Arc::new(ActorCell {
        base: CellBase {
            header: Header::new(&ActorCell::<B>::VTABLE, id),
            plain_send: options.capacity.is_none() && !runtime.direct(),
            bound: options.capacity.map(|capacity| {
                bound::SharedBound::new(bound::Bound::new(capacity, options.overflow))
            }),
            runtime: Arc::clone(runtime),
            parent: parent_id.map_or(0, ActorId::as_u64),
            sink,
            started: crate::sync::AtomicBool::new(false),
            named: options.name.is_some(),
            extras: std::cell::UnsafeCell::new(None),
            exit: Exit::new(),
            registered: crate::sync::AtomicBool::new(false),
        },
        // Under the message-centric engine messages travel in the engine's queues as letters; the
        // mailbox then only says whether the actor has stopped.
        mailbox: if runtime.direct() {
            Mailbox::new_direct()
        } else {
            Mailbox::new()
        },
        handles: Handles::new(1),
        inner: std::cell::UnsafeCell::new(Inner { life }),
    });
    // SAFETY: the cell was just made; no other thread can see it yet, and it stays in its `Arc`
    // allocation until dropped there.
    let registered = unsafe {
        cell.mailbox.settle();
        cell.base.register_spawned(
            &options,
            from,
            // Constants of the type: folded here, in the type's own spawn.
            runtime.exec_policy_of(
                options.exec.or_else(B::exec_policy),
                B::characteristics().as_ref(),
            ),
        )
    };
    if !registered {
        cell.stillborn();
        return Err(cell);
    }
    // The life reference, released by `terminate`.
    let _ = Arc::into_raw(Arc::clone(&cell));
    if options.hub {
        shared.note_hub(from);
    }
    if !options.lazy {
        // A fresh mailbox is idle, so this push asks us to schedule (or, direct, to post). Only a
        // shutdown that began since the registration can have closed it (and terminated the
        // actor): then there is nothing to start.
        match cell.mailbox.push(Envelope::Start) {
            Push::Wake => runtime.schedule_spawned(cell.task(), &options, from),
            Push::Direct(start) => drop(cell.post(start)),
            Push::Rejected(_) => {}
            Push::Queued => unreachable!("a fresh mailbox is idle"),
        }
    }
    Ok(cell)
}

impl<B: Behavior> ActorCell<B> {
    const VTABLE: Vtable = Vtable {
        run: Self::run_raw,
        release: Self::release_raw,
        shutdown: Self::shutdown_raw,
        info: Self::info_raw,
        control: Self::control_raw,
        state_bytes: std::mem::size_of::<B>(),
        slot_bytes: crate::mailbox::slot_bytes::<Envelope<B>>(),
        parent: Self::parent_raw,
    };

    /// Sets or clears the hub mark (counting a new hub against `from`); `false` if stopped.
    pub(crate) fn set_hub(&self, hub: bool, from: Option<&Exec>) -> bool {
        if self.mailbox.is_closed() {
            return false;
        }
        if self.runtime.core().set_hub(self.task(), hub) && hub {
            self.runtime.shared.note_hub(from);
        }
        true
    }

    /// Puts an envelope in the mailbox and schedules the actor if it was idle. Hands the envelope
    /// back if the actor has stopped.
    #[inline]
    pub(crate) fn enqueue(&self, envelope: Envelope<B>) -> Result<(), Envelope<B>> {
        self.enqueue_inlined(envelope)
    }

    /// [`enqueue`](Self::enqueue), always inlined: for the sends' one push (`deliver.rs`,
    /// `push_counted`), where the compiler once left `enqueue` a call of its own.
    #[inline(always)]
    pub(crate) fn enqueue_inlined(&self, envelope: Envelope<B>) -> Result<(), Envelope<B>> {
        match self.mailbox.push(envelope) {
            Push::Wake => {
                self.runtime.wake(self.task());
                Ok(())
            }
            Push::Queued => {
                // The message waits behind others: the sending activation pays for it
                // (`runtime/budget.rs`).
                crate::runtime::budget::charge_queued_send();
                // A send from an inline run (`monitor`/`seq`) to a busy actor may close a cycle
                // of inline runs on this thread (docs/exec-policies.md).
                if super::exec_policy::inline::running_inline() {
                    super::exec_policy::inline::note_queued(&self.runtime, self.task());
                }
                Ok(())
            }
            Push::Rejected(envelope) => Err(envelope),
            Push::Direct(envelope) => self.post(envelope),
        }
    }

    /// [`enqueue`](Self::enqueue) for a signal that must come after every envelope queued before
    /// it, whoever sent it: a stop, a supervisor's start, the last handle's `Unreferenced`. The
    /// actor-centric mailbox is one FIFO, so that is `enqueue`; a direct mailbox's letter may
    /// join a running gulp only while the actor's queue holds nothing (`direct.rs`).
    pub(crate) fn enqueue_after_queued(&self, envelope: Envelope<B>) -> Result<(), Envelope<B>> {
        if self.mailbox.is_direct() {
            return self.post_after_queued(envelope);
        }
        self.enqueue(envelope)
    }

    /// One more handle (a reference, or a pending continuation that may still send to us).
    #[inline]
    pub(crate) fn acquire_handle(&self) {
        self.handles.acquire();
    }

    /// One handle fewer; the last one queues the `Unreferenced` signal.
    #[inline]
    pub(crate) fn release_handle(&self) {
        if self.handles.release() {
            let _ = self.enqueue_after_queued(Envelope::Unreferenced);
        }
    }

    /// Stops the actor for good: record why, close the mailbox, run `stopped`, drop the state,
    /// report queued messages as dead letters, report a failure (a handler's, `stopped`'s, or
    /// both in one), free its names, tell its watchers and linked actors, release the life
    /// reference.
    fn terminate(&self, inner: &mut Inner<B>, mut reason: StopReason, exec: Option<&Exec>) {
        // Before the close: whoever finds the actor stopped can read why (`watch.rs`). A panic
        // of the `stopped` hook below makes the failure known only to those told at the end
        // (watchers in place, the parent, `failures()`); a watch racing the stop reads this one.
        self.exit.set(&reason);
        // The closing activation holds the schedule, so no sender can schedule this actor again;
        // from here on every send is rejected with its message.
        self.mailbox.close();
        if let Some(bound) = &self.bound {
            // After the close: a woken sender sees the actor stopped.
            bound.close();
        }
        let direct = self.mailbox.is_direct();
        if direct {
            // Letters queued before the close are still in the engine's queue and point at this
            // cell: the life reference is released by a letter queued behind them all, and the
            // engine refuses every later one.
            self.close_direct();
        }
        if let Life::Ready(actor) = &mut inner.life {
            if self.is_started() {
                let mut ctx = B::context(CellContext::new(self, exec));
                if let Err(panic) = catch_unwind(AssertUnwindSafe(|| actor.stopped(&mut ctx))) {
                    let earlier = match reason {
                        StopReason::Panicked(message) => Some(message),
                        _ => None,
                    };
                    reason = StopReason::Panicked(failure::stopped_panicked(
                        earlier,
                        panic_message(panic),
                    ));
                }
            }
        }
        inner.life = Life::Gone;
        // A stopped actor's timers never fire and its piped futures are never polled again: what
        // they hold (messages, closures, references) is dropped now. `None` for an actor that
        // used no feature.
        let mut leftovers = self.drop_extras();
        // Calls still queued (a watch registered too late fires as it drops) go once the actor
        // is unregistered, so that whoever they tell finds it gone.
        let mut calls = Vec::new();
        let mut dropped = 0;
        if let Some(leftovers) = &mut leftovers {
            // A supervised child's stash: envelopes kept for an instance that will not come.
            dropped += self.drain_stash(leftovers, &mut calls);
        }
        let mut waits = 0u32;
        loop {
            // SAFETY: we still hold the schedule (or run at shutdown): single consumer.
            match unsafe { self.mailbox.pop() } {
                // Dropping a request's ReplyTo tells its asker NoReply. A message a `DropOldest`
                // send doomed is a dead letter too: the actor stopped before discarding it.
                Pop::Item(Envelope::Msg(_)) => {
                    if let Some(bound) = &self.bound {
                        bound.take();
                    }
                    dropped += 1;
                }
                Pop::Item(Envelope::Call(call)) => calls.push(call),
                Pop::Item(_) => {}
                // A sender claimed this slot before the close and is still writing it (a few
                // instructions of `push`): wait for it, so that every dead letter is counted by the
                // time the actor is reported stopped. Leaving it to the cell's `Drop` counted it
                // only when the last reference went, and a caller reading `stats()` in between saw
                // one dead letter too few.
                Pop::NotReady => {
                    // The writer may have been preempted: stop burning the core after a while.
                    waits += 1;
                    if waits < 64 {
                        crate::sync::spin_hint();
                    } else {
                        std::thread::yield_now();
                    }
                }
                Pop::Empty => break,
            }
        }
        self.dead_letters(dropped);
        self.unregister_stopped(&reason, std::any::type_name::<B>());
        drop(calls);
        if let Some(mut leftovers) = leftovers {
            if let Some(slot) = leftovers.supervised.take() {
                self.tell_terminated(slot, &reason);
            }
            self.notify_watchers(leftovers.watch, &reason);
        }
        self.runtime.shared.note_stopped(exec);
        if !direct {
            // SAFETY: releases the life reference taken in `spawn`, exactly once (an actor
            // terminates once). Must be the last use of `self`, which may be freed here.
            unsafe { drop(Arc::from_raw(self as *const Self)) };
        }
    }
}

/// Builds the state (deferred initialisation) and runs `started`.
fn start<B: Behavior>(inner: &mut Inner<B>, ctx: &mut B::Ctx) -> Result<(), String> {
    B::inner(ctx).cell().set_started(true);
    if !matches!(inner.life, Life::Ready(_)) {
        let built = match std::mem::replace(&mut inner.life, Life::Gone) {
            Life::Factory(factory) => catch_unwind(AssertUnwindSafe(factory)),
            // Through the slot's hooks: only supervised actor types instantiate it.
            Life::Supervised(slot) => (slot.hooks.adopt)(B::inner(ctx).cell(), slot),
            _ => unreachable!("a started actor is built or about to be"),
        };
        inner.life = Life::Ready(built.map_err(panic_message)?);
    }
    let Life::Ready(actor) = &mut inner.life else {
        unreachable!("state built above")
    };
    catch_unwind(AssertUnwindSafe(|| actor.started(ctx))).map_err(panic_message)
}

/// Spawns a supervised child: its first state from its slot's factory, built on its first
/// activation like [`Life::Factory`], which also puts the slot in its extras (`supervised/`).
pub(crate) fn spawn_supervised<B: Behavior>(
    runtime: &Arc<Runtime>,
    slot: Supervised<B>,
    options: SpawnOptions,
    parent: Parent,
    from: Option<&Exec>,
) -> Result<Arc<ActorCell<B>>, Arc<ActorCell<B>>> {
    spawn(
        runtime,
        Life::Supervised(Box::new(slot)),
        options,
        Some(parent),
        from,
    )
}

#[cfg(all(test, not(loom)))]
mod layout_tests;

/// The features in use.
#[derive(Default)]
pub(crate) struct Extras {
    /// Timers armed through the context, and the receive timeout.
    pub(crate) timers: timers::OwnTimers,
    /// Futures piped through the context and still pending.
    pub(crate) pipes: pipes::Pipes,
    /// Death watch and links, either side.
    pub(crate) watch: watch::WatchState,
    /// A supervised child's slot (`supervised/`): a `Supervised<B>` of the actor's type.
    pub(crate) supervised: Option<Box<dyn std::any::Any + Send>>,
    /// Why a supervisor gives up, while it stops ([`crate::StopReason::Escalated`]).
    pub(crate) escalation: Option<String>,
}

/// What a stopping actor still has to tell, once it is unregistered: its watchers and linked
/// actors, its supervisor.
pub(crate) struct Leftovers {
    pub(crate) watch: watch::WatchState,
    /// A supervised child's slot (a `Supervised<B>`).
    pub(crate) supervised: Option<Box<dyn std::any::Any + Send>>,
}
