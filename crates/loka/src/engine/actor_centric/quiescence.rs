//! Waiting until the system is quiescent: no actor runnable, no message in flight.
//!
//! Every worker parks only after a last look found every queue empty, and every push wakes a
//! parked worker (decrementing the sleeper count) before the pusher can go idle itself; so "all
//! workers asleep and no queue holds work" means nothing is runnable and no send made by an actor
//! is half-done. The last worker to park signals the condition variable; a waiter also re-checks
//! every millisecond, which bounds the cost of a notify racing its check.

use super::Engine;
use std::time::{Duration, Instant};

impl Engine {
    /// Blocks until no actor is runnable and no message is in flight, or `timeout` passes.
    /// Returns whether the system became quiescent.
    pub(crate) fn wait_quiescent(&self, timeout: Option<Duration>) -> bool {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut guard = self.quiet_lock.lock();
        loop {
            if self.sleepers.all_asleep() && !self.has_visible_work() {
                return true;
            }
            let step = Instant::now() + Duration::from_millis(1);
            let until = deadline.map_or(step, |d| d.min(step));
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return false;
            }
            self.quiet.wait_until(&mut guard, until);
        }
    }
}
