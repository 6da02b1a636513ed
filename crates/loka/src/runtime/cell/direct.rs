//! The cell under the message-centric engine: its envelopes travel as letters
//! (`runtime/letter.rs`) through the engine's queues instead of waiting in the mailbox, which is
//! *direct* (it only records that the actor stopped). Sealing a letter, delivering one, discarding
//! a dead one, and the release letter that frees a stopped actor behind its last letters.
//!
//! A bounded actor's count works the same as under the actor-centric engine: the sender reserves
//! a place before it posts the letter, and the place is freed when the letter is received or
//! discarded (so `mailbox_len` counts the actor's letters still in the engine's queues).

use super::failure::panic_message;
use super::{start, ActorCell, Behavior, CellContext, Envelope, Life};
use crate::runtime::exec::Exec;
use crate::runtime::letter::{self, Delivered, Letter, LetterVtable, Rest, Slot};
use crate::runtime::task::TaskRef;
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;

impl<B: Behavior> ActorCell<B> {
    /// Letters carrying this actor's envelopes (message-centric engine).
    const LETTER: LetterVtable = LetterVtable {
        deliver: Self::deliver_letter,
        envelope: true,
        discard: Self::discard_letter,
        hot: Self::HOT,
    };

    /// The letter that releases the life reference once every letter queued before it is gone.
    const RELEASE: LetterVtable = LetterVtable {
        deliver: Self::deliver_release,
        envelope: false,
        discard: Self::release_letter,
        hot: Self::HOT,
    };

    /// The lines a delivery reads besides the header: the spawn-time fields (`started`, `bound`,
    /// `runtime`) and the actor's state (`Letter::prefetch`). An offset beyond `u16` (a cell
    /// whose mailbox holds huge envelopes inline) falls back to the header's line.
    const HOT: [u16; 2] = [
        hot_line(std::mem::offset_of!(Self, base.started)),
        hot_line(std::mem::offset_of!(Self, inner)),
    ];

    /// Hands an envelope to the engine as a letter (direct mailbox: message-centric engine). A
    /// handler's letter to an actor of the gulp its worker is processing is sealed straight into
    /// that gulp; any other goes through the queue.
    #[inline]
    pub(super) fn post(&self, envelope: Envelope<B>) -> Result<(), Envelope<B>> {
        let slot = self.runtime.letters().append_slot(self.task());
        self.post_to(slot, envelope, true)
    }

    /// [`post`](Self::post) for a user message (`Deliver::deliver`), its envelope made where
    /// the letter is written: the caller has just stored the message in narrower pieces, and
    /// reading it back at once into an envelope stalled each send on a failed store forwarding
    /// (the executor's hottest instruction at 2 workers: docs/decisions/0042-message-as-sent.md).
    #[inline]
    pub(super) fn post_message(&self, msg: B::Msg) -> Result<(), B::Msg> {
        let slot = self.runtime.letters().append_slot(self.task());
        self.post_to(slot, Envelope::Msg(msg), true)
            .map_err(super::deliver::message)
    }

    /// [`post`](Self::post) for a signal that must come after every letter sent before it by
    /// *any* sender (`ActorCell::enqueue_after_queued`: a stop, a supervisor's start, the last
    /// handle's `Unreferenced`): it joins the running gulp only while the actor's queue holds
    /// nothing, since an appended letter is delivered before everything in the queue. Appended
    /// anyway, the last handle's signal overtook another sender's earlier letter still in the
    /// queue: the actor saw a letter behind its final `Unreferenced` and never stopped (LASSI's
    /// merge sort left up to 98 actors alive at 2 workers). An empty queue is a sound test: a
    /// letter sent before the signal was pushed, its length stored, before something that
    /// happens before this post (its sender's handle drop, for the last handle's signal), and
    /// while this worker holds the gulp nobody else empties the queue. A letter appended after
    /// the signal was sent through a handle made since, whose own drop sends a new signal.
    #[inline(never)]
    pub(super) fn post_after_queued(&self, envelope: Envelope<B>) -> Result<(), Envelope<B>> {
        let slot = self.runtime.letters().append_slot_after_queued(self.task());
        self.post_to(slot, envelope, false)
    }

