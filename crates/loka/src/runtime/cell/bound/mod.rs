//! The bookkeeping of a bounded mailbox ([`SpawnOptions::capacity`](crate::SpawnOptions::capacity)):
//! how many user messages it holds, how many queued ones are doomed by `DropOldest`, and the
//! senders waiting for room (`send_async`). docs/bounded-mailboxes.md says what it does,
//! docs/decisions/0023-bounded-mailboxes.md why it is built this way.
//!
//! Only bounded actors have one (the cell's `bound` is `None` otherwise), so an unbounded actor
//! pays a test of that field per received message and, per send, the test of the cell's
//! `plain_send` beside it, nothing else.
//!
//! ## The word
//! One `AtomicU64`: `len | discard << 32 | WAITERS << 63`.
//! * `len`: user messages queued (or being pushed) that the actor will handle. A sender reserves
//!   one (`len + 1`, only while `len < capacity`) *before* it pushes; the actor releases one when
//!   it takes such a message out. So the mailbox never holds more than `capacity` of them.
//! * `discard`: queued messages doomed by `DropOldest`. A full `DropOldest` send leaves `len`
//!   alone (one message in, one out) and adds one here; the actor discards, instead of handling,
//!   the next `discard` user messages it takes out: the oldest ones queued, since the mailbox is
//!   FIFO and only the actor takes messages out (a sender cannot pop from the middle of an MPSC
//!   queue). One word makes "take the next message" and "is the mailbox full" one atomic step, so a
//!   message the actor has started handling can never be the one a concurrent `DropOldest` send
//!   meant to drop.
//! * `WAITERS`: some `send_async` is registered in `waiters`. Set and cleared only under the
//!   waiters' lock; the actor's release reads it in the same read-modify-write that frees the
//!   room, so a waiter that registered while the mailbox was full is always seen (no lost
//!   wake-up: see [`Bound::register`]).
//!
//! ## Releases in batches
//! A sender's reservation and the actor's release are read-modify-writes of that one word, from
//! two cores: per message its cache line would cross between them twice (counting at 2 workers:
//! 26.6 M increments/s bounded against 35.8 M unbounded, docs/results/bounded-mailboxes.md). So
//! the actor gives places back in batches ([`Bound::take_batched`]): it counts the messages it
//! took on a line of its own and subtracts them from the word once per [`Bound::batch`] messages
//! and whenever it stops running ([`Bound::release_taken`]: before its activation, or its run of
//! letters, ends, before it can go idle, and on a panic). While the actor runs, the word then
//! counts up to `batch - 1` messages it has already taken: `mailbox_len` reads that many more,
//! and a sender may find the mailbox full while that many places are about to come back. Both are
//! exact again when the actor stops running, and the batch is at most an eighth of the capacity
//! (capacities under 16 keep one release per message). `DropOldest` keeps one release per
//! message: which message a full send dooms is decided with the release (above).
//!
//! ## Reservations ahead
//! The senders' side, batched the same way ([`credit`]): a send from inside an activation
//! reserves [`Bound::batch`] places at once ([`Bound::reserve_chunk`], only while that leaves the
//! mailbox at most half full) and spends them on its next sends; the unused ones come back when
//! the activation ends ([`Bound::release`]).

mod credit;
#[cfg(all(test, loom))]
mod loom_tests;
mod shared;
#[cfg(all(test, not(loom)))]
mod tests;

pub(crate) use credit::{give_back_reserved, mark_runtime_thread, reserve_more, spend_reserved};
pub(crate) use shared::SharedBound;

use crate::runtime::options::Overflow;
use crate::sync::{AtomicU32, AtomicU64};
use crossbeam_utils::CachePadded;
use std::collections::VecDeque;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed};
use std::task::Waker;

/// The largest capacity: `len` has 32 bits of the word.
pub(crate) const MAX_CAPACITY: usize = u32::MAX as usize;

const LEN_MASK: u64 = (1 << 32) - 1;
const DISCARD_ONE: u64 = 1 << 32;
const DISCARD_MASK: u64 = ((1 << 31) - 1) << 32;
const WAITERS: u64 = 1 << 63;

/// The waiters' lock: loom's under `--cfg loom`, so the model sees the wake-up protocol whole.
#[cfg(not(loom))]
type Mutex<T> = parking_lot::Mutex<T>;

#[cfg(loom)]
struct Mutex<T>(loom::sync::Mutex<T>);

#[cfg(loom)]
impl<T> Mutex<T> {
    fn new(value: T) -> Self {
        Mutex(loom::sync::Mutex::new(value))
    }
    fn lock(&self) -> loom::sync::MutexGuard<'_, T> {
        self.0
            .lock()
            .expect("no panic while holding the waiters' lock")
    }
}

