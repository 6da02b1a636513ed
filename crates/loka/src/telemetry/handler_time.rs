//! Handler time per actor (`handler_sample_us`; docs/observability.md, "Handler time"): how long
//! each actor's activations kept a worker busy, kept for the busiest actors only.
//!
//! Nothing here runs on a worker. Under the wall-clock engines a sampling thread reads, every
//! `handler_sample_us`, which actor each worker runs now (the id `Exec::enter` already stores
//! for [`crate::System::actors`]) and credits that actor the time since the round before: a
//! statistical profile, as `perf record` takes one of a program's functions. Its estimate of an
//! actor's share of the time is unbiased, and its relative error shrinks as one over the square
//! root of the actor's samples (seen in 10,000 samples, an actor's time is known to about ±1%). Under the simulation the engine credits
//! each activation its exact virtual cost instead.
//!
//! A system may run millions of actors, so the table keeps [`CAPACITY`] of them with the
//! Space-Saving algorithm (Metwally, Agrawal and El Abbadi, "Efficient computation of frequent
//! and top-k elements in data streams", ICDT 2005), weighted: an actor not in a full table takes
//! the place of the one with the least time and inherits that time as its possible
//! overestimate (`error_ns`). Two guarantees follow: every actor with more than
//! `1 / CAPACITY` of all the time recorded is in the table, and no entry overstates its actor's
//! time by more than its `error_ns`. Memory stays bounded whatever the number of actors.

use parking_lot::Mutex;
use rustc_hash::FxHashMap;

/// An actor's raw id ([`crate::ActorId::as_u64`]).
type ActorKey = u64;

/// How many actors the table keeps (about 48 bytes each, plus the index).
pub const CAPACITY: usize = 1024;

/// The most intervals one sampling round may credit ([`HandlerTimes::sample`]).
const MAX_CREDIT: u64 = 4;

/// One actor's recorded time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) id: ActorKey,
    /// Its Rust type, looked up once, when it entered the table.
    pub(crate) actor_type: &'static str,
    pub(crate) ns: u64,
    /// How much of `ns` may belong to the actors it displaced (Space-Saving's overestimate).
    pub(crate) error_ns: u64,
}

/// The weighted Space-Saving table: the busiest actors by recorded time.
#[derive(Debug)]
pub(crate) struct Busiest {
    entries: Vec<Entry>,
    index: FxHashMap<ActorKey, usize>,
    capacity: usize,
}

impl Busiest {
    pub(crate) fn new(capacity: usize) -> Self {
        Busiest {
            entries: Vec::with_capacity(capacity),
            index: FxHashMap::default(),
            capacity: capacity.max(1),
        }
    }

    /// Credits `id` with `ns`. `actor_type` is asked only when it enters the table; `None` (it
    /// stopped meanwhile) leaves it out. Returns whether it was credited.
    pub(crate) fn add(
        &mut self,
        id: ActorKey,
        ns: u64,
        actor_type: impl FnOnce() -> Option<&'static str>,
    ) -> bool {
        if let Some(&at) = self.index.get(&id) {
            self.entries[at].ns += ns;
            return true;
        }
        let Some(actor_type) = actor_type() else {
            return false;
        };
        let entry = Entry {
            id,
            actor_type,
            ns,
            error_ns: 0,
        };
        if self.entries.len() < self.capacity {
            self.index.insert(id, self.entries.len());
            self.entries.push(entry);
            return true;
        }
        // Full: the newcomer replaces the entry with the least time and inherits it as its
        // possible overestimate. A scan of the table, paid only by an actor the table does not
        // hold (one per sampling round and worker at most).
        let (at, least) = self
            .entries
            .iter()
            .enumerate()
            .min_by_key(|(_, e)| e.ns)
            .map(|(at, e)| (at, *e))
            .expect("a full table has entries");
        self.index.remove(&least.id);
        self.index.insert(id, at);
        self.entries[at] = Entry {
            ns: least.ns + ns,
            error_ns: least.ns,
            ..entry
        };
        true
    }

