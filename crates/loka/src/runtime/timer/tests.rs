//! Tests of the timer service: firing, intervals, cancelling, counts, actions dropped outside the
//! locks, and the races between cancelling, firing and arming (with threads). Small counts under
//! Miri.

use super::fire::next_tick;
use super::{Action, TimerId, Timers};
// atomic outside sync.rs: test-only, never run under loom (real threads and timers).
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::{Arc, Barrier, OnceLock, Weak};

/// A counter an action bumps.
pub(super) fn counter() -> Arc<AtomicUsize> {
    Arc::new(AtomicUsize::new(0))
}

/// A one-shot action bumping `count`.
fn bump(count: &Arc<AtomicUsize>) -> Action {
    let count = Arc::clone(count);
    Action::once(move || {
        count.fetch_add(1, SeqCst);
    })
}

/// An interval action bumping `count`, going on while `count` stays below `until`.
fn bump_until(count: &Arc<AtomicUsize>, until: usize) -> Action {
    let count = Arc::clone(count);
    Action::Every(Box::new(move || count.fetch_add(1, SeqCst) + 1 < until))
}

/// Counts its drops in `drops`; when `reenter` is set, calls into the timers as it is dropped
/// (which deadlocks if the drop happens under a shard lock).
pub(super) struct Probe {
    pub(super) drops: Arc<AtomicUsize>,
    pub(super) reenter: Weak<Timers>,
}

impl Drop for Probe {
    fn drop(&mut self) {
        if let Some(timers) = self.reenter.upgrade() {
            let (state, _) = timers.insert(0, u64::MAX, None, Action::once(|| {}));
            assert!(timers.cancel(&state));
            let _ = timers.next_deadline(0);
        }
        self.drops.fetch_add(1, SeqCst);
    }
}

/// A [`Probe`] counting into `drops` and re-entering `timers` as it is dropped.
fn probe(drops: &Arc<AtomicUsize>, timers: &Arc<Timers>) -> Probe {
    Probe {
        drops: Arc::clone(drops),
        reenter: Arc::downgrade(timers),
    }
}

#[test]
fn a_one_shot_fires_at_its_tick_and_not_before() {
    let timers = Timers::new(2);
    let ran = counter();
    let (state, earliest) = timers.insert(1, 10, None, bump(&ran));
    assert!(earliest);
    assert!(timers.is_pending(&state));
    assert_eq!((timers.pending(), timers.pending_once()), (1, 1));
    assert_ne!(timers.pending(), 0);
    assert_eq!(timers.next_deadline(0), None);
    assert!(timers.next_deadline(1).unwrap() <= 10);
    assert_eq!(timers.fire_due(1, 9), 0);
    assert_eq!(timers.fire_due(0, 10), 0, "another shard");
    assert_eq!(ran.load(SeqCst), 0);
    assert_eq!(timers.fire_due(1, 10), 1);
    assert_eq!(ran.load(SeqCst), 1);
    assert!(!timers.is_pending(&state));
    assert!(!timers.cancel(&state), "already fired");
    assert_eq!((timers.pending(), timers.pending_once()), (0, 0));
    assert_eq!(timers.pending(), 0);
    assert_eq!(timers.next_deadline(1), None);
    assert_eq!(timers.fire_due(1, 1000), 0);
}

#[test]
fn insert_says_when_it_armed_the_earliest_deadline() {
    let timers = Timers::new(2);
    let none = || Action::once(|| {});
    assert!(timers.insert(0, 100, None, none()).1);
    assert!(!timers.insert(0, 200, None, none()).1);
    assert!(timers.insert(0, 50, None, none()).1);
    assert!(!timers.insert(0, 50, None, none()).1, "tied, not earlier");
    assert!(
        timers.insert(1, 300, None, none()).1,
        "its own shard's earliest"
    );
    assert_eq!(timers.fire_due(0, 100), 3);
    // Overdue when armed: due at once, and earliest.
    assert!(timers.insert(0, 20, None, none()).1);
    assert_eq!(timers.next_deadline(0), Some(20));
    assert_eq!(timers.fire_due(0, 100), 1);
    // No later than 200 (perhaps a cascade point before it).
    assert!(timers.next_deadline(0).is_some_and(|d| d <= 200));
    assert_eq!(timers.fire_due(0, 199), 0);
    assert_eq!(timers.fire_due(0, 200), 1);
}