/// A bounded mailbox's counters and waiters (module docs).
pub(crate) struct Bound {
    capacity: u64,
    overflow: Overflow,
    /// Places the actor gives back at once ([`Bound::batch`]); 1: one release per message.
    batch: u32,
    waiters: Mutex<Waiters>,
    /// The senders' line (and the actor's, once per batch): on a line of its own, so that the
    /// actor reading `capacity` or `batch` does not pull it away from a sender.
    word: CachePadded<AtomicU64>,
    /// Messages the actor took and has not given back yet. Only the actor, while it holds its
    /// schedule, reads or writes it (plain loads and stores, no read-modify-write); the hand-over
    /// of the schedule orders one activation's accesses before the next's. On its own line: the
    /// senders never touch it.
    taken: CachePadded<AtomicU32>,
}

/// The most places an actor keeps before giving them back: a line transfer (100-500 ns between
/// two cores of this project's VM) amortised over 32 messages costs a few ns each, less than a
/// handler, and a sender finds at most 31 places missing.
const MAX_BATCH: u64 = 32;

/// Senders waiting for room, oldest first, each under the key its future keeps.
#[derive(Default)]
struct Waiters {
    queue: VecDeque<(u64, Waker)>,
    next_key: u64,
}

/// What a sender got from [`Bound::reserve`] or [`Bound::make_room`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Room {
    /// One place reserved: push the message.
    Reserved,
    /// Full, and the oldest queued message is now doomed (`DropOldest`): push the message.
    Evicting,
    /// Full: nothing reserved.
    Full,
}

/// What the actor does with a user message it took out (see [`Bound::take`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Taken {
    /// Handle it (its place is free again).
    Handle,
    /// Discard it: a `DropOldest` send doomed it.
    Discard,
}

impl Bound {
    /// The bookkeeping of an empty mailbox of `capacity` (1..=[`MAX_CAPACITY`], checked at spawn).
    pub(crate) fn new(capacity: usize, overflow: Overflow) -> Self {
        debug_assert!((1..=MAX_CAPACITY).contains(&capacity));
        Bound {
            capacity: capacity as u64,
            overflow,
            batch: Self::batch(capacity as u64, overflow),
            word: CachePadded::new(AtomicU64::new(0)),
            waiters: Mutex::new(Waiters::default()),
            taken: CachePadded::new(AtomicU32::new(0)),
        }
    }

    /// How many places the actor gives back at once: an eighth of the capacity, at most
    /// [`MAX_BATCH`] (so a sender may find the mailbox full with at most an eighth of it about to
    /// come back); 1 under `DropOldest`, whose discards are decided per release.
    fn batch(capacity: u64, overflow: Overflow) -> u32 {
        match overflow {
            Overflow::DropOldest => 1,
            Overflow::Reject | Overflow::DropNewest => (capacity / 8).clamp(1, MAX_BATCH) as u32,
        }
    }

