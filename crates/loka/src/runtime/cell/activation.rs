//! The activation: what a worker runs when it takes an actor — envelopes, one at a time, until
//! its budget is spent (`runtime/budget.rs`), inside one unwinding boundary — and what a
//! handler's panic or a stop turns the activation into.

use super::failure::panic_message;
use super::{bound, start, ActorCell, Behavior, CellContext, Envelope, Inner, Life, Stopping};
use crate::mailbox::Pop;
use crate::runtime::budget;
use crate::runtime::exec::Exec;
use crate::runtime::task::{Header, RunOutcome};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;

impl<B: Behavior> ActorCell<B> {
    pub(super) unsafe fn run_raw(ptr: NonNull<Header>, exec: &Exec, hold: bool) -> RunOutcome {
        // SAFETY: the header is at offset 0 of a live `ActorCell<B>` (the first field of its
        // `CellBase`, itself the first field; both repr(C)).
        let cell = unsafe { ptr.cast::<Self>().as_ref() };
        cell.activate(exec, hold)
    }

    /// [`crate::runtime::TaskRef::release`]: idle unless a message came since the drained
    /// activation ended.
    pub(super) unsafe fn release_raw(ptr: NonNull<Header>) -> bool {
        // SAFETY: as `run_raw`.
        let cell = unsafe { ptr.cast::<Self>().as_ref() };
        // A plain load first: when a message came (a ping-pong partner answered), the
        // compare-and-swap would fail anyway, and a failed one costs as much as a successful one.
        // SAFETY: the caller holds the drained actor's schedule, so it is the mailbox's single
        // consumer.
        unsafe { !cell.mailbox.has_claims() && cell.mailbox.try_idle() }
    }

    /// One activation: up to the throughput budget of envelopes. `hold`: an emptied mailbox
    /// answers `Drained` (the engine holds the actor) instead of going idle.
    #[inline(always)]
    fn activate(&self, exec: &Exec, hold: bool) -> RunOutcome {
        // The activation's span (feature `trace-activations`; not compiled without it) and, under
        // `panic_report = "tracing"`, its announcement to the panic hook: both end with it.
        #[cfg(feature = "trace-activations")]
        let span = self.activation_span(exec);
        #[cfg(feature = "trace-activations")]
        let _entered = span.enter();
        let _report = self.panic_scope();
        // SAFETY: we hold the schedule, so we are the only activation (mailbox protocol).
        let inner = unsafe { &mut *self.inner.get() };
        let outer = exec.enter(self.id());
        let mut ctx = B::context(CellContext::new(self, Some(exec)));
        let mut failure = None;
        if !self.is_started() {
            // Not started yet, or a supervised child between two instances (`supervised/`):
            // tested here, where only those two come, so running actors pay nothing for it.
            if let Life::Suspended = inner.life {
                let outcome = self.suspended_activation(inner, &mut ctx, exec);
                exec.leave(outer);
                return outcome;
            }
            failure = start(inner, &mut ctx).err();
        }
        let mut processed = 0;
        let outcome = match failure {
            Some(_) => RunOutcome::Stopped,
            // One unwinding boundary per activation, not per message: a panic ends the
            // activation anyway, and the message then goes from its slot to the handler without
            // passing through a closure's environment (docs/decisions/0026-micro-benchmark-losses.md).
            None => match catch_unwind(AssertUnwindSafe(|| {
                self.run_envelopes(inner, &mut ctx, &mut processed, hold)
            })) {
                Ok(outcome) => outcome,
                Err(panic) => {
                    // The loop's places taken before the panic (it gives them back on every
                    // other way out).
                    release_taken(self.bound.as_deref());
                    failure = Some(panic_message(panic));
                    RunOutcome::Stopped
                }
            },
        };
        exec.counters().messages.bump(processed as u64);
        #[cfg(feature = "trace-activations")]
        span.record("messages", processed);
        if outcome == RunOutcome::Stopped
            && !self.stop_or_suspend(inner, &mut ctx, failure, processed, Some(exec))
        {
            // A supervised child, suspended: still scheduled, it stashes what comes next.
            exec.leave(outer);
            return RunOutcome::Requeue;
        }
        exec.leave(outer);
        outcome
    }

