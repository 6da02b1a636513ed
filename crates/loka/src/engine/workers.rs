//! The worker threads of a real engine: named, pinned, each with its own runtime handle, and
//! what happens when one panics outside any handler.

use crate::runtime::{Boundary, Exec, Runtime, Shared};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;

/// Starts the worker threads of a real engine: thread `i` is named `{name}-{i}`, pinned, and runs
/// `worker(exec, ready)` with its own runtime handle. The worker does its set-up (publishes its
/// thread handle, takes its queues), calls `ready()`, then runs its loop. Returns once every
/// worker has called `ready()`, so nobody can try to wake a worker that has not published its
/// handle; then the join handles and the plain threads' runtime handle.
///
/// Handler panics are caught per actor. A panic out of `worker` is a bug in loka itself: its
/// invariants no longer hold, and a dead worker would strand its work and hang the system, so
/// the process aborts with one line instead.
pub(crate) fn start_workers<F>(
    shared: &Arc<Shared>,
    boundary: Boundary,
    name: &str,
    worker: F,
) -> (Vec<JoinHandle<()>>, Arc<Runtime>)
where
    F: Fn(Exec, &dyn Fn()) + Send + Sync + 'static,
{
    let n = shared.config.workers;
    let worker = Arc::new(worker);
    let ready = Arc::new(Barrier::new(n + 1));
    let threads = (0..n)
        .map(|index| {
            let runtime = Arc::new(Runtime::new(boundary.clone(), Arc::clone(shared)));
            let (ready, worker, shared) = (Arc::clone(&ready), Arc::clone(&worker), Arc::clone(shared));
            std::thread::Builder::new()
                .name(format!("{name}-{index}"))
                .spawn(move || {
                    crate::runtime::lifecycle::mark_thread(Arc::as_ptr(&shared));
                    shared.machine.pin_worker(&shared.config, index);
                    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        worker(Exec::new(index, runtime), &|| {
                            ready.wait();
                        })
                    }));
                    if run.is_err() {
                        eprintln!("loka: worker {index} panicked outside any actor handler (a bug in loka); aborting");
                        std::process::abort();
                    }
                })
                .expect("spawning a worker thread")
        })
        .collect();
    ready.wait();
    (
        threads,
        Arc::new(Runtime::new(boundary, Arc::clone(shared))),
    )
}
