//! How a letter reaches its actor's queue: appended to the running gulp of this thread's worker
//! when the actor is one of its queue's (no lock), else written into the queue under its lock
//! (`queued_slot`, kept until `LetterQueues::finish_post`) or sealed there (`post_locked`). Under
//! the lock a post checks that the actor has not closed and, while actors follow, that it is
//! still bound to this queue; if it moved, the post starts over with its new queue. The steps,
//! locks and argument of that protocol are in `follow.rs`'s module docs.

use super::follow::{admit_following, Admit, FollowSite};
use super::queue::{self, MessageQueue};
use super::{binding, running, Binding, Engine};
use crate::config::QueueKind;
use crate::runtime::{Letter, Slot, TaskRef};
use std::ptr::NonNull;
use std::sync::atomic::Ordering::{Acquire, Relaxed};

/// The engine as the post path sees it: its queues, whether actors follow, its sleepers and
/// counters. [`Engine`] is the one that runs; the loom models build another around real
/// [`MessageQueue`]s and real actor headers (`loom_tests.rs`), so that they check the code of
/// this file and of `follow.rs` itself, not a copy. The post path is this trait's provided
/// methods: generic, not `dyn`, so each implementation gets its own monomorphised code, the
/// engine's the same as when they were its inherent methods.
pub(super) trait Poster: FollowSite {
    /// Whether idle actors follow the workers that post to them.
    fn follows(&self) -> bool;
    /// The kind of the queues' buffers.
    fn queue_kind(&self) -> QueueKind;
    /// Whether worker `w` sleeps, read under the lock of one of its queues (`Sleepers`).
    fn asleep_locked(&self, w: usize) -> bool;
    /// Wakes worker `owner`, found asleep by [`publish_locked`](Self::publish_locked).
    fn wake_worker(&self, owner: usize);
    /// Queues a letter sealed by `seal` on queue `qi` (`q`) of its actor, under the queue's lock
    /// (every post but a handler's to its own gulp). `None` if the actor is no longer bound to
    /// `q` (the caller starts over). Out of line: the append path stays a few instructions.
    #[inline(never)]
    fn post_locked(
        &self,
        qi: usize,
        q: &MessageQueue,
        task: TaskRef,
        follow: bool,
        seal: &mut dyn FnMut(NonNull<Letter>),
    ) -> Option<bool> {
        running::note_queued(q);
        let posted = q.locked.with(|locked| {
            let admit = if self.follows() {
                self.admit_locked::<true>(qi, q, locked, task, follow)
            } else {
                self.admit_locked::<false>(qi, q, locked, task, follow)
            };
            match admit {
                Admit::Here => {
                    locked.buffer.push_sealed(seal);
                    Ok(self.publish_locked(q, locked))
                }
                refused => Err(refused),
            }
        });
        match posted {
            Ok(sleeping_owner) => {
                self.wake_owner(sleeping_owner);
                Some(true)
            }
            Err(Admit::Closed) => Some(false),
            Err(_) => None,
        }
    }

    /// Under the lock of `q` (queue `qi`, its contents `locked`), before a letter to the actor
    /// bound as `b` is pushed on it: `Closed` if the actor has closed; `Moved` if it is no
    /// longer bound to `q`, re-bound since the caller read its binding, or just now, to follow
    /// this thread's worker (`follow::follow_target`, if `follow`, which may
    /// take the actor's queued letters out of `locked` along): the caller starts over with the
    /// new binding, and without `follow` (a post re-binds its actor at most once, so it cannot
    /// chase a queue whose owner changes). `Here`: the letter goes into `q`. `FOLLOWING`:
    /// whether actors follow (`self.follow`); without, a binding never changes and only the
    /// closed flag is read.
    #[inline(always)]
    fn admit_locked<const FOLLOWING: bool>(
        &self,
        qi: usize,
        q: &MessageQueue,
        locked: &mut queue::Locked,
        task: TaskRef,
        follow: bool,
    ) -> Admit {
        let b = binding(&task);
        if b.closed.load(Relaxed) {
            return Admit::Closed;
        }
        if !FOLLOWING {
            return Admit::Here;
        }
        admit_following(self, qi, q, locked, task, follow)
    }

