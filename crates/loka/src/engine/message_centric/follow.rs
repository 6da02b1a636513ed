//! Actors that follow their partners (docs/message-centric.md, "Actors follow their partners";
//! docs/decisions/0047-follow-partners.md, docs/decisions/0048-follow-with-letters.md): beyond Cforall, whose actors keep the queue they were bound to
//! at spawn, an actor that hears mostly from handlers of another worker (or of a lower queue of
//! its own) is re-bound, under the lock of the queue it leaves and with its queued letters, into
//! the queue of the handler that posts to it. The post path (`Engine::admit_locked`) calls in
//! here only while following is on.

use super::post::Admit;
use super::queue::{Locked, MessageQueue};
use super::{binding, running, Engine};
use crate::runtime::TaskRef;
use std::sync::atomic::Ordering::{Relaxed, Release};

/// By how many posts from another worker's handlers an actor's posts must outnumber those from
/// its own worker's before it follows that worker (`Engine::follow_target`). A rule that reads
/// only the last few posts sends an actor hearing from partners on both workers back and forth
/// (a complete graph of partners reaches agreement only by drift, like the voter model); a
/// majority gathers each group on one worker (docs/decisions/0044-follow-the-waker.md, docs/decisions/0047-follow-partners.md).
pub(super) const FOLLOW_MAJORITY: u8 = 8;

/// The most letters an actor takes along when it follows ([`Binding::queued`]). An actor with a
/// longer backlog is a meeting point of many senders (a driver collecting replies from
/// thousands of short-lived workers, a server), not one member of a group that works together:
/// its partners are everywhere, so moving it gathers nothing, and its backlog would cross
/// cores. Eight is the majority that decides a move: a member of a group gets about as many
/// letters from its partners in a gulp's time (fjcreate's driver moved 38 times with 1,100–2,200
/// letters each and lost 18% without this bound; docs/decisions/0048-follow-with-letters.md).
const FOLLOW_MAX_LETTERS: u8 = FOLLOW_MAJORITY;

impl Engine {
    /// [`admit_locked`](Self::admit_locked) while actors follow: the binding read again, the
    /// actor scored and perhaps re-bound (its letters queued in `locked` taken along), its last
    /// letter's gulp noted.
    #[inline(always)]
    pub(super) fn admit_following(
        &self,
        qi: usize,
        q: &MessageQueue,
        locked: &mut Locked,
        task: TaskRef,
        follow: bool,
    ) -> Admit {
        let b = binding(&task);
        // Relaxed: a re-binding away from `q` is stored under this lock.
        if b.queue.load(Relaxed) as usize != qi {
            return Admit::Moved;
        }
        if follow {
            if let Some(to) = self.follow_target(qi, q, locked, task) {
                b.score.store(0, Relaxed);
                // Its letters are all in the gulp it joins now, which its new queue's next
                // gulp count will pass (`movable`). Before the binding: a poster that reads the
                // new binding (Acquire) and then posts to the new queue notes its letter after.
                b.pending.store(0, Relaxed);
                b.queue.store(to as u32, Release);
                return Admit::Moved;
            }
        }
        // The letter goes into gulp `next`: the first since the last gulp, or one more.
        let next = q.generation() + 1;
        let queued = if b.pending.load(Relaxed) == next {
            b.queued.load(Relaxed).saturating_add(1)
        } else {
            b.pending.store(next, Relaxed);
            1
        };
        b.queued.store(queued, Relaxed);
        Admit::Here
    }

