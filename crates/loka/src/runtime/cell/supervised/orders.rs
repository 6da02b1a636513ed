//! A supervised child between instances and its supervisor's orders: its activations (and, under
//! the message-centric engine, its letters) while suspended, what it stashes, how it obeys an
//! order, and how the stash goes to the new instance.

use super::super::failure::{panic_message, stopped_panicked};
use super::super::{bound, ActorCell, Behavior, Envelope, Inner, Life, Stopping};
use super::{ChildEvent, Command};
use crate::runtime::stop_reason::StopReason;
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

impl<B: Behavior> ActorCell<B> {
    /// An activation of a suspended child (`activate` sends it here from its not-started branch):
    /// up to the throughput budget of envelopes, each stashed or, for a `Start`, its order obeyed.
    /// Ends once an order revived the child (the next activation runs it as usual) or stops it.
    #[cold]
    #[inline(never)]
    pub(in crate::runtime::cell) fn activate_suspended(
        &self,
        inner: &mut Inner<B>,
        ctx: &mut B::Ctx,
        exec: &crate::runtime::exec::Exec,
    ) -> crate::runtime::RunOutcome {
        use crate::mailbox::Pop;
        use crate::runtime::RunOutcome;
        let budget = self.runtime.throughput();
        let bound = self.bound.as_deref();
        let mut processed = 0u64;
        let run = catch_unwind(AssertUnwindSafe(|| loop {
            if B::inner(ctx).is_stopping() {
                return RunOutcome::Stopped;
            }
            if self.is_started() {
                return RunOutcome::Requeue; // revived
            }
            if processed == budget as u64 {
                return RunOutcome::Requeue;
            }
            // SAFETY: we hold the schedule: single consumer.
            match unsafe { self.mailbox.pop() } {
                Pop::Item(envelope) => {
                    processed += 1;
                    self.while_suspended(inner, ctx, envelope, bound);
                }
                Pop::NotReady => return RunOutcome::Waiting,
                // SAFETY: as above.
                Pop::Empty => match unsafe { self.mailbox.try_idle() } {
                    true => return RunOutcome::Idle,
                    false => continue,
                },
            }
        }));
        exec.counters().messages.bump(processed);
        let (outcome, failure) = match run {
            Ok(outcome) => (outcome, None),
            // A message of the stash, handed to the new instance, panicked.
            Err(panic) => (RunOutcome::Stopped, Some(panic_message(panic))),
        };
        let taken = processed as usize;
        if outcome == RunOutcome::Stopped
            && !self.stop_or_suspend(inner, ctx, failure, taken, Some(exec))
        {
            return RunOutcome::Requeue;
        }
        outcome
    }

    /// A letter for a suspended child (message-centric engine): stashed, or its order obeyed.
    #[cold]
    #[inline(never)]
    pub(in crate::runtime::cell) fn receive_suspended(
        &self,
        inner: &mut Inner<B>,
        ctx: &mut B::Ctx,
        envelope: Envelope<B>,
        exec: &crate::runtime::exec::Exec,
    ) {
        let bound = self.bound.as_deref();
        let failure = catch_unwind(AssertUnwindSafe(|| {
            self.while_suspended(inner, ctx, envelope, bound)
        }))
        .err()
        .map(panic_message);
        if failure.is_some() || B::inner(ctx).is_stopping() {
            self.stop_or_suspend(inner, ctx, failure, 1, Some(exec));
        }
    }

    /// The `Start` envelope reached a started actor: a supervisor's order, if one is pending
    /// (a first `Start` has none).
    #[cold]
    #[inline(never)]
    pub(in crate::runtime::cell) fn start_signal(
        &self,
        inner: &mut Inner<B>,
        ctx: &mut B::Ctx,
        bound: Option<&bound::Bound>,
    ) {
        // SAFETY: we hold the schedule; the borrow ends before user code runs.
        let order = unsafe { self.supervised() }.and_then(|slot| slot.orders.take());
        if let Some((command, seq)) = order {
            self.obey(inner, ctx, command, seq, bound);
        }
    }

