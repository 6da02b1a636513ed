//! The statistics every table shows: median, minimum, maximum, ratios of medians, and the flag
//! on a median whose repetitions spread too far.

/// Median, minimum and maximum of a sample (NaN values are ignored).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// How many values the summary is made of.
    pub n: usize,
    /// The median (the mean of the two middle values for an even count).
    pub median: f64,
    /// The smallest value.
    pub min: f64,
    /// The largest value.
    pub max: f64,
}

impl Summary {
    /// Summarises `values`; `None` when there is no (non-NaN) value.
    pub fn of(values: &[f64]) -> Option<Summary> {
        let mut sorted: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        Some(Summary {
            n,
            median,
            min: sorted[0],
            max: sorted[n - 1],
        })
    }
}

/// A median is flagged noisy when the min–max spread of its repetitions exceeds this share of it.
pub const NOISY_SPREAD: f64 = 0.10;

/// The mark a table puts after a noisy median ([`Summary::noisy`]).
pub const NOISY_MARK: &str = "±";

/// The line under a table with flagged medians, saying what the mark means.
pub const NOISY_NOTE: &str = "±: the repetitions' min–max spread exceeds 10% of the median \
                              ((max − min) / median > 0.10); that median is uncertain.";

impl Summary {
    /// `(max − min) / median`: the spread of the repetitions relative to their median. `None`
    /// for fewer than two values or a median that is not positive.
    pub fn spread(&self) -> Option<f64> {
        (self.n > 1 && self.median.is_finite() && self.median > 0.0)
            .then(|| (self.max - self.min) / self.median)
    }

    /// Whether the spread exceeds [`NOISY_SPREAD`] (10% of the median).
    pub fn noisy(&self) -> bool {
        self.spread().is_some_and(|s| s > NOISY_SPREAD)
    }

    /// [`NOISY_MARK`] after a noisy median (`" ±"`), nothing otherwise: for a table cell
    /// `format!("{}{}", median, s.flag())`.
    pub fn flag(&self) -> &'static str {
        if self.noisy() {
            " ±"
        } else {
            ""
        }
    }

    /// [`Summary::flag`] for fixed-width terminal tables: two spaces where there is no flag, so
    /// that flagged and unflagged numbers line up.
    pub fn flag_aligned(&self) -> &'static str {
        if self.noisy() {
            " ±"
        } else {
            "  "
        }
    }
}

/// The median of `values` (NaN values are ignored); `None` when there is none.
pub fn median(values: &[f64]) -> Option<f64> {
    Summary::of(values).map(|s| s.median)
}

/// The median of a sample of `values.len() + below` values of which the `below` others are
/// unknown but smaller than every one given: the msgs/s of runs stopped before their result
/// (`loka bench compare --peer-cap`), slower than every run that finished. Exact while fewer than
/// half the sample is unknown (the middle falls on known values); `None` when at least half is,
/// or when there is no value at all. NaN values are ignored. With `below` = 0, [`median`].
pub fn censored_median(values: &[f64], below: usize) -> Option<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len() + below;
    // The middle index (the lower one for an even count) is `(n - 1) / 2`: it falls on an
    // unknown when `(n - 1) / 2 < below`, that is when `2 · below >= n`.
    if 2 * below >= n {
        return None;
    }
    // The sample ascending: `below` unknowns, then `sorted`.
    let at = |i: usize| sorted[i - below];
    Some(if n % 2 == 1 {
        at(n / 2)
    } else {
        (at(n / 2 - 1) + at(n / 2)) / 2.0
    })
}

/// The index of the value closest to the median (the lower one on a tie): the run that stands
/// for a repeated measurement. `None` when there is no (non-NaN) value.
pub fn median_index(values: &[f64]) -> Option<usize> {
    let m = median(values)?;
    values
        .iter()
        .enumerate()
        .filter(|(_, v)| !v.is_nan())
        .min_by(|(_, a), (_, b)| {
            (*a - m)
                .abs()
                .total_cmp(&(*b - m).abs())
                .then(a.total_cmp(b))
        })
        .map(|(i, _)| i)
}

