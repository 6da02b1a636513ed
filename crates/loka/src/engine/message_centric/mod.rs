//! The message-centric engine: Cforall's inverted executor (docs/message-centric.md).
//!
//! Messages, not actors, are what workers dequeue. Each actor is bound at spawn to one of the
//! sharded queues (16 per worker by default); a send seals the envelope into a [`Letter`] and
//! pushes it on that queue under a short lock. Workers own contiguous ranges of queues; a worker
//! *gulps* a non-empty queue (takes its whole contents in O(1)) and hands each letter to its actor
//! with no lock and no atomic operation. An actor's letters are all in one queue, which one worker
//! processes at a time (the `being_processed` flag), so its messages run one at a time and in
//! per-sender order without any per-actor scheduling state. After two empty passes over its own
//! queues a worker steals a whole queue with a wait-free pointer swap.
//!
//! | file | concern |
//! |---|---|
//! | `copy_queue.rs` | the copy queue (array of letters, O(1) pop by index) |
//! | `idle.rs` | parking, wake-ups, the watch on busy workers, quiescence |
//! | `queue.rs` | one sharded queue: lock, buffer, `being_processed`, length hint, gulping |
//! | `running.rs` | the gulp a worker processes, as its handlers reach it: appends, runs |
//! | `spin.rs` | the queues' spin lock |
//! | `swap.rs` | the wait-free swap of queue pointers on the permutable worker array |
//! | `worker.rs` | the worker loop: passes, gulps, stealing and victim selection, parking |
//! | `tests.rs` | regression tests of the wake-ups (a letter in a sleeper's range is reached) |
//!
//! Parking uses the shared [`Sleepers`] protocol: a poster reads the queue's owner's sleep state
//! *under the queue's lock*, and a worker about to park re-checks its own queues under their
//! locks, so either the poster sees the sleeper or the sleeper sees the letter (the lock orders
//! them; no fence on the send path). Only the owner is woken (`Engine::notify_owner`). A letter
//! in another worker's queue keeps nobody else awake: the parking worker wakes that queue's
//! holder if it sleeps, and otherwise leaves the letter to it (`Engine::recheck_before_parking`).

mod copy_queue;
mod idle;
#[cfg(all(test, loom))]
mod loom_tests;
mod queue;
mod running;
mod spin;
mod swap;
mod worker;

use super::sleepers::Sleepers;
use crate::actor::options::{Placement, SpawnOptions};
use crate::config::{QueueKind, VictimSelection};
use crate::policy::placement::PlacementStrategy;
use crate::runtime::letter::LetterVtable;
use crate::runtime::task::SchedState;
use crate::runtime::{Exec, Header, Letter, Runtime, Scheduler, Shared, Slot, TaskRef};
use crate::sync::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize};
use crate::telemetry::MessageCentricStats;
use crossbeam_utils::CachePadded;
use parking_lot::Mutex;
use queue::{Buffer, MessageQueue};
use std::ops::Range;
use std::ptr::NonNull;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release, SeqCst};
use std::sync::{Arc, OnceLock};
use std::thread::{JoinHandle, Thread};
use std::time::Instant;
use worker::Worker;

/// Actors bound to one of a worker's queues before the next one takes over, when the engine
/// spreads them over that worker's queues (`Engine::bind`). Actors created one after another
/// usually work together (a fan-out and its partners, a group built in a loop); bound to one
/// queue, their letters travel in one gulp, where a handler's letter to a partner is appended
/// (no lock) and the partners' cells are still cached. Bound one per queue in turn, as
/// Cforall does, every gulp reached every group: with 40,000 actors the executor's deliveries
/// missed the cache on each cell, at the send and again at the delivery (docs/decisions.md
/// §41). The same number as the backlog that wakes a thief ([`worker::WAKE_BACKLOG`]): a queue
/// of `FILL` actors is the unit worth stealing, and 16 queues of a worker still spread 512.
const FILL: usize = worker::WAKE_BACKLOG;

