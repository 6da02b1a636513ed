//! Loom models of the message-centric engine's lock-free pieces: the wait-free queue swap
//! (`swap.rs`) under competing thieves, `being_processed` (`queue.rs`) keeping a victim's gulp
//! and a thief's gulp of the same queue apart, and the re-binding of an actor to the worker that
//! posts to it (`follow.rs`), idle or with its queued letters.
//!
//! The re-binding models run the engine's own post path ([`Poster`]'s provided methods, and
//! `follow.rs` under them) on real [`MessageQueue`]s, real actor headers holding real
//! [`Binding`]s, real letters, and each worker's real [`Running`] gulp reached through its
//! thread (loom's thread-local under `--cfg loom`). What stands in: [`Model`], the engine's
//! queues and nothing else (no sleepers to wake, no counters; `Engine` itself needs a whole
//! runtime and its threads); a worker's visit ([`visit`]: the real `MessageQueue::gulp` into its
//! `Running`, then each letter opened and recorded in place of `Worker::pass`'s delivery to an
//! actor cell); and `LetterQueues::finish_post`, three lines of the engine's `Scheduler` impl
//! repeated in [`finish`].

use super::follow::{FollowSite, FOLLOW_MAJORITY};
use super::post::Poster;
use super::queue::{Buffer, Gulp, MessageQueue, ProcessingFlag};
use super::running::Running;
use super::spin::SpinLock;
use super::swap::{try_swap, Swap};
use super::{binding, Binding};
use crate::config::QueueKind;
use crate::runtime::letter::tests::TASK_VTABLE;
use crate::runtime::letter::{take, Delivered, LetterVtable, Payload, Rest};
use crate::runtime::{ActorId, Exec, Header, Letter, Slot, TaskRef};
use crate::sync::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, UnsafeCell};
use loom::sync::{Arc, Mutex};
use loom::thread;
use std::sync::atomic::Ordering::Relaxed;

/// A stand-in queue: an id, its lock, the real processing flag, and data only its processor may
/// touch.
struct Queue {
    id: usize,
    lock: Mutex<()>,
    processing: ProcessingFlag,
    data: UnsafeCell<u64>,
}

fn queues(n: usize) -> Arc<Vec<Queue>> {
    Arc::new(
        (0..n)
            .map(|id| Queue {
                id,
                lock: Mutex::new(()),
                processing: ProcessingFlag::default(),
                data: UnsafeCell::new(0),
            })
            .collect(),
    )
}

fn slots_for(queues: &Arc<Vec<Queue>>) -> Arc<Vec<AtomicPtr<Queue>>> {
    Arc::new(
        queues
            .iter()
            .map(|q| AtomicPtr::new(q as *const Queue as *mut Queue))
            .collect(),
    )
}

/// The queue ids in the slots, sorted: a permutation of 0..n when nothing was lost or duplicated.
fn ids(slots: &[AtomicPtr<Queue>]) -> Vec<usize> {
    let mut ids: Vec<usize> = slots
        .iter()
        .map(|s| {
            let q = s.load(Relaxed);
            assert!(!q.is_null(), "a slot was left null");
            // SAFETY: slots point into the model's live queue array.
            unsafe { (*q).id }
        })
        .collect();
    ids.sort_unstable();
    ids
}

fn run_thieves(n_slots: usize, thieves: Vec<(usize, usize)>) -> (Vec<Swap>, Vec<usize>) {
    let q = queues(n_slots);
    let slots = slots_for(&q);
    let handles: Vec<_> = thieves
        .into_iter()
        .map(|(victim, mine)| {
            let slots = slots.clone();
            thread::spawn(move || try_swap(&slots, victim, mine))
        })
        .collect();
    let results = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let ids = ids(&slots);
    (results, ids)
}

