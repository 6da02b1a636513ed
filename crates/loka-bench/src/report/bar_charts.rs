//! Bar charts into the report: which series each chart shows (at most
//! [`charts::MAX_SERIES`], split over several charts for the runtimes, the best against the
//! first for policies and predicted times), drawing them and embedding them in `index.md`.

use super::charts::{self, Bars};
use super::{ratio, Report, GROUPS_PER_CHART};
use crate::BenchError;
use std::path::{Path, PathBuf};

/// How a bar chart with more than [`charts::MAX_SERIES`] series is brought down to that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fit {
    /// Several charts, the first series in each and the others in order (runtimes: loka and
    /// five peers a chart).
    Split,
    /// One chart: the first series and the [`charts::MAX_SERIES`] − 1 others with the best
    /// geometric mean of their ratio to it over the groups both have (policies). Series with a
    /// value in fewer than half the first series' groups are not ranked.
    Best {
        /// Whether a higher value is better (msgs/s) or a lower one (time).
        higher: bool,
    },
}

/// The series of each chart `bars` becomes (indices, the first one always in), with a note for
/// the title when there are several.
pub(super) fn fit_series(bars: &Bars, fit: Fit) -> Vec<(Vec<usize>, Option<String>)> {
    let n = bars.series.len();
    let max = charts::MAX_SERIES;
    if n <= max {
        return vec![((0..n).collect(), None)];
    }
    match fit {
        Fit::Split => {
            let rest: Vec<usize> = (1..n).collect();
            let parts = rest.chunks(max - 1).count();
            rest.chunks(max - 1)
                .enumerate()
                .map(|(i, c)| {
                    let mut kept = vec![0];
                    kept.extend_from_slice(c);
                    (kept, Some(format!("series {}/{parts}", i + 1)))
                })
                .collect()
        }
        Fit::Best { higher } => {
            let base = &bars.values[0];
            let covered = base.iter().filter(|v| v.is_some()).count();
            let mut ranked: Vec<(usize, f64)> = (1..n)
                .filter_map(|s| {
                    let logs: Vec<f64> = bars.values[s]
                        .iter()
                        .zip(base)
                        .filter_map(|(v, b)| ratio((*v)?, (*b)?))
                        .filter(|r| *r > 0.0)
                        .map(f64::ln)
                        .collect();
                    (!logs.is_empty() && 2 * logs.len() >= covered).then(|| {
                        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
                        (s, if higher { mean } else { -mean })
                    })
                })
                .collect();
            ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
            let mut kept: Vec<usize> = ranked.iter().take(max - 1).map(|&(s, _)| s).collect();
            kept.sort_unstable();
            kept.insert(0, 0);
            vec![(kept, None)]
        }
    }
}

impl Report {
    /// Writes `NAME.svg`, or `NAME-1.svg`, `NAME-2.svg`, … when the chart is split: at most
    /// [`GROUPS_PER_CHART`] groups each (wide charts are unreadable) and at most
    /// [`charts::MAX_SERIES`] series each, the first series (the reference: loka, the default
    /// policy) in every one. `fit` says how more series are brought down to that.
    pub(super) fn bar_chart(
        &mut self,
        name: &str,
        bars: &Bars,
        fit: Fit,
    ) -> Result<(), BenchError> {
        let parts = fit_series(bars, fit);
        if let (Fit::Best { .. }, [(kept, _)]) = (fit, parts.as_slice()) {
            if kept.len() < bars.series.len() {
                let names: Vec<String> = kept[1..]
                    .iter()
                    .map(|&s| format!("`{}`", bars.series[s]))
                    .collect();
                self.line(format!(
                    "\nThe chart shows `{}` and the {} of the other {} series with the best \
                     geometric mean over it ({}); every series is in the table.",
                    bars.series[0],
                    kept.len() - 1,
                    bars.series.len() - 1,
                    names.join(", ")
                ));
            }
        }
        let chunks = bars.groups.len().div_ceil(GROUPS_PER_CHART).max(1);
        let per_chunk = bars.groups.len().div_ceil(chunks).max(1);
        let total = chunks * parts.len();
        let mut number = 0;
        for (kept, part_title) in &parts {
            for chunk in 0..chunks {
                number += 1;
                let range = chunk * per_chunk..((chunk + 1) * per_chunk).min(bars.groups.len());
                let mut notes = Vec::new();
                if let Some(t) = part_title {
                    notes.push(t.clone());
                }
                if chunks > 1 {
                    notes.push(format!("{}/{chunks}", chunk + 1));
                }
                let (file, title) = if total == 1 {
                    (format!("{name}.svg"), bars.title.clone())
                } else {
                    (
                        format!("{name}-{number}.svg"),
                        format!("{} ({})", bars.title, notes.join(", ")),
                    )
                };
                let pick = |rows: &Vec<Vec<Option<f64>>>| -> Vec<Vec<Option<f64>>> {
                    kept.iter()
                        .map(|&s| {
                            rows.get(s)
                                .map_or_else(Vec::new, |v| v[range.clone()].to_vec())
                        })
                        .collect()
                };
                let part = Bars {
                    title,
                    y_label: bars.y_label.clone(),
                    groups: bars.groups[range.clone()].to_vec(),
                    series: kept.iter().map(|&s| bars.series[s].clone()).collect(),
                    values: pick(&bars.values),
                    ranges: kept
                        .iter()
                        .map(|&s| {
                            bars.ranges
                                .get(s)
                                .map_or_else(Vec::new, |v| v[range.clone()].to_vec())
                        })
                        .collect(),
                };
                let path = self.out_dir.join(&file);
                let drawn = charts::bar_chart(&path, &part);
                self.embed(&file, &part.title, path, drawn)?;
            }
        }
        Ok(())
    }

    /// Draws the chart `file` with `draw` (given its path) and links it.
    pub(super) fn draw_chart(
        &mut self,
        file: &str,
        title: &str,
        draw: impl FnOnce(&Path) -> Result<bool, String>,
    ) -> Result<(), BenchError> {
        let path = self.out_dir.join(file);
        let drawn = draw(&path);
        self.embed(file, title, path, drawn)
    }

    /// Links a chart that was drawn (`Ok(true)`), skips one with nothing to draw (`Ok(false)`), and
    /// turns a drawing failure into an error naming the file.
    pub(super) fn embed(
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
}
