//! Request/reply: [`ReplyTo`] travels inside a request; the reply reaches either a waiting thread
//! ([`Pending`]) or the asking actor as a continuation (see [`super::Context::ask`]).

use parking_lot::{Condvar, Mutex};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::{Duration, Instant};

/// Why a request got no reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AskError {
    /// The request was dropped without a reply: the receiver stopped, panicked, or discarded the
    /// [`ReplyTo`].
    #[error("the request was dropped without a reply (the actor stopped, panicked or ignored it)")]
    NoReply,
    /// [`Pending::wait_timeout`] ran out of time.
    #[error("no reply within {0:?}")]
    Timeout(Duration),
}

pub(crate) type Deliver<R> = Box<dyn FnOnce(Result<R, AskError>) + Send>;

/// The right (and duty) to answer one request. Dropping it unanswered tells the asker
/// [`AskError::NoReply`], so an ask can never hang on a request that was lost.
///
/// With the feature `remote` a `ReplyTo` whose reply type is serialisable travels inside a
/// message to another node (docs/remote.md): the reply then finds its way back over the wire.
pub struct ReplyTo<R> {
    /// Taken once: by the reply, by the drop (no reply), or, with the feature `remote`, by the
    /// serialisation that sends the right to answer to another node (through `&self`, hence
    /// the cell: a `ReplyTo` is `Send`, never shared).
    deliver: std::cell::Cell<Option<Deliver<R>>>,
}

impl<R> ReplyTo<R> {
    pub(crate) fn new(deliver: impl FnOnce(Result<R, AskError>) + Send + 'static) -> Self {
        ReplyTo {
            deliver: std::cell::Cell::new(Some(Box::new(deliver))),
        }
    }

    /// The delivery, taken out: nothing happens at the drop any more.
    #[cfg(feature = "remote")]
    pub(crate) fn take_delivery(&self) -> Option<Deliver<R>> {
        self.deliver.take()
    }

    /// Sends the reply. If the asker is gone the reply is dropped.
    pub fn send(self, reply: R) {
        if let Some(deliver) = self.deliver.take() {
            deliver(Ok(reply));
        }
    }
}

impl<R> Drop for ReplyTo<R> {
    fn drop(&mut self) {
        if let Some(deliver) = self.deliver.take() {
            deliver(Err(AskError::NoReply));
        }
    }
}

impl<R> fmt::Debug for ReplyTo<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ReplyTo")
    }
}

struct Slot<R> {
    value: Option<Result<R, AskError>>,
    waker: Option<Waker>,
}

struct Shared<R> {
    slot: Mutex<Slot<R>>,
    ready: Condvar,
}

/// A reply that has not arrived yet: [`wait`](Pending::wait) for it from a plain thread, or
/// `.await` it in any async executor.
pub struct Pending<R> {
    shared: Arc<Shared<R>>,
    /// The runtime to tell when a thread starts waiting, if its engine wants to know (the
    /// simulation runs only when someone waits).
    pub(crate) notify: Option<Arc<crate::runtime::Runtime>>,
}

impl<R> fmt::Debug for Pending<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Pending")
    }
}

/// A one-shot channel for a reply to a plain thread or a future.
pub(crate) fn oneshot<R: Send + 'static>() -> (ReplyTo<R>, Pending<R>) {
    let shared = Arc::new(Shared {
        slot: Mutex::new(Slot {
            value: None,
            waker: None,
        }),
        ready: Condvar::new(),
    });
    let producer = Arc::clone(&shared);
    let reply = ReplyTo::new(move |value| {
        let waker = {
            let mut slot = producer.slot.lock();
            slot.value = Some(value);
            slot.waker.take()
        };
        producer.ready.notify_all();
        if let Some(waker) = waker {
            waker.wake();
        }
    });
    (
        reply,
        Pending {
            shared,
            notify: None,
        },
    )
}

/// [`oneshot`], plus a probe saying whether the [`Pending`] was dropped: a reply that can wait
/// long (a death watch) lets its holder forget it once nobody waits.
pub(crate) fn oneshot_probed<R: Send + 'static>(
) -> (ReplyTo<R>, Pending<R>, impl Fn() -> bool + Send + 'static) {
    let (reply, pending) = oneshot();
    let shared = Arc::downgrade(&pending.shared);
    // The reply's closure holds one strong reference, the `Pending` the other.
    (reply, pending, move || shared.strong_count() < 2)
}

impl<R> Pending<R> {
    /// Tells the engine, if it wants to know, that a thread waits for this reply.
    fn announce_wait(&self) {
        if let Some(runtime) = &self.notify {
            runtime.core().waiting();
        }
    }

    /// Blocks the calling thread until the reply arrives. Do not call this from inside an actor
    /// handler: it would hold a worker; use [`super::Context::ask`] there.
    pub fn wait(self) -> Result<R, AskError> {
        self.announce_wait();
        let mut slot = self.shared.slot.lock();
        loop {
            if let Some(value) = slot.value.take() {
                return value;
            }
            self.shared.ready.wait(&mut slot);
        }
    }

