//! Tests of the timer wheel: order, never early, stale keys, far deadlines, and a randomized run
//! against a `BTreeMap` model. Small counts under Miri.

use super::{Key, Wheel, SPAN_BITS};
use std::collections::BTreeMap;

/// Advances `wheel` to `now` and returns the values that came out.
fn advance<T>(wheel: &mut Wheel<T>, now: u64) -> Vec<T> {
    let mut out = Vec::new();
    wheel.advance(now, &mut out);
    out.into_iter().map(|(_, v)| v).collect()
}

#[test]
fn fires_in_when_order_and_fifo_among_ties() {
    let mut wheel = Wheel::new();
    // Ties spread over levels: 100 goes to level 1 from tick 0, to level 0 from tick 70.
    wheel.insert(100, "a");
    wheel.insert(5, "b");
    wheel.insert(4096 + 3, "c");
    wheel.insert(100, "d");
    wheel.insert(64, "e");
    wheel.insert(5, "f");
    assert_eq!(advance(&mut wheel, 70), ["b", "f", "e"]);
    wheel.insert(100, "g");
    wheel.insert(99, "h");
    wheel.insert(4096 + 3, "i");
    assert_eq!(advance(&mut wheel, 100), ["h", "a", "d", "g"]);
    assert_eq!(advance(&mut wheel, 4098), Vec::<&str>::new());
    assert_eq!(advance(&mut wheel, 1 << 20), ["c", "i"]);
    assert!(wheel.is_empty());
    assert_eq!(wheel.elapsed(), 1 << 20);
}

#[test]
fn past_deadlines_come_out_sorted_at_the_next_advance() {
    let mut wheel = Wheel::new();
    advance(&mut wheel, 1000);
    wheel.insert(1001, 4);
    wheel.insert(50, 1);
    wheel.insert(30, 0);
    wheel.insert(1000, 3);
    wheel.insert(50, 2);
    assert_eq!(wheel.next_deadline(), Some(30));
    // A `now` behind `elapsed` moves nothing but lets out what is already due.
    assert_eq!(advance(&mut wheel, 10), [0, 1, 2, 3]);
    assert_eq!(wheel.elapsed(), 1000);
    assert_eq!(wheel.next_deadline(), Some(1001));
    assert_eq!(advance(&mut wheel, 1001), [4]);
}

#[test]
fn remove_after_fire_or_remove_is_none() {
    let mut wheel = Wheel::new();
    let a = wheel.insert(10, 'a');
    let b = wheel.insert(20, 'b');
    assert_eq!(wheel.remove(b), Some('b'));
    assert_eq!(wheel.remove(b), None);
    let mut out = Vec::new();
    wheel.advance(10, &mut out);
    assert_eq!(out, [(a, 'a')]);
    assert_eq!(wheel.remove(a), None);
    assert!(wheel.is_empty());
    assert_eq!(wheel.next_deadline(), None);
}

#[test]
fn stale_keys_miss_after_their_place_is_reused() {
    let mut wheel = Wheel::new();
    let old = wheel.insert(10, 1);
    assert_eq!(wheel.remove(old), Some(1));
    let new = wheel.insert(10, 2);
    assert_eq!(new.index, old.index, "the freed place is reused");
    assert_ne!(new, old);
    assert_eq!(wheel.remove(old), None);
    let fired = wheel.insert(5, 3);
    advance(&mut wheel, 5);
    let again = wheel.insert(7, 4);
    assert_eq!(again.index, fired.index);
    assert_eq!(wheel.remove(fired), None);
    assert_eq!(
        wheel.remove(Key::from_bits(u64::MAX)),
        None,
        "a key past the slab"
    );
    assert_eq!(wheel.len(), 2);
}

#[test]
fn a_place_whose_generations_are_spent_is_never_reused() {
    let mut wheel = Wheel::new();
    let first = wheel.insert(10, 1);
    assert_eq!(wheel.remove(first), Some(1));
    // Skip ahead to the place's last generation rather than insert four billion times.
    wheel.nodes[first.index as usize].generation = u32::MAX - 1;
    let last = wheel.insert(10, 2);
    assert_eq!((last.index, last.generation), (first.index, u32::MAX - 1));
    assert_eq!(wheel.remove(last), Some(2));
    let after = wheel.insert(10, 3);
    assert_ne!(after.index, last.index, "the spent place stays out of use");
    assert_eq!(wheel.remove(last), None);
    assert!(!wheel.contains(last));
    assert!(wheel.contains(after));
    assert_eq!(wheel.remove(after), Some(3));
    // Freed normally, the new place is the one reused; the spent one never comes back.
    let again = wheel.insert(10, 4);
    assert_eq!(again.index, after.index);
    assert_eq!(wheel.places(), 2);
}

