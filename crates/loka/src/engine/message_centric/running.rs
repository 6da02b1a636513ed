//! The gulp a worker is processing, as the handlers it runs reach it through their thread.
//!
//! A handler's letter to an actor of the very queue whose gulp its worker is processing is
//! *appended to that gulp* (no lock, no atomic operation) instead of being pushed on the queue
//! under its lock, up to a budget per gulp (`throughput` letters). The queue is claimed
//! (`being_processed`) by this worker for the whole gulp, so nobody else can deliver to its actors
//! meanwhile, and the letter is delivered later in the same gulp.
//!
//! Per-sender FIFO holds: a sender of this queue runs only while the queue is processed, so all
//! its letters to an actor of the same queue are appended until the gulp's budget runs out, and
//! from then on, for the rest of the gulp, all of them go to the queue (gulped after this gulp
//! ends). Letters in the queue were posted before the gulp took the queue's contents or after the
//! budget ran out: none of them can be overtaken by an appended letter of the same sender. A
//! letter from any other sender (another queue's actor, a plain thread, a timer) goes through the
//! queue's lock as before.

use super::queue::{Buffer, MessageQueue};
use crate::runtime::letter::Rest;
use crate::runtime::{Letter, TaskRef};
use std::cell::{Cell, RefCell};
use std::ptr;

/// The worker's gulp and which queue it came from.
pub(super) struct Running {
    /// The queue whose gulp is being processed (null between gulps).
    queue: Cell<*const MessageQueue>,
    /// Letters that may still be appended to the current gulp.
    room: Cell<usize>,
    /// Letters appended to the current gulp so far.
    appended: Cell<usize>,
    /// The current gulp. Borrowed only briefly (one pop or push at a time, never across user
    /// code), so a handler's append or [`current_holds`] can reach it.
    pub(super) local: RefCell<Buffer>,
}

thread_local! {
    /// The gulp of the worker running on this thread (null elsewhere). Const-initialised and
    /// without drop glue: reading it is one thread-pointer-relative load.
    static CURRENT: Cell<*const Running> = const { Cell::new(ptr::null()) };
}

impl Running {
    pub(super) fn new(local: Buffer) -> Self {
        Running {
            queue: Cell::new(ptr::null()),
            room: Cell::new(0),
            appended: Cell::new(0),
            local: RefCell::new(local),
        }
    }

    /// Makes this the gulp that handlers on this thread reach (`None`: no worker runs here).
    ///
    /// The caller keeps `self` in place and alive until it installs `None`.
    pub(super) fn install(this: Option<&Running>) {
        CURRENT.with(|c| c.set(this.map_or(ptr::null(), |r| r as *const Running)));
    }

    /// A gulp of `queue` starts: handlers may append up to `room` letters to it.
    #[inline]
    pub(super) fn begin(&self, queue: &MessageQueue, room: usize) {
        self.queue.set(queue);
        self.room.set(room);
        self.appended.set(0);
    }

    /// The gulp ends (or is being dropped at shutdown): nothing is appended any more. Returns
    /// how many letters were appended to it.
    #[inline]
    pub(super) fn end(&self) -> usize {
        self.queue.set(ptr::null());
        self.room.set(0);
        self.appended.get()
    }
}

/// A delivery goes on with the next letters of the gulp while they are addressed to its actor
/// (a run: `ActorCell::receive_run`).
impl Rest for Running {
    #[inline]
    fn next_for(&self, task: TaskRef) -> Option<Letter> {
        self.local
            .borrow_mut()
            .pop_if(|next| next.task() == task && next.is_envelope())
    }
}

/// Appends `letter` to the gulp this thread's worker is processing if that gulp is `queue`'s and
/// has room; otherwise hands it back. `closed` is the addressee's closed flag, read only when
/// appending: then the addressee is an actor of the gulp being processed on this thread, whose
/// flag is written only by this thread (when the actor stops, during this gulp) or by an earlier
/// holder of the queue's `being_processed` flag (ordered by that flag's Release/Acquire).
#[inline]
pub(super) fn append(
    queue: &MessageQueue,
    letter: Letter,
    closed: impl FnOnce() -> bool,
) -> Result<Result<(), Letter>, Letter> {
    let running = CURRENT.with(Cell::get);
    if running.is_null() {
        return Err(letter);
    }
    // SAFETY: non-null only while the worker that installed it runs on this thread and keeps it
    // in place (`Running::install`); only this thread reaches it.
    let running = unsafe { &*running };
    let room = running.room.get();
    if !ptr::eq(running.queue.get(), queue) || room == 0 {
        return Err(letter);
    }
    if closed() {
        return Ok(Err(letter));
    }
    running.room.set(room - 1);
    running.appended.set(running.appended.get() + 1);
    running.local.borrow_mut().push(letter);
    Ok(Ok(()))
}

/// Whether the gulp being processed on this thread still holds a letter to `task`.
pub(super) fn current_holds(task: TaskRef) -> bool {
    let running = CURRENT.with(Cell::get);
    // SAFETY: as in `append`.
    !running.is_null()
        && unsafe { &*running }
            .local
            .try_borrow()
            .is_ok_and(|buffer| buffer.holds(task))
}
