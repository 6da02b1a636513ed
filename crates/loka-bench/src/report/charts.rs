//! SVG charts (plotters' SVG backend only: no font or system libraries needed).

use plotters::coord::ranged1d::{
    AsRangedCoord, DefaultFormatting, KeyPointHint, Ranged, ValueFormatter,
};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{self, HPos, VPos};
use std::ops::Range;
use std::path::Path;

/// A linear `f64` axis whose labels and grid lines sit exactly at the given points (bar groups,
/// worker counts), with a label formatter supplied by the chart.
#[derive(Debug, Clone)]
struct KeyedAxis {
    range: Range<f64>,
    keys: Vec<f64>,
}

impl Ranged for KeyedAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.range.end - self.range.start;
        let fraction = if span > 0.0 {
            (value - self.range.start) / span
        } else {
            0.5
        };
        limit.0 + (fraction * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, _hint: Hint) -> Vec<f64> {
        self.keys.clone()
    }

    fn range(&self) -> Range<f64> {
        self.range.clone()
    }
}

/// Grouped bars: one group per x label, one bar per series in each group.
#[derive(Debug, Clone, PartialEq)]
pub struct Bars {
    /// The chart's title.
    pub title: String,
    /// The y axis' description.
    pub y_label: String,
    /// The groups along the x axis.
    pub groups: Vec<String>,
    /// The series (one colour each, in the legend).
    pub series: Vec<String>,
    /// `values[series][group]`; `None` or a value ≤ 0 draws no bar.
    pub values: Vec<Vec<Option<f64>>>,
    /// `ranges[series][group]`: the min–max of the repetitions behind that bar, drawn as a
    /// whisker over it (missing or `None`: no whisker; min = max: a single tick).
    pub ranges: Vec<Vec<Option<(f64, f64)>>>,
}

/// The most series one chart may show: more colours than this cannot be told apart. The
/// report splits or reduces its series to fit ([`bar_chart`] refuses more).
pub const MAX_SERIES: usize = 6;

/// The error of a chart given more than [`MAX_SERIES`] series.
fn too_many_series(n: usize) -> String {
    format!("{n} series in one chart; at most {MAX_SERIES} can be told apart")
}

/// The whisker of `ranges[series][group]`, when there is one with positive ends.
fn whisker(ranges: &[Vec<Option<(f64, f64)>>], series: usize, group: usize) -> Option<(f64, f64)> {
    let (lo, hi) = (*ranges.get(series)?.get(group)?)?;
    (lo.is_finite() && hi.is_finite() && lo > 0.0 && hi >= lo).then_some((lo, hi))
}

/// Every value a chart's axis must hold: the bars and both ends of their whiskers.
fn extent<'a>(
    values: &'a [Vec<Option<f64>>],
    ranges: &'a [Vec<Option<(f64, f64)>>],
) -> impl Iterator<Item = f64> + 'a {
    values.iter().flatten().flatten().copied().chain(
        ranges
            .iter()
            .flatten()
            .flatten()
            .flat_map(|&(lo, hi)| [lo, hi]),
    )
}

const WIDTH: u32 = 960;
const HEIGHT: u32 = 540;
/// A log y axis when the values span more than this factor; linear from 0 otherwise.
const LOG_SPAN: f64 = 20.0;

/// The y axis for these values: `None` when no value is positive (nothing to draw).
fn y_axis(values: impl Iterator<Item = f64>) -> Option<YAxis> {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if hi <= 0.0 {
        None
    } else if hi / lo > LOG_SPAN {
        Some(YAxis::Log(lo / 2.0, hi * 3.0))
    } else {
        Some(YAxis::Linear(hi * 1.25))
    }
}

#[derive(Debug, Clone, Copy)]
enum YAxis {
    /// From 0 to the bound.
    Linear(f64),
    /// Logarithmic between the bounds.
    Log(f64, f64),
}

impl YAxis {
    fn describe(self, label: &str) -> String {
        match self {
            YAxis::Linear(_) => label.to_owned(),
            YAxis::Log(..) => format!("{label} (log scale)"),
        }
    }
}

pub use crate::format::human;

