//! The idle phase of a worker: steal (spinning, then yielding), then park.
//!
//! Whom to steal from is the policy's choice: `cls` a uniformly random other worker (CAF),
//! `lgs` weighted over nested victim groups (Wölke §4.2), `hierarchical` the fixed plan of
//! Francesquini's Alg. 4.4 (bring home, then nearest first; docs/references.md).

use super::queues::pop;
use super::stall::Rescue;
use super::worker::Worker;
use crate::engine::choices::{self, StealFrom, Victims};
use crate::policy::PolicyKind;
use crate::runtime::TaskRef;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

/// `spin_loop` hints between two steal rounds in the spin phase.
const SPIN_PAUSES: u32 = 32;
/// Other workers an idle worker looks at per look of the stall guard (the victims take turns):
/// a bound on the lines it reads per look on a big machine.
const LOOKS_PER_ROUND: usize = 4;
/// The shortest idle window that is not none (`adapt_idle_window`).
const MIN_IDLE_WINDOW: Duration = Duration::from_micros(1);
/// How long an `lgs:nosleep` worker keeps polling before it parks after all.
const NOSLEEP_POLL: Duration = Duration::from_millis(10);

impl Worker {
    /// Idle phase: steal (spinning, then yielding), then park. `None` after a wake-up or at
    /// shutdown; the caller looks at its local queues again. The worker counts as idle for the
    /// routing of other workers' wake-ups meanwhile (`Engine::is_idle`).
    pub(super) fn search(&self, victims: &mut Victims, rng: &mut fastrand::Rng) -> Option<TaskRef> {
        let idle = &self.engine().workers[self.index()].idle;
        idle.store(true, Relaxed);
        let found = self.search_or_park(victims, rng);
        idle.store(false, Relaxed);
        found
    }

    /// [`Self::search`]'s phases.
    fn search_or_park(&self, victims: &mut Victims, rng: &mut fastrand::Rng) -> Option<TaskRef> {
        if self.gathers && self.is_retired() {
            // `auto` gathered the work on other workers: no stealing (`gather.rs`).
            return self.retired_idle();
        }
        let engine = self.engine();
        let config = &engine.shared.config;
        let idle = config.idle;
        let nosleep = matches!(config.policy, PolicyKind::Lgs(v) if v.nosleep);
        let full = idle.spin_and_yield();
        // `lgs:nosleep` polls its whole window every time (the variant is about not sleeping).
        let window = if nosleep {
            full + NOSLEEP_POLL
        } else {
            self.idle_window.get()
        };
        let spin_until = idle.spin().min(window);
        let yield_until = window;
        if let Victims::Weighted { victims: w, .. } = victims {
            w.restart();
            self.counters().backoff_resets.bump(1);
        }
        engine.note_out_of_work(self.index());
        // A searcher from here until it finds work or parks: pushes of stealable work wake
        // nobody meanwhile (`engine/sleepers.rs`).
        engine.sleepers.begin_search();
        let start = Instant::now();
        // The stall guard: every quarter of the slot bound, a look at other workers' next slots.
        let look_every = engine.shared.config.stall.slot_bound() / 4;
        let mut next_look = Duration::ZERO;
        loop {
            if let Some(task) = self.steal_once(victims, rng) {
                return self.found_while_idle(task, full);
            }
            // Work may have arrived in our own queues meanwhile.
            if let Some(task) = self.pop_own_queues() {
                return self.found_while_idle(task, full);
            }
            if engine.is_shutdown() {
                engine.stop_searching();
                return None;
            }
            // A due timer makes work (or may): fire it, then look at the local queues again.
            if engine.shared.fire_timers(self.index()) {
                engine.stop_searching();
                return None;
            }
            let idle_for = start.elapsed();
            if self.guarded() && idle_for >= next_look {
                next_look = idle_for + look_every;
                if let Some(task) = self.rescue_look() {
                    return self.found_while_idle(task, full);
                }
            }
            if idle_for < spin_until {
                for _ in 0..SPIN_PAUSES {
                    std::hint::spin_loop();
                }
            } else if idle_for < yield_until {
                std::thread::yield_now();
            } else {
                // No longer a searcher *before* announcing sleep: the park's re-check then sees
                // any push whose pusher still counted this worker searching.
                let _ = engine.sleepers.end_search();
                engine.park(self.index());
                if !nosleep {
                    self.adapt_idle_window(false, start.elapsed() <= full, full);
                }
                return None;
            }
        }
    }

    /// A search found work before its window ran out: the window paid (`adapt_idle_window`).
    #[inline]
    fn found_while_idle(&self, task: TaskRef, full: Duration) -> Option<TaskRef> {
        self.engine().stop_searching();
        self.adapt_idle_window(true, true, full);
        Some(task)
    }

