//! The timer service a system shares: per-shard timer wheels, arming, cancelling and firing.
//!
//! One shard per worker (the caller picks the shard: `runtime/clock.rs` gives a timer its arming
//! worker's), each a [`Wheel`] behind its own lock with a lock-free mirror of its next deadline, so
//! a worker checks its shard with one relaxed load and timers armed on different workers never
//! meet on a lock. Times are ticks of the caller's clock; this module reads no clock.
//!
//! A timer is named by a [`TimerId`]. A one-shot's is its shard and its wheel [`Key`]: the
//! entry's place in the wheel's slab and that place's generation, so arming one allocates
//! nothing of its own (the slab's places are reused, and a place's generation moves on each time
//! it is vacated and is never handed out twice: a key matches its own entry or nothing). An
//! interval, whose entry leaves the wheel while its action runs and comes back under a new key,
//! keeps a shared [`TimerState`] as its name.
//!
//! The protocol, for every race between arming, cancelling and firing:
//!
//! * a one-shot is pending exactly while its key matches an entry of its shard's wheel. The key
//!   stops matching, under the shard's lock and for good, when [`Timers::fire_due`] takes the
//!   entry out to fire it, when [`Timers::cancel`] takes it out, or when [`Timers::clear`]
//!   drains it;
//! * an interval's [`TimerState`] says PENDING, FIRED (it stopped itself) or CANCELLED; it leaves
//!   PENDING once, always under its shard's lock, and never comes back;
//! * [`Timers::fire_due`] takes the due entries out of the wheel under the lock and runs the
//!   actions with the lock released (an action may arm or cancel timers, or drop actor
//!   references whose drop re-enters the runtime);
//! * [`Timers::cancel`] of a one-shot takes its entry out under the lock if its key still
//!   matches: so exactly one of "cancel returned `true`" and "the action ran" happens. Cancelling
//!   an interval marks it CANCELLED under the lock and takes its entry out of the wheel if it is
//!   there. An interval's entry is out of the wheel while its action runs; the firing thread
//!   re-arms it under the lock only if it is still PENDING, so after `cancel` returns at most the
//!   firing already under way completes, and none starts later;
//! * actions are dropped outside every lock, whoever drops them.
//!
//! Intervals are fixed-rate: re-armed at `when + period`, and when a late firing finds that tick
//! already past, at the first tick of the schedule after now, so a stalled timer fires once,
//! not once per missed period.

mod action;
mod fire;
pub(crate) mod wheel;

use action::OnceFn;
pub(crate) use action::{Action, Fire};

#[cfg(all(test, not(loom)))]
mod tests;

use crate::sync::{AtomicU64, AtomicU8};
use crossbeam_utils::CachePadded;
use parking_lot::Mutex;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::Arc;
use wheel::{Key, Wheel};

/// [`TimerState::status`]: armed, will fire (again).
const PENDING: u8 = 0;
/// [`TimerState::status`]: an interval that stopped itself.
const FIRED: u8 = 1;
/// [`TimerState::status`]: cancelled (or dropped by [`Timers::clear`]).
const CANCELLED: u8 = 2;

/// An interval's shared state: what its handle cancels. The wheel entry holds one reference, the
/// handles the others. (One-shots have none: their key names them, see [`TimerId`].)
pub(crate) struct TimerState {
    /// `PENDING`, `FIRED` or `CANCELLED`. Changed only under the shard's lock (which orders the
    /// decisions that depend on it); read without it by [`is_pending`](Self::is_pending) and by
    /// `cancel`'s fast path. Relaxed everywhere: once out of PENDING it never changes back, and
    /// no other data is published through it.
    status: AtomicU8,
    /// The shard whose wheel holds the timer.
    shard: u32,
    /// Ticks between firings (at least 1).
    period: u64,
    /// The timer's current wheel key ([`Key::to_bits`]); an interval gets a new one each time it
    /// is re-armed. Read and written only under the shard's lock (an atomic only so the state is
    /// `Sync` without `unsafe`): Relaxed.
    key: AtomicU64,
}

impl TimerState {
    /// Whether the interval may still fire: neither stopped nor cancelled. Lock-free; the answer
    /// may be stale by the time it is used.
    pub(crate) fn is_pending(&self) -> bool {
        self.status.load(Relaxed) == PENDING
    }
}