fn draw_error(e: impl std::fmt::Display) -> String {
    format!("drawing the chart: {e}")
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Draws grouped bars with their min–max whiskers into the SVG file `path` (a log y axis when
/// the values span more than 20×). Returns `false` (and writes nothing) when there is no
/// positive value to show, an error for more than [`MAX_SERIES`] series.
pub fn bar_chart(path: &Path, bars: &Bars) -> Result<bool, String> {
    if bars.series.len() > MAX_SERIES {
        return Err(too_many_series(bars.series.len()));
    }
    let Some(axis) = y_axis(extent(&bars.values, &bars.ranges)) else {
        return Ok(false);
    };
    let n = bars.groups.len().max(1);
    let longest = bars
        .groups
        .iter()
        .map(|g| g.chars().count())
        .max()
        .unwrap_or(0);
    let per_group = (longest as u32 * 8 + 20).max(40 + 16 * bars.series.len() as u32);
    let plot_width = (WIDTH - 200).max(per_group * n as u32 + 120);
    let side = legend_width(&bars.series);
    let root = SVGBackend::new(path, (plot_width + side, HEIGHT)).into_drawing_area();
    root.fill(&WHITE).map_err(draw_error)?;
    let (plot, legend_area) = root.split_horizontally(plot_width);
    match axis {
        YAxis::Linear(hi) => draw_bars(&plot, bars, axis, 0.0..hi, 0.0)?,
        YAxis::Log(lo, hi) => draw_bars(&plot, bars, axis, (lo..hi).log_scale(), lo)?,
    }
    legend(&legend_area, &bars.series)?;
    root.present().map_err(draw_error)?;
    Ok(true)
}

/// The width of the legend beside a chart.
fn legend_width(names: &[String]) -> u32 {
    let longest = names.iter().map(|n| n.chars().count()).max().unwrap_or(0) as u32;
    (longest * 8 + 60).clamp(120, 420)
}

/// Draws the legend (series colours and names) in its own area beside the chart, so it never
/// hides data.
fn legend(area: &Area<'_>, names: &[String]) -> Result<(), String> {
    for (i, name) in names.iter().enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        let y = 70 + i as i32 * 22;
        area.draw(&Rectangle::new([(10, y - 7), (26, y + 7)], colour.filled()))
            .map_err(draw_error)?;
        area.draw(&Text::new(name.clone(), (38, y - 8), ("sans-serif", 14)))
            .map_err(draw_error)?;
    }
    Ok(())
}

fn draw_bars<Y>(root: &Area<'_>, bars: &Bars, axis: YAxis, y: Y, base: f64) -> Result<(), String>
where
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let n = bars.groups.len().max(1);
    let x = KeyedAxis {
        range: -0.5..n as f64 - 0.5,
        keys: (0..n).map(|i| i as f64).collect(),
    };
    let groups = bars.groups.clone();
    let mut chart = ChartBuilder::on(root)
        .caption(&bars.title, ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(90)
        .build_cartesian_2d(x, y)
        .map_err(draw_error)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        .x_label_formatter(&|x| {
            groups
                .get(x.round().max(0.0) as usize)
                .cloned()
                .unwrap_or_default()
        })
        .y_desc(axis.describe(&bars.y_label))
        .y_label_formatter(&|y| human(*y))
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .draw()
        .map_err(draw_error)?;
    let s = bars.series.len().max(1) as f64;
    let slot = 0.8 / s;
    for (j, values) in bars.values.iter().enumerate() {
        let colour = Palette99::pick(j).to_rgba();
        let rects = values.iter().enumerate().filter_map(|(i, v)| {
            let v = (*v)?;
            (v.is_finite() && v > 0.0).then(|| {
                let x0 = i as f64 - 0.4 + j as f64 * slot;
                Rectangle::new([(x0, base), (x0 + slot * 0.9, v)], colour.filled())
            })
        });
        chart.draw_series(rects).map_err(draw_error)?;
        // Whiskers: a vertical line from min to max with caps, centred on the bar.
        let whiskers = (0..values.len()).filter_map(|i| {
            values[i].filter(|v| v.is_finite() && *v > 0.0)?;
            let (lo, hi) = whisker(&bars.ranges, j, i)?;
            let mid = i as f64 - 0.4 + j as f64 * slot + slot * 0.45;
            let cap = slot * 0.2;
            Some(PathElement::new(
                vec![
                    (mid - cap, lo),
                    (mid + cap, lo),
                    (mid, lo),
                    (mid, hi),
                    (mid - cap, hi),
                    (mid + cap, hi),
                ],
                BLACK.stroke_width(1),
            ))
        });
        chart.draw_series(whiskers).map_err(draw_error)?;
    }
    Ok(())
}

/// Horizontal grouped bars: one row per name (the names on the y axis, top to bottom in the given
/// order), one bar per series in each row, and an optional vertical reference line. Readable
/// with many rows (30+ benchmarks): the chart grows downwards.
#[derive(Debug, Clone, PartialEq)]
pub struct HBars {
    /// The chart's title.
    pub title: String,
    /// The x axis' description.
    pub x_label: String,
    /// The rows, top to bottom.
    pub rows: Vec<String>,
    /// The series (one colour each, in the legend).
    pub series: Vec<String>,
    /// `values[series][row]`; `None` or a value ≤ 0 draws no bar.
    pub values: Vec<Vec<Option<f64>>>,
    /// `ranges[series][row]`: the min–max behind that bar, drawn as a whisker across its end
    /// (missing or `None`: no whisker).
    pub ranges: Vec<Vec<Option<(f64, f64)>>>,
    /// `labels[series][row]`: the text printed at the end of that bar (empty: none).
    pub labels: Vec<Vec<String>>,
    /// Where a vertical reference line goes (1 for speed-ups), if anywhere.
    pub reference: Option<f64>,
}

/// Draws horizontal grouped bars with their min–max whiskers into the SVG file `path` (a linear
/// x axis from 0). Returns `false` (and writes nothing) when there is no positive value to show,
/// an error for more than [`MAX_SERIES`] series.
pub fn hbar_chart(path: &Path, bars: &HBars) -> Result<bool, String> {
    if bars.series.len() > MAX_SERIES {
        return Err(too_many_series(bars.series.len()));
    }
    let hi = extent(&bars.values, &bars.ranges)
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(0.0_f64, f64::max);
    if hi <= 0.0 {
        return Ok(false);
    }
    let hi = hi.max(bars.reference.unwrap_or(0.0)) * 1.18;
    let n = bars.rows.len().max(1);
    let per_row = (8 + 10 * bars.series.len() as u32).max(18);
    let longest = bars
        .rows
        .iter()
        .map(|r| r.chars().count())
        .max()
        .unwrap_or(0) as u32;
    let side = legend_width(&bars.series);
    let plot_width = WIDTH - 200;
    let height = (110 + per_row * n as u32).max(240);
    let root = SVGBackend::new(path, (plot_width + side, height)).into_drawing_area();
    root.fill(&WHITE).map_err(draw_error)?;
    let (plot, legend_area) = root.split_horizontally(plot_width);
    let y = KeyedAxis {
        range: -0.5..n as f64 - 0.5,
        keys: (0..n).map(|i| i as f64).collect(),
    };
    // Row i sits at y = n − 1 − i, so the first row is on top.
    let row_at = |y: f64| n - 1 - (y.round().clamp(0.0, (n - 1) as f64) as usize);
    let rows = bars.rows.clone();
    let mut chart = ChartBuilder::on(&plot)
        .caption(&bars.title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(longest * 7 + 24)
        .build_cartesian_2d(0.0..hi, y)
        .map_err(draw_error)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n)
        .y_label_formatter(&|y| rows.get(row_at(*y)).cloned().unwrap_or_default())
        .x_desc(bars.x_label.as_str())
        .x_label_formatter(&|x| {
            if hi < 10.0 {
                format!("{x:.1}")
            } else {
                human(*x)
            }
        })
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 15))
        .draw()
        .map_err(draw_error)?;
    let s = bars.series.len().max(1) as f64;
    let slot = 0.8 / s;
    for (j, values) in bars.values.iter().enumerate() {
        let colour = Palette99::pick(j).to_rgba();
        let mut rects = Vec::new();
        let mut whiskers = Vec::new();
        let mut texts = Vec::new();
        for (i, v) in values.iter().enumerate() {
            let Some(v) = v.filter(|v| v.is_finite() && *v > 0.0) else {
                continue;
            };
            let top = (n - 1 - i) as f64 + 0.4 - j as f64 * slot;
            rects.push(Rectangle::new(
                [(0.0, top - slot * 0.9), (v, top)],
                colour.filled(),
            ));
            if let Some((lo, hi)) = whisker(&bars.ranges, j, i) {
                let (mid, cap) = (top - slot * 0.45, slot * 0.25);
                whiskers.push(PathElement::new(
                    vec![
                        (lo, mid - cap),
                        (lo, mid + cap),
                        (lo, mid),
                        (hi, mid),
                        (hi, mid - cap),
                        (hi, mid + cap),
                    ],
                    BLACK.stroke_width(1),
                ));
            }
            let label = bars
                .labels
                .get(j)
                .and_then(|l| l.get(i))
                .filter(|l| !l.is_empty());
            if let Some(label) = label {
                let style = TextStyle::from(("sans-serif", 12))
                    .pos(text_anchor::Pos::new(HPos::Left, VPos::Center));
                // After the whisker, so that the text never covers it.
                let end = whisker(&bars.ranges, j, i).map_or(v, |(_, hi)| hi.max(v));
                texts.push(
                    EmptyElement::at((end, top - slot * 0.45))
                        + Text::new(label.clone(), (4, 0), style),
                );
            }
        }
        chart.draw_series(rects).map_err(draw_error)?;
        chart.draw_series(whiskers).map_err(draw_error)?;
        chart.draw_series(texts).map_err(draw_error)?;
    }
    if let Some(r) = bars.reference {
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(r, -0.5), (r, n as f64 - 0.5)],
                BLACK.stroke_width(1),
            )))
            .map_err(draw_error)?;
    }
    legend(&legend_area, &bars.series)?;
    root.present().map_err(draw_error)?;
    Ok(true)
}