    /// Spinning before parking pays when work comes within the window, sparing a wake-up
    /// (~10–20 µs on a VM: a futex wake, the OS scheduling the worker on its CPU); it costs when
    /// work comes later, and more than the CPU time it burns: on the 2-vCPU VM a worker that
    /// spun and yielded its 100 µs before parking took 11–13 µs from a plain thread's send to
    /// its handler, one that parked at once 5 µs (`docs/results/latency.md`). So the window
    /// adapts, as Linux's `haltpoll` adapts its poll before halting a CPU: back to the full
    /// window when a search found work within it (`found`, it paid), doubled when work came
    /// within the full window after a shorter one ran out (`soon`: spinning longer would have
    /// caught it), halved otherwise, to nothing below 1 µs.
    pub(super) fn adapt_idle_window(&self, found: bool, soon: bool, full: Duration) {
        let window = self.idle_window.get();
        let next = if found {
            full
        } else if soon {
            (window * 2).max(MIN_IDLE_WINDOW).min(full)
        } else if window <= MIN_IDLE_WINDOW {
            Duration::ZERO
        } else {
            window / 2
        };
        self.idle_window.set(next);
    }

    /// The stall guard, from an idle worker: looks at up to [`LOOKS_PER_ROUND`] other workers (in
    /// turn); one that has stayed in the same stretch of user code for the slot bound with an
    /// actor in its next slot or hold loses them to this worker, which runs the next slot's actor
    /// now (`stall.rs`, docs/stalls.md). Reads one line per worker looked at, only while idle.
    fn rescue_look(&self) -> Option<TaskRef> {
        let engine = self.engine();
        let n = engine.workers.len();
        let bound = engine.shared.config.stall.slot_bound();
        let now = Instant::now();
        let mut looks = self.looks.borrow_mut();
        for _ in 0..LOOKS_PER_ROUND.min(n - 1) {
            let turn = self.look_turn.get();
            let victim = if turn == self.index() {
                (turn + 1) % n
            } else {
                turn
            };
            self.look_turn.set((victim + 1) % n);
            let watch = &engine.workers[victim].watch;
            let state = watch.state();
            let seen = &mut looks[victim];
            if !seen.stalled(state, now, bound) || !watch.has_hostages() {
                continue;
            }
            let hostages = match watch.rescue_if_waiting(state, false, seen.fed) {
                Some(Rescue::Taken(hostages)) => hostages,
                Some(Rescue::Fed(queued)) => {
                    seen.found_fed(queued, now);
                    self.counters().slot_rescues_declined.bump(1);
                    continue;
                }
                None => continue,
            };
            let answered = hostages.held.filter(|held| {
                // SAFETY: the rescue gave us the held actor's schedule (`stall.rs`).
                !unsafe { held.release() }
            });
            let mut rescued = [hostages.next, hostages.pending, answered]
                .into_iter()
                .flatten();
            let first = rescued.next();
            self.counters()
                .slot_rescues
                .bump(u64::from(first.is_some()));
            for other in rescued {
                self.counters().slot_rescues.bump(1);
                self.push_head(other);
            }
            if first.is_some() {
                return first;
            }
        }
        None
    }

    /// One steal attempt (a whole pass over the plan under `hierarchical`), in the order the
    /// policy's victim choice gives ([`choices::steal_once`]); under `places:a` this worker's own
    /// place's queue first.
    fn steal_once(&self, victims: &mut Victims, rng: &mut fastrand::Rng) -> Option<TaskRef> {
        if let Victims::PlaceQueues { .. } = victims {
            if let Some(task) = self.pop_own_place() {
                return Some(task);
            }
        }
        let my_node = self.engine().shared.machine.layout.node_of(self.index());
        let stolen = choices::steal_once(victims, rng, my_node, self.counters(), &mut Thief(self))?;
        if stolen.from_place {
            self.counters().steals.bump(1);
        } else {
            self.count_steal(stolen.level.unwrap_or_else(|| self.level_of(stolen.victim)));
        }
        Some(stolen.task)
    }

    fn count_steal(&self, level: usize) {
        let counters = self.counters();
        counters.steals.bump(1);
        counters.steals_by_level[level.min(crate::telemetry::MAX_LEVELS - 1)].bump(1);
    }
}

/// A worker as the thief [`choices::steal_once`] drives: each attempt takes from the victim's
/// queues.
struct Thief<'a>(&'a Worker);

impl choices::Thief for Thief<'_> {
    type Task = TaskRef;

    #[inline]
    fn attempt(&mut self, from: StealFrom<'_>) -> Option<(TaskRef, usize)> {
        let engine = self.0.engine();
        match from {
            StealFrom::Worker(victim) => engine.workers[victim].queues.steal().map(|t| (t, victim)),
            StealFrom::Foreign { victim, node } => {
                let queues = &engine.workers[victim].queues;
                queues
                    .pop_foreign_of(node, &engine.foreign_waiting)
                    .map(|t| (t, victim))
            }
            StealFrom::LongestOf(workers) => {
                let victim = engine.longest_of(workers)?;
                engine.workers[victim].queues.steal().map(|t| (t, victim))
            }
            StealFrom::Place(place) => {
                let task = pop(&engine.place_queues[place])?;
                Some((
                    task,
                    engine.shared.machine.layout.workers_of_place(place)[0],
                ))
            }
        }
    }

    #[inline]
    fn searching_with_one(&mut self, victim: usize) -> bool {
        let engine = self.0.engine();
        engine.is_idle(victim)
            && engine.sleepers.is_awake(victim)
            && engine.workers[victim].queues.stealable() <= 1
    }

    #[inline]
    fn foreign_waiting(&mut self, node: usize) -> bool {
        self.0.engine().foreign_waiting.any(node)
    }

    fn has_place(&self, task: &TaskRef) -> bool {
        crate::engine::placement::of(task).home().is_some()
    }
}
