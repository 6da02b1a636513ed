//! Shutting a system down (docs/shutdown.md).
//!
//! * **Prompt** ([`System::shutdown`], dropping the system): every worker finishes the
//!   activation it runs and stops; the actors left are terminated where the shutdown runs (the
//!   `stopped` hooks of those that had started run there; one whose first activation never ran
//!   gets no hook), and their queued messages become dead letters.
//! * **Graceful** ([`System::shutdown_timeout`]): the actors are stopped children first, as an
//!   OTP supervision tree stops, by a stop signal queued behind their messages — so each handles
//!   what it was sent, then runs its `stopped` hook on its own worker; at the deadline whatever
//!   is left is stopped promptly.
//! * **From inside a handler**, or from any thread that runs the system's activations (a worker,
//!   the simulation's driver, a `thread` actor's thread): that thread cannot wait for the
//!   workers, being one or being held by one, so the shutdown is begun there and completed by a
//!   thread of its own, which joins the workers once the handler has returned.

use super::System;
use crate::engine::dispatch::Engine;
use crate::runtime::lifecycle::{Lifecycle, DRAINING, RUNNING, STOPPING, TERMINATED};
use crate::runtime::{ActorId, Shared};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a graceful shutdown waits for a wave of stopping actors before it looks at the tree
/// again (a parent whose children have all stopped is told to stop at the latest then).
const WAVE_LOOK: Duration = Duration::from_millis(10);

/// What a graceful shutdown ([`System::shutdown_timeout`]) did, and what did not finish in time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShutdownReport {
    /// Actors that stopped during the graceful part: each handled the messages queued before its
    /// stop signal, then ran its `stopped` hook on the thread that runs it.
    pub stopped: u64,
    /// Actors still alive at the deadline. They are stopped promptly afterwards: their `stopped`
    /// hooks run on the thread that completes the shutdown, their queued messages become dead
    /// letters.
    pub not_stopped: Vec<UnstoppedActor>,
    /// Dead letters counted from the call until it returned (each is also in
    /// [`System::dead_letters`] while it is among the most recent).
    pub dead_letters: u64,
    /// Whether the shutdown was complete when the call returned: every worker and dedicated
    /// thread joined, every actor terminated. `false` when a handler still ran at the deadline
    /// (it blocks, or its activation is long): the shutdown then completes in the background once
    /// it returns, and [`System::shutdown`] or dropping the system waits for that.
    pub terminated: bool,
    /// How long the call took.
    pub elapsed: Duration,
}

impl ShutdownReport {
    /// Whether every actor stopped gracefully and the shutdown completed in time.
    pub fn is_clean(&self) -> bool {
        self.not_stopped.is_empty() && self.terminated
    }
}

/// An actor that had not stopped by a graceful shutdown's deadline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnstoppedActor {
    /// Its id.
    pub actor: ActorId,
    /// Its name, if it was spawned with one.
    pub name: Option<String>,
    /// Its Rust type name.
    pub actor_type: &'static str,
    /// Whether it had been told to stop. `true`: its stop signal was queued but not handled in
    /// time — a handler still ran (blocked, or slow) or its mailbox was still draining. `false`:
    /// it was waiting for its children to stop first.
    pub signalled: bool,
}

impl System {
    /// Shuts the system down promptly. Handlers already running finish (each worker finishes the
    /// activation it runs: at most [`throughput`](crate::Config::throughput) messages of one
    /// actor); everything still queued becomes dead letters, counted in
    /// [`stats`](Self::stats)`().dead_letters` and recorded in
    /// [`dead_letters`](Self::dead_letters). Every live actor is then stopped, children first:
    /// if its [`Actor::started`](crate::Actor::started) hook has run, its
    /// [`Actor::stopped`](crate::Actor::stopped) hook runs on the calling thread; an actor whose
    /// first activation never ran gets neither hook (its state is dropped), as OTP calls no
    /// `terminate` for a process whose `init` never ran. Pending timers never fire. For a graceful shutdown that lets actors handle what they were sent, see
    /// [`shutdown_timeout`](Self::shutdown_timeout).
    ///
    /// Idempotent: a later call (or one from another thread) returns once the shutdown is
    /// complete. After it, spawns return stopped references
    /// ([`try_spawn`](Self::try_spawn): [`SpawnError::ShutDown`](crate::SpawnError::ShutDown)).
    ///
    /// May be called from inside a handler (directly, or by dropping the last `Arc<System>`
    /// there): it then begins the shutdown and returns at once; the workers stop after the
    /// current activations, the calling handler's included, and a thread of the shutdown's own
    /// completes it (the `stopped` hooks run there). [`run_until_idle`](Self::run_until_idle) on
    /// another thread returns once it is complete.
    pub fn shutdown(&self) {
        let lifecycle = &self.shared.lifecycle;
        let began = lifecycle.advance(RUNNING, STOPPING) || lifecycle.advance(DRAINING, STOPPING);
        if began {
            if self.on_own_thread() {
                finish_elsewhere(self.engine.clone(), Arc::clone(&self.shared));
            } else {
                finish(&self.engine, &self.shared);
            }
        } else if !self.on_own_thread() {
            lifecycle.wait_terminated(None);
        }
        self.stop_observer();
    }