    /// The `n` entries with the most time, most first (ties: lower id first).
    fn top(&self, n: usize) -> Vec<Entry> {
        let mut all = self.entries.clone();
        all.sort_unstable_by(|a, b| b.ns.cmp(&a.ns).then(a.id.cmp(&b.id)));
        all.truncate(n);
        all
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

/// What the sampler or the simulation recorded: the table, the rounds, each worker's busy time.
#[derive(Debug)]
struct Recorded {
    busiest: Busiest,
    /// Sampling rounds taken (0 under the simulation, which samples nothing).
    rounds: u64,
    /// Time each worker was seen running an actor, in ns (estimated from samples, or exact).
    worker_busy_ns: Vec<u64>,
    /// Time credited to actors on the dedicated threads of `thread` actors.
    dedicated_ns: u64,
}

/// A system's handler-time record, shared by the sampler (or the simulation) and the snapshots.
#[derive(Debug)]
pub(crate) struct HandlerTimes {
    /// The sampling interval in ns; 0 under the simulation (exact virtual time).
    interval_ns: u64,
    recorded: Mutex<Recorded>,
}

/// Where a recorded activation ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Thread {
    /// An engine's worker, by index.
    Worker(usize),
    /// The dedicated thread of a `thread` actor.
    Dedicated,
}

impl HandlerTimes {
    /// A record for `workers` workers, sampled every `interval_ns` (0: exact, the simulation).
    pub(crate) fn new(workers: usize, interval_ns: u64) -> Self {
        HandlerTimes {
            interval_ns,
            recorded: Mutex::new(Recorded {
                busiest: Busiest::new(CAPACITY),
                rounds: 0,
                worker_busy_ns: vec![0; workers],
                dedicated_ns: 0,
            }),
        }
    }

    /// The sampling interval in ns (0: exact virtual time).
    pub(crate) fn interval_ns(&self) -> u64 {
        self.interval_ns
    }

    /// One sampling round, `elapsed_ns` after the one before: `running` gives, for each thread,
    /// the raw id of the actor it runs (0: none). Each one seen running is credited the time
    /// since the last round, at most [`MAX_CREDIT`] intervals: a sampler that was itself kept
    /// waiting (a loaded machine) then undercounts nothing, and one suspended with its process
    /// does not hand a whole pause to whatever ran at the end of it. `actor_type` names an actor
    /// that enters the table (`None`: it stopped meanwhile; it is then not credited).
    pub(crate) fn sample(
        &self,
        elapsed_ns: u64,
        running: impl IntoIterator<Item = (Thread, u64)>,
        mut actor_type: impl FnMut(u64) -> Option<&'static str>,
    ) {
        let ns = elapsed_ns.min(MAX_CREDIT * self.interval_ns);
        let mut recorded = self.recorded.lock();
        recorded.rounds += 1;
        for (thread, id) in running.into_iter().filter(|&(_, id)| id != 0) {
            recorded.credit(thread, id, ns, || actor_type(id));
        }
    }

    /// Credits one activation's exact time (the simulation).
    pub(crate) fn record(
        &self,
        worker: usize,
        id: u64,
        ns: u64,
        actor_type: impl FnOnce() -> &'static str,
    ) {
        self.recorded
            .lock()
            .credit(Thread::Worker(worker), id, ns, || Some(actor_type()));
    }

