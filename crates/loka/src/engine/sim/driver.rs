//! The event loop: the virtual worker with the earliest clock takes its next step — an
//! activation of local work, or one steal attempt (a whole plan pass under `hierarchical`), or
//! parking when there is nothing to steal anywhere.

use super::cost::Distance;
use super::routing::key;
use super::worker::Picked;
use super::{Engine, State};
use crate::engine::choices::{self, Routing, StealFrom, Victims};
use crate::engine::placement;
use crate::policy::Route;
use crate::runtime::{Exec, RunOutcome, TaskRef};
use crate::telemetry::MAX_LEVELS;
use parking_lot::MutexGuard;
use std::time::Instant;

impl Engine {
    /// The driver thread's loop, until shutdown.
    pub(super) fn drive(&self, execs: &[Exec]) {
        let mut st = self.state.lock();
        loop {
            if st.shutdown {
                return;
            }
            if st.run_requested && !st.external.is_empty() {
                // Someone waits while the simulation is busy: a plain thread's input that came
                // meanwhile is taken now, not at the next quiescence, which a simulation kept
                // busy by a sender retrying on a full bounded mailbox would never reach (its
                // receiver's wake-up is in that input). Setups folded at the first wait are
                // unchanged, so reproducible runs stay reproducible.
                self.fold_external(&mut st);
            }
            if let Some(w) = self.pick(&mut st) {
                st.idle = false;
                // The earliest clock of the workers at work: the simulation's present.
                let present = st.workers[w].clock;
                // A timer due before this worker's next step fires first, at its own time.
                match self.timer_due() {
                    Some(due) if due <= st.workers[w].clock => self.fire_timers(&mut st, w, due),
                    _ => self.step(&mut st, w, execs),
                }
                if st.adaptive.is_some() {
                    self.adapt_at(&mut st, present);
                }
                continue;
            }
            if !st.external.is_empty() {
                let quiet_for = st.last_external.elapsed();
                if st.run_requested || self.quiet.is_some_and(|q| quiet_for >= q) {
                    self.fold_external(&mut st);
                    continue;
                }
                st.idle = true;
                match self.quiet {
                    Some(q) => {
                        let until = st.last_external + q;
                        self.work.wait_until(&mut st, until);
                    }
                    None => self.work.wait(&mut st),
                }
                continue;
            }
            if let Some(due) = self.timer_due() {
                // Nothing runnable, a timer pending. The earliest-clock worker fires it.
                let mut earliest = Earliest::default();
                for w in 0..st.workers.len() {
                    earliest.offer(w, st.workers[w].clock, &mut st.ties);
                }
                let w = earliest.best.expect("a system has a worker");
                if self.shared.timers.pending_once() > 0 {
                    // A one-shot timer is a message in flight: virtual time jumps to it.
                    st.idle = false;
                    self.fire_timers(&mut st, w, due);
                    continue;
                }
                // Only periodic timers: the system is quiescent, and the next one fires after
                // its delay in real time, as it would on real workers (docs/timers.md).
                self.go_quiet(&mut st);
                let wait = std::time::Duration::from_nanos(due.saturating_sub(st.frontier()));
                let timed_out = self.work.wait_for(&mut st, wait).timed_out();
                if timed_out && !st.shutdown && st.external.is_empty() {
                    st.idle = false;
                    self.fire_timers(&mut st, w, due);
                }
                continue;
            }
            self.go_quiet(&mut st);
            self.work.wait(&mut st);
        }
    }

    /// The simulation is quiescent: says so to whoever waits for it (`wait_quiescent`), and
    /// forgets their request to fold input in (there is none left to fold).
    fn go_quiet(&self, st: &mut State) {
        st.idle = true;
        st.run_requested = false;
        self.quiet_cv.notify_all();
    }

    /// The virtual time (ns) at which the next timer may be due, if any is armed.
    fn timer_due(&self) -> Option<u64> {
        let tick = crate::runtime::clock::VIRTUAL_TICK_NS;
        self.shared
            .timers
            .next_deadline(0)
            .map(|t| t.saturating_mul(tick))
    }

