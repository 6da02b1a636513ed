//! The report's sections for the suites that compare configurations of their own: Panini's
//! execution modes (docs/exec-policies.md) and LASSI's place hints (docs/places.md). Each renders
//! only when the input has runs it can compare.

use super::*;

/// What Panini published, quoted beside our averages as a reference figure: it is the paper's
/// result on its JVM runtime, never one of our numbers.
pub(super) const PANINI_REFERENCE: &str = "≈ 50% on average over 14 programs (Upadhyaya & \
     Rajan 2014, §5.3: `auto` against both all-thread and all-task, on their JVM runtime)";

/// The execution modes Panini compares, in the order the table shows them.
const MODES: [&str; 3] = ["all-thread", "all-task", "auto"];

/// The hint variants of a LASSI workload, in the order the table shows them; `ignorant` (no
/// hints) is the baseline.
const VARIANTS: [&str; 4] = ["ignorant", "best", "worst", "random"];

/// The telemetry key of the steals that took an actor out of its place.
const CROSS_PLACE_STEALS: &str = "cross_place_steals";

/// Panini's improvement metric: I = (T_default − T_auto) / T_default, where T_default is the
/// time under a baseline mode (all-thread or all-task) and T_auto the time under `auto`. Above
/// 0: `auto` is faster (0.5: it takes half the time); below 0: slower. `None` when a time is not
/// positive and finite.
pub(super) fn improvement(t_default: f64, t_auto: f64) -> Option<f64> {
    (t_default.is_finite() && t_auto.is_finite() && t_default > 0.0 && t_auto > 0.0)
        .then(|| (t_default - t_auto) / t_default)
}

/// The suite of a benchmark: from the registry, else from its name's prefix (a record of a
/// benchmark since renamed).
fn suite_of(bench: &str) -> String {
    crate::all()
        .iter()
        .find(|b| b.name == bench)
        .map(|b| b.suite.to_owned())
        .unwrap_or_else(|| bench.split('-').next().unwrap_or_default().to_owned())
}

/// The loka runs of `suite`'s benchmarks: those of `loka bench policies` when there are any that
/// `usable` accepts, else those of every kind of run; with the phrase saying which.
fn suite_runs<'a>(
    loaded: &'a Loaded,
    suite: &str,
    usable: impl Fn(&[&'a Entry]) -> bool,
) -> (Vec<&'a Entry>, &'static str) {
    let mut suites: HashMap<&str, String> = HashMap::new();
    let all: Vec<&Entry> = loaded
        .entries
        .iter()
        .filter(|e| e.record.runtime == "loka")
        .filter(|e| {
            suites
                .entry(e.record.bench.as_str())
                .or_insert_with(|| suite_of(&e.record.bench))
                == suite
        })
        .collect();
    let policies: Vec<&Entry> = all
        .iter()
        .copied()
        .filter(|e| e.kind == Kind::Policies)
        .collect();
    if usable(&policies) {
        (policies, "`loka bench policies`")
    } else {
        (all, "every loka run")
    }
}

/// A time cell: the median seconds, `±` when noisy.
fn time_cell(s: Option<&Summary>) -> String {
    s.map_or_else(|| "—".into(), |s| format!("{}{}", secs(s.median), s.flag()))
}

/// A share as a whole percentage with its sign (`+12%`, `-3%`, `0%`).
pub(super) fn signed_percent(share: f64) -> String {
    let p = (share * 100.0).round();
    if p == 0.0 {
        "0%".into()
    } else {
        format!("{p:+.0}%")
    }
}

/// A percentage with its sign, `±` when either median is noisy.
fn percent_cell(i: Option<f64>, noisy: bool) -> String {
    i.map_or_else(
        || "—".into(),
        |i| format!("{}{}", signed_percent(i), if noisy { " ±" } else { "" }),
    )
}

/// Whether two groups are the same configuration but for `differs` (the execution mode, or the
/// benchmark's hint variant).
fn same_setting(a: &Config, b: &Config) -> bool {
    a.runtime == b.runtime && a.engine == b.engine && a.workers == b.workers && a.size == b.size
}

/// `engine/policy, N workers` (and the size when not quick).
fn setting(c: &Config) -> String {
    let mut s = format!("{}/{}, {} workers", c.engine, c.policy, c.workers);
    if c.size != "quick" {
        s.push_str(&format!(", {}", c.size));
    }
    s
}

/// How many runs each median is made of: a sentence for under a table.
fn runs_note<'g, 'a: 'g>(groups: impl Iterator<Item = &'g Group<'a>>) -> String {
    let counts: Vec<usize> = groups.map(|g| g.runs.len()).collect();
    match (counts.iter().min(), counts.iter().max()) {
        (Some(1), Some(1)) => "Each time is a single run: its spread is unknown (`--repeat K` \
                               runs more)."
            .to_owned(),
        (Some(lo), Some(hi)) if lo == hi => format!("Each time is the median of {lo} runs."),
        (Some(lo), Some(hi)) => format!("Each time is the median of {lo} to {hi} runs."),
        _ => String::new(),
    }
}

