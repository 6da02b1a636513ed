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
//! | `bind.rs` | where a new actor is bound: placement strategies, blocks of a worker's queues |
//! | `copy_queue.rs` | the copy queue (array of letters, O(1) pop by index) |
//! | `follow.rs` | actors that follow their partners: scoring, the idle test, re-binding |
//! | `idle.rs` | parking, wake-ups, the watch on busy workers, quiescence |
//! | `post.rs` | how a letter reaches its actor's queue: appended to the gulp, or under the lock |
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

mod bind;
mod copy_queue;
mod follow;
mod idle;
#[cfg(all(test, loom))]
mod loom_tests;
mod post;
mod queue;
mod running;
mod spin;
mod swap;
mod worker;

use super::sleepers::Sleepers;
use crate::config::{QueueKind, VictimSelection};
use crate::runtime::letter::LetterVtable;
use crate::runtime::options::SpawnOptions;
use crate::runtime::task::SchedState;
use crate::runtime::{
    Boundary, EngineCore, Exec, Header, Letter, LetterQueues, Runtime, Shared, Slot, TaskRef,
};
use crate::sync::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize};
use crate::telemetry::MessageCentricStats;
use bind::strategy_index;
use crossbeam_utils::CachePadded;
use parking_lot::Mutex;
use post::Poster;
use post::Target;
use queue::{Buffer, MessageQueue};
use std::ops::Range;
use std::ptr::NonNull;
use std::sync::atomic::Ordering::{Acquire, Relaxed, SeqCst};
use std::sync::{Arc, OnceLock};
use std::thread::{JoinHandle, Thread};
use std::time::Instant;
use worker::Worker;

/// An actor's binding, in its header's scheduling words: its queue and whether it has closed (set
/// under that queue's lock, so a letter is either queued before the actor's release letter or
/// refused).
///
/// The queue is set at spawn and changes only when the actor *follows* a handler that posts to
/// it: the protocol, and why no letter is lost, duplicated or reordered, is in `follow.rs`'s
/// module docs.
struct Binding {
    /// Its queue's index. Stored with Release (by the worker that re-binds it, after it has
    /// synchronised with the actor's last handler), loaded with Acquire by posters, so the
    /// worker that next runs the actor, through whichever queue, sees that handler's writes.
    queue: AtomicU32,
    closed: AtomicBool,
    hub: AtomicBool,
    /// Posts from handlers that pull it (on another worker than its queue's, or in a lower
    /// queue of the same worker), less posts from other handlers of the same worker, kept
    /// within 0..=2·[`follow::FOLLOW_MAJORITY`]; under its queue's lock.
    score: AtomicU8,
    /// Letters posted to it through its queue's lock since that queue's last gulp (up to 255),
    /// under the lock: how many it would take along if it moved now. Written only while
    /// following is on.
    queued: AtomicU8,
    /// One more than the queue's gulp count when a letter was last posted to it, under its
    /// queue's lock: while it exceeds the count, a letter to the actor waits in the queue.
    /// Written only while following is on (more than one worker).
    pending: AtomicU64,
}

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
        let (threads, root) = super::workers::start_workers(
            &shared,
            Boundary::letters(engine.clone()),
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

    /// Cforall's statistics.
    pub(crate) fn stats(&self) -> MessageCentricStats {
        let posted = self
            .queues
            .iter()
            .map(|q| q.locked.with(|locked| locked.posted) + q.appended())
            .sum();
        let total = self.shared.counters.stats().total;
        stats_from_counters(&total, self.queues.len() as u64, posted)
    }
}

impl EngineCore for Engine {
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
                queued: AtomicU8::new(0),
                pending: AtomicU64::new(0),
            })
        }
    }

    fn set_hub(&self, task: TaskRef, hub: bool) -> bool {
        binding(&task).hub.swap(hub, Relaxed) != hub
    }

    fn is_hub(&self, task: TaskRef) -> bool {
        binding(&task).hub.load(Relaxed)
    }

    fn locate(&self, task: TaskRef) -> crate::runtime::location::Location {
        // Messages, not actors, are queued here: the actor's state is its queue's.
        let queue = binding(&task).queue.load(Relaxed) as usize;
        let q = &self.queues[queue];
        let state = if q.processing.is_claimed() {
            crate::runtime::location::ActorState::Running
        } else if q.len_hint() > 0 {
            crate::runtime::location::ActorState::Scheduled
        } else {
            crate::runtime::location::ActorState::Idle
        };
        crate::runtime::location::Location {
            worker: Some(q.owner.load(Relaxed)),
            queue: Some(queue),
            state: Some(state),
        }
    }
}

impl LetterQueues for Engine {
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
            if let Some(posted) = self.post_locked(qi, q, task, follow, seal) {
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

#[cfg(all(test, not(loom)))]
mod tests;

/// The statistics from the workers' counters, with the engine's own totals.
fn stats_from_counters(
    total: &crate::telemetry::WorkerStats,
    queues: u64,
    letters_posted: u64,
) -> MessageCentricStats {
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    MessageCentricStats {
        queues,
        letters_posted,
        gulps: total.gulps,
        avg_gulp_size: ratio(total.gulped, total.gulps),
        missed_gulps: total.missed_gulps,
        steal_attempts: total.steal_attempts,
        steal_no_candidate: total.steal_no_candidate,
        steal_deferred: total.steal_deferred,
        steal_failed_swap: total.steal_failed_swap,
        queues_stolen: total.steals,
        letters_stolen: total.letters_stolen,
        avg_steal_size: ratio(total.letters_stolen, total.steals),
        actors_followed: total.actors_followed,
        letters_followed: total.letters_followed,
    }
}
