//! The evidence a probe gathers: the window rates of each side, and the pool of the probes
//! since the last decision, with the tests that decide on it
//! (docs/decisions/0099-auto-pools-its-evidence.md).

use super::{Mechanism, LOCALITY_MARGIN, MEASURED_EACH, NOISY_SPREAD, POOLED_PROBES, SIGNIFICANCE};

/// Window rates of one side (one probe's, or the pool's), at most `N`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Samples<const N: usize> {
    rates: [f64; N],
    n: usize,
}

impl<const N: usize> Samples<N> {
    pub(super) fn new() -> Self {
        Samples {
            rates: [0.0; N],
            n: 0,
        }
    }

    pub(super) fn push(&mut self, rate: f64) {
        if self.n < N {
            self.rates[self.n] = rate;
            self.n += 1;
        }
    }

    pub(super) fn taken(&self) -> &[f64] {
        &self.rates[..self.n]
    }

    pub(super) fn mean(&self) -> f64 {
        self.taken().iter().sum::<f64>() / self.n.max(1) as f64
    }

    /// The sample variance (over n - 1).
    pub(super) fn variance(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let mean = self.mean();
        let ss: f64 = self.taken().iter().map(|r| (r - mean).powi(2)).sum();
        ss / (self.n - 1) as f64
    }

    /// The variance of the mean (sample variance over n).
    pub(super) fn variance_of_mean(&self) -> f64 {
        self.variance() / self.n.max(1) as f64
    }

    /// The coefficient of variation of one window's rate (standard deviation over mean).
    pub(super) fn spread(&self) -> f64 {
        let mean = self.mean();
        if mean > 0.0 {
            self.variance().sqrt() / mean
        } else {
            0.0
        }
    }
}

/// One probe's side.
pub(super) type ProbeSide = Samples<MEASURED_EACH>;

/// The evidence of the probes since the last decision, by mechanism: an inconclusive probe
/// adds to it rather than deciding on four windows a side (see [`POOLED_PROBES`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Pool {
    plain: Samples<{ MEASURED_EACH * POOLED_PROBES }>,
    locality: Samples<{ MEASURED_EACH * POOLED_PROBES }>,
    pub(super) probes: usize,
}

impl Pool {
    pub(super) fn new() -> Pool {
        Pool {
            plain: Samples::new(),
            locality: Samples::new(),
            probes: 0,
        }
    }

    pub(super) fn add(&mut self, plain: &ProbeSide, locality: &ProbeSide) {
        plain.taken().iter().for_each(|&r| self.plain.push(r));
        locality.taken().iter().for_each(|&r| self.locality.push(r));
        self.probes += 1;
    }

    /// The mechanism the evidence shows better, if it does: locality when its mean beats plain
    /// stealing's by [`LOCALITY_MARGIN`] and by [`SIGNIFICANCE`] standard errors, plain
    /// stealing when its mean beats locality's by as many standard errors.
    pub(super) fn verdict(&self) -> Option<Mechanism> {
        let (plain, locality) = (self.plain.mean(), self.locality.mean());
        let error = (self.locality.variance_of_mean() + self.plain.variance_of_mean()).sqrt();
        if locality > plain * (1.0 + LOCALITY_MARGIN) && locality - plain > SIGNIFICANCE * error {
            Some(Mechanism::Locality)
        } else if plain > locality && plain - locality > SIGNIFICANCE * error {
            Some(Mechanism::Plain)
        } else {
            None
        }
    }

    /// Whether one window's rate varies too much for the pool to resolve a gain the size of
    /// the texts' (see [`NOISY_SPREAD`]).
    pub(super) fn noisy(&self) -> bool {
        self.plain.spread().max(self.locality.spread()) > NOISY_SPREAD
    }
}
