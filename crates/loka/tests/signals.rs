//! `System::run_until_signal`: a service blocks until SIGINT or SIGTERM, then shuts down
//! gracefully. Its own test binary: the signal goes to the whole process, and the handlers it
//! installs stay installed (inert) once it returns, so no other test may share the process.

#![cfg(unix)]

use loka::{Actor, Context, StopSignal, System};
use signal_hook::consts::SIGTERM;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

/// Counts its messages; says when its `stopped` hook has run.
struct Service {
    handled: Arc<AtomicU64>,
    stopped: Arc<AtomicBool>,
}

impl Actor for Service {
    type Msg = u64;
    fn handle(&mut self, _ctx: &mut Context<Self>, _: u64) {
        self.handled.fetch_add(1, SeqCst);
    }
    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.stopped.store(true, SeqCst);
    }
}

#[test]
fn run_until_signal_returns_the_signal_after_a_graceful_shutdown() {
    // A handler of the test's own first, so that a SIGTERM raised before `run_until_signal`
    // listens cannot end the process (it is caught, and raised again until heard).
    let early = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(SIGTERM, Arc::clone(&early)).unwrap();
    let system = Arc::new(System::builder().workers(2).build().unwrap());
    let (handled, stopped) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicBool::new(false)),
    );
    let service = system.spawn(Service {
        handled: Arc::clone(&handled),
        stopped: Arc::clone(&stopped),
    });
    for i in 0..1_000 {
        service.send(i).unwrap();
    }
    let raiser = {
        let system = Arc::clone(&system);
        std::thread::spawn(move || {
            // Until the shutdown has begun: after it a second signal would end the process,
            // as it should for a service. A signal raised before `run_until_signal` listens is
            // caught by the handler above and raised again later; the wait between two is long
            // (a raise that lands after the shutdown began would kill the process, and on a
            // loaded machine hearing one can take far more than a few milliseconds: CI saw it).
            // At most 30 times (a minute): the main thread is blocked in `run_until_signal`, so
            // if that never hears the signal, this thread ends the process, failing the test
            // instead of hanging it.
            for _ in 0..30 {
                signal_hook::low_level::raise(SIGTERM).unwrap();
                for _ in 0..200 {
                    if system.is_shutting_down() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
            // Straight to stderr: `eprintln!` is captured by the test harness, whose output
            // would be lost with the process.
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                b"run_until_signal did not hear SIGTERM raised 30 times in a minute\n",
            );
            std::process::exit(1);
        })
    };
    let (signal, report) = system
        .run_until_signal_timeout(Duration::from_secs(60))
        .unwrap();
    raiser.join().unwrap();
    assert_eq!(signal, StopSignal::Terminate);
    assert!(report.is_clean(), "{report:?}");
    assert!(system.is_shut_down());
    assert!(stopped.load(SeqCst), "the service's `stopped` hook ran");
    assert_eq!(
        handled.load(SeqCst),
        1_000,
        "its backlog was drained, not dropped"
    );
    assert!(service.send(0).is_err());
}