    /// The capacity.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity as usize
    }

    /// What a plain send does on a full mailbox.
    pub(crate) fn overflow(&self) -> Overflow {
        self.overflow
    }

    /// User messages queued that the actor will handle (doomed ones excluded). Exact at the
    /// instant of the read.
    pub(crate) fn len(&self) -> usize {
        (self.word.load(Acquire) & LEN_MASK) as usize
    }

    /// Reserves a place if there is one: [`Room::Reserved`] or [`Room::Full`].
    #[inline]
    pub(crate) fn reserve(&self) -> Room {
        let mut word = self.word.load(Relaxed);
        loop {
            if word & LEN_MASK >= self.capacity {
                return Room::Full;
            }
            // AcqRel, like every update of the word: one location, so its modification order
            // alone orders reservations, releases and waiter registrations.
            match self
                .word
                .compare_exchange_weak(word, word + 1, AcqRel, Relaxed)
            {
                Ok(_) => return Room::Reserved,
                Err(current) => word = current,
            }
        }
    }

    /// Reserves places for a sending activation to use ahead ([`credit`]): [`Bound::batch`] of
    /// them while that leaves the mailbox at most half full, else one (so that near full every
    /// reservation is exact again); 0 when full. The caller gives the unused ones back with
    /// [`release`](Self::release) (it wakes waiting senders as a release by the actor does).
    fn reserve_chunk(&self) -> u32 {
        let chunk = u64::from(self.batch);
        let mut word = self.word.load(Relaxed);
        loop {
            let len = word & LEN_MASK;
            if len >= self.capacity {
                return 0;
            }
            let n = if len + chunk <= self.capacity / 2 {
                chunk
            } else {
                1
            };
            // AcqRel as every update of the word (see `reserve`).
            match self
                .word
                .compare_exchange_weak(word, word + n, AcqRel, Relaxed)
            {
                Ok(_) => return n as u32,
                Err(current) => word = current,
            }
        }
    }

    /// `DropOldest`: reserves a place, or, on a full mailbox, dooms the oldest queued message so
    /// that the new one can go in ([`Room::Evicting`]). Never [`Room::Full`].
    pub(crate) fn make_room(&self) -> Room {
        let mut word = self.word.load(Relaxed);
        loop {
            let (next, room) = if word & LEN_MASK < self.capacity {
                (word + 1, Room::Reserved)
            } else {
                // 2^31 doomed messages not yet taken out would need that many queued ones:
                // memory runs out long before.
                debug_assert!(
                    word & DISCARD_MASK != DISCARD_MASK,
                    "discard count overflow"
                );
                (word + DISCARD_ONE, Room::Evicting)
            };
            match self.word.compare_exchange_weak(word, next, AcqRel, Relaxed) {
                Ok(_) => return room,
                Err(current) => word = current,
            }
        }
    }

    /// Undoes a [`reserve`](Self::reserve) or [`make_room`](Self::make_room) whose push was
    /// refused (the actor stopped): the message never entered the mailbox.
    pub(crate) fn unreserve(&self, room: Room) {
        match room {
            Room::Reserved => self.word.fetch_sub(1, AcqRel),
            Room::Evicting => self.word.fetch_sub(DISCARD_ONE, AcqRel),
            Room::Full => return,
        };
    }

    /// The actor took a user message out of its mailbox: discard it if a `DropOldest` send doomed
    /// it, else handle it and free its place, waking one waiting sender if any.
    #[inline]
    pub(crate) fn take(&self) -> Taken {
        let mut word = self.word.load(Relaxed);
        loop {
            let (next, taken) = if word & DISCARD_MASK != 0 {
                (word - DISCARD_ONE, Taken::Discard)
            } else {
                debug_assert!(word & LEN_MASK != 0, "a user message was queued unreserved");
                (word - 1, Taken::Handle)
            };
            match self.word.compare_exchange_weak(word, next, AcqRel, Relaxed) {
                Ok(_) => {
                    // A discard frees nothing: its place was given to the message that doomed it.
                    if taken == Taken::Handle && word & WAITERS != 0 {
                        self.wake_one();
                    }
                    return taken;
                }
                Err(current) => word = current,
            }
        }
    }

    /// [`take`](Self::take) in the actor's run loops: the place is given back later, with the
    /// batch's (module docs), unless this actor releases one by one. The caller must call
    /// [`release_taken`](Self::release_taken) before it stops running the actor.
    #[inline]
    pub(crate) fn take_batched(&self) -> Taken {
        if self.batch == 1 {
            return self.take();
        }
        // Plain load and store: only the actor holding its schedule touches `taken`.
        let taken = self.taken.load(Relaxed) + 1;
        if taken < self.batch {
            self.taken.store(taken, Relaxed);
        } else {
            self.taken.store(0, Relaxed);
            self.release(taken);
        }
        Taken::Handle
    }

    /// Gives back the places of the messages taken since the last release
    /// ([`take_batched`](Self::take_batched)). Called by the actor, while it holds its schedule,
    /// before it stops running: before its activation or run of letters ends, before it goes
    /// idle, on a panic.
    #[inline]
    pub(crate) fn release_taken(&self) {
        let taken = self.taken.load(Relaxed);
        if taken != 0 {
            self.taken.store(0, Relaxed);
            self.release(taken);
        }
    }

    /// Frees `n` places taken out, or reserved ahead and not used (never under `DropOldest`: no
    /// discard is pending in the word), waking as many waiting senders, if any.
    fn release(&self, n: u32) {
        // AcqRel as every update: the read-modify-write that sees `WAITERS` is what makes a
        // registered waiter's wake-up certain (see `register`).
        let word = self.word.fetch_sub(u64::from(n), AcqRel);
        debug_assert!(
            word & LEN_MASK >= u64::from(n),
            "released more than was reserved"
        );
        debug_assert!(
            word & DISCARD_MASK == 0,
            "a batched release under DropOldest"
        );
        if word & WAITERS != 0 {
            self.wake(n);
        }
    }

    /// Wakes up to `n` waiting senders, oldest first (cold: only when `WAITERS` was seen).
    #[cold]
    fn wake(&self, n: u32) {
        let woken: Vec<Waker> = {
            let mut waiters = self.waiters.lock();
            (0..n).map_while(|_| self.pop(&mut waiters)).collect()
        };
        for waker in woken {
            waker.wake();
        }
    }

    /// An async actor kept aside a message it took out while a handler of its awaits (the
    /// stash, `actor/async_actor/`): the message counts against the capacity again, until
    /// [`release_held`](Self::release_held). Never refused: the place was the message's a moment
    /// ago (a sender that reserved it in between can make the count one over the capacity).
    pub(crate) fn hold(&self) {
        self.word.fetch_add(1, AcqRel);
    }

    /// A held message leaves the stash (handled, or a dead letter): its place is free again,
    /// waking one waiting sender if any.
    pub(crate) fn release_held(&self) {
        let word = self.word.fetch_sub(1, AcqRel);
        debug_assert!(word & LEN_MASK != 0, "a held message was counted");
        if word & WAITERS != 0 {
            self.wake_one();
        }
    }

    /// `send_async` found the mailbox full: registers `waker` under `key` (a new key if `None`)
    /// and returns `true`, or returns `false` (unregistered) if there is room now, so the caller
    /// tries again.
    ///
    /// No lost wake-up: under the lock, `WAITERS` is set by a read-modify-write that sees the
    /// mailbox full. A release that comes later in the word's modification order sees the bit
    /// and wakes a waiter (after taking the lock, so after this registration is complete); one
    /// that came earlier made room, and this function answers `false` instead.
    pub(crate) fn register(&self, key: &mut Option<u64>, waker: &Waker) -> bool {
        let mut waiters = self.waiters.lock();
        let mut word = self.word.load(Acquire);
        loop {
            if word & LEN_MASK < self.capacity {
                if let Some(key) = key.take() {
                    self.remove(&mut waiters, key);
                }
                return false;
            }
            if word & WAITERS != 0 {
                break;
            }
            match self
                .word
                .compare_exchange_weak(word, word | WAITERS, AcqRel, Acquire)
            {
                Ok(_) => break,
                Err(current) => word = current,
            }
        }
        let entry = key.and_then(|k| waiters.queue.iter_mut().find(|(at, _)| *at == k));
        match entry {
            Some((_, registered)) => registered.clone_from(waker),
            None => {
                let k = waiters.next_key;
                waiters.next_key += 1;
                waiters.queue.push_back((k, waker.clone()));
                *key = Some(k);
            }
        }
        true
    }

    /// A waiting sender is done (sent, or failed because the actor stopped: `pass_on` false) or
    /// gave up (its future was dropped: `pass_on` true). If it had already been woken, that
    /// wake-up was meant for room it will not use: with `pass_on` it goes to the next waiter.
    pub(crate) fn unregister(&self, key: u64, pass_on: bool) {
        let mut waiters = self.waiters.lock();
        if !self.remove(&mut waiters, key) && pass_on {
            let next = self.pop(&mut waiters);
            drop(waiters);
            if let Some(waker) = next {
                waker.wake();
            }
        }
    }

    /// The actor stopped: wakes every waiting sender (each then sees the actor stopped).
    pub(crate) fn close(&self) {
        let woken: Vec<Waker> = {
            let mut waiters = self.waiters.lock();
            self.word.fetch_and(!WAITERS, AcqRel);
            waiters.queue.drain(..).map(|(_, waker)| waker).collect()
        };
        for waker in woken {
            waker.wake();
        }
    }

    /// Wakes the oldest waiting sender (cold: only when `WAITERS` was seen).
    #[cold]
    fn wake_one(&self) {
        let next = self.pop(&mut self.waiters.lock());
        if let Some(waker) = next {
            waker.wake();
        }
    }

    /// Takes the oldest waiter out, clearing `WAITERS` when none is left (under the lock).
    fn pop(&self, waiters: &mut Waiters) -> Option<Waker> {
        let next = waiters.queue.pop_front().map(|(_, waker)| waker);
        if waiters.queue.is_empty() {
            self.word.fetch_and(!WAITERS, AcqRel);
        }
        next
    }

    /// Removes waiter `key` if it is still queued (not woken yet); returns whether it was.
    fn remove(&self, waiters: &mut Waiters, key: u64) -> bool {
        let Some(at) = waiters.queue.iter().position(|(k, _)| *k == key) else {
            return false;
        };
        waiters.queue.remove(at);
        if waiters.queue.is_empty() {
            self.word.fetch_and(!WAITERS, AcqRel);
        }
        true
    }
}