    /// Fires the timers due at virtual time `at` (ns), as worker `w`: what they wake is routed
    /// from `w` at that time (`w` is awake then: its next slot may get what the timer woke).
    fn fire_timers(&self, st: &mut MutexGuard<'_, State>, w: usize, at: u64) {
        st.stats.events += 1;
        if st.workers[w].parked {
            // A parked worker wakes at its deadline (paying the wake-up), as a real one does.
            self.unpark(st, w, at, None);
        }
        st.running = Some((w, at));
        st.waker = placement::NO_WAKER;
        st.waker_hub = false;
        let tick = crate::runtime::clock::VIRTUAL_TICK_NS;
        MutexGuard::unlocked(st, || self.shared.timers.fire_due(0, at / tick));
        st.running = None;
    }

    /// The unparked worker with the earliest clock (ties: a draw from the seed). Workers with no
    /// local work and nothing to steal anywhere park first. `None`: all are parked.
    fn pick(&self, st: &mut State) -> Option<usize> {
        let stealable = st.workers.iter().any(|w| w.stealable() > 0)
            || st.place_queues.iter().any(|q| !q.is_empty())
            || (matches!(self.routing(), Routing::Hierarchical { .. })
                && st
                    .workers
                    .iter()
                    .any(|w| w.foreign.iter().any(|q| !q.is_empty())));
        let mut earliest = Earliest::default();
        for i in 0..st.workers.len() {
            let w = &st.workers[i];
            if w.parked {
                continue;
            }
            if !stealable && !w.has_local_work() {
                let worker = &mut st.workers[i];
                worker.parked = true;
                // A searcher that found nothing goes back to its polling window.
                if !std::mem::take(&mut worker.resumed_poll) {
                    worker.polling_until = worker.clock + self.polling_ns;
                    self.shared.counters.worker(i).parks.bump(1);
                }
                continue;
            }
            earliest.offer(i, st.workers[i].clock, &mut st.ties);
        }
        earliest.best
    }

    /// One step of worker `w`.
    fn step(&self, st: &mut MutexGuard<'_, State>, w: usize, execs: &[Exec]) {
        // Urgent wake-ups, the periodic look, pinned hubs, as the real worker takes them
        // (docs/decisions/0103-hubs-go-home-at-requeue.md).
        if let Some((task, _)) = st.workers[w].pop_first() {
            return self.activate(st, w, task, execs);
        }
        if let Routing::Hierarchical { .. } = self.routing() {
            // Alg. 4.2: after the pinned hubs, a migration path, before any other local work.
            if let Some(m) = st.workers[w].migration {
                st.stats.events += 1;
                let pulled = self.pull_migration(st, w);
                // Priced as a steal from the worker it came from (a global path that found
                // nothing: from the source node's first worker).
                let layout = &self.shared.machine.layout;
                let victim = match pulled {
                    Some((_, v)) => v,
                    None if m.global => layout.workers_of_node(m.from)[0],
                    None => m.from,
                };
                self.charge_steal(st, w, victim);
                if let Some((task, _)) = pulled {
                    return self.activate(st, w, task, execs);
                }
            }
        }
        let picked = match st.workers[w].helped_next() {
            Some(peer) => {
                let (me, peer) = two_mut(&mut st.workers, w, peer);
                me.pop_local(Some(&mut peer.inbox))
            }
            None => st.workers[w].pop_local(None),
        };
        if let Some((task, picked)) = picked {
            let counters = self.shared.counters.worker(w);
            match picked {
                Picked::NextSlot => counters.lifo_runs.bump(1),
                Picked::PeerInbox => counters.inbox_helps.bump(1),
                Picked::Queue => {}
            }
            return self.activate(st, w, task, execs);
        }
        if let Routing::Places(mode) = self.routing() {
            if mode.shared_queues() {
                let mine = self.shared.machine.layout.place_of(w);
                if let Some(task) = st.place_queues[mine].pop_front() {
                    return self.activate(st, w, task, execs);
                }
            }
        }
        st.workers[w].out_of_work = true;
        if let Some(task) = self.steal_once(st, w) {
            let now = st.workers[w].clock;
            self.end_search(st, now, w);
            self.activate(st, w, task, execs);
        }
    }

