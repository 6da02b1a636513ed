//! The actor cell: mailbox, state and lifecycle of one actor, and the type-erased [`TaskRef`] the
//! engines schedule.
//!
//! Ownership: a cell lives in an `Arc`. [`ActorRef`]s hold strong references; the runtime holds one
//! more, the *life reference*, from spawn until the actor terminates. Run queues hold plain
//! [`TaskRef`] pointers: a task is only queued while its mailbox count is non-zero, and the actor
//! cannot terminate while it is queued (termination happens inside an activation, or at shutdown
//! after every worker has stopped), so the life reference keeps every queued task alive.

use super::ask::{AskError, ReplyTo};
use super::context::Context;
use super::{Actor, ActorFailure, ActorId, ActorRef, Deliver, SendError, SpawnOptions};
use crate::engine::actor_centric::{EngineHandle, Worker};
use crate::mailbox::{Mailbox, Pop, Push};
use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;
use std::sync::atomic::{
    AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering::AcqRel, Ordering::Acquire,
    Ordering::Relaxed,
};
use std::sync::{Arc, Weak};

/// What an activation tells the worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RunOutcome {
    /// The mailbox is empty; the actor is idle until the next 0 → 1 send.
    Idle,
    /// Messages remain; the actor is still scheduled and must be queued again.
    Requeue,
    /// The actor terminated; the task must not be touched again.
    Stopped,
}

/// The part of every cell the engines see, whatever the actor type.
pub(crate) struct Header {
    vtable: &'static Vtable,
    pub(crate) id: ActorId,
    /// Scheduling metadata (home PU, flags, samples).
    pub(crate) placement: ActorPlacement,
}

/// Where an actor lives, as the scheduling policies see it.
///
/// Written with relaxed atomics: the home is set at spawn (before the actor is queued) and at
/// its first activation (by the holder of the schedule); the flags and wake counters are
/// heuristics read and written by senders, where a lost update only delays a decision.
pub(crate) struct ActorPlacement {
    home: AtomicU32,
    /// The worker of the latest activation.
    last: AtomicU32,
    flags: AtomicU8,
    /// Sampled enqueue time (ns since the engine started, 0 = none), for the queue-wait telemetry.
    pub(crate) enqueued_at: AtomicU64,
    remote_wakes: AtomicU32,
    local_wakes: AtomicU32,
}

const NO_HOME: u32 = u32::MAX;
const RAN: u8 = 1;
const UNPINNED: u8 = 2;
const HUB: u8 = 4;

impl ActorPlacement {
    fn new(options: &SpawnOptions) -> Self {
        let mut flags = 0;
        if options.unpinned {
            flags |= UNPINNED;
        }
        if options.hub {
            flags |= HUB;
        }
        ActorPlacement {
            home: AtomicU32::new(NO_HOME),
            last: AtomicU32::new(NO_HOME),
            flags: AtomicU8::new(flags),
            enqueued_at: AtomicU64::new(0),
            remote_wakes: AtomicU32::new(0),
            local_wakes: AtomicU32::new(0),
        }
    }

    /// The home worker (HPU), if any.
    #[inline]
    pub(crate) fn home(&self) -> Option<usize> {
        let h = self.home.load(Relaxed);
        (h != NO_HOME).then_some(h as usize)
    }

    pub(crate) fn set_home(&self, home: Option<usize>) {
        self.home.store(home.map_or(NO_HOME, |h| h as u32), Relaxed);
    }

    /// The home, unless the actor is unpinned (spawn option or hub release).
    #[inline]
    pub(crate) fn pinned_home(&self) -> Option<usize> {
        if self.flags.load(Relaxed) & UNPINNED != 0 {
            None
        } else {
            self.home()
        }
    }

    /// The worker of the latest activation, if any.
    #[inline]
    pub(crate) fn last(&self) -> Option<usize> {
        let l = self.last.load(Relaxed);
        (l != NO_HOME).then_some(l as usize)
    }

