//! [`Context::pipe`]: an actor awaits a future and handles its output like a message.
//!
//! The actor polls its own future; no executor is involved. A pipe is one [`PipeTask`] in an
//! `Arc`: the future (stored inline, pinned because the `Arc` never moves it), the continuation,
//! and a [`Hold`] on the actor (a strong reference to its cell plus one handle, so the actor
//! cannot stop as unreferenced while it waits). The task is the future's [`Waker`]: a wake-up
//! enqueues one `Envelope::Call` that polls the future again inside an activation of the actor,
//! with its state at hand; when the poll returns `Ready`, the continuation runs right there. The
//! actor's cell keeps every pending task (`runtime/cell/pipes.rs`) and drops them when it stops.
//!
//! The first poll happens inside `pipe` itself, on the handler's activation: the future starts at
//! once (a connect is issued while the handler runs, not after the mailbox drains), and a future
//! that is pending costs no envelope until it is woken. A future ready at that first poll cannot
//! run its continuation there (the handler holds the state), so its continuation is queued at the
//! back of the mailbox: the same place a queued first poll would have had, and so the same
//! ordering rule (docs/futures.md).

use super::{Actor, Context};
use crate::runtime::cell::{ActorCell, Envelope, Piped};
use crate::runtime::Shared;
use crate::sync::AtomicU8;
use parking_lot::Mutex;
use std::cell::UnsafeCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering::AcqRel;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, Wake, Waker};

/// A poll of the future is queued in the actor's mailbox (wake-ups until it runs queue nothing).
const QUEUED: u8 = 1;
/// The future completed, or the actor stopped and dropped it: never poll it again.
const DONE: u8 = 2;

impl<A: Actor> Context<A> {
    /// Runs `future` and, when it completes, runs `then` with this actor's state and its output,
    /// like a message: in the mailbox's order with the actor's other messages, never
    /// concurrently with its handler. The worker is never blocked; the actor polls the future
    /// itself, once here and once more per wake-up (each wake-up is one envelope).
    ///
    /// Ordering: a future ready at once (at the poll inside `pipe`) has its continuation queued
    /// behind the messages already in the mailbox, and before anything sent after `pipe`
    /// returns; a future that completes later runs its continuation at the place of the poll its
    /// last wake-up queued: after the messages enqueued before that wake-up, before those
    /// enqueued after it.
    ///
    /// While a future is pending the actor stays alive even with no [`crate::ActorRef`] left (it
    /// stops as unreferenced once the future has completed). If the actor stops first, its
    /// pending futures are dropped, never polled again, and their continuations do not run; a
    /// future piped from [`Actor::stopped`] never completes. A panic while polling the future is
    /// a panic of the actor, reported like a handler's.
    ///
    /// Under the `tokio` feature, with `SystemBuilder::tokio_handle`, every poll runs
    /// inside that runtime's context, so `tokio::net` and `tokio::time` work (docs/futures.md).
    ///
    /// ```
    /// use loka::{Actor, Context, ReplyTo, System};
    ///
    /// struct Doubler;
    /// impl Actor for Doubler {
    ///     type Msg = (u32, ReplyTo<u32>);
    ///     fn handle(&mut self, ctx: &mut Context<Self>, (n, reply): Self::Msg) {
    ///         // Any `Future + Send`: I/O, a timer, a reply from another executor.
    ///         ctx.pipe(async move { n * 2 }, |_me, _ctx, doubled| reply.send(doubled));
    ///     }
    /// }
    ///
    /// let system = System::builder().workers(1).build().unwrap();
    /// let doubler = system.spawn(Doubler);
    /// assert_eq!(doubler.ask(|reply| (21, reply)).unwrap().wait().unwrap(), 42);
    /// ```
    pub fn pipe<F, K>(&mut self, future: F, then: K)
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
        K: FnOnce(&mut A, &mut Context<A>, F::Output) + Send + 'static,
    {
        let inner = self.inner_mut();
        let cell = inner.cell_arc();
        // Waiting keeps the actor referenced, as a pending `ask` does.
        cell.acquire_handle();
        // SAFETY: a handler runs in its actor's activation, which holds the schedule; the set is
        // borrowed only for these two calls.
        let pipes = unsafe { cell.pipes() };
        let index = pipes.next_index();
        let task = Arc::new(PipeTask {
            state: AtomicU8::new(0),
            index,
            hold: Mutex::new(Some(Hold(Arc::clone(&cell)))),
            future: UnsafeCell::new(Some(future)),
            then: UnsafeCell::new(Some(then)),
        });
        pipes.insert(index, Arc::clone(&task) as Arc<dyn Piped>);
        // SAFETY: we run in the actor's activation.
        let Some(output) = (unsafe { task.poll_once(&inner.runtime().shared) }) else {
            return;
        };
        // SAFETY: as above; the future has just completed.
        let (then, hold) = unsafe { task.finish() };
        // Rejected only when called from `stopped`: the continuation and its hold are dropped.
        // Behind every message already queued, whoever sent it (under the message-centric
        // engine a handler's own letter may otherwise join the running gulp ahead of them).
        let _ = cell.enqueue_after_queued(Envelope::Call(Box::new(move |actor, ctx| {
            then(actor, ctx, output);
            drop(hold);
        })));
    }
}