/// M thieves (each with its own slot) on one victim slot: at least one wins, and the slots stay
/// a permutation of the queues.
#[test]
fn thieves_on_one_victim_at_least_one_wins() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(|| {
        // Slots 0 and 1: the thieves' own; slot 2: the victim's.
        let (results, ids) = run_thieves(3, vec![(2, 0), (2, 1)]);
        assert_eq!(ids, vec![0, 1, 2], "no queue lost or duplicated");
        assert!(results.contains(&Swap::Done), "one of the thieves must win");
    });
}

/// A chain: thief A steals from B's slot while B steals from C's. At least one swap succeeds.
#[test]
fn a_chain_of_thieves_has_a_winner() {
    loom::model(|| {
        // A owns slot 0, B slot 1, C slot 2.
        let (results, ids) = run_thieves(3, vec![(1, 0), (2, 1)]);
        assert_eq!(ids, vec![0, 1, 2]);
        assert!(
            results.contains(&Swap::Done),
            "an acyclic swap graph has a winner"
        );
    });
}

/// A cycle: A steals from B while B steals from A. Both may fail, but nothing is corrupted.
#[test]
fn a_cycle_of_thieves_may_fail_but_never_corrupts() {
    loom::model(|| {
        let (results, ids) = run_thieves(2, vec![(1, 0), (0, 1)]);
        assert_eq!(ids, vec![0, 1], "no queue lost or duplicated");
        assert!(results.len() == 2);
    });
}

/// The victim copies its slot's pointer and gulps that queue while a thief swaps the queue into
/// its own range and gulps it too: `being_processed` lets at most one of them process it at a
/// time (loom flags concurrent access to `data`), and the thief's claim after the victim's
/// release sees the victim's writes.
#[test]
fn gulp_and_steal_never_process_one_queue_at_once() {
    loom::model(|| {
        let q = queues(2);
        let slots = slots_for(&q);
        let process = |queue: &Queue| {
            // As `MessageQueue::gulp`: claim under the queue's lock, process without it.
            let claimed = {
                let _guard = queue.lock.lock().unwrap();
                queue.processing.claim_locked()
            };
            if claimed {
                queue.data.with_mut(|d| {
                    // SAFETY: the flag gives exclusive access (what the model checks).
                    unsafe { *d += 1 }
                });
                queue.processing.release();
                1
            } else {
                0
            }
        };
        let victim = {
            let slots = slots.clone();
            thread::spawn(move || {
                // The victim copies its slot once (before or after the swap) and gulps that queue.
                let p = slots[1].load(Relaxed);
                // SAFETY: slots point into the live queue array.
                process(unsafe { &*p })
            })
        };
        let _ = try_swap(&slots, 1, 0);
        let mine = slots[0].load(Relaxed);
        // SAFETY: as above.
        let processed = process(unsafe { &*mine }) + victim.join().unwrap();
        let total: u64 = q
            .iter()
            // SAFETY: every thread has joined.
            .map(|queue| queue.data.with(|d| unsafe { *d }))
            .sum();
        assert_eq!(total, processed, "every claimed gulp ran, and only those");
        assert_eq!(ids(&slots), vec![0, 1]);
    });
}

/// The queues' spin lock: two threads each add under it; loom checks every interleaving for a
/// lost update or an unprotected access (it flags concurrent access to the value's cell).
#[test]
fn the_spin_lock_excludes() {
    loom::model(|| {
        let lock = Arc::new(SpinLock::new(0u32));
        let other = {
            let lock = lock.clone();
            thread::spawn(move || lock.with(|n| *n += 1))
        };
        lock.with(|n| *n += 1);
        other.join().unwrap();
        assert_eq!(lock.with(|n| *n), 2);
    });
}