    /// Records the worker of this activation; returns the previous one.
    #[inline]
    pub(crate) fn swap_last(&self, worker: usize) -> Option<usize> {
        let prev = self.last.load(Relaxed);
        if prev != worker as u32 {
            self.last.store(worker as u32, Relaxed);
        }
        (prev != NO_HOME).then_some(prev as usize)
    }

    /// Whether the actor is a hub (spawn option, `set_hub`, or online detection).
    #[inline]
    pub(crate) fn is_hub(&self) -> bool {
        self.flags.load(Relaxed) & HUB != 0
    }

    /// Sets or clears the hub flag; returns whether it changed.
    pub(crate) fn set_hub(&self, hub: bool) -> bool {
        let prev = if hub {
            self.flags.fetch_or(HUB, Relaxed)
        } else {
            self.flags.fetch_and(!HUB, Relaxed)
        };
        (prev & HUB != 0) != hub
    }

    /// True exactly once: at the actor's first activation.
    #[inline]
    pub(crate) fn first_run(&self) -> bool {
        self.flags.load(Relaxed) & RAN == 0 && self.flags.fetch_or(RAN, Relaxed) & RAN == 0
    }

    /// Counts a wake-up routed to a distant home; returns true when the hub rule says to unpin
    /// (and unpins). Racy increments on purpose: a heuristic, not worth a locked instruction.
    pub(crate) fn note_remote_wake(&self) -> bool {
        self.count_remote_wake_and_set(UNPINNED)
    }

    /// Counts a wake-up from another worker than the actor's; returns true when the online hub
    /// detection marks it a hub (and marks it). Same counters and rule as the LGS release.
    pub(crate) fn note_foreign_sender(&self) -> bool {
        self.count_remote_wake_and_set(HUB)
    }

    /// One more remote wake-up; when [`crate::policy::lgs::should_release_hub`] holds, sets `flag`
    /// and returns whether this call set it.
    fn count_remote_wake_and_set(&self, flag: u8) -> bool {
        let remote = self.remote_wakes.load(Relaxed).saturating_add(1);
        self.remote_wakes.store(remote, Relaxed);
        crate::policy::lgs::should_release_hub(remote, self.local_wakes.load(Relaxed))
            && self.flags.fetch_or(flag, Relaxed) & flag == 0
    }

    /// Counts a wake-up run next to the home.
    pub(crate) fn note_local_wake(&self) {
        let local = self.local_wakes.load(Relaxed).saturating_add(1);
        self.local_wakes.store(local, Relaxed);
    }
}

struct Vtable {
    /// Runs one activation. Safety: the caller holds the schedule (see the mailbox protocol).
    run: unsafe fn(NonNull<Header>, &Worker) -> RunOutcome,
    /// Terminates the actor at shutdown. Safety: no worker runs any more.
    shutdown: unsafe fn(NonNull<Header>),
}

/// A schedulable actor: a pointer to the [`Header`] at the start of an [`ActorCell`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct TaskRef(NonNull<Header>);

// SAFETY: a TaskRef is a token moved between threads through run queues; the cell it points to is
// `Sync`, and only the thread holding the schedule dereferences it mutably (mailbox protocol).
unsafe impl Send for TaskRef {}
// SAFETY: as above; sharing the pointer value itself is harmless.
unsafe impl Sync for TaskRef {}

impl TaskRef {
    /// Runs one activation.
    ///
    /// # Safety
    /// The caller must hold this task's schedule: it was popped from a run queue (or handed over
    /// by [`RunOutcome::Requeue`]) and nobody else runs it.
    #[inline]
    pub(crate) unsafe fn run(self, worker: &Worker) -> RunOutcome {
        // SAFETY: queued tasks are alive (module docs); the caller holds the schedule.
        unsafe { (self.0.as_ref().vtable.run)(self.0, worker) }
    }

