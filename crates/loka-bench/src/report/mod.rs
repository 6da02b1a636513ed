//! `loka report`: turns result files (JSON lines of [`Record`](crate::record::Record)s) into a
//! Markdown report with SVG charts.
//!
//! Sections, each fed by the records of one kind of run ([`Kind`]):
//! - runtimes (`loka bench compare`): msgs/s per runtime and benchmark, loka/peer ratios;
//! - scaling (`loka bench scale`): speed-up per benchmark, median msgs/s on N workers over that
//!   on 1 worker (horizontal bars, best first, for one N; small multiples for several);
//! - policies (`loka bench policies`): msgs/s per engine, scheduler policy and execution mode;
//!   then, for simulated runs, the predicted time per policy per machine (`predicted.rs`);
//! - execution policies (Panini), when there are Panini runs under `auto` and all-thread or
//!   all-task: per benchmark the median times and auto's improvement (`suites.rs`);
//! - places (LASSI), when there are LASSI runs under a `places` policy: per workload each hint
//!   variant's median time relative to `ignorant`, and the cross-place steals (`suites.rs`);
//! - locality: per benchmark and policy, the shares of activations on the home PU, elsewhere on
//!   the home node and on a remote node (a grid of 100% stacked bars, [`locality`]); then every
//!   numeric telemetry key per policy (steals, steal attempts, parks, unparks and whatever the
//!   runtime adds later);
//! - every run, per file and configuration.
//!
//! Every table shows medians and min–max over repetitions; a median whose repetitions spread
//! over more than 10% of it is marked `±` ([`Summary::noisy`]), with a line under the table
//! saying so. A line that is not a valid record is reported with its file and line number, and
//! the other records are still used.

mod bar_charts;
pub mod charts;
pub mod input;
pub mod locality;
mod machine;
mod predicted;
mod speed;
pub mod stats;
mod suites;
mod summary;
mod telemetry;

pub use input::{load, record_line, Entry, Kind, LineError, Loaded, COMMAND_KEY};
pub use locality::Locality;
pub use machine::MachineInfo;
pub use stats::{
    censored_median, median, median_index, ratio, Summary, NOISY_MARK, NOISY_NOTE, NOISY_SPREAD,
};
pub use summary::MIN_QUICK_SECONDS;

use crate::BenchError;
use bar_charts::Fit;
use charts::{human, Bars, HBars, Panels, Shares};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// What [`write()`] produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    /// `DIR/index.md`.
    pub index: PathBuf,
    /// The SVG charts written next to it.
    pub charts: Vec<PathBuf>,
    /// The records the report is made of.
    pub records: usize,
}

/// Writes `out_dir/index.md` and its SVG charts from the loaded records. The report lists the
/// lines that could not be read ([`Loaded::errors`]); the caller decides whether they are an
/// error.
pub fn write(
    loaded: &Loaded,
    machine: &MachineInfo,
    out_dir: &Path,
) -> Result<Written, BenchError> {
    let io_error = |path: &Path, e: &dyn std::fmt::Display| BenchError::Results {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(out_dir).map_err(|e| io_error(out_dir, &e))?;
    // Charts of an earlier report that this one may not redraw (no data, fewer parts).
    for entry in std::fs::read_dir(out_dir).map_err(|e| io_error(out_dir, &e))? {
        let path = entry.map_err(|e| io_error(out_dir, &e))?.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let ours = CHARTS.iter().any(|stem| {
            name.strip_prefix(stem).is_some_and(|rest| {
                rest == ".svg" || (rest.starts_with('-') && rest.ends_with(".svg"))
            })
        });
        if ours {
            std::fs::remove_file(&path).map_err(|e| io_error(&path, &e))?;
        }
    }
    let mut report = Report {
        md: String::new(),
        out_dir: out_dir.to_owned(),
        charts: Vec::new(),
        peers: Vec::new(),
    };
    report.build(loaded, machine)?;
    let index = out_dir.join("index.md");
    std::fs::write(&index, &report.md).map_err(|e| io_error(&index, &e))?;
    Ok(Written {
        index,
        charts: report.charts,
        records: loaded.entries.len(),
    })
}

/// A benchmark configuration: what the runs of one table row share.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Config {
    bench: String,
    runtime: String,
    engine: String,
    policy: String,
    exec: String,
    workers: usize,
    size: String,
}

