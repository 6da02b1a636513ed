//! Letters: type-erased envelopes addressed to one actor, what the message-centric engine queues.
//!
//! Under the actor-centric engine a message waits in its actor's mailbox and the engine queues the
//! actor. Under the message-centric engine (Cforall's executor, docs/message-centric.md) the
//! message itself is queued, in one of the engine's sharded queues, beside messages to other actors
//! of any type; a worker takes a letter and hands it to its actor. A [`Letter`] is that queue
//! item: the actor's task, a per-actor-type vtable and the envelope.
//!
//! Envelopes up to [`INLINE`] bytes (most messages: a request, a counter, a reply handle, a
//! string) are stored *in* the letter, so a copy queue of letters needs no allocation per send
//! once it has grown; larger ones are boxed (one allocation, as Cforall's messages are).
//!
//! A letter is an obligation: it must be [`deliver_at`](Letter::deliver_at)ed, or dropped, which
//! runs the vtable's `discard` (a dead letter, counted). Either consumes the envelope exactly
//! once.

use super::exec::Exec;
use super::task::TaskRef;
use std::mem::{align_of, size_of, MaybeUninit};
use std::ptr::{addr_of_mut, NonNull};

/// Bytes of envelope a letter carries inline.
///
/// Four words: an envelope is its message plus a tag, so a three-word message (a `String`, two
/// counters and an `Option<Box<_>>`) needs four; with three it was boxed, and dynamic send paid a
/// `malloc` and a `free` (~250 instructions, callgrind) for every message.
pub(crate) const INLINE: usize = 4 * size_of::<usize>();

pub(crate) type Payload = [MaybeUninit<usize>; INLINE / size_of::<usize>()];

/// What a letter's actor type does with it.
pub(crate) struct LetterVtable {
    /// Hands the envelope to the actor (running its handler), then goes on with the letters
    /// [`Rest::next_for`] gives it (the next ones of the gulp, while they are addressed to the
    /// same actor): a *run*, one activation for consecutive letters. Returns what it took.
    ///
    /// Safety: the payload holds this vtable's envelope type, unconsumed; the caller is the only
    /// thread that may run the actor now (the letter's queue is being processed by it alone).
    pub(crate) deliver: unsafe fn(TaskRef, *mut Payload, &Exec, &dyn Rest) -> Delivered,
    /// Whether the letter carries one of its actor's envelopes (a run may take it), rather than
    /// ending the actor's life (the release letter).
    pub(crate) envelope: bool,
    /// Drops the envelope without delivering it (a dead letter, counted).
    ///
    /// Safety: as for `deliver`, minus the exclusivity.
    pub(crate) discard: unsafe fn(TaskRef, *mut Payload),
    /// Offsets from the task of the lines `deliver` reads besides the first (the actor's
    /// spawn-time fields, its state), for [`Letter::prefetch`].
    pub(crate) hot: [u16; 2],
}

/// The rest of the gulp a letter is delivered from, as the delivery may continue it.
pub(crate) trait Rest {
    /// Takes the next letter of the gulp if it is addressed to `task` and carries an envelope
    /// (`LetterVtable::envelope`), and gives its payload where it lies; otherwise leaves the gulp
    /// as it is. The caller must [`take`] the payload at once: it stays valid only until the next
    /// letter is appended to the gulp.
    fn next_for(&self, task: TaskRef) -> Option<NonNull<Payload>>;
}

/// What one delivery took: a letter and the run behind it (`LetterVtable::deliver`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Delivered {
    /// User messages handled (for the message counter).
    pub(crate) messages: u32,
    /// Letters consumed, the first included.
    pub(crate) letters: u32,
}

/// Where a handler's letter goes ([`crate::runtime::LetterQueues::append_slot`]).
pub(crate) enum Slot {
    /// A place reserved at the end of the gulp the calling thread's worker is processing: the
    /// caller must [`Letter::write_at`] it at once, before anything else touches the gulp.
    At(NonNull<Letter>),
    /// A place reserved at the end of the actor's queue, whose lock the engine keeps: the caller
    /// must [`Letter::write_at`] it at once and then call
    /// [`crate::runtime::LetterQueues::finish_post`] for the same actor, which publishes the
    /// letter and releases the lock.
    Queued(NonNull<Letter>),
    /// The actor has closed: the letter is refused.
    Closed,
    /// Not appendable: post the letter through the queue.
    Elsewhere,
}

/// A type-erased envelope addressed to one actor.
pub(crate) struct Letter {
    task: TaskRef,
    vtable: &'static LetterVtable,
    payload: Payload,
}

// SAFETY: the envelope inside is `Send` (checked by `write_at`), and the task is a `Send` token.
unsafe impl Send for Letter {}

/// Whether a `T` is stored in the letter itself (else behind a box).
const fn fits<T>() -> bool {
    size_of::<T>() <= INLINE && align_of::<T>() <= align_of::<usize>()
}