    /// The scheduling metadata.
    #[inline]
    pub(crate) fn placement(&self) -> &ActorPlacement {
        // SAFETY: a TaskRef handed to the engine points to a live cell: queued tasks are kept
        // alive by the life reference, and a sender scheduling one holds an `ActorRef`.
        unsafe { &self.0.as_ref().placement }
    }

    /// Terminates the actor at shutdown.
    ///
    /// # Safety
    /// Every worker has stopped, and the task is still registered (alive).
    pub(crate) unsafe fn shutdown(self) {
        // SAFETY: forwarded contract.
        unsafe { (self.0.as_ref().vtable.shutdown)(self.0) }
    }
}

/// A closure that runs like a message, with the actor's state and context.
pub(crate) type Continuation<A> = Box<dyn FnOnce(&mut A, &mut Context<A>) + Send>;

/// What travels through a mailbox.
pub(crate) enum Envelope<A: Actor> {
    /// A user message.
    Msg(A::Msg),
    /// A closure run with the actor's state: ask continuations, child-failure notices.
    Call(Continuation<A>),
    /// The first activation of an eagerly started actor.
    Start,
    /// A stop signal (poison pill): queued messages before it are still handled.
    Stop,
    /// The last [`ActorRef`] was dropped.
    Unreferenced,
}

/// How the actor's state comes to be.
pub(crate) enum Life<A> {
    /// Built on the first activation, on the worker that runs it (deferred initialisation: its
    /// memory is first touched where it runs).
    Factory(Box<dyn FnOnce() -> A + Send>),
    /// Built.
    Ready(A),
    /// Stopped and dropped.
    Gone,
}

struct Inner<A> {
    life: Life<A>,
    started: bool,
}

/// Called with a child's failure; returns `false` when the parent is gone.
pub(crate) type FailureSink = Box<dyn Fn(ActorFailure) -> bool + Send + Sync>;

/// One actor. `repr(C)` keeps the header first, so a header pointer is a cell pointer.
#[repr(C)]
pub(crate) struct ActorCell<A: Actor> {
    header: Header,
    mailbox: Mailbox<Envelope<A>>,
    /// Live [`ActorRef`]s (not `Arc` strong count, which also counts the runtime's references).
    handles: AtomicUsize,
    /// Touched only by the activation holding the schedule.
    inner: std::cell::UnsafeCell<Inner<A>>,
    pub(crate) engine: Arc<EngineHandle>,
    parent: Option<FailureSink>,
}

// SAFETY: `inner` is only accessed by the single activation holding the schedule (mailbox
// protocol), or at shutdown when no activation runs; everything else is `Sync`.
unsafe impl<A: Actor> Sync for ActorCell<A> {}
// SAFETY: the actor state and messages are `Send`.
unsafe impl<A: Actor> Send for ActorCell<A> {}

/// Creates, registers and (unless lazy) schedules a new actor.
pub(crate) fn spawn<A: Actor>(
    engine: &Arc<EngineHandle>,
    life: Life<A>,
    options: SpawnOptions,
    parent: Option<FailureSink>,
    from: Option<&Worker>,
) -> ActorRef<A::Msg> {
    let cell = Arc::new(ActorCell {
        header: Header {
            vtable: &ActorCell::<A>::VTABLE,
            id: engine.next_actor_id(from),
            placement: ActorPlacement::new(&options),
        },
        mailbox: Mailbox::new(),
        handles: AtomicUsize::new(1),
        inner: std::cell::UnsafeCell::new(Inner {
            life,
            started: false,
        }),
        engine: Arc::clone(engine),
        parent,
    });
    let task = cell.task();
    // The life reference, released by `terminate`.
    let _ = Arc::into_raw(Arc::clone(&cell));
    engine.register(cell.header.id, task, from);
    if options.hub {
        engine.note_hub(from);
    }
    if !options.lazy {
        // A fresh mailbox is idle, so this push always asks us to schedule.
        let pushed = cell.mailbox.push(Envelope::Start);
        debug_assert!(matches!(pushed, Push::Wake));
        engine.schedule_spawned(task, &options, from);
    }
    ActorRef::from_cell(cell)
}

