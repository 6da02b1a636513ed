//! `auto` that keeps looking: on a machine where it chose a locality policy, the engine runs
//! this controller, which measures, while the system runs, whether the locality mechanism pays
//! against plain work stealing (`cls`), and moves to whichever does better
//! (docs/decisions/0067-adaptive-auto.md).
//!
//! **What it measures.** Throughput: messages handled per nanosecond by the whole system over a
//! window. Locality's benefits (fewer remote-node accesses, warm caches) and its costs (workers
//! idle while work waits on another node, hand-offs, failed steals) both end up there, at the
//! exchange rate of the machine the system runs on; the counters that explain them
//! (`exec_remote_node`, `steal_attempts`, queue wait) are proxies whose worth in throughput
//! depends on that machine, and which no fixed threshold converts.
//!
//! **How it compares.** A probe runs the two mechanisms in windows in the order *current,
//! other, other, current* and compares the sums of each: a load that rises or falls steadily
//! through the probe weighs the same on both sides, so a phase change is not taken for a gain.
//! The first window after every switch is not counted (the actors are still where the other
//! mechanism left them).
//!
//! **Which it keeps.** The locality mechanism when it beats plain stealing by
//! [`LOCALITY_MARGIN`] and by [`SIGNIFICANCE`] standard errors, plain stealing when it beats
//! locality by as many. A probe that shows neither leaves the settled mechanism running and adds
//! its windows to a pool that the next probes add to; when the pool's windows vary
//! too much to resolve a gain the size of the texts', the windows double (up to
//! [`MAX_WINDOW_NS`]) and the pool starts afresh; after [`POOLED_PROBES`] inconclusive probes
//! the tie goes to plain stealing, so that a workload locality cannot help ends where `cls`
//! would be (docs/decisions/0099-auto-pools-its-evidence.md). After a probe that confirmed the
//! current mechanism, the next one comes twice as late (up to [`MAX_SETTLED_WINDOWS`]); after a
//! switch, as early as at the start: a workload that changes is noticed within a bounded time,
//! one that does not pays a probe ever more rarely.
//!
//! Pure decisions: the engine feeds the windows and carries out the answer. The simulation and
//! the actor-centric engine run the same code.

/// The two mechanisms `auto` moves between.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mechanism {
    /// Plain random work stealing with communication locality (`cls`).
    Plain,
    /// The locality policy the topology chose (`hierarchical` on several NUMA nodes).
    Locality,
}

impl Mechanism {
    /// The other one.
    pub fn other(self) -> Mechanism {
        match self {
            Mechanism::Plain => Mechanism::Locality,
            Mechanism::Locality => Mechanism::Plain,
        }
    }

    /// Its index (0: plain, 1: locality), for engines that keep one choice per mechanism.
    pub fn index(self) -> usize {
        match self {
            Mechanism::Plain => 0,
            Mechanism::Locality => 1,
        }
    }

    /// The mechanism of an [`index`](Self::index).
    pub fn from_index(index: usize) -> Mechanism {
        if index == 0 {
            Mechanism::Plain
        } else {
            Mechanism::Locality
        }
    }
}

/// One measurement window: how long it lasted and how many messages the system handled in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Window {
    /// Its length, in nanoseconds (virtual ones under the simulation).
    pub elapsed_ns: u64,
    /// Messages handled by all workers during it.
    pub messages: u64,
}

/// A window's length at the start (the controller doubles it on loads that vary more, see
/// [`NOISY_SPREAD`]). Long enough to count well: a machine worth adapting on has several NUMA
/// nodes, so 16 workers or more, and an activation costs 0.1–1 µs, so a window holds 4,000
/// activations or more, whose count varies by ~1/√4000 ≈ 1.6% from chance alone; a probe sums
/// two windows a side, so a 5% difference ([`LOCALITY_MARGIN`]) is about three of its standard
/// deviations. Short against what is worth adapting: a benchmark's quick size runs for a few
/// milliseconds of virtual time under the simulation, its full size for hundreds.
pub const WINDOW_NS: u64 = 250_000;