    /// One steal attempt of worker `w` (a whole pass over the plan under `hierarchical`), in
    /// the actor-centric engine's order ([`choices::steal_once`]), each attempt priced by the
    /// distance to its victim.
    fn steal_once(&self, st: &mut State, w: usize) -> Option<TaskRef> {
        st.stats.events += 1;
        let counters = self.shared.counters.worker(w);
        let my_node = self.shared.machine.layout.node_of(w);
        let mut victims = std::mem::replace(&mut st.workers[w].victims, Victims::Plan(Vec::new()));
        let mut rng = std::mem::replace(&mut st.workers[w].rng, fastrand::Rng::with_seed(0));
        let stolen = choices::steal_once(
            &mut victims,
            &mut rng,
            my_node,
            counters,
            &mut VirtualThief {
                engine: self,
                st,
                w,
                waiting: None,
            },
        );
        st.workers[w].victims = victims;
        st.workers[w].rng = rng;
        let stolen = stolen?;
        let level = (st.workers[w].level_of[stolen.victim] as usize).min(MAX_LEVELS - 1);
        counters.steals.bump(1);
        counters.steals_by_level[level].bump(1);
        Some(stolen.task)
    }

    fn charge_steal(&self, st: &mut State, w: usize, victim: usize) {
        let c = &self.cost;
        let ns = c.steal_fixed + c.steal_lines * c.line(self.distances.get(w, victim));
        st.workers[w].clock += ns.max(1.0) as u64;
    }

