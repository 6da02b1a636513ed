//! Async actors: an [`AsyncActor`]'s handler is an `async fn` that may `.await`; the actor polls
//! its future on its worker, as [`Context::pipe`] does, with no executor
//! (docs/decisions/0062-async-handlers.md says why it is built this way and why it is sound).
//!
//! An [`AsyncActor`] runs inside the adapter [`Async`], an ordinary [`Actor`]: the engines, the
//! mailboxes, supervision and shutdown see nothing new, and a sync actor pays nothing for async
//! ones. The adapter keeps
//! * the user's state and its [`AsyncContext`] in one heap block of their own (`Slots`), reached
//!   only through a raw pointer, so that the handler's future may borrow both across polls: the
//!   cell's activation reborrows the adapter (`&mut Async<A>`) at every envelope, never the
//!   block;
//! * the running future, if a handler (or `started`) awaits, with its lifetime erased, in a
//!   heap buffer the adapter reuses from one handler to the next (`FutureSlot`), so that a
//!   handler allocates nothing when its future fits the buffer; the future is always dropped
//!   before the block (at completion, when the actor stops, or in `Drop`);
//! * the stash: user messages taken out of the mailbox while a future is pending, in order,
//!   still counted against a bounded mailbox's capacity. Once the future completes they are
//!   handled, oldest first, before anything that comes after them.
//!
//! A wake-up of the pending future queues one `Envelope::Call` that polls it inside an activation
//! (at most one queued at a time), as a piped future's does.

mod context;
mod future_slot;

use context::CurrentSlot;
pub use context::{AsyncContext, Sleep};
use future_slot::FutureSlot;

use super::{with_runtime, Actor, ActorFailure, Context};
use crate::runtime::cell::{panic_message, ActorCell, Envelope};
use crate::sync::AtomicBool;
use std::cell::Cell;
use std::collections::VecDeque;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::ptr::NonNull;
use std::sync::atomic::Ordering::{AcqRel, Release};
use std::sync::{Arc, Weak};
use std::task::{Context as TaskContext, Wake, Waker};