/// Names an armed timer: what [`Timers::cancel`] and [`Timers::is_pending`] take. Cheap to
/// clone (a one-shot's is two words, copied; an interval's a reference count).
#[derive(Clone)]
pub(crate) enum TimerId {
    /// A one-shot: its shard and its wheel key ([`Key::to_bits`]), which stops matching once the
    /// timer fired or was cancelled.
    Once {
        /// The shard whose wheel holds it.
        shard: u32,
        /// Its key in that wheel.
        key: u64,
    },
    /// An interval: its shared state.
    Every(Arc<TimerState>),
}

/// A wheel entry: what runs when it fires (its due tick is the wheel's). An [`Action`] with the
/// interval's state and due tick folded into its interval variant, so that a one-shot's entry is
/// its action and no more: the entry is moved into the wheel and out again on every arm and
/// cancel (docs/decisions/0097-timer-path-diet.md).
enum Entry {
    /// A one-shot's action ([`Action::Once`]).
    Once(OnceFn),
    /// A one-shot's shared action ([`Action::Shared`]).
    Shared(Arc<dyn Fire>),
    /// An interval: its action, its state (its handles hold it too), and the tick it is due at
    /// (its next firing is `when + period`; the wheel's key no longer names it once fired).
    Every {
        /// What to run.
        f: Box<dyn FnMut() -> bool + Send>,
        /// The interval's state.
        state: Arc<TimerState>,
        /// The tick the entry is due at.
        when: u64,
    },
}

impl Entry {
    /// Whether the entry is a one-shot's (counted in [`Timers::pending_once`]).
    fn is_once(&self) -> bool {
        self.state().is_none()
    }

    /// The interval's state; `None` for a one-shot.
    fn state(&self) -> Option<&Arc<TimerState>> {
        match self {
            Entry::Every { state, .. } => Some(state),
            Entry::Once(_) | Entry::Shared(_) => None,
        }
    }
}

/// One shard: a wheel and its next deadline.
struct Shard {
    /// The shard's timers.
    wheel: Mutex<Wheel<Entry>>,
    /// The wheel's [`Wheel::next_deadline`] (`u64::MAX`: none). Stored under the lock after
    /// every change of the wheel; loaded without it, Relaxed, as a hint: a reader may see an
    /// older value, so whoever arms an earlier deadline is told (`insert`'s `bool`) and wakes the
    /// shard's worker, and the wake's synchronisation makes the new value visible to it.
    next: AtomicU64,
    /// The shard's timers not yet retired (see [`Timers`]): the low 32 bits count timers of
    /// every kind, the high 32 bits the one-shots among them (four billion pending timers would
    /// take hundreds of gigabytes of wheel). One word, so that a timer is counted in and out with
    /// one store each; per shard, next to the lock, so that a worker arming and cancelling its
    /// own timers updates a line it already holds instead of one every worker takes in turn.
    /// Written only under the lock ([`Shard::count`]).
    counts: AtomicU64,
    /// One-shots armed into the shard so far (monotonic): what tells a quiescence check that
    /// read the shards' counts one by one that a timer was armed meanwhile
    /// ([`Timers::no_pending_once`]). Written only under the lock.
    armed: AtomicU64,
}

impl Shard {
    /// Adds `add` to the counts and takes `sub` from them. Call under the lock: the counts are
    /// written only there, so a load and a store do (no read-modify-write: the lock already
    /// paid for the line). Release: whatever happened before (an action that ran and sent a
    /// message, counted in flight) is visible to a reader whose Acquire load sees the change.
    fn count(&self, _locked: &Wheel<Entry>, add: u64, sub: u64) {
        let counts = self.counts.load(Relaxed);
        debug_assert!(counts + add >= sub, "a shard's counts never go below zero");
        self.counts.store(counts + add - sub, Release);
    }

    /// Stores the wheel's next deadline in the mirror and returns it. Call under the lock.
    fn publish(&self, wheel: &Wheel<Entry>) -> u64 {
        // A deadline at u64::MAX itself is reported one tick early, not lost as "none".
        let next = wheel
            .next_deadline()
            .map_or(u64::MAX, |d| d.min(u64::MAX - 1));
        self.next.store(next, Relaxed);
        next
    }
}