    /// The activation's loop: until its budget is spent (`throughput` envelopes and sends into
    /// queues, or a backlog's gulp: `runtime/budget.rs`), the mailbox is empty or the actor
    /// stops. A handler's panic unwinds out of it to the activation's one `catch_unwind`; the
    /// envelopes handled so far are counted in `processed` either way.
    #[inline(always)]
    fn run_envelopes(
        &self,
        inner: &mut Inner<B>,
        ctx: &mut B::Ctx,
        processed: &mut usize,
        hold: bool,
    ) -> RunOutcome {
        // Read once per activation: an unbounded actor's loop then tests a register per message.
        let bound = self.bound.as_deref();
        // The budget is this thread's word, not a register: the sends the handler makes spend
        // it too. Looked at after each envelope, where it can have run out.
        budget::start(self.runtime.budget());
        // Where the running budget began, and when the activation began to gulp a backlog.
        let mut gulp = budget::Gulp::default();
        loop {
            if B::inner(ctx).is_stopping() {
                release_taken(bound);
                return RunOutcome::Stopped;
            }
            // SAFETY: we hold the schedule: single consumer.
            // SAFETY: we hold the schedule: single consumer. The closure moves the envelope out
            // first; a message's handler runs in place (it never reaches this mailbox's consumer
            // side), every other envelope after the position advanced (`can_stop_unreferenced`
            // reads it).
            let taken = unsafe {
                self.mailbox.pop_with(|slot| {
                    *processed += 1;
                    match slot.read() {
                        Envelope::Msg(msg) => {
                            self.handle_message::<true>(inner, ctx, msg, bound);
                            None
                        }
                        signal => Some(signal),
                    }
                })
            };
            match taken {
                Pop::Item(None) => {}
                Pop::Item(Some(signal)) => self.handle_signal(inner, ctx, signal),
                // A sender is writing the next slot: stay scheduled, come back soon.
                Pop::NotReady => {
                    release_taken(bound);
                    return RunOutcome::Waiting;
                }
                // A message claimed since the pop (a plain load): go on, as a failed `try_idle`
                // does, rather than end the activation for a hold that would end at once.
                // SAFETY: as above.
                Pop::Empty if hold => match unsafe { self.mailbox.has_claims() } {
                    true => continue,
                    false => {
                        release_taken(bound);
                        return RunOutcome::Drained;
                    }
                },
                Pop::Empty => {
                    // Before the actor can go idle: once idle, a sender may schedule it on
                    // another worker, whose activation then owns the batch's count.
                    release_taken(bound);
                    // SAFETY: as above.
                    match unsafe { self.mailbox.try_idle() } {
                        true => return RunOutcome::Idle,
                        // A send raced in; it did not schedule us, so we go on.
                        false => continue,
                    }
                }
            }
            // An envelope was taken: one unit of the budget.
            // A stop requested meanwhile is obeyed at the loop's top, not carried past the end.
            if budget::spend_one()
                && !B::inner(ctx).is_stopping()
                && !self.gulp_backlog(*processed, &mut gulp, B::inner(ctx).exec())
            {
                release_taken(bound);
                return RunOutcome::Requeue;
            }
        }
    }

    /// The activation's budget ran out after `processed` envelopes: if more than `throughput`
    /// messages are queued (a backlog) and the budget went mostly to taking envelopes, not to
    /// sends, it goes on, a budget at a time, until it has taken `backlog_gulp` envelopes in all,
    /// has gulped for [`budget::GULP_NS`], or an actor woken meanwhile waits on the worker. Out
    /// of line: called once per budget spent (`runtime/budget.rs`).
    #[inline(never)]
    fn gulp_backlog(
        &self,
        processed: usize,
        gulp: &mut budget::Gulp,
        exec: Option<&crate::runtime::Exec>,
    ) -> bool {
        let most = self.runtime.backlog_gulp();
        // A shutdown ends the activation at its budget, as it did before gulps (docs/shutdown.md:
        // each worker finishes the activation it is in, at most `throughput` messages).
        if processed >= most
            || self.runtime.shared.lifecycle.is_shutting_down()
            || gulp.spent_on_sends(processed, self.runtime.budget(), most)
        {
            return false;
        }
        // The cheap tests first: most activations that reach here have no backlog, and then the
        // clock is not read at all.
        if gulp.since == 0 && self.mailbox.len_estimate() <= self.runtime.throughput() {
            return false;
        }
        // An actor woken meanwhile waits for this activation to end, not for the backlog: a
        // gulp is free only while no one else waits (docs/decisions/0094-a-gulp-yields-to-woken-actors.md).
        if self.runtime.woken_waiting() {
            return false;
        }
        let charged = exec.map_or(0, crate::runtime::Exec::charged);
        let now = self.runtime.gulp_clock_ns(processed, charged).max(1);
        if gulp.since == 0 {
            gulp.since = now;
        } else if now.saturating_sub(gulp.since) >= budget::GULP_NS {
            return false;
        }
        gulp.restart(processed, self.runtime.budget(), most);
        true
    }