    /// Runs one activation of `task` on worker `w` and advances `w`'s clock by its cost.
    fn activate(&self, st: &mut MutexGuard<'_, State>, w: usize, task: TaskRef, execs: &[Exec]) {
        st.workers[w].resumed_poll = false;
        let counters = self.shared.counters.worker(w);
        counters.activations.bump(1);
        if let Routing::Hierarchical { .. } = self.routing() {
            // Alg. 4.2 lines 16–18: enough work done since the last round → one now.
            self.maybe_balance(st, w);
        }
        let place = placement::of(&task);
        let kept = self.routing().keeps_spawn_home();
        place.account_run(w, kept, &self.shared.machine.layout, counters);
        let queued_at = place
            .enqueued_at
            .swap(0, std::sync::atomic::Ordering::Relaxed);
        let runnable_at = queued_at.saturating_sub(1);
        let start = st.workers[w].clock.max(runnable_at);
        if queued_at != 0 {
            counters.queue_wait_samples.bump(1);
            counters.record_queue_wait(start - runnable_at);
        }
        let actor = key(task);
        let waker = st.woken_by.remove(&actor);
        let c = &self.cost;
        let fixed = c.activation;
        let message_distance = waker.map_or(Distance::SamePu, |from| self.distances.get(w, from));
        // The receiver's share; the sender's (`send`) is charged below.
        // The lines each message brings: its slot's (a message type larger than a line more).
        let message_lines = c.slot_lines(task.header().slot_bytes());
        let per_message = (c.message - c.send).max(0.0) + message_lines * c.line(message_distance);
        // The actor's state, priced by where its bytes lie (`memory.rs`).
        let footprint = |declared: u64| {
            (c.state_lines * super::memory::LINE as f64) as u64
                + task.header().state_bytes() as u64
                + declared
        };
        let source = st.memory.locate(w, actor);
        let bytes = footprint(st.memory.declared(actor));
        // Priced with the other workers' transfers in progress on the same controller and link.
        let state = match st.memory.path(c, &self.distances, w, source) {
            None => 0.0,
            Some(path) => {
                let fetch = st
                    .contention
                    .fetch(c, &path, super::memory::lines(bytes), start);
                st.stats.memory_queue_ns += fetch.queued as u64;
                fetch.ns
            }
        };
        let inner = &mut **st;
        inner.memory.count(&mut inner.stats, w, source, state);
        // What this activation sends becomes visible once its first message is handled (the
        // actor's state and that message fetched): a chain of hand-offs pays every hop's
        // transfers. Later messages of a batch send at that time too (an approximation).
        let sends_at = start + (fixed + state + per_message) as u64;
        st.running = Some((w, sends_at));
        let sender = placement::waker_id(&task);
        st.ran_on.insert(sender, w);
        // A gulp's time limit reads this (`activation_clock_ns`): the time reached after each
        // envelope and each nanosecond of declared compute, as the activation's cost adds them
        // up below.
        st.activation_clock = (
            start + (fixed + state) as u64,
            per_message + c.send,
            c.compute_scale,
        );
        st.waking = 0.0;
        st.waker = placement::waker_id(&task);
        st.waker_hub = placement::of(&task).is_hub();
        // Handler time per actor (`handler_sample_us`): the type read before the activation,
        // after which a stopped actor's cell may be freed.
        // SAFETY: the driver holds the task's schedule, so its cell is alive.
        let handler_type =
            (self.shared.handler_time.as_ref()).map(|_| unsafe { task.info() }.actor_type);
        let messages_before = counters.messages.get();
        let spawned_before = counters.spawned.get();
        st.watch.before(actor);
        let measured = MutexGuard::unlocked(st, || {
            let t0 = self.measured.then(Instant::now);
            // SAFETY: the task came out of a virtual worker's queue of this system, so the driver
            // holds its schedule (each actor is queued at most once, as in the real engine).
            let outcome = super::running_on(&execs[w], || unsafe { task.run(&execs[w]) });
            (outcome, t0.map(|t| t.elapsed().as_nanos() as f64))
        });
        let (outcome, compute) = measured;
        st.running = None;
        // Hammered mailboxes this activation sent to (`mailbox_tail.rs`).
        let hot = st.watch.after();
        let (charged, declared) = execs[w].take_declared();
        if let Some(declared) = declared {
            st.memory.set_declared(actor, declared);
        }
        let messages = (counters.messages.get() - messages_before) as f64;
        if messages > self.shared.config.throughput as f64 {
            // It gulped a backlog (`runtime/budget.rs`): its senders are worth watching.
            st.tails.backlogged(actor);
        }
        let spawned = (counters.spawned.get() - spawned_before) as f64;
        // The senders' share of the messages handled. The runtime counts no sends (a counter on
        // every engine's hottest path), so, as for the line a batch brings, the worker whose send
        // last woke the actor is taken as the sender of all of them: on this worker the share is
        // part of this activation; on another, that worker was busy sending them, and its clock
        // takes the share plus the slot's line, fetched from this worker's cache (the receiver
        // read it last). A plain thread's sends (no sender worker) are charged here.
        let mut sending = messages * c.send;
        let mut receiving = messages * per_message;
        let line = |a: usize, b: usize| c.line(self.distances.get(a, b));
        let slot = |a: usize, b: usize| message_lines * line(a, b);
        let inner = &mut **st;
        let ran_on = &inner.ran_on;
        let now_on = |sender: u32, from: usize| ran_on.get(&sender).copied().unwrap_or(from);
        if let Some(shares) = (inner.tails).batch(c, actor, w, start, messages, slot, now_on) {
            // Several actors wrote this mailbox lately: each pays its share of the sends on the
            // clock of the worker it runs on now, and the slots came from all their caches, not
            // only the waker's.
            receiving = messages * ((c.message - c.send).max(0.0) + shares.slot_ns);
            sending = 0.0;
            for (s, ns) in shares.writers {
                if s == w {
                    sending += ns;
                } else {
                    inner.workers[s].clock += ns as u64;
                    inner.stats.busy_ns += ns as u64;
                }
            }
        } else if let Some(&(woke_from, sender)) = inner.sender_of.get(&actor) {
            // The sender's worker now: an actor that moved since its send woke this one sends
            // from where it runs (docs/decisions/0096-sim-senders-charged-where-they-run.md).
            let s = now_on(sender, woke_from);
            if s != w {
                let line = message_lines * c.line(self.distances.get(s, w));
                let share = (messages * (c.send + line)) as u64;
                inner.workers[s].clock += share;
                inner.stats.busy_ns += share;
                sending = 0.0;
            }
        }
        let mut cost = fixed
            + receiving
            + sending
            + state
            + spawned * c.spawn
            // Measured host time includes the declared compute: only one of the two counts.
            + compute.unwrap_or(charged as f64) * c.compute_scale;
        // This activation's sends into hammered mailboxes take their claim word's line from the
        // other writers (`mailbox_tail.rs`).
        let mut tail = 0.0;
        for &(receiver, count) in &hot {
            tail += st.tails.sent(c, receiver, w, sends_at, count, line);
        }
        cost += tail;
        st.stats.mailbox_tail_ns += tail as u64;
        // The sleeping workers its sends woke (`routing.rs`, `unpark`).
        cost += std::mem::take(&mut st.waking);
        let end = start + cost.max(1.0) as u64;
        st.stats.busy_ns += end - start;
        if let (Some(times), Some(actor_type)) = (&self.shared.handler_time, handler_type) {
            times.record(w, actor, end - start, || actor_type);
        }
        for &(receiver, count) in &hot {
            st.tails.record(receiver, w, sender, (sends_at, end), count);
        }
        st.workers[w].clock = end;
        st.workers[w].busy_until = end;
        st.stats.events += 1;
        st.stats.trace_hash = mix(
            st.stats.trace_hash,
            // `actor`, read before the activation: a stopped actor's cell may be freed by now.
            [w as u64, actor, end, messages as u64],
        );
        if outcome == RunOutcome::Stopped {
            st.memory.forget(actor);
        } else {
            let bytes = footprint(st.memory.declared(actor));
            st.memory.touch(w, actor, bytes);
        }
        match outcome {
            RunOutcome::Idle => {
                st.busy_until.insert(actor, end);
            }
            RunOutcome::Drained => unreachable!("the simulation runs `run`, not `run_holding`"),
            // Not `key(task)`: the cell may be freed (the activation released its life
            // reference), so nothing may read it any more.
            RunOutcome::Stopped => {
                st.busy_until.remove(&actor);
                st.sender_of.remove(&actor);
                st.ran_on.remove(&(actor as u32));
                st.tails.forget(actor);
            }
            RunOutcome::Requeue | RunOutcome::Waiting => {
                st.watch.requeued(actor, task);
                self.requeue(st, w, task)
            }
        }
    }