    /// Seals `envelope` where `slot` says; `Slot::Elsewhere` goes through the queue (or a list
    /// buffer's running gulp, if `append`).
    #[inline(always)]
    fn post_to(&self, slot: Slot, envelope: Envelope<B>, append: bool) -> Result<(), Envelope<B>> {
        match slot {
            Slot::At(at) => {
                // SAFETY: the engine reserved `at` for one letter, to be written at once.
                unsafe { Letter::write_at(at, self.task(), &Self::LETTER, envelope) };
                Ok(())
            }
            Slot::Queued(at) => {
                // SAFETY: as for `Slot::At`; writing a letter runs no user code and cannot
                // panic, so the queue's lock is released right after, by `finish_post`.
                unsafe { Letter::write_at(at, self.task(), &Self::LETTER, envelope) };
                self.runtime.letters().finish_post(self.task());
                Ok(())
            }
            Slot::Closed => Err(envelope),
            Slot::Elsewhere => self.post_queued(envelope, append),
        }
    }

    /// [`post`](Self::post) through the engine's queue (or a list buffer's running gulp, if
    /// `append`). Out of line: the append stays short.
    #[inline(never)]
    fn post_queued(&self, envelope: Envelope<B>, append: bool) -> Result<(), Envelope<B>> {
        let task = self.task();
        let envelope = ManuallyDrop::new(envelope);
        let mut sealed = false;
        let posted = self.runtime.letters().post_sealed(task, append, &mut |at| {
            debug_assert!(!sealed, "sealed once");
            sealed = true;
            // SAFETY: `post_sealed` gives a place for one letter, and calls this at most once,
            // so the envelope is read out once (and then not handed back: `posted` is true).
            unsafe { Letter::write_at(at, task, &Self::LETTER, ptr::read(&*envelope)) };
        });
        if posted {
            Ok(())
        } else {
            Err(ManuallyDrop::into_inner(envelope))
        }
    }

    /// The cell a letter is addressed to.
    ///
    /// # Safety
    /// The task is an `ActorCell<B>` kept alive by its life reference (its release letter is
    /// queued behind every letter addressed to it).
    unsafe fn of_letter<'a>(task: TaskRef) -> &'a Self {
        // SAFETY: the header is at offset 0 of a live `ActorCell<B>` (the first field of its
        // `CellBase`, itself the first field; both repr(C)).
        unsafe { task.as_ptr().cast::<Self>().as_ref() }
    }

    unsafe fn deliver_letter(
        task: TaskRef,
        payload: *mut letter::Payload,
        exec: &Exec,
        rest: &dyn Rest,
    ) -> Delivered {
        // SAFETY: `LETTER` letters are addressed to live `ActorCell<B>`s and carry an
        // `Envelope<B>`, consumed once (the vtable's contract).
        let (cell, envelope) =
            unsafe { (Self::of_letter(task), letter::take::<Envelope<B>>(payload)) };
        cell.receive_run(envelope, exec, rest)
    }

    unsafe fn discard_letter(task: TaskRef, payload: *mut letter::Payload) {
        // SAFETY: as in `deliver_letter`.
        let (cell, envelope) =
            unsafe { (Self::of_letter(task), letter::take::<Envelope<B>>(payload)) };
        if matches!(envelope, Envelope::Msg(_)) {
            if let Some(bound) = &cell.bound {
                bound.take();
            }
            cell.dead_letters(1);
        }
        drop(envelope);
    }

    unsafe fn deliver_release(
        task: TaskRef,
        payload: *mut letter::Payload,
        _: &Exec,
        _: &dyn Rest,
    ) -> Delivered {
        // SAFETY: forwarded.
        unsafe { Self::release_letter(task, payload) };
        Delivered {
            messages: 0,
            letters: 1,
        }
    }