/// An actor whose handlers are `async`: a handler may `.await` (a reply, a timer, I/O) and the
/// worker runs other actors meanwhile. Spawn it wrapped in [`Async`]: `system.spawn(Async::new(kv))`.
///
/// The guarantees are an [`Actor`]'s: one message at a time, in order. A message that arrives
/// while a handler awaits waits (it still counts against a bounded mailbox's capacity) until the
/// handler returns; the handler's future borrows the state (`&mut self`) for as long as it runs.
/// [`started`](Self::started) may await too: messages that arrive meanwhile wait the same way.
///
/// ```
/// use loka::{Async, AsyncActor, AsyncContext, ReplyTo, System};
/// use std::time::Duration;
///
/// struct Greeter { greeted: u32 }
///
/// impl AsyncActor for Greeter {
///     type Msg = (String, ReplyTo<String>);
///     async fn handle(&mut self, ctx: &mut AsyncContext<Self>, (name, reply): Self::Msg) {
///         ctx.sleep(Duration::from_millis(1)).await; // the worker runs other actors meanwhile
///         self.greeted += 1;
///         reply.send(format!("hello {name} (#{})", self.greeted));
///     }
/// }
///
/// let system = System::builder().workers(1).build().unwrap();
/// let greeter = system.spawn(Async::new(Greeter { greeted: 0 }));
/// let answer = greeter.ask(|reply| ("ana".to_string(), reply)).unwrap().wait().unwrap();
/// assert_eq!(answer, "hello ana (#1)");
/// system.shutdown();
/// ```
///
/// A future polled here runs on the actor's worker, possibly a different worker at each poll: it
/// must be `Send`. Under the simulation engine, [`AsyncContext::sleep`] runs on virtual time.
pub trait AsyncActor: Sized + Send + 'static {
    /// The type of message this actor handles.
    type Msg: Send + 'static;

    /// Handles one message; the next one waits until the returned future completes. A panic,
    /// at any poll, is the actor's failure (as a sync handler's panic is).
    fn handle(
        &mut self,
        ctx: &mut AsyncContext<Self>,
        msg: Self::Msg,
    ) -> impl Future<Output = ()> + Send;

    /// Runs once, on the actor's first activation, before any message; messages that arrive
    /// before it completes wait, in order. A panic before its first `.await` is a start failure
    /// (like a sync `started`'s); a panic later is the actor's failure. The default does nothing.
    fn started(&mut self, _ctx: &mut AsyncContext<Self>) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// Runs once when the actor stops, after its pending future (if one was awaiting) has been
    /// dropped. Synchronous, like [`Actor::stopped`].
    fn stopped(&mut self, _ctx: &mut AsyncContext<Self>) {}

    /// A child spawned by this actor panicked and was stopped; runs between two handlers (never
    /// while one awaits). The default logs it.
    fn child_failed(&mut self, _ctx: &mut AsyncContext<Self>, failure: ActorFailure) {
        tracing::warn!(actor = %failure.actor, kind = failure.actor_type, message = %failure.message, "child actor failed");
    }

    /// As [`Actor::characteristics`].
    fn characteristics() -> Option<crate::exec_policy::Characteristics> {
        None
    }

    /// As [`Actor::exec_policy`].
    fn exec_policy() -> Option<crate::exec_policy::ExecPolicy> {
        None
    }

    /// What the actor's futures need from the system, as [`Actor::requires`]: a handler that
    /// awaits `tokio::time` or `tokio::net` returns `&[Requirement::Tokio]`, and spawning it on
    /// a system built without `SystemBuilder::tokio_handle` is refused with
    /// [`SpawnError::MissingRuntime`](crate::SpawnError::MissingRuntime). The default needs
    /// nothing (loka's own [`AsyncContext::sleep`] and asks need no runtime).
    fn requires() -> &'static [crate::Requirement] {
        &[]
    }
}

/// The [`Actor`] that runs an [`AsyncActor`]: spawn `Async::new(state)` wherever an actor is
/// spawned (`System::spawn`, `Context::spawn`, a supervisor's child factory). Its references are
/// `ActorRef<A::Msg>`, as for any actor.
pub struct Async<A: AsyncActor> {
    /// The pending future, its lifetime erased (it borrows `*slots`), living in `buffer`
    /// (never moved while it lives); dropped in place explicitly before `slots` is freed and
    /// before `buffer` is reused or freed.
    pending: Option<NonNull<dyn Future<Output = ()> + Send>>,
    /// Where handler futures are built and polled: one allocation, reused.
    buffer: FutureSlot,
    /// The user's state and context, at a stable address (module docs). Owned: freed in `Drop`.
    slots: NonNull<Slots<A>>,
    /// User messages taken out while a future was pending, oldest first.
    stash: VecDeque<A::Msg>,
    /// The future's wake-up state and its `Waker`, made at the first poll and reused (no
    /// reference count touched per poll).
    waking: Option<(Arc<Waking<A>>, Waker)>,
    /// Children's failures told while a future was pending: `child_failed` runs between
    /// handlers, before the stash.
    failures: VecDeque<ActorFailure>,
}

/// What a handler's future may borrow: the state and the context (and, through a raw pointer
/// only, the slot holding the running activation's context).
struct Slots<A: AsyncActor> {
    actor: A,
    ctx: AsyncContext<A>,
    /// The activation's [`Context`] while a poll (or a hook) runs, `None` otherwise. Written by
    /// the adapter through the raw pointer to the block, read by [`AsyncContext`] through its
    /// own: never covered by the `&mut` the future holds (those cover `actor` and `ctx` only).
    current: CurrentSlot<A>,
}

// SAFETY: the block holds an `A` (Send) and the context (Send: `context.rs`); the future is `Send`.
unsafe impl<A: AsyncActor> Send for Async<A> {}