impl Config {
    fn of(e: &Entry) -> Config {
        let r = &e.record;
        Config {
            bench: r.bench.clone(),
            runtime: r.runtime.clone(),
            engine: r.engine.clone(),
            policy: r.policy.clone(),
            exec: r.exec.clone(),
            workers: r.workers,
            size: r.size.clone(),
        }
    }

    fn field(&self, field: Field) -> String {
        match field {
            Field::Runtime => self.runtime.clone(),
            Field::Engine => self.engine.clone(),
            Field::Policy => self.policy.clone(),
            Field::Exec => self.exec.clone(),
            Field::Workers => self.workers.to_string(),
            Field::Size => self.size.clone(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Runtime,
    Engine,
    Policy,
    Exec,
    Workers,
    Size,
}

impl Field {
    fn name(self) -> &'static str {
        match self {
            Field::Runtime => "runtime",
            Field::Engine => "engine",
            Field::Policy => "policy",
            Field::Exec => "exec",
            Field::Workers => "workers",
            Field::Size => "size",
        }
    }
}

/// The repetitions of one configuration.
struct Group<'a> {
    config: Config,
    runs: Vec<&'a Entry>,
    msgs: Summary,
    secs: Summary,
    verified: usize,
}

/// Groups entries by configuration, in the order of first appearance.
fn groups<'a>(entries: &[&'a Entry]) -> Vec<Group<'a>> {
    let mut index: HashMap<Config, usize> = HashMap::new();
    let mut runs: Vec<(Config, Vec<&'a Entry>)> = Vec::new();
    for e in entries {
        let config = Config::of(e);
        let i = *index.entry(config.clone()).or_insert_with(|| {
            runs.push((config, Vec::new()));
            runs.len() - 1
        });
        runs[i].1.push(e);
    }
    runs.into_iter()
        .map(|(config, runs)| {
            let msgs: Vec<f64> = runs.iter().map(|e| e.record.msgs_per_sec).collect();
            let secs: Vec<f64> = runs.iter().map(|e| e.record.seconds).collect();
            Group {
                verified: runs.iter().filter(|e| e.record.verified).count(),
                msgs: Summary::of(&msgs).unwrap_or(EMPTY),
                secs: Summary::of(&secs).unwrap_or(EMPTY),
                config,
                runs,
            }
        })
        .collect()
}

const EMPTY: Summary = Summary {
    n: 0,
    median: f64::NAN,
    min: f64::NAN,
    max: f64::NAN,
};

