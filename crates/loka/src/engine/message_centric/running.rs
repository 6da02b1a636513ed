//! The gulp a worker is processing, as the handlers it runs reach it through their thread.
//!
//! A handler's letter to an actor of the very queue whose gulp its worker is processing is
//! *appended to that gulp* (no lock, no atomic operation) instead of being pushed on the queue
//! under its lock, up to a budget per gulp, its *room* (`throughput` letters, or the rest of a
//! longer visit's budget: `Worker::pass`). The queue is claimed
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
//!
//! An actor that follows a poster (the protocol: `follow.rs`, module docs) goes into the
//! poster's running gulp with its queued letters, ahead of anything posted to it after. As a
//! *sender*, though, it may have letters to actors of its new queue waiting
//! in that queue behind the running gulp (posted through the lock from its old queue); were its
//! next letters appended to the gulp, they would overtake those. So a move closes the running
//! gulp's room: for the rest of that gulp every letter to the queue goes through its lock,
//! behind the earlier ones, and from the next gulp on the argument above holds for the actor as
//! for any other sender of the queue.

use super::queue::{Buffer, MessageQueue};
use crate::runtime::letter::{LetterVtable, Payload, Rest};
use crate::runtime::{Letter, TaskRef};
use std::cell::{Cell, UnsafeCell};
use std::mem::MaybeUninit;
use std::ptr;
use std::ptr::NonNull;

/// How many letters ahead of the one being delivered a gulp prefetches its actor's cell: a miss
/// takes ~100 ns (a memory access), a delivery whose lines are cached a few tens, so a miss
/// issued four deliveries ahead has arrived when its letter's turn comes.
const PREFETCH_AHEAD: usize = 4;

/// The worker's gulp and which queue it came from.
pub(super) struct Running {
    /// The worker's index.
    worker: usize,
    /// The queue whose gulp is being processed (null between gulps).
    queue: Cell<*const MessageQueue>,
    /// Letters that may still be appended to the current gulp.
    room: Cell<usize>,
    /// Letters appended to the current gulp so far.
    appended: Cell<usize>,
    /// Letters moved into the current gulp from another queue with an actor that followed one
    /// of its handlers ([`Appender::push_moved`]): posted once already, so not counted as
    /// appended, but delivered by this gulp.
    moved: Cell<usize>,
    /// Letters the current gulp's handlers sent to its own queue once its room had run out
    /// (those before it were appended), and to other queues: whether its actors keep one
    /// another busy ([`Running::kept_to_itself`]). Counted on the locked path ([`note_queued`]):
    /// a letter that is appended costs nothing more.
    overflow: Cell<usize>,
    elsewhere: Cell<usize>,
    /// The current gulp, reached only through [`Running::with_local`] (one pop or push at a
    /// time, never across user code), so a handler's append or [`current_holds`] can reach it.
    /// Not a `RefCell`: its borrow flag cost two loads and two stores per letter, on the path
    /// that is this engine's point; debug builds check the same rule.
    local: UnsafeCell<Buffer>,
    /// Debug builds: whether `local` is being used now (a reentrant use panics).
    #[cfg(debug_assertions)]
    busy: Cell<bool>,
    /// Where a list queue's letter waits while it is delivered (a copy queue's letters are
    /// delivered in their slots).
    spare: UnsafeCell<MaybeUninit<Letter>>,
}

#[cfg(not(loom))]
thread_local! {
    /// The gulp of the worker running on this thread (null elsewhere). Const-initialised and
    /// without drop glue: reading it is one thread-pointer-relative load.
    static CURRENT: Cell<*const Running> = const { Cell::new(ptr::null()) };
}

#[cfg(loom)]
loom::thread_local! {
    /// The gulp of the worker running on this model thread (loom's threads share one OS
    /// thread, so a std thread-local would be shared by all of them).
    static CURRENT: Cell<*const Running> = Cell::new(ptr::null());
}

