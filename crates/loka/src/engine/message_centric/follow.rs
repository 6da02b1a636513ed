//! Actors that follow their partners, and the protocol that moves them. Beyond Cforall, whose
//! actors keep the queue they were bound to at spawn, an actor that hears mostly from handlers
//! of another worker (or of a lower queue of its own) is re-bound, under the lock of the queue
//! it leaves and with its queued letters, into the queue of the handler that posts to it. The
//! measurements behind the rules are in docs/decisions/0047-follow-partners.md and docs/decisions/0048-follow-with-letters.md; this comment is the
//! protocol and its argument, which the other files of the engine point at.
//!
//! # State
//!
//! * Per actor, its [`Binding`](super::Binding) in its header: `queue` (the index of its queue;
//!   stored only under the lock of the queue it names, with Release; read by posters without a
//!   lock with Acquire, and again under the lock), `closed`, `hub` (hubs never follow), and,
//!   written only under the lock of its queue and only while following is on: `score` (posts
//!   that pull it less posts that do not, 0..=2·[`FOLLOW_MAJORITY`]), `pending` (one more than
//!   the queue's gulp count when its last letter was posted there through the lock, 0 for none)
//!   and `queued` (letters posted to it through the lock since that gulp began).
//! * Per queue, its [`MessageQueue`]: the spin lock over its buffer of letters; the
//!   `being_processed` flag ([`ProcessingFlag`](super::queue::ProcessingFlag): claimed under the
//!   lock by the worker that gulps the queue, Acquire; released with Release once that gulp has
//!   run); `generation`, its gulp count (written under the lock by each gulp); `owner`, the worker
//!   to wake.
//! * Per worker, its running gulp (`running.rs`): the letters of the queue it gulped, reached
//!   without a lock from that worker's thread only, and its *room* (how many more letters its
//!   handlers may append to it instead of posting through the lock).
//!
//! # Locks
//!
//! A re-bind holds one lock: that of the queue the actor leaves (`q`). It never takes the lock
//! of the queue it joins (`to`): that queue is claimed by the poster's worker, whose running gulp
//! takes the letters, reached from the poster's thread alone. No path holds two queue locks, so
//! there is no lock order to keep and no deadlock. A post keeps one lock at a time too, also
//! across `queued_slot` → `LetterQueues::finish_post` (the letter written in place between).
//!
//! # A post, and the re-bind it may make
//!
//! [`Engine::post_sealed`](crate::runtime::LetterQueues::post_sealed) and
//! `Poster::queued_slot` (`post.rs`) loop:
//!
//! 1. Read `b.queue` (Acquire): queue `qi`, `q`. Take `q`'s lock.
//! 2. Under the lock: `closed` → refused. `b.queue != qi` → *moved*: drop the lock, start over
//!    (Relaxed suffices: a re-bind away from `q` is stored under this very lock).
//! 3. If the post may follow (following on, first round of this post, a handler of a worker's
//!    running gulp `G` of queue `to` posts, `to != qi`): score the actor
//!    ([`follow_target`]); at a margin of [`FOLLOW_MAJORITY`] pulls, not a hub, test it
//!    with [`movable`]`(pending, q.generation, q.processing.is_claimed_locked())`:
//!    * `No`: a worker processes `q` (one of the actor's handlers may run, or its letters wait
//!      in that worker's gulp): it stays.
//!    * `Idle`: not claimed and `pending <= generation`: the gulp that took its last letter has
//!      been taken and has run; no letter to it waits anywhere.
//!    * `WithLetters`: not claimed, and its letters not yet run are all in `q`'s buffer (at most
//!      [`FOLLOW_MAX_LETTERS`], or it stays: a hub in all but name). They move: taken out of
//!      `q`'s buffer in order ([`Buffer::move_out`](super::queue::Buffer::move_out), the other
//!      actors' letters keep theirs) and pushed at the end of `G`.
//!
//!    Then `G`'s room is closed, `score` and `pending` reset, and `b.queue = to` stored with
//!    Release, all under `q`'s lock: *moved*, the post starts over with `to`, without following
//!    (a post re-binds at most once, so it cannot chase a queue whose owner changes).
//! 4. Else the letter is pushed on `q`'s buffer, `pending`/`queued` noted, the owner woken if
//!    it sleeps (`Poster::publish_locked`).
//!
//! A handler's letter to an actor of its own running gulp's queue is appended to that gulp
//! without the lock (`Poster::gulp_for`); that queue is claimed then, so [`movable`] says `No`
//! for every actor it holds: no re-bind races an append.
//!
//! # Why no letter is lost, duplicated or reordered
//!
//! Every letter to the actor is, at any time, in exactly one of: the buffer of the queue its
//! binding named when it was pushed (pushed under that lock after reading the binding again,
//! step 2), a gulp of that queue, or run. A re-bind happens under `q`'s lock while `q` is not
//! claimed: no gulp of `q` holds a letter to the actor (`Idle`, `WithLetters`: the last such
//! gulp has been taken and, the flag free, has ended), so all its letters not yet run are in
//! `q`'s buffer, and with `WithLetters` all of them move, each removed from `q` as it is pushed
//! on `G` (none left behind, none twice). A post that read the old binding and waits for `q`'s
//! lock sees the new one under it (the lock orders the two) and starts over with `to`; a post
//! that read it before and pushed before the re-bind has its letter in `q`'s buffer, which
//! moves. A slot kept by `queued_slot` keeps `q`'s lock until `finish_post`, so no re-bind takes
//! a half-written letter, and `finish_post` finds `q` again through the binding (Relaxed: it
//! cannot change while that lock is held).
//!
//! FIFO per sender and receiver: the letters that move go to the end of `G`, which runs them
//! before anything posted to the actor from then on (that goes to `to`'s buffer, gulped after
//! `G` ends, or, from a later gulp of `to`, appended behind them). Letters posted before the
//! re-bind and already run stay run. The follower as a *sender* may have letters to actors of
//! `to` waiting in `to`'s buffer behind `G` (posted through the lock from `q`); closing `G`'s
//! room keeps its next letters to them from being appended ahead (`running.rs`, module docs).
//!
//! # Why a handler never runs concurrently with itself
//!
//! An actor's letters are all in its queue or in a gulp of it, and a queue's gulps are run only
//! by the holder of its `being_processed` flag, one at a time. A re-bind reads the flag free
//! with Acquire under `q`'s lock, so the last handler of the actor (run by the last holder,
//! released with Release) happens before the re-bind; it moves the actor into `G`, whose worker
//! runs its letters after the posting handler returns (one thread), or into `to`'s buffer,
//! gulped only by a later holder of `to`'s flag. The binding stored with Release and loaded with
//! Acquire by posters carries that order on to whoever posts to it next.
//!
//! # Checked by
//!
//! `loom_tests.rs`: `a_post_re_binds_only_an_idle_actor`,
//! `an_actor_moves_with_its_queued_letters_in_order` (and what of them is real code is said
//! there); `tests/mc_follow.rs` on real threads.

