//! What an actor keeps only once it uses a feature ([`Extras`], defined beside the cell with its
//! accessors), and what happens to it when the actor stops or a supervised instance is
//! replaced. The features: the timers it armed (`timers.rs`), the
//! futures it waits on (`pipes.rs`), its watchers, watches and links (`watch.rs`), its
//! supervision (`supervised/`). One pointer in
//! the cell, null for an actor that uses none: it pays that pointer (which fits the cell's padding),
//! one null test per message it handles (the receive timeout's mark) and one at stop.

use super::{panic_message, CellBase, Extras, Leftovers};
use std::panic::{catch_unwind, AssertUnwindSafe};

impl CellBase {
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
