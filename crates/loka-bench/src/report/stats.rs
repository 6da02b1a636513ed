//! The statistics every table shows: median, minimum, maximum and ratios of medians.

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

/// The median of `values` (NaN values are ignored); `None` when there is none.
pub fn median(values: &[f64]) -> Option<f64> {
    Summary::of(values).map(|s| s.median)
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
    fn ratio_of_medians() {
        assert_eq!(ratio(6.0, 3.0), Some(2.0));
        assert_eq!(ratio(1.0, 4.0), Some(0.25));
        assert_eq!(ratio(1.0, 0.0), None);
        assert_eq!(ratio(f64::NAN, 1.0), None);
        assert_eq!(ratio(1.0, -2.0), None);
    }
}
