//! One sharded message queue: a short lock around a buffer of letters, the `being_processed` flag
//! and a length hint read without the lock.
//!
//! Senders push under the lock. A worker *gulps* a queue: it claims the `being_processed` flag,
//! then swaps the whole buffer for its own empty one under the lock (O(1)), and processes the
//! letters with no lock and no atomics until the next gulp; senders meanwhile fill the fresh
//! buffer. The flag is what keeps an actor's messages from running on two workers at once when a
//! queue is stolen while its previous gulp is still being processed: the thief's gulp finds it
//! claimed and skips it (a *missed gulp*).

use super::copy_queue::CopyQueue;
use super::spin::SpinLock;
use crate::config::QueueKind;
use crate::runtime::letter::LetterVtable;
use crate::runtime::{Letter, TaskRef};
use crate::sync::{AtomicBool, AtomicU64, AtomicUsize};
use std::collections::LinkedList;
use std::mem::MaybeUninit;
use std::ptr::NonNull;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

/// The letters of a queue (or of a worker's gulp).
pub(crate) enum Buffer {
    /// Cforall's copy queue.
    Copy(CopyQueue<Letter>),
    /// One node per letter (the ablation).
    List(LinkedList<Letter>),
}

impl Buffer {
    pub(crate) fn new(kind: QueueKind) -> Self {
        match kind {
            QueueKind::Copy => Buffer::Copy(CopyQueue::default()),
            QueueKind::List => Buffer::List(LinkedList::new()),
        }
    }

    #[inline]
    pub(crate) fn push(&mut self, letter: Letter) {
        match self {
            Buffer::Copy(q) => q.push(letter),
            Buffer::List(l) => l.push_back(letter),
        }
    }

    #[inline]
    pub(crate) fn pop(&mut self) -> Option<Letter> {
        match self {
            Buffer::Copy(q) => q.pop(),
            Buffer::List(l) => l.pop_front(),
        }
    }

    /// Takes the oldest letter where it lies (a copy queue's slot; a list's node is moved into
    /// `spare`). The caller must consume it before the next push to this buffer or `spare`.
    #[inline]
    pub(crate) fn pop_at(&mut self, spare: *mut MaybeUninit<Letter>) -> Option<NonNull<Letter>> {
        match self {
            Buffer::Copy(q) => q.pop_in_place().and_then(NonNull::new),
            Buffer::List(l) => {
                let letter = l.pop_front()?;
                // SAFETY: `spare` is the caller's, valid for writes, and holds nothing live.
                Some(NonNull::from(unsafe { (*spare).write(letter) }))
            }
        }
    }

    /// The oldest letter, not taken.
    #[inline]
    pub(crate) fn front(&self) -> Option<&Letter> {
        match self {
            Buffer::Copy(q) => q.front(),
            Buffer::List(l) => l.front(),
        }
    }

    /// [`pop_at`](Self::pop_at) if `take` says so of the oldest letter.
    #[inline]
    pub(crate) fn pop_at_if(
        &mut self,
        take: impl FnOnce(&Letter) -> bool,
        spare: *mut MaybeUninit<Letter>,
    ) -> Option<NonNull<Letter>> {
        if self.front().is_some_and(take) {
            self.pop_at(spare)
        } else {
            None
        }
    }

    /// Appends the letter `seal` writes (a whole letter, at once, at the place it is given), in
    /// place in a copy buffer.
    #[inline]
    pub(crate) fn push_sealed(&mut self, mut seal: impl FnMut(NonNull<Letter>)) {
        // SAFETY: `seal` writes the letter at once (`LetterQueues::post_sealed`'s contract), before
        // any other use of the buffer.
        match unsafe { self.reserve_slot() } {
            Some(at) => seal(at),
            None => self.push(Buffer::seal(&mut seal)),
        }
    }

    /// Appends the release letter of `task` (no envelope: `LetterQueues::close`).
    #[inline]
    pub(crate) fn push_release(&mut self, task: TaskRef, release: &'static LetterVtable) {
        // SAFETY: `at` is a place for one letter, written once here.
        self.push_sealed(|at| unsafe { Letter::write_at(at, task, release, ()) });
    }

    /// The letter `seal` writes, as a value (for a list buffer's node).
    pub(crate) fn seal(seal: &mut dyn FnMut(NonNull<Letter>)) -> Letter {
        let mut letter = MaybeUninit::<Letter>::uninit();
        seal(NonNull::from(&mut letter).cast());
        // SAFETY: `seal` wrote a whole letter (`Letter::write_at`).
        unsafe { letter.assume_init() }
    }

    /// A place for one more letter at the end, to be written at once ([`Letter::write_at`]);
    /// `None` for a list (its letters are moved into nodes).
    ///
    /// # Safety
    /// As for [`CopyQueue::reserve_slot`]: the caller writes a letter there before the next call.
    #[inline]
    pub(crate) unsafe fn reserve_slot(&mut self) -> Option<NonNull<Letter>> {
        match self {
            // SAFETY: forwarded.
            Buffer::Copy(q) => NonNull::new(unsafe { q.reserve_slot() }),
            Buffer::List(_) => None,
        }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        match self {
            Buffer::Copy(q) => q.len(),
            Buffer::List(l) => l.len(),
        }
    }