#[test]
fn a_deadline_at_the_end_of_time_is_not_lost() {
    let timers = Timers::new(1);
    let ran = counter();
    timers.insert(0, u64::MAX, None, bump(&ran));
    assert!(timers.next_deadline(0).is_some());
    assert_eq!(timers.fire_due(0, u64::MAX - 1), 0);
    // Reported one tick early rather than as "none".
    assert_eq!(timers.next_deadline(0), Some(u64::MAX - 1));
    assert_eq!(timers.fire_due(0, u64::MAX), 1);
    assert_eq!(ran.load(SeqCst), 1);
}

#[test]
fn an_interval_fires_at_a_fixed_rate_and_skips_missed_ticks() {
    let timers = Timers::new(1);
    let ran = counter();
    let (state, _) = timers.insert(0, 10, Some(5), bump_until(&ran, usize::MAX));
    assert_eq!((timers.pending(), timers.pending_once()), (1, 0));
    assert_eq!(timers.fire_due(0, 10), 1);
    assert_eq!(timers.fire_due(0, 14), 0);
    assert_eq!(timers.fire_due(0, 15), 1);
    // Late by three periods: one firing, then back on the schedule (35, not 20).
    assert_eq!(timers.fire_due(0, 33), 1);
    assert!(timers.next_deadline(0).unwrap() <= 35);
    assert_eq!(timers.fire_due(0, 34), 0);
    assert_eq!(timers.fire_due(0, 35), 1);
    assert_eq!(ran.load(SeqCst), 4);
    assert!(timers.is_pending(&state));
    assert!(timers.cancel(&state));
    assert!(!timers.is_pending(&state));
    assert_eq!(timers.fire_due(0, 1000), 0);
    assert_eq!(timers.pending(), 0);
}

#[test]
fn next_tick_skips_missed_periods() {
    assert_eq!(next_tick(10, 5, 12), 15);
    assert_eq!(next_tick(10, 5, 15), 20);
    assert_eq!(next_tick(10, 5, 30), 35);
    assert_eq!(next_tick(10, 5, 32), 35);
    assert_eq!(next_tick(10, 1, 10), 11);
    assert_eq!(next_tick(u64::MAX - 3, 5, u64::MAX - 3), u64::MAX);
}

#[test]
fn an_interval_stops_when_its_action_says_so() {
    let timers = Arc::new(Timers::new(1));
    let (ran, drops) = (counter(), counter());
    let guard = probe(&drops, &timers);
    let count = Arc::clone(&ran);
    let action = Action::Every(Box::new(move || {
        let _ = &guard;
        count.fetch_add(1, SeqCst) + 1 < 3
    }));
    let (state, _) = timers.insert(0, 1, Some(1), action);
    for now in 1..10 {
        timers.fire_due(0, now);
    }
    assert_eq!(ran.load(SeqCst), 3);
    assert_eq!(drops.load(SeqCst), 1, "dropped once stopped");
    assert!(!timers.is_pending(&state));
    assert!(!timers.cancel(&state));
    assert_eq!((timers.pending(), timers.next_deadline(0)), (0, None));
}

#[test]
fn cancel_stops_a_pending_timer_and_drops_its_action_at_once() {
    let timers = Arc::new(Timers::new(2));
    let (ran, drops) = (counter(), counter());
    let guard = probe(&drops, &timers);
    let count = Arc::clone(&ran);
    let once = Action::once(move || {
        let _ = &guard;
        count.fetch_add(1, SeqCst);
    });
    let guard = probe(&drops, &timers);
    let count = Arc::clone(&ran);
    let every = Action::Every(Box::new(move || {
        let _ = &guard;
        count.fetch_add(1, SeqCst);
        true
    }));
    let (a, _) = timers.insert(1, 5, None, once);
    let (b, _) = timers.insert(1, 5, Some(2), every);
    assert_eq!((timers.pending(), timers.pending_once()), (2, 1));
    assert!(timers.cancel(&a));
    assert_eq!(drops.load(SeqCst), 1);
    assert!(!timers.cancel(&a));
    assert_eq!((timers.pending(), timers.pending_once()), (1, 0));
    assert!(timers.cancel(&b));
    assert_eq!(drops.load(SeqCst), 2);
    assert!(!timers.cancel(&b));
    assert!(!timers.is_pending(&a) && !timers.is_pending(&b));
    assert_eq!(timers.fire_due(1, 100), 0);
    assert_eq!(ran.load(SeqCst), 0);
    assert_eq!(timers.pending(), 0);
    assert_eq!(timers.pending(), 0);
    assert_eq!(timers.next_deadline(1), None);
}