/// One row of the Panini table: a benchmark in one setting under the three modes.
struct PaniniRow<'g> {
    config: &'g Config,
    /// Time summaries under [`MODES`].
    times: [Option<&'g Summary>; 3],
}

impl PaniniRow<'_> {
    /// `auto`'s improvement over the mode `MODES[baseline]`, and whether either median is noisy.
    fn improvement(&self, baseline: usize) -> Option<(f64, bool)> {
        let (base, auto) = (self.times[baseline]?, self.times[2]?);
        Some((
            improvement(base.median, auto.median)?,
            base.noisy() || auto.noisy(),
        ))
    }
}

/// The rows: per benchmark and setting with an `auto` run, the runs of the same setting under
/// the other modes; kept when at least one of them is there.
fn panini_rows<'g>(groups: &'g [Group<'_>]) -> Vec<PaniniRow<'g>> {
    groups
        .iter()
        .filter(|g| g.config.exec == MODES[2])
        .filter_map(|auto| {
            let times = MODES.map(|mode| {
                groups
                    .iter()
                    .find(|g| {
                        g.config.exec == mode
                            && g.config.bench == auto.config.bench
                            && g.config.policy == auto.config.policy
                            && same_setting(&g.config, &auto.config)
                    })
                    .map(|g| &g.secs)
            });
            (times[0].is_some() || times[1].is_some()).then_some(PaniniRow {
                config: &auto.config,
                times,
            })
        })
        .collect()
}

/// A LASSI benchmark name split into its workload and hint variant
/// (`lassi-mergesort-best` → `lassi-mergesort`, `best`).
fn lassi_variant(bench: &str) -> Option<(&str, &str)> {
    let (workload, variant) = bench.rsplit_once('-')?;
    VARIANTS.contains(&variant).then_some((workload, variant))
}

/// The cross-place steals of a run's telemetry (at the top, as the runner flattens the totals,
/// or under `total`).
fn cross_place_steals(telemetry: &serde_json::Value) -> Option<f64> {
    telemetry
        .get(CROSS_PLACE_STEALS)
        .or_else(|| telemetry.get("total")?.get(CROSS_PLACE_STEALS))
        .and_then(serde_json::Value::as_f64)
}

/// One row of the LASSI tables: a workload under one policy, per hint variant.
struct LassiRow<'g> {
    workload: String,
    config: &'g Config,
    /// The groups of [`VARIANTS`].
    variants: [Option<&'g Group<'g>>; 4],
}