/// By how much the locality mechanism must beat plain stealing to be kept: its mechanisms cost
/// something on every wake-up and steal (hub marks, foreign queues, balancing rounds), so a
/// tie goes to plain stealing. 5%: about three standard deviations of a probe's comparison of
/// a steady load ([`WINDOW_NS`]), below the gains the texts report (8–44%).
pub const LOCALITY_MARGIN: f64 = 0.05;

/// Windows before the first probe (the system is starting: actors spawned, mailboxes filling)
/// and between probes right after a switch.
pub const MIN_SETTLED_WINDOWS: u32 = 4;

/// The longest wait between probes, in windows: a workload that changes what pays is noticed
/// within this many windows plus a probe (~18 ms), and a steady one pays a probe (half of it in
/// the worse mechanism) at most once in that many windows.
pub const MAX_SETTLED_WINDOWS: u32 = 64;

/// Where the controller is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// Running the chosen mechanism; a probe starts after `left` more windows.
    Settled { left: u32 },
    /// Probing: `step` of [`PROBE`], with the rates measured so far (messages per ns) of the
    /// current mechanism and of the other.
    Probe {
        step: usize,
        current: ProbeSide,
        other: ProbeSide,
    },
}

mod evidence;
use evidence::{Pool, ProbeSide};
mod ladder;
pub use ladder::{Arm, Ladder};

/// Windows measured on each side of a probe.
const MEASURED_EACH: usize = 4;

/// A probe's windows: whether each runs the other mechanism, and whether it is measured (the
/// windows after a switch are not: one going, two coming back, as the actors scattered by
/// plain stealing take longer to return home than to scatter). Two of the current mechanism,
/// four of the other, two of the current: a load that rises or falls steadily weighs the same
/// on both sides.
const PROBE: [(bool, bool); 11] = [
    (false, true),
    (false, true),
    (true, false),
    (true, true),
    (true, true),
    (true, true),
    (true, true),
    (false, false),
    (false, false),
    (false, true),
    (false, true),
];

/// How many standard errors apart the two sides' means must be for the locality mechanism to
/// be kept: window rates of bursty loads vary by up to ±30% from one window to the next
/// (random walks of tokens under the simulation), far more than counting alone would make
/// them, so the margin alone would decide by chance. Four windows a side (one probe) leave six
/// degrees of freedom, for which Student's t puts 2.5% of chance differences beyond 2.45
/// standard errors; a pool of more windows, fewer.
pub const SIGNIFICANCE: f64 = 2.5;

/// The step of [`PROBE`] that measures the other mechanism first.
fn first_other_step() -> usize {
    PROBE
        .iter()
        .position(|&(other, measured)| other && measured)
        .expect("a probe measures the other mechanism")
}

/// Probes whose evidence is pooled before a tie is called: an inconclusive probe (neither
/// mechanism ahead by [`SIGNIFICANCE`] standard errors) leaves the settled mechanism running,
/// and the next probe, twice as late as the last (as after a probe that confirms: probing
/// costs, and a tie is cheap to run on), adds its windows to the pool, up to this many probes;
/// then the tie goes to plain stealing. Four probes pool sixteen windows a
/// side, which resolve a gain of 0.9 times one window's spread (2.5 standard errors of a
/// difference of two means of sixteen); a single probe's four resolved 1.8 times it, so a load
/// whose windows vary by ±30% (a spread of 0.17–0.3 under the simulation) had to gain 30–55%
/// to keep locality, more than most of the texts' gains (8–44%). Sequential looks at the
/// pool raise the chance of a win by chance (tested: a tie through noise, forty seeds).
pub const POOLED_PROBES: usize = 4;

/// The spread (standard deviation over mean) of one window's rate above which a pool cannot
/// resolve the texts' gains: 0.3, for which the pool of [`POOLED_PROBES`] resolves a gain of
/// 26% (0.88 × 0.3), the middle of the texts' 8–44%. Above it the load varies on a time scale
/// longer than a window (fjcreate under `hierarchical` on the simulated Opteron alternates
/// windows of 7 and 70–120 messages per µs: a spread of 1.75), and more windows of the same
/// length do not help as much as longer ones, which average whole bursts: an inconclusive
/// probe on noisy windows doubles the window (up to [`MAX_WINDOW_NS`]) and starts the pool
/// afresh (the method of batch means, which lengthens batches until their means are nearly
/// independent).
pub const NOISY_SPREAD: f64 = 0.3;