#[test]
fn actions_may_arm_and_cancel_timers_of_their_own_shard() {
    let timers = Arc::new(Timers::new(1));
    let ran = counter();
    let (weak, count) = (Arc::downgrade(&timers), Arc::clone(&ran));
    timers.insert(
        0,
        1,
        None,
        Action::once(move || {
            let timers = weak.upgrade().unwrap();
            let (doomed, _) = timers.insert(0, 2, None, Action::once(|| {}));
            assert!(timers.cancel(&doomed));
            timers.insert(0, 3, None, bump(&count));
        }),
    );
    assert_eq!(timers.fire_due(0, 1), 1);
    assert_eq!(timers.pending_once(), 1);
    assert_eq!(timers.fire_due(0, 3), 1);
    assert_eq!(ran.load(SeqCst), 1);
}

#[test]
fn cancelling_an_interval_from_its_own_action_stops_its_rearming() {
    // The interval's entry is out of the wheel while its action runs: the cancel lands between
    // the firing and the re-arm.
    let timers = Arc::new(Timers::new(1));
    let (ran, drops) = (counter(), counter());
    let me: Arc<OnceLock<TimerId>> = Arc::new(OnceLock::new());
    let (weak, mine, count) = (Arc::downgrade(&timers), Arc::clone(&me), Arc::clone(&ran));
    let guard = probe(&drops, &timers);
    let action = Action::Every(Box::new(move || {
        let _ = &guard;
        count.fetch_add(1, SeqCst);
        let timers = weak.upgrade().unwrap();
        assert!(
            timers.cancel(mine.get().unwrap()),
            "still pending while it fires"
        );
        true
    }));
    let (state, _) = timers.insert(0, 4, Some(1), action);
    me.set(state.clone()).ok().unwrap();
    assert_eq!(timers.fire_due(0, 4), 1);
    assert_eq!(drops.load(SeqCst), 1, "dropped instead of re-armed");
    assert!(!timers.is_pending(&state));
    assert!(!timers.cancel(&state));
    assert_eq!(timers.fire_due(0, 100), 0);
    assert_eq!(ran.load(SeqCst), 1);
    assert_eq!((timers.pending(), timers.next_deadline(0)), (0, None));
}

#[test]
fn clear_drops_every_timer_outside_the_locks() {
    let timers = Arc::new(Timers::new(3));
    let drops = counter();
    let mut states = Vec::new();
    for shard in 0..3 {
        let guard = probe(&drops, &timers);
        states.push(
            timers
                .insert(
                    shard,
                    10 + shard as u64,
                    None,
                    Action::once(move || drop(guard)),
                )
                .0,
        );
        let guard = probe(&drops, &timers);
        let every = Action::Every(Box::new(move || {
            let _ = &guard;
            true
        }));
        states.push(timers.insert(shard, 1 << 40, Some(7), every).0);
    }
    assert_eq!((timers.pending(), timers.pending_once()), (6, 3));
    timers.clear();
    assert_eq!(drops.load(SeqCst), 6);
    assert_eq!((timers.pending(), timers.pending_once()), (0, 0));
    assert_eq!(timers.pending(), 0);
    for state in &states {
        assert!(!timers.is_pending(state));
        assert!(!timers.cancel(state));
    }
    for shard in 0..3 {
        assert_eq!(timers.next_deadline(shard), None);
        assert_eq!(timers.fire_due(shard, u64::MAX), 0);
    }
}

