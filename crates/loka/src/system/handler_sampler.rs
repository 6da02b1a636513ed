//! The handler-time sampler (`handler_sample_us`; docs/observability.md, "Handler time"): a
//! thread that, about every interval, reads which actor each worker and dedicated thread runs
//! and credits it the time since the round before (`telemetry/handler_time.rs` says why this
//! estimates handler time). The workers do nothing for it: the word it reads is the one every activation already
//! writes for [`System::actors`](crate::System::actors).
//!
//! The wait between two rounds is drawn uniformly from half to one and a half intervals (mean:
//! one interval): a workload whose activations
//! recur at the sampler's own period would otherwise be seen always in the same phase, its
//! time over- or under-counted without bound.

use crate::actor::ActorId;
use crate::runtime::lifecycle::TERMINATED;
use crate::runtime::Shared;
use parking_lot::{Condvar, Mutex};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The running sampler, owned by the system: [`stop`](Self::stop) ends its thread.
pub(crate) struct Sampler {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Sampler {
    /// Starts sampling `shared` if its configuration asks for it and its engine runs on the wall
    /// clock (the simulation records exact virtual time itself). `Err`: the thread could not be
    /// spawned.
    pub(crate) fn start(shared: &Arc<Shared>) -> std::io::Result<Option<Sampler>> {
        let Some(times) = &shared.handler_time else {
            return Ok(None);
        };
        let interval_ns = times.interval_ns();
        if interval_ns == 0 {
            return Ok(None);
        }
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let (thread_stop, thread_shared) = (Arc::clone(&stop), Arc::clone(shared));
        let thread = std::thread::Builder::new()
            .name("loka-sampler".to_owned())
            .spawn(move || run(&thread_shared, interval_ns, &thread_stop))?;
        Ok(Some(Sampler {
            stop,
            thread: Mutex::new(Some(thread)),
        }))
    }

    /// Whether the sampling thread still runs (not yet stopped).
    #[cfg(test)]
    pub(crate) fn is_running(&self) -> bool {
        self.thread.lock().is_some()
    }

    /// Ends the sampling thread. Idempotent.
    pub(crate) fn stop(&self) {
        let Some(thread) = self.thread.lock().take() else {
            return;
        };
        *self.stop.0.lock() = true;
        self.stop.1.notify_all();
        let _ = thread.join();
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The sampling loop, until stopped or the system terminates.
fn run(shared: &Shared, interval_ns: u64, stop: &(Mutex<bool>, Condvar)) {
    let Some(times) = &shared.handler_time else {
        return;
    };
    let mut rng = fastrand::Rng::with_seed(shared.config.seed ^ 0x5a3b_1e5d);
    let mut running = Vec::with_capacity(shared.config.workers);
    let mut last = Instant::now();
    loop {
        // Uniform in [interval/2, 3·interval/2): mean one interval (module doc).
        let wait = interval_ns / 2 + rng.u64(0..interval_ns.max(1));
        {
            let mut stopped = stop.0.lock();
            if !*stopped {
                let _ = stop.1.wait_for(&mut stopped, Duration::from_nanos(wait));
            }
            if *stopped {
                return;
            }
        }
        if shared.lifecycle.phase() == TERMINATED {
            return;
        }
        shared.counters.running_by_thread(&mut running);
        let now = Instant::now();
        let elapsed = u64::try_from((now - last).as_nanos()).unwrap_or(u64::MAX);
        last = now;
        times.sample(elapsed, running.iter().copied(), |id| {
            shared.registry.with_live(ActorId::from_raw(id), |task| {
                // SAFETY: `with_live` calls us under the registry shard's lock while the actor
                // is registered, so its cell is alive for the read.
                unsafe { task.info() }.actor_type
            })
        });
    }
}
