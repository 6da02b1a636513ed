//! `loka report`: turns result files (JSON lines of [`Record`](crate::record::Record)s) into a
//! Markdown report with SVG charts.
//!
//! Sections, each fed by the records of one kind of run ([`Kind`]):
//! - runtimes (`loka bench compare`): msgs/s per runtime and benchmark, loka/peer ratios;
//! - scaling (`loka bench scale`): speed-up per benchmark, median msgs/s on N workers over that
//!   on 1 worker (horizontal bars, best first, for one N; small multiples for several);
//! - policies (`loka bench policies`): msgs/s per engine and scheduler policy;
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

pub mod charts;
pub mod input;
pub mod locality;
pub mod stats;

pub use input::{load, record_line, Entry, Kind, LineError, Loaded, COMMAND_KEY};
pub use locality::Locality;
pub use stats::{median, median_index, ratio, Summary, NOISY_MARK, NOISY_NOTE, NOISY_SPREAD};

use crate::BenchError;
use charts::{human, Bars, HBars, Panels, Shares};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

/// The machine a report is written on (named at the top of the report).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineInfo {
    /// The host name.
    pub hostname: String,
    /// The processing units this process may use (`nproc`).
    pub nproc: usize,
    /// The CPU model from `/proc/cpuinfo`.
    pub cpu_model: String,
    /// Operating system and kernel.
    pub os: String,
}

