//! Loom models of the message-centric engine's lock-free pieces: the wait-free queue swap
//! (`swap.rs`) under competing thieves, `being_processed` (`queue.rs`) keeping a victim's gulp
//! and a thief's gulp of the same queue apart, and the re-binding of an actor to the worker that
//! posts to it (`Engine::follow_target`), idle or with its queued letters.

use super::follow::{movable, Movable};
use super::queue::ProcessingFlag;
use super::spin::SpinLock;
use super::swap::{try_swap, Swap};
use crate::sync::{AtomicPtr, AtomicU32, AtomicU64, UnsafeCell};
use loom::sync::{Arc, Mutex};
use loom::thread;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

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

/// A stand-in for a queue an actor can be re-bound between: its lock over the buffer and the
/// gulp count, and the real processing flag.
struct BindQueue {
    lock: Mutex<(Vec<u8>, u64)>,
    processing: ProcessingFlag,
}

/// A stand-in actor: its binding (queue index, last letter's gulp) and the state its handler
/// writes (the letters it has run, in order).
struct BoundActor {
    queue: AtomicU32,
    pending: AtomicU64,
    ran: UnsafeCell<Vec<u8>>,
}

/// Two queues holding `letters`, and an actor bound to queue 0 whose last letter went into
/// its first gulp (queue 0's letter 0 is the actor's).
fn bound_to_queue_0(letters: [Vec<u8>; 2]) -> (Arc<Vec<BindQueue>>, Arc<BoundActor>) {
    let queues = letters
        .into_iter()
        .map(|letters| BindQueue {
            lock: Mutex::new((letters, 0)),
            processing: ProcessingFlag::default(),
        })
        .collect();
    let actor = BoundActor {
        queue: AtomicU32::new(0),
        pending: AtomicU64::new(1),
        ran: UnsafeCell::new(Vec::new()),
    };
    (Arc::new(queues), Arc::new(actor))
}

/// Where a post may take its actor ([`post`]): to queue `to`, and, if the poster runs in `to`'s
/// gulp (`gulp`, its letters), with the actor's queued letters; without a gulp, only an idle
/// actor moves.
struct Follow<'a> {
    to: u32,
    gulp: Option<&'a mut Vec<u8>>,
}

/// A post as `Engine::post_locked`, `Engine::admit_following` and `Engine::follow_target` make
/// it: read the binding, lock its queue, read the binding again and start over if it changed.
/// If `follow` names another queue and no worker processes this one ([`movable`]), re-bind the
/// actor there (pending reset, then the binding with Release) and start over, at most once per
/// post; its queued letters, if any, go along into the follow's gulp, in order, the other
/// actor's letters staying (the letter itself then goes through the new queue's lock, the
/// gulp's room being closed by the move). Else push the letter and note its gulp.
fn post(queues: &[BindQueue], actor: &BoundActor, letter: u8, mut follow: Option<Follow<'_>>) {
    loop {
        let qi = actor.queue.load(Acquire);
        let q = &queues[qi as usize];
        let mut locked = q.lock.lock().unwrap();
        let (buffer, generation) = &mut *locked;
        if actor.queue.load(Relaxed) != qi {
            continue;
        }
        if let Some(f) = follow.take_if(|f| f.to != qi) {
            let how = movable(
                actor.pending.load(Relaxed),
                *generation,
                q.processing.is_claimed_locked(),
            );
            let moves = match (how, f.gulp) {
                (Movable::Idle, _) => true,
                (Movable::WithLetters, Some(gulp)) => {
                    gulp.extend(buffer.iter().copied().filter(|&l| l < OTHER));
                    buffer.retain(|&l| l >= OTHER);
                    true
                }
                _ => false,
            };
            if moves {
                actor.pending.store(0, Relaxed);
                actor.queue.store(f.to, Release);
                continue;
            }
        }
        buffer.push(letter);
        actor.pending.store(*generation + 1, Relaxed);
        return;
    }
}

/// A worker's gulp of `q`, as `MessageQueue::gulp` and `Worker::pass` make it: claim and swap
/// under the lock (counting the gulp), run the letters without it, release the flag.
/// Letters to another actor than the one that moves (they stay in their queue).
const OTHER: u8 = 100;

/// A gulp's letters: the actor's run by its handler (loom flags two handlers at once), the
/// other actor's counted.
fn run_letters(letters: Vec<u8>, actor: &BoundActor, others: &AtomicU32) {
    for letter in letters {
        if letter >= OTHER {
            others.fetch_add(1, Relaxed);
        } else {
            // SAFETY: the flag of the queue whose gulp holds the letter gives exclusive access
            // to the actor (what the model checks).
            actor.ran.with_mut(|ran| unsafe { (*ran).push(letter) });
        }
    }
}

fn gulp_and_run(q: &BindQueue, actor: &BoundActor, others: &AtomicU32) {
    let taken = {
        let mut locked = q.lock.lock().unwrap();
        let (buffer, generation) = &mut *locked;
        if buffer.is_empty() || !q.processing.claim_locked() {
            None
        } else {
            *generation += 1;
            Some(std::mem::take(buffer))
        }
    };
    if let Some(letters) = taken {
        run_letters(letters, actor, others);
        q.processing.release();
    }
}