impl Letter {
    /// Seals `envelope` for `task` as a value ([`write_at`](Self::write_at) into a place of its
    /// own). The engine writes its letters in place; tests build them whole.
    #[cfg(test)]
    pub(crate) fn new<T: Send>(task: TaskRef, vtable: &'static LetterVtable, envelope: T) -> Self {
        let mut letter = MaybeUninit::<Letter>::uninit();
        // SAFETY: the place is ours, valid for writes and holds no letter; `write_at` writes
        // every field, so the letter is whole afterwards.
        unsafe {
            Self::write_at(NonNull::from(&mut letter).cast(), task, vtable, envelope);
            letter.assume_init()
        }
    }

    /// Seals `envelope` for `task` straight into `at`, where the letter will wait, instead of
    /// building it and moving it there (each move of a letter reads back, in wider pieces, what
    /// was just written in narrow ones: a stall the profile showed at every copy); `vtable`'s
    /// functions must read it back as a `T` (with [`take`]).
    ///
    /// # Safety
    /// `at` is valid for writes and holds no letter (its old contents are not dropped).
    #[inline]
    pub(crate) unsafe fn write_at<T: Send>(
        at: NonNull<Letter>,
        task: TaskRef,
        vtable: &'static LetterVtable,
        envelope: T,
    ) {
        let at = at.as_ptr();
        // SAFETY: the caller's contract: `at` is valid for writes; each field is written once.
        unsafe {
            addr_of_mut!((*at).task).write(task);
            addr_of_mut!((*at).vtable).write(vtable);
            let payload = addr_of_mut!((*at).payload);
            if fits::<T>() {
                payload.cast::<T>().write(envelope);
            } else {
                payload
                    .cast::<*mut T>()
                    .write(Box::into_raw(Box::new(envelope)));
            }
        }
    }

    /// Hands the envelope of the letter at `at` to its actor, where it lies (read out once, by
    /// its own type, before any handler runs), and the following letters of the gulp to the
    /// same actor that `rest` gives.
    ///
    /// # Safety
    /// The caller is the only thread running the letter's actor now; `at` holds a letter that is consumed here (the caller must neither
    /// drop it nor read it again), and stays valid until its envelope is taken (nothing is
    /// appended to its buffer before the delivery begins).
    #[inline]
    pub(crate) unsafe fn deliver_at(
        at: NonNull<Letter>,
        exec: &Exec,
        rest: &dyn Rest,
    ) -> Delivered {
        let at = at.as_ptr();
        // SAFETY: the caller's contract; the payload is consumed once, by the vtable's deliver.
        unsafe {
            let (task, vtable) = ((*at).task, (*at).vtable);
            (vtable.deliver)(task, addr_of_mut!((*at).payload), exec, rest)
        }
    }

    /// The payload of the letter at `at`.
    #[inline]
    pub(crate) fn payload_of(at: NonNull<Letter>) -> NonNull<Payload> {
        // SAFETY: a field of a valid pointer is non-null; no reference is made.
        unsafe { NonNull::new_unchecked(addr_of_mut!((*at.as_ptr()).payload)) }
    }

    /// The actor the letter is addressed to.
    #[inline]
    pub(crate) fn task(&self) -> TaskRef {
        self.task
    }

    /// Whether the letter carries an envelope (not a release letter).
    #[inline]
    pub(crate) fn is_envelope(&self) -> bool {
        self.vtable.envelope
    }

    /// Asks the processor to bring the lines this letter's delivery will read (its actor's cell:
    /// the header, the vtable's `hot` lines) into the cache, without waiting for them. A gulp
    /// delivers its letters in queue order, a whole pass after they were sent, so with more
    /// actors than the cache holds every delivery began with a miss on its actor's cell
    /// (docs/decisions/0041-gulp-prefetch.md); issued a few letters ahead, the misses overlap the deliveries
    /// before them.
    #[inline(always)]
    pub(crate) fn prefetch(&self) {
        // Not under Miri: a hint with nothing to check, which it need not know.
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let base = self.task.as_ptr().as_ptr().cast::<i8>().cast_const();
            // SAFETY: a prefetch is a hint: it reads nothing the program sees and never faults,
            // whatever the address (`wrapping_add` keeps the arithmetic defined); SSE, which
            // provides it, is part of every x86_64 processor.
            unsafe {
                _mm_prefetch(base, _MM_HINT_T0);
                _mm_prefetch(
                    base.wrapping_add(usize::from(self.vtable.hot[0])),
                    _MM_HINT_T0,
                );
                _mm_prefetch(
                    base.wrapping_add(usize::from(self.vtable.hot[1])),
                    _MM_HINT_T0,
                );
            }
        }
    }

    /// Takes the envelope back out (a send the engine refused).
    ///
    /// # Safety
    /// `T` is the type the letter was made with.
    #[cfg(test)]
    pub(crate) unsafe fn open<T>(self) -> T {
        let mut letter = std::mem::ManuallyDrop::new(self);
        // SAFETY: forwarded contract; the payload is consumed once, here.
        unsafe { take::<T>(&mut letter.payload) }
    }
}

impl Drop for Letter {
    fn drop(&mut self) {
        // SAFETY: the payload holds the vtable's type, unconsumed (`deliver` and `open` skip this).
        unsafe { (self.vtable.discard)(self.task, &mut self.payload) }
    }
}

