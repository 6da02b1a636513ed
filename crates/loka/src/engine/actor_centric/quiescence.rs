//! Waiting until the system is quiescent: no actor runnable, no message in flight (the argument
//! is `Sleepers::wait_quiescent`'s).

use super::Engine;
use std::time::Duration;

impl Engine {
    /// Blocks until no actor is runnable and no message is in flight, or `timeout` passes.
    /// A pending one-shot timer is a message in flight (docs/timers.md). Returns whether the
    /// system became quiescent.
    pub(crate) fn wait_quiescent(&self, timeout: Option<Duration>) -> bool {
        self.sleepers.wait_quiescent(
            // Timers first (Acquire): a timer counted out has made its send visible; and none
            // armed while the work was looked at.
            || {
                self.shared
                    .timers
                    .no_pending_once(|| !self.has_visible_work())
            },
            timeout,
        )
    }
}