/// What a pending future holds of its actor: a strong reference to the cell (to enqueue polls)
/// and one handle (so the actor does not stop as unreferenced). Dropping it releases both.
struct Hold<A: Actor>(Arc<ActorCell<A>>);

impl<A: Actor> Drop for Hold<A> {
    fn drop(&mut self) {
        self.0.release_handle();
    }
}

/// One piped future: its waker, its continuation, its hold on the actor.
struct PipeTask<A: Actor, F: Future, K> {
    /// [`QUEUED`] and [`DONE`].
    state: AtomicU8,
    /// Its slot in the actor's set of pending pipes.
    index: usize,
    /// Taken when the future completes or the actor stops. A lock (uncontended) rather than the
    /// actor's exclusivity: wakers read it from any thread. Never held while polling or
    /// enqueueing, so a future that wakes itself, or an inline run, cannot deadlock on it.
    hold: Mutex<Option<Hold<A>>>,
    /// Touched only by the actor's activation (or `terminate`); dropped in place, never moved.
    future: UnsafeCell<Option<F>>,
    /// As `future`.
    then: UnsafeCell<Option<K>>,
}

// SAFETY: `future` and `then` are touched only by the actor's activation or termination, one
// thread at a time (the mailbox protocol), so they need `Send` only; the rest is `Sync`.
unsafe impl<A: Actor, F: Future + Send, K: Send> Send for PipeTask<A, F, K> {}
// SAFETY: as above.
unsafe impl<A: Actor, F: Future + Send, K: Send> Sync for PipeTask<A, F, K> {}