    /// Where the actor bound as `b` to `q` goes when a handler on this thread posts to it, if it
    /// follows (under `q`'s lock, `q`'s contents `locked`). Beyond Cforall, whose actors keep
    /// the queue they were bound to at spawn: the actor-centric engine queues a woken actor on
    /// its waker's worker, so partners gather on one core, while here every letter between two
    /// workers crosses cores under the destination queue's lock (docs/message-centric.md,
    /// "Actors follow their partners").
    ///
    /// Each post from a handler scores the actor: one up when the handler *pulls* it (it runs on
    /// another worker than `q`'s owner, or in a lower queue of the same worker: one way, so the
    /// two halves of a group in two queues join one rather than trade places), one down when
    /// it runs in a higher queue of the same worker. It follows once the score reaches
    /// [`FOLLOW_MAJORITY`], when no worker processes `q` (so none of its handlers runs, and
    /// every letter to it not yet run is in `q`'s buffer) and it is no hub. It goes into the
    /// posting handler's own queue, where its partners' letters to it are appended to their
    /// gulp (no lock) and a visit to the queue keeps the group's lines in cache
    /// (`Worker::pass`). Its letters still queued in `q` ([`Binding::pending`] ahead of `q`'s
    /// gulp count), at most [`FOLLOW_MAX_LETTERS`], go along: taken out in order and moved to
    /// the end of the running gulp, where they run before any letter posted to it from now on.
    /// Waiting for an actor that hears from a hundred partners to have no letter queued, it
    /// followed in 4% of its chances (docs/decisions/0048-follow-with-letters.md). The queue is not capped: a
    /// client's servers gathered into the client's queue ran faster than spread, and caps kept
    /// groups split (docs/decisions/0047-follow-partners.md, docs/decisions/0048-follow-with-letters.md).
    #[inline]
    fn follow_target(
        &self,
        qi: usize,
        q: &MessageQueue,
        locked: &mut Locked,
        task: TaskRef,
    ) -> Option<usize> {
        let b = binding(&task);
        // The gulp this thread's worker runs, whose queue the actor would join.
        let gulp = running::current_gulp()?;
        let to = self.index_of(gulp.queue());
        let score = b.score.load(Relaxed);
        let pulls = q.owner.load(Relaxed) != gulp.worker() || to < qi;
        let next = if pulls {
            score.saturating_add(1).min(2 * FOLLOW_MAJORITY)
        } else {
            score.saturating_sub(1)
        };
        if next != score {
            b.score.store(next, Relaxed);
        }
        if !pulls || next < FOLLOW_MAJORITY || b.hub.load(Relaxed) {
            return None;
        }
        // Acquire (the flag): when no worker processes `q`, the actor's last handler happens
        // before the re-binding, and so before whatever runs it next.
        let with_letters = match movable(
            b.pending.load(Relaxed),
            q.generation(),
            q.processing.is_claimed_locked(),
        ) {
            Movable::No => return None,
            Movable::Idle => false,
            Movable::WithLetters if b.queued.load(Relaxed) > FOLLOW_MAX_LETTERS => return None,
            Movable::WithLetters => true,
        };
        let counters = self.shared.counters.worker(gulp.worker());
        counters.actors_followed.bump(1);
        if with_letters {
            let moved = gulp.take_letters(&mut locked.buffer, task);
            q.set_len(locked.buffer.len());
            counters.letters_followed.bump(moved as u64);
        }
        // Its letters posted before, through the lock, to actors of the running queue wait
        // behind this gulp: its next ones must not be appended ahead of them, so the gulp takes
        // no more letters, as once its budget has run out (`running.rs`).
        gulp.close_room();
        Some(to)
    }
}

/// Whether an actor may be re-bound ([`movable`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Movable {
    /// A worker processes its queue: one of its handlers may be running, or its letters wait in
    /// that worker's gulp.
    No,
    /// Nothing to it waits anywhere and none of its handlers runs.
    Idle,
    /// None of its handlers runs and every letter to it not yet run is in its queue's buffer:
    /// it may move if those letters go along, in order.
    WithLetters,
}

/// Whether an actor may be re-bound, read under its queue's lock: the queue has had `generation`
/// gulps, the last letter posted to the actor went into gulp `pending` (one more than the
/// count at its post, 0 for none), and `claimed` says whether a worker processes the queue now.
/// While no worker processes it, every gulp that took a letter to the actor is over: none of
/// its handlers runs, and its letters not yet run are all in the queue's buffer, none if the
/// gulp that took its last letter has been taken. The loom models
/// `a_post_re_binds_only_an_idle_actor` and `an_actor_moves_with_its_queued_letters_in_order`
/// check the protocol around it.
#[inline]
pub(super) fn movable(pending: u64, generation: u64, claimed: bool) -> Movable {
    if claimed {
        Movable::No
    } else if pending <= generation {
        Movable::Idle
    } else {
        Movable::WithLetters
    }
}