/// Labels for the groups: the `primary` fields joined by `/`, plus, for the groups sharing
/// those, each `extra` field that takes several values within one benchmark (so that one
/// label names the same series in every benchmark).
fn labels(groups: &[Group<'_>], primary: &[Field], extra: &[Field]) -> Vec<String> {
    let base = |c: &Config| {
        primary
            .iter()
            .map(|f| c.field(*f))
            .collect::<Vec<_>>()
            .join("/")
    };
    // For each base: the extra fields that vary inside one benchmark.
    let mut varying: HashMap<String, Vec<Field>> = HashMap::new();
    for f in extra {
        let mut seen: HashMap<(String, String), String> = HashMap::new();
        for g in groups {
            let b = base(&g.config);
            let value = g.config.field(*f);
            let previous = seen.insert((g.config.bench.clone(), b.clone()), value.clone());
            if previous.is_some_and(|p| p != value) {
                let fields = varying.entry(b).or_default();
                if !fields.contains(f) {
                    fields.push(*f);
                }
            }
        }
    }
    groups
        .iter()
        .map(|g| {
            let b = base(&g.config);
            let extras: Vec<String> = varying
                .get(&b)
                .into_iter()
                .flatten()
                .map(|f| format!("{}={}", f.name(), g.config.field(*f)))
                .collect();
            match (b.is_empty(), extras.is_empty()) {
                (_, true) => b,
                (true, false) => extras.join(", "),
                (false, false) => format!("{b} ({})", extras.join(", ")),
            }
        })
        .collect()
}

/// The min–max of a summary, for a chart's whisker; `None` without a value.
fn min_max(s: &Summary) -> Option<(f64, f64)> {
    (s.n > 0 && s.min.is_finite() && s.max.is_finite()).then_some((s.min, s.max))
}

/// Benchmarks (x groups), series and `values[series][bench]` of the groups, for a chart.
#[allow(clippy::type_complexity)]
fn matrix<T>(
    groups: &[Group<'_>],
    labels: &[String],
    value: impl Fn(&Group<'_>) -> T,
) -> (Vec<String>, Vec<String>, Vec<Vec<Option<T>>>) {
    let benches = distinct(groups.iter().map(|g| g.config.bench.as_str()));
    let series = distinct(labels.iter().map(String::as_str));
    let values = series
        .iter()
        .map(|s| {
            benches
                .iter()
                .map(|b| {
                    groups
                        .iter()
                        .zip(labels)
                        .find(|(g, l)| *l == s && &g.config.bench == b)
                        .map(|(g, _)| value(g))
                })
                .collect()
        })
        .collect();
    (benches, series, values)
}

/// A table with one row per benchmark and one column per series.
fn pivot(
    benches: &[String],
    series: &[String],
    cell: impl Fn(&str, &str) -> Option<String>,
) -> String {
    let mut header = vec!["bench"];
    header.extend(series.iter().map(String::as_str));
    let rows: Vec<Vec<String>> = benches
        .iter()
        .map(|b| {
            std::iter::once(b.clone())
                .chain(
                    series
                        .iter()
                        .map(|s| cell(b, s).unwrap_or_else(|| "—".into())),
                )
                .collect()
        })
        .collect();
    table(&header, &rows)
}

/// Distinct values in first-appearance order.
fn distinct<'a>(values: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut seen = HashSet::new();
    values
        .filter(|v| seen.insert(*v))
        .map(str::to_owned)
        .collect()
}

/// A Markdown table; `|` in cells is escaped.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out = format!(
        "| {} |\n|{}\n",
        header.join(" | "),
        header.iter().map(|_| "---|").collect::<String>()
    );
    for row in rows {
        out.push_str("| ");
        out.push_str(&row.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | "));
        out.push_str(" |\n");
    }
    out
}

fn secs(v: f64) -> String {
    if v.is_nan() {
        "—".into()
    } else if v < 10.0 {
        format!("{v:.4}")
    } else {
        format!("{v:.2}")
    }
}

fn range(s: &Summary, fmt: fn(f64) -> String) -> String {
    if s.n <= 1 {
        fmt(s.min)
    } else {
        format!("{} – {}", fmt(s.min), fmt(s.max))
    }
}

fn times(r: Option<f64>) -> String {
    r.map_or_else(|| "—".into(), |r| format!("{r:.2}×"))
}

fn verified(g: &Group<'_>) -> String {
    if g.verified == g.runs.len() {
        format!("{}/{}", g.verified, g.runs.len())
    } else {
        format!("**{}/{}**", g.verified, g.runs.len())
    }
}

/// Every numeric leaf of a telemetry object, nested keys joined with `.` (array items by index).
fn numeric_leaves(prefix: &str, value: &serde_json::Value, out: &mut Vec<(String, f64)>) {
    let join = |key: &str| {
        if prefix.is_empty() {
            key.to_owned()
        } else {
            format!("{prefix}.{key}")
        }
    };
    match value {
        serde_json::Value::Number(n) => {
            if let Some(v) = n.as_f64() {
                out.push((prefix.to_owned(), v));
            }
        }
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                numeric_leaves(&join(k), v, out);
            }
        }
        serde_json::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                numeric_leaves(&join(&i.to_string()), v, out);
            }
        }
        _ => {}
    }
}