/// A point of a [`Panels`] line: `(x, y, noisy)`.
pub type Point = (f64, f64, bool);

/// Small multiples: one small line chart per panel (a benchmark), on shared axes, in a grid —
/// readable with 30+ benchmarks where one chart with 30+ lines is not.
#[derive(Debug, Clone, PartialEq)]
pub struct Panels {
    /// The chart's title.
    pub title: String,
    /// The line under the title: what the axes show.
    pub subtitle: String,
    /// Each panel's name and `(x, y, noisy)` points (points with y ≤ 0 are left out; a noisy
    /// one is drawn hollow).
    pub panels: Vec<(String, Vec<Point>)>,
    /// Draws `y = x` (ideal linear speed-up) dashed in every panel, and `y = 1` solid.
    pub diagonal: bool,
}

const PANEL_WIDTH: u32 = 230;
const PANEL_HEIGHT: u32 = 180;
const PANEL_COLUMNS: usize = 5;

/// Draws small multiples into the SVG file `path`. Returns `false` (and writes nothing) when
/// there is no positive value to show.
pub fn panel_chart(path: &Path, panels: &Panels) -> Result<bool, String> {
    let points = || {
        panels
            .panels
            .iter()
            .flat_map(|(_, p)| p.iter().map(|&(x, y, _)| (x, y)))
            .filter(|(x, y)| x.is_finite() && y.is_finite() && *y > 0.0)
    };
    let y_hi = points().map(|(_, y)| y).fold(0.0_f64, f64::max);
    if y_hi <= 0.0 {
        return Ok(false);
    }
    let y_hi = (y_hi * 1.15).max(1.2);
    let mut xs: Vec<f64> = points().map(|(x, _)| x).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let (x_lo, x_hi) = (xs[0], xs[xs.len() - 1]);
    let pad = ((x_hi - x_lo) * 0.05).max(0.25);
    // At most 5 labelled worker counts per panel: first, last and evenly between.
    let keys: Vec<f64> = if xs.len() <= 5 {
        xs.clone()
    } else {
        (0..5).map(|k| xs[k * (xs.len() - 1) / 4]).collect()
    };
    let n = panels.panels.len().max(1);
    let columns = n.min(PANEL_COLUMNS);
    let rows = n.div_ceil(columns);
    let width = columns as u32 * PANEL_WIDTH + 20;
    let root = SVGBackend::new(path, (width, 70 + rows as u32 * PANEL_HEIGHT)).into_drawing_area();
    root.fill(&WHITE).map_err(draw_error)?;
    let (head, body) = root.split_vertically(66);
    head.draw(&Text::new(
        panels.title.clone(),
        (12, 8),
        ("sans-serif", 22),
    ))
    .map_err(draw_error)?;
    head.draw(&Text::new(
        panels.subtitle.clone(),
        (12, 40),
        ("sans-serif", 14),
    ))
    .map_err(draw_error)?;
    let body = body.margin(0, 0, 10, 10);
    let cells = body.split_evenly((rows, columns));
    for ((name, series), cell) in panels.panels.iter().zip(&cells) {
        let x = KeyedAxis {
            range: x_lo - pad..x_hi + pad,
            keys: keys.clone(),
        };
        let mut chart = ChartBuilder::on(cell)
            .caption(name, ("sans-serif", 14))
            .margin(6)
            .x_label_area_size(22)
            .y_label_area_size(36)
            .build_cartesian_2d(x, 0.0..y_hi)
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .x_labels(keys.len())
            .y_labels(5)
            .x_label_formatter(&|x| format!("{x}"))
            .y_label_formatter(&|y| format!("{y:.1}"))
            .label_style(("sans-serif", 11))
            .light_line_style(WHITE)
            .draw()
            .map_err(draw_error)?;
        if panels.diagonal {
            let grey = RGBColor(150, 150, 150);
            let end = x_hi.min(y_hi);
            if end > x_lo {
                chart
                    .draw_series(DashedLineSeries::new(
                        vec![(x_lo, x_lo), (end, end)],
                        5,
                        4,
                        grey.stroke_width(1),
                    ))
                    .map_err(draw_error)?;
            }
            chart
                .draw_series(LineSeries::new(
                    vec![(x_lo - pad, 1.0), (x_hi + pad, 1.0)],
                    grey.stroke_width(1),
                ))
                .map_err(draw_error)?;
        }
        let colour = Palette99::pick(0).to_rgba();
        let pts: Vec<Point> = series
            .iter()
            .copied()
            .filter(|(x, y, _)| x.is_finite() && y.is_finite() && *y > 0.0)
            .collect();
        chart
            .draw_series(LineSeries::new(
                pts.iter().map(|&(x, y, _)| (x, y)),
                colour.stroke_width(2),
            ))
            .map_err(draw_error)?;
        chart
            .draw_series(pts.into_iter().map(|(x, y, noisy)| {
                let style = if noisy {
                    WHITE.filled()
                } else {
                    colour.filled()
                };
                Circle::new((x, y), 3, style)
            }))
            .map_err(draw_error)?;
        chart
            .draw_series(
                series
                    .iter()
                    .filter(|(x, y, noisy)| *noisy && x.is_finite() && y.is_finite() && *y > 0.0)
                    .map(|&(x, y, _)| Circle::new((x, y), 3, colour.stroke_width(1))),
            )
            .map_err(draw_error)?;
    }
    root.present().map_err(draw_error)?;
    Ok(true)
}

/// A grid of 100% stacked bars: one row per name (a benchmark), one column per series (a
/// policy); each cell splits 100% into parts (home PU / home node / remote node).
#[derive(Debug, Clone, PartialEq)]
pub struct Shares {
    /// The chart's title.
    pub title: String,
    /// The rows (benchmarks), top to bottom.
    pub rows: Vec<String>,
    /// The columns (policies), left to right.
    pub columns: Vec<String>,
    /// The parts of each bar, left to right (in the legend).
    pub parts: Vec<String>,
    /// `values[row][column]`: each part's fraction (together 1), or `None`: no data, a grey
    /// outline.
    pub values: Vec<Vec<Option<Vec<f64>>>>,
}

mod shares;
pub use shares::share_chart;

#[cfg(test)]
mod tests;
