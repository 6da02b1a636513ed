//! The view's worker table (rates over the last interval, sorted by the column `s` cycles to)
//! and, beside it, the topology with each worker's load.

use super::{u, App};
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table};
use ratatui::Frame;
use serde_json::Value;

/// The worker table's sort columns, cycled by `s`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum SortBy {
    Worker,
    Busy,
    Messages,
    Queue,
    Steals,
    HomePu,
}

impl SortBy {
    const ALL: [SortBy; 6] = [
        SortBy::Worker,
        SortBy::Busy,
        SortBy::Messages,
        SortBy::Queue,
        SortBy::Steals,
        SortBy::HomePu,
    ];
    pub(super) fn name(self) -> &'static str {
        match self {
            SortBy::Worker => "worker",
            SortBy::Busy => "busy %",
            SortBy::Messages => "msgs/s",
            SortBy::Queue => "queue",
            SortBy::Steals => "steals/s",
            SortBy::HomePu => "home-PU %",
        }
    }
    pub(super) fn next(self) -> SortBy {
        let i = SortBy::ALL.iter().position(|&s| s == self).unwrap_or(0);
        SortBy::ALL[(i + 1) % SortBy::ALL.len()]
    }
}

/// One worker's row, with rates over the last interval.
#[derive(Debug, Default, Clone)]
pub(super) struct WorkerRow {
    pub(super) worker: usize,
    pub(super) pu: u64,
    pub(super) node: u64,
    pub(super) messages: f64,
    pub(super) activations: f64,
    pub(super) parks: f64,
    pub(super) steals: f64,
    pub(super) steals_by_level: Vec<u64>,
    pub(super) queue: Option<u64>,
    /// Per cent of the interval it ran actors (when the system samples handler time).
    pub(super) busy: Option<f64>,
    pub(super) home_pu: Option<f64>,
    pub(super) home_node: Option<f64>,
    pub(super) hubs: u64,
}

impl App {
    pub(super) fn workers(&self) -> Vec<WorkerRow> {
        let dt = self.interval();
        let places = self.cur["topology"]["workers"].as_array();
        let queues = self.cur["queue_lengths"].as_array();
        let workers = self.cur["workers"].as_array().map_or(0, Vec::len);
        let mut rows: Vec<WorkerRow> = (0..workers)
            .map(|w| {
                let d = |k: &str| self.delta(Some(w), k);
                let place = places.and_then(|p| p.get(w));
                let (pu, nd, remote) = (
                    d("exec_home_pu"),
                    d("exec_home_node"),
                    d("exec_remote_node"),
                );
                let placed = pu + nd + remote;
                let now = &self.cur["workers"][w];
                let before = self.prev.as_ref().map(|p| &p["workers"][w]);
                let levels = |s: &Value| -> Vec<u64> {
                    s["steals_by_level"]
                        .as_array()
                        .map(|a| a.iter().map(|x| x.as_u64().unwrap_or(0)).collect())
                        .unwrap_or_default()
                };
                let mut by_level = levels(now);
                if let Some(b) = before {
                    for (x, y) in by_level.iter_mut().zip(levels(b)) {
                        *x = x.saturating_sub(y);
                    }
                }
                WorkerRow {
                    worker: w,
                    pu: place.map_or(0, |p| u(p, "pu")),
                    node: place.map_or(0, |p| u(p, "node")),
                    messages: d("messages") / dt,
                    activations: d("activations") / dt,
                    parks: d("parks") / dt,
                    steals: d("steals") / dt,
                    steals_by_level: by_level,
                    queue: queues.and_then(|q| q.get(w)).and_then(Value::as_u64),
                    busy: self.busy_share(w),
                    home_pu: (placed > 0.0).then(|| 100.0 * pu / placed),
                    home_node: (placed > 0.0).then(|| 100.0 * (pu + nd) / placed),
                    hubs: u(now, "hubs"),
                }
            })
            .collect();
        let key = |r: &WorkerRow| -> f64 {
            match self.sort {
                SortBy::Worker => -(r.worker as f64),
                SortBy::Busy => r.busy.unwrap_or(-1.0),
                SortBy::Messages => r.messages,
                SortBy::Queue => r.queue.unwrap_or(0) as f64,
                SortBy::Steals => r.steals,
                SortBy::HomePu => r.home_pu.unwrap_or(-1.0),
            }
        };
        rows.sort_by(|a, b| key(b).total_cmp(&key(a)));
        rows
    }