/// One benchmark's speed-up on N workers: the ratio of medians, and whether either median is
/// noisy ([`Summary::noisy`]).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Speedup {
    value: f64,
    /// The N-worker runs' min and max msgs/s over the 1-worker median: the whisker.
    range: Option<(f64, f64)>,
    noisy: bool,
}

/// Per group: its median msgs/s over the median msgs/s of the 1-worker group of the same series
/// (`series[i]` names group i's series: the benchmark and whatever else differs but the worker
/// count). `None` without a 1-worker group or with a median that is not positive.
fn speedups(groups: &[Group<'_>], series: &[String]) -> Vec<Option<Speedup>> {
    groups
        .iter()
        .zip(series)
        .map(|(g, s)| {
            let (base, _) = groups
                .iter()
                .zip(series)
                .find(|(o, t)| *t == s && o.config.workers == 1)?;
            Some(Speedup {
                value: ratio(g.msgs.median, base.msgs.median)?,
                range: ratio(g.msgs.min, base.msgs.median).zip(ratio(g.msgs.max, base.msgs.median)),
                noisy: g.msgs.noisy() || base.msgs.noisy(),
            })
        })
        .collect()
}

/// The counters about where work ran: detailed per benchmark. The first four
/// always come first; any key that talks about steals, parking, homes, levels or places is added.
fn is_locality_key(key: &str) -> bool {
    const WORDS: [&str; 9] = [
        "steal", "park", "home", "level", "remote", "local", "place", "migrat", "lifo",
    ];
    WORDS.iter().any(|w| key.contains(w))
}

/// The charts' file names (before `.svg`, or `-N.svg` when split).
const CHARTS: [&str; 5] = ["runtimes", "scale", "policies", "predicted", "locality"];

/// The most bar groups one chart shows; more are split over several charts.
const GROUPS_PER_CHART: usize = 10;

/// Keys that are levels, not counts (percentiles, means, ratios): adding them up over
/// benchmarks means nothing.
fn is_level_key(key: &str) -> bool {
    let last = key.rsplit(['.', '_']).next().unwrap_or(key);
    let percentile =
        last.len() > 1 && last.starts_with('p') && last[1..].chars().all(|c| c.is_ascii_digit());
    percentile
        || ["mean", "avg", "ratio", "fraction", "share"]
            .iter()
            .any(|w| key.contains(w))
}

const CORE_COUNTERS: [&str; 4] = ["steals", "steal_attempts", "parks", "unparks"];

struct Report {
    md: String,
    out_dir: PathBuf,
    charts: Vec<PathBuf>,
    /// loka/peer per peer and benchmark, from the runtimes section, for the summary.
    peers: Vec<summary::PeerRatio>,
}

impl Report {
    fn line(&mut self, text: impl AsRef<str>) {
        self.md.push_str(text.as_ref());
        self.md.push('\n');
    }

    /// Under a table of medians: what `±` means and how many medians carry it, when any median
    /// is made of more than one run.
    fn noisy_note<'s>(&mut self, summaries: impl Iterator<Item = &'s Summary>) {
        let (mut repeated, mut noisy) = (0, 0);
        for s in summaries.filter(|s| s.n > 1) {
            repeated += 1;
            noisy += usize::from(s.noisy());
        }
        if repeated > 0 {
            self.line(format!(
                "\n{NOISY_NOTE} Flagged: {noisy} of {repeated} medians of repeated runs.\n"
            ));
        }
    }

    fn build(&mut self, loaded: &Loaded, machine: &MachineInfo) -> Result<(), BenchError> {
        // The sections first: the summary on top links to them and uses what they computed.
        self.line(format!(
            "\n## About this report\n\nWritten by `loka report` from {} records in {} file(s). \
             Medians over repetitions, min–max in the next column; msgs/s = messages / seconds of \
             the measured part (`docs/internals/benchmarks.md`). Every bar of a chart has a whisker from \
             the minimum to the maximum of its repetitions; a chart shows at most {} series. A \
             chart's y axis is logarithmic when its values span more than 20× (the axis says so).",
            loaded.entries.len(),
            loaded.files.len(),
            charts::MAX_SERIES
        ));
        self.machine(machine);
        self.sources(loaded);
        self.problems(loaded);
        self.runtimes(loaded)?;
        self.scaling(loaded)?;
        self.policies(loaded)?;
        self.predicted(loaded)?;
        self.panini(loaded);
        self.lassi(loaded);
        self.locality(loaded)?;
        self.all_runs(loaded);
        let body = std::mem::take(&mut self.md);
        let summary = self.summary(loaded, machine, &body);
        self.line("# loka benchmark report\n");
        self.md.push_str(&summary);
        self.md.push_str(&body);
        Ok(())
    }

    fn machine(&mut self, m: &MachineInfo) {
        self.line("\n## Machine\n");
        self.line(format!(
            "Where this report was written (the runs' own `topology` and `workers` are in the \
             tables):\n\n- host: `{}`\n- nproc: {}\n- NUMA nodes: {}\n- CPU: {}\n- OS: {}",
            m.hostname,
            m.nproc,
            m.numa_nodes
                .map_or_else(|| "unknown".to_owned(), |n| n.to_string()),
            m.cpu_model,
            m.os
        ));
    }

    fn sources(&mut self, loaded: &Loaded) {
        self.line("\n## Data and the commands that produced it\n");
        let mut rows = Vec::new();
        for (file, count) in &loaded.files {
            let in_file: Vec<&Entry> = loaded.entries.iter().filter(|e| &e.file == file).collect();
            let commands = distinct(in_file.iter().filter_map(|e| e.command.as_deref()));
            let unknown = in_file.iter().filter(|e| e.command.is_none()).count();
            let mut text: Vec<String> = commands.iter().map(|c| format!("`{c}`")).collect();
            if unknown > 0 {
                text.push(format!(
                    "{unknown} record(s) without a command (e.g. `--json` output or \
                     `peers/run-peers.sh`)"
                ));
            }
            rows.push(vec![
                format!("`{}`", file.display()),
                count.to_string(),
                if text.is_empty() {
                    "—".into()
                } else {
                    text.join("<br>")
                },
            ]);
        }
        self.line(table(&["file", "records", "commands"], &rows));
    }

    fn problems(&mut self, loaded: &Loaded) {
        let unverified: Vec<&Entry> = loaded
            .entries
            .iter()
            .filter(|e| !e.record.verified)
            .collect();
        if loaded.errors.is_empty() && unverified.is_empty() {
            return;
        }
        self.line("\n## Problems\n");
        const SHOWN: usize = 50;
        if !loaded.errors.is_empty() {
            self.line(format!(
                "{} line(s) are not valid records and were left out:\n",
                loaded.errors.len()
            ));
            for e in loaded.errors.iter().take(SHOWN) {
                self.line(format!("- `{e}`"));
            }
            if loaded.errors.len() > SHOWN {
                self.line(format!("- … and {} more", loaded.errors.len() - SHOWN));
            }
        }
        if !unverified.is_empty() {
            self.line(format!(
                "\n{} run(s) failed their result check (`verified: false`); they are still in \
                 the tables, marked in the `verified` column:\n",
                unverified.len()
            ));
            for e in unverified.iter().take(SHOWN) {
                let r = &e.record;
                self.line(format!(
                    "- `{}:{}`: {} on {} ({} / {}, {} workers)",
                    e.file.display(),
                    e.line,
                    r.bench,
                    r.runtime,
                    r.engine,
                    r.policy,
                    r.workers
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests;