#[test]
fn contains_says_whether_a_key_is_pending() {
    let mut wheel = Wheel::new();
    let a = wheel.insert(5, 'a');
    let b = wheel.insert(7, 'b');
    assert!(wheel.contains(a) && wheel.contains(b));
    assert_eq!(advance(&mut wheel, 5), ['a']);
    assert!(!wheel.contains(a), "fired");
    assert!(wheel.contains(b));
    let c = wheel.insert(9, 'c');
    assert_eq!(c.index, a.index, "a's place, reused");
    assert!(
        !wheel.contains(a),
        "a stale key does not match the place's new entry"
    );
    assert_eq!(wheel.remove(b), Some('b'));
    assert!(!wheel.contains(b), "removed");
    wheel.drain();
    assert!(!wheel.contains(c), "drained");
    assert!(
        !wheel.contains(Key::from_bits(u64::MAX)),
        "a key past the slab"
    );
}

#[test]
fn freed_places_are_reused() {
    let mut wheel = Wheel::new();
    for round in 0..3u64 {
        for i in 0..100 {
            wheel.insert(round * 1000 + i * 7, i);
        }
        assert_eq!(advance(&mut wheel, round * 1000 + 999).len(), 100);
    }
    assert_eq!(wheel.nodes.len(), 100);
}

#[test]
fn far_deadlines_never_fire_early() {
    let mut wheel = Wheel::new();
    let far = [
        (1u64 << SPAN_BITS) - 1,
        1 << SPAN_BITS,
        (1 << SPAN_BITS) + 1,
        5 << SPAN_BITS,
        1 << 50,
        u64::MAX - 1,
        u64::MAX,
    ];
    for (i, &when) in far.iter().enumerate().rev() {
        wheel.insert(when, i);
    }
    let mut steps = 0;
    for (i, &when) in far.iter().enumerate() {
        assert_eq!(
            advance(&mut wheel, when - 1),
            Vec::<usize>::new(),
            "early: {when}"
        );
        assert!(wheel.next_deadline().unwrap() <= when);
        assert_eq!(advance(&mut wheel, when), [i]);
        steps += 1;
    }
    assert!(wheel.is_empty());
    assert_eq!(steps, far.len());
    // At the end of time a timer still works.
    wheel.insert(u64::MAX, 9);
    assert_eq!(advance(&mut wheel, u64::MAX), [9]);
}

#[test]
fn one_advance_over_far_deadlines_takes_few_cascades() {
    // The overflow list waits for the span of its earliest entry, not every span in between.
    let mut wheel = Wheel::new();
    wheel.insert(u64::MAX - 5, 1);
    wheel.insert(1 << 60, 0);
    let mut ticks = Vec::new();
    while let Some(d) = wheel.next_deadline() {
        ticks.push(d);
        advance(&mut wheel, d);
    }
    assert!(ticks.len() <= 2 * 8, "{ticks:?}");
}

#[test]
fn stepping_by_next_deadline_fires_each_entry_at_its_tick() {
    let mut rng = fastrand::Rng::with_seed(7);
    let n = if cfg!(miri) { 50 } else { 2000 };
    let mut wheel = Wheel::new();
    for _ in 0..n {
        let when = match rng.u8(0..4) {
            0 => rng.u64(0..64),
            1 => rng.u64(0..100_000),
            2 => rng.u64(0..1 << 40),
            _ => rng.u64(..),
        };
        wheel.insert(when, when);
    }
    let (mut fired, mut steps) = (0, 0);
    while let Some(d) = wheel.next_deadline() {
        steps += 1;
        for when in advance(&mut wheel, d) {
            assert_eq!(when, d, "fired at the first advance reaching its tick");
            fired += 1;
        }
    }
    assert_eq!(fired, n);
    // At most one stop per entry per level, plus the overflow's.
    assert!(steps <= n * 8, "{steps} steps");
}

#[test]
fn drain_takes_everything() {
    let mut wheel = Wheel::new();
    advance(&mut wheel, 100);
    let mut keys = Vec::new();
    for (i, when) in [3, 100, 101, 200, 5000, 1 << 30, 1 << 40, u64::MAX]
        .into_iter()
        .enumerate()
    {
        keys.push(wheel.insert(when, i));
    }
    let mut drained = wheel.drain();
    drained.sort_unstable();
    assert_eq!(drained, (0..8).collect::<Vec<_>>());
    assert!(wheel.is_empty());
    assert_eq!(wheel.next_deadline(), None);
    assert!(keys.into_iter().all(|k| wheel.remove(k).is_none()));
    assert_eq!(advance(&mut wheel, u64::MAX), Vec::<usize>::new());
    // Still usable.
    wheel.insert(u64::MAX, 1);
    assert_eq!(advance(&mut wheel, u64::MAX), [1]);
}

