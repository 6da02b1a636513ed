//! The report's speed sections: loka against the peers, scaling over workers, policies.

use super::*;

/// What a peer run stopped at the cap is matched on (its engine is not known when the peer
/// never finished a run): benchmark, runtime, workers, size.
type RunKey = (String, String, usize, String);

impl Report {
    pub(super) fn runtimes(&mut self, loaded: &Loaded) -> Result<(), BenchError> {
        self.line("\n## Runtimes: msgs/s per benchmark\n");
        let mut data: Vec<&Entry> = loaded
            .entries
            .iter()
            .filter(|e| e.kind == Kind::Compare)
            .collect();
        // Peer runs stopped at the cap (`--peer-cap`): slower than every finished run.
        let stops: Vec<&Entry> = loaded
            .stopped
            .iter()
            .filter(|e| e.kind == Kind::Compare)
            .collect();
        if data.is_empty() && stops.is_empty() {
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
            &[
                Field::Engine,
                Field::Policy,
                Field::Exec,
                Field::Workers,
                Field::Size,
            ],
        );
        let key = |c: &Config| -> RunKey {
            (
                c.bench.clone(),
                c.runtime.clone(),
                c.workers,
                c.size.clone(),
            )
        };
        let stop_key = |e: &'_ Entry| {
            let r = &e.record;
            (
                r.bench.clone(),
                r.runtime.clone(),
                r.workers,
                r.size.clone(),
            )
        };
        // Per group: the runs stopped, the cap, and the median counting them
        // ([`censored_median`]; `None`: too slow to tell).
        let stopped: Vec<(usize, f64)> = groups
            .iter()
            .map(|g| {
                let k = key(&g.config);
                let matching: Vec<f64> = stops
                    .iter()
                    .filter(|e| stop_key(e) == k)
                    .filter_map(|e| e.record.stopped_after)
                    .collect();
                (
                    matching.len(),
                    matching.into_iter().fold(f64::NAN, f64::min),
                )
            })
            .collect();
        let medians: Vec<Option<f64>> = groups
            .iter()
            .zip(&stopped)
            .map(|(g, &(k, _))| {
                if k == 0 {
                    Some(g.msgs.median)
                } else {
                    let msgs: Vec<f64> = g.runs.iter().map(|e| e.record.msgs_per_sec).collect();
                    censored_median(&msgs, k)
                }
            })
            .collect();
        let too_slow = |cap: f64| format!("too slow (> {cap} s)");
        // Stopped runs of a runtime and benchmark that no run finished: rows of their own, in
        // the series of that runtime.
        let mut orphans: Vec<(RunKey, usize, f64)> = Vec::new();
        for e in &stops {
            let k = stop_key(e);
            if groups.iter().any(|g| key(&g.config) == k) {
                continue;
            }
            let cap = e.record.stopped_after.unwrap_or(f64::NAN);
            match orphans.iter_mut().find(|(o, ..)| *o == k) {
                Some((_, n, c)) => {
                    *n += 1;
                    *c = c.min(cap);
                }
                None => orphans.push((k, 1, cap)),
            }
        }
        let orphan_label = |(_, runtime, workers, _): &RunKey| {
            groups
                .iter()
                .zip(&labels)
                .find(|(g, _)| g.config.runtime == *runtime && g.config.workers == *workers)
                .map_or_else(|| runtime.clone(), |(_, l)| l.clone())
        };
        let loka_of = |g: &Config| {
            groups.iter().zip(&medians).find(|(l, _)| {
                l.config.runtime == "loka" && l.config.bench == g.bench && l.config.size == g.size
            })
        };
        let ratios: Vec<Option<f64>> = groups
            .iter()
            .zip(&medians)
            .map(|(g, m)| {
                let (_, loka) = loka_of(&g.config)?;
                (g.config.runtime != "loka")
                    .then(|| ratio((*loka)?, (*m)?))
                    .flatten()
            })
            .collect();
        for (i, (g, label)) in groups.iter().zip(&labels).enumerate() {
            if g.config.runtime != "loka" {
                self.peers.push(summary::PeerRatio {
                    peer: label.clone(),
                    bench: g.config.bench.clone(),
                    ratio: ratios[i],
                    too_slow: medians[i].is_none(),
                });
            }
        }
        for (k, ..) in &orphans {
            self.peers.push(summary::PeerRatio {
                peer: orphan_label(k),
                bench: k.0.clone(),
                ratio: None,
                too_slow: true,
            });
        }
        let mut rows = Vec::new();
        for (i, (g, label)) in groups.iter().zip(&labels).enumerate() {
            let (k, cap) = stopped[i];
            rows.push(vec![
                g.config.bench.clone(),
                label.clone(),
                g.config.workers.to_string(),
                if k == 0 {
                    g.runs.len().to_string()
                } else {
                    format!("{} ({k} stopped)", g.runs.len() + k)
                },
                medians[i].map_or_else(
                    || too_slow(cap),
                    |m| format!("{}{}", human(m), g.msgs.flag()),
                ),
                range(&g.msgs, human),
                secs(g.secs.median),
                verified(g),
                if g.config.runtime == "loka" {
                    "—".into()
                } else {
                    times(ratios[i])
                },
            ]);
        }
        for (k, n, cap) in &orphans {
            let row = vec![
                k.0.clone(),
                orphan_label(k),
                k.2.to_string(),
                format!("{n} ({n} stopped)"),
                too_slow(*cap),
                "—".into(),
                "—".into(),
                "0/0".into(),
                "—".into(),
            ];
            // After the rows of its benchmark.
            let at = rows
                .iter()
                .rposition(|r| r[0] == k.0)
                .map_or(rows.len(), |p| p + 1);
            rows.insert(at, row);
        }
        let (benches, mut series, _) = matrix(&groups, &labels, |g| g.msgs.median);
        for k in orphans.iter().map(|(k, ..)| k) {
            let label = orphan_label(k);
            if !series.contains(&label) {
                series.push(label);
            }
        }
        let find = |b: &str, s: &str| {
            groups
                .iter()
                .zip(&labels)
                .position(|(g, l)| l == s && g.config.bench == b)
        };
        let values: Vec<Vec<Option<f64>>> = series
            .iter()
            .map(|s| {
                benches
                    .iter()
                    .map(|b| find(b, s).and_then(|i| medians[i]))
                    .collect()
            })
            .collect();
        let ranges: Vec<Vec<Option<(f64, f64)>>> = series
            .iter()
            .map(|s| {
                benches
                    .iter()
                    .map(|b| find(b, s).and_then(|i| min_max(&groups[i].msgs)))
                    .collect()
            })
            .collect();
        self.line("Median msgs/s (in brackets: loka/runtime):\n");
        self.line(pivot(&benches, &series, |b, s| {
            let Some(i) = find(b, s) else {
                let (_, _, cap) = orphans
                    .iter()
                    .find(|(k, ..)| k.0 == b && orphan_label(k) == s)?;
                return Some(too_slow(*cap));
            };
            let m = &groups[i].msgs;
            Some(match (medians[i], ratios[i]) {
                (None, _) => too_slow(stopped[i].1),
                (Some(median), Some(r)) => format!("{}{} ({r:.2}×)", human(median), m.flag()),
                (Some(median), None) => format!("{}{}", human(median), m.flag()),
            })
        }));
        let capped = data.iter().chain(&stops).any(|e| {
            e.command
                .as_deref()
                .is_some_and(|c| c.contains("--peer-cap"))
        });
        if capped {
            self.line(
                "Peers ran under a time cap (`loka bench compare --peer-cap N`, \
                 docs/guide.md): a run still going after N s was stopped and gave no figure, \
                 and no repetition was started that the runs before it said would end past N s \
                 in all (`runs` shows the runs made). A stopped run counts as slower than every \
                 finished run of the same runtime and benchmark: the median is shown while fewer \
                 than half the runs were stopped, `too slow (> N s)` otherwise.\n",
            );
        }
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
        let (benches, values, ranges) = if shared.is_empty() || shared.len() == benches.len() {
            (benches, values, ranges)
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
                ranges
                    .iter()
                    .map(|v| shared.iter().map(|&b| v[b]).collect())
                    .collect(),
            )
        };
        self.bar_chart(
            "runtimes",
            &Bars {
                title: "msgs/s per runtime (median; whiskers: min–max)".into(),
                y_label: "msgs/s".into(),
                groups: benches,
                series,
                values,
                ranges,
            },
            Fit::Split,
        )
    }

    pub(super) fn scaling(&mut self, loaded: &Loaded) -> Result<(), BenchError> {
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
            &[
                Field::Runtime,
                Field::Engine,
                Field::Policy,
                Field::Exec,
                Field::Size,
            ],
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
                let ranges = vec![series
                    .iter()
                    .map(|s| at(s, w).and_then(|i| speedups[i]).and_then(|s| s.range))
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
                    title: format!("speed-up on {w} workers over 1 worker (whiskers: min–max)"),
                    x_label: "speed-up (×); the line: 1× (no gain)".into(),
                    rows: series.clone(),
                    series: vec![format!("{w} workers")],
                    values,
                    ranges,
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

    pub(super) fn policies(&mut self, loaded: &Loaded) -> Result<(), BenchError> {
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
        let default = loka::PolicyKind::default().to_string();
        self.line(format!(
            "From `loka bench policies`: every workload under every engine and policy, in the \
             execution mode `{task}`; the Panini benchmarks also under the modes `all-thread` and \
             `auto` (`exec=…` in a name; docs/exec-policies.md). `vs {default}` is the median \
             msgs/s over that of the default policy (`{default}`) on the same engine in mode \
             `{task}`. Under `sim/…` the figures are the simulation engine's predictions, in \
             virtual time (docs/simulation.md), never measurements.\n",
            task = loka::ExecMode::AllTask.name()
        ));
        let groups = groups(&data);
        let labels = labels(
            &groups,
            &[Field::Engine, Field::Policy],
            &[Field::Exec, Field::Runtime, Field::Workers, Field::Size],
        );
        let mut rows = Vec::new();
        for (g, label) in groups.iter().zip(&labels) {
            let base = policy_base(&groups, g, &default);
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
        let (_, _, ranges) = matrix(&groups, &labels, |g| min_max(&g.msgs));
        let ranges: Vec<Vec<Option<(f64, f64)>>> = ranges
            .into_iter()
            .map(|v| v.into_iter().map(Option::flatten).collect())
            .collect();
        // At a glance: one row per benchmark, one column per engine/policy.
        let ratios: Vec<Option<f64>> = groups
            .iter()
            .map(|g| {
                let base = policy_base(&groups, g, &default)?;
                ratio(g.msgs.median, base.msgs.median)
            })
            .collect();
        self.line(format!(
            "Median msgs/s (in brackets: over `{default}` on the same engine):\n"
        ));
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
                title: "msgs/s per engine/policy (median; whiskers: min–max)".into(),
                y_label: "msgs/s".into(),
                groups: benches,
                series,
                values,
                ranges,
            },
            Fit::Best { higher: true },
        )
    }
}

/// The group a policies row is compared with: the same benchmark, engine, workers and size under
/// the default policy, in mode all-task when there is such a run, else in the row's own mode.
fn policy_base<'g, 'a>(
    groups: &'g [Group<'a>],
    g: &Group<'_>,
    default: &str,
) -> Option<&'g Group<'a>> {
    let task = loka::ExecMode::AllTask.name();
    let base = |exec: &str| {
        groups.iter().find(|d| {
            d.config.bench == g.config.bench
                && d.config.engine == g.config.engine
                && d.config.policy == default
                && d.config.exec == exec
                && d.config.workers == g.config.workers
                && d.config.size == g.config.size
        })
    };
    base(task).or_else(|| base(&g.config.exec))
}