/// One timer of every kind in a shard's `counts` (the low half of the word).
const ONE: u64 = 1;
/// One one-shot timer in a shard's `counts` (the high half).
const ONE_ONCE: u64 = 1 << 32;

/// Per-shard timer wheels (one shard per worker; the caller picks the shard).
///
/// Counting (for quiescence: a pending one-shot is a message in flight): a timer is counted from
/// before it enters its wheel until it is *retired*: a fired one-shot once the actions of its
/// `fire_due` batch have returned (one update per batch), a cancelled timer when its entry leaves
/// the wheel (its action is dropped right after, outside the lock, by the cancelling thread), an
/// interval once it stopped or was cancelled. So a one-shot whose action sends a message stops
/// counting only after the message is sent: a quiescence check that reads the counts first
/// (Acquire loads, pairing with the Release stores) and the messages in flight next cannot miss
/// both. Each shard counts its own timers (a timer stays in one shard for life), and only under
/// its lock, with a load and a store: the lock already owns the line, so counting costs no
/// atomic read-modify-write of its own (docs/decisions/0076-inline-timer-actions.md). A check
/// reads the shards one by one, so it also reads their arming counts before and after
/// ([`no_pending_once`](Self::no_pending_once)).
pub(crate) struct Timers {
    /// One per worker, each on its own cache lines.
    shards: Box<[CachePadded<Shard>]>,
}

impl Timers {
    /// `shards` empty shards (at least one).
    pub(crate) fn new(shards: usize) -> Self {
        let shards = shards.max(1);
        assert!(u32::try_from(shards).is_ok(), "too many timer shards");
        Timers {
            shards: (0..shards)
                .map(|_| {
                    CachePadded::new(Shard {
                        wheel: Mutex::new(Wheel::new()),
                        next: AtomicU64::new(u64::MAX),
                        counts: AtomicU64::new(0),
                        armed: AtomicU64::new(0),
                    })
                })
                .collect(),
        }
    }

    /// How many shards there are.
    pub(crate) fn shards(&self) -> usize {
        self.shards.len()
    }

    /// Arms a timer in `shard` firing at tick `when` (at the next [`fire_due`](Self::fire_due)
    /// if `when` has passed), then every `period` ticks if `Some` (a period of 0 counts as 1).
    /// Returns the timer's name (what [`cancel`](Self::cancel) takes) and whether the timer
    /// became the shard's earliest deadline: then whoever sleeps until that shard's next
    /// deadline (its worker) must wake to sleep shorter.
    ///
    /// An [`Action::Every`] goes with a period, an [`Action::Once`] without one. (A mismatch is
    /// a bug: debug builds assert; release builds fire the timer once, an `Every`'s answer
    /// ignored.) One-shots count in [`pending_once`](Self::pending_once). Arming a one-shot
    /// allocates nothing once its shard's slab has a free place; an interval allocates its state.
    ///
    /// # Panics
    /// If `shard` is out of range.
    pub(crate) fn insert(
        &self,
        shard: usize,
        when: u64,
        period: Option<u64>,
        action: Action,
    ) -> (TimerId, bool) {
        let slot = &self.shards[shard];
        debug_assert_eq!(
            period.is_some(),
            matches!(action, Action::Every(_)),
            "a period goes with Action::Every"
        );
        let (entry, state, one) = match (action, period) {
            (Action::Once(f), _) => (Entry::Once(f), None, ONE | ONE_ONCE),
            (Action::Shared(f), _) => (Entry::Shared(f), None, ONE | ONE_ONCE),
            (Action::Every(f), Some(period)) => {
                let state = Arc::new(TimerState {
                    status: AtomicU8::new(PENDING),
                    shard: shard as u32,
                    period: period.max(1),
                    key: AtomicU64::new(0),
                });
                let entry = Entry::Every {
                    f,
                    state: Arc::clone(&state),
                    when,
                };
                (entry, Some(state), ONE)
            }
            // A caller's bug (asserted above): fired once, its answer ignored.
            (Action::Every(mut f), None) => (
                Entry::Once(OnceFn::new(move || {
                    let _ = f();
                })),
                None,
                ONE | ONE_ONCE,
            ),
        };
        let mut wheel = slot.wheel.lock();
        // Counted before the entry can be found (finding it takes this lock).
        slot.count(&wheel, one, 0);
        let key = wheel.insert(when, entry);
        match &state {
            Some(state) => state.key.store(key.to_bits(), Relaxed),
            // Under the lock, so a load and a store (one writer at a time). Release: a checker
            // that sees the new number sees the count that went with it.
            None => slot
                .armed
                .store(slot.armed.load(Relaxed).wrapping_add(1), Release),
        }
        // The deadline can only move earlier, to the new entry's list (or stay): no need to
        // look at the levels (`publish`), a store only when it moves.
        let before = slot.next.load(Relaxed);
        let first = wheel.first_tick(when).min(u64::MAX - 1);
        let earliest = first < before;
        if earliest {
            slot.next.store(first, Relaxed);
        }
        drop(wheel);
        let id = match state {
            Some(state) => TimerId::Every(state),
            None => TimerId::Once {
                shard: shard as u32,
                key: key.to_bits(),
            },
        };
        (id, earliest)
    }