#[test]
fn a_panicking_action_leaves_the_rest_of_its_batch_for_the_next_call() {
    let timers = Timers::new(1);
    let ran = counter();
    timers.insert(0, 1, None, bump(&ran));
    timers.insert(
        0,
        1,
        None,
        Action::once(|| panic!("boom (expected by the test)")),
    );
    let (last, _) = timers.insert(0, 1, None, bump(&ran));
    let (every, _) = timers.insert(0, 5, Some(1), Action::Every(Box::new(|| panic!("boom"))));
    let fire =
        |now| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| timers.fire_due(0, now)));
    assert!(fire(1).is_err());
    assert_eq!(ran.load(SeqCst), 1);
    assert_eq!(timers.pending_once(), 1, "the panicked one is counted out");
    assert!(!timers.cancel(&last), "it fires, at the next call");
    assert_eq!(fire(1).ok(), Some(1));
    assert_eq!(ran.load(SeqCst), 2);
    assert!(fire(5).is_err());
    assert!(!timers.is_pending(&every), "a panicking interval stops");
    assert_eq!((timers.pending(), timers.pending_once()), (0, 0));
    assert_eq!(timers.next_deadline(0), None);
}

#[test]
fn a_stale_one_shot_handle_never_cancels_the_timer_that_reuses_its_place() {
    let timers = Timers::new(1);
    let ran = counter();
    // Cancelled, then its place reused.
    let (old, _) = timers.insert(0, 10, None, bump(&ran));
    assert!(timers.cancel(&old));
    let (new, _) = timers.insert(0, 10, None, bump(&ran));
    assert!(!timers.cancel(&old), "the old handle is stale");
    assert!(!timers.is_pending(&old));
    assert!(timers.is_pending(&new), "the new timer is untouched");
    // Fired, then its place reused.
    assert_eq!(timers.fire_due(0, 10), 1);
    let (newer, _) = timers.insert(0, 20, None, bump(&ran));
    assert!(!timers.cancel(&new), "fired: its handle is stale");
    assert!(timers.is_pending(&newer));
    assert_eq!(timers.fire_due(0, 20), 1);
    assert_eq!(ran.load(SeqCst), 2);
    assert_eq!((timers.pending(), timers.pending_once()), (0, 0));
}

#[test]
fn arming_and_cancelling_one_shots_reuses_the_same_places() {
    let timers = Timers::new(1);
    let ran = counter();
    let (keep, _) = timers.insert(0, 1_000, None, bump(&ran));
    for _ in 0..1_000 {
        let (id, _) = timers.insert(0, 50, None, bump(&ran));
        assert!(timers.cancel(&id));
    }
    for now in 1..=100 {
        timers.insert(0, now, None, bump(&ran));
        assert_eq!(timers.fire_due(0, now), 1);
    }
    // Two places: the timer kept, and the one every other timer reused in turn.
    assert_eq!(timers.shards[0].wheel.lock().places(), 2);
    assert_eq!(ran.load(SeqCst), 100);
    assert!(timers.is_pending(&keep));
}

#[test]
fn retain_pending_keeps_exactly_the_timers_that_may_fire() {
    let timers = Timers::new(2);
    let ran = counter();
    let mut ids = Vec::new();
    let mut expect = Vec::new();
    for i in 0..12u64 {
        let shard = (i % 2) as usize;
        let (id, _) = match i % 3 {
            0 => timers.insert(shard, 5, None, bump(&ran)),
            1 => timers.insert(shard, 50, None, bump(&ran)),
            _ => timers.insert(shard, 5, Some(10), bump_until(&ran, 1_000)),
        };
        // Every fourth is cancelled; of the rest, the one-shots due at 5 fire below.
        let cancelled = i % 4 == 0 && timers.cancel(&id);
        expect.push(!cancelled && i % 3 != 0);
        ids.push(id);
    }
    timers.fire_due(0, 5);
    timers.fire_due(1, 5);
    let mut kept = ids.clone();
    timers.retain_pending(&mut kept);
    let pending: Vec<bool> = ids.iter().map(|id| timers.is_pending(id)).collect();
    assert_eq!(pending, expect);
    assert_eq!(kept.len(), expect.iter().filter(|&&e| e).count());
    assert!(kept.iter().all(|id| timers.is_pending(id)));
    // Each timer that may fire is kept once (in whatever order).
    let same = |a: &TimerId, b: &TimerId| match (a, b) {
        (TimerId::Once { shard, key }, TimerId::Once { shard: s, key: k }) => {
            (shard, key) == (s, k)
        }
        (TimerId::Every(a), TimerId::Every(b)) => Arc::ptr_eq(a, b),
        _ => false,
    };
    for (id, _) in ids.iter().zip(&expect).filter(|(_, &e)| e) {
        assert_eq!(kept.iter().filter(|k| same(k, id)).count(), 1);
    }
}