    /// Whether a letter to `task` is in the buffer.
    pub(crate) fn holds(&self, task: TaskRef) -> bool {
        match self {
            Buffer::Copy(q) => q.remaining().iter().any(|l| l.task() == task),
            Buffer::List(l) => l.iter().any(|l| l.task() == task),
        }
    }

    /// Moves every letter to `task` out, oldest first, into `sink`; the others keep their order.
    /// Returns how many moved. `sink` must not run user code.
    pub(crate) fn move_out(&mut self, task: TaskRef, mut sink: impl FnMut(Letter)) -> usize {
        match self {
            Buffer::Copy(q) => q.move_out_where(|l| l.task() == task, sink),
            Buffer::List(l) => {
                // The ablation's list: relinked node by node (no stable in-place filter).
                let (mine, kept) = std::mem::take(l)
                    .into_iter()
                    .partition::<LinkedList<_>, _>(|letter| letter.task() == task);
                *l = kept;
                let moved = mine.len();
                mine.into_iter().for_each(&mut sink);
                moved
            }
        }
    }

    /// A gulp of `used` letters from this buffer is done: give memory back (copy queue only).
    pub(crate) fn reclaim(&mut self, used: usize) {
        if let Buffer::Copy(q) = self {
            q.reclaim(used);
        }
    }
}

/// The `being_processed` flag: claimed by the worker that gulps the queue, released when it has
/// processed the gulp. At most one holder at a time, whoever owns the queue now. Claims are made
/// with the queue's lock held (the gulp takes it anyway), so a claim is a load and a store, not a
/// read-modify-write: two claimers are ordered by the lock.
#[derive(Default)]
pub(crate) struct ProcessingFlag(AtomicBool);

impl ProcessingFlag {
    /// Claims the queue for processing; `false` if another worker holds it. Acquire: the
    /// previous holder's processing (its writes to the actors' state, released by
    /// [`release`](Self::release)) happens before ours.
    ///
    /// Only with the queue's lock held: the lock makes the load and the store one step.
    #[inline]
    pub(crate) fn claim_locked(&self) -> bool {
        if self.0.load(Acquire) {
            return false;
        }
        self.0.store(true, Relaxed);
        true
    }

    /// Ends processing. Release: pairs with the next holder's claim.
    #[inline]
    pub(crate) fn release(&self) {
        self.0.store(false, Release);
    }

    /// Whether some worker processes the queue now, read with the queue's lock held (a worker
    /// re-binding an idle actor: `follow::follow_target`). Acquire: when it reads `false`, the
    /// last holder's processing (the actor's last handler) happens before what the caller does
    /// next.
    #[inline]
    pub(crate) fn is_claimed_locked(&self) -> bool {
        self.0.load(Acquire)
    }

    /// A hint (Relaxed): whether some worker processes the queue now.
    #[inline]
    pub(crate) fn is_claimed(&self) -> bool {
        self.0.load(Relaxed)
    }
}

/// What the lock protects.
pub(crate) struct Locked {
    pub(crate) buffer: Buffer,
    /// Letters ever posted here (statistics; plain: written under the lock).
    pub(crate) posted: u64,
}

/// One sharded queue.
pub(crate) struct MessageQueue {
    pub(crate) locked: SpinLock<Locked>,
    /// The buffer's length, stored under the lock, read without it (Relaxed) as the non-atomic
    /// emptiness pre-check before a gulp and by thieves looking for a candidate.
    len: AtomicUsize,
    pub(crate) processing: ProcessingFlag,
    /// The worker that last gulped or stole the queue: who to wake when a letter arrives.
    pub(crate) owner: AtomicUsize,
    /// Gulps taken so far (written under the lock, read as a hint): a thief steals a queue only
    /// if it saw it non-empty twice with the same count in between, i.e. its letters waited.
    generation: AtomicU64,
    /// Letters handlers appended to this queue's gulps instead of posting them (statistics;
    /// written only by the holder of `processing`, so a load and a store).
    appended: AtomicU64,
}

/// What a gulp attempt found.
pub(crate) enum Gulp {
    /// Took this many letters into the worker's buffer.
    Took(usize),
    /// Another worker processes the queue (a missed gulp).
    Busy,
    /// Nothing to take.
    Empty,
}

impl MessageQueue {
    pub(crate) fn new(kind: QueueKind, owner: usize) -> Self {
        MessageQueue {
            locked: SpinLock::new(Locked {
                buffer: Buffer::new(kind),
                posted: 0,
            }),
            len: AtomicUsize::new(0),
            processing: ProcessingFlag::default(),
            owner: AtomicUsize::new(owner),
            generation: AtomicU64::new(0),
            appended: AtomicU64::new(0),
        }
    }