/// A post's critical section split in two (`SpinLock::hold`, `Held::keep`, `SpinLock::finish`:
/// a place reserved, the letter written outside, then published) against a gulp's one-piece
/// section: the gulp sees the post either not begun or whole, never its reserved place alone.
#[test]
fn a_split_post_and_a_gulp_exclude_each_other() {
    loom::model(|| {
        // (reserved, published)
        let lock = Arc::new(SpinLock::new((0u32, 0u32)));
        let poster = {
            let lock = lock.clone();
            thread::spawn(move || {
                let mut held = lock.hold();
                held.with(|(reserved, _)| *reserved += 1);
                held.keep();
                // SAFETY: kept just above.
                unsafe { lock.finish(|(_, published)| *published += 1) };
            })
        };
        let seen = lock.with(|&mut (reserved, published)| (reserved, published));
        assert!(
            seen == (0, 0) || seen == (1, 1),
            "a half-done post: {seen:?}"
        );
        poster.join().unwrap();
        assert_eq!(lock.with(|v| *v), (1, 1));
    });
}

/// The engine as the post path sees it ([`Poster`]), around real queues: queue 0 owned by
/// worker 0, queue 1 by worker 1, nobody asleep, nothing counted.
struct Model {
    queues: Vec<MessageQueue>,
}

impl FollowSite for Model {
    fn queue(&self, qi: usize) -> &MessageQueue {
        &self.queues[qi]
    }
    fn index_of(&self, queue: *const MessageQueue) -> usize {
        self.queues
            .iter()
            .position(|q| std::ptr::eq(q, queue))
            .expect("one of the model's queues")
    }
    fn note_followed(&self, _: usize, _: usize) {}
}

impl Poster for Model {
    fn follows(&self) -> bool {
        true
    }
    fn queue_kind(&self) -> QueueKind {
        QueueKind::Copy
    }
    fn asleep_locked(&self, _: usize) -> bool {
        false
    }
    fn wake_worker(&self, _: usize) {
        unreachable!("nobody sleeps in the model")
    }
}

/// Drops a model letter's number.
unsafe fn discard_number(_: TaskRef, payload: *mut Payload) {
    // SAFETY: the model's letters carry a `u8`, read once by `open` or dropped here.
    let _number = unsafe { take::<u8>(payload) };
}
unsafe fn deliver_never(_: TaskRef, _: *mut Payload, _: &Exec, _: &dyn Rest) -> Delivered {
    unreachable!("the model opens its letters")
}
/// A letter carrying its number.
static NUMBERED: LetterVtable = LetterVtable {
    deliver: deliver_never,
    envelope: true,
    discard: discard_number,
    hot: [0, 0],
};

/// An actor: a real header whose scheduling words hold a real [`Binding`], and the state its
/// handler writes (the letters it has run, in order; loom flags two handlers at once).
struct Actor {
    header: Header,
    ran: UnsafeCell<Vec<u8>>,
}

impl Actor {
    /// Bound to queue 0, about to follow: its score one pull short of a move.
    fn new(n: u64) -> Actor {
        let header = Header::new(&TASK_VTABLE, ActorId::from_worker(0, n));
        // SAFETY: once, before the header is shared (as `Engine::init_task`).
        unsafe {
            header.sched.init(Binding {
                queue: AtomicU32::new(0),
                closed: AtomicBool::new(false),
                hub: AtomicBool::new(false),
                score: AtomicU8::new(FOLLOW_MAJORITY - 1),
                queued: AtomicU8::new(0),
                pending: AtomicU64::new(0),
            })
        };
        Actor {
            header,
            ran: UnsafeCell::new(Vec::new()),
        }
    }

    fn task(&self) -> TaskRef {
        TaskRef::from_header(&self.header)
    }
}

/// Two queues, the actor that may follow and another actor of queue 0 that never does.
struct World {
    model: Model,
    actor: Actor,
    other: Actor,
    /// Letters the other actor ran.
    others: AtomicU32,
}

fn world() -> Arc<World> {
    let other = Actor::new(2);
    binding(&other.task()).hub.store(true, Relaxed);
    Arc::new(World {
        model: Model {
            queues: (0..2)
                .map(|w| MessageQueue::new(QueueKind::Copy, w))
                .collect(),
        },
        actor: Actor::new(1),
        other,
        others: AtomicU32::new(0),
    })
}