    /// Shuts the system down gracefully, giving it `timeout`, as an OTP application stops: actors
    /// are stopped top-down — children before their parents — each by a stop signal queued
    /// behind the messages it already has, so it handles those (drains its mailbox) and then
    /// runs its [`Actor::stopped`](crate::Actor::stopped) hook on the worker that runs it, not on
    /// the calling thread. The actors with no live child are told first; a parent is told once
    /// its last child has stopped. Actors may still send, spawn and reply meanwhile; a message
    /// sent to an actor that has stopped fails as usual, one queued behind its stop signal is a
    /// dead letter.
    ///
    /// A `timeout` too long for the clock to count (`Duration::MAX`) sets no deadline: the actors
    /// get as long as they take. [`Duration::ZERO`] gives no grace: no stop signal is sent,
    /// every actor is left to the prompt part (below), and the call returns at once.
    ///
    /// At the deadline whatever is left is stopped as by [`shutdown`](Self::shutdown), in the
    /// background if a handler still runs then, and the call returns a [`ShutdownReport`]: how
    /// many actors stopped in time, which did not, the dead letters, and whether the shutdown
    /// was complete. A call while another shutdown is under way waits for that one (until the
    /// deadline) and reports only whether it completed; a prompt [`shutdown`](Self::shutdown)
    /// (or dropping the system) during a graceful one cuts it short.
    ///
    /// From inside a handler it cannot wait for the actors it stops: it begins the graceful
    /// shutdown on a thread of its own and returns at once, reporting nothing but
    /// `terminated: false`.
    pub fn shutdown_timeout(&self, timeout: Duration) -> ShutdownReport {
        self.graceful(timeout, || {})
    }

    /// [`shutdown_timeout`](Self::shutdown_timeout), calling `begun` once the shutdown has begun
    /// (by this call or another): [`System::is_shutting_down`] holds from then on.
    pub(super) fn graceful(&self, timeout: Duration, begun: impl FnOnce()) -> ShutdownReport {
        let start = Instant::now();
        // Past the end of the clock (`Duration::MAX`): no deadline, not an overflow panic.
        let deadline = start.checked_add(timeout);
        let lifecycle = &self.shared.lifecycle;
        let dead_before = self.shared.counters.system.dead_letters.get();
        let own = self.on_own_thread();
        let mut report = ShutdownReport {
            stopped: 0,
            not_stopped: Vec::new(),
            dead_letters: 0,
            terminated: false,
            elapsed: Duration::ZERO,
        };
        let began = lifecycle.advance(RUNNING, DRAINING);
        begun();
        if !began {
            report.terminated = if own {
                lifecycle.phase() == TERMINATED
            } else {
                lifecycle.wait_terminated(deadline)
            };
        } else if own {
            let (engine, shared) = (self.engine.clone(), Arc::clone(&self.shared));
            spawn_shutdown_thread(move || {
                drain(&engine, &shared, deadline);
                if shared.lifecycle.advance(DRAINING, STOPPING) {
                    finish(&engine, &shared);
                }
            });
        } else {
            report.not_stopped = drain(&self.engine, &self.shared, deadline);
            report.stopped = lifecycle.terminations();
            report.terminated = if !lifecycle.advance(DRAINING, STOPPING) {
                // A prompt shutdown overtook this one: it completes it.
                lifecycle.wait_terminated(deadline)
            } else if report.not_stopped.is_empty() {
                // Nothing is left to run a handler: the rest is quick, done here.
                finish(&self.engine, &self.shared);
                true
            } else {
                // A handler may still run past the deadline: it must not hold this call.
                finish_elsewhere(self.engine.clone(), Arc::clone(&self.shared));
                lifecycle.wait_terminated(deadline)
            };
        }
        report.dead_letters = self.shared.counters.system.dead_letters.get() - dead_before;
        report.elapsed = start.elapsed();
        report
    }

