//! The repetitions of one runtime on one benchmark summarized: median msgs/s (stopped peer runs
//! counted as slower than any finished one), min–max, the loka/peer ratio, and the table line and
//! JSON object `loka bench compare` prints.

use loka_bench::format::human;
use loka_bench::record::Record;
use loka_bench::report::{censored_median, median_index, ratio, Summary};

/// The repetitions of one runtime on one benchmark.
#[derive(Debug, Clone)]
pub struct RuntimeSummary {
    /// The runtime.
    pub runtime: String,
    /// msgs/s over the finished repetitions (`n` = 0 when every run was stopped).
    pub msgs: Summary,
    /// The median msgs/s over every repetition, a stopped run counting as slower than every
    /// finished one ([`censored_median`]); `None` when at least half were stopped: too slow to
    /// tell. Without stopped runs, `msgs.median`.
    pub median: Option<f64>,
    /// Median seconds of the finished runs (NaN when none finished).
    pub seconds_median: f64,
    /// Verified runs.
    pub verified: usize,
    /// Runs stopped at the cap (`--peer-cap`).
    pub stopped: usize,
    /// The cap they were stopped at, in seconds.
    pub stopped_after: Option<f64>,
    /// The finished run closest to the median msgs/s, else a stopped one (its record's keys go
    /// into `--json` output).
    pub representative: Record,
}

/// Summarises one runtime's runs of one benchmark, the records of stopped runs
/// ([`Record::stopped_after`]) included; `None` without runs.
pub fn summarize(runtime: &str, records: &[Record]) -> Option<RuntimeSummary> {
    let (stopped, finished): (Vec<&Record>, Vec<&Record>) =
        records.iter().partition(|r| r.stopped_after.is_some());
    let msgs: Vec<f64> = finished.iter().map(|r| r.msgs_per_sec).collect();
    let secs: Vec<f64> = finished.iter().map(|r| r.seconds).collect();
    let representative = match median_index(&msgs) {
        Some(i) => finished[i].clone(),
        None => (*stopped.first()?).clone(),
    };
    Some(RuntimeSummary {
        runtime: runtime.to_owned(),
        msgs: Summary::of(&msgs).unwrap_or(Summary {
            n: 0,
            median: f64::NAN,
            min: f64::NAN,
            max: f64::NAN,
        }),
        median: censored_median(&msgs, stopped.len()),
        seconds_median: Summary::of(&secs).map_or(f64::NAN, |s| s.median),
        verified: finished.iter().filter(|r| r.verified).count(),
        stopped: stopped.len(),
        stopped_after: stopped
            .iter()
            .filter_map(|r| r.stopped_after)
            .reduce(f64::min),
        representative,
    })
}

/// loka's median msgs/s over the other runtime's (above 1: loka is faster); `None` when either
/// median is unknown (a runtime too slow for the cap).
pub fn loka_over(loka: &RuntimeSummary, other: &RuntimeSummary) -> Option<f64> {
    ratio(loka.median?, other.median?)
}

/// The `--json` record of a summary: the keys of `loka bench run --json` (from the median
/// run) plus `msgs_per_sec_median`, `msgs_per_sec_min`, `msgs_per_sec_max`,
/// `seconds_median`, `runs`, `verified_runs` and `loka_over_runtime`; with runs stopped at the
/// cap also `stopped_runs` and `stopped_after` (`msgs_per_sec_median` is null when too slow to
/// tell; min and max are those of the finished runs).
pub fn summary_json(s: &RuntimeSummary, loka_ratio: Option<f64>) -> serde_json::Value {
    let mut value = serde_json::to_value(&s.representative).unwrap_or_default();
    if let serde_json::Value::Object(map) = &mut value {
        let finite = |v: f64| v.is_finite().then_some(v);
        map.insert(
            "verified".into(),
            (s.stopped == 0 && s.verified == s.msgs.n).into(),
        );
        map.insert("msgs_per_sec_median".into(), s.median.into());
        map.insert("msgs_per_sec_min".into(), finite(s.msgs.min).into());
        map.insert("msgs_per_sec_max".into(), finite(s.msgs.max).into());
        map.insert("seconds_median".into(), finite(s.seconds_median).into());
        map.insert("runs".into(), (s.msgs.n + s.stopped).into());
        map.insert("verified_runs".into(), s.verified.into());
        map.insert("loka_over_runtime".into(), loka_ratio.into());
        map.insert("msgs_per_sec_spread".into(), s.msgs.spread().into());
        map.insert("noisy".into(), s.msgs.noisy().into());
        if s.stopped > 0 {
            map.insert("stopped_runs".into(), s.stopped.into());
            map.insert("stopped_after".into(), s.stopped_after.into());
        } else {
            map.remove("stopped_after");
        }
    }
    value
}

/// The table's header line. The runtime column fits the longest name, `tokio-current-thread`.
pub fn table_header() -> String {
    format!(
        "{:<22} {:<20} {:>4} {:>13} {:>21} {:>12}",
        "bench", "runtime", "runs", "median msgs/s", "min–max msgs/s", "loka/runtime"
    )
}

/// One table line; runs stopped at the cap are named after it, and a runtime too slow to tell
/// shows `too slow` for its median.
pub fn table_row(bench: &str, s: &RuntimeSummary, loka_ratio: Option<f64>) -> String {
    let ratio = match (s.runtime.as_str(), loka_ratio) {
        ("loka", _) => "—".to_owned(),
        (_, Some(r)) => format!("{r:.2}×"),
        (_, None) => "n/a".to_owned(),
    };
    let median = match s.median {
        Some(m) => format!("{}{}", human(m), s.msgs.flag_aligned()),
        None => "too slow  ".to_owned(),
    };
    let range = match s.msgs.n {
        0 => "—".to_owned(),
        1 => human(s.msgs.min),
        _ => format!("{} – {}", human(s.msgs.min), human(s.msgs.max)),
    };
    let mut line = format!(
        "{:<22} {:<20} {:>4} {:>13} {:>21} {:>12}",
        bench,
        s.runtime,
        s.msgs.n + s.stopped,
        median,
        range,
        ratio
    );
    if s.verified < s.msgs.n {
        line.push_str(&format!("  NOT VERIFIED ({}/{})", s.verified, s.msgs.n));
    }
    if s.stopped > 0 {
        let cap = s.stopped_after.unwrap_or(f64::NAN);
        line.push_str(&format!(
            "  {} of {} run(s) stopped after {cap} s (--peer-cap){}",
            s.stopped,
            s.msgs.n + s.stopped,
            if s.median.is_none() {
                format!(": too slow (> {cap} s)")
            } else {
                String::new()
            }
        ));
    }
    line
}