/// A send of letter `n` to `to` through the engine's post path (`LetterQueues::append_slot`):
/// appended to this thread's running gulp, or written in place in the actor's queue, whichever
/// the engine gives, following this thread's gulp if it decides so.
fn post(world: &World, to: &Actor, n: u8) {
    let task = to.task();
    match world.model.append_slot_if(task, false) {
        // SAFETY: a place for one letter, written at once (`Slot::At`'s contract).
        Slot::At(at) => unsafe { Letter::write_at(at, task, &NUMBERED, n) },
        Slot::Queued(at) => {
            // SAFETY: as above (`Slot::Queued`'s contract), then published.
            unsafe { Letter::write_at(at, task, &NUMBERED, n) };
            finish(&world.model, task);
        }
        Slot::Closed | Slot::Elsewhere => unreachable!("open actors, copy queues"),
    }
}

/// `LetterQueues::finish_post`, as the engine's `Scheduler` impl writes it.
fn finish(model: &Model, task: TaskRef) {
    let q = model.queue(binding(&task).queue.load(Relaxed) as usize);
    // SAFETY: `append_slot_if` kept the lock, and the letter has been written in its place.
    let sleeping_owner = unsafe { q.locked.finish(|locked| model.publish_locked(q, locked)) };
    model.wake_owner(sleeping_owner);
}

/// Room of a gulp for appended letters.
const ROOM: usize = 8;

/// Runs the letters of `running`'s gulp, oldest first.
fn run_gulp(world: &World, running: &Running) {
    while let Some(letter) = running.with_local(Buffer::pop) {
        let task = letter.task();
        // SAFETY: the model's letters carry a `u8`.
        let n = unsafe { letter.open::<u8>() };
        if task == world.actor.task() {
            // SAFETY: the flag of the queue whose gulp holds the letter gives exclusive access
            // to the actor (what the model checks).
            world.actor.ran.with_mut(|ran| unsafe { (*ran).push(n) });
        } else {
            world.others.fetch_add(1, Relaxed);
        }
    }
}

/// A worker's visit to queue `qi`, as `Worker::pass` makes it: the real gulp into its
/// `Running` (claimed under the queue's lock, the buffers swapped, the gulp counted), its
/// letters run, the gulp ended and the flag released.
fn visit(world: &World, running: &Running, qi: usize) {
    let q = world.model.queue(qi);
    if let Gulp::Took(_) = running.with_local(|local| q.gulp(local)) {
        running.begin(q, ROOM);
        run_gulp(world, running);
        running.end();
        q.processing.release();
    }
}

/// Worker 1, in a gulp of queue 1 (empty: claimed all the same, as a gulp whose handler is
/// running), posts letters 1 and 2 to the actor as that handler: each post may re-bind it into
/// queue 1 (a pull from another worker, the score at the margin). Then it runs its gulp (the
/// letters the actor brought along) and visits queue 1 again.
fn follower(world: &World) {
    let running = Running::new(1, Buffer::new(QueueKind::Copy));
    Running::install(Some(&running));
    let q1 = world.model.queue(1);
    q1.locked.with(|_| assert!(q1.processing.claim_locked()));
    running.begin(q1, ROOM);
    for n in [1, 2] {
        post(world, &world.actor, n);
    }
    run_gulp(world, &running);
    running.end();
    q1.processing.release();
    visit(world, &running, 1);
    Running::install(None);
}

/// After every thread has joined: the actor's letters left are in one queue at most, and running
/// them all gives each once.
fn drain(world: &World) -> Vec<u8> {
    let task = world.actor.task();
    let holding: Vec<bool> = world
        .model
        .queues
        .iter()
        .map(|q| q.locked.with(|locked| locked.buffer.holds(task)))
        .collect();
    assert!(
        !(holding[0] && holding[1]),
        "the actor's letters in two queues"
    );
    let running = Running::new(0, Buffer::new(QueueKind::Copy));
    for qi in 0..2 {
        visit(world, &running, qi);
    }
    // SAFETY: every thread has joined.
    world.actor.ran.with(|ran| unsafe { (*ran).clone() })
}

