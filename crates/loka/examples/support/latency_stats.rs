//! The statistics and the output line of the send-to-handler latency probe, shared by loka's
//! `latency` example (`crates/loka/examples/latency.rs`) and the tokio peer's
//! `peer-tokio-latency` (`peers/rust/tokio/src/bin/latency.rs`, which includes this file), so
//! that both runtimes are reported by one definition.

use std::time::Duration;

/// The sample at quantile `q` of sorted `s` (nearest rank).
fn quantile(s: &[u64], q: f64) -> u64 {
    let rank = ((q * s.len() as f64).ceil() as usize).clamp(1, s.len());
    s[rank - 1]
}

/// Log2 bucket counts (entry `b`: samples in `[2^b, 2^(b+1))` ns, the buckets of loka's
/// telemetry queue-wait histogram), up to the highest non-empty bucket.
fn histogram(s: &[u64]) -> Vec<u64> {
    let mut hist = vec![0u64; 64];
    for &v in s {
        hist[63 - v.max(1).leading_zeros() as usize] += 1;
    }
    let top = hist.iter().rposition(|&c| c > 0).map_or(0, |i| i + 1);
    hist.truncate(top);
    hist
}

/// One mode's result as a JSON object on one line: `head` (fields before `mode`, each followed
/// by a comma, or empty), then the exact percentiles of the sorted samples `s`, `extra` (fields
/// after `max_ns`, each preceded by a comma, or empty), and the histogram.
pub fn json_line(
    head: &str,
    mode: &str,
    workers: usize,
    gap: Duration,
    s: &[u64],
    extra: &str,
) -> String {
    let hist: Vec<String> = histogram(s).iter().map(u64::to_string).collect();
    format!(
        "{{{head}\"mode\":\"{mode}\",\"workers\":{workers},\"samples\":{},\"gap_us\":{},\
         \"p50_ns\":{},\"p90_ns\":{},\"p99_ns\":{},\"p999_ns\":{},\"max_ns\":{}{extra},\
         \"hist\":[{}]}}",
        s.len(),
        gap.as_micros(),
        quantile(s, 0.50),
        quantile(s, 0.90),
        quantile(s, 0.99),
        quantile(s, 0.999),
        s.last().copied().unwrap_or(0),
        hist.join(",")
    )
}