/// Re-binding against posts and gulps (`Engine::follow_target`): an actor bound to queue 0 has
/// letter 0 queued there; a sender on the other worker posts letters 1 and 2, each post free to
/// re-bind the actor to queue 1; another sender posts letter 3 without following; worker 0
/// gulps queue 0 and worker 1 queue 1 meanwhile. In every interleaving: no two handlers of the
/// actor run at once (loom), letters 1 and 2 run in order, every letter runs exactly once, and
/// the letters left at the end are all in one queue.
#[test]
fn a_post_re_binds_only_an_idle_actor() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(2);
    builder.check(|| {
        let (queues, actor) = bound_to_queue_0([vec![0u8], vec![]]);
        let sender = {
            let (queues, actor) = (queues.clone(), actor.clone());
            thread::spawn(move || {
                for letter in [1, 2] {
                    let follow = Follow { to: 1, gulp: None };
                    post(&queues, &actor, letter, Some(follow));
                }
            })
        };
        let workers: Vec<_> = (0..2)
            .map(|w| {
                let (queues, actor) = (queues.clone(), actor.clone());
                thread::spawn(move || gulp_and_run(&queues[w], &actor, &AtomicU32::new(0)))
            })
            .collect();
        post(&queues, &actor, 3, None);
        sender.join().unwrap();
        for w in workers {
            w.join().unwrap();
        }
        let left: Vec<usize> = queues
            .iter()
            .map(|q| q.lock.lock().unwrap().0.len())
            .collect();
        assert!(
            left[0] == 0 || left[1] == 0,
            "an actor's letters in two queues: {left:?}"
        );
        for q in queues.iter() {
            gulp_and_run(q, &actor, &AtomicU32::new(0));
        }
        // SAFETY: every thread has joined.
        let ran = actor.ran.with(|ran| unsafe { (*ran).clone() });
        let mut sorted = ran.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, vec![0, 1, 2, 3], "lost or duplicated: {ran:?}");
        let at = |l| ran.iter().position(|&r| r == l);
        assert!(at(1) < at(2), "a sender's letters out of order: {ran:?}");
    });
}

/// Moving an actor with its queued letters (`Engine::follow_target`): it is bound to queue 0,
/// where a plain sender's letter 0 waits beside a letter to another actor. Worker 1 gulps queue 1
/// and one of its handlers posts letters 1 and 2 to the actor, free to take it, letters and
/// all, into its gulp; worker 0 gulps queue 0 meanwhile; the plain sender posts letters 3 and 4.
/// In every interleaving: no two handlers of the actor run at once (loom), each sender's
/// letters run in order (0, 3, 4 and 1, 2), every letter runs exactly once, the other actor's
/// letter stays and runs once, and the actor's letters left at the end are all in one queue.
/// Red if the move skips the processing flag, leaves a letter behind, or reorders the letters
/// it takes.
#[test]
fn an_actor_moves_with_its_queued_letters_in_order() {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(2);
    builder.check(|| {
        let (queues, actor) = bound_to_queue_0([vec![0u8, OTHER], vec![]]);
        let others = Arc::new(AtomicU32::new(0));
        let mover = {
            let (queues, actor, others) = (queues.clone(), actor.clone(), others.clone());
            thread::spawn(move || {
                // Worker 1's gulp of queue 1 (empty: claimed all the same, as a running gulp).
                let q1 = &queues[1];
                let mut local = {
                    let mut locked = q1.lock.lock().unwrap();
                    assert!(q1.processing.claim_locked());
                    locked.1 += 1;
                    std::mem::take(&mut locked.0)
                };
                for letter in [1, 2] {
                    let follow = Follow {
                        to: 1,
                        gulp: Some(&mut local),
                    };
                    post(&queues, &actor, letter, Some(follow));
                }
                run_letters(local, &actor, &others);
                q1.processing.release();
            })
        };
        let worker0 = {
            let (queues, actor, others) = (queues.clone(), actor.clone(), others.clone());
            thread::spawn(move || gulp_and_run(&queues[0], &actor, &others))
        };
        post(&queues, &actor, 3, None);
        post(&queues, &actor, 4, None);
        mover.join().unwrap();
        worker0.join().unwrap();
        let mine: Vec<usize> = queues
            .iter()
            .map(|q| {
                q.lock
                    .lock()
                    .unwrap()
                    .0
                    .iter()
                    .filter(|&&l| l < OTHER)
                    .count()
            })
            .collect();
        assert!(
            mine[0] == 0 || mine[1] == 0,
            "an actor's letters in two queues: {mine:?}"
        );
        for q in queues.iter() {
            let letters = std::mem::take(&mut q.lock.lock().unwrap().0);
            run_letters(letters, &actor, &others);
        }
        assert_eq!(others.load(Relaxed), 1, "the other actor's letter ran once");
        // SAFETY: every thread has joined.
        let ran = actor.ran.with(|ran| unsafe { (*ran).clone() });
        let mut sorted = ran.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, vec![0, 1, 2, 3, 4], "lost or duplicated: {ran:?}");
        let at = |l| ran.iter().position(|&r| r == l);
        assert!(
            at(0) < at(3) && at(3) < at(4) && at(1) < at(2),
            "a sender's letters out of order: {ran:?}"
        );
    });
}