    /// Whether a shutdown (prompt or graceful) has begun; it may be complete.
    pub fn is_shutting_down(&self) -> bool {
        self.shared.lifecycle.is_shutting_down()
    }

    /// Whether the system has shut down completely (every worker joined, every actor
    /// terminated).
    pub fn is_shut_down(&self) -> bool {
        self.shared.lifecycle.phase() == TERMINATED
    }

    /// Whether the calling thread runs this system's activations (see the module
    /// documentation).
    pub(super) fn on_own_thread(&self) -> bool {
        Lifecycle::is_own_thread(Arc::as_ptr(&self.shared))
    }

    /// A shutdown has begun: waits for it to complete, or `deadline`; returns whether it did.
    /// One of the system's own threads does not wait (the shutdown waits for it).
    pub(super) fn wait_shut_down(&self, deadline: Option<Instant>) -> bool {
        if self.on_own_thread() {
            return true;
        }
        self.shared.lifecycle.wait_terminated(deadline)
    }
}

/// The graceful part: stop signals to the actors with no live child, wave after wave, until
/// none is left, the deadline (if any) passes, or a prompt shutdown takes over. Returns the
/// actors left.
fn drain(engine: &Engine, shared: &Shared, deadline: Option<Instant>) -> Vec<UnstoppedActor> {
    let lifecycle = &shared.lifecycle;
    let registry = &shared.registry;
    let mut signalled = rustc_hash::FxHashSet::default();
    loop {
        let seen = lifecycle.terminations();
        let tree = registry.tree();
        let late = deadline.is_some_and(|d| Instant::now() >= d);
        if tree.is_empty() || lifecycle.phase() != DRAINING || late {
            return tree
                .into_iter()
                .filter_map(|(id, _)| {
                    let (name, actor_type) = control(shared, id)?.describe();
                    Some(UnstoppedActor {
                        actor: id,
                        name,
                        actor_type,
                        signalled: signalled.contains(&id),
                    })
                })
                .collect();
        }
        let parents: rustc_hash::FxHashSet<ActorId> = tree.iter().filter_map(|e| e.1).collect();
        let mut wave = 0;
        for &(id, _) in &tree {
            if parents.contains(&id) {
                continue; // A child of it is alive: it is told once that child has stopped.
            }
            if signalled.insert(id) {
                if let Some(actor) = control(shared, id) {
                    actor.stop_signal();
                }
            }
            wave += 1;
        }
        // The simulation runs only while someone waits: the stop signals are input to it.
        engine.nudge();
        let look = Instant::now() + WAVE_LOOK;
        lifecycle.wait_terminations(seen + wave, deadline.map_or(look, |d| d.min(look)));
    }
}

/// A strong reference to live actor `id`, if it is still registered.
fn control(shared: &Shared, id: ActorId) -> Option<Arc<dyn crate::runtime::task::Control>> {
    // SAFETY: `with_live` calls us under the registry's lock while the actor is registered, and
    // an actor unregisters before its cell can be freed: the cell is alive.
    shared
        .registry
        .with_live(id, |task| unsafe { task.control() })
}

/// The prompt part of every shutdown: stop the workers, terminate every actor left here, drop
/// what is still queued. Runs on a thread that is none of the system's own.
fn finish(engine: &Engine, shared: &Shared) {
    // Dedicated threads finish their activation and exit; none starts afterwards. Told first, so
    // that they stop as soon as the workers do.
    shared.dedicated.announce_stop();
    engine.stop_workers();
    shared.dedicated.stop();
    // SAFETY: every worker and dedicated thread has been joined, so no activation runs or will
    // run.
    unsafe { shared.terminate_all() };
    // Timers still pending (armed from outside any actor, or by actors of another system): none
    // fires any more; their actions and the references they hold go now.
    shared.timers.clear();
    // Every actor has stopped and freed its name; a name registered in a race with the shutdown
    // would otherwise keep its actor (and the system) alive.
    shared.directory.clear();
    // Letters still queued (message-centric): dead letters, and the stopped actors' release
    // letters behind them.
    engine.discard_queued();
    shared.lifecycle.set_terminated();
}

/// [`finish`] on a thread of its own: the caller is one of the system's threads (it would join
/// itself), or must not wait for a handler that may run past its deadline.
fn finish_elsewhere(engine: Engine, shared: Arc<Shared>) {
    spawn_shutdown_thread(move || finish(&engine, &shared));
}

fn spawn_shutdown_thread(work: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .name("loka-shutdown".to_owned())
        .spawn(work)
        .expect("spawning the thread that completes a shutdown");
}