/// The pending future's waker: a wake-up queues one poll (none while one is queued).
struct Waking<A: AsyncActor> {
    queued: AtomicBool,
    /// Weak: the actor's cell owns the adapter, which owns this; a waker kept elsewhere must not
    /// keep the cell alive.
    cell: Weak<ActorCell<Async<A>>>,
}

impl<A: AsyncActor> Wake for Waking<A> {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.queued.swap(true, AcqRel) {
            return;
        }
        if let Some(cell) = self.cell.upgrade() {
            // Rejected once the actor has stopped: its future is dropped, nothing to poll.
            let _ =
                cell.enqueue_after_queued(Envelope::Call(Box::new(|actor, ctx| actor.resume(ctx))));
        }
    }
}

impl<A: AsyncActor> Async<A> {
    /// Wraps `actor` for spawning.
    pub fn new(actor: A) -> Self {
        let slots = NonNull::from(Box::leak(Box::new(Slots {
            actor,
            ctx: AsyncContext {
                current: NonNull::dangling(),
                stop: false,
            },
            current: Cell::new(None),
        })));
        // SAFETY: the block was just allocated; nothing borrows it yet. The context's pointer is
        // derived from the block's raw pointer, like every later access.
        unsafe {
            let raw = slots.as_ptr();
            (*raw).ctx.current = NonNull::from(&(*raw).current);
        }
        Async {
            pending: None,
            buffer: FutureSlot::EMPTY,
            slots,
            stash: VecDeque::new(),
            waking: None,
            failures: VecDeque::new(),
        }
    }

    /// Runs `f` with the user's state and context, the activation's context made current for
    /// the context's methods. For the synchronous hooks only: no future is pending.
    fn with_state<R>(
        &mut self,
        ctx: &mut Context<Self>,
        f: impl FnOnce(&mut A, &mut AsyncContext<A>) -> R,
    ) -> R {
        debug_assert!(self.pending.is_none(), "a hook runs between handlers");
        let raw = self.slots.as_ptr();
        // SAFETY: no future is pending, so nothing else borrows the block; the borrow ends with
        // `f`. `current` is cleared even if `f` panics (the guard).
        unsafe {
            let _current = Current::set(raw, ctx);
            f(&mut (*raw).actor, &mut (*raw).ctx)
        }
    }

    /// Starts a handler (or `started`): builds its future with the user's state and context,
    /// polls it once and, if it is pending, keeps it. Returns whether it completed.
    fn launch<F>(
        &mut self,
        ctx: &mut Context<Self>,
        make: impl FnOnce(&'static mut A, &'static mut AsyncContext<A>) -> F,
    ) -> bool
    where
        F: Future<Output = ()> + Send + 'static,
    {
        debug_assert!(self.pending.is_none(), "one handler at a time");
        let raw = self.slots.as_ptr();
        // SAFETY: the lifetime erasure, in one place (docs/decisions/0062-async-handlers.md).
        // The block stays at its address and alive until `Drop`, which drops the future first;
        // no other reference to `actor` or `ctx` is made while the future lives: the adapter
        // makes one only in `with_state` (a hook) and here, and both run only while no future is
        // pending (`pending` is `None`: the future completed and was dropped, or it was dropped
        // when the actor stopped); the adapter itself reaches the block only through `raw` and
        // touches only `current` (a `Cell` the future's borrows do not cover) and, once the
        // future is gone, `ctx.stop`. The future is polled only by this adapter, inside the
        // actor's activation (one thread at a time).
        let (actor, actx) = unsafe { (&mut (*raw).actor, &mut (*raw).ctx) };
        let future = with_runtime(ctx, |ctx| {
            // SAFETY: `raw` is the live block; cleared by the guard.
            let _current = unsafe { Current::set(raw, ctx) };
            make(actor, actx)
        });
        // Into the reused buffer: no allocation unless it is the first future of its size.
        let place = self.buffer.place::<F>();
        // SAFETY: `place` is valid and aligned for an `F` and holds no live value (no future is
        // pending); the future stays there, unmoved, until it is dropped in place.
        unsafe { place.as_ptr().write(future) };
        let erased: *mut (dyn Future<Output = ()> + Send) = place.as_ptr();
        // SAFETY: non-null (from `place`).
        self.pending = Some(unsafe { NonNull::new_unchecked(erased) });
        self.poll(ctx)
    }