    unsafe fn release_letter(task: TaskRef, _: *mut letter::Payload) {
        // SAFETY: the release letter is queued once, by `terminate`, behind every letter addressed
        // to the actor; it carries the life reference taken in `spawn`, released here once.
        unsafe {
            drop(Arc::from_raw(
                task.as_ptr().cast::<Self>().as_ptr() as *const Self
            ))
        };
    }

    /// Receives a letter's envelope and then those of the letters `rest` gives (the next ones of
    /// the gulp, while they are addressed to this actor): a *run*, handled as an activation is,
    /// with one context and one unwinding boundary for all of them. Returns how many letters it
    /// took and how many were user messages. A run needs a started actor: anything else (a first
    /// letter, a stopped or suspended actor) is [`receive`](Self::receive)d alone, and the
    /// letters after it come one by one.
    pub(super) fn receive_run(
        &self,
        first: Envelope<B>,
        exec: &Exec,
        rest: &dyn Rest,
    ) -> Delivered {
        // As an activation's (`activation.rs`): the run's span and its announcement to the
        // panic hook, for the run or for the one letter `receive` takes.
        #[cfg(feature = "trace-activations")]
        let span = self.activation_span(exec);
        #[cfg(feature = "trace-activations")]
        let _entered = span.enter();
        let _report = self.panic_scope();
        // What this thread runs, for `System::actors` and the handler-time sampler: a store on
        // the way in and one on the way out, as per activation in the other engines (runs never
        // nest here: this engine runs no actor inline, so there is no outer one to restore).
        exec.announce(self.id());
        // SAFETY: the engine hands this actor's letters to one worker at a time, in order (its
        // queue is processed by one worker at a time), so we are the only activation.
        let inner = unsafe { &mut *self.inner.get() };
        if !matches!(inner.life, Life::Ready(_)) || !self.is_started() {
            let delivered = Self::one(self.receive(first, exec));
            #[cfg(feature = "trace-activations")]
            span.record("messages", delivered.messages);
            exec.done();
            return delivered;
        }
        let mut ctx = B::context(CellContext::new(self, Some(exec)));
        if B::inner(&mut ctx).is_stopping() {
            let delivered = Self::one(self.receive(first, exec));
            #[cfg(feature = "trace-activations")]
            span.record("messages", delivered.messages);
            exec.done();
            return delivered;
        }
        let task = self.task();
        let bound = self.bound.as_deref();
        // At most an activation's worth (`throughput`): the worker looks at the shutdown flag
        // between batches of letters, and other actors of the gulp wait no longer than behind
        // an activation.
        let budget = self.runtime.throughput();
        let mut taken = 0;
        let mut messages = 0;
        // One unwinding boundary per run (as per activation in the other engine); a panic ends
        // the run, and the letters after it stay in the gulp.
        let failure = catch_unwind(AssertUnwindSafe(|| {
            let mut envelope = first;
            loop {
                messages += u32::from(matches!(envelope, Envelope::Msg(_)));
                taken += 1;
                self.handle::<true>(inner, &mut ctx, envelope, bound);
                // A stop, or a supervised child's order (a restart: `supervised/`), ends the run.
                if taken == budget
                    || B::inner(&mut ctx).is_stopping()
                    || !matches!(inner.life, Life::Ready(_))
                    || !self.is_started()
                {
                    break;
                }
                let Some(next) = rest.next_for(task) else {
                    break;
                };
                // SAFETY: `next_for` gives only envelope letters to this task: a `LETTER` of this
                // cell, made with an `Envelope<B>`, taken at once (nothing was appended since).
                envelope = unsafe { letter::take::<Envelope<B>>(next.as_ptr()) };
            }
        }))
        .err()
        .map(panic_message);
        // The run's places taken (bounded actors; `bound/mod.rs`), before anything else can run it.
        if let Some(bound) = bound {
            bound.release_taken();
        }
        if failure.is_some() || B::inner(&mut ctx).is_stopping() {
            // Every envelope of the run was taken (a panicking handler's is lost); a supervised
            // child may be suspended instead (`supervised/`), and then takes the next letters
            // one by one.
            let _ = self.stop_or_suspend(inner, &mut ctx, failure, 1, Some(exec));
        }
        #[cfg(feature = "trace-activations")]
        span.record("messages", messages);
        exec.done();
        Delivered {
            messages,
            // At most `throughput` (saturating: a budget past `u32::MAX` is only counted short).
            letters: u32::try_from(taken).unwrap_or(u32::MAX),
        }
    }