/// A shared action counting its firings.
struct Shared(AtomicUsize);

impl super::Fire for Shared {
    fn fire(&self) {
        self.0.fetch_add(1, SeqCst);
    }
}

#[test]
fn a_shared_action_fires_once_and_its_reference_goes_when_fired_or_cancelled() {
    let timers = Timers::new(1);
    let fired = Arc::new(Shared(AtomicUsize::new(0)));
    let (a, _) = timers.insert(0, 5, None, Action::Shared(fired.clone()));
    let (b, _) = timers.insert(0, 6, None, Action::Shared(fired.clone()));
    assert_eq!(Arc::strong_count(&fired), 3, "each timer holds a reference");
    assert_eq!((timers.pending(), timers.pending_once()), (2, 2));
    assert!(timers.cancel(&b));
    assert_eq!(
        Arc::strong_count(&fired),
        2,
        "the cancelled one let go at once"
    );
    assert_eq!(timers.fire_due(0, 10), 1);
    assert_eq!(fired.0.load(SeqCst), 1);
    assert_eq!(Arc::strong_count(&fired), 1, "the fired one let go");
    assert!(!timers.cancel(&a), "fired");
    assert_eq!((timers.pending(), timers.pending_once()), (0, 0));
}

#[test]
fn the_counts_of_one_shots_and_intervals_stay_apart() {
    let timers = Timers::new(2);
    let ran = counter();
    let once: Vec<_> = (0..3)
        .map(|i| timers.insert(i % 2, 10, None, bump(&ran)).0)
        .collect();
    let every: Vec<_> = (0..4)
        .map(|i| timers.insert(i % 2, 10, Some(5), bump_until(&ran, 1_000)).0)
        .collect();
    assert_eq!((timers.pending(), timers.pending_once()), (7, 3));
    assert!(timers.cancel(&every[0]));
    assert_eq!((timers.pending(), timers.pending_once()), (6, 3));
    assert!(timers.cancel(&once[0]));
    assert_eq!((timers.pending(), timers.pending_once()), (5, 2));
    assert_eq!(timers.fire_due(0, 10) + timers.fire_due(1, 10), 5);
    assert_eq!((timers.pending(), timers.pending_once()), (3, 0));
    timers.clear();
    assert_eq!((timers.pending(), timers.pending_once()), (0, 0));
}

/// `normal`, or `miri` under Miri: thread and iteration counts for the races.
fn scale(normal: usize, miri: usize) -> usize {
    if cfg!(miri) {
        miri
    } else {
        normal
    }
}

#[test]
fn a_one_shot_either_fires_or_is_cancelled_never_both() {
    for round in 0..scale(20, 2) {
        let timers = Timers::new(1);
        let n = scale(500, 20);
        let runs: Arc<Vec<AtomicUsize>> = Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect());
        let states: Vec<_> = (0..n)
            .map(|i| {
                let runs = Arc::clone(&runs);
                let action = Action::once(move || {
                    runs[i].fetch_add(1, SeqCst);
                });
                timers.insert(0, (i / 4) as u64, None, action).0
            })
            .collect();
        let start = Barrier::new(2);
        let cancelled: Vec<bool> = std::thread::scope(|s| {
            s.spawn(|| {
                start.wait();
                for now in 0..=(n / 4) as u64 {
                    timers.fire_due(0, now);
                }
            });
            start.wait();
            // Cancel from the far end and the near end alternately, to meet the firing thread.
            let mut cancelled = vec![false; n];
            for j in 0..n {
                let i = if (j + round) % 2 == 0 {
                    j / 2
                } else {
                    n - 1 - j / 2
                };
                cancelled[i] = timers.cancel(&states[i]);
            }
            cancelled
        });
        for (i, &c) in cancelled.iter().enumerate() {
            assert_eq!(runs[i].load(SeqCst) + c as usize, 1, "timer {i}");
        }
        assert_eq!((timers.pending(), timers.pending_once()), (0, 0));
    }
}