/// Reads the envelope out of a payload made by [`Letter::write_at`] with a `T`.
///
/// # Safety
/// The payload holds an unconsumed `T` written by `Letter::write_at`; it must not be read again.
#[inline]
pub(crate) unsafe fn take<T>(payload: *mut Payload) -> T {
    if fits::<T>() {
        // SAFETY: written inline by `write_at` (caller's contract).
        unsafe { payload.cast::<T>().read() }
    } else {
        // SAFETY: `write_at` stored a pointer from `Box::into_raw`, read once.
        unsafe { *Box::from_raw(payload.cast::<*mut T>().read()) }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::runtime::task::{Header, Vtable};
    use crate::runtime::ActorId;
    use std::ptr::NonNull;
    // atomic outside sync.rs: test-only, never run under loom; `static` counters need a
    // `const fn new`, which loom atomics lack.
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

    pub(crate) static DISCARDED: AtomicUsize = AtomicUsize::new(0);

    unsafe fn no_run(_: NonNull<Header>, _: &Exec, _: bool) -> crate::runtime::RunOutcome {
        unreachable!()
    }
    unsafe fn no_shutdown(_: NonNull<Header>) {}
    unsafe fn no_release(_: NonNull<Header>) -> bool {
        unreachable!()
    }
    unsafe fn no_info(_: NonNull<Header>) -> crate::runtime::task::CellInfo {
        unreachable!()
    }
    unsafe fn no_control(_: NonNull<Header>) -> std::sync::Arc<dyn crate::runtime::task::Control> {
        unreachable!()
    }
    unsafe fn no_parent(_: NonNull<Header>) -> Option<crate::runtime::id::ActorId> {
        unreachable!()
    }
    pub(crate) static TASK_VTABLE: Vtable = Vtable {
        run: no_run,
        release: no_release,
        shutdown: no_shutdown,
        info: no_info,
        control: no_control,
        state_bytes: 0,
        slot_bytes: 0,
        parent: no_parent,
    };

    unsafe fn discard_string(_: TaskRef, payload: *mut Payload) {
        // SAFETY: letters in these tests carry a `String`.
        drop(unsafe { take::<String>(payload) });
        DISCARDED.fetch_add(1, Relaxed);
    }
    unsafe fn deliver_never(_: TaskRef, _: *mut Payload, _: &Exec, _: &dyn Rest) -> Delivered {
        unreachable!()
    }
    pub(crate) static STRING_LETTER: LetterVtable = LetterVtable {
        deliver: deliver_never,
        envelope: true,
        discard: discard_string,
        hot: [0, 0],
    };

    /// Release letters discarded (dropped) so far.
    pub(crate) static RELEASED: AtomicUsize = AtomicUsize::new(0);
    unsafe fn count_release(_: TaskRef, _: *mut Payload) {
        RELEASED.fetch_add(1, Relaxed);
    }
    /// A release letter's vtable (no envelope) that counts its drops.
    pub(crate) static COUNTED_RELEASE: LetterVtable = LetterVtable {
        deliver: deliver_never,
        envelope: false,
        discard: count_release,
        hot: [0, 0],
    };

    unsafe fn discard_big(_: TaskRef, payload: *mut Payload) {
        // SAFETY: letters of this vtable carry a `[u64; 16]`.
        let big = unsafe { take::<[u64; 16]>(payload) };
        assert_eq!(big[15], 15);
        DISCARDED.fetch_add(1, Relaxed);
    }
    static BIG_LETTER: LetterVtable = LetterVtable {
        deliver: deliver_never,
        envelope: true,
        discard: discard_big,
        hot: [0, 0],
    };

    #[test]
    fn small_envelopes_are_inline_and_large_ones_boxed_and_each_is_consumed_once() {
        assert!(fits::<String>(), "a String (3 words) travels inline");
        assert!(fits::<(u8, String)>(), "and so does an envelope of one");
        assert!(!fits::<[u64; 16]>());
        let header = Header::new(&TASK_VTABLE, ActorId::from_worker(0, 1));
        let task = TaskRef::from_header(&header);
        let before = DISCARDED.load(Relaxed);
        let letter = Letter::new(task, &STRING_LETTER, String::from("hello"));
        assert_eq!(letter.task(), task);
        // SAFETY: made with a String.
        assert_eq!(unsafe { letter.open::<String>() }, "hello");
        assert_eq!(DISCARDED.load(Relaxed), before, "opened, not discarded");
        drop(Letter::new(task, &STRING_LETTER, String::from("dead")));
        let mut big = [0u64; 16];
        for (i, v) in big.iter_mut().enumerate() {
            *v = i as u64;
        }
        drop(Letter::new(task, &BIG_LETTER, big));
        assert_eq!(
            DISCARDED.load(Relaxed),
            before + 2,
            "dropped letters discard"
        );
        let queue: Vec<Letter> = (0..5)
            .map(|i| Letter::new(task, &STRING_LETTER, i.to_string()))
            .collect();
        drop(queue);
        assert_eq!(DISCARDED.load(Relaxed), before + 7);
    }
}
