//! Actors that follow their partners (docs/message-centric.md, "Actors follow their partners";
//! docs/decisions.md §47): beyond Cforall, whose actors keep the queue they were bound to at
//! spawn, an idle actor that hears mostly from handlers on another worker is re-bound, under
//! the lock of the queue it leaves, into the queue of the handler that posts to it. The post
//! path (`Engine::admit_locked`) calls in here only while following is on.

use super::post::Admit;
use super::queue::MessageQueue;
use super::{running, Binding, Engine};
use std::sync::atomic::Ordering::{Relaxed, Release};

/// By how many posts from another worker's handlers an actor's posts must outnumber those from
/// its own worker's before it follows that worker (`Engine::follow_target`). A rule that reads
/// only the last few posts sends an actor hearing from partners on both workers back and forth
/// (a complete graph of partners reaches agreement only by drift, like the voter model); a
/// majority gathers each group on one worker (docs/decisions.md §44, §47).
pub(super) const FOLLOW_MAJORITY: u8 = 8;

impl Engine {
    /// [`admit_locked`](Self::admit_locked) while actors follow: the binding read again, the
    /// actor scored and perhaps re-bound, its last letter's gulp noted.
    #[inline(always)]
    pub(super) fn admit_following(
        &self,
        qi: usize,
        q: &MessageQueue,
        b: &Binding,
        follow: bool,
    ) -> Admit {
        // Relaxed: a re-binding away from `q` is stored under this lock.
        if b.queue.load(Relaxed) as usize != qi {
            return Admit::Moved;
        }
        if follow {
            if let Some(to) = self.follow_target(q, b) {
                b.score.store(0, Relaxed);
                b.queue.store(to as u32, Release);
                return Admit::Moved;
            }
        }
        let next = q.generation() + 1;
        if b.pending.load(Relaxed) != next {
            b.pending.store(next, Relaxed);
        }
        Admit::Here
    }

    /// Where the actor bound as `b` to `q` goes when a handler on this thread posts to it, if it
    /// follows (under `q`'s lock). Beyond Cforall, whose actors keep the queue they were bound
    /// to at spawn: the actor-centric engine queues a woken actor on its waker's worker, so
    /// partners gather on one core, while here every letter between two workers crosses cores
    /// under the destination queue's lock (docs/message-centric.md, "Actors follow their
    /// partners").
    ///
    /// Each post from a handler scores the actor: one up from another worker than `q`'s owner,
    /// one down from the same worker. It follows once the score reaches [`FOLLOW_MAJORITY`],
    /// when it is idle: the queue's gulp count has passed its last letter ([`Binding::pending`])
    /// and no worker processes `q`, so the gulp that took that letter is over, and it is no hub.
    /// None of its letters can then be overtaken, and none of its handlers runs, so it may be
    /// re-bound. It goes into the posting handler's own queue, where its partners' letters to it
    /// are appended to their gulp (no lock) and a visit to the queue keeps the group's lines in
    /// cache (`Worker::pass`). The queue is not capped: a client's servers gathered into the
    /// client's queue ran faster than spread (docs/decisions.md §47).
    #[inline]
    fn follow_target(&self, q: &MessageQueue, b: &Binding) -> Option<usize> {
        let gulp = running::running_gulp()?;
        let score = b.score.load(Relaxed);
        let foreign = q.owner.load(Relaxed) != gulp.worker;
        let next = if foreign {
            score.saturating_add(1).min(2 * FOLLOW_MAJORITY)
        } else {
            score.saturating_sub(1)
        };
        if next != score {
            b.score.store(next, Relaxed);
        }
        if !foreign || next < FOLLOW_MAJORITY {
            return None;
        }
        // Acquire (the flag): when no worker processes `q`, the actor's last handler happens
        // before the re-binding, and so before whatever runs it next.
        if b.hub.load(Relaxed)
            || !idle(
                b.pending.load(Relaxed),
                q.generation(),
                q.processing.is_claimed_locked(),
            )
        {
            return None;
        }
        self.shared
            .counters
            .worker(gulp.worker)
            .actors_followed
            .bump(1);
        let to = self.index_of(gulp.queue);
        // Its letters posted before, through the lock, to actors of the running queue wait
        // behind this gulp: its next ones must not be appended ahead of them, so the gulp takes
        // no more letters, as once its budget has run out (`running.rs`).
        if let Some(running) = running::running_gulp_of(&self.queues[to]) {
            running.close_room();
        }
        Some(to)
    }
}

/// Whether an actor may be re-bound, read under its queue's lock: the queue has had `generation`
/// gulps, the last letter posted to the actor went into gulp `pending` (one more than the
/// count at its post, 0 for none), and `claimed` says whether a worker processes the queue now.
/// Idle when the gulp that took its last letter has been taken and is over: every letter to
/// the actor is in its one queue (or in that queue's gulp), so none is left to be overtaken and
/// no handler of it runs. The loom model `a_post_re_binds_only_an_idle_actor` checks the
/// protocol around it.
#[inline]
pub(super) fn idle(pending: u64, generation: u64, claimed: bool) -> bool {
    pending <= generation && !claimed
}