    /// Like [`wait`](Pending::wait), giving up after `timeout`: [`Duration::ZERO`] only takes a
    /// reply already there, and a `timeout` too long for the clock to count (`Duration::MAX`)
    /// waits as [`wait`](Pending::wait) does, with no deadline.
    pub fn wait_timeout(self, timeout: Duration) -> Result<R, AskError> {
        self.announce_wait();
        let deadline = deadline_after(timeout);
        let mut slot = self.shared.slot.lock();
        loop {
            if let Some(value) = slot.value.take() {
                return value;
            }
            if wait_until(&self.shared.ready, &mut slot, deadline) {
                return slot.value.take().unwrap_or(Err(AskError::Timeout(timeout)));
            }
        }
    }
}

/// When a wait of `timeout` from now ends; `None` when that is past the end of the clock
/// (`Instant` cannot hold it): no deadline. `Instant + Duration::MAX` panicked with "overflow
/// when adding duration to instant"; a caller passing it means "wait as long as it takes", as
/// with std's and tokio's timeouts.
fn deadline_after(timeout: Duration) -> Option<Instant> {
    Instant::now().checked_add(timeout)
}

/// Waits on `ready` until notified or `deadline` (`None`: no deadline); whether it timed out.
fn wait_until<T>(
    ready: &Condvar,
    guard: &mut parking_lot::MutexGuard<'_, T>,
    deadline: Option<Instant>,
) -> bool {
    match deadline {
        Some(deadline) => ready.wait_until(guard, deadline).timed_out(),
        None => {
            ready.wait(guard);
            false
        }
    }
}

impl<R> Pending<R> {
    /// Waits up to `timeout` for the reply without giving up the `Pending`: `Some` with the
    /// reply (or [`AskError::NoReply`]) once it has arrived, `None` if it has not yet. Lets a
    /// thread wait in slices and look at something else in between (progress, a deadline, whether
    /// the system went idle without answering). [`Duration::ZERO`] only looks; a `timeout` too
    /// long for the clock to count (`Duration::MAX`) waits with no deadline, until the reply.
    pub fn wait_for(&self, timeout: Duration) -> Option<Result<R, AskError>> {
        self.announce_wait();
        let deadline = deadline_after(timeout);
        let mut slot = self.shared.slot.lock();
        loop {
            if let Some(value) = slot.value.take() {
                return Some(value);
            }
            if wait_until(&self.shared.ready, &mut slot, deadline) {
                return slot.value.take();
            }
        }
    }
}

impl<R> Future for Pending<R> {
    type Output = Result<R, AskError>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        self.announce_wait();
        let mut slot = self.shared.slot.lock();
        match slot.value.take() {
            Some(value) => Poll::Ready(value),
            None => {
                slot.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reply_reaches_waiting_thread() {
        let (reply, pending) = oneshot::<u32>();
        std::thread::spawn(move || reply.send(7));
        assert_eq!(pending.wait(), Ok(7));
    }

    #[test]
    fn dropped_reply_to_reports_no_reply() {
        let (reply, pending) = oneshot::<u32>();
        drop(reply);
        assert_eq!(pending.wait(), Err(AskError::NoReply));
    }

    #[test]
    fn wait_for_keeps_the_pending_until_the_reply_arrives() {
        let (reply, pending) = oneshot::<u32>();
        assert_eq!(pending.wait_for(Duration::from_millis(1)), None);
        reply.send(9);
        assert_eq!(pending.wait_for(Duration::from_millis(1)), Some(Ok(9)));
    }

    /// A reply some time after a wait of `Duration::MAX` began (it panicked with "overflow when
    /// adding duration to instant"), and a zero wait that only looks.
    #[test]
    fn wait_timeout_of_duration_max_has_no_deadline_and_zero_only_looks() {
        let (reply, pending) = oneshot::<u32>();
        let replier = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            reply.send(7);
        });
        assert_eq!(pending.wait_timeout(Duration::MAX), Ok(7));
        replier.join().unwrap();
        let (_reply, pending) = oneshot::<u32>();
        assert_eq!(
            pending.wait_timeout(Duration::ZERO),
            Err(AskError::Timeout(Duration::ZERO))
        );
        let (reply, pending) = oneshot::<u32>();
        reply.send(8);
        assert_eq!(pending.wait_timeout(Duration::ZERO), Ok(8));
    }

    /// As above, for `wait_for`.
    #[test]
    fn wait_for_of_duration_max_has_no_deadline_and_zero_only_looks() {
        let (reply, pending) = oneshot::<u32>();
        assert_eq!(pending.wait_for(Duration::ZERO), None);
        let replier = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            reply.send(9);
        });
        assert_eq!(pending.wait_for(Duration::MAX), Some(Ok(9)));
        replier.join().unwrap();
        assert_eq!(pending.wait_for(Duration::ZERO), None, "taken already");
    }

    #[test]
    fn wait_timeout_expires() {
        let (_reply, pending) = oneshot::<u32>();
        let timeout = Duration::from_millis(5);
        assert_eq!(
            pending.wait_timeout(timeout),
            Err(AskError::Timeout(timeout))
        );
    }
}
