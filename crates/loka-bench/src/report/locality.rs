//! Where activations ran, relative to each actor's home PU: the telemetry counters
//! `exec_home_pu` (on the home PU), `exec_home_node` (elsewhere on the home node) and
//! `exec_remote_node` (on another node). Activations of actors without a home count in none.

/// The telemetry keys, in the order of [`PARTS`].
pub const KEYS: [&str; 3] = ["exec_home_pu", "exec_home_node", "exec_remote_node"];

/// What each key counts, for tables and legends.
pub const PARTS: [&str; 3] = ["home PU", "home node, other PU", "remote node"];

/// The three counters of one run, or summed over runs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Locality {
    /// `exec_home_pu`, `exec_home_node`, `exec_remote_node`.
    pub counts: [f64; 3],
}

impl Locality {
    /// The counters in a record's telemetry; `None` when it has none of them (peers, engines
    /// that do not track homes). A missing key among present ones counts 0.
    pub fn of(telemetry: &serde_json::Value) -> Option<Locality> {
        let values = KEYS.map(|k| telemetry.get(k).and_then(serde_json::Value::as_f64));
        values.iter().any(Option::is_some).then(|| Locality {
            counts: values.map(|v| v.unwrap_or(0.0).max(0.0)),
        })
    }

    /// Adds another run's counters.
    pub fn add(&mut self, other: &Locality) {
        for (a, b) in self.counts.iter_mut().zip(other.counts) {
            *a += b;
        }
    }

    /// Each place's share of the activations with a home (together 1); `None` when there are
    /// none.
    pub fn shares(&self) -> Option<[f64; 3]> {
        let total: f64 = self.counts.iter().sum();
        (total > 0.0 && total.is_finite()).then(|| self.counts.map(|c| c / total))
    }
}

/// Shares as whole percentages that add up to exactly 100 (largest remainder: the rounding
/// goes to the parts that lost most to truncation; ties to the earlier part).
pub fn percentages(shares: [f64; 3]) -> [u32; 3] {
    let scaled = shares.map(|s| s.clamp(0.0, 1.0) * 100.0);
    let mut whole = scaled.map(|s| s.floor() as u32);
    let missing = 100u32.saturating_sub(whole.iter().sum());
    let mut order = [0, 1, 2];
    order.sort_by(|&a, &b| {
        (scaled[b] - scaled[b].floor())
            .total_cmp(&(scaled[a] - scaled[a].floor()))
            .then(a.cmp(&b))
    });
    for &i in order.iter().take(missing as usize) {
        whole[i] += 1;
    }
    whole
}

/// A table cell: `home PU / home node / remote node` in whole percent, e.g. `62 / 38 / 0`.
pub fn cell(shares: [f64; 3]) -> String {
    let [a, b, c] = percentages(shares);
    format!("{a} / {b} / {c}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_records_shares_sum_to_100_percent() {
        // The first pingpong run of tests/fixtures/tiny.jsonl.
        let telemetry = serde_json::json!({
            "activations": 1000003, "exec_home_node": 649506, "exec_home_pu": 350497,
            "exec_remote_node": 0, "steals": 31
        });
        let l = Locality::of(&telemetry).unwrap();
        assert_eq!(l.counts, [350497.0, 649506.0, 0.0]);
        let shares = l.shares().unwrap();
        assert!(
            (shares.iter().sum::<f64>() - 1.0).abs() < 1e-12,
            "{shares:?}"
        );
        assert!((shares[0] - 350497.0 / 1000003.0).abs() < 1e-12);
        assert_eq!(percentages(shares), [35, 65, 0]);
        assert_eq!(cell(shares), "35 / 65 / 0");
        // Three equal thirds round to 33 each; the remainder goes to the first.
        let thirds = Locality {
            counts: [1.0, 1.0, 1.0],
        };
        assert_eq!(percentages(thirds.shares().unwrap()), [34, 33, 33]);
        // Every split of 1000 activations shows 100% in whole percent too.
        for a in (0..=1000).step_by(7) {
            for b in (0..=1000 - a).step_by(13) {
                let l = Locality {
                    counts: [a as f64, b as f64, (1000 - a - b) as f64],
                };
                let s = l.shares().unwrap();
                assert!((s.iter().sum::<f64>() - 1.0).abs() < 1e-12);
                assert_eq!(percentages(s).iter().sum::<u32>(), 100, "{a} {b}");
            }
        }
    }

    #[test]
    fn no_counters_or_no_homed_activation_has_no_shares() {
        assert_eq!(Locality::of(&serde_json::json!({"steals": 3})), None);
        let zero = Locality::of(&serde_json::json!({"exec_home_pu": 0})).unwrap();
        assert_eq!(zero.shares(), None);
        let mut pooled = Locality::of(&serde_json::json!({"exec_home_pu": 3})).unwrap();
        pooled.add(&Locality {
            counts: [1.0, 0.0, 4.0],
        });
        assert_eq!(pooled.counts, [4.0, 0.0, 4.0]);
        assert_eq!(pooled.shares(), Some([0.5, 0.0, 0.5]));
    }
}
