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
//! **Which it keeps.** The locality mechanism only if it beats plain stealing by
//! [`LOCALITY_MARGIN`]; plain stealing otherwise, so that a workload locality cannot help ends
//! where `cls` would be. After a probe that confirmed the current mechanism, the next one comes
//! twice as late (up to [`MAX_SETTLED_WINDOWS`]); after a switch, as early as at the start: a
//! workload that changes is noticed within a bounded time, one that does not pays a probe ever
//! more rarely.
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

/// A window's length. Long enough to count well: a machine worth adapting on has several NUMA
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
        current: Samples,
        other: Samples,
    },
}

/// The rates of one side of a probe.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Samples {
    rates: [f64; MEASURED_EACH],
    n: usize,
}

impl Samples {
    fn push(&mut self, rate: f64) {
        self.rates[self.n] = rate;
        self.n += 1;
    }

    fn mean(&self) -> f64 {
        self.rates[..self.n].iter().sum::<f64>() / self.n.max(1) as f64
    }

    /// The variance of the mean (sample variance over n).
    fn variance_of_mean(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let mean = self.mean();
        let ss: f64 = self.rates[..self.n]
            .iter()
            .map(|r| (r - mean).powi(2))
            .sum();
        ss / (self.n - 1) as f64 / self.n as f64
    }
}

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
/// them, so the margin alone would decide by chance. Four windows a side leave six degrees of
/// freedom, for which Student's t puts 2.5% of chance differences beyond 2.45 standard errors.
pub const SIGNIFICANCE: f64 = 2.5;