impl<A: Actor> ActorCell<A> {
    const VTABLE: Vtable = Vtable {
        run: Self::run_raw,
        shutdown: Self::shutdown_raw,
    };

    #[inline]
    fn task(&self) -> TaskRef {
        TaskRef(NonNull::from(&self.header))
    }

    pub(crate) fn id(&self) -> ActorId {
        self.header.id
    }

    pub(crate) fn placement(&self) -> &ActorPlacement {
        &self.header.placement
    }

    /// Puts an envelope in the mailbox and schedules the actor if it was idle. Hands the envelope
    /// back if the actor has stopped.
    #[inline]
    pub(crate) fn enqueue(&self, envelope: Envelope<A>) -> Result<(), Envelope<A>> {
        match self.mailbox.push(envelope) {
            Push::Wake => {
                self.engine.schedule_woken(self.task());
                Ok(())
            }
            Push::Queued => Ok(()),
            Push::Rejected(envelope) => Err(envelope),
        }
    }

    /// A new strong reference from a cell reference (cells always live in an `Arc`).
    ///
    /// # Safety
    /// `self` must be alive through an `Arc` (always true for cells reached through a task or a
    /// context).
    pub(crate) unsafe fn arc_from_ref(&self) -> Arc<Self> {
        let ptr = self as *const Self;
        // SAFETY: `ptr` came from an `Arc<Self>` allocation that is alive.
        unsafe {
            Arc::increment_strong_count(ptr);
            Arc::from_raw(ptr)
        }
    }

    /// A new [`ActorRef`] to this actor.
    pub(crate) fn new_ref(self: Arc<Self>) -> ActorRef<A::Msg> {
        self.handles.fetch_add(1, Relaxed);
        ActorRef::from_cell(self)
    }

    /// A sink that reports a child's failure to this actor's [`Actor::child_failed`].
    pub(crate) fn failure_sink(self: &Arc<Self>) -> FailureSink {
        let parent: Weak<Self> = Arc::downgrade(self);
        Box::new(move |failure| match parent.upgrade() {
            Some(parent) => parent
                .enqueue(Envelope::Call(Box::new(move |actor, ctx| {
                    actor.child_failed(ctx, failure)
                })))
                .is_ok(),
            None => false,
        })
    }