#[test]
fn no_interval_firing_starts_after_its_cancel_returned() {
    for _ in 0..scale(50, 3) {
        let timers = Timers::new(1);
        let starts = counter();
        let count = Arc::clone(&starts);
        let action = Action::Every(Box::new(move || {
            count.fetch_add(1, SeqCst);
            std::hint::spin_loop();
            true
        }));
        let (state, _) = timers.insert(0, 0, Some(1), action);
        // atomic outside sync.rs: test-only, never run under loom.
        let stop = std::sync::atomic::AtomicBool::new(false);
        let seen = std::thread::scope(|s| {
            s.spawn(|| {
                let mut now = 0;
                while !stop.load(SeqCst) {
                    timers.fire_due(0, now);
                    now += 1;
                }
                // A little more after the cancel: nothing may start any more.
                for _ in 0..scale(100, 5) {
                    timers.fire_due(0, now);
                    now += 1;
                }
            });
            while starts.load(SeqCst) < scale(20, 2) {
                std::thread::yield_now();
            }
            assert!(timers.cancel(&state));
            let seen = starts.load(SeqCst);
            stop.store(true, SeqCst);
            seen
        });
        let after = starts.load(SeqCst);
        assert!(
            after <= seen + 1,
            "{} firings started after the cancel",
            after - seen
        );
        assert_eq!(timers.pending(), 0);
        assert_eq!(timers.next_deadline(0), None);
    }
}

#[test]
fn timers_armed_from_many_threads_all_fire_once() {
    let threads = scale(4, 2);
    let per_thread = scale(2000, 25);
    let timers = Timers::new(2);
    let ran = counter();
    // atomic outside sync.rs: test-only, never run under loom.
    let done = std::sync::atomic::AtomicBool::new(false);
    let start = Barrier::new(threads + 1);
    std::thread::scope(|s| {
        // A firing thread running along with the arming ones.
        let firing = s.spawn(|| {
            start.wait();
            let mut fired = 0;
            let mut now = 0;
            while !done.load(SeqCst) {
                fired += timers.fire_due(now as usize % 2, now / 2);
                now += 1;
            }
            fired
        });
        let armers: Vec<_> = (0..threads)
            .map(|t| {
                let (timers, ran, start) = (&timers, &ran, &start);
                s.spawn(move || {
                    start.wait();
                    let mut rng = fastrand::Rng::with_seed(t as u64);
                    for _ in 0..per_thread {
                        timers.insert(rng.usize(..2), rng.u64(0..5000), None, bump(ran));
                    }
                })
            })
            .collect();
        for a in armers {
            a.join().unwrap();
        }
        done.store(true, SeqCst);
        let fired = firing.join().unwrap();
        let rest = timers.fire_due(0, u64::MAX) + timers.fire_due(1, u64::MAX);
        assert_eq!(fired + rest, threads * per_thread);
    });
    assert_eq!(ran.load(SeqCst), threads * per_thread);
    assert_eq!((timers.pending(), timers.pending_once()), (0, 0));
}

/// The quiescence check reads the shards' counts one by one, then the caller's look at the
/// messages in flight: a one-shot armed meanwhile (here from inside that look, on a shard the
/// check had already read as empty) makes the answer `false`, as one shared count read once
/// would have. Red when the arming numbers are not read again.
#[test]
fn a_one_shot_armed_during_the_quiescence_check_is_not_missed() {
    let timers = Timers::new(2);
    let count = counter();
    assert!(timers.no_pending_once(|| true), "nothing armed: quiescent");
    assert!(
        !timers.no_pending_once(|| false),
        "the caller's look decides too"
    );
    let armed = std::cell::Cell::new(None);
    let quiet = timers.no_pending_once(|| {
        // Armed and cancelled inside the look: the counts are back to zero by the second read.
        let (id, _) = timers.insert(0, 5, None, bump(&count));
        assert!(timers.cancel(&id));
        let (id, _) = timers.insert(1, 5, None, bump(&count));
        armed.set(Some(id));
        true
    });
    assert!(!quiet, "a one-shot armed during the check");
    assert_eq!(timers.pending_once(), 1);
    assert!(!timers.no_pending_once(|| true), "still pending");
    assert!(timers.cancel(&armed.take().unwrap()));
    assert!(timers.no_pending_once(|| true));
    // An interval is no message in flight: arming one does not disturb the check.
    let (every, _) = timers.insert(1, 5, Some(5), bump_until(&count, 10));
    assert!(timers.no_pending_once(|| true));
    assert_eq!((timers.pending(), timers.pending_once()), (1, 0));
    assert!(timers.cancel(&every));
    assert_eq!(count.load(SeqCst), 0, "nothing fired");
}