impl<A, F, K> PipeTask<A, F, K>
where
    A: Actor,
    F: Future + Send + 'static,
    K: FnOnce(&mut A, &mut Context<A>, F::Output) + Send + 'static,
{
    /// Polls the future once; its output if it completed.
    ///
    /// # Safety
    /// Called from the actor's activation.
    unsafe fn poll_once(self: &Arc<Self>, shared: &Shared) -> Option<F::Output> {
        // Cleared before polling, so a wake-up during or after this poll queues another one.
        if self.state.fetch_and(!QUEUED, AcqRel) & DONE != 0 {
            return None;
        }
        // SAFETY: only the actor's activation touches the future (the caller's contract).
        let slot = unsafe { &mut *self.future.get() };
        // SAFETY: the future lives in the `Arc` and is dropped in place (`*slot = None`), never
        // moved, so it stays pinned.
        let future = unsafe { Pin::new_unchecked(slot.as_mut()?) };
        let waker = Waker::from(Arc::clone(self));
        let mut cx = TaskContext::from_waker(&waker);
        match enter(shared, || future.poll(&mut cx)) {
            Poll::Ready(output) => {
                *slot = None;
                Some(output)
            }
            Poll::Pending => None,
        }
    }

    /// The future completed: leave the actor's set and hand over the continuation and the hold
    /// (dropped once the continuation has run, even if it panics).
    ///
    /// # Safety
    /// Called from the actor's activation, once, after `poll_once` returned the output.
    unsafe fn finish(&self) -> (K, Hold<A>) {
        self.state.fetch_or(DONE, AcqRel);
        let hold = self
            .hold
            .lock()
            .take()
            .expect("held until finished or cancelled");
        // SAFETY: the caller's contract: we run in the actor's activation.
        let _ = unsafe { hold.0.pipes() }.remove(self.index);
        // SAFETY: as above.
        let then = unsafe { (*self.then.get()).take() }.expect("taken once");
        (then, hold)
    }

    /// A queued poll runs: poll, and on completion run the continuation here.
    fn run(self: Arc<Self>, actor: &mut A, ctx: &mut Context<A>) {
        // SAFETY: a `Call` runs in the actor's activation.
        let Some(output) = (unsafe { self.poll_once(&ctx.inner_mut().runtime().shared) }) else {
            return;
        };
        // SAFETY: as above; the future has just completed.
        let (then, hold) = unsafe { self.finish() };
        then(actor, ctx, output);
        drop(hold);
    }

    /// A wake-up: queue one poll unless one is queued already or the future is done.
    fn queue_poll(self: Arc<Self>) {
        if self.state.fetch_or(QUEUED, AcqRel) & (QUEUED | DONE) != 0 {
            return;
        }
        // The lock is released before enqueueing: an inline run of the actor may poll (and wake).
        let Some(cell) = self.hold.lock().as_ref().map(|hold| Arc::clone(&hold.0)) else {
            return;
        };
        // Rejected once the actor has stopped: the poll is dropped with the envelope.
        // After the messages enqueued before this wake-up, whoever sent them (as above).
        let _ = cell.enqueue_after_queued(Envelope::Call(Box::new(move |actor, ctx| {
            self.run(actor, ctx)
        })));
    }
}

impl<A, F, K> Wake for PipeTask<A, F, K>
where
    A: Actor,
    F: Future + Send + 'static,
    K: FnOnce(&mut A, &mut Context<A>, F::Output) + Send + 'static,
{
    fn wake(self: Arc<Self>) {
        self.queue_poll();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        Arc::clone(self).queue_poll();
    }
}

impl<A, F, K> Piped for PipeTask<A, F, K>
where
    A: Actor,
    F: Future + Send + 'static,
    K: Send,
{
    unsafe fn cancel(&self) {
        self.state.fetch_or(DONE, AcqRel);
        // Taken first: if dropping the future panics, the hold is still released (unwinding).
        let hold = self.hold.lock().take();
        // SAFETY: the caller's contract: we may touch the actor's state.
        unsafe {
            *self.then.get() = None;
            *self.future.get() = None;
        }
        drop(hold);
    }
}

/// Runs one poll of a piped future inside the system's Tokio runtime, if it has one, so Tokio
/// resources the future creates or polls register with that runtime's reactor and timer.
#[cfg(feature = "tokio")]
fn enter<R>(shared: &Shared, poll: impl FnOnce() -> R) -> R {
    let _runtime = shared.tokio.as_ref().map(tokio::runtime::Handle::enter);
    poll()
}

/// Runs one poll of a piped future (nothing to enter without the `tokio` feature).
#[cfg(not(feature = "tokio"))]
#[inline(always)]
fn enter<R>(_: &Shared, poll: impl FnOnce() -> R) -> R {
    poll()
}