    /// A [`ReplyTo`] whose reply runs `then` as a continuation of this actor.
    pub(crate) fn continuation<R: Send + 'static>(
        self: Arc<Self>,
        then: impl FnOnce(&mut A, &mut Context<A>, Result<R, AskError>) + Send + 'static,
    ) -> ReplyTo<R> {
        // Waiting for a reply keeps the asker referenced, so it cannot stop as unreferenced.
        self.handles.fetch_add(1, Relaxed);
        ReplyTo::new(move |result| {
            let _ = self.enqueue(Envelope::Call(Box::new(move |actor, ctx| {
                then(actor, ctx, result)
            })));
            self.release_handle();
        })
    }

    unsafe fn run_raw(ptr: NonNull<Header>, worker: &Worker) -> RunOutcome {
        // SAFETY: the header is the first field of a live `ActorCell<A>` (repr(C)).
        let cell = unsafe { ptr.cast::<Self>().as_ref() };
        cell.activate(worker)
    }

    unsafe fn shutdown_raw(ptr: NonNull<Header>) {
        // SAFETY: as in `run_raw`; no activation runs (workers stopped).
        let cell = unsafe { ptr.cast::<Self>().as_ref() };
        // SAFETY: no activation runs, so we have exclusive access to `inner`.
        let inner = unsafe { &mut *cell.inner.get() };
        cell.terminate(inner, None, None);
    }

    /// One activation: up to `throughput` envelopes.
    fn activate(&self, worker: &Worker) -> RunOutcome {
        // SAFETY: we hold the schedule, so we are the only activation (mailbox protocol).
        let inner = unsafe { &mut *self.inner.get() };
        let mut ctx = Context::new(self, Some(worker));
        let mut failure = None;
        if !inner.started {
            failure = start(inner, &mut ctx).err();
        }
        let budget = self.engine.throughput();
        let mut processed = 0;
        let outcome = loop {
            if failure.is_some() || ctx.stopping {
                break RunOutcome::Stopped;
            }
            if processed == budget {
                break RunOutcome::Requeue;
            }
            // SAFETY: we hold the schedule: single consumer.
            let envelope = match unsafe { self.mailbox.pop() } {
                Pop::Item(envelope) => envelope,
                // A sender is writing the next slot: stay scheduled, come back soon.
                Pop::NotReady => break RunOutcome::Requeue,
                // SAFETY: as above.
                Pop::Empty => match unsafe { self.mailbox.try_idle() } {
                    true => break RunOutcome::Idle,
                    // A send raced in; it did not schedule us, so we go on.
                    false => continue,
                },
            };
            processed += 1;
            let Life::Ready(actor) = &mut inner.life else {
                unreachable!("a started actor has state until it terminates")
            };
            let result = match envelope {
                Envelope::Msg(msg) => {
                    catch_unwind(AssertUnwindSafe(|| actor.handle(&mut ctx, msg)))
                }
                Envelope::Call(call) => catch_unwind(AssertUnwindSafe(|| call(actor, &mut ctx))),
                Envelope::Start => Ok(()),
                Envelope::Stop => {
                    ctx.stop();
                    Ok(())
                }
                Envelope::Unreferenced => {
                    // Stop only if the actor can no longer receive anything: no reference exists
                    // (one may have been made since, e.g. by `ctx.myself()`) and nothing is queued
                    // behind this signal (e.g. a message the actor sent itself). Every reference's
                    // last drop queues a new signal after that reference's sends, so the final
                    // signal always finds an empty mailbox.
                    //
                    // Order matters: references first, then the queue. A sender finishes its claim
                    // before it drops its reference (AcqRel decrement), so once we have read 0 with
                    // Acquire, every claim made through a reference is visible to `has_more`. The
                    // other order loses a reply whose sender sends and drops its reference between
                    // the two reads.
                    // SAFETY (has_more): we hold the schedule.
                    if self.handles.load(Acquire) == 0 && !unsafe { self.mailbox.has_more() } {
                        ctx.stop();
                    }
                    Ok(())
                }
            };
            failure = result.err().map(panic_message);
        };
        worker.counters().messages.bump(processed as u64);
        if outcome == RunOutcome::Stopped {
            self.terminate(inner, failure, Some(worker));
        }
        outcome
    }

    /// Stops the actor for good: close the mailbox, run `stopped`, drop the state, report queued
    /// messages as dead letters, report a failure, release the life reference.
    fn terminate(&self, inner: &mut Inner<A>, failure: Option<String>, worker: Option<&Worker>) {
        // The closing activation holds the schedule, so no sender can schedule this actor again;
        // from here on every send is rejected with its message.
        self.mailbox.close();
        if let Life::Ready(actor) = &mut inner.life {
            if inner.started {
                let mut ctx = Context::new(self, worker);
                if let Err(panic) = catch_unwind(AssertUnwindSafe(|| actor.stopped(&mut ctx))) {
                    tracing::warn!(actor = %self.id(), message = %panic_message(panic), "`stopped` hook panicked");
                }
            }
        }
        inner.life = Life::Gone;
        let mut dropped = 0;
        loop {
            // SAFETY: we still hold the schedule (or run at shutdown): single consumer.
            match unsafe { self.mailbox.pop() } {
                // Dropping a request's ReplyTo tells its asker NoReply.
                Pop::Item(Envelope::Msg(_)) => dropped += 1,
                Pop::Item(_) => {}
                // A sender that claimed before the close is still writing: dropped (and counted)
                // with the mailbox in `Drop`.
                Pop::Empty | Pop::NotReady => break,
            }
        }
        let engine = &self.engine;
        engine.note_dead_letters(self.id(), dropped);
        engine.unregister(self.id());
        if let Some(message) = failure {
            let failure = ActorFailure {
                actor: self.id(),
                actor_type: std::any::type_name::<A>(),
                message,
            };
            engine.record_failure(failure.clone());
            let told = self
                .parent
                .as_ref()
                .is_some_and(|sink| sink(failure.clone()));
            if !told {
                tracing::warn!(actor = %failure.actor, kind = failure.actor_type, message = %failure.message, "actor failed");
            }
        }
        engine.note_stopped(worker);
        // SAFETY: releases the life reference taken in `spawn`, exactly once (an actor terminates
        // once). Must be the last use of `self`, which may be freed here.
        unsafe { drop(Arc::from_raw(self as *const Self)) };
    }

    fn release_handle(&self) {
        // AcqRel: the last dropper must see every other reference's prior sends before deciding.
        if self.handles.fetch_sub(1, AcqRel) == 1 {
            let _ = self.enqueue(Envelope::Unreferenced);
        }
    }
}