    /// The busiest `n` actors, the rounds taken and each worker's busy time.
    pub(crate) fn report(&self, n: usize) -> Report {
        let recorded = self.recorded.lock();
        Report {
            rounds: recorded.rounds,
            worker_busy_ns: recorded.worker_busy_ns.clone(),
            dedicated_ns: recorded.dedicated_ns,
            tracked: recorded.busiest.len(),
            top: recorded.busiest.top(n),
        }
    }
}

impl Recorded {
    /// Credits `id`, and the thread it ran on, with `ns` (neither if it stopped before it
    /// entered the table: `add`).
    fn credit(
        &mut self,
        thread: Thread,
        id: u64,
        ns: u64,
        actor_type: impl FnOnce() -> Option<&'static str>,
    ) {
        if !self.busiest.add(id, ns, actor_type) {
            return;
        }
        match thread {
            Thread::Worker(w) => {
                if let Some(busy) = self.worker_busy_ns.get_mut(w) {
                    *busy += ns;
                }
            }
            Thread::Dedicated => self.dedicated_ns += ns,
        }
    }
}

/// What [`HandlerTimes::report`] read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Report {
    pub(crate) rounds: u64,
    pub(crate) worker_busy_ns: Vec<u64>,
    pub(crate) dedicated_ns: u64,
    pub(crate) tracked: usize,
    pub(crate) top: Vec<Entry>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(b: &Busiest, n: usize) -> Vec<u64> {
        b.top(n).iter().map(|e| e.id).collect()
    }

    #[test]
    fn below_capacity_every_actor_is_counted_exactly() {
        let mut b = Busiest::new(8);
        for (id, ns) in [(1, 10), (2, 30), (1, 5), (3, 1), (2, 30)] {
            b.add(id, ns, || Some("T"));
        }
        let top = b.top(8);
        let got: Vec<(u64, u64, u64)> = top.iter().map(|e| (e.id, e.ns, e.error_ns)).collect();
        assert_eq!(got, [(2, 60, 0), (1, 15, 0), (3, 1, 0)]);
    }

    #[test]
    fn a_heavy_actor_among_many_light_ones_is_kept_with_a_bounded_overestimate() {
        // 10,000 actors of 1 ns each through a table of 16, and one actor of 1,000 ns spread
        // over the stream: Space-Saving keeps every actor above total/capacity.
        let mut b = Busiest::new(16);
        let mut heavy_true = 0;
        for i in 0..10_000u64 {
            b.add(100 + i, 1, || Some("light"));
            if i % 10 == 0 {
                b.add(7, 1, || Some("heavy"));
                heavy_true += 1;
            }
        }
        assert_eq!(b.len(), 16, "the table stays at its capacity");
        let top = b.top(1)[0];
        assert_eq!(top.id, 7, "the heavy actor leads");
        assert_eq!(top.actor_type, "heavy");
        assert!(top.ns >= heavy_true, "never underestimated");
        assert!(
            top.ns - top.error_ns <= heavy_true,
            "the overestimate is within error_ns: {top:?}, true {heavy_true}"
        );
    }

    #[test]
    fn a_newcomer_to_a_full_table_replaces_the_least_and_inherits_its_time_as_error() {
        let mut b = Busiest::new(2);
        b.add(1, 50, || Some("A"));
        b.add(2, 10, || Some("B"));
        b.add(3, 4, || Some("C"));
        assert_eq!(ids(&b, 2), [1, 3]);
        let c = b.top(2)[1];
        assert_eq!((c.ns, c.error_ns, c.actor_type), (14, 10, "C"));
    }

    #[test]
    fn sampling_credits_the_time_since_the_last_round_per_running_thread_and_skips_stopped_newcomers(
    ) {
        let times = HandlerTimes::new(2, 1_000);
        let round = [
            (Thread::Worker(0), 5),
            (Thread::Worker(1), 0),
            (Thread::Dedicated, 9),
        ];
        times.sample(1_000, round, |id| (id == 5).then_some("Five"));
        // A late round credits the time since the last one, at most four intervals.
        times.sample(2_500, [(Thread::Worker(1), 5)], |_| None);
        times.sample(60_000, [(Thread::Worker(1), 5)], |_| None);
        let r = times.report(10);
        assert_eq!(r.rounds, 3);
        assert_eq!(r.worker_busy_ns, [1_000, 6_500]);
        assert_eq!(r.dedicated_ns, 0, "actor 9 had stopped: not credited");
        assert_eq!(r.top.len(), 1);
        assert_eq!((r.top[0].id, r.top[0].ns), (5, 7_500));
        assert_eq!(r.top[0].actor_type, "Five");
    }
}