/// The re-binding models' bounds: `preemptions`, and room for the real code's branches (its
/// spin lock, length hints and scores are each a step loom schedules around).
fn following_model(preemptions: usize) -> loom::model::Builder {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(preemptions);
    builder.max_branches = 100_000;
    builder
}

/// Re-binding against a gulp of the queue the actor leaves (`follow.rs`): letter 0 waits in
/// queue 0, which worker 0 gulps and runs meanwhile; worker 1's handler posts letters 1 and 2,
/// each free to re-bind the actor into its own queue; a plain thread posts letter 3. In every
/// interleaving: no two handlers of the actor run at once (loom: a re-bind while worker 0 may
/// still run letter 0, and worker 1 runs letters 1 and 2), every letter runs once, each sender's
/// in order. Red if the re-bind skips the processing flag (`movable`'s `claimed`).
#[test]
fn a_post_re_binds_only_an_idle_actor() {
    following_model(2).check(|| {
        let world = world();
        post(&world, &world.actor, 0);
        let worker0 = {
            let world = world.clone();
            thread::spawn(move || {
                let running = Running::new(0, Buffer::new(QueueKind::Copy));
                Running::install(Some(&running));
                visit(&world, &running, 0);
                Running::install(None);
            })
        };
        let worker1 = {
            let world = world.clone();
            thread::spawn(move || follower(&world))
        };
        worker0.join().unwrap();
        worker1.join().unwrap();
        let ran = drain(&world);
        let mut sorted = ran.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, vec![0, 1, 2], "lost or duplicated: {ran:?}");
        let at = |l| ran.iter().position(|&r| r == l);
        assert!(at(1) < at(2), "a sender's letters out of order: {ran:?}");
    });
}

/// Moving an actor with its queued letters, and posts racing the move (`follow.rs`): letter 0
/// to the actor waits in queue 0 before a letter to another actor; worker 1's handler posts
/// letters 1 and 2, free to take the actor, letters and all, into its gulp; worker 0 visits
/// queue 0 meanwhile; a plain thread posts letters 3 and 4, racing the move. In every
/// interleaving: no two handlers of the actor run at once (loom), each sender's letters run in
/// order (0, 3, 4 and 1, 2), every letter runs exactly once, the other actor's letter stays and
/// runs once, and the actor's letters left at the end are in one queue. Red if a post skips the
/// bound-queue re-check under the lock, or the move leaves its letters behind. One preemption:
/// with two, its four threads of real code take longer than a model run should (over 6 min).
#[test]
fn an_actor_moves_with_its_queued_letters_in_order() {
    following_model(1).check(|| {
        let world = world();
        post(&world, &world.actor, 0);
        post(&world, &world.other, 100);
        let worker1 = {
            let world = world.clone();
            thread::spawn(move || follower(&world))
        };
        let worker0 = {
            let world = world.clone();
            thread::spawn(move || {
                let running = Running::new(0, Buffer::new(QueueKind::Copy));
                Running::install(Some(&running));
                visit(&world, &running, 0);
                Running::install(None);
            })
        };
        post(&world, &world.actor, 3);
        worker1.join().unwrap();
        worker0.join().unwrap();
        let ran = drain(&world);
        assert_eq!(
            world.others.load(Relaxed),
            1,
            "the other actor's letter ran once"
        );
        let mut sorted = ran.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, vec![0, 1, 2, 3], "lost or duplicated: {ran:?}");
        let at = |l| ran.iter().position(|&r| r == l);
        assert!(
            at(0) < at(3) && at(1) < at(2),
            "a sender's letters out of order: {ran:?}"
        );
    });
}