impl Report {
    /// "Execution policies (Panini)": per Panini benchmark, the median times under all-thread,
    /// all-task and auto, and auto's improvement over each. Nothing without such runs.
    pub(super) fn panini(&mut self, loaded: &Loaded) {
        let has_rows = |data: &[&Entry]| !panini_rows(&groups(data)).is_empty();
        let (data, from) = suite_runs(loaded, "panini", has_rows);
        let groups = groups(&data);
        let rows = panini_rows(&groups);
        if rows.is_empty() {
            return;
        }
        self.line("\n## Execution policies (Panini)\n");
        self.line(format!(
            "From {from}: each Panini benchmark in one setting (engine, policy, workers) under \
             the execution modes `all-thread` (every actor on a thread of its own), `all-task` \
             (every actor on the workers) and `auto` (the eight heuristics on the actors' \
             declared characteristics; docs/exec-policies.md). Times: median seconds of the \
             measured part. Panini's metric: **I = (T_default − T_auto) / T_default**, with \
             T_default the time under all-thread or all-task: above 0, `auto` is faster (+50%: \
             it takes half the time); below 0, slower. `—`: that mode was not run. {}\n",
            runs_note(groups.iter().filter(|g| {
                rows.iter().any(|r| {
                    g.config.bench == r.config.bench
                        && g.config.policy == r.config.policy
                        && same_setting(&g.config, r.config)
                })
            }))
        ));
        let mut table_rows = Vec::new();
        let mut sums = [(0.0, 0usize); 2];
        for row in &rows {
            let mut cells = vec![row.config.bench.clone(), setting(row.config)];
            cells.extend(row.times.iter().map(|t| time_cell(*t)));
            for (baseline, sum) in sums.iter_mut().enumerate() {
                let i = row.improvement(baseline);
                if let Some((value, _)) = i {
                    sum.0 += value;
                    sum.1 += 1;
                }
                cells.push(percent_cell(i.map(|i| i.0), i.is_some_and(|i| i.1)));
            }
            table_rows.push(cells);
        }
        self.line(table(
            &[
                "bench",
                "setting",
                "all-thread s",
                "all-task s",
                "auto s",
                "I vs all-thread",
                "I vs all-task",
            ],
            &table_rows,
        ));
        self.noisy_note(rows.iter().flat_map(|r| r.times.iter().flatten().copied()));
        let average = |(sum, n): (f64, usize), mode: &str| {
            if n == 0 {
                format!("no benchmark ran both `auto` and `{mode}`")
            } else {
                format!(
                    "**{}** over `{mode}` ({n} benchmark{})",
                    signed_percent(sum / n as f64),
                    if n == 1 { "" } else { "s" }
                )
            }
        };
        self.line(format!(
            "Average improvement of `auto` (the mean of I over the rows above): {}; {}.\n\n\
             Reference, not measured here: the paper reports {PANINI_REFERENCE}.",
            average(sums[0], MODES[0]),
            average(sums[1], MODES[1]),
        ));
    }

