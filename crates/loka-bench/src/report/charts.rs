//! SVG charts (plotters' SVG backend only: no font or system libraries needed).

use plotters::coord::ranged1d::{
    AsRangedCoord, DefaultFormatting, KeyPointHint, Ranged, ValueFormatter,
};
use plotters::coord::Shift;
use plotters::prelude::*;
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
}

/// Lines: one per series, through `(x, y)` points.
#[derive(Debug, Clone, PartialEq)]
pub struct Lines {
    /// The chart's title.
    pub title: String,
    /// The x axis' description.
    pub x_label: String,
    /// The y axis' description.
    pub y_label: String,
    /// Each series' name and points (points with y ≤ 0 are left out).
    pub series: Vec<(String, Vec<(f64, f64)>)>,
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

/// Short numbers for axes and tables: 3 significant digits with k/M/G suffixes.
pub fn human(v: f64) -> String {
    if v.is_nan() {
        return "—".into();
    }
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let s = scaled.abs();
    let digits = if s >= 100.0 || s == 0.0 {
        0
    } else if s >= 10.0 {
        1
    } else if s >= 1.0 {
        2
    } else {
        3
    };
    format!("{scaled:.digits$}{suffix}")
}

fn draw_error(e: impl std::fmt::Display) -> String {
    format!("drawing the chart: {e}")
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Draws grouped bars into the SVG file `path` (a log y axis when the values span more than
/// 20×). Returns `false` (and writes nothing) when there is no positive value to show.
pub fn bar_chart(path: &Path, bars: &Bars) -> Result<bool, String> {
    let Some(axis) = y_axis(bars.values.iter().flatten().flatten().copied()) else {
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
    legend(&legend_area, &bars.series, false)?;
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
fn legend(area: &Area<'_>, names: &[String], lines: bool) -> Result<(), String> {
    for (i, name) in names.iter().enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        let y = 70 + i as i32 * 22;
        if lines {
            area.draw(&PathElement::new(
                vec![(8, y), (30, y)],
                colour.stroke_width(3),
            ))
        } else {
            area.draw(&Rectangle::new([(10, y - 7), (26, y + 7)], colour.filled()))
        }
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
    }
    Ok(())
}

/// Draws lines (a linear x axis; a log y axis when the values span more than 20×) into the
/// SVG file `path`. Returns `false` (and writes nothing) when there is no positive value.
pub fn line_chart(path: &Path, lines: &Lines) -> Result<bool, String> {
    let points = || lines.series.iter().flat_map(|(_, p)| p.iter().copied());
    let Some(axis) = y_axis(points().map(|(_, y)| y)) else {
        return Ok(false);
    };
    let names: Vec<String> = lines.series.iter().map(|(n, _)| n.clone()).collect();
    let side = legend_width(&names);
    let height = HEIGHT.max(100 + 22 * names.len() as u32);
    let root = SVGBackend::new(path, (WIDTH - 200 + side, height)).into_drawing_area();
    root.fill(&WHITE).map_err(draw_error)?;
    let (plot, legend_area) = root.split_horizontally(WIDTH - 200);
    match axis {
        YAxis::Linear(hi) => draw_lines(&plot, lines, axis, 0.0..hi)?,
        YAxis::Log(lo, hi) => draw_lines(&plot, lines, axis, (lo..hi).log_scale())?,
    }
    legend(&legend_area, &names, true)?;
    root.present().map_err(draw_error)?;
    Ok(true)
}

fn draw_lines<Y>(root: &Area<'_>, lines: &Lines, axis: YAxis, y: Y) -> Result<(), String>
where
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut xs: Vec<f64> = lines
        .series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|(x, _)| *x))
        .filter(|x| x.is_finite())
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let (x_lo, x_hi) = (
        xs.first().copied().unwrap_or(0.0),
        xs.last().copied().unwrap_or(1.0),
    );
    let pad = ((x_hi - x_lo) * 0.05).max(0.25);
    let x = KeyedAxis {
        range: x_lo - pad..x_hi + pad,
        keys: xs.clone(),
    };
    let mut chart = ChartBuilder::on(root)
        .caption(&lines.title, ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(50)
        .y_label_area_size(90)
        .build_cartesian_2d(x, y)
        .map_err(draw_error)?;
    chart
        .configure_mesh()
        .x_labels(xs.len())
        .x_label_formatter(&|x| format!("{x}"))
        .x_desc(lines.x_label.as_str())
        .y_desc(axis.describe(&lines.y_label))
        .y_label_formatter(&|y| human(*y))
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .draw()
        .map_err(draw_error)?;
    for (j, (_, series)) in lines.series.iter().enumerate() {
        let colour = Palette99::pick(j).to_rgba();
        let pts: Vec<(f64, f64)> = series
            .iter()
            .copied()
            .filter(|(x, y)| x.is_finite() && y.is_finite() && *y > 0.0)
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))
            .map_err(draw_error)?;
        chart
            .draw_series(pts.into_iter().map(|p| Circle::new(p, 3, colour.filled())))
            .map_err(draw_error)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_numbers() {
        assert_eq!(human(32_472_304.0), "32.5M");
        assert_eq!(human(1_520.0), "1.52k");
        assert_eq!(human(0.0291), "0.029");
        assert_eq!(human(250.0), "250");
        assert_eq!(human(2.5e9), "2.50G");
    }

    #[test]
    fn charts_are_svg_files_and_empty_data_draws_nothing() {
        let dir = std::env::temp_dir().join(format!("loka-charts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bars = Bars {
            title: "t".into(),
            y_label: "msgs/s".into(),
            groups: vec!["pingpong".into(), "fib".into()],
            series: vec!["loka".into(), "caf".into()],
            values: vec![vec![Some(3e7), Some(5e6)], vec![Some(1e7), None]],
        };
        assert!(bar_chart(&dir.join("b.svg"), &bars).unwrap());
        let svg = std::fs::read_to_string(dir.join("b.svg")).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("pingpong") && svg.contains("caf"));
        let empty = Bars {
            values: vec![vec![None, Some(0.0)]],
            ..bars
        };
        assert!(!bar_chart(&dir.join("e.svg"), &empty).unwrap());
        assert!(!dir.join("e.svg").exists());
        let lines = Lines {
            title: "t".into(),
            x_label: "workers".into(),
            y_label: "s".into(),
            series: vec![("fib".into(), vec![(1.0, 0.2), (2.0, 0.11)])],
        };
        assert!(line_chart(&dir.join("l.svg"), &lines).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