/// An actor's binding, in its header's scheduling words: its queue and whether it has closed (set
/// under that queue's lock, so a letter is either queued before the actor's release letter or
/// refused).
///
/// The queue is set at spawn and changes only when the actor *follows* the worker that posts to
/// it ([`Engine::follow_target`]): under the lock of the queue it leaves, while it has no letter
/// anywhere and no handler running. A poster reads it without a lock, then again under the
/// queue's lock, and starts over if it changed (`Admit::Moved`).
struct Binding {
    /// Its queue's index. Stored with Release (by the worker that re-binds it, after it has
    /// synchronised with the actor's last handler), loaded with Acquire by posters, so the
    /// worker that next runs the actor, through whichever queue, sees that handler's writes.
    queue: AtomicU32,
    closed: AtomicBool,
    hub: AtomicBool,
    /// Posts from handlers on another worker than its queue's, less posts from handlers on the
    /// same worker, kept within 0..=2·[`FOLLOW_MAJORITY`]; under its queue's lock.
    score: AtomicU8,
    /// One more than the queue's gulp count when a letter was last posted to it, under its
    /// queue's lock: while it exceeds the count, a letter to the actor waits in the queue.
    /// Written only while following is on (more than one worker).
    pending: AtomicU64,
}

/// By how many posts from another worker's handlers an actor's posts must outnumber those from
/// its own worker's before it follows that worker (`Engine::follow_target`). A rule that reads
/// only the last few posts sends an actor hearing from partners on both workers back and forth
/// (a complete graph of partners reaches agreement only by drift, like the voter model); a
/// majority gathers each group on one worker (docs/decisions.md §44, §47).
const FOLLOW_MAJORITY: u8 = 8;

// SAFETY: 16 bytes of atomics, alignment 8, no drop glue.
unsafe impl SchedState for Binding {}

fn binding(task: &TaskRef) -> &Binding {
    // SAFETY: this engine initialised every task's words as a `Binding` in `init_task`.
    unsafe { task.sched::<Binding>() }
}