/// The longest window, eight times [`WINDOW_NS`]: 2 ms, within which the bursts of every
/// workload of the benchmark set average out under the simulation; with it a probe takes
/// 22 ms and the longest wait between probes 128 ms.
pub const MAX_WINDOW_NS: u64 = 8 * WINDOW_NS;

/// A probe ends early, keeping the current mechanism, when the first window of the other one
/// handles less than the current one's by more than this factor: the rest of the probe would
/// only pay longer for the worse mechanism (on a workload where locality pays sevenfold, the
/// full probes took the adaptive run from 1.0× to 1.38× of the locality policy's time). Twice:
/// beyond what one window varies from the previous on the bursty loads tried under the
/// simulation (up to 1.5×). A switch always takes the whole probe.
pub const CLEAR_FACTOR: f64 = 2.0;

/// The controller of an adaptive `auto`: feed it each [`Window`] with [`observe`](Self::observe),
/// run the mechanism it answers for the next one.
#[derive(Debug, Clone)]
pub struct Adaptive {
    /// The mechanism settled on (the one probes compare against).
    settled: Mechanism,
    phase: Phase,
    /// Windows to wait after a probe that confirmed `settled`.
    backoff: u32,
    /// The evidence of the inconclusive probes since the last decision.
    pool: Pool,
    /// The length of a window now, in ns: [`WINDOW_NS`], doubled while noisy probes leave the
    /// comparison open, up to [`MAX_WINDOW_NS`].
    window_ns: u64,
    /// The longest wait between probes, in ns of windows (`None`: [`MAX_SETTLED_WINDOWS`]
    /// windows, whatever their length; see [`with_longest_wait_ns`](Self::with_longest_wait_ns)).
    longest_wait_ns: Option<u64>,
    /// A probe's first window of the other mechanism ends it when the current one handled this
    /// many times more ([`CLEAR_FACTOR`] unless [`with_clear_factor`](Self::with_clear_factor)
    /// says otherwise).
    clear_factor: f64,
    /// Probes made and switches decided, for the system's statistics.
    probes: u64,
    switches: u64,
}

impl Adaptive {
    /// A controller starting on `start` (the topology's choice).
    pub fn new(start: Mechanism) -> Adaptive {
        Adaptive {
            settled: start,
            phase: Phase::Settled {
                left: MIN_SETTLED_WINDOWS,
            },
            backoff: MIN_SETTLED_WINDOWS,
            pool: Pool::new(),
            window_ns: WINDOW_NS,
            longest_wait_ns: None,
            clear_factor: CLEAR_FACTOR,
            probes: 0,
            switches: 0,
        }
    }

    /// This controller waits at most `ns` of windows between probes, however long its windows
    /// are (at least [`MIN_SETTLED_WINDOWS`] windows): a comparison whose other arm costs a
    /// steady load more than locality's does (gathering a parallel load on half the workers
    /// halves it) probes less often, and a bound in time keeps the longest windows from
    /// stretching the wait (64 windows of 2 ms are 128 ms, 512 of them a second).
    pub fn with_longest_wait_ns(mut self, ns: u64) -> Adaptive {
        self.longest_wait_ns = Some(ns);
        self
    }

    /// A probe ends at its first window of the other mechanism when the current one handled
    /// `factor` times more (above 1): a comparison whose other arm is either better or much
    /// worse (gathering a parallel load halves it) ends the bad probes sooner than
    /// [`CLEAR_FACTOR`] does.
    pub fn with_clear_factor(mut self, factor: f64) -> Adaptive {
        self.clear_factor = factor.max(1.0);
        self
    }

    /// An outside verdict: `mechanism` runs from now on, as if a probe had settled on it, and
    /// the next probe comes twice as late as the last (as after a probe that confirmed it);
    /// the pooled evidence is dropped. For what the windows cannot see (the stall guard finding
    /// actors held behind a long handler while the other arm runs).
    pub fn overrule(&mut self, mechanism: Mechanism) {
        if mechanism != self.settled {
            self.switches += 1;
        }
        self.settled = mechanism;
        self.pool = Pool::new();
        self.phase = self.wait_longer();
    }