/// `numerator / denominator`, or `None` when the quotient means nothing (a denominator that is
/// not positive, or a value that is not finite).
pub fn ratio(numerator: f64, denominator: f64) -> Option<f64> {
    (numerator.is_finite() && denominator.is_finite() && denominator > 0.0)
        .then(|| numerator / denominator)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        let s = Summary::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.n, s.median, s.min, s.max), (3, 2.0, 1.0, 3.0));
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!((s.n, s.median, s.min, s.max), (4, 2.5, 1.0, 4.0));
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[f64::NAN, 5.0]), Some(5.0));
    }

    #[test]
    fn median_index_picks_the_middle_run() {
        assert_eq!(median_index(&[10.0, 30.0, 20.0]), Some(2));
        // Even count: 2.5 is the median, 2.0 and 3.0 are as close; the lower wins.
        assert_eq!(median_index(&[4.0, 1.0, 3.0, 2.0]), Some(3));
        assert_eq!(median_index(&[]), None);
    }

    #[test]
    fn a_spread_over_ten_percent_of_the_median_is_flagged() {
        // Median 100: min–max 95–104 is a 9% spread, 94–105 an 11% one.
        let calm = Summary::of(&[95.0, 100.0, 104.0]).unwrap();
        assert!((calm.spread().unwrap() - 0.09).abs() < 1e-12);
        assert!(!calm.noisy());
        assert_eq!((calm.flag(), calm.flag_aligned()), ("", "  "));
        let noisy = Summary::of(&[94.0, 100.0, 105.0]).unwrap();
        assert!((noisy.spread().unwrap() - 0.11).abs() < 1e-12);
        assert!(noisy.noisy());
        assert_eq!((noisy.flag(), noisy.flag_aligned()), (" ±", " ±"));
        // One run has no spread; a median of 0 has no meaningful one.
        assert_eq!(Summary::of(&[5.0]).unwrap().spread(), None);
        assert!(!Summary::of(&[0.0, 0.0, 1.0]).unwrap().noisy());
        assert!(NOISY_NOTE.starts_with(NOISY_MARK) && NOISY_NOTE.contains("10%"));
    }

    #[test]
    fn a_censored_median_is_exact_while_fewer_than_half_are_unknown() {
        // No unknown: the plain median.
        assert_eq!(censored_median(&[3.0, 1.0, 2.0], 0), Some(2.0));
        assert_eq!(
            censored_median(&[4.0, 1.0, 3.0, 2.0], 0),
            median(&[4.0, 1.0, 3.0, 2.0])
        );
        // Three runs, one stopped (slowest): the median is the slower of the two finished.
        assert_eq!(censored_median(&[10.0, 20.0], 1), Some(10.0));
        // Four runs, one stopped: the middle two are known.
        assert_eq!(censored_median(&[10.0, 20.0, 30.0], 1), Some(15.0));
        // Half or more unknown: the median is among them.
        assert_eq!(censored_median(&[10.0], 1), None);
        assert_eq!(censored_median(&[10.0, 20.0], 2), None);
        assert_eq!(censored_median(&[10.0, 20.0], 3), None);
        assert_eq!(censored_median(&[], 1), None);
        assert_eq!(censored_median(&[], 0), None);
        // Five runs, two stopped: index 2 of [?, ?, 5, 6, 7].
        assert_eq!(censored_median(&[7.0, 5.0, 6.0], 2), Some(5.0));
    }

    #[test]
    fn ratio_of_medians() {
        assert_eq!(ratio(6.0, 3.0), Some(2.0));
        assert_eq!(ratio(1.0, 4.0), Some(0.25));
        assert_eq!(ratio(1.0, 0.0), None);
        assert_eq!(ratio(f64::NAN, 1.0), None);
        assert_eq!(ratio(1.0, -2.0), None);
    }
}