/// A deadline around `elapsed`: past, near, far, beyond the wheel's span, on level boundaries.
fn pick_when(rng: &mut fastrand::Rng, elapsed: u64) -> u64 {
    match rng.u8(0..20) {
        0 | 1 => elapsed.saturating_sub(rng.u64(0..=100)),
        2..=7 => elapsed.saturating_add(rng.u64(1..64)),
        8..=12 => elapsed.saturating_add(rng.u64(1..5000)),
        13..=15 => elapsed.saturating_add(rng.u64(1..1 << 20)),
        16 | 17 => elapsed.saturating_add(rng.u64(1..1 << 38)),
        18 => elapsed.saturating_add(rng.u64(0..1 << 50)),
        _ => {
            let unit = 1u64 << (6 * rng.u32(1..=6));
            (elapsed / unit + 1)
                .saturating_mul(unit)
                .saturating_add(rng.u64(0..2))
                .saturating_sub(rng.u64(0..2))
        }
    }
}

/// Runs `ops` random inserts, removes and advances on a wheel and on a model, checking every
/// output and the deadline after each step.
fn against_model(seed: u64, ops: usize) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut wheel = Wheel::new();
    // (when, insertion number) → key: iteration order is the order entries must come out in.
    let mut model: BTreeMap<(u64, u64), Key> = BTreeMap::new();
    let mut dead = Vec::new();
    let mut out = Vec::new();
    for id in 0..ops as u64 {
        let elapsed = wheel.elapsed();
        match rng.u8(0..100) {
            0..=44 => {
                let when = pick_when(&mut rng, elapsed);
                let (before, first) = (wheel.next_deadline(), wheel.first_tick(when));
                model.insert((when, id), wheel.insert(when, (when, id)));
                // What the timer service keeps as its deadline after arming, without asking the
                // wheel again: exactly the wheel's own answer.
                let expected = before.map_or(first, |b| b.min(first));
                assert_eq!(
                    wheel.next_deadline(),
                    Some(expected),
                    "seed {seed}, insert {when}"
                );
            }
            45..=59 if !model.is_empty() => {
                let (&(when, n), &key) = model.iter().nth(rng.usize(..model.len())).unwrap();
                assert_eq!(wheel.remove(key), Some((when, n)));
                model.remove(&(when, n));
                dead.push(key);
            }
            60..=64 if !dead.is_empty() => {
                assert_eq!(wheel.remove(dead[rng.usize(..dead.len())]), None);
            }
            _ => {
                let deadline = wheel.next_deadline().unwrap_or(elapsed);
                let some_when = model.keys().next().map_or(elapsed, |k| k.0);
                let now = match rng.u8(0..10) {
                    0 => deadline,
                    1 => deadline.saturating_sub(1),
                    2 => some_when,
                    3 => some_when.saturating_sub(1),
                    4 => elapsed.saturating_sub(rng.u64(0..10)),
                    5 | 6 => elapsed.saturating_add(rng.u64(0..64)),
                    7 => elapsed.saturating_add(rng.u64(0..5000)),
                    8 => elapsed.saturating_add(rng.u64(0..1 << 22)),
                    _ => elapsed.saturating_add(rng.u64(0..1 << 40)),
                };
                wheel.advance(now, &mut out);
                let limit = now.max(elapsed);
                assert_eq!(wheel.elapsed(), limit);
                let due: Vec<_> = model
                    .range(..=(limit, u64::MAX))
                    .map(|(k, &v)| (v, *k))
                    .collect();
                assert_eq!(out, due, "seed {seed}, advance {elapsed} -> {now}");
                for (key, entry) in out.drain(..) {
                    model.remove(&entry);
                    dead.push(key);
                }
            }
        }
        assert_eq!(wheel.len(), model.len());
        assert_eq!(wheel.is_empty(), model.is_empty());
        match model.keys().next() {
            None => assert_eq!(wheel.next_deadline(), None),
            Some(&(earliest, _)) => {
                let d = wheel
                    .next_deadline()
                    .expect("a deadline while entries pend");
                assert!(d <= earliest, "seed {seed}: deadline {d} after {earliest}");
            }
        }
    }
}

#[test]
fn matches_a_model_under_random_operations() {
    let (seeds, ops) = if cfg!(miri) { (2, 300) } else { (40, 3000) };
    for seed in 0..seeds {
        against_model(seed, ops);
    }
}

#[test]
#[cfg(target_pointer_width = "64")]
fn an_entry_is_small() {
    // A boxed closure's worth of payload (16 bytes) costs 40 bytes of slab in all.
    assert_eq!(
        std::mem::size_of::<super::Node<Box<dyn FnOnce() + Send>>>(),
        40
    );
}