    /// A letter was just added to `q`'s buffer, whose lock the caller holds: counts it, stores
    /// the length hint and returns the queue's owner if it sleeps. Under the lock: a worker
    /// parking re-checks this queue under the same lock, so either we see it asleep here or it
    /// sees our letter (module docs). Only the owner is woken ([`wake_owner`](Self::wake_owner),
    /// once the lock is released).
    #[inline]
    fn publish_locked(&self, q: &MessageQueue, locked: &mut queue::Locked) -> Option<usize> {
        locked.posted += 1;
        q.set_len(locked.buffer.len());
        let owner = q.owner.load(Relaxed);
        self.asleep_locked(owner).then_some(owner)
    }

    /// Wakes what [`publish_locked`](Self::publish_locked) found asleep.
    #[inline]
    fn wake_owner(&self, sleeping_owner: Option<usize>) {
        if let Some(owner) = sleeping_owner {
            self.wake_worker(owner);
        }
    }

    /// Where a handler's letter to the actor bound as `b` to `q` may go: the running gulp of this
    /// thread's worker if it is `q`'s and has room (and, if `after_queued`, `q` holds nothing),
    /// else the queue; `None` if the actor has closed.
    #[inline]
    fn gulp_for(&self, q: &MessageQueue, b: &Binding, after_queued: bool) -> Option<Target> {
        let Some(gulp) = running::appendable(q) else {
            return Some(Target::Queue);
        };
        // Relaxed suffices (`ActorCell::post_after_queued`): a letter that must stay ahead was
        // stored, length included, before something that happens before this call, and only
        // this worker (which holds the gulp) could empty the queue.
        if after_queued && q.len_hint() != 0 {
            // It goes to the queue, and so does every later letter of this gulp's handlers to
            // the queue (its room is closed, as when the budget runs out: `running.rs`), or the
            // sender's next letters, appended, would overtake it.
            gulp.close_room();
            return Some(Target::Queue);
        }
        // Relaxed: see `Appender::push`.
        (!b.closed.load(Relaxed)).then_some(Target::Gulp(gulp))
    }

    /// `LetterQueues::append_slot`; `after_queued`: only while the actor's queue holds nothing.
    #[inline(always)]
    fn append_slot_if(&self, task: TaskRef, after_queued: bool) -> Slot {
        let b = binding(&task);
        let qi = b.queue.load(Acquire) as usize;
        let q = self.queue(qi);
        match self.gulp_for(q, b, after_queued) {
            Some(Target::Gulp(gulp)) => gulp.reserve().map_or(Slot::Elsewhere, Slot::At),
            Some(Target::Queue) => self.queued_slot(qi, q, task, after_queued),
            None => Slot::Closed,
        }
    }

    /// A place at the end of `q`'s buffer (queue `qi`) for a letter to the actor bound as `b`,
    /// with `q`'s lock kept until
    /// [`LetterQueues::finish_post`](crate::runtime::LetterQueues::finish_post): the letter is written
    /// straight into its queue, with no closure and no further call between the two halves.
    /// `Slot::Elsewhere` for a list buffer (its letters are moved into nodes: `post_sealed`).
    /// Out of line: the append path stays short.
    #[inline(never)]
    fn queued_slot(&self, qi: usize, q: &MessageQueue, task: TaskRef, after_queued: bool) -> Slot {
        if self.follows() {
            return self.queued_slot_following(qi, q, task, after_queued);
        }
        // A binding that never changes: the attempt cannot find the actor moved.
        self.try_queued_slot::<false>(qi, q, task, false)
            .unwrap_or(Slot::Closed)
    }

