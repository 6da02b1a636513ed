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
            // Timers first (Acquire): a timer counted out has made its send visible.
            || self.shared.timers.pending_once() == 0 && !self.has_visible_work(),
            timeout,
        )
    }
}