    /// An actor that used its budget and is still scheduled (the real worker's `requeue`).
    fn requeue(&self, st: &mut State, w: usize, task: TaskRef) {
        self.shared.counters.worker(w).requeues.bump(1);
        if let routing @ Routing::Hierarchical { .. } = self.routing() {
            let layout = &self.shared.machine.layout;
            match choices::hierarchical_requeue(layout, placement::of(&task), w, routing) {
                Some(Route::Pinned(home)) if home == w => {
                    return st.workers[w].pinned.push_back(task)
                }
                Some(route @ Route::Pinned(_)) => {
                    let now = st.workers[w].clock;
                    return self.push(st, route, task, Some(w), now);
                }
                Some(Route::Foreign { home_node, .. }) => {
                    return st.workers[w].foreign[home_node].push_back(task)
                }
                _ => {}
            }
        }
        if let Routing::Places(mode) = self.routing() {
            if mode.shared_queues() {
                // As the real worker does under `places:a`: behind the others in the place's
                // shared queue, unless nothing else waits. Kept local, an actor that always uses
                // its budget (one retrying a send to a full bounded mailbox) starved that queue.
                let place = self.shared.machine.layout.place_of(w);
                if st.workers[w].next.is_none() && st.place_queues[place].is_empty() {
                    st.workers[w].next = Some(task);
                } else {
                    let now = st.workers[w].clock;
                    self.push(st, Route::Place(place), task, Some(w), now);
                }
                return;
            }
        }
        let me = &mut st.workers[w];
        if me.next.is_none() && !me.others_wait() {
            // Nothing else to run here: keep going with this actor.
            me.next = Some(task);
        } else {
            // Fairness, as the real worker does: behind everything else, the inbox included
            // (until 2026-11-24 the real engine, and this model, kept the next slot whenever the
            // deque was empty), in the yielded queue (docs/decisions/0035-yielded-queue.md). It is stealable, so
            // a parked worker is told.
            me.yielded.push_back(task);
            let now = me.clock;
            self.wake_any(st, now, Some(w));
        }
    }
}

/// The worker with the earliest clock among those offered; among equal clocks, one drawn from
/// the seed at this tie (`State::ties`): simultaneous steps happen in an order the seed decides,
/// afresh at every tie, not always the same worker first.
#[derive(Default)]
struct Earliest {
    best: Option<usize>,
    clock: u64,
    /// How many offered workers share `clock`.
    tied: u32,
}

impl Earliest {
    fn offer(&mut self, w: usize, clock: u64, ties: &mut fastrand::Rng) {
        if self.best.is_none() || clock < self.clock {
            (self.best, self.clock, self.tied) = (Some(w), clock, 1);
        } else if clock == self.clock {
            // Reservoir sampling: each of the `tied` workers wins with probability 1 / `tied`.
            self.tied += 1;
            if ties.u32(..self.tied) == 0 {
                self.best = Some(w);
            }
        }
    }
}