impl Running {
    pub(super) fn new(worker: usize, local: Buffer) -> Self {
        Running {
            worker,
            queue: Cell::new(ptr::null()),
            room: Cell::new(0),
            overflow: Cell::new(0),
            elsewhere: Cell::new(0),
            appended: Cell::new(0),
            moved: Cell::new(0),
            local: UnsafeCell::new(local),
            #[cfg(debug_assertions)]
            busy: Cell::new(false),
            spare: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// Runs `f` on the gulp's buffer. `f` must not run user code (a handler, a letter's drop) nor
    /// reach the buffer again: it is the only use of the buffer while it runs.
    #[inline]
    pub(super) fn with_local<R>(&self, f: impl FnOnce(&mut Buffer) -> R) -> R {
        #[cfg(debug_assertions)]
        assert!(
            !self.busy.replace(true),
            "the gulp's buffer used reentrantly"
        );
        // SAFETY: only this thread reaches `self` (the worker's own, or through `CURRENT` on its
        // thread), and `f` neither runs user code nor reaches the buffer (this method's contract,
        // checked in debug builds), so this is the only reference to the buffer while it lives.
        let r = f(unsafe { &mut *self.local.get() });
        #[cfg(debug_assertions)]
        self.busy.set(false);
        r
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
        self.moved.set(0);
        self.overflow.set(0);
        self.elsewhere.set(0);
    }

    /// Whether the last gulp, of `letters` letters in all (at least `room`, a room's worth),
    /// kept its work to itself: its handlers sent at least half as many letters as it held back
    /// to its own queue (a closed group whose letters make the next ones, not replies
    /// converging on one actor), and at most half as many to other queues as back to it (two
    /// in three of their letters stayed: not a producer feeding other queues, nor a group split
    /// evenly across workers). Read after [`end`](Self::end); the next
    /// [`begin`](Self::begin) resets the counts. A gulp of fewer letters is not looked at (one
    /// compare: a worker that gulps a letter at a time pays no more).
    #[inline]
    pub(super) fn kept_to_itself(&self, room: usize, letters: usize) -> bool {
        if letters < room {
            return false;
        }
        let stayed = self.appended.get() + self.overflow.get();
        2 * stayed >= letters && 2 * self.elsewhere.get() <= stayed
    }

    /// Takes the next letter of the gulp where it lies (`Buffer::pop_at`); the caller delivers
    /// it at once ([`Letter::deliver_at`]). Prefetches the cell of the letter
    /// [`PREFETCH_AHEAD`] places on (`Letter::prefetch`).
    #[inline]
    pub(super) fn pop_at(&self) -> Option<NonNull<Letter>> {
        self.with_local(|local| {
            let at = local.pop_at(self.spare.get());
            if let Buffer::Copy(q) = local {
                if let Some(ahead) = q.ahead(PREFETCH_AHEAD - 1) {
                    ahead.prefetch();
                }
            }
            at
        })
    }

    /// The gulp ends (or is being dropped at shutdown): nothing is appended any more. Returns
    /// how many letters were appended to it and how many were moved into it
    /// ([`Appender::push_moved`]).
    #[inline]
    pub(super) fn end(&self) -> (usize, usize) {
        self.queue.set(ptr::null());
        self.room.set(0);
        (self.appended.get(), self.moved.get())
    }
}

/// A delivery goes on with the next letters of the gulp while they are addressed to its actor
/// (a run: `ActorCell::receive_run`).
impl Rest for Running {
    #[inline]
    fn next_for(&self, task: TaskRef) -> Option<NonNull<Payload>> {
        self.with_local(|local| {
            local.pop_at_if(
                |next| next.task() == task && next.is_envelope(),
                self.spare.get(),
            )
        })
        .map(Letter::payload_of)
    }
}

/// The gulp this thread's worker is processing, when it is `queue`'s and has room for one more
/// letter: [`Appender::push`] appends to it. Checked before the letter moves, so a letter that
/// goes through the queue's lock instead is copied no more than before.
#[inline]
pub(super) fn appendable(queue: &MessageQueue) -> Option<Appender> {
    running_gulp_of(queue).filter(|gulp| gulp.room() != 0)
}

/// Counts, for [`Running::kept_to_itself`], a letter that a handler of the gulp running on this
/// thread sends through `queue`'s lock: to the gulp's own queue (its room has run out) or to
/// another. Called on the locked path only, so the append path (appended letters are counted
/// as the gulp grows) and its inlined code stay as they were: counted there, threadring lost
/// 3–5% at 2 workers.
#[inline]
pub(super) fn note_queued(queue: &MessageQueue) {
    with_current(|r| {
        let running = r.queue.get();
        if ptr::eq(running, queue) {
            r.overflow.set(r.overflow.get() + 1);
        } else if !running.is_null() {
            r.elsewhere.set(r.elsewhere.get() + 1);
        }
        None::<()>
    });
}

/// `f` on the gulp of the worker running on this thread; `None` on any other thread.
#[inline]
fn with_current<R>(f: impl FnOnce(&Running) -> Option<R>) -> Option<R> {
    let running = CURRENT.with(Cell::get);
    if running.is_null() {
        return None;
    }
    // SAFETY: non-null only while the worker that installed it runs on this thread and keeps it
    // in place (`Running::install`); only this thread reaches it.
    f(unsafe { &*running })
}

/// The queue whose gulp this thread's worker is processing, while that gulp holds fewer than
/// `letters` letters still to deliver.
#[inline]
pub(super) fn running_queue_below(letters: usize) -> Option<*const MessageQueue> {
    current_gulp().and_then(|g| (g.left() < letters).then_some(g.queue()))
}

/// The gulp this thread's worker is processing (room or not); `None` between gulps and on
/// other threads.
#[inline]
pub(super) fn current_gulp() -> Option<Appender> {
    with_current(|r| (!r.queue.get().is_null()).then_some(Appender(r)))
}

/// The gulp this thread's worker is processing, when it is `queue`'s (room or not).
#[inline]
pub(super) fn running_gulp_of(queue: &MessageQueue) -> Option<Appender> {
    with_current(|r| ptr::eq(r.queue.get(), queue).then_some(Appender(r)))
}

/// Appends to the running gulp of this thread ([`appendable`]). Not `Send`: used at once, on the
/// thread that found it.
pub(super) struct Appender(*const Running);

impl Appender {
    /// The worker processing the gulp.
    pub(super) fn worker(&self) -> usize {
        self.running().worker
    }

    /// The queue it gulped.
    pub(super) fn queue(&self) -> *const MessageQueue {
        self.running().queue.get()
    }

    /// Letters of the gulp still to deliver. Called from a spawn or a post, which run no code
    /// inside `with_local`.
    fn left(&self) -> usize {
        self.running().with_local(|local| local.len())
    }

    /// Appends `letter`. The caller has checked that its addressee has not closed: the addressee
    /// is an actor of the gulp being processed on this thread, whose closed flag is written only
    /// by this thread (when the actor stops, during this gulp) or by an earlier holder of the
    /// queue's `being_processed` flag (ordered by that flag's Release/Acquire), so a Relaxed load
    /// reads the latest value.
    #[inline]
    pub(super) fn push(self, letter: Letter) {
        let running = self.running();
        running.room.set(running.room.get() - 1);
        self.append(|local| local.push(letter));
    }

    /// Reserves the place of one more letter at the end of the gulp, to be written at once
    /// ([`Letter::write_at`]); `None` for a list buffer. The caller has checked the addressee as
    /// for [`push`](Self::push).
    #[inline]
    pub(super) fn reserve(self) -> Option<NonNull<Letter>> {
        let running = self.running();
        // SAFETY: the caller writes the letter at once (`Slot::At`'s contract), before any other
        // use of the buffer.
        let at = running.with_local(|local| unsafe { local.reserve_slot() })?;
        running.room.set(running.room.get() - 1);
        running.appended.set(running.appended.get() + 1);
        Some(at)
    }

    /// Appends `task`'s release letter whatever the room left (one per actor).
    #[inline]
    pub(super) fn push_release(self, task: TaskRef, release: &'static LetterVtable) {
        self.append(|local| local.push_release(task, release));
    }

    /// Adds one letter to the gulp with `push` (counted as appended), whatever the room left.
    #[inline]
    fn append(&self, push: impl FnOnce(&mut Buffer)) {
        let running = self.running();
        running.appended.set(running.appended.get() + 1);
        running.with_local(push);
    }

    /// Moves `task`'s letters out of `from` (another queue's buffer, under its lock) into the
    /// gulp, in order and whatever the room left: the queued letters of an actor that follows a
    /// handler of this gulp (`follow::follow_target`). They were counted when posted, so they
    /// are not counted as appended. Returns how many moved.
    pub(super) fn take_letters(&self, from: &mut Buffer, task: TaskRef) -> usize {
        let running = self.running();
        let moved = running.with_local(|local| from.move_out(task, |letter| local.push(letter)));
        running.moved.set(running.moved.get() + moved);
        moved
    }

    /// No more letters join this gulp: the rest go to the queue, as once the budget has run out.
    pub(super) fn close_room(&self) {
        self.running().room.set(0);
    }

    fn room(&self) -> usize {
        self.running().room.get()
    }

    fn running(&self) -> &Running {
        // SAFETY: as in `with_current`, through which `self` was made on this thread; the worker
        // keeps the gulp in place until it installs another.
        unsafe { &*self.0 }
    }
}

/// Whether the gulp being processed on this thread still holds a letter to `task`. Called from
/// a handler, never from inside `with_local`.
pub(super) fn current_holds(task: TaskRef) -> bool {
    with_current(|r| Some(r.with_local(|buffer| buffer.holds(task)))).unwrap_or(false)
}

#[cfg(all(test, not(loom)))]
#[path = "running_tests.rs"]
mod tests;