    /// Cancels the timer: `true` if this call stopped a pending timer (it will never fire again,
    /// though an interval's firing already under way completes); `false` if it had already fired
    /// (one-shot), stopped itself or been cancelled. Takes the entry out at once and drops its
    /// action outside the lock, so a cancelled timer holds no memory (an interval: but its
    /// state).
    pub(crate) fn cancel(&self, id: &TimerId) -> bool {
        match id {
            TimerId::Once { shard, key } => self.cancel_once(*shard as usize, Key::from_bits(*key)),
            TimerId::Every(state) => self.cancel_every(state),
        }
    }

    /// Whether the timer may still fire: armed and neither fired (one-shot), stopped nor
    /// cancelled. A hint: the answer may be stale by the time it is used. An interval's answer
    /// takes one relaxed load; a one-shot's its shard's lock.
    pub(crate) fn is_pending(&self, id: &TimerId) -> bool {
        match id {
            TimerId::Once { shard, key } => self.shards[*shard as usize]
                .wheel
                .lock()
                .contains(Key::from_bits(*key)),
            TimerId::Every(state) => state.is_pending(),
        }
    }

    /// Keeps only the timers of `ids` that may still fire ([`is_pending`](Self::is_pending)),
    /// locking each shard once per run of one-shots of that shard. The kept ones keep no
    /// particular order. A loop of its own, not `Vec::retain` with a lock juggled per element:
    /// an actor arming a timeout per request prunes every timer it armed once, so the cost per
    /// element is a cost per timer armed (docs/decisions/0097-timer-path-diet.md).
    pub(crate) fn retain_pending(&self, ids: &mut Vec<TimerId>) {
        let (mut kept, mut i) = (0, 0);
        while i < ids.len() {
            match ids[i] {
                TimerId::Once { shard, .. } => {
                    let wheel = self.shards[shard as usize].wheel.lock();
                    // The run of one-shots of this shard, under one lock.
                    while let Some(&TimerId::Once { shard: s, key }) = ids.get(i) {
                        if s != shard {
                            break;
                        }
                        if wheel.contains(Key::from_bits(key)) {
                            ids.swap(kept, i);
                            kept += 1;
                        }
                        i += 1;
                    }
                }
                TimerId::Every(ref state) => {
                    if state.is_pending() {
                        ids.swap(kept, i);
                        kept += 1;
                    }
                    i += 1;
                }
            }
        }
        ids.truncate(kept);
    }

    /// [`cancel`](Self::cancel) of a one-shot: takes its entry out if its key still matches.
    fn cancel_once(&self, shard: usize, key: Key) -> bool {
        let slot = &self.shards[shard];
        let mut wheel = slot.wheel.lock();
        let Some(entry) = wheel.remove(key) else {
            return false; // fired, cancelled or drained: the key matches nothing any more
        };
        slot.publish(&wheel);
        debug_assert!(entry.is_once(), "a one-shot's key names a one-shot's entry");
        slot.count(&wheel, 0, retired(1, 1));
        drop(wheel);
        drop(entry);
        true
    }

