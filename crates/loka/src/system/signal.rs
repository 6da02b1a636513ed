//! Running a service until the process is asked to stop (SIGINT, SIGTERM), then shutting it down
//! gracefully (docs/shutdown.md).
//!
//! Signals are caught with `signal-hook`: its handler only writes to a pipe, and the waiting
//! thread reads it, so nothing but async-signal-safe work runs inside the handler. Once the first
//! signal has arrived, a second one of either kind takes its default action — the process ends at
//! once — so an operator can still stop a shutdown that hangs, as with any well-behaved service.

use super::{ShutdownReport, System};
use signal_hook::consts::{SIGINT, SIGTERM};
// atomic outside sync.rs: `signal_hook::flag` takes a std `Arc<AtomicBool>`, set from a signal
// handler; no loom model runs signals.
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

/// How long [`System::run_until_signal`] gives the graceful shutdown (well under the 10 s a
/// container runtime usually waits between SIGTERM and SIGKILL).
pub const DEFAULT_SIGNAL_GRACE: Duration = Duration::from_secs(5);

/// The signal that asked the process to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StopSignal {
    /// SIGINT (Ctrl-C at a terminal).
    Interrupt,
    /// SIGTERM (`kill`, a service manager, a container runtime).
    Terminate,
}

impl StopSignal {
    fn from_raw(signal: i32) -> Option<StopSignal> {
        match signal {
            SIGINT => Some(StopSignal::Interrupt),
            SIGTERM => Some(StopSignal::Terminate),
            _ => None,
        }
    }
}

impl std::fmt::Display for StopSignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StopSignal::Interrupt => "SIGINT",
            StopSignal::Terminate => "SIGTERM",
        })
    }
}

/// The signal handlers could not be installed; nothing was changed and the system still runs.
#[derive(Debug, thiserror::Error)]
#[error("cannot listen for SIGINT and SIGTERM: {source}")]
pub struct SignalError {
    /// Why the operating system refused.
    #[from]
    source: std::io::Error,
}

/// The conditional-default actions one wait installed, removed when dropped.
struct Defaults(Vec<signal_hook::SigId>);

impl Drop for Defaults {
    fn drop(&mut self) {
        for id in self.0.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// The handlers one wait installed, removed when it ends (even by a panic).
struct Handlers {
    /// Removed when dropped (after `drop` has closed `signals`).
    _defaults: Defaults,
    signals: signal_hook::iterator::Signals,
}

impl Handlers {
    /// Catches SIGINT and SIGTERM; once `armed` is set, either takes its default action.
    ///
    /// The order matters: `signal-hook` runs the actions of one signal in the order they were
    /// registered, so the conditional defaults go *before* the iterator's pipe write (as
    /// `signal_hook::flag::register_conditional_shutdown`'s documentation asks). The other way
    /// round, the write of the first signal wakes the waiting thread, which may begin the shutdown
    /// and set `armed` before that same signal's handler has run the conditional default; that
    /// then sees `armed` and ends the process on the first signal (seen on a loaded machine, the
    /// handler's thread preempted by the one it woke).
    fn install(armed: &Arc<AtomicBool>) -> Result<Handlers, SignalError> {
        // Dropping `defaults` on an error removes those already installed.
        let mut defaults = Defaults(Vec::new());
        for signal in [SIGINT, SIGTERM] {
            let id = signal_hook::flag::register_conditional_default(signal, Arc::clone(armed))?;
            defaults.0.push(id);
        }
        let signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
        Ok(Handlers {
            _defaults: defaults,
            signals,
        })
    }
}

impl Drop for Handlers {
    fn drop(&mut self) {
        self.signals.handle().close();
    }
}

impl System {
    /// For services: blocks until the process gets SIGINT or SIGTERM, then shuts the system
    /// down gracefully ([`shutdown_timeout`](Self::shutdown_timeout) with
    /// [`DEFAULT_SIGNAL_GRACE`]) and returns which signal came. A second signal during the
    /// shutdown ends the process at once (the signal's default action).
    ///
    /// Call it from the main thread of a program, not from a handler (it blocks). After it
    /// returns, SIGINT and SIGTERM are caught by nobody: `signal-hook` cannot give the operating
    /// system's default back, so they are ignored until the process exits — return from `main`
    /// soon. Fails, changing nothing, if the handlers cannot be installed.
    pub fn run_until_signal(&self) -> Result<StopSignal, SignalError> {
        self.run_until_signal_timeout(DEFAULT_SIGNAL_GRACE)
            .map(|(signal, _)| signal)
    }

    /// [`run_until_signal`](Self::run_until_signal) with the graceful shutdown given `grace`;
    /// also returns its [`ShutdownReport`].
    pub fn run_until_signal_timeout(
        &self,
        grace: Duration,
    ) -> Result<(StopSignal, ShutdownReport), SignalError> {
        let armed = Arc::new(AtomicBool::new(false));
        let mut handlers = Handlers::install(&armed)?;
        let signal = handlers
            .signals
            .forever()
            .find_map(StopSignal::from_raw)
            .expect(
                "the signal iterator ends only when closed, and only `Handlers::drop` closes it",
            );
        tracing::info!(%signal, ?grace, "stop signal received: shutting down gracefully");
        // Once the shutdown has begun, a second SIGINT or SIGTERM ends the process.
        let report = self.graceful(grace, || armed.store(true, SeqCst));
        drop(handlers);
        Ok((signal, report))
    }
}