    /// Polls the pending future once, the activation's context current; on completion drops it
    /// and applies a `stop` the handler asked for. Returns whether it completed.
    fn poll(&mut self, ctx: &mut Context<Self>) -> bool {
        let Some(future) = self.pending else {
            return true;
        };
        let (waking, waker) = self.waking.get_or_insert_with(|| {
            let waking = Arc::new(Waking {
                queued: AtomicBool::new(false),
                cell: Arc::downgrade(&ctx.inner().cell_arc()),
            });
            let waker = Waker::from(Arc::clone(&waking));
            (waking, waker)
        });
        // Cleared before polling: a wake-up during or after this poll queues another one.
        waking.queued.store(false, Release);
        let mut cx = TaskContext::from_waker(waker);
        let raw = self.slots.as_ptr();
        let ready = with_runtime(ctx, |ctx| {
            // SAFETY: `raw` is the live block; cleared by the guard, also on a panic.
            let _current = unsafe { Current::set(raw, ctx) };
            // SAFETY: the live future in `buffer`, which never moves it (pinned in place).
            unsafe { Pin::new_unchecked(&mut *future.as_ptr()) }
                .poll(&mut cx)
                .is_ready()
        });
        if !ready {
            return false;
        }
        self.pending = None;
        // SAFETY: completed, and no longer reachable (`pending` cleared): dropped once.
        unsafe { std::ptr::drop_in_place(future.as_ptr()) };
        // SAFETY: the future is gone, so nothing borrows the block's context.
        let stop = unsafe { std::mem::take(&mut (*raw).ctx.stop) };
        if stop {
            ctx.stop();
        }
        true
    }

    /// A handler or `started` went pending: hold the actor (it must not stop as unreferenced
    /// while it waits for its own future, as a piped future holds it).
    fn hold(ctx: &mut Context<Self>) {
        ctx.inner().cell().acquire_handle();
    }

    /// The pending future completed: release the hold taken when it went pending.
    fn unhold(ctx: &mut Context<Self>) {
        ctx.inner().cell().release_handle();
    }

    /// Handles `msg` now: starts its handler; if it awaits, later messages are stashed.
    fn dispatch(&mut self, ctx: &mut Context<Self>, msg: A::Msg) -> bool {
        let done = self.launch(ctx, |actor, actx| actor.handle(actx, msg));
        if !done {
            Self::hold(ctx);
        }
        done
    }

    /// A queued poll runs (a wake-up): poll; once the future completes, handle the stash, oldest
    /// first, until it is empty, a handler awaits, or one asked to stop.
    fn resume(&mut self, ctx: &mut Context<Self>) {
        if self.pending.is_none() || !self.poll(ctx) {
            return;
        }
        Self::unhold(ctx);
        self.drain(ctx);
    }

    /// Handles stashed messages while no future is pending and the actor is not stopping.
    fn drain(&mut self, ctx: &mut Context<Self>) {
        while self.pending.is_none() && !ctx.inner().is_stopping() {
            if let Some(failure) = self.failures.pop_front() {
                self.with_state(ctx, |actor, actx| actor.child_failed(actx, failure));
                continue;
            }
            let Some(msg) = self.stash.pop_front() else {
                return;
            };
            ctx.inner().cell().release_place();
            self.dispatch(ctx, msg);
        }
    }