    /// Counts `n` letters appended to the gulp just processed; only by the holder of
    /// `processing` (one writer at a time, ordered by the flag: a load and a store suffice).
    #[inline]
    pub(crate) fn note_appended(&self, n: usize) {
        if n != 0 {
            self.appended
                .store(self.appended.load(Relaxed) + n as u64, Relaxed);
        }
    }

    /// Letters appended to this queue's gulps so far (statistics).
    pub(crate) fn appended(&self) -> u64 {
        self.appended.load(Relaxed)
    }

    /// The length hint (no lock, Relaxed).
    #[inline]
    pub(crate) fn len_hint(&self) -> usize {
        self.len.load(Relaxed)
    }

    /// How many gulps the queue has had (a hint, Relaxed).
    #[inline]
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Relaxed)
    }

    /// Stores the length hint; only with the lock held.
    #[inline]
    pub(crate) fn set_len(&self, len: usize) {
        self.len.store(len, Relaxed);
    }

    /// Gulps the queue into `local` (which must be empty): claims the flag, swaps the buffers.
    /// On `Took`, the caller must [`ProcessingFlag::release`] once it has processed `local`.
    #[inline]
    pub(crate) fn gulp(&self, local: &mut Buffer) -> Gulp {
        debug_assert_eq!(local.len(), 0);
        // A look without the lock first: a queue another worker processes costs no lock.
        if self.processing.is_claimed() {
            return Gulp::Busy;
        }
        self.locked.with(|locked| {
            let n = locked.buffer.len();
            if n == 0 {
                return Gulp::Empty;
            }
            if !self.processing.claim_locked() {
                return Gulp::Busy;
            }
            std::mem::swap(&mut locked.buffer, local);
            self.set_len(0);
            // Only under the lock: a load and a store suffice.
            self.generation
                .store(self.generation.load(Relaxed) + 1, Relaxed);
            Gulp::Took(n)
        })
    }

    /// Whether the queue holds letters, read under the lock (the parking re-check: the lock
    /// orders it with posts, see `Engine::post`).
    pub(crate) fn has_letters_locked(&self) -> bool {
        self.locked.with(|locked| locked.buffer.len() != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::letter::tests::{COUNTED_RELEASE, RELEASED, STRING_LETTER, TASK_VTABLE};
    use crate::runtime::task::Header;
    use crate::runtime::ActorId;

    /// Moving one actor's letters out of a buffer (an actor that follows, with its letters), in
    /// a copy buffer and in a list buffer: all of its letters and only them leave, counted, and
    /// the other actor's stay, in their order (its release letter last).
    #[test]
    fn moving_an_actors_letters_out_leaves_the_others_in_order() {
        for kind in [QueueKind::Copy, QueueKind::List] {
            let (one, other) = (
                Header::new(&TASK_VTABLE, ActorId::from_worker(0, 1)),
                Header::new(&TASK_VTABLE, ActorId::from_worker(0, 2)),
            );
            let (one, other) = (TaskRef::from_header(&one), TaskRef::from_header(&other));
            let mut buffer = Buffer::new(kind);
            for task in [one, other, one, one, other] {
                buffer.push(Letter::new(task, &STRING_LETTER, String::from("x")));
            }
            buffer.push_release(other, &COUNTED_RELEASE);
            let mut moved = Vec::new();
            assert_eq!(buffer.move_out(one, |l| moved.push(l)), 3, "{kind:?}");
            assert!(moved.iter().all(|l| l.task() == one), "{kind:?}");
            let mut left = Vec::new();
            while let Some(letter) = buffer.pop() {
                left.push((letter.task() == other, letter.is_envelope()));
            }
            assert_eq!(
                left,
                [(true, true), (true, true), (true, false)],
                "{kind:?}"
            );
        }
    }

    /// A release letter written in place (`push_release`), in a copy buffer and in a list
    /// buffer, comes out whole behind the letter pushed before it: its task and vtable as given,
    /// no envelope, and dropping it runs its vtable's discard once (Miri checks the writes).
    #[test]
    fn a_release_letter_is_written_in_place_behind_the_others() {
        for kind in [QueueKind::Copy, QueueKind::List] {
            let header = Header::new(&TASK_VTABLE, ActorId::from_worker(0, 1));
            let task = TaskRef::from_header(&header);
            let mut buffer = Buffer::new(kind);
            buffer.push(Letter::new(task, &STRING_LETTER, String::from("first")));
            buffer.push_release(task, &COUNTED_RELEASE);
            assert_eq!(buffer.len(), 2, "{kind:?}");
            let first = buffer.pop().expect("two letters");
            assert!(first.is_envelope(), "{kind:?}: the message first");
            drop(first);
            let release = buffer.pop().expect("the release letter");
            assert_eq!(release.task(), task, "{kind:?}");
            assert!(!release.is_envelope(), "{kind:?}: a release letter");
            let before = RELEASED.load(Relaxed);
            drop(release);
            assert_eq!(
                RELEASED.load(Relaxed),
                before + 1,
                "{kind:?}: discarded once"
            );
            assert!(buffer.pop().is_none(), "{kind:?}");
        }
    }
}
