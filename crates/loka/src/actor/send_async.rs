//! [`SendAsync`]: a send that waits for room in a bounded mailbox
//! ([`ActorRef::send_async`](super::ActorRef::send_async)).

use super::{ActorRef, SendError, SendErrorReason, TrySendError};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, Wake, Waker};

/// The future of [`ActorRef::send_async`]: completes once the message is queued, or with
/// [`SendErrorReason::Stopped`] and the message if the actor stops first.
///
/// It waits by registering its waker with the actor's mailbox; the actor wakes one waiting
/// sender each time it takes a message out, and all of them when it stops. Dropping the future
/// before it completes drops the message (it was never queued) and hands any wake-up it had
/// received to the next waiting sender.
#[must_use = "a future does nothing unless polled: `.await` it (a plain thread calls `ActorRef::send_blocking` instead)"]
pub struct SendAsync<'a, M: Send + 'static> {
    target: &'a ActorRef<M>,
    message: Option<M>,
    /// The waiter registration while waiting for room.
    key: Option<u64>,
}

// The message is only ever moved, never pinned: the future may move between polls.
impl<M: Send + 'static> Unpin for SendAsync<'_, M> {}

impl<'a, M: Send + 'static> SendAsync<'a, M> {
    pub(super) fn new(target: &'a ActorRef<M>, message: M) -> Self {
        SendAsync {
            target,
            message: Some(message),
            key: None,
        }
    }

    /// Done with the waiter registration: the room it waited for was used (or the actor stopped).
    fn finish(&mut self) {
        if let Some(key) = self.key.take() {
            self.target.cell().unregister_waiter(key, false);
        }
    }

    fn stopped(&mut self, message: M) -> Poll<Result<(), SendError<M>>> {
        self.finish();
        Poll::Ready(Err(SendError {
            actor: self.target.id(),
            message,
            reason: SendErrorReason::Stopped,
        }))
    }
}

impl<M: Send + 'static> Future for SendAsync<'_, M> {
    type Output = Result<(), SendError<M>>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let mut message = this
            .message
            .take()
            .expect("SendAsync polled after it completed");
        let cell = this.target.cell();
        loop {
            match cell.try_deliver(message, false) {
                Ok(()) => {
                    this.finish();
                    return Poll::Ready(Ok(()));
                }
                Err(TrySendError::Stopped(m)) => return this.stopped(m),
                Err(TrySendError::Full(m)) => message = m,
            }
            // Register, then look again (inside `register_waiter`, atomically with the room
            // check): a release that happened in between is never missed.
            if !cell.register_waiter(&mut this.key, cx.waker()) {
                continue;
            }
            // A stop after the registration wakes us; one before it is seen here.
            if cell.is_stopped() {
                return this.stopped(message);
            }
            this.message = Some(message);
            return Poll::Pending;
        }
    }
}

impl<M: Send + 'static> Drop for SendAsync<'_, M> {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            // Given up while waiting: a wake-up already received goes to the next waiter.
            self.target.cell().unregister_waiter(key, true);
        }
    }
}

impl<M: Send + 'static> fmt::Debug for SendAsync<'_, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SendAsync")
            .field("actor", &self.target.id())
            .field("waiting", &self.key.is_some())
            .finish_non_exhaustive()
    }
}

/// The future of [`ActorRef::ask_async`]: waits for room as [`SendAsync`] does, then completes
/// with the [`Pending`](super::Pending) reply; with [`SendErrorReason::Stopped`] and the request
/// if the actor stops first.
#[must_use = "a future does nothing unless polled: `.await` it"]
pub struct AskAsync<'a, M: Send + 'static, R> {
    pub(super) send: SendAsync<'a, M>,
    /// Handed out once the request is queued.
    pub(super) pending: Option<super::Pending<R>>,
}

impl<M: Send + 'static, R> Unpin for AskAsync<'_, M, R> {}

impl<M: Send + 'static, R> Future for AskAsync<'_, M, R> {
    type Output = Result<super::Pending<R>, SendError<M>>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        match Pin::new(&mut this.send).poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(refused)) => Poll::Ready(Err(refused)),
            Poll::Ready(Ok(())) => Poll::Ready(Ok(this
                .pending
                .take()
                .expect("AskAsync polled after it completed"))),
        }
    }
}

impl<M: Send + 'static, R> fmt::Debug for AskAsync<'_, M, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AskAsync")
            .field("target", &self.send.target.id())
            .finish_non_exhaustive()
    }
}

/// Wakes a parked thread: the waker of [`block_on`].
struct Unpark(std::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Drives `future` on the calling thread: polls it, and between polls parks the thread until its
/// waker unparks it (a spurious unpark only costs a poll). `before_park` runs before each park.
pub(super) fn block_on<F: Future>(future: F, before_park: impl Fn()) -> F::Output {
    let mut future = std::pin::pin!(future);
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = TaskContext::from_waker(&waker);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        before_park();
        std::thread::park();
    }
}