use super::queue::{Locked, MessageQueue};
use super::{binding, running};
use crate::runtime::TaskRef;
use std::sync::atomic::Ordering::{Relaxed, Release};

/// What following needs of the engine (or of a loom model of it): its queues, and where to count
/// an actor that followed. The post path's own needs are `post.rs`'s `Poster`, built on this.
pub(super) trait FollowSite: Sized {
    /// Queue `qi`.
    fn queue(&self, qi: usize) -> &MessageQueue;
    /// The index of `queue`, one of this engine's.
    fn index_of(&self, queue: *const MessageQueue) -> usize;
    /// Counts an actor that followed a handler of `worker`, with `letters` queued letters.
    fn note_followed(&self, worker: usize, letters: usize);
}

/// What a post finds under its queue's lock (`Poster::admit_locked`, `post.rs`).
pub(super) enum Admit {
    /// The letter goes into this queue.
    Here,
    /// The actor has closed: the letter is refused.
    Closed,
    /// The actor is bound to another queue now: the poster starts over.
    Moved,
}

/// By how many posts from another worker's handlers an actor's posts must outnumber those from
/// its own worker's before it follows that worker ([`follow_target`]). A rule that reads
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

/// `Poster::admit_locked` (`post.rs`) while actors follow: the binding read again, the
/// actor scored and perhaps re-bound (its letters queued in `locked` taken along), its last
/// letter's gulp noted.
#[inline(always)]
pub(super) fn admit_following<P: FollowSite>(
    poster: &P,
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
        if let Some(to) = follow_target(poster, qi, q, locked, task) {
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
fn follow_target<P: FollowSite>(
    poster: &P,
    qi: usize,
    q: &MessageQueue,
    locked: &mut Locked,
    task: TaskRef,
) -> Option<usize> {
    let b = binding(&task);
    // The gulp this thread's worker runs, whose queue the actor would join.
    let gulp = running::current_gulp()?;
    let to = poster.index_of(gulp.queue());
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
    let moved = if with_letters {
        let moved = gulp.take_letters(&mut locked.buffer, task);
        q.set_len(locked.buffer.len());
        moved
    } else {
        0
    };
    poster.note_followed(gulp.worker(), moved);
    // Its letters posted before, through the lock, to actors of the running queue wait
    // behind this gulp: its next ones must not be appended ahead of them, so the gulp takes
    // no more letters, as once its budget has run out (`running.rs`).
    gulp.close_room();
    Some(to)
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