/// The step of [`PROBE`] that measures the other mechanism first.
fn first_other_step() -> usize {
    PROBE
        .iter()
        .position(|&(other, measured)| other && measured)
        .expect("a probe measures the other mechanism")
}

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
            probes: 0,
            switches: 0,
        }
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
                    current: Samples::default(),
                    other: Samples::default(),
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
                if step == first_other_step() && rate * CLEAR_FACTOR < current.mean() {
                    // One window tells: no need to pay the rest of the probe.
                    self.backoff = (self.backoff * 2).min(MAX_SETTLED_WINDOWS);
                    Phase::Settled { left: self.backoff }
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

    /// The end of a probe: locality is kept (or taken) only if its mean rate beats plain
    /// stealing's by the margin and by [`SIGNIFICANCE`] standard errors.
    fn decide(&mut self, current: Samples, other: Samples) -> Phase {
        let (plain, locality) = match self.settled {
            Mechanism::Plain => (current, other),
            Mechanism::Locality => (other, current),
        };
        let gain = locality.mean() - plain.mean();
        let error = (locality.variance_of_mean() + plain.variance_of_mean()).sqrt();
        let pays =
            locality.mean() > plain.mean() * (1.0 + LOCALITY_MARGIN) && gain > SIGNIFICANCE * error;
        let winner = if pays {
            Mechanism::Locality
        } else {
            Mechanism::Plain
        };
        if winner == self.settled {
            self.backoff = (self.backoff * 2).min(MAX_SETTLED_WINDOWS);
        } else {
            self.settled = winner;
            self.switches += 1;
            self.backoff = MIN_SETTLED_WINDOWS;
        }
        Phase::Settled { left: self.backoff }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds windows whose rate (messages per ns) `rate_of` gives for the mechanism running,
    /// until `windows` have passed; returns the mechanisms run, one per window.
    fn run(
        ctl: &mut Adaptive,
        windows: usize,
        mut rate_of: impl FnMut(usize, Mechanism) -> f64,
    ) -> Vec<Mechanism> {
        let mut ran = Vec::new();
        for i in 0..windows {
            let m = ctl.current();
            ran.push(m);
            let messages = (rate_of(i, m) * WINDOW_NS as f64) as u64;
            ctl.observe(Window {
                elapsed_ns: WINDOW_NS,
                messages,
            });
        }
        ran
    }

    #[test]
    fn locality_that_does_not_pay_gives_way_to_plain_stealing_and_stays_away() {
        let mut ctl = Adaptive::new(Mechanism::Locality);
        // Plain stealing handles 30% more.
        let ran = run(&mut ctl, 400, |_, m| match m {
            Mechanism::Plain => 1.3,
            Mechanism::Locality => 1.0,
        });
        assert_eq!(ctl.settled(), Mechanism::Plain);
        assert_eq!(ctl.switches(), 1);
        let plain = ran.iter().filter(|m| **m == Mechanism::Plain).count();
        assert!(plain > 350, "{plain} of 400 windows plain");
        // Moved within the first probe: the settle windows plus its six.
        let first_plain_run = ran
            .windows(MIN_SETTLED_WINDOWS as usize + 1)
            .position(|w| w.iter().all(|m| *m == Mechanism::Plain))
            .unwrap();
        assert!(
            first_plain_run <= 16,
            "settled on plain from window {first_plain_run}"
        );
    }

    #[test]
    fn locality_that_pays_is_kept_and_probed_ever_more_rarely() {
        let mut ctl = Adaptive::new(Mechanism::Locality);
        let ran = run(&mut ctl, 400, |_, m| match m {
            Mechanism::Plain => 1.0,
            Mechanism::Locality => 1.2,
        });
        assert_eq!(ctl.settled(), Mechanism::Locality);
        assert_eq!(ctl.switches(), 0);
        let plain = ran.iter().filter(|m| **m == Mechanism::Plain).count();
        // Five plain windows a probe (of ten); probes after 4, 8, 16, 32, 64, 64...
        // windows: seven in 400 windows, not the 30 a fixed wait of 4 would make.
        assert_eq!(plain as u64, 5 * ctl.probes());
        assert!((5..=8).contains(&ctl.probes()), "{} probes", ctl.probes());
    }

    #[test]
    fn a_tie_goes_to_plain_stealing_and_plain_that_pays_stays() {
        let mut ctl = Adaptive::new(Mechanism::Locality);
        run(&mut ctl, 100, |_, m| match m {
            Mechanism::Plain => 1.0,
            Mechanism::Locality => 1.0 + LOCALITY_MARGIN / 2.0,
        });
        assert_eq!(ctl.settled(), Mechanism::Plain);
        let mut ctl = Adaptive::new(Mechanism::Plain);
        run(&mut ctl, 300, |_, m| match m {
            Mechanism::Plain => 1.0,
            Mechanism::Locality => 0.5,
        });
        assert_eq!((ctl.settled(), ctl.switches()), (Mechanism::Plain, 0));
    }

    #[test]
    fn a_steady_ramp_is_not_taken_for_a_gain() {
        // Throughput rising 3% a window whatever runs: a probe ordered current, other, other,
        // current sees the same on both sides; one ordered current, other would credit the
        // other mechanism with the ramp.
        let mut ctl = Adaptive::new(Mechanism::Plain);
        run(&mut ctl, 200, |i, _| 1.0 + 0.03 * i as f64);
        assert_eq!((ctl.settled(), ctl.switches()), (Mechanism::Plain, 0));
    }

    #[test]
    fn a_workload_that_changes_is_followed_both_ways() {
        let mut ctl = Adaptive::new(Mechanism::Locality);
        // Locality pays for 300 windows, then stops paying.
        let ran = run(&mut ctl, 600, |i, m| match (i < 300, m) {
            (true, Mechanism::Locality) | (false, Mechanism::Plain) => 1.25,
            _ => 1.0,
        });
        assert_eq!(ctl.settled(), Mechanism::Plain);
        assert_eq!(ctl.switches(), 1);
        assert!(
            ran[150..300]
                .iter()
                .filter(|m| **m == Mechanism::Locality)
                .count()
                >= 135
        );
        // Noticed within the longest wait plus a probe: from then on, plain but for probes.
        let bound = 300 + MAX_SETTLED_WINDOWS as usize + PROBE.len();
        let plain = ran[bound..]
            .iter()
            .filter(|m| **m == Mechanism::Plain)
            .count();
        assert!(
            plain * 10 >= (600 - bound) * 8,
            "{plain} of {} plain",
            600 - bound
        );
    }

    /// A rate varying by ±30% from window to window (a seeded draw), times `scale`.
    fn bursty(rng: &mut fastrand::Rng, scale: f64) -> f64 {
        scale * (0.7 + 0.6 * rng.f64())
    }

    #[test]
    fn noise_alone_does_not_keep_locality_and_a_real_gain_through_noise_does() {
        let mut kept = 0;
        for seed in 0..40 {
            let mut rng = fastrand::Rng::with_seed(seed);
            let mut ctl = Adaptive::new(Mechanism::Locality);
            // The same on average, windows ±30%.
            run(&mut ctl, 300, |_, _| bursty(&mut rng, 1.0));
            kept += (ctl.settled() == Mechanism::Locality) as u32;
            let mut ctl = Adaptive::new(Mechanism::Locality);
            run(&mut ctl, 300, |_, m| match m {
                Mechanism::Plain => bursty(&mut rng, 1.0),
                Mechanism::Locality => bursty(&mut rng, 2.0),
            });
            assert_eq!(
                (ctl.settled(), ctl.switches()),
                (Mechanism::Locality, 0),
                "seed {seed}"
            );
        }
        // A chance win is one probe in forty or fewer; a run's last probe decides.
        assert!(kept <= 3, "locality kept by chance in {kept} of 40 runs");
    }

    #[test]
    fn a_probe_that_finds_the_other_mechanism_far_worse_stops_at_once() {
        let mut ctl = Adaptive::new(Mechanism::Locality);
        let ran = run(&mut ctl, 200, |_, m| match m {
            Mechanism::Plain => 0.2,
            Mechanism::Locality => 1.0,
        });
        // Two windows of plain stealing a probe (the settle one and the one that tells), not
        // five.
        let plain = ran.iter().filter(|m| **m == Mechanism::Plain).count() as u64;
        assert_eq!(plain, 2 * ctl.probes());
        assert_eq!((ctl.settled(), ctl.switches()), (Mechanism::Locality, 0));
    }

    #[test]
    fn an_empty_window_changes_nothing() {
        let mut ctl = Adaptive::new(Mechanism::Locality);
        for _ in 0..100 {
            ctl.observe(Window::default());
        }
        assert_eq!(ctl.probes(), 0);
        assert_eq!(ctl.current(), Mechanism::Locality);
    }
}