    /// What delivering one letter took.
    fn one(message: bool) -> Delivered {
        Delivered {
            messages: u32::from(message),
            letters: 1,
        }
    }

    /// Receives one letter's envelope (message-centric engine): starts the actor if needed, runs
    /// the envelope, stops the actor if it asked to or failed. Returns whether it was a user
    /// message it handled. Letters to a stopped actor (queued before it closed) are dead letters;
    /// a bounded actor's message doomed by a `DropOldest` send is discarded.
    pub(super) fn receive(&self, envelope: Envelope<B>, exec: &Exec) -> bool {
        // SAFETY: the engine hands this actor's letters to one worker at a time, in order (its
        // queue is processed by one worker at a time), so we are the only activation.
        let inner = unsafe { &mut *self.inner.get() };
        let is_message = matches!(envelope, Envelope::Msg(_));
        if let Life::Gone = inner.life {
            if is_message {
                if let Some(bound) = &self.bound {
                    bound.take();
                }
                self.dead_letters(1);
            }
            return false;
        }
        let mut ctx = B::context(CellContext::new(self, Some(exec)));
        let mut failure = None;
        if !self.is_started() {
            // Not started yet, or a supervised child between two instances (`supervised/`).
            if let Life::Suspended = inner.life {
                self.suspended_letter(inner, &mut ctx, envelope, exec);
                return is_message;
            }
            failure = start(inner, &mut ctx).err();
        }
        let mut unhandled = Some(envelope);
        if failure.is_none() && !B::inner(&mut ctx).is_stopping() {
            let bound = self.bound.as_deref();
            // Taken out inside the closure: moved into it (a copy made of narrower stores than
            // the handler's read of it), the envelope stalled every delivery on a failed store
            // forwarding (~12 cycles, the hottest spot of dynamic send's deliveries).
            failure = catch_unwind(AssertUnwindSafe(|| {
                let envelope = unhandled.take().expect("not taken yet");
                self.handle::<false>(inner, &mut ctx, envelope, bound)
            }))
            .err()
            .map(panic_message);
        }
        if failure.is_some() || B::inner(&mut ctx).is_stopping() {
            // A supervised child may be suspended instead (`supervised/`): then a letter not
            // handled yet waits in its stash for the next instance.
            let taken = usize::from(unhandled.is_none());
            if !self.stop_or_suspend(inner, &mut ctx, failure, taken, Some(exec)) {
                if let Some(envelope) = unhandled.take() {
                    self.suspended_letter(inner, &mut ctx, envelope, exec);
                }
            }
        }
        if let Some(Envelope::Msg(_)) = unhandled {
            if let Some(bound) = &self.bound {
                // Taken out, never handled: its place is free again.
                bound.take();
            }
            self.dead_letters(1);
        }
        is_message
    }

    /// The actor stopped: the engine refuses its later letters and queues the release letter
    /// behind those already queued (called by `terminate` after closing the mailbox).
    pub(super) fn close_direct(&self) {
        self.runtime
            .letters()
            .close(self.task(), Some(&Self::RELEASE));
    }
}

/// `offset` as a `LetterVtable::hot` entry: itself if it fits, else 0 (the header, prefetched
/// anyway), never a truncated offset pointing at a line the delivery does not read.
const fn hot_line(offset: usize) -> u16 {
    if offset <= u16::MAX as usize {
        offset as u16
    } else {
        0
    }
}