    /// The actor stops: drop the pending future (its drop guards run; a panic there is logged),
    /// release its hold, and count the stash as dead letters.
    fn cancel(&mut self, ctx: &mut Context<Self>) {
        if let Some(future) = self.pending.take() {
            let raw = self.slots.as_ptr();
            // A future's drop may use the context (a guard that sends) or Tokio (a socket).
            let dropped = with_runtime(ctx, |ctx| {
                // SAFETY: `raw` is the live block; cleared by the guard.
                let _current = unsafe { Current::set(raw, ctx) };
                // SAFETY: the live future, taken out of `pending`: dropped once (a panic
                // midway leaves it half dropped, never dropped again).
                catch_unwind(AssertUnwindSafe(|| unsafe {
                    std::ptr::drop_in_place(future.as_ptr())
                }))
            });
            if let Err(panic) = dropped {
                tracing::warn!(actor = %ctx.id(), message = %panic_message(panic), "dropping an async handler's future panicked");
            }
            Self::unhold(ctx);
        }
        let cell = ctx.inner().cell();
        for _ in 0..self.stash.len() {
            cell.release_place();
        }
        cell.dead_letters(self.stash.len() as u64);
        self.stash.clear();
    }
}

/// Makes the activation's context current in the block for one poll or hook; clears it on drop.
struct Current<A: AsyncActor>(*mut Slots<A>);

impl<A: AsyncActor> Current<A> {
    /// # Safety
    /// `raw` is the live block, reached only through raw pointers here.
    unsafe fn set(raw: *mut Slots<A>, ctx: &mut Context<Async<A>>) -> Self {
        // SAFETY: the caller's contract; `current` is a `Cell` no `&mut` covers.
        unsafe { (*std::ptr::addr_of!((*raw).current)).set(Some(NonNull::from(ctx))) };
        Current(raw)
    }
}

impl<A: AsyncActor> Drop for Current<A> {
    fn drop(&mut self) {
        // SAFETY: as in `set`.
        unsafe { (*std::ptr::addr_of!((*self.0).current)).set(None) };
    }
}

impl<A: AsyncActor> Drop for Async<A> {
    fn drop(&mut self) {
        // The future borrows the block: it goes first. (A stopped actor's was dropped by
        // `cancel`; this one is an actor that never ran, or an instance a supervisor replaced.)
        if let Some(future) = self.pending.take() {
            // SAFETY: a live future in `buffer`, dropped once (taken).
            unsafe { std::ptr::drop_in_place(future.as_ptr()) };
        }
        // `buffer` is freed by its own `Drop`, after this.
        // SAFETY: allocated by `new` with `Box`, freed once, here; nothing borrows it any more.
        drop(unsafe { Box::from_raw(self.slots.as_ptr()) });
    }
}

impl<A: AsyncActor> Actor for Async<A> {
    type Msg = A::Msg;

    fn handle(&mut self, ctx: &mut Context<Self>, msg: A::Msg) {
        if self.pending.is_some() || !self.stash.is_empty() {
            // Waits its turn, and keeps its place in a bounded mailbox's count.
            ctx.inner().cell().hold_place();
            self.stash.push_back(msg);
            return;
        }
        self.dispatch(ctx, msg);
    }

    fn started(&mut self, ctx: &mut Context<Self>) {
        if !self.launch(ctx, |actor, actx| actor.started(actx)) {
            Self::hold(ctx);
        }
    }

    fn stopped(&mut self, ctx: &mut Context<Self>) {
        self.cancel(ctx);
        self.with_state(ctx, |actor, actx| actor.stopped(actx));
    }

    fn child_failed(&mut self, ctx: &mut Context<Self>, failure: ActorFailure) {
        // Between handlers only: while one awaits, the notice waits its turn (`drain`).
        if self.pending.is_some() {
            self.failures.push_back(failure);
            return;
        }
        self.with_state(ctx, |actor, actx| actor.child_failed(actx, failure));
    }

    fn characteristics() -> Option<crate::exec_policy::Characteristics> {
        A::characteristics()
    }

    fn exec_policy() -> Option<crate::exec_policy::ExecPolicy> {
        A::exec_policy()
    }

    fn requires() -> &'static [crate::Requirement] {
        A::requires()
    }
}