    /// "Places (LASSI)": per LASSI workload and `places` policy, each hint variant's median time
    /// relative to `ignorant`'s, and the cross-place steals where the runs count them. Nothing
    /// without runs under a `places` policy.
    pub(super) fn lassi(&mut self, loaded: &Loaded) {
        let under_places = |data: &[&Entry]| {
            data.iter().any(|e| {
                e.record.policy.starts_with("places") && lassi_variant(&e.record.bench).is_some()
            })
        };
        let (data, from) = suite_runs(loaded, "lassi", under_places);
        if !under_places(&data) {
            return;
        }
        let groups = groups(&data);
        let default_policy = loka::PolicyKind::default().to_string();
        let default_engine = loka::EngineKind::default().to_string();
        let task = loka::ExecMode::AllTask.name();
        // One row per workload and setting: the `places` policies, then the default policy on
        // the default engine (hints ignored: the noise floor).
        let mut rows: Vec<LassiRow<'_>> = Vec::new();
        for g in &groups {
            let Some((workload, _)) = lassi_variant(&g.config.bench) else {
                continue;
            };
            let c = &g.config;
            let places = c.policy.starts_with("places");
            let control =
                c.policy == default_policy && c.engine == default_engine && c.exec == task;
            if !(places || control) {
                continue;
            }
            let seen = rows.iter().any(|r| {
                r.workload == workload
                    && r.config.policy == c.policy
                    && r.config.exec == c.exec
                    && same_setting(r.config, c)
            });
            if seen {
                continue;
            }
            let variants = VARIANTS.map(|v| {
                groups.iter().find(|o| {
                    o.config.bench == format!("{workload}-{v}")
                        && o.config.policy == c.policy
                        && o.config.exec == c.exec
                        && same_setting(&o.config, c)
                })
            });
            rows.push(LassiRow {
                workload: workload.to_owned(),
                config: c,
                variants,
            });
        }
        // Per workload: places, places:a, then the control.
        let rank = |r: &LassiRow<'_>| match r.config.policy.as_str() {
            "places" => 0,
            p if p.starts_with("places") => 1,
            _ => 2,
        };
        let order = distinct(rows.iter().map(|r| r.workload.as_str()));
        rows.sort_by_key(|r| (order.iter().position(|w| *w == r.workload), rank(r)));
        let label = |r: &LassiRow<'_>| {
            let s = setting(r.config);
            if rank(r) == 2 {
                format!("{s} (hints ignored)")
            } else {
                s
            }
        };

        self.line("\n## Places (LASSI)\n");
        let mode_a = rows.iter().any(|r| rank(r) == 1);
        self.line(format!(
            "From {from}: each LASSI workload with its four hint variants (`ignorant`: no hints; \
             `best`: actors that share data on one place; `worst`: on different places; \
             `random`: a seeded place per actor; docs/places.md) under `places` (mode B){}, and \
             under the default policy, which ignores hints (its ratios show how far two runs of \
             the same program differ). A variant's cell is its median time over `ignorant`'s in \
             the same row: below 1×, its hints made the workload faster than no hints. On a \
             machine of one place (`loka topo`) every hint names place 0 and the four variants \
             run the same program.{} {}\n",
            if mode_a {
                " and `places:a` (mode A)"
            } else {
                ""
            },
            if mode_a {
                ""
            } else {
                " `places:a` (mode A) needs at least two places and has no runs here."
            },
            runs_note(
                rows.iter()
                    .flat_map(|r| r.variants.iter().flatten().copied())
            )
        ));
        let table_rows: Vec<Vec<String>> = rows
            .iter()
            .map(|r| {
                let base = r.variants[0].map(|g| &g.secs);
                let mut cells = vec![r.workload.clone(), label(r), time_cell(base)];
                cells.extend(r.variants[1..].iter().map(|v| match (v, base) {
                    (Some(v), Some(b)) => ratio(v.secs.median, b.median).map_or_else(
                        || "—".into(),
                        |x| {
                            let noisy = v.secs.noisy() || b.noisy();
                            format!("{x:.2}×{}", if noisy { " ±" } else { "" })
                        },
                    ),
                    _ => "—".into(),
                }));
                cells
            })
            .collect();
        self.line(table(
            &[
                "workload",
                "setting",
                "ignorant s",
                "best / ignorant",
                "worst / ignorant",
                "random / ignorant",
            ],
            &table_rows,
        ));
        self.noisy_note(
            rows.iter()
                .flat_map(|r| r.variants.iter().flatten().map(|g| &g.secs)),
        );
        // The steals that took an actor out of its place, where the runs count them.
        let steals = |g: &Group<'_>| {
            let values: Vec<f64> = g
                .runs
                .iter()
                .filter_map(|e| cross_place_steals(&e.record.telemetry))
                .collect();
            median(&values)
        };
        let counted: Vec<&LassiRow<'_>> = rows
            .iter()
            .filter(|r| rank(r) < 2 && r.variants.iter().flatten().any(|g| steals(g).is_some()))
            .collect();
        if counted.is_empty() {
            self.line(format!(
                "No run counts `{CROSS_PLACE_STEALS}` (the steals that take an actor out of its \
                 place): the records predate the counter.\n"
            ));
            return;
        }
        self.line(format!(
            "Steals that took an actor out of its place (`{CROSS_PLACE_STEALS}` in the \
             telemetry, median over repetitions; the count covers the whole run, set-up \
             included):\n"
        ));
        let mut header = vec!["workload", "setting"];
        header.extend(VARIANTS);
        let steal_rows: Vec<Vec<String>> = counted
            .iter()
            .map(|r| {
                let mut cells = vec![r.workload.clone(), label(r)];
                cells.extend(r.variants.iter().map(|v| {
                    v.and_then(steals)
                        .map_or_else(|| "—".into(), |s| format!("{s:.0}"))
                }));
                cells
            })
            .collect();
        self.line(table(&header, &steal_rows));
    }
}