/// Worker `a` and worker `b` (`a != b`) of `workers`, both mutable.
fn two_mut<T>(workers: &mut [T], a: usize, b: usize) -> (&mut T, &mut T) {
    assert_ne!(a, b, "a worker does not help itself");
    if a < b {
        let (left, right) = workers.split_at_mut(b);
        (&mut left[a], &mut right[0])
    } else {
        let (left, right) = workers.split_at_mut(a);
        (&mut right[0], &mut left[b])
    }
}

/// FNV-1a over the words of one event.
fn mix(hash: u64, words: [u64; 4]) -> u64 {
    let mut h = if hash == 0 {
        0xcbf2_9ce4_8422_2325
    } else {
        hash
    };
    for word in words {
        for byte in word.to_le_bytes() {
            h ^= u64::from(byte);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// Worker `w` of the simulation as the thief [`choices::steal_once`] drives: each attempt takes
/// from the victim's virtual queues and advances `w`'s clock by its price.
struct VirtualThief<'a> {
    engine: &'a Engine,
    st: &'a mut State,
    w: usize,
    /// Per home node, whether an actor of it waits in some foreign queue, read once a pass (the
    /// real engine's `ForeignWaiting` counts).
    waiting: Option<Vec<bool>>,
}

impl choices::Thief for VirtualThief<'_> {
    type Task = TaskRef;

    fn attempt(&mut self, from: StealFrom<'_>) -> Option<(TaskRef, usize)> {
        let st = &mut *self.st;
        let (task, victim) = match from {
            StealFrom::Worker(v) => (st.workers[v].steal(), v),
            StealFrom::Foreign { victim, node } => {
                (st.workers[victim].foreign[node].pop_front(), victim)
            }
            StealFrom::LongestOf(workers) => match workers
                .iter()
                .copied()
                .filter(|&v| st.workers[v].stealable_len() > 0)
                .max_by_key(|&v| st.workers[v].stealable_len())
            {
                Some(v) => (st.workers[v].steal(), v),
                None => (None, self.w),
            },
            StealFrom::Place(place) => {
                // Priced as a steal from the first worker of that place.
                let v = self.engine.shared.machine.layout.workers_of_place(place)[0];
                (st.place_queues[place].pop_front(), v)
            }
        };
        self.engine.charge_steal(st, self.w, victim);
        task.map(|t| (t, victim))
    }

    fn searching_with_one(&mut self, victim: usize) -> bool {
        // The victim's idle flag: one line of the victim's.
        let line = self
            .engine
            .cost
            .line(self.engine.distances.get(self.w, victim));
        self.st.workers[self.w].clock += line.max(1.0) as u64;
        let v = &self.st.workers[victim];
        // Read when the thief could first see what it would take: a thief whose clock is behind
        // the push waits for it (`activate`), and the victim's state then is what it reads.
        let pushed = v.steal_peek().map_or(0, |t| super::worker::runnable_at(&t));
        let at = self.st.workers[self.w].clock.max(pushed);
        v.searches_at(at) && v.stealable() <= 1
    }

    fn foreign_waiting(&mut self, node: usize) -> bool {
        if self.waiting.is_none() {
            let st = &mut *self.st;
            let nodes = self.engine.shared.machine.layout.node_count();
            let waiting = (0..nodes)
                .map(|n| st.workers.iter().any(|w| !w.foreign[n].is_empty()))
                .collect();
            // The counts are one word per node, side by side: each of their lines read as a
            // look at a queue of the farthest worker (whoever counted last may sit there).
            let lines = (nodes * std::mem::size_of::<usize>()).div_ceil(64);
            let layout = &self.engine.shared.machine.layout;
            let farthest = layout.dist(self.w).last().copied().unwrap_or(self.w);
            for _ in 0..lines {
                self.engine.charge_steal(st, self.w, farthest);
            }
            self.waiting = Some(waiting);
        }
        self.waiting.as_ref().is_some_and(|w| w[node])
    }

    fn has_place(&self, task: &TaskRef) -> bool {
        placement::of(task).home().is_some()
    }
}
