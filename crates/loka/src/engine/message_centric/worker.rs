//! The message-centric worker loop: passes over its own queues, gulps, queue stealing, parking.

use super::queue::{Buffer, Gulp, MessageQueue};
use super::running::Running;
use super::swap::{try_swap, Swap};
use super::Engine;
use crate::config::VictimSelection;
use crate::runtime::{Exec, Letter};
use crate::telemetry::WorkerCounters;
use crossbeam_utils::CachePadded;
use std::ptr;
use std::sync::atomic::Ordering::{Acquire, Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `spin_loop` hints between two idle cycles in the spin phase.
const SPIN_PAUSES: u32 = 32;
/// Empty passes over its own queues before a worker tries to steal (Cforall's rule).
const PASSES_BEFORE_STEAL: u32 = 2;
/// How long a candidate queue's letters must have waited, ungulped, before a thief takes the
/// queue: about the cost of moving it (a queue and its actors' state are a few dozen cache lines,
/// ~100 ns each to pull across cores here). An owner that gets to its queue sooner should keep it.
const STEAL_AGE_NS: u64 = 2_000;
/// Letters seen in a pass (over at least two queues) that make a worker wake a sleeping thief.
pub(super) const WAKE_BACKLOG: usize = 32;
/// Most idle cycles a thief skips between two steal attempts that found nothing.
const MAX_STEAL_BACKOFF: u32 = 32;
/// A parked worker's first watch period (`Engine::park`): how long a letter can wait behind a
/// holder stuck in a long handler before a sleeping worker looks (a wake-up costs ~20 µs, so
/// looking every 5 ms costs a sleeper well under 1% of its core while others work).
const WATCH_FIRST: Duration = Duration::from_millis(5);
/// The longest watch period: each look that finds nothing doubles it, up to this, so an idle
/// system's sleepers wake about once a second.
const WATCH_MAX: Duration = Duration::from_secs(1);

/// Every this-many passes a busy worker fires its due timers.
const TIMER_CHECK_INTERVAL: u32 = 61;

/// The worker whose range holds `slot`.
fn victim_of(engine: &Engine, slot: usize) -> usize {
    engine
        .ranges
        .iter()
        .position(|r| r.contains(&slot))
        .expect("every slot is in a range")
}

/// A worker's idle phase, kept across the passes that find nothing.
struct IdleState {
    empty_passes: u32,
    /// Idle turns to skip before the next steal attempt (doubling while attempts find nothing,
    /// up to `MAX_STEAL_BACKOFF`).
    backoff: u32,
    skip: u32,
    since: Option<Instant>,
    /// Woken by its watch period (`Engine::park`): one look at the others' queues, then back
    /// to sleep, without the spin phase.
    looking: bool,
    watch: Duration,
}

impl IdleState {
    fn new() -> Self {
        IdleState {
            empty_passes: 0,
            backoff: 0,
            skip: 0,
            since: None,
            looking: false,
            watch: WATCH_FIRST,
        }
    }
}

pub(super) struct Worker {
    exec: Exec,
    engine: Arc<Engine>,
    /// The current gulp, which handlers on this thread reach (`running.rs`). On the heap, a
    /// line of its own: on the stack its address moved with every change to `run`'s frame,
    /// and so did its 4 KiB aliasing with the gulp's letters; static send swung by 10% with no
    /// change in instructions (docs/decisions/0043-idle-worker-parks-and-watches.md).
    running: Box<CachePadded<Running>>,
    rng: fastrand::Rng,
    /// A candidate queue seen at an earlier steal attempt: its slot, the queue, its gulp count
    /// and when it was first seen (ns since the engine started).
    watched: Option<(usize, *const MessageQueue, u64, u64)>,
}

impl Worker {
    pub(super) fn new(exec: Exec, engine: Arc<Engine>) -> Self {
        let seed = engine.shared.config.seed ^ (exec.index() as u64).wrapping_mul(0x9e37_79b9);
        Worker {
            running: Box::new(CachePadded::new(Running::new(
                exec.index(),
                Buffer::new(engine.queue_kind),
            ))),
            rng: fastrand::Rng::with_seed(seed),
            watched: None,
            exec,
            engine,
        }
    }

    fn counters(&self) -> &WorkerCounters {
        self.exec.counters()
    }

    fn index(&self) -> usize {
        self.exec.index()
    }

    pub(super) fn run(mut self) {
        Running::install(Some(&**self.running));
        let engine = Arc::clone(&self.engine);
        let mut idle = IdleState::new();
        let mut passes = 0u32;
        while !engine.is_shutdown() {
            // Due timers, every few dozen passes and on every idle turn (one relaxed load while
            // none is armed here; docs/timers.md).
            passes = passes.wrapping_add(1);
            if (passes % TIMER_CHECK_INTERVAL == 0 || idle.empty_passes > 0)
                && engine.shared.fire_timers(self.index())
            {
                idle.since = None;
            }
            if self.pass() {
                idle = IdleState::new();
                continue;
            }
            self.idle_turn(&mut idle);
        }
        Running::install(None);
    }

    /// What follows a pass that found nothing: after two such passes a steal attempt, then the
    /// spin, yield and park phases. Out of line: a busy worker's loop stays the pass alone (with
    /// this inlined, the loop's code moved and static send lost 7–10% with the same instructions:
    /// docs/decisions/0043-idle-worker-parks-and-watches.md).
    #[inline(never)]
    fn idle_turn(&mut self, s: &mut IdleState) {
        // Copied out, not an `Arc` clone: every idle turn of every idle worker would otherwise
        // write the engine's one reference count.
        let idle = self.engine.shared.config.idle;
        let can_steal = self.engine.can_steal;
        s.empty_passes += 1;
        if s.empty_passes < PASSES_BEFORE_STEAL {
            return;
        }
        // Two empty passes: steal once, then go back to our own queues (which now include
        // the stolen one), win or lose.
        s.empty_passes = 0;
        if can_steal && (s.skip == 0 || s.looking) {
            if self.steal(s.looking) {
                s.backoff = 0;
                s.looking = false;
                s.watch = WATCH_FIRST;
                return;
            }
            if s.looking && self.watched.is_some() {
                // A candidate to take at the next look, if its letters still wait then.
                s.watch = WATCH_FIRST;
            }
            // Beyond Cforall: a thief that keeps finding nothing (or only a candidate to
            // watch, which must age anyway) looks less often. Each look reads the victim's
            // queue lines, which the victim writes on every send and gulp; polling them every
            // idle cycle made a single message hopping between two workers (threadring) pay
            // for it.
            s.backoff = (s.backoff * 2).clamp(1, MAX_STEAL_BACKOFF);
            s.skip = s.backoff;
        } else {
            s.skip = s.skip.saturating_sub(1);
        }
        let since = *s.since.get_or_insert_with(Instant::now);
        let idle_for = since.elapsed();
        if !s.looking && idle_for < idle.spin() {
            for _ in 0..SPIN_PAUSES {
                std::hint::spin_loop();
            }
        } else if !s.looking && idle_for < idle.spin_and_yield() {
            std::thread::yield_now();
        } else {
            s.looking = self.engine.park(self.index(), can_steal.then_some(s.watch));
            if s.looking {
                s.watch = (s.watch * 2).min(WATCH_MAX);
            }
            s.since = None;
        }
    }

    /// One pass over this worker's queues, gulping each non-empty one. Returns whether it
    /// processed anything.
    ///
    /// Beyond Cforall, a queue that refilled while its gulp ran is gulped again at once, up to
    /// `throughput` letters per visit: an actor that keeps sending to actors of its own queue (a
    /// request and its reply, a message to itself) then costs one gulp per message instead of a
    /// pass over every other queue per message. The budget keeps one busy queue from starving
    /// the worker's others, as the actor-centric engine's throughput budget does for actors:
    /// `throughput` letters, or, when the visit's first gulp kept its work to itself
    /// (`Running::kept_to_itself`: its letters mostly made more letters to its own queue),
    /// `throughput` letters for each letter that gulp took from the queue, at most one
    /// activation each: the turn the actor-centric engine would give those activations. Not
    /// for the letters its handlers appended, or actors that message themselves would earn a
    /// budget for every message. A queue whose actors keep one another busy (a group of
    /// partners, laid out in one queue by `Engine::filled_growing`) then stays with its worker
    /// while its actors' lines are cached, instead of leaving after 128 letters and meeting
    /// them cold a pass later (docs/decisions/0046-longer-visits-growing-blocks.md). A queue whose letters mostly go
    /// elsewhere leaves as before: a producer (a driver feeding workers, a parent spawning
    /// children) would otherwise run ahead of its consumers, and a group split across workers
    /// has its partners run by another worker.
    ///
    /// The gulps of such a visit after its first get the rest of the visit's budget as their
    /// room (`running.rs`): the group's letters to one another join the gulp instead of going
    /// through the queue's lock to wait for the next gulp, which the visit would take anyway.
    /// With the room of a single budget, seven in eight of them took the lock (the executor at
    /// Cforall's size, whose gulps hold ~1,500 letters: docs/decisions/0048-follow-with-letters.md). The visit's
    /// bound is the same: its gulps end once they have handled the budget.
    fn pass(&self) -> bool {
        let engine = &*self.engine;
        let budget = engine.shared.config.throughput;
        let mut found = false;
        let mut backlog = 0;
        let mut visited = 0;
        let mut woke = false;
        for i in engine.ranges[self.index()].clone() {
            // Our own slots are never null here: only we null them, inside our own swap. The
            // pointer is copied once and used for the whole visit, so a thief swapping the slot
            // meanwhile does not disturb it (`being_processed` keeps the two of us apart).
            let q = engine.slots[i].load(Acquire);
            debug_assert!(!q.is_null());
            // SAFETY: slots point into `engine.queues`, which lives as long as the engine.
            let q: &MessageQueue = unsafe { &*q };
            // The non-atomic emptiness pre-check: most empty queues cost one plain load.
            if q.len_hint() == 0 {
                continue;
            }
            backlog += q.len_hint();
            visited += 1;
            if visited >= 2 && backlog >= WAKE_BACKLOG && !woke {
                // A backlog spread over queues: one could run elsewhere. Wake a sleeping worker
                // to steal it (posts wake only a queue's owner, and a worker feeding its own
                // queues never sleeps, so without this a second worker that once parked stayed
                // parked beside a backlog: fib ran on one worker at 0.7 M msgs/s). Not for a
                // few letters: a chain of messages (dynamic send) leaves two queues with a
                // letter each, and waking a thief for those only moved them across cores.
                engine.wake_a_thief(self.index());
                woke = true;
            }
            let mut handled = 0;
            let mut visit_budget = budget;
            loop {
                let gulp = self.running.with_local(|local| q.gulp(local));
                match gulp {
                    Gulp::Took(n) => {
                        q.owner.store(self.index(), Relaxed);
                        // Once the visit has earned the longer budget, its gulps may take the
                        // rest of it as appended letters (at least a room's worth).
                        let room = visit_budget.saturating_sub(handled).max(budget);
                        let (cut_short, letters) = self.process(q, n, room);
                        q.processing.release();
                        if cut_short {
                            // Shutdown: leave the other queues to it.
                            return true;
                        }
                        // What the gulp's handlers sent is counted until the next gulp begins.
                        if handled == 0 && self.running.kept_to_itself(budget, letters) {
                            visit_budget = budget.saturating_mul(n);
                        }
                        found = true;
                        handled += letters;
                        if handled >= visit_budget || q.len_hint() == 0 {
                            break;
                        }
                    }
                    Gulp::Busy => {
                        self.counters().missed_gulps.bump(1);
                        break;
                    }
                    Gulp::Empty => break,
                }
            }
        }
        found
    }

    /// Hands every letter of the current gulp (`n` letters taken from `q`, and those its
    /// handlers append to it, at most `room`: `running.rs`) to its actor. Returns whether shutdown cut the gulp
    /// short (the letters left were dropped: dead letters) and how many letters it held.
    ///
    /// Shutdown is prompt: between batches of `throughput` letters (an activation's worth, the
    /// other engines' unit) the worker looks at the shutdown flag, a line nobody writes until
    /// then, and leaves the rest of a long gulp undelivered.
    fn process(&self, q: &MessageQueue, n: usize, room: usize) -> (bool, usize) {
        let batch = self.engine.shared.config.throughput;
        let mut messages = 0;
        self.running.begin(q, room);
        // Letters since the shutdown flag was last looked at (a run takes several).
        let mut since_check = 0;
        let cut_short = loop {
            let Some(at) = self.running.pop_at() else {
                break false;
            };
            // SAFETY: we hold the queue's `being_processed` flag, and every letter to an actor
            // is in its one queue, so no other worker runs this actor now; the letter is
            // consumed here, its envelope taken before any handler can append to the gulp. The
            // delivery may take the next letters to the same actor (a run, at most `throughput`
            // letters).
            let took = unsafe { Letter::deliver_at(at, &self.exec, &**self.running) };
            messages += u64::from(took.messages);
            since_check += took.letters as usize;
            if since_check >= batch {
                since_check = 0;
                if self.engine.is_shutdown() {
                    break true;
                }
            }
        };
        let (appended, moved) = self.running.end();
        if cut_short {
            // In order, outside the borrow (dropping a letter runs user code: its envelope's
            // drop, a `ReplyTo` telling its asker). Each actor's release letter, if any, comes
            // after its other letters, so every cell is alive while its letters are dropped.
            loop {
                let letter = self.running.with_local(Buffer::pop);
                let Some(letter) = letter else { break };
                drop(letter);
            }
        }
        let letters = n + appended + moved;
        self.running.with_local(|local| local.reclaim(letters));
        q.note_appended(appended);
        let counters = self.counters();
        counters.gulps.bump(1);
        counters.gulped.bump(letters as u64);
        counters.messages.bump(messages);
        (cut_short, letters)
    }

    /// One steal attempt. Returns whether a queue was stolen.
    ///
    /// Beyond Cforall, a queue is stolen only once its letters have *waited*: a candidate (found
    /// by the victim selection) is watched, and taken at a later attempt only if it is still
    /// non-empty, unclaimed and has not been gulped since. An owner that is about to gulp it
    /// anyway (it is finishing another queue, or scanning) gets there first, so a request and its
    /// reply stay on one core; a backlog on a busy or sleeping owner waits one idle cycle of the
    /// thief (a few hundred ns) and is then stolen. With Cforall's eager rule the idle worker
    /// took the queue holding the single message on 65% of threadring's messages, moving the
    /// queue and its actors' state to the other core each time (docs/message-centric.md).
    ///
    /// `everywhere` (a look after a watch period, `Engine::park`): the candidate is searched in
    /// every other worker's queues, starting at a random worker, whatever the victim selection.
    fn steal(&mut self, everywhere: bool) -> bool {
        let engine = Arc::clone(&self.engine);
        let me = self.index();
        self.counters().steal_attempts.bump(1);
        let now = engine.now_ns();
        engine.last_steal[me].store(now, Relaxed);
        if let Some((slot, watched, generation, since)) = self.watched.take() {
            let q = engine.slots[slot].load(Acquire);
            if ptr::eq(q, watched) {
                // SAFETY: `watched` is non-null and points into `engine.queues`.
                let queue: &MessageQueue = unsafe { &*q };
                let letters = queue.len_hint();
                if queue.generation() == generation && letters > 0 && !queue.processing.is_claimed()
                {
                    if now.saturating_sub(since) >= STEAL_AGE_NS {
                        return self.take(slot, letters);
                    }
                    // Still waiting, but not for long yet: keep watching it.
                    self.watched = Some((slot, watched, generation, since));
                    return false;
                }
            }
        }
        let found = match engine.victims {
            _ if everywhere => self.candidate_anywhere(),
            VictimSelection::None => None,
            VictimSelection::Random => {
                let others = engine.workers() - 1;
                let v = self.rng.usize(0..others);
                let victim = if v >= me { v + 1 } else { v };
                self.candidate(victim)
            }
            VictimSelection::Longest => {
                // The worker whose last steal attempt is oldest: busy workers never steal, so
                // their timestamps age. (So do sleepers'; a letter stuck in a sleeper's queue is
                // not left to stealing: the parking re-check wakes its holder.)
                let victim = (0..engine.workers())
                    .filter(|&w| w != me)
                    .min_by_key(|&w| engine.last_steal[w].load(Relaxed))
                    .expect("more than one worker");
                self.candidate(victim)
            }
            VictimSelection::Nearest => {
                let layout = Arc::clone(&engine.shared.machine.layout);
                layout.groups(me).iter().find_map(|group| {
                    if group.is_empty() {
                        return None;
                    }
                    let victim = group[self.rng.usize(0..group.len())];
                    self.candidate(victim)
                })
            }
        };
        match found {
            Some((slot, q)) => {
                // SAFETY: `candidate` returns pointers into `engine.queues`.
                self.watched = Some((slot, q, unsafe { &*q }.generation(), now));
                self.counters().steal_deferred.bump(1);
            }
            None => self.counters().steal_no_candidate.bump(1),
        }
        false
    }

    /// Swaps the queue at `slot` (another worker's) with one of ours.
    fn take(&mut self, slot: usize, letters: usize) -> bool {
        let engine = Arc::clone(&self.engine);
        let me = self.index();
        let range = engine.ranges[me].clone();
        let mine = range.start + self.rng.usize(0..range.len());
        match try_swap(&engine.slots, slot, mine) {
            Swap::Done => {
                let counters = self.counters();
                counters.steals.bump(1);
                counters.letters_stolen.bump(letters as u64);
                // Who to wake for each queue from now on (a hint: posts prefer the owner).
                let (ours, theirs) = (
                    engine.slots[mine].load(Acquire),
                    engine.slots[slot].load(Acquire),
                );
                for (q, owner) in [(ours, me), (theirs, victim_of(&engine, slot))] {
                    if !q.is_null() {
                        // SAFETY: non-null slots point into `engine.queues` (a thief may have
                        // swapped them again meanwhile: then the hint is merely stale).
                        unsafe { &*q }.owner.store(owner, Relaxed);
                    }
                }
                true
            }
            Swap::Failed => {
                self.counters().steal_failed_swap.bump(1);
                false
            }
        }
    }

    /// A candidate queue of any other worker, the workers tried in turn from a random one.
    fn candidate_anywhere(&mut self) -> Option<(usize, *const MessageQueue)> {
        let n = self.engine.workers();
        let (me, start) = (self.index(), self.rng.usize(0..n));
        (0..n)
            .map(|k| (start + k) % n)
            .filter(|&v| v != me)
            .find_map(|v| self.candidate(v))
    }

    /// A candidate queue of `victim`: non-empty and not being processed (read without
    /// synchronisation, as Cforall does; a stale answer costs a useless swap, never
    /// correctness). Starts at a random slot. Returns the slot and the queue.
    fn candidate(&mut self, victim: usize) -> Option<(usize, *const MessageQueue)> {
        let engine = &*self.engine;
        let range = engine.ranges[victim].clone();
        let n = range.len();
        let start = self.rng.usize(0..n);
        (0..n).find_map(|k| {
            let slot = range.start + (start + k) % n;
            let q = engine.slots[slot].load(Acquire);
            if q.is_null() {
                return None;
            }
            // SAFETY: non-null slots point into `engine.queues`.
            let queue: &MessageQueue = unsafe { &*q };
            (queue.len_hint() > 0 && !queue.processing.is_claimed())
                .then_some((slot, q as *const MessageQueue))
        })
    }
}