    pub(super) fn draw_workers(&self, f: &mut Frame, area: Rect, rows: &[WorkerRow]) {
        let pct = |x: Option<f64>| x.map_or("-".to_owned(), |x| format!("{x:.0}"));
        let body: Vec<Row> = rows
            .iter()
            .skip(self.scroll.min(rows.len().saturating_sub(1)))
            .map(|r| {
                Row::new(vec![
                    Cell::from(format!("w{}", r.worker)),
                    Cell::from(format!("{}/{}", r.pu, r.node)),
                    Cell::from(pct(r.busy)),
                    Cell::from(format!("{:.0}", r.messages)),
                    Cell::from(format!("{:.0}", r.activations)),
                    Cell::from(format!("{:.0}", r.parks)),
                    Cell::from(r.queue.map_or("-".to_owned(), |q| q.to_string())),
                    Cell::from(format!("{:.0}", r.steals)),
                    Cell::from(
                        r.steals_by_level
                            .iter()
                            .map(u64::to_string)
                            .collect::<Vec<_>>()
                            .join(" "),
                    ),
                    Cell::from(pct(r.home_pu)),
                    Cell::from(pct(r.home_node)),
                    Cell::from(r.hubs.to_string()),
                ])
            })
            .collect();
        let header = Row::new([
            "worker",
            "pu/node",
            "busy %",
            "msgs/s",
            "acts/s",
            "parks/s",
            "queue",
            "steals/s",
            "steals by level",
            "home-PU %",
            "home-node %",
            "hubs",
        ])
        .style(Style::default().add_modifier(Modifier::BOLD));
        let widths = [
            Constraint::Length(6),
            Constraint::Length(7),
            Constraint::Length(6),
            Constraint::Length(9),
            Constraint::Length(9),
            Constraint::Length(7),
            Constraint::Length(5),
            Constraint::Length(8),
            Constraint::Length(15),
            Constraint::Length(9),
            Constraint::Length(11),
            Constraint::Length(5),
        ];
        f.render_widget(
            Table::new(body, widths)
                .header(header)
                .block(Block::default().borders(Borders::RIGHT).title("workers")),
            area,
        );
    }

    /// Packages, their nodes and PUs; each PU with a worker shows its share of the busiest
    /// worker's messages as a bar, a PU without one a dot.
    pub(super) fn draw_topology(&self, f: &mut Frame, area: Rect, rows: &[WorkerRow]) {
        const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
        let topo = &self.cur["topology"];
        let pus = topo["pus"].as_array().cloned().unwrap_or_default();
        let max = rows.iter().map(|r| r.messages).fold(0.0, f64::max);
        let mut load = std::collections::HashMap::new();
        for r in rows {
            load.insert(r.pu, r.messages);
        }
        let mut lines = vec![Line::from(format!(
            "{} package(s), {} node(s), {} PU(s)",
            u(topo, "packages"),
            u(topo, "nodes"),
            pus.len()
        ))];
        for package in 0..u(topo, "packages") {
            lines.push(Line::from(format!("package {package}")));
            for node in 0..u(topo, "nodes") {
                let cells: String = pus
                    .iter()
                    .filter(|p| u(p, "package") == package && u(p, "node") == node)
                    .map(|p| match load.get(&u(p, "pu")) {
                        None => '·',
                        Some(&m) if max > 0.0 => {
                            BARS[((m / max) * 7.0).round().clamp(0.0, 7.0) as usize]
                        }
                        Some(_) => BARS[0],
                    })
                    .collect();
                if !cells.is_empty() {
                    lines.push(Line::from(format!("  node {node:<2} {cells}")));
                }
            }
        }
        f.render_widget(
            Paragraph::new(lines).block(Block::default().title("topology (load per PU)")),
            area,
        );
    }
}
