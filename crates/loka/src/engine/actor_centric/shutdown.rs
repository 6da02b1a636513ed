//! Stopping the workers. The actors are stopped afterwards by the runtime
//! ([`crate::runtime::Shared::terminate_all`]), once no worker can run one.

use super::Engine;
use std::sync::atomic::Ordering::SeqCst;

impl Engine {
    /// Stops the workers: each finishes its current activation and exits; returns once every
    /// worker thread has been joined. Idempotent: `false` if shutdown had already begun.
    pub(crate) fn stop_workers(&self) -> bool {
        if self.shutdown.swap(true, SeqCst) {
            return false;
        }
        // The monitor first: nothing it rescues or fires may overlap the workers' end.
        self.stop_monitor();
        // Claim every sleeper (so none stays counted as asleep), then wake every thread. The flag
        // is set first: a worker about to park sees it in its re-check or is claimed here.
        self.sleepers.notify_all();
        for w in self.workers.iter() {
            if let Some(thread) = w.thread.get() {
                thread.unpark();
            }
        }
        let threads = std::mem::take(&mut *self.threads.lock());
        for t in threads {
            let _ = t.join();
        }
        // Queued tasks are plain pointers: drop them without touching the actors.
        for w in self.workers.iter() {
            w.queues.clear();
        }
        true
    }
}