    /// [`cancel`](Self::cancel) of an interval.
    fn cancel_every(&self, state: &TimerState) -> bool {
        // Out of PENDING is final: no lock needed to say no.
        if state.status.load(Relaxed) != PENDING {
            return false;
        }
        let slot = &self.shards[state.shard as usize];
        let mut wheel = slot.wheel.lock();
        if state.status.load(Relaxed) != PENDING {
            return false;
        }
        state.status.store(CANCELLED, Relaxed);
        // `None`: an interval whose action runs now, out of the wheel; its firing thread sees
        // CANCELLED when it comes back to re-arm it, and retires it.
        let removed = wheel.remove(Key::from_bits(state.key.load(Relaxed)));
        if removed.is_some() {
            slot.publish(&wheel);
            slot.count(&wheel, 0, retired(0, 1));
        }
        drop(wheel);
        drop(removed);
        true
    }

    /// The earliest tick [`fire_due`](Self::fire_due)`(shard, ..)` may have work at (`None`:
    /// nothing armed), with one relaxed load and no lock. It may be earlier than every timer (a
    /// wheel's cascade point: `fire_due` then fires nothing and the deadline moves on).
    #[inline]
    pub(crate) fn next_deadline(&self, shard: usize) -> Option<u64> {
        match self.shards[shard].next.load(Relaxed) {
            u64::MAX => None,
            tick => Some(tick),
        }
    }

    /// Pending one-shot timers (they count as messages in flight for quiescence); one stops
    /// counting once its action has returned (see [`Timers`]). The shards are read one by one:
    /// exact when no timer is armed or retired meanwhile; a quiescence check uses
    /// [`no_pending_once`](Self::no_pending_once).
    pub(crate) fn pending_once(&self) -> usize {
        self.sums().0 as usize
    }

    /// Pending timers of every kind (read as [`pending_once`](Self::pending_once)).
    pub(crate) fn pending(&self) -> usize {
        self.sums().1 as usize
    }

    /// Whether no one-shot timer is pending, with `between` (the caller's check that no message
    /// is in flight) run after the timers are read, and its answer kept only if no one-shot was
    /// armed meanwhile: the shards' counts and arming numbers are read, then `between`, then the
    /// arming numbers again. A timer armed after its shard was read and before `between`'s
    /// look changes its shard's number; one armed earlier was counted; one armed later was
    /// armed by something `between` saw (a message in flight, an actor running). So the answer
    /// `true` means that at the time of the second read nothing was pending, as one shared
    /// count read once would say.
    pub(crate) fn no_pending_once(&self, between: impl FnOnce() -> bool) -> bool {
        let (once, _, armed) = self.sums();
        once == 0 && between() && self.sums().2 == armed
    }

    /// The one-shots pending, the timers pending, and the one-shots armed so far, summed over
    /// the shards.
    fn sums(&self) -> (u64, u64, u64) {
        let (mut once, mut all, mut armed) = (0, 0, 0);
        for slot in self.shards.iter() {
            // Acquire: pairs with the Release in `insert`, so the count read after the number
            // includes the timers the number counts.
            armed += slot.armed.load(Acquire);
            // Acquire: pairs with the Release store in `Shard::count`, so a reader seeing a timer
            // gone sees what its action did (the message it sent counted in flight).
            let counts = slot.counts.load(Acquire);
            once += counts >> 32;
            all += counts & u64::from(u32::MAX);
        }
        (once, all, armed)
    }

    /// Drops every pending timer and its action (shutdown), outside the locks; intervals' states
    /// say cancelled, one-shots' keys match nothing any more. An interval whose action runs meanwhile is re-armed when it returns: call
    /// this once nothing fires any more.
    pub(crate) fn clear(&self) {
        for slot in self.shards.iter() {
            let drained = {
                let mut wheel = slot.wheel.lock();
                let drained = wheel.drain();
                for state in drained.iter().filter_map(Entry::state) {
                    state.status.store(CANCELLED, Relaxed);
                }
                slot.publish(&wheel);
                let once = drained.iter().filter(|e| e.is_once()).count();
                slot.count(&wheel, 0, retired(once, drained.len()));
                drained
            };
            drop(drained);
        }
    }
}

/// What `all` timers, `once` of them one-shots, weigh in a shard's counts.
fn retired(once: usize, all: usize) -> u64 {
    debug_assert!(once <= all);
    all as u64 * ONE + once as u64 * ONE_ONCE
}