    /// An envelope for a suspended child: a `Start` brings an order; a stop signal during a
    /// shutdown stops it for good; anything else waits in the stash for the next instance.
    #[cold]
    #[inline(never)]
    pub(in crate::runtime::cell) fn while_suspended(
        &self,
        inner: &mut Inner<B>,
        ctx: &mut B::Ctx,
        envelope: Envelope<B>,
        bound: Option<&bound::Bound>,
    ) {
        // SAFETY: we hold the schedule; the borrow ends before user code runs.
        let Some(slot) = (unsafe { self.supervised() }) else {
            unreachable!("only a supervised child is suspended")
        };
        match envelope {
            Envelope::Start => {
                if let Some((command, seq)) = slot.orders.take() {
                    self.obey(inner, ctx, command, seq, bound);
                }
            }
            Envelope::Stop if self.shutting_down() => {
                slot.terminating = true;
                B::inner(ctx).stopping = Stopping::Stopped;
            }
            // One is enough: replayed last (see `replay`).
            Envelope::Unreferenced
                if slot
                    .stash
                    .iter()
                    .any(|e| matches!(e, Envelope::Unreferenced)) => {}
            other => slot.stash.push_back(other),
        }
    }

    /// Carries out a supervisor's order.
    fn obey(
        &self,
        inner: &mut Inner<B>,
        ctx: &mut B::Ctx,
        command: Command,
        ack: u64,
        bound: Option<&bound::Bound>,
    ) {
        // SAFETY: we hold the schedule; each borrow ends before user code runs.
        let sink = match unsafe { self.supervised() } {
            Some(slot) => Arc::clone(&slot.sink),
            None => return,
        };
        let id = self.id();
        match command {
            Command::Terminate => {
                // SAFETY: as above.
                if let Some(slot) = unsafe { self.supervised() } {
                    slot.terminating = true;
                }
                B::inner(ctx).stopping = Stopping::Stopped;
            }
            Command::Suspend => {
                if !matches!(inner.life, Life::Suspended) {
                    if let Some(panic) = self.retire(inner, ctx) {
                        self.note_failure(
                            &StopReason::Panicked(stopped_panicked(None, panic)),
                            std::any::type_name::<B>(),
                        );
                    }
                }
                sink(id, ChildEvent::Suspended { ack });
            }
            Command::Restart => {
                if !matches!(inner.life, Life::Suspended) {
                    if let Some(panic) = self.retire(inner, ctx) {
                        self.note_failure(
                            &StopReason::Panicked(stopped_panicked(None, panic)),
                            std::any::type_name::<B>(),
                        );
                    }
                }
                match self.revive(inner, ctx) {
                    Ok(()) => {
                        sink(id, ChildEvent::Restarted { ack });
                        self.replay(inner, ctx, bound);
                    }
                    Err(reason) => {
                        self.note_failure(&reason, std::any::type_name::<B>());
                        let event = ChildEvent::Exited {
                            reason,
                            lost: 0,
                            ack: Some(ack),
                        };
                        sink(id, event);
                    }
                }
            }
        }
        if matches!(inner.life, Life::Suspended) && !B::inner(ctx).is_stopping() {
            // Suspended now: this activation ends, the next takes the suspended path.
            B::inner(ctx).stopping = Stopping::Suspended;
        }
    }

    /// Hands the stash to the new instance, in order, until it is empty or the instance stops. A
    /// panic unwinds out of here like any handler's: the envelope it was handling is lost, the
    /// rest stays stashed for the next instance.
    fn replay(&self, inner: &mut Inner<B>, ctx: &mut B::Ctx, bound: Option<&bound::Bound>) {
        while !B::inner(ctx).is_stopping() {
            // SAFETY: we hold the schedule; the borrow ends before the handler runs.
            let Some(slot) = (unsafe { self.supervised() }) else {
                return;
            };
            let Some(envelope) = slot.stash.pop_front() else {
                // Emptied: its memory goes too (a burst of messages during one restart must not
                // stay allocated in every child that ever restarted).
                slot.stash = VecDeque::new();
                return;
            };
            if matches!(envelope, Envelope::Unreferenced) && !slot.stash.is_empty() {
                // Whether no reference is left is judged once nothing is queued before it.
                slot.stash.push_back(envelope);
                continue;
            }
            // Out of line: one copy of the envelope handling for the failure path, not one
            // more inlined here.
            self.handle_outlined(inner, ctx, envelope, bound);
        }
    }

    /// [`handle`](Self::handle), out of line: for the failure path.
    #[inline(never)]
    fn handle_outlined(
        &self,
        inner: &mut Inner<B>,
        ctx: &mut B::Ctx,
        envelope: Envelope<B>,
        bound: Option<&bound::Bound>,
    ) {
        self.handle::<false>(inner, ctx, envelope, bound)
    }
}
