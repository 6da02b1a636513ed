//! The report's telemetry sections: locality shares, counter tables, every run.

use super::*;

impl Report {
    pub(super) fn locality(&mut self, loaded: &Loaded) -> Result<(), BenchError> {
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
        let labels = labels(
            &groups,
            primary,
            &[Field::Exec, Field::Workers, Field::Size],
        );
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
    pub(super) fn counters(&mut self, groups: &[Group<'_>], from: &str) -> Result<(), BenchError> {
        self.line("\n### Telemetry counters\n");
        let labels = labels(
            groups,
            &[Field::Engine, Field::Policy],
            &[Field::Exec, Field::Workers, Field::Size],
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

    pub(super) fn all_runs(&mut self, loaded: &Loaded) {
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
                        c.exec.clone(),
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
                    "exec",
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
