//! Where a worker finds its next actor without stealing: its pinned hubs and migration paths
//! (`hierarchical`), urgent head pushes (LGS-DFS), the periodic look at the inbox and the
//! yielded actors, the next slot with its streak limit, the deque, a neighbour's inbox, foreign
//! actors and the place's queue. The order is the engine's fairness argument
//! (docs/decisions/0035-yielded-queue.md); the simulation's virtual worker keeps the same one
//! (`engine/sim/worker.rs`).

use super::Worker;
use crate::engine::actor_centric::queues::{pop, pop_rare, WorkerQueues};
use crate::engine::choices::{inbox_first, Routing, INBOX_CHECK_INTERVAL, NEXT_SLOT_STREAK_LIMIT};
use crate::runtime::TaskRef;

impl Worker {
    #[inline]
    pub(in crate::engine::actor_centric) fn own_queues(&self) -> &WorkerQueues {
        // SAFETY: `own` points into `self.engine.workers`, a boxed slice that is never resized
        // or replaced and lives as long as the engine, which `self.engine` keeps alive.
        unsafe { &*self.own }
    }

    /// Local work: urgent head pushes (LGS-DFS), the inbox and the yielded actors now and then,
    /// pinned hubs and migration pulls (hierarchical), the next slot, the deque's head, the
    /// inbox, the yielded actors, foreign actors.
    pub(super) fn next_local(&self) -> Option<TaskRef> {
        let queues = self.own_queues();
        if matches!(self.routing.get(), Routing::Lgs(v) if v.dfs) {
            if let Some(task) = pop_rare(&queues.urgent) {
                return Some(task);
            }
        }
        // The periodic look comes before the pinned hubs: hubs that always have mail
        // left would otherwise keep it from the inbox, the yielded actors, due timers and the
        // adaptive `auto`'s windows for good (docs/decisions/0103-hubs-go-home-at-requeue.md).
        let tick = self.tick.get().wrapping_add(1);
        self.tick.set(tick);
        if tick % INBOX_CHECK_INTERVAL == 0 {
            if let Some(task) = self.periodic_look(tick) {
                return Some(task);
            }
            if self.engine.is_shutdown() {
                return None;
            }
            // Behind busy hubs, an actor woken here (next slot, deque) gets its turn too.
            if self.serves_pinned.get() && !queues.pinned.is_empty() {
                if let Some(task) = self.watch().take_next().or_else(|| self.deque.pop()) {
                    return Some(task);
                }
            }
        }
        if self.serves_pinned.get() {
            if let Some(task) = pop_rare(&queues.pinned) {
                return Some(task);
            }
            // Alg. 4.2 lines 3–15: follow a migration path before anything else.
            if self.is_hierarchical() {
                if let Some(task) = self.engine.pull_migration(self) {
                    return Some(task);
                }
            }
        }
        if let Some(task) = self.watch().take_next() {
            let streak = self.next_streak.get();
            if streak < NEXT_SLOT_STREAK_LIMIT {
                self.next_streak.set(streak + 1);
                self.counters().lifo_runs.bump(1);
                return Some(task);
            }
            // Every `NEXT_SLOT_STREAK_LIMIT` activations of a chain the hold ends too, whatever
            // the chain's activations answer (one of actors that stop keeps it otherwise).
            if let Some(held) = self.release_held() {
                let _ = self.watch().replace_next(task);
                return Some(held);
            }
            if !self.has_local_work() {
                // Nothing else waits here: a new streak, so the next look comes after another
                // `NEXT_SLOT_STREAK_LIMIT` activations, not at every one of a long chain (a
                // ping-pong pair paid the two queue tests on every message). The bound on what
                // arrives meanwhile is the streak's, as for the chain's first activations.
                self.next_streak.set(1);
                self.counters().lifo_runs.bump(1);
                return Some(task);
            }
            // Queued actors wait behind a long chain: let them run; the chain continues behind
            // them, as an actor that used its budget does. No wake-up: an idle thief would only
            // tear the chain across cores.
            self.next_streak.set(0);
            queues.yielded.push(task);
        } else {
            self.next_streak.set(0);
            // The chain of next-slot activations broke: no partner will answer the held actor
            // from here before other work runs, so it goes idle now (or runs, if a message came).
            if let Some(task) = self.release_held() {
                return Some(task);
            }
        }
        self.deque
            .pop()
            .or_else(|| pop(&queues.inbox))
            .or_else(|| self.yielded_turn(queues))
            .or_else(|| match self.routing.get() {
                Routing::Hierarchical { .. } => queues.pop_foreign(&self.engine.foreign_waiting),
                Routing::Places(mode) if mode.shared_queues() => self.pop_own_place(),
                // Left there by `hierarchical` before an adaptive `auto` moved.
                _ if self.adaptive => queues.pop_foreign(&self.engine.foreign_waiting),
                _ => None,
            })
    }