    /// The mechanism to run now.
    pub fn current(&self) -> Mechanism {
        match self.phase {
            Phase::Settled { .. } => self.settled,
            Phase::Probe { step, .. } if PROBE[step].0 => self.settled.other(),
            Phase::Probe { .. } => self.settled,
        }
    }

    /// The mechanism settled on (what the last probe decided).
    pub fn settled(&self) -> Mechanism {
        self.settled
    }

    /// Whether a probe is under way: the next window is one of its own.
    pub fn probing(&self) -> bool {
        matches!(self.phase, Phase::Probe { .. })
    }

    /// How long the next window should run, in ns (the engine's clock).
    pub fn window_ns(&self) -> u64 {
        self.window_ns
    }

    /// Probes made so far.
    pub fn probes(&self) -> u64 {
        self.probes
    }

    /// Times a probe moved the system to the other mechanism.
    pub fn switches(&self) -> u64 {
        self.switches
    }

    /// A window ran [`current`](Self::current); returns the mechanism for the next one. A
    /// window with no time in it (a clock that did not move) changes nothing.
    pub fn observe(&mut self, window: Window) -> Mechanism {
        if window.elapsed_ns == 0 {
            return self.current();
        }
        let rate = window.messages as f64 / window.elapsed_ns as f64;
        self.phase = match self.phase {
            Phase::Settled { left } if left > 1 => Phase::Settled { left: left - 1 },
            Phase::Settled { .. } => {
                self.probes += 1;
                Phase::Probe {
                    step: 0,
                    current: ProbeSide::new(),
                    other: ProbeSide::new(),
                }
            }
            Phase::Probe {
                step,
                mut current,
                mut other,
            } => {
                match PROBE[step] {
                    (true, true) => other.push(rate),
                    (false, true) => current.push(rate),
                    _ => {}
                }
                if step == first_other_step() && rate * self.clear_factor < current.mean() {
                    // One window tells: no need to pay the rest of the probe.
                    self.pool = Pool::new();
                    self.wait_longer()
                } else if step + 1 < PROBE.len() {
                    Phase::Probe {
                        step: step + 1,
                        current,
                        other,
                    }
                } else {
                    self.decide(current, other)
                }
            }
        };
        self.current()
    }

    /// The end of a probe: its windows join the pool; a mechanism shown better by the pool
    /// is taken (or kept); otherwise the settled one runs on while the evidence grows, in
    /// longer windows if they are noisy, and after [`POOLED_PROBES`] inconclusive probes the
    /// tie goes to plain stealing.
    fn decide(&mut self, current: ProbeSide, other: ProbeSide) -> Phase {
        match self.settled {
            Mechanism::Plain => self.pool.add(&current, &other),
            Mechanism::Locality => self.pool.add(&other, &current),
        }
        let winner = match self.pool.verdict() {
            Some(winner) => winner,
            None if self.pool.noisy() && self.window_ns < MAX_WINDOW_NS => {
                self.window_ns *= 2;
                self.pool = Pool::new();
                return Phase::Settled {
                    left: MIN_SETTLED_WINDOWS,
                };
            }
            None if self.pool.probes < POOLED_PROBES => return self.wait_longer(),
            None => Mechanism::Plain,
        };
        self.pool = Pool::new();
        if winner == self.settled {
            return self.wait_longer();
        }
        self.settled = winner;
        self.switches += 1;
        self.backoff = MIN_SETTLED_WINDOWS;
        Phase::Settled {
            left: MIN_SETTLED_WINDOWS,
        }
    }

    /// The settled mechanism runs on, and the next probe comes twice as late as the last (up
    /// to [`MAX_SETTLED_WINDOWS`]): after a probe that confirmed it, or one that could not tell.
    fn wait_longer(&mut self) -> Phase {
        let longest = match self.longest_wait_ns {
            Some(ns) => u32::try_from(ns / self.window_ns).unwrap_or(u32::MAX),
            None => MAX_SETTLED_WINDOWS,
        };
        self.backoff = (self.backoff * 2).min(longest.max(MIN_SETTLED_WINDOWS));
        Phase::Settled { left: self.backoff }
    }
}

#[cfg(test)]
mod tests;
