//! What an actor keeps only once it uses a feature: the timers it armed (`timers.rs`), the
//! futures it waits on (`pipes.rs`), its watchers, watches and links (`watch.rs`), its
//! supervision (`supervised/`). One pointer in
//! the cell, null for an actor that uses none: it pays that pointer (which fits the cell's padding),
//! one null test per message it handles (the receive timeout's mark) and one at stop.

use super::pipes::Pipes;
use super::timers::OwnTimers;
use super::watch::WatchState;
use super::{panic_message, ActorCell, Behavior};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The features in use.
#[derive(Default)]
pub(crate) struct Extras {
    /// Timers armed through the context, and the receive timeout.
    pub(crate) timers: OwnTimers,
    /// Futures piped through the context and still pending.
    pub(crate) pipes: Pipes,
    /// Death watch and links, either side.
    pub(crate) watch: WatchState,
    /// A supervised child's slot (`supervised/`): a `Supervised<B>` of the actor's type.
    pub(crate) supervised: Option<Box<dyn std::any::Any + Send>>,
    /// Why a supervisor gives up, while it stops ([`crate::StopReason::Escalated`]).
    pub(crate) escalation: Option<String>,
}

/// What a stopping actor still has to tell, once it is unregistered: its watchers and linked
/// actors, its supervisor.
pub(crate) struct Leftovers {
    pub(crate) watch: WatchState,
    /// A supervised child's slot (a `Supervised<B>`).
    pub(crate) supervised: Option<Box<dyn std::any::Any + Send>>,
}

impl<B: Behavior> ActorCell<B> {
    /// The actor's extras, made on first use.
    ///
    /// # Safety
    /// The caller holds the actor's schedule (it runs the actor's activation, or terminates it)
    /// and drops the reference before anything else can reach the extras (no user code runs while
    /// it is borrowed).
    #[allow(clippy::mut_from_ref)]
    pub(super) unsafe fn extras(&self) -> &mut Extras {
        // SAFETY: the caller's contract: only the holder of the schedule touches them.
        unsafe { (*self.extras.get()).get_or_insert_with(Box::default) }
    }

    /// The extras if the actor ever used a feature (no allocation otherwise).
    ///
    /// # Safety
    /// As for [`extras`](Self::extras).
    #[allow(clippy::mut_from_ref)]
    #[inline(always)]
    pub(super) unsafe fn extras_if_any(&self) -> Option<&mut Extras> {
        // SAFETY: the caller's contract.
        unsafe { (*self.extras.get()).as_deref_mut() }
    }

    /// The actor stops: its timers are cancelled (they never fire) and its pending piped futures
    /// dropped (never polled again; their continuations never run, like messages still queued).
    /// Returns the watch state and the supervision slot, for `terminate` to notify once the actor
    /// is unregistered: `None` for an actor that used no feature, which pays one branch here and one there (an empty
    /// state returned by value was a 100-byte copy and three empty loops per stopping actor).
    pub(super) fn drop_extras(&self) -> Option<Leftovers> {
        // SAFETY: called by `terminate`, which holds the schedule (or runs at shutdown).
        let mut extras = unsafe { (*self.extras.get()).take() }?;
        self.cancel_instance(&mut extras);
        Some(Leftovers {
            watch: std::mem::take(&mut extras.watch),
            supervised: extras.supervised.take(),
        })
    }

    /// A supervised child's instance is replaced (`supervised/`): what it armed and piped goes
    /// with it, as at a stop; what belongs to the actor (its watchers, watches and links, its
    /// supervision) stays.
    pub(super) fn drop_instance_extras(&self) {
        // SAFETY: called by the activation holding the schedule; no user code runs meanwhile.
        if let Some(extras) = unsafe { self.extras_if_any() } {
            self.cancel_instance(extras);
        }
    }

    /// Cancels the instance's timers (its receive timeout included) and drops its piped futures.
    fn cancel_instance(&self, extras: &mut Extras) {
        std::mem::take(&mut extras.timers).cancel_all(&self.runtime.shared.timers);
        for task in extras.pipes.take_all() {
            // A future's `Drop` is user code: a panic there must not unwind through the engine.
            // SAFETY: our callers hold the schedule (or run at shutdown): we may touch the actor's
            // state.
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| unsafe { task.cancel() })) {
                tracing::warn!(actor = %self.id(), message = %panic_message(panic), "dropping a piped future panicked");
            }
        }
    }
}