    /// Runs one user message with the started actor's state; a handler's panic unwinds through
    /// it. Always inlined: it is the body of the activation loop (out of line it cost fib ~2%
    /// more instructions, callgrind).
    /// `bound` is `self.bound`, read by the caller once per activation.
    /// `BATCH`: a bounded actor's place is given back with its batch (`bound/mod.rs`): only the run
    /// loops, which give the batch back before they end, pass `true`.
    #[inline(always)]
    fn handle_message<const BATCH: bool>(
        &self,
        inner: &mut Inner<B>,
        ctx: &mut B::Ctx,
        msg: B::Msg,
        bound: Option<&bound::Bound>,
    ) {
        let Life::Ready(actor) = &mut inner.life else {
            unreachable!("a started actor has state until it terminates")
        };
        // Tested here, where the message is already out of its envelope, against a register
        // (read once per activation). Tested between the pop and this match, the envelope was
        // copied once more per message; with a second envelope tag for bounded messages every
        // envelope grew; with the bounded handling in one out-of-line function the handler was
        // inlined worse (callgrind, unbounded counting: 6, 5 and 11 instructions more per
        // message than this).
        if let Some(bound) = bound {
            if self.discards::<BATCH>(bound) {
                return;
            }
        }
        self.note_message();
        actor.handle(ctx, msg);
    }

    /// Runs one envelope (the message-centric engine's receive): a user message as
    /// [`Self::handle_message`] does, anything else as [`Self::handle_signal`]. Always inlined:
    /// it is the body of that engine's run loop (out of line, its call and the envelope's
    /// passing cost static send 17 instructions a message, callgrind).
    /// `BATCH` as for [`Self::handle_message`].
    #[inline(always)]
    pub(super) fn handle<const BATCH: bool>(
        &self,
        inner: &mut Inner<B>,
        ctx: &mut B::Ctx,
        envelope: Envelope<B>,
        bound: Option<&bound::Bound>,
    ) {
        match envelope {
            Envelope::Msg(msg) => self.handle_message::<BATCH>(inner, ctx, msg, bound),
            signal => self.handle_signal(inner, ctx, signal),
        }
    }

    /// Every envelope but a user message: continuations and the lifecycle signals.
    fn handle_signal(&self, inner: &mut Inner<B>, ctx: &mut B::Ctx, envelope: Envelope<B>) {
        let Life::Ready(actor) = &mut inner.life else {
            // A supervised child that is suspended ends its activation there (`supervised/`).
            unreachable!("a started actor has state until it terminates")
        };
        match envelope {
            Envelope::Msg(_) => unreachable!("messages take the fast path"),
            Envelope::Call(call) => call(actor, ctx),
            // A first activation's (nothing left to do), or a supervisor's order to a
            // supervised child (whose slot is in its extras: one null test for the others).
            // SAFETY: we hold the schedule; the borrow ends at once.
            Envelope::Start if unsafe { self.extras_if_any() }.is_some() => {
                self.supervisor_order(inner, ctx, self.bound.as_deref())
            }
            Envelope::Start => {}
            Envelope::Stop => B::inner(ctx).stopping = Stopping::Stopped,
            Envelope::Unreferenced => {
                if self.can_stop_unreferenced() {
                    B::inner(ctx).stopping = Stopping::Normal;
                }
            }
        }
    }

    /// A bounded actor took a user message out of its mailbox: frees its place, and says
    /// whether to discard the message instead of handling it (a `DropOldest` send doomed it;
    /// counted as an overflow drop). Out of line: unbounded actors never call it.
    /// `BATCH` as for [`Self::handle_message`].
    #[inline(never)]
    fn discards<const BATCH: bool>(&self, bound: &bound::Bound) -> bool {
        let taken = match BATCH {
            true => bound.take_batched(),
            false => bound.take(),
        };
        if taken == bound::Taken::Handle {
            return false;
        }
        self.runtime.shared.note_overflow_dropped(
            self.id(),
            1,
            std::any::type_name::<B::Msg>(),
            self.named,
        );
        true
    }

    /// Whether the `Unreferenced` signal being handled may stop the actor: no handle exists and
    /// nothing is queued behind the signal (in the mailbox, or for a direct mailbox in the
    /// engine's queues: a scan, paid once per actor that stops unreferenced).
    #[cold]
    fn can_stop_unreferenced(&self) -> bool {
        if self.mailbox.is_direct() {
            // Handles first, then the queue: the order `Handles::can_stop` explains.
            self.handles.none_left() && !self.runtime.letters().has_queued(self.task())
        } else {
            // SAFETY: we hold the schedule (the only callers are activations).
            unsafe { self.handles.can_stop(&self.mailbox) }
        }
    }
}

/// A bounded actor's run loop gives back the places of the messages it took
/// ([`bound::Bound::release_taken`]); for an unbounded one, a test of a register.
#[inline(always)]
fn release_taken(bound: Option<&bound::Bound>) {
    if let Some(bound) = bound {
        bound.release_taken();
    }
}