    /// Every `INBOX_CHECK_INTERVAL` activations: due timers, then the inbox and the yielded
    /// actors, so that neither waits for the deque to run dry. The two take turns at going first:
    /// wake-ups from outside cannot starve actors that used their budget, nor the reverse. Out of
    /// line, as the timers (the activation loop keeps its shape).
    #[inline(never)]
    fn periodic_look(&self, tick: u32) -> Option<TaskRef> {
        // A probe of holding while it is off (see `hold_now`).
        if self.holds {
            self.hold_now.set(true);
        }
        if self.adaptive {
            self.engine.adapt_tick();
            self.follow_mechanism(None);
        }
        if self.gathers {
            self.gather_look();
        }
        // Due timers first (one relaxed load while none is armed here): what they wake is queued
        // before we look (docs/timers.md).
        self.engine.shared.fire_timers(self.index());
        let queues = self.own_queues();
        if inbox_first(tick) {
            pop(&queues.inbox).or_else(|| pop_rare(&queues.yielded))
        } else {
            pop_rare(&queues.yielded).or_else(|| pop(&queues.inbox))
        }
    }

    /// With the deque and the inbox empty: a yielded actor, unless a neighbour's inbox holds a
    /// wake-up ([`Self::peer_inbox`]), which goes first. One emptiness test when none waits.
    #[inline]
    fn yielded_turn(&self, queues: &WorkerQueues) -> Option<TaskRef> {
        if queues.yielded.is_empty() {
            return None;
        }
        self.peer_inbox().or_else(|| pop(&queues.yielded))
    }

    /// Before this worker re-runs an actor that used its budget: a wake-up waiting in the inbox
    /// of a worker near it, one neighbour per look, in turn. A worker whose own work is only busy
    /// actors never steals, so without this a message sent from outside to a worker that the OS
    /// has descheduled (a machine with more threads than cores) waited until that worker ran
    /// again: milliseconds, where a global injection queue (tokio) lets any worker take it
    /// (docs/results/latency.md). Out of line: only workers with yielded actors come here.
    #[inline(never)]
    fn peer_inbox(&self) -> Option<TaskRef> {
        if self.helped().is_empty() {
            return None;
        }
        let turn = self.help_turn.get();
        let peer = self.helped()[turn];
        self.help_turn.set((turn + 1) % self.helped().len());
        let task = pop_rare(&self.engine.workers[peer].queues.inbox)?;
        self.counters().inbox_helps.bump(1);
        Some(task)
    }

    /// An actor from this worker's own queues other than the deque (the inbox, the yielded
    /// actors, urgent wake-ups, pinned hubs, foreign actors): what an idle worker looks at
    /// between steals, and all a worker that `auto` retired looks at (`gather.rs`). Each test of
    /// an empty queue costs no fence (`pop_rare`): the search polls again, and a retired
    /// worker's park re-checks them.
    pub(in crate::engine::actor_centric) fn pop_own_queues(&self) -> Option<TaskRef> {
        let own = self.own_queues();
        pop(&own.inbox)
            .or_else(|| pop_rare(&own.yielded))
            .or_else(|| pop_rare(&own.urgent))
            .or_else(|| pop_rare(&own.pinned))
            .or_else(|| own.pop_foreign(&self.engine.foreign_waiting))
    }

    /// `places:a`: an actor from the shared queue of this worker's place.
    pub(in crate::engine::actor_centric) fn pop_own_place(&self) -> Option<TaskRef> {
        let layout = &self.engine.shared.machine.layout;
        pop(&self.engine.place_queues[layout.place_of(self.index())])
    }

    /// Whether an actor waits here that has not had its turn: the next slot, the deque, the
    /// inbox, urgent wake-ups, pinned hubs. The yielded actors and the foreign queue (actors
    /// that ran and wait away from home) have; a gulp goes on past them
    /// (docs/decisions/0094-a-gulp-yields-to-woken-actors.md). Out of line: called once per
    /// budget of a gulp, never on the worker's own loop.
    #[inline(never)]
    pub(in crate::engine::actor_centric) fn has_fresh_work(&self) -> bool {
        let queues = self.own_queues();
        !self.watch().next_is_empty()
            || !self.deque.is_empty()
            || !queues.inbox.is_empty()
            || !queues.urgent.is_empty()
            || !queues.pinned.is_empty()
    }

    /// Whether anything besides the next slot waits on this worker.
    pub(in crate::engine::actor_centric) fn has_local_work(&self) -> bool {
        let queues = self.own_queues();
        !self.deque.is_empty() || !queues.inbox.is_empty() || !queues.yielded.is_empty()
    }
}