/// Builds the state (deferred initialisation) and runs `started`.
fn start<A: Actor>(inner: &mut Inner<A>, ctx: &mut Context<A>) -> Result<(), String> {
    inner.started = true;
    if let Life::Factory(_) = inner.life {
        let Life::Factory(factory) = std::mem::replace(&mut inner.life, Life::Gone) else {
            unreachable!()
        };
        inner.life = Life::Ready(catch_unwind(AssertUnwindSafe(factory)).map_err(panic_message)?);
    }
    let Life::Ready(actor) = &mut inner.life else {
        unreachable!("state built above")
    };
    catch_unwind(AssertUnwindSafe(|| actor.started(ctx))).map_err(panic_message)
}

fn panic_message(payload: Box<dyn Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}

impl<A: Actor> Drop for ActorCell<A> {
    fn drop(&mut self) {
        // Messages claimed before the close but written after the final drain: never lost silently.
        let mut dropped = 0;
        // SAFETY: `&mut self`: nobody else touches the mailbox.
        while let Pop::Item(envelope) = unsafe { self.mailbox.pop() } {
            if matches!(envelope, Envelope::Msg(_)) {
                dropped += 1;
            }
        }
        self.engine.note_dead_letters(self.id(), dropped);
    }
}

impl<A: Actor> Deliver<A::Msg> for ActorCell<A> {
    #[inline]
    fn deliver(&self, msg: A::Msg) -> Result<(), SendError<A::Msg>> {
        self.enqueue(Envelope::Msg(msg))
            .map_err(|envelope| match envelope {
                Envelope::Msg(message) => SendError {
                    actor: self.id(),
                    message,
                },
                _ => unreachable!("enqueue hands back what it was given"),
            })
    }

    fn stop_signal(&self) -> bool {
        self.enqueue(Envelope::Stop).is_ok()
    }

    fn id(&self) -> ActorId {
        self.header.id
    }

    fn is_stopped(&self) -> bool {
        self.mailbox.is_closed()
    }

    fn set_hub(&self, hub: bool) -> bool {
        if self.mailbox.is_closed() {
            return false;
        }
        if self.header.placement.set_hub(hub) && hub {
            self.engine.note_hub(None);
        }
        true
    }

    fn acquire_handle(&self) {
        // Relaxed: creating a reference from an existing one needs no ordering (as `Arc::clone`).
        self.handles.fetch_add(1, Relaxed);
    }

    fn release_handle(&self) {
        ActorCell::release_handle(self);
    }
}