/// State shared by all workers of one message-centric system.
pub(crate) struct Engine {
    shared: Arc<Shared>,
    /// The sharded queues; actors refer to them by index (stable for the system's life).
    queues: Box<[CachePadded<MessageQueue>]>,
    /// The permutable worker array: worker `w` processes the queues in `slots[ranges[w]]`.
    slots: Box<[AtomicPtr<MessageQueue>]>,
    ranges: Box<[Range<usize>]>,
    /// Per spawning worker: the actors it has bound to its own queues by `default` or `compact`
    /// (`bind`); for `circular` and `scatter`, and the one more for plain threads: the next
    /// queue of its round robin.
    cursors: Box<[CachePadded<AtomicUsize>]>,
    /// Per worker: the actors bound to its queues by `Placement::Worker` (from any thread).
    hinted: Box<[CachePadded<AtomicUsize>]>,
    /// Per worker: when it last tried to steal (ns since `clock`), for `longest` victim selection.
    last_steal: Box<[CachePadded<AtomicU64>]>,
    victims: VictimSelection,
    queue_kind: QueueKind,
    sleepers: Sleepers,
    /// Workers parked with a watch period now (`park`). A worker woken while this is zero gets
    /// one: `notify_owner` nudges a sleeper, which then parks with a period.
    watchers: CachePadded<AtomicUsize>,
    /// Whether idle workers steal (more than one worker, a victim selection other than
    /// `none`), and so park with a watch period (`idle.rs`).
    can_steal: bool,
    /// Whether idle actors follow the workers that post to them (`follow_target`; more than one
    /// worker and `message_centric.follow`).
    follow: bool,
    threads_of: Box<[OnceLock<Thread>]>,
    shutdown: CachePadded<AtomicBool>,
    clock: Instant,
    /// Placement strategy for regular actors [0] and hubs [1] (which queue a new actor gets).
    strategies: [AtomicU8; 2],
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Engine {
    /// Builds the engine and starts its workers. Returns the engine and the plain threads'
    /// runtime handle.
    pub(crate) fn start(shared: Arc<Shared>) -> (Arc<Engine>, Arc<Runtime>) {
        let config = &shared.config;
        let mc = &config.message_centric;
        let workers = config.workers;
        let total = mc.total_queues(workers);
        let ranges: Box<[Range<usize>]> = (0..workers)
            .map(|w| w * total / workers..(w + 1) * total / workers)
            .collect();
        let owner_of = |q: usize| ranges.iter().position(|r| r.contains(&q)).unwrap_or(0);
        let queues: Box<[CachePadded<MessageQueue>]> = (0..total)
            .map(|q| CachePadded::new(MessageQueue::new(mc.queue, owner_of(q))))
            .collect();
        let slots = queues
            .iter()
            .map(|q| AtomicPtr::new(&**q as *const MessageQueue as *mut MessageQueue))
            .collect();
        let cursors = (0..=workers)
            .map(|w| {
                let start = ranges.get(w).map_or(0, |r| r.start);
                CachePadded::new(AtomicUsize::new(start))
            })
            .collect();
        let hinted = (0..workers)
            .map(|_| CachePadded::new(AtomicUsize::new(0)))
            .collect();
        let engine = Arc::new(Engine {
            hinted,
            queues,
            slots,
            ranges,
            cursors,
            last_steal: (0..workers)
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect(),
            victims: mc.victims,
            queue_kind: mc.queue,
            sleepers: Sleepers::new(workers),
            watchers: CachePadded::new(AtomicUsize::new(0)),
            can_steal: mc.victims != VictimSelection::None && workers > 1,
            follow: mc.follow && workers > 1,
            threads_of: (0..workers).map(|_| OnceLock::new()).collect(),
            shutdown: CachePadded::new(AtomicBool::new(false)),
            clock: Instant::now(),
            strategies: [
                AtomicU8::new(strategy_index(config.placement)),
                AtomicU8::new(strategy_index(config.hub_placement)),
            ],
            threads: Mutex::new(Vec::new()),
            shared: Arc::clone(&shared),
        });
        let for_workers = Arc::clone(&engine);
        let (threads, root) = super::start_workers(
            &shared,
            engine.clone(),
            "loka-mc-worker",
            move |exec, ready| {
                let engine = Arc::clone(&for_workers);
                let _ = engine.threads_of[exec.index()].set(std::thread::current());
                ready();
                Worker::new(exec, engine).run();
            },
        );
        *engine.threads.lock() = threads;
        (engine, root)
    }

    fn is_shutdown(&self) -> bool {
        self.shutdown.load(Relaxed)
    }

    /// Nanoseconds since the engine started.
    fn now_ns(&self) -> u64 {
        self.clock.elapsed().as_nanos() as u64 + 1
    }

    fn workers(&self) -> usize {
        self.ranges.len()
    }

    /// Changes the placement strategy for hubs or regular actors from now on.
    pub(crate) fn set_placement(&self, hubs: bool, strategy: PlacementStrategy) {
        self.strategies[usize::from(hubs)].store(strategy_index(strategy), Relaxed);
    }

    /// The queue a new actor is bound to, by the placement strategy, as in the other engine:
    /// `default` and `compact` keep an actor spawned by an actor in its spawner's worker (its
    /// running queue while that gulp is short, else that worker's queues in turn, [`FILL`] actors
    /// each: a parent and its children stay on one core, as actor-centric placement does);
    /// `circular` and `scatter` lay actors out round robin over all queues in creation order,
    /// Cforall's layout (each spawner keeps its own cursor, so spawning touches no shared
    /// counter); `random` picks any queue. Actors spawned from plain threads go round robin over
    /// all queues; `Placement::Worker(w)` fills worker `w`'s queues in turn, in blocks of
    /// [`FILL`] actors that grow as the worker's placed actors double
    /// ([`filled_growing`](Self::filled_growing)).
    fn bind(&self, options: &SpawnOptions, from: Option<&Exec>) -> usize {
        let total = self.queues.len();
        if let Placement::Worker(w) = options.placement {
            let w = w % self.workers();
            return self.filled_growing(w, self.hinted[w].fetch_add(1, Relaxed));
        }
        let strategy = PlacementStrategy::ALL
            [self.strategies[usize::from(options.hub)].load(Relaxed) as usize];
        let Some(exec) = from else {
            return self.cursors[self.workers()].fetch_add(1, Relaxed) % total;
        };
        // Only this worker writes its cursor: a load and a store, no read-modify-write.
        let cursor = &self.cursors[exec.index()];
        match strategy {
            PlacementStrategy::Random => fastrand::usize(0..total),
            PlacementStrategy::Default | PlacementStrategy::Compact => {
                if let Some(q) = running::running_queue_below(worker::WAKE_BACKLOG) {
                    return self.index_of(q);
                }
                let spawned = cursor.load(Relaxed);
                cursor.store(spawned.wrapping_add(1), Relaxed);
                self.filled(exec.index(), spawned)
            }
            PlacementStrategy::Circular | PlacementStrategy::Scatter => {
                let q = cursor.load(Relaxed) % total;
                cursor.store((q + 1) % total, Relaxed);
                q
            }
        }
    }

    /// The queue of worker `w`'s that its `n`-th actor spread over its queues is bound to:
    /// [`FILL`] actors to a queue, then the next one.
    fn filled(&self, w: usize, n: usize) -> usize {
        let range = &self.ranges[w];
        range.start + n / FILL % range.len()
    }

    /// The queue of worker `w`'s that its `n`-th actor placed with `Placement::Worker` is
    /// bound to: blocks of consecutive actors, one queue each, in turn over the worker's Q
    /// queues. The first 2·Q·[`FILL`] go in blocks of `FILL`, as [`filled`](Self::filled) lays
    /// them out; from there each doubling of the worker's placed actors is one round over its
    /// queues in blocks of `FILL`·2ᵏ (actors Q·FILL·2ᵏ to Q·FILL·2ᵏ⁺¹, k ≥ 1). Every queue gets
    /// an equal share of each doubling (what a thief takes stays a Qth of them), and a large
    /// population keeps long runs of consecutive actors together: 40,000 actors in groups of
    /// 100 (Cforall's executor) find most of their groups within one queue, where fixed blocks
    /// spread every group over four queues (docs/decisions.md §46). Only for placed actors: a
    /// population laid out at set-up, whose neighbours in creation order work together.
    /// Children spawned as the program runs (a fork tree) keep fixed blocks, which spread
    /// them for thieves (growing blocks cost fjcreate a third at 1 worker).
    fn filled_growing(&self, w: usize, n: usize) -> usize {
        let range = &self.ranges[w];
        let queues = range.len();
        let round = FILL * queues;
        if n < 2 * round {
            return self.filled(w, n);
        }
        let k = (n / round).ilog2();
        range.start + (n - (round << k)) / (FILL << k) % queues
    }

    /// The index of `queue`, one of `self.queues`.
    fn index_of(&self, queue: *const MessageQueue) -> usize {
        let stride = std::mem::size_of::<CachePadded<MessageQueue>>();
        (queue as usize - self.queues.as_ptr() as usize) / stride
    }

    /// Stops and joins the workers (each finishes its current letter and gulp). Letters still
    /// queued stay queued until [`discard_queued`](Self::discard_queued). `false` if already done.
    pub(crate) fn stop_workers(&self) -> bool {
        if self.shutdown.swap(true, SeqCst) {
            return false;
        }
        self.sleepers.notify_all();
        for t in self.threads_of.iter() {
            if let Some(thread) = t.get() {
                thread.unpark();
            }
        }
        let threads = std::mem::take(&mut *self.threads.lock());
        for t in threads {
            let _ = t.join();
        }
        true
    }

    /// After shutdown: drops every queued letter (messages count as dead letters; release letters
    /// free their stopped actors), repeating until no queue holds one (dropping a message may post
    /// another, e.g. an ask's "no reply").
    pub(crate) fn discard_queued(&self) {
        loop {
            let mut any = false;
            for q in self.queues.iter() {
                let mut taken = queue::Buffer::new(self.queue_kind);
                q.locked.with(|locked| {
                    std::mem::swap(&mut locked.buffer, &mut taken);
                    q.set_len(0);
                });
                while let Some(letter) = taken.pop() {
                    any = true;
                    drop(letter);
                }
            }
            if !any {
                break;
            }
        }
    }

    /// Queues a letter sealed by `seal` on queue `qi` (`q`) of its actor, under the queue's lock
    /// (every post but a handler's to its own gulp). `None` if the actor is no longer bound to
    /// `q` (the caller starts over). Out of line: the append path stays a few instructions.
    #[inline(never)]
    fn post_locked(
        &self,
        qi: usize,
        q: &MessageQueue,
        b: &Binding,
        follow: bool,
        seal: &mut dyn FnMut(NonNull<Letter>),
    ) -> Option<bool> {
        running::note_queued(q);
        let posted = q.locked.with(|locked| {
            let admit = if self.follow {
                self.admit_locked::<true>(qi, q, locked, b, follow)
            } else {
                self.admit_locked::<false>(qi, q, locked, b, follow)
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

    /// Under the lock of `q` (queue `qi`), before a letter to the actor bound as `b` is pushed
    /// on it: `Closed` if the actor has closed; `Moved` if it is no longer bound to `q`, re-bound
    /// since the caller read its binding, or just now, to follow this thread's worker
    /// ([`follow_target`](Self::follow_target), if `follow`): the caller starts over with the
    /// new binding, and without `follow` (a post re-binds its actor at most once, so it cannot
    /// chase a queue whose owner changes). `Here`: the letter goes into `q`. `FOLLOWING`:
    /// whether actors follow (`self.follow`); without, a binding never changes and only the
    /// closed flag is read.
    #[inline(always)]
    fn admit_locked<const FOLLOWING: bool>(
        &self,
        qi: usize,
        q: &MessageQueue,
        _locked: &queue::Locked,
        b: &Binding,
        follow: bool,
    ) -> Admit {
        if b.closed.load(Relaxed) {
            return Admit::Closed;
        }
        if !FOLLOWING {
            return Admit::Here;
        }
        self.admit_following(qi, q, b, follow)
    }

    /// [`admit_locked`](Self::admit_locked) while actors follow: the binding read again, the
    /// actor scored and perhaps re-bound, its last letter's gulp noted.
    #[inline(always)]
    fn admit_following(&self, qi: usize, q: &MessageQueue, b: &Binding, follow: bool) -> Admit {
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
        // Its letters posted before, through the lock, to actors of the running queue wait
        // behind this gulp: its next ones must not be appended ahead of them (`running.rs`).
        running::close_running_room();
        Some(self.index_of(gulp.queue))
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
        self.sleepers.is_asleep_locked(owner).then_some(owner)
    }

    /// Wakes what [`publish_locked`](Self::publish_locked) found asleep.
    #[inline]
    fn wake_owner(&self, sleeping_owner: Option<usize>) {
        if let Some(owner) = sleeping_owner {
            self.notify_owner(owner);
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

    /// `Scheduler::append_slot`; `after_queued`: only while the actor's queue holds nothing.
    #[inline(always)]
    fn append_slot_if(&self, task: TaskRef, after_queued: bool) -> Slot {
        let b = binding(&task);
        let qi = b.queue.load(Acquire) as usize;
        let q = &self.queues[qi];
        match self.gulp_for(q, b, after_queued) {
            Some(Target::Gulp(gulp)) => gulp.reserve().map_or(Slot::Elsewhere, Slot::At),
            Some(Target::Queue) => self.queued_slot(qi, q, b, after_queued),
            None => Slot::Closed,
        }
    }

    /// A place at the end of `q`'s buffer (queue `qi`) for a letter to the actor bound as `b`,
    /// with `q`'s lock kept until [`Scheduler::finish_post`]: the letter is written straight
    /// into its queue, with no closure and no further call between the two halves.
    /// `Slot::Elsewhere` for a list buffer (its letters are moved into nodes: `post_sealed`).
    /// Out of line: the append path stays short.
    #[inline(never)]
    fn queued_slot(&self, qi: usize, q: &MessageQueue, b: &Binding, after_queued: bool) -> Slot {
        if self.follow {
            return self.queued_slot_following(qi, q, b, after_queued);
        }
        // A binding that never changes: the attempt cannot find the actor moved.
        self.try_queued_slot::<false>(qi, q, b, false)
            .unwrap_or(Slot::Closed)
    }

    /// [`queued_slot`](Self::queued_slot) while actors follow, apart so that the fixed binding
    /// keeps its own short code.
    #[inline(never)]
    fn queued_slot_following(
        &self,
        qi: usize,
        q: &MessageQueue,
        b: &Binding,
        after_queued: bool,
    ) -> Slot {
        match self.try_queued_slot::<true>(qi, q, b, true) {
            Some(slot) => slot,
            None => self.slot_after_move(b, after_queued),
        }
    }

    /// One attempt of [`queued_slot`](Self::queued_slot): `None` if the actor is no longer
    /// bound to `q` (re-bound meanwhile, or just now to follow this worker).
    #[inline(always)]
    fn try_queued_slot<const FOLLOWING: bool>(
        &self,
        qi: usize,
        q: &MessageQueue,
        b: &Binding,
        follow: bool,
    ) -> Option<Slot> {
        // Counted before the lock is taken, not inside the critical section. A list buffer's
        // letter goes on through `post_locked`, which counts it.
        if self.queue_kind == QueueKind::Copy {
            running::note_queued(q);
        }
        let mut held = q.locked.hold();
        let slot =
            held.with(
                |locked| match self.admit_locked::<FOLLOWING>(qi, q, locked, b, follow) {
                    Admit::Closed => Some(Slot::Closed),
                    Admit::Moved => None,
                    // SAFETY: the caller writes the letter at once (`Slot::Queued`'s contract), before
                    // anything else reaches the buffer: we keep the lock until `finish_post`.
                    Admit::Here => match unsafe { locked.buffer.reserve_slot() } {
                        Some(at) => Some(Slot::Queued(at)),
                        None => Some(Slot::Elsewhere),
                    },
                },
            );
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
    fn slot_after_move(&self, b: &Binding, after_queued: bool) -> Slot {
        loop {
            let qi = b.queue.load(Acquire) as usize;
            let q = &self.queues[qi];
            match self.gulp_for(q, b, after_queued) {
                Some(Target::Gulp(gulp)) => {
                    return gulp.reserve().map_or(Slot::Elsewhere, Slot::At)
                }
                Some(Target::Queue) => {
                    if let Some(slot) = self.try_queued_slot::<true>(qi, q, b, false) {
                        return slot;
                    }
                }
                None => return Slot::Closed,
            }
        }
    }

    /// Cforall's statistics.
    pub(crate) fn stats(&self) -> MessageCentricStats {
        let posted = self
            .queues
            .iter()
            .map(|q| q.locked.with(|locked| locked.posted) + q.appended())
            .sum();
        let total = self.shared.counters.stats().total;
        MessageCentricStats::from_counters(&total, self.queues.len() as u64, posted)
    }
}

impl Scheduler for Engine {
    fn timer_armed(&self, shard: usize) {
        // Its worker, if it sleeps, wakes and sleeps again until the new deadline
        // (`Shared::park_until_timer`); a running worker just takes one more turn later.
        if let Some(thread) = self.threads_of.get(shard).and_then(|t| t.get()) {
            thread.unpark();
        }
    }

    unsafe fn init_task(&self, header: &Header, options: &SpawnOptions, from: Option<&Exec>) {
        let queue = self.bind(options, from) as u32;
        // SAFETY: called once, before the task is shared (the trait's contract).
        unsafe {
            header.sched.init(Binding {
                queue: AtomicU32::new(queue),
                closed: AtomicBool::new(false),
                hub: AtomicBool::new(options.hub),
                score: AtomicU8::new(0),
                pending: AtomicU64::new(0),
            })
        }
    }

    fn schedule_spawned(&self, _: TaskRef, _: &SpawnOptions, _: Option<&Exec>) {
        unreachable!("direct mailboxes post their start letter instead");
    }

    fn schedule_woken(&self, _: TaskRef) {
        unreachable!("direct mailboxes never schedule their actor");
    }

    fn set_hub(&self, task: TaskRef, hub: bool) -> bool {
        binding(&task).hub.swap(hub, Relaxed) != hub
    }

    fn is_hub(&self, task: TaskRef) -> bool {
        binding(&task).hub.load(Relaxed)
    }

    fn direct(&self) -> bool {
        true
    }

    fn post_sealed(
        &self,
        task: TaskRef,
        append: bool,
        seal: &mut dyn FnMut(NonNull<Letter>),
    ) -> bool {
        let b = binding(&task);
        let mut follow = self.follow;
        loop {
            let qi = b.queue.load(Acquire) as usize;
            let q = &self.queues[qi];
            // A list buffer's letter to the running gulp joins it too (`append_slot` reserves
            // places only in copy buffers, and has already turned a copy buffer's letter away).
            if append && self.queue_kind == QueueKind::List {
                match self.gulp_for(q, b, false) {
                    Some(Target::Gulp(gulp)) => {
                        gulp.push(Buffer::seal(seal));
                        return true;
                    }
                    Some(Target::Queue) => {}
                    None => return false,
                }
            }
            if let Some(posted) = self.post_locked(qi, q, b, follow, seal) {
                return posted;
            }
            // Re-bound: again, with its new queue.
            follow = false;
        }
    }

    #[inline]
    fn append_slot(&self, task: TaskRef) -> Slot {
        self.append_slot_if(task, false)
    }

    fn append_slot_after_queued(&self, task: TaskRef) -> Slot {
        self.append_slot_if(task, true)
    }

    fn finish_post(&self, task: TaskRef) {
        // The actor's queue: the one `queued_slot` locked for this letter (a re-binding away
        // from it needs that lock, held until here).
        let q = &self.queues[binding(&task).queue.load(Relaxed) as usize];
        // SAFETY: `queued_slot` kept the lock, and the letter has been written in its place.
        let sleeping_owner = unsafe { q.locked.finish(|locked| self.publish_locked(q, locked)) };
        self.wake_owner(sleeping_owner);
    }

    fn close(&self, task: TaskRef, release: Option<&'static LetterVtable>) {
        let b = binding(&task);
        loop {
            let qi = b.queue.load(Acquire) as usize;
            let q = &self.queues[qi];
            // An actor stopping in a gulp of its own queue on this thread (its handler stopped
            // it): if the queue holds nothing, every letter to it is in that gulp, and the
            // release letter joins the gulp behind them, so the actor is freed within the gulp
            // rather than a pass later (dynamic send kept ~16 stopped actors alive, one per
            // queue, and malloc's slow paths showed it). The closed flag is set first, under the
            // lock: no later letter can reach the queue or the gulp.
            let gulp = running::running_gulp_of(q);
            // `Some(sleeping owner)`: the release letter went to the queue; `Err`: re-bound
            // meanwhile (an idle actor closed from another thread), start over.
            let queued = q.locked.with(|locked| {
                if b.queue.load(Relaxed) as usize != qi {
                    return Err(());
                }
                b.closed.store(true, Relaxed);
                let Some(release) = release else {
                    return Ok(None);
                };
                if gulp.is_some() && locked.buffer.len() == 0 {
                    return Ok(None);
                }
                locked.buffer.push_release(task, release);
                Ok(Some(self.publish_locked(q, locked)))
            });
            match (queued, gulp, release) {
                (Err(()), _, _) => continue,
                (Ok(Some(sleeping_owner)), _, _) => self.wake_owner(sleeping_owner),
                (Ok(None), Some(gulp), Some(release)) => gulp.push_release(task, release),
                _ => {}
            }
            return;
        }
    }

    fn locate(&self, task: TaskRef) -> crate::introspect::Location {
        // Messages, not actors, are queued here: the actor's state is its queue's.
        let queue = binding(&task).queue.load(Relaxed) as usize;
        let q = &self.queues[queue];
        let state = if q.processing.is_claimed() {
            crate::introspect::ActorState::Running
        } else if q.len_hint() > 0 {
            crate::introspect::ActorState::Scheduled
        } else {
            crate::introspect::ActorState::Idle
        };
        crate::introspect::Location {
            worker: Some(q.owner.load(Relaxed)),
            queue: Some(queue),
            state: Some(state),
        }
    }

    fn has_queued(&self, task: TaskRef) -> bool {
        if running::current_holds(task) {
            return true;
        }
        let b = binding(&task);
        loop {
            let qi = b.queue.load(Acquire) as usize;
            let q = &self.queues[qi];
            // `None`: re-bound meanwhile, look again where it went.
            let holds = q.locked.with(|locked| {
                (b.queue.load(Relaxed) as usize == qi).then(|| locked.buffer.holds(task))
            });
            if let Some(holds) = holds {
                return holds;
            }
        }
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
fn idle(pending: u64, generation: u64, claimed: bool) -> bool {
    pending <= generation && !claimed
}

/// What a post finds under its queue's lock ([`Engine::admit_locked`]).
enum Admit {
    /// The letter goes into this queue.
    Here,
    /// The actor has closed: the letter is refused.
    Closed,
    /// The actor is bound to another queue now: the poster starts over.
    Moved,
}

/// Where a handler's letter goes ([`Engine::gulp_for`]).
enum Target {
    /// The running gulp of this thread's worker.
    Gulp(running::Appender),
    /// The actor's queue, under its lock.
    Queue,
}

fn strategy_index(strategy: PlacementStrategy) -> u8 {
    PlacementStrategy::ALL
        .iter()
        .position(|s| *s == strategy)
        .expect("every strategy is listed") as u8
}

#[cfg(all(test, not(loom)))]
mod tests;
