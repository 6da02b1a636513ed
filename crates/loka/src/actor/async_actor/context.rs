//! [`AsyncContext`], what an async handler can do besides changing its state, and the
//! [`Sleep`] future of its timers. The adapter (`mod.rs`) makes the running activation's context
//! current in the actor's block for every poll; this context reaches it through that slot.

use super::{Async, AsyncActor};
use crate::actor::ask::{self, Pending, ReplyTo};
use crate::actor::{Actor, ActorId, ActorRef, Context, SpawnOptions, TimerHandle};
use crate::sync::AtomicBool;
use parking_lot::Mutex;
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::ptr::NonNull;
use std::sync::atomic::Ordering::{Acquire, Release};
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::Duration;

/// Where the running activation's context is kept for [`AsyncContext`] (see `Slots::current`).
pub(super) type CurrentSlot<A> = Cell<Option<NonNull<Context<Async<A>>>>>;

/// An async handler's context: what it can do besides changing its state. Reached only as the
/// `&mut AsyncContext<Self>` a handler receives; its methods work while the handler's future is
/// being polled, which is the only time the handler's code runs.
pub struct AsyncContext<A: AsyncActor> {
    /// `Slots::current`, through the block's raw pointer.
    pub(super) current: NonNull<CurrentSlot<A>>,
    /// [`stop`](Self::stop) was called: the actor stops once the current handler completes.
    pub(super) stop: bool,
}

// SAFETY: the pointers are dereferenced only while the actor's future (or hook) is being polled,
// on the polling thread, which holds the actor's schedule: one thread at a time, ordered by the
// mailbox protocol like the rest of the actor's state.
unsafe impl<A: AsyncActor> Send for AsyncContext<A> {}
// SAFETY: as above; a shared reference reads nothing another thread could write meanwhile.
unsafe impl<A: AsyncActor> Sync for AsyncContext<A> {}

impl<A: AsyncActor> AsyncContext<A> {
    /// The running activation's context.
    fn context(&mut self) -> &mut Context<Async<A>> {
        // SAFETY: `current` points into the actor's block, alive as long as this context.
        let current = unsafe { self.current.as_ref() }.get();
        let current = current.expect("an AsyncContext is used only while its actor runs");
        // SAFETY: set by the adapter from the `&mut Context` of the activation now polling this
        // actor's future, which the adapter does not use until the poll returns; `&mut self`
        // keeps this the only reference handed out at a time.
        unsafe { &mut *current.as_ptr() }
    }

    /// This actor's id.
    pub fn id(&mut self) -> ActorId {
        self.context().id()
    }

    /// A reference to this actor.
    pub fn myself(&mut self) -> ActorRef<A::Msg> {
        self.context().myself()
    }

    /// Stops this actor once the current handler completes (its future returns), as
    /// [`Context::stop`] does once a sync handler returns. Messages still waiting are dead letters.
    pub fn stop(&mut self) {
        self.stop = true;
    }

    /// Spawns a child actor (see [`Context::spawn`]).
    pub fn spawn<B: Actor>(&mut self, actor: B) -> ActorRef<B::Msg> {
        self.context().spawn(actor)
    }

    /// Spawns a child actor with options (see [`Context::spawn_with`]).
    pub fn spawn_with<B: Actor>(&mut self, actor: B, options: SpawnOptions) -> ActorRef<B::Msg> {
        self.context().spawn_with(actor, options)
    }

    /// Sends a request built around a fresh [`ReplyTo`]; `.await` the [`Pending`] reply. A
    /// stopped target answers [`AskError::NoReply`](crate::AskError::NoReply) (and the message is
    /// dropped), as a request it dropped does.
    pub fn ask<M: Send + 'static, R: Send + 'static>(
        &mut self,
        target: &ActorRef<M>,
        make: impl FnOnce(ReplyTo<R>) -> M,
    ) -> Pending<R> {
        // No wait notice: the actor awaits, no thread blocks.
        let (reply, pending) = ask::oneshot();
        let _ = target.send(make(reply));
        pending
    }

    /// A future that completes once `delay` has passed (never earlier), on the clock the
    /// system's timers run on: under the simulation engine, virtual time. The timer starts now,
    /// belongs to this actor (cancelled if it stops) and is cancelled if the future is dropped.
    pub fn sleep(&mut self, delay: Duration) -> Sleep {
        let state = Arc::new(SleepState::default());
        let fired = Arc::clone(&state);
        let timer = self.context().arm_once(delay, move || fired.fire());
        Sleep { state, timer }
    }

    /// The time since the system started, on the clock its timers run on (see [`Context::now`]).
    pub fn now(&mut self) -> Duration {
        self.context().now()
    }

    /// Declares compute time for the simulation engine (see [`Context::charge`]).
    pub fn charge(&mut self, time: Duration) {
        self.context().charge(time)
    }

    /// The index of the worker polling this actor now (see [`Context::worker_index`]).
    pub fn worker_index(&mut self) -> Option<usize> {
        self.context().worker_index()
    }
}

/// The future [`AsyncContext::sleep`] returns.
pub struct Sleep {
    state: Arc<SleepState>,
    timer: TimerHandle,
}

#[derive(Default)]
struct SleepState {
    fired: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl SleepState {
    fn fire(&self) {
        self.fired.store(true, Release);
        if let Some(waker) = self.waker.lock().take() {
            waker.wake();
        }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        if self.state.fired.load(Acquire) {
            return Poll::Ready(());
        }
        *self.state.waker.lock() = Some(cx.waker().clone());
        // Fired between the test and the registration: its wake-up found no waker.
        if self.state.fired.load(Acquire) {
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        self.timer.cancel();
    }
}