impl MachineInfo {
    /// Reads the host name, `nproc`, the CPU model and the OS of this machine (`unknown` for
    /// what cannot be read).
    pub fn detect() -> MachineInfo {
        let read = |path: &str| std::fs::read_to_string(path).ok();
        let hostname = read("/proc/sys/kernel/hostname")
            .or_else(|| read("/etc/hostname"))
            .map(|h| h.trim().to_owned())
            .filter(|h| !h.is_empty())
            .or_else(|| std::env::var("HOSTNAME").ok())
            .unwrap_or_else(|| "unknown".into());
        let cpu_model = read("/proc/cpuinfo")
            .and_then(|text| {
                text.lines()
                    .filter_map(|l| l.split_once(':'))
                    .find(|(k, _)| {
                        let k = k.trim();
                        k == "model name" || k == "Model" || k == "cpu model"
                    })
                    .map(|(_, v)| v.trim().to_owned())
            })
            .unwrap_or_else(|| "unknown".into());
        let distro = read("/etc/os-release").and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_owned())
        });
        let kernel = read("/proc/sys/kernel/osrelease").map(|k| format!("Linux {}", k.trim()));
        let os = match (distro, kernel) {
            (Some(d), Some(k)) => format!("{d}, {k}"),
            (Some(x), None) | (None, Some(x)) => x,
            (None, None) => std::env::consts::OS.to_owned(),
        };
        MachineInfo {
            hostname,
            nproc: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cpu_model,
            os,
        }
    }
}

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
            workers: r.workers,
            size: r.size.clone(),
        }
    }

    fn field(&self, field: Field) -> String {
        match field {
            Field::Runtime => self.runtime.clone(),
            Field::Engine => self.engine.clone(),
            Field::Policy => self.policy.clone(),
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
    Workers,
    Size,
}

impl Field {
    fn name(self) -> &'static str {
        match self {
            Field::Runtime => "runtime",
            Field::Engine => "engine",
            Field::Policy => "policy",
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

/// Benchmarks (x groups), series and `values[series][bench]` of the groups, for a chart.
#[allow(clippy::type_complexity)]
fn matrix(
    groups: &[Group<'_>],
    labels: &[String],
    value: fn(&Group<'_>) -> f64,
) -> (Vec<String>, Vec<String>, Vec<Vec<Option<f64>>>) {
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
const CHARTS: [&str; 4] = ["runtimes", "scale", "policies", "locality"];

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
}

impl Report {
    fn line(&mut self, text: impl AsRef<str>) {
        self.md.push_str(text.as_ref());
        self.md.push('\n');
    }

    /// Writes `NAME.svg`, or `NAME-1.svg`, `NAME-2.svg`, … with at most [`GROUPS_PER_CHART`]
    /// groups each when there are more (wide charts are unreadable).
    fn bar_chart(&mut self, name: &str, bars: &Bars) -> Result<(), BenchError> {
        let chunks = bars.groups.len().div_ceil(GROUPS_PER_CHART).max(1);
        let per_chunk = bars.groups.len().div_ceil(chunks).max(1);
        for chunk in 0..chunks {
            let range = chunk * per_chunk..((chunk + 1) * per_chunk).min(bars.groups.len());
            let (file, title) = if chunks == 1 {
                (format!("{name}.svg"), bars.title.clone())
            } else {
                (
                    format!("{name}-{}.svg", chunk + 1),
                    format!("{} ({}/{chunks})", bars.title, chunk + 1),
                )
            };
            let part = Bars {
                title,
                y_label: bars.y_label.clone(),
                groups: bars.groups[range.clone()].to_vec(),
                series: bars.series.clone(),
                values: bars
                    .values
                    .iter()
                    .map(|v| v[range.clone()].to_vec())
                    .collect(),
            };
            let path = self.out_dir.join(&file);
            let drawn = charts::bar_chart(&path, &part);
            self.embed(&file, &part.title, path, drawn)?;
        }
        Ok(())
    }

    /// Draws the chart `file` with `draw` (given its path) and links it.
    fn draw_chart(
        &mut self,
        file: &str,
        title: &str,
        draw: impl FnOnce(&Path) -> Result<bool, String>,
    ) -> Result<(), BenchError> {
        let path = self.out_dir.join(file);
        let drawn = draw(&path);
        self.embed(file, title, path, drawn)
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

    /// Links a chart that was drawn (`Ok(true)`), skips one with nothing to draw (`Ok(false)`), and
    /// turns a drawing failure into an error naming the file.
    fn embed(
        &mut self,
        file: &str,
        title: &str,
        path: PathBuf,
        drawn: Result<bool, String>,
    ) -> Result<(), BenchError> {
        let drawn = drawn.map_err(|message| BenchError::Results {
            path: path.display().to_string(),
            message,
        })?;
        if drawn {
            self.line(format!("\n![{title}]({file})\n"));
            self.charts.push(path);
        }
        Ok(())
    }

    fn build(&mut self, loaded: &Loaded, machine: &MachineInfo) -> Result<(), BenchError> {
        self.line("# loka benchmark report");
        self.line("");
        self.line(format!(
            "Written by `loka report` from {} records in {} file(s). Medians over repetitions, \
             min–max in the next column; msgs/s = messages / seconds of the measured part \
             (`docs/benchmarks.md`). A chart's y axis is logarithmic when its values span more than 20× (the axis says so).",
            loaded.entries.len(),
            loaded.files.len()
        ));
        self.machine(machine);
        self.sources(loaded);
        self.problems(loaded);
        self.runtimes(loaded)?;
        self.scaling(loaded)?;
        self.policies(loaded)?;
        self.locality(loaded)?;
        self.all_runs(loaded);
        Ok(())
    }

    fn machine(&mut self, m: &MachineInfo) {
        self.line("\n## Machine\n");
        self.line(format!(
            "Where this report was written (the runs' own `topology` and `workers` are in the \
             tables):\n\n- host: `{}`\n- nproc: {}\n- CPU: {}\n- OS: {}",
            m.hostname, m.nproc, m.cpu_model, m.os
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

    fn runtimes(&mut self, loaded: &Loaded) -> Result<(), BenchError> {
        self.line("\n## Runtimes: msgs/s per benchmark\n");
        let mut data: Vec<&Entry> = loaded
            .entries
            .iter()
            .filter(|e| e.kind == Kind::Compare)
            .collect();
        if data.is_empty() {
            data = loaded
                .entries
                .iter()
                .filter(|e| e.kind == Kind::Run)
                .collect();
            if data.is_empty() {
                self.line("No results of `loka bench compare` or `loka bench run`.");
                return Ok(());
            }
            self.line(
                "No peer comparison in the input (`loka bench compare`); loka alone, from \
                 `loka bench run`.\n",
            );
        } else {
            self.line(
                "From `loka bench compare`: loka and each peer run alternately (A B A B), one \
                 benchmark and one repetition at a time. `loka/runtime` is loka's median \
                 msgs/s over the runtime's (above 1: loka is faster).\n",
            );
        }
        // loka first, then the peers in the order they appear.
        data.sort_by_key(|e| e.record.runtime != "loka");
        let order = distinct(loaded.entries.iter().map(|e| e.record.bench.as_str()));
        data.sort_by_key(|e| order.iter().position(|b| *b == e.record.bench));
        let groups = groups(&data);
        let labels = labels(
            &groups,
            &[Field::Runtime],
            &[Field::Engine, Field::Policy, Field::Workers, Field::Size],
        );
        let mut rows = Vec::new();
        for (g, label) in groups.iter().zip(&labels) {
            let loka = groups.iter().find(|l| {
                l.config.runtime == "loka"
                    && l.config.bench == g.config.bench
                    && l.config.size == g.config.size
            });
            rows.push(vec![
                g.config.bench.clone(),
                label.clone(),
                g.config.workers.to_string(),
                g.runs.len().to_string(),
                format!("{}{}", human(g.msgs.median), g.msgs.flag()),
                range(&g.msgs, human),
                secs(g.secs.median),
                verified(g),
                if g.config.runtime == "loka" {
                    "—".into()
                } else {
                    times(loka.and_then(|l| ratio(l.msgs.median, g.msgs.median)))
                },
            ]);
        }
        let (benches, series, values) = matrix(&groups, &labels, |g| g.msgs.median);
        let ratios: Vec<Option<f64>> = groups
            .iter()
            .map(|g| {
                let loka = groups.iter().find(|l| {
                    l.config.runtime == "loka"
                        && l.config.bench == g.config.bench
                        && l.config.size == g.config.size
                })?;
                (g.config.runtime != "loka")
                    .then(|| ratio(loka.msgs.median, g.msgs.median))
                    .flatten()
            })
            .collect();
        self.line("Median msgs/s (in brackets: loka/runtime):\n");
        self.line(pivot(&benches, &series, |b, s| {
            let i = groups
                .iter()
                .zip(&labels)
                .position(|(g, l)| l == s && g.config.bench == b)?;
            let m = &groups[i].msgs;
            Some(match ratios[i] {
                Some(r) => format!("{}{} ({r:.2}×)", human(m.median), m.flag()),
                None => format!("{}{}", human(m.median), m.flag()),
            })
        }));
        self.line("Per runtime, with min–max and verification:\n");
        self.line(table(
            &[
                "bench",
                "runtime",
                "workers",
                "runs",
                "median msgs/s",
                "min–max msgs/s",
                "median s",
                "verified",
                "loka/runtime",
            ],
            &rows,
        ));
        self.noisy_note(groups.iter().map(|g| &g.msgs));
        // Charted: the benchmarks with more than one runtime, when there are any.
        let shared: Vec<usize> = (0..benches.len())
            .filter(|&b| values.iter().filter(|v| v[b].is_some()).count() > 1)
            .collect();
        let (benches, values) = if shared.is_empty() || shared.len() == benches.len() {
            (benches, values)
        } else {
            self.line(
                "The chart shows the benchmarks that more than one runtime ran; the others are \
                 in the tables only.",
            );
            (
                shared.iter().map(|&b| benches[b].clone()).collect(),
                values
                    .iter()
                    .map(|v| shared.iter().map(|&b| v[b]).collect())
                    .collect(),
            )
        };
        self.bar_chart(
            "runtimes",
            &Bars {
                title: "msgs/s per runtime (median)".into(),
                y_label: "msgs/s".into(),
                groups: benches,
                series,
                values,
            },
        )
    }

    fn scaling(&mut self, loaded: &Loaded) -> Result<(), BenchError> {
        self.line("\n## Scaling: speed-up over 1 worker\n");
        let mut data: Vec<&Entry> = loaded
            .entries
            .iter()
            .filter(|e| e.kind == Kind::Scale)
            .collect();
        if data.is_empty() {
            self.line("No results of `loka bench scale`.");
            return Ok(());
        }
        self.line(
            "From `loka bench scale`: each benchmark on 1, 2, … workers. Speed-up on N workers = \
             median msgs/s on N workers / median msgs/s on 1 worker (above 1: more workers are \
             faster; 1: no gain; below 1: more workers cost).\n",
        );
        data.sort_by_key(|e| e.record.workers);
        let order = distinct(loaded.entries.iter().map(|e| e.record.bench.as_str()));
        data.sort_by_key(|e| order.iter().position(|b| *b == e.record.bench));
        let groups = groups(&data);
        // One series per configuration minus the worker count.
        let labels = labels(
            &groups,
            &[],
            &[Field::Runtime, Field::Engine, Field::Policy, Field::Size],
        );
        let names: Vec<String> = groups
            .iter()
            .zip(&labels)
            .map(|(g, label)| {
                if label.is_empty() {
                    g.config.bench.clone()
                } else {
                    format!("{} {label}", g.config.bench)
                }
            })
            .collect();
        let speedups = speedups(&groups, &names);
        let mut counts: Vec<usize> = groups.iter().map(|g| g.config.workers).collect();
        counts.sort_unstable();
        counts.dedup();
        let more: Vec<usize> = counts.iter().copied().filter(|&w| w > 1).collect();
        let at = |name: &str, workers: usize| {
            names
                .iter()
                .zip(&groups)
                .position(|(n, g)| n == name && g.config.workers == workers)
        };
        // Series sorted by their speed-up on the most workers they have one for, best first
        // (none: last).
        let mut series = distinct(names.iter().map(String::as_str));
        let key = |s: &String| {
            counts
                .iter()
                .rev()
                .find_map(|&w| at(s, w).and_then(|i| speedups[i]))
                .map(|s| s.value)
        };
        series.sort_by(|a, b| match (key(a), key(b)) {
            (Some(x), Some(y)) => y.total_cmp(&x),
            (x, y) => y.is_some().cmp(&x.is_some()),
        });
        let cell = |i: usize| {
            speedups[i].map_or_else(
                || "—".into(),
                |s| format!("{:.2}×{}", s.value, if s.noisy { " ±" } else { "" }),
            )
        };
        if more.is_empty() {
            self.line("Only one worker count was measured: no speed-up to show.\n");
            self.noisy_note(groups.iter().map(|g| &g.msgs));
        } else {
            self.line(
                "Speed-up per benchmark, best first (the chart shows these numbers; `±`: the \
                 N-worker or the 1-worker median is noisy, see below; `—`: no 1-worker run):\n",
            );
            let mut header = vec!["bench".to_owned()];
            header.extend(more.iter().map(|w| format!("{w} workers")));
            let header: Vec<&str> = header.iter().map(String::as_str).collect();
            let rows: Vec<Vec<String>> = series
                .iter()
                .map(|s| {
                    std::iter::once(s.clone())
                        .chain(
                            more.iter()
                                .map(|&w| at(s, w).map_or_else(|| "—".into(), cell)),
                        )
                        .collect()
                })
                .collect();
            self.line(table(&header, &rows));
            self.noisy_note(groups.iter().map(|g| &g.msgs));
            if more.len() == 1 {
                let w = more[0];
                let values = vec![series
                    .iter()
                    .map(|s| at(s, w).and_then(|i| speedups[i]).map(|s| s.value))
                    .collect()];
                let bar_labels = vec![series
                    .iter()
                    .map(|s| {
                        at(s, w)
                            .filter(|&i| speedups[i].is_some())
                            .map_or_else(String::new, cell)
                    })
                    .collect()];
                let bars = HBars {
                    title: format!("speed-up on {w} workers over 1 worker (median msgs/s)"),
                    x_label: "speed-up (×); the line: 1× (no gain)".into(),
                    rows: series.clone(),
                    series: vec![format!("{w} workers")],
                    values,
                    labels: bar_labels,
                    reference: Some(1.0),
                };
                self.draw_chart("scale.svg", &bars.title, |path| {
                    charts::hbar_chart(path, &bars)
                })?;
            } else {
                let panels = series
                    .iter()
                    .map(|s| {
                        let points = counts
                            .iter()
                            .filter_map(|&w| {
                                let v = at(s, w).and_then(|i| speedups[i])?;
                                Some((w as f64, v.value, v.noisy))
                            })
                            .collect();
                        (s.clone(), points)
                    })
                    .collect();
                let panels = Panels {
                    title: "speed-up over 1 worker (median msgs/s), per benchmark".into(),
                    subtitle: "x: workers; y: speed-up (×); dashed: ideal (N× on N workers); \
                               grey line: 1× (no gain); hollow point: noisy (±). Best first."
                        .into(),
                    panels,
                    diagonal: true,
                };
                self.draw_chart("scale.svg", &panels.title, |path| {
                    charts::panel_chart(path, &panels)
                })?;
            }
        }
        self.line(
            "<details><summary>Medians, min–max and verification per benchmark and worker \
             count</summary>\n",
        );
        let rows: Vec<Vec<String>> = series
            .iter()
            .flat_map(|s| counts.iter().filter_map(|&w| at(s, w)))
            .map(|i| {
                let g = &groups[i];
                vec![
                    names[i].clone(),
                    g.config.workers.to_string(),
                    g.runs.len().to_string(),
                    format!("{}{}", human(g.msgs.median), g.msgs.flag()),
                    range(&g.msgs, human),
                    secs(g.secs.median),
                    cell(i),
                    verified(g),
                ]
            })
            .collect();
        self.line(table(
            &[
                "bench",
                "workers",
                "runs",
                "median msgs/s",
                "min–max msgs/s",
                "median s",
                "speed-up",
                "verified",
            ],
            &rows,
        ));
        self.line("</details>");
        Ok(())
    }

    fn policies(&mut self, loaded: &Loaded) -> Result<(), BenchError> {
        self.line("\n## Scheduler policies and engines\n");
        let data: Vec<&Entry> = loaded
            .entries
            .iter()
            .filter(|e| e.kind == Kind::Policies)
            .collect();
        if data.is_empty() {
            self.line("No results of `loka bench policies`.");
            return Ok(());
        }
        let default = format!(
            "{}/{}",
            loka::EngineKind::default(),
            loka::PolicyKind::default()
        );
        self.line(format!(
            "From `loka bench policies`: every workload under every engine and policy. \
             `vs {default}` is the median msgs/s over that of the default.\n"
        ));
        let groups = groups(&data);
        let labels = labels(
            &groups,
            &[Field::Engine, Field::Policy],
            &[Field::Runtime, Field::Workers, Field::Size],
        );
        let mut rows = Vec::new();
        for (g, label) in groups.iter().zip(&labels) {
            let base = groups.iter().find(|d| {
                d.config.bench == g.config.bench
                    && format!("{}/{}", d.config.engine, d.config.policy) == default
                    && d.config.workers == g.config.workers
                    && d.config.size == g.config.size
            });
            rows.push(vec![
                g.config.bench.clone(),
                label.clone(),
                g.config.workers.to_string(),
                g.runs.len().to_string(),
                format!("{}{}", human(g.msgs.median), g.msgs.flag()),
                range(&g.msgs, human),
                verified(g),
                times(base.and_then(|b| ratio(g.msgs.median, b.msgs.median))),
            ]);
        }
        let (benches, series, values) = matrix(&groups, &labels, |g| g.msgs.median);
        // At a glance: one row per benchmark, one column per engine/policy.
        let ratios: Vec<Option<f64>> = groups
            .iter()
            .map(|g| {
                let base = groups.iter().find(|d| {
                    d.config.bench == g.config.bench
                        && format!("{}/{}", d.config.engine, d.config.policy) == default
                        && d.config.workers == g.config.workers
                        && d.config.size == g.config.size
                })?;
                ratio(g.msgs.median, base.msgs.median)
            })
            .collect();
        self.line(format!("Median msgs/s (in brackets: over {default}):\n"));
        self.line(pivot(&benches, &series, |b, s| {
            let i = groups
                .iter()
                .zip(&labels)
                .position(|(g, l)| l == s && g.config.bench == b)?;
            let m = &groups[i].msgs;
            Some(match ratios[i] {
                Some(r) => format!("{}{} ({r:.2}×)", human(m.median), m.flag()),
                None => format!("{}{}", human(m.median), m.flag()),
            })
        }));
        self.noisy_note(groups.iter().map(|g| &g.msgs));
        let vs = format!("vs {default}");
        self.line(
            "<details><summary>Medians, min–max and verification per configuration</summary>\n",
        );
        self.line(table(
            &[
                "bench",
                "engine/policy",
                "workers",
                "runs",
                "median msgs/s",
                "min–max msgs/s",
                "verified",
                &vs,
            ],
            &rows,
        ));
        self.line("</details>");
        self.bar_chart(
            "policies",
            &Bars {
                title: "msgs/s per engine/policy (median)".into(),
                y_label: "msgs/s".into(),
                groups: benches,
                series,
                values,
            },
        )
    }

    fn locality(&mut self, loaded: &Loaded) -> Result<(), BenchError> {
        self.line("\n## Locality: where activations ran\n");
        let mut data: Vec<&Entry> = loaded
            .entries
            .iter()
            .filter(|e| e.kind == Kind::Policies && e.record.runtime == "loka")
            .collect();
        let from = if data.is_empty() {
            data = loaded
                .entries
                .iter()
                .filter(|e| e.record.runtime == "loka")
                .collect();
            "every loka run"
        } else {
            "`loka bench policies`"
        };
        if data.is_empty() {
            self.line("No loka runs in the input (peers report no telemetry).");
            return Ok(());
        }
        let groups = groups(&data);
        // The engine goes into the names only when there are several.
        let engines = distinct(groups.iter().map(|g| g.config.engine.as_str()));
        let (primary, title): (&[Field], String) = if engines.len() == 1 {
            (&[Field::Policy], format!(" ({} engine)", engines[0]))
        } else {
            (&[Field::Engine, Field::Policy], String::new())
        };
        let labels = labels(&groups, primary, &[Field::Workers, Field::Size]);
        let benches = distinct(groups.iter().map(|g| g.config.bench.as_str()));
        let columns = distinct(labels.iter().map(String::as_str));
        // Per configuration: the counters summed over its repetitions, as shares.
        let shares: Vec<Option<[f64; 3]>> = groups
            .iter()
            .map(|g| {
                let mut pooled: Option<Locality> = None;
                for l in g
                    .runs
                    .iter()
                    .filter_map(|e| Locality::of(&e.record.telemetry))
                {
                    pooled.get_or_insert_with(Locality::default).add(&l);
                }
                pooled?.shares()
            })
            .collect();
        let find = |b: &str, c: &str| {
            groups
                .iter()
                .zip(&labels)
                .position(|(g, l)| l == c && g.config.bench == b)
        };
        if shares.iter().all(Option::is_none) {
            self.line(format!(
                "No run of {from} counts activations by place (`{}`, `{}`, `{}`): the engine \
                 gave its actors no home.\n",
                locality::KEYS[0],
                locality::KEYS[1],
                locality::KEYS[2]
            ));
        } else {
            self.line(format!(
                "From {from}: where each actor's activations ran, relative to its home PU \
                 (`{}` / `{}` / `{}` in the telemetry), as shares of all activations with a \
                 home, summed over repetitions: **{}** / **{}** / **{}**, in %. One row per \
                 benchmark, one column per policy: the more of the bar is dark, the more the \
                 policy kept work on the PU it calls home; red is work that left the home node. \
                 `—`: no activation with a home.\n",
                locality::KEYS[0],
                locality::KEYS[1],
                locality::KEYS[2],
                locality::PARTS[0],
                locality::PARTS[1],
                locality::PARTS[2],
            ));
            self.line(pivot(&benches, &columns, |b, c| {
                let i = find(b, c)?;
                Some(shares[i].map_or_else(|| "—".into(), locality::cell))
            }));
            let values = benches
                .iter()
                .map(|b| {
                    columns
                        .iter()
                        .map(|c| find(b, c).and_then(|i| shares[i]).map(|s| s.to_vec()))
                        .collect()
                })
                .collect();
            let grid = Shares {
                title: format!("where activations ran, per benchmark and policy{title}"),
                rows: benches.clone(),
                columns: columns.clone(),
                parts: locality::PARTS.iter().map(|p| p.to_string()).collect(),
                values,
            };
            self.draw_chart("locality.svg", &grid.title, |path| {
                charts::share_chart(path, &grid)
            })?;
        }
        self.counters(&groups, from)
    }

    /// Every numeric telemetry key per engine/policy, and per benchmark.
    fn counters(&mut self, groups: &[Group<'_>], from: &str) -> Result<(), BenchError> {
        self.line("\n### Telemetry counters\n");
        let labels = labels(
            groups,
            &[Field::Engine, Field::Policy],
            &[Field::Workers, Field::Size],
        );
        let mut keys: Vec<String> = Vec::new();
        let medians: Vec<BTreeMap<String, f64>> = groups
            .iter()
            .map(|g| {
                let mut samples: BTreeMap<String, Vec<f64>> = BTreeMap::new();
                for e in &g.runs {
                    let mut leaves = Vec::new();
                    numeric_leaves("", &e.record.telemetry, &mut leaves);
                    for (k, v) in leaves {
                        samples.entry(k).or_default().push(v);
                    }
                }
                samples
                    .into_iter()
                    .filter_map(|(k, v)| {
                        if !keys.contains(&k) {
                            keys.push(k.clone());
                        }
                        median(&v).map(|m| (k, m))
                    })
                    .collect()
            })
            .collect();
        if keys.is_empty() {
            self.line("No telemetry counters in the input (peers report none).");
            return Ok(());
        }
        keys.sort_by_key(|k| {
            (
                CORE_COUNTERS
                    .iter()
                    .position(|c| c == k)
                    .unwrap_or(usize::MAX),
                !is_locality_key(k),
                k.clone(),
            )
        });
        let series = distinct(labels.iter().map(String::as_str));
        // Per policy: the sum over benchmarks of each counter's per-benchmark median; for a
        // level (a percentile, mean or ratio) the median over benchmarks instead.
        let totals: Vec<BTreeMap<&str, f64>> = series
            .iter()
            .map(|s| {
                let mut samples: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
                for (m, _) in medians.iter().zip(&labels).filter(|(_, l)| *l == s) {
                    for k in &keys {
                        if let Some(v) = m.get(k) {
                            samples.entry(k.as_str()).or_default().push(*v);
                        }
                    }
                }
                samples
                    .into_iter()
                    .filter_map(|(k, v)| {
                        let total = if is_level_key(k) {
                            median(&v)?
                        } else {
                            v.iter().sum()
                        };
                        Some((k, total))
                    })
                    .collect()
            })
            .collect();
        self.line(format!(
            "From {from}: the telemetry counters of the runs (`System::stats()`), per \
             engine/policy the sum over benchmarks of each counter's median over repetitions \
             (for levels such as percentiles, marked *median*: the median over benchmarks). \
             Every numeric key is listed; nested keys are joined with `.`.\n"
        ));
        let mut header = vec!["counter"];
        header.extend(series.iter().map(String::as_str));
        let rows: Vec<Vec<String>> = keys
            .iter()
            .map(|k| {
                let mut row = vec![if is_level_key(k) {
                    format!("`{k}` (*median*)")
                } else {
                    format!("`{k}`")
                }];
                row.extend(
                    totals
                        .iter()
                        .map(|t| t.get(k.as_str()).map_or_else(|| "—".into(), |v| human(*v))),
                );
                row
            })
            .collect();
        self.line(table(&header, &rows));
        // Per benchmark: the counters about where work ran.
        let detail_keys: Vec<String> = keys
            .iter()
            .filter(|k| CORE_COUNTERS.contains(&k.as_str()) || is_locality_key(k))
            .filter(|k| {
                totals
                    .iter()
                    .any(|t| t.get(k.as_str()).is_some_and(|v| *v > 0.0))
            })
            .cloned()
            .collect();
        if detail_keys.is_empty() {
            return Ok(());
        }
        self.line(
            "<details><summary>Per benchmark (medians over repetitions; the locality counters)\
             </summary>\n",
        );
        let mut header = vec!["bench", "engine/policy"];
        header.extend(detail_keys.iter().map(String::as_str));
        let rows: Vec<Vec<String>> = groups
            .iter()
            .zip(&labels)
            .zip(&medians)
            .map(|((g, label), m)| {
                let mut row = vec![g.config.bench.clone(), label.clone()];
                row.extend(
                    detail_keys
                        .iter()
                        .map(|k| m.get(k).map_or_else(|| "—".into(), |v| human(*v))),
                );
                row
            })
            .collect();
        self.line(table(&header, &rows));
        self.line("</details>");
        Ok(())
    }

    fn all_runs(&mut self, loaded: &Loaded) {
        self.line("\n## Every configuration\n");
        self.line("<details><summary>Per file: every configuration with its runs</summary>\n");
        for (file, _) in &loaded.files {
            let data: Vec<&Entry> = loaded.entries.iter().filter(|e| &e.file == file).collect();
            if data.is_empty() {
                continue;
            }
            self.line(format!("`{}`:\n", file.display()));
            let groups = groups(&data);
            let rows: Vec<Vec<String>> = groups
                .iter()
                .map(|g| {
                    let c = &g.config;
                    vec![
                        c.bench.clone(),
                        c.runtime.clone(),
                        c.engine.clone(),
                        c.policy.clone(),
                        c.workers.to_string(),
                        c.size.clone(),
                        g.runs.len().to_string(),
                        verified(g),
                        format!("{}{}", human(g.msgs.median), g.msgs.flag()),
                        range(&g.msgs, human),
                        secs(g.secs.median),
                    ]
                })
                .collect();
            self.line(table(
                &[
                    "bench",
                    "runtime",
                    "engine",
                    "policy",
                    "workers",
                    "size",
                    "runs",
                    "verified",
                    "median msgs/s",
                    "min–max msgs/s",
                    "median s",
                ],
                &rows,
            ));
            self.noisy_note(groups.iter().map(|g| &g.msgs));
        }
        self.line("</details>");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Record;

    fn record(bench: &str, runtime: &str, policy: &str, workers: usize, msgs: f64) -> Record {
        Record {
            runtime: runtime.into(),
            bench: bench.into(),
            engine: if runtime == "loka" {
                "actor-centric".into()
            } else {
                "tokio".into()
            },
            policy: policy.into(),
            topology: "host".into(),
            workers,
            size: "quick".into(),
            messages: 1_000_000,
            seconds: 1e6 / msgs,
            msgs_per_sec: msgs,
            verified: true,
            telemetry: if runtime == "loka" {
                serde_json::json!({"steals": 4, "steal_attempts": 40, "parks": 3, "unparks": 2,
                                   "steals_by_level": [3, 1], "check": "ok",
                                   "exec_home_pu": 6, "exec_home_node": 3,
                                   "exec_remote_node": 1})
            } else {
                serde_json::json!({})
            },
            repeat: 0,
        }
    }

    /// A results file with every kind of run, its command on each line, and two bad lines.
    fn fixture() -> String {
        let mut lines = Vec::new();
        let run = "loka bench run all --size quick --repeat 3";
        for (i, m) in [3e7, 2e7, 2.5e7].into_iter().enumerate() {
            let mut r = record("pingpong", "loka", "cls", 2, m);
            r.repeat = i;
            lines.push(record_line(&r, Some(run)));
        }
        let compare = "loka bench compare pingpong fib --repeat 3";
        for bench in ["pingpong", "fib"] {
            for rep in 0..3 {
                for (runtime, m) in [("loka", 2e7), ("caf", 1e7), ("actix-1thread", 4e6)] {
                    let mut r = record(bench, runtime, "default", 2, m * (1.0 + rep as f64 / 10.0));
                    if runtime == "loka" {
                        r.policy = "cls".into();
                    }
                    if runtime == "actix-1thread" {
                        r.workers = 1;
                    }
                    r.repeat = rep;
                    lines.push(record_line(&r, Some(compare)));
                }
            }
        }
        lines.push("{\"bench\": \"pingpong\", \"runtime\": ".into()); // cut off mid-write
        let scale = "loka bench scale fib";
        for workers in [1, 2] {
            lines.push(record_line(
                &record("fib", "loka", "cls", workers, 5e6 * workers as f64),
                Some(scale),
            ));
        }
        lines.push("{\"bench\": \"fib\"}".into()); // valid JSON, not a record
        let policies = "loka bench policies all";
        for bench in ["pingpong", "fib"] {
            lines.push(record_line(
                &record(bench, "loka", "cls", 2, 2e7),
                Some(policies),
            ));
        }
        lines.join("\n") + "\n"
    }

    fn machine() -> MachineInfo {
        MachineInfo {
            hostname: "testhost".into(),
            nproc: 2,
            cpu_model: "Test CPU".into(),
            os: "Linux".into(),
        }
    }

    #[test]
    fn report_from_a_fixture_with_bad_lines() {
        let dir = std::env::temp_dir().join(format!("loka-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let input = dir.join("results.jsonl");
        std::fs::write(&input, fixture()).unwrap();
        let loaded = load(std::slice::from_ref(&input)).unwrap();
        assert_eq!(loaded.entries.len(), 3 + 18 + 2 + 2);
        let errors: Vec<String> = loaded.errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(errors.len(), 2, "{errors:?}");
        let file = input.display().to_string();
        assert!(errors[0].starts_with(&format!("{file}:22: ")), "{errors:?}");
        assert!(errors[1].starts_with(&format!("{file}:25: ")), "{errors:?}");

        let out = dir.join("report");
        let written = write(&loaded, &machine(), &out).unwrap();
        let md = std::fs::read_to_string(&written.index).unwrap();
        for needle in [
            "testhost",
            "Test CPU",
            "nproc: 2",
            "`loka bench compare pingpong fib --repeat 3`",
            "## Problems",
            &format!("{file}:22"),
            "## Runtimes",
            "runtimes.svg",
            "scale.svg",
            "policies.svg",
            "locality.svg",
            "`steals_by_level.0`",
        ] {
            assert!(md.contains(needle), "missing {needle:?} in\n{md}");
        }
        // Compare: loka's median 2.2e7 over caf's 1.1e7; caf's 10M–12M is an 18% spread.
        assert!(
            md.contains("| fib | caf | 2 | 3 | 11.0M ± | 10.0M – 12.0M | 0.0909 | 3/3 | 2.00× |"),
            "{md}"
        );
        assert!(md.contains(NOISY_NOTE), "{md}");
        // Scaling: fib 5M msgs/s on 1 worker, 10M on 2: speed-up 2, in the table and the chart.
        assert!(
            md.contains("| bench | 2 workers |\n|---|---|\n| fib | 2.00× |"),
            "{md}"
        );
        assert!(
            md.contains("| fib | 2 | 1 | 10.0M | 10.0M | 0.1000 | 2.00× | 1/1 |"),
            "{md}"
        );
        let scale_svg = std::fs::read_to_string(out.join("scale.svg")).unwrap();
        assert!(scale_svg.contains("2.00×") && scale_svg.contains("fib"));
        // Locality: 6 / 3 / 1 activations on the home PU / home node / remote node.
        assert!(
            md.contains("| bench | cls |\n|---|---|\n| pingpong | 60 / 30 / 10 |"),
            "{md}"
        );
        let locality_svg = std::fs::read_to_string(out.join("locality.svg")).unwrap();
        assert!(locality_svg.contains("remote node") && locality_svg.contains("60%"));
        // The command-less check string is not a counter; the numeric ones are.
        assert!(!md.contains("`check`") && md.contains("`steal_attempts`"));
        for chart in ["runtimes.svg", "scale.svg", "policies.svg", "locality.svg"] {
            assert!(written.charts.contains(&out.join(chart)), "{chart}");
            let svg = std::fs::read_to_string(out.join(chart)).unwrap();
            assert!(svg.starts_with("<svg"), "{chart}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn entry(record: Record, kind: Kind) -> Entry {
        Entry {
            record,
            file: "f".into(),
            line: 1,
            command: None,
            kind,
        }
    }

    #[test]
    fn speedup_is_the_ratio_to_the_one_worker_median() {
        let mut entries = Vec::new();
        // fib: medians 12 (1 worker) and 24 (2 workers); means would give 17.3 and 22.7.
        for (workers, msgs) in [(1, [10.0, 12.0, 30.0]), (2, [18.0, 24.0, 26.0])] {
            for m in msgs {
                entries.push(entry(record("fib", "loka", "cls", workers, m), Kind::Scale));
            }
        }
        // pingpong: 4 workers only, no 1-worker base.
        entries.push(entry(
            record("pingpong", "loka", "cls", 4, 5.0),
            Kind::Scale,
        ));
        let refs: Vec<&Entry> = entries.iter().collect();
        let g = groups(&refs);
        let names: Vec<String> = g.iter().map(|g| g.config.bench.clone()).collect();
        let s = speedups(&g, &names);
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].map(|s| s.value), Some(1.0));
        assert_eq!(s[1].map(|s| s.value), Some(2.0));
        assert_eq!(s[2], None);
        // 10–30 around 12 is noisy, so both fib speed-ups carry the flag.
        assert!(s[0].unwrap().noisy && s[1].unwrap().noisy);

        // With three worker counts the report draws one small chart per benchmark.
        for (workers, m) in [(1, 10.0), (2, 18.0), (3, 27.0)] {
            entries.push(entry(
                record("sieve", "loka", "cls", workers, m),
                Kind::Scale,
            ));
        }
        let loaded = Loaded {
            entries,
            ..Loaded::default()
        };
        let dir = std::env::temp_dir().join(format!("loka-report-scale-{}", std::process::id()));
        let written = write(&loaded, &machine(), &dir).unwrap();
        let md = std::fs::read_to_string(&written.index).unwrap();
        assert!(
            md.contains(
                "| bench | 2 workers | 3 workers | 4 workers |\n|---|---|---|---|\n\
                         | sieve | 1.80× | 2.70× | — |\n| fib | 2.00× ± | — | — |\n\
                         | pingpong | — | — | — |"
            ),
            "{md}"
        );
        let svg = std::fs::read_to_string(dir.join("scale.svg")).unwrap();
        assert!(svg.contains("sieve") && svg.contains("pingpong"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `crates/loka-cli/tests/fixtures/tiny.jsonl`: a few real records of every kind of run.
    #[test]
    fn charts_from_the_cli_fixture() {
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../loka-cli/tests/fixtures/tiny.jsonl");
        let loaded = load(std::slice::from_ref(&fixture)).unwrap();
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
        let dir = std::env::temp_dir().join(format!("loka-report-tiny-{}", std::process::id()));
        let written = write(&loaded, &machine(), &dir).unwrap();
        for chart in ["scale.svg", "locality.svg"] {
            let path = dir.join(chart);
            assert!(
                written.charts.contains(&path),
                "{chart}: {:?}",
                written.charts
            );
            let svg = std::fs::read_to_string(&path).unwrap();
            assert!(
                svg.starts_with("<svg") && svg.contains("pingpong"),
                "{chart}"
            );
        }
        let locality = std::fs::read_to_string(dir.join("locality.svg")).unwrap();
        assert!(locality.contains("cls") && locality.contains("home PU"));
        // Every shares cell of the report's locality table adds up to 100.
        let md = std::fs::read_to_string(&written.index).unwrap();
        let section = &md[md.find("## Locality").unwrap()..];
        let cells: Vec<u32> = section
            .lines()
            .take_while(|l| !l.starts_with("### "))
            .filter(|l| l.starts_with("| ") && l.contains(" / "))
            .flat_map(|l| {
                l.split('|')
                    .filter(|c| c.contains(" / "))
                    .map(str::to_owned)
            })
            .map(|c| c.split('/').map(|p| p.trim().parse::<u32>().unwrap()).sum())
            .collect();
        assert!(!cells.is_empty(), "{section}");
        assert!(cells.iter().all(|&sum| sum == 100), "{cells:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn levels_are_not_added_up() {
        assert!(is_level_key("queue_wait_ns_p99") && is_level_key("queue_wait_ns_p50"));
        assert!(is_level_key("steal_ratio") && is_level_key("mean_batch"));
        assert!(!is_level_key("steals") && !is_level_key("parks") && !is_level_key("hpu_pushes"));
        assert!(!is_level_key("steals_by_level.0"));
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it() {
        let err = load(&[PathBuf::from("/nonexistent/r.jsonl")]).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/r.jsonl"), "{err}");
    }

    #[test]
    fn labels_show_only_what_differs() {
        let entries: Vec<Entry> = [
            record("fib", "loka", "cls", 2, 1.0),
            record("fib", "caf", "default", 2, 1.0),
            record("fib", "actix", "default", 1, 1.0),
            record("fib", "actix", "default", 2, 1.0),
        ]
        .into_iter()
        .map(|record| entry(record, Kind::Compare))
        .collect();
        let refs: Vec<&Entry> = entries.iter().collect();
        let g = groups(&refs);
        assert_eq!(
            labels(&g, &[Field::Runtime], &[Field::Workers, Field::Size]),
            ["loka", "caf", "actix (workers=1)", "actix (workers=2)"]
        );
    }
}