    /// [`queued_slot`](Self::queued_slot) while actors follow, apart so that the fixed binding
    /// keeps its own short code.
    #[inline(never)]
    fn queued_slot_following(
        &self,
        qi: usize,
        q: &MessageQueue,
        task: TaskRef,
        after_queued: bool,
    ) -> Slot {
        match self.try_queued_slot::<true>(qi, q, task, true) {
            Some(slot) => slot,
            None => self.slot_after_move(task, after_queued),
        }
    }

    /// One attempt of [`queued_slot`](Self::queued_slot): `None` if the actor is no longer
    /// bound to `q` (re-bound meanwhile, or just now to follow this worker).
    #[inline(always)]
    fn try_queued_slot<const FOLLOWING: bool>(
        &self,
        qi: usize,
        q: &MessageQueue,
        task: TaskRef,
        follow: bool,
    ) -> Option<Slot> {
        // Counted before the lock is taken, not inside the critical section. A list buffer's
        // letter goes on through `post_locked`, which counts it.
        if self.queue_kind() == QueueKind::Copy {
            running::note_queued(q);
        }
        let mut held = q.locked.hold();
        let slot = held.with(|locked| {
            match self.admit_locked::<FOLLOWING>(qi, q, locked, task, follow) {
                Admit::Closed => Some(Slot::Closed),
                Admit::Moved => None,
                // SAFETY: the caller writes the letter at once (`Slot::Queued`'s contract),
                // before anything else reaches the buffer: we keep the lock until `finish_post`.
                Admit::Here => Some(
                    unsafe { locked.buffer.reserve_slot() }.map_or(Slot::Elsewhere, Slot::Queued),
                ),
            }
        });
        if matches!(slot, Some(Slot::Queued(..))) {
            held.keep();
        }
        slot
    }

    /// [`queued_slot`](Self::queued_slot) once the actor has moved: again with its new queue,
    /// appended to this worker's running gulp if that is where it went, and without following
    /// (a post re-binds its actor at most once). Rare, so out of the way.
    #[cold]
    #[inline(never)]
    fn slot_after_move(&self, task: TaskRef, after_queued: bool) -> Slot {
        let b = binding(&task);
        loop {
            let qi = b.queue.load(Acquire) as usize;
            let q = self.queue(qi);
            match self.gulp_for(q, b, after_queued) {
                Some(Target::Gulp(gulp)) => {
                    return gulp.reserve().map_or(Slot::Elsewhere, Slot::At)
                }
                Some(Target::Queue) => {
                    if let Some(slot) = self.try_queued_slot::<true>(qi, q, task, false) {
                        return slot;
                    }
                }
                None => return Slot::Closed,
            }
        }
    }
}

impl FollowSite for Engine {
    #[inline(always)]
    fn queue(&self, qi: usize) -> &MessageQueue {
        &self.queues[qi]
    }
    #[inline(always)]
    fn index_of(&self, queue: *const MessageQueue) -> usize {
        Engine::index_of(self, queue)
    }
    #[inline(always)]
    fn note_followed(&self, worker: usize, letters: usize) {
        let counters = self.shared.counters.worker(worker);
        counters.actors_followed.bump(1);
        counters.letters_followed.bump(letters as u64);
    }
}

impl Poster for Engine {
    #[inline(always)]
    fn follows(&self) -> bool {
        self.follow
    }
    #[inline(always)]
    fn queue_kind(&self) -> QueueKind {
        self.queue_kind
    }
    #[inline(always)]
    fn asleep_locked(&self, w: usize) -> bool {
        self.sleepers.is_asleep_locked(w)
    }
    #[inline(always)]
    fn wake_worker(&self, owner: usize) {
        self.notify_owner(owner);
    }
}

/// Where a handler's letter goes ([`Poster::gulp_for`]).
pub(super) enum Target {
    /// The running gulp of this thread's worker.
    Gulp(running::Appender),
    /// The actor's queue, under its lock.
    Queue,
}
