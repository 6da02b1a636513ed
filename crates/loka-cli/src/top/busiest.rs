//! The view's panel of the busiest actors by handler time (the snapshot's `handler_time`,
//! recorded when the system samples: `handler_sample_us`; docs/observability.md,
//! "Handler time"), and each worker's busy share for the worker table.

use super::{u, App};
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, Borders, Cell, Row, Table};
use ratatui::Frame;
use serde_json::Value;

/// One actor of the panel.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct BusyRow {
    /// Its registered name, else its spawn label, else its type without module paths.
    pub(super) label: String,
    pub(super) id: String,
    /// Per cent of one worker it kept busy since the previous snapshot (`None` under the
    /// simulation, whose times are virtual while the snapshots' ages are not).
    pub(super) cpu: Option<f64>,
    /// Its per cent of all the handler time recorded since the previous snapshot.
    pub(super) share: f64,
    /// Its handler time since the system started, in seconds.
    pub(super) total_s: f64,
}

impl App {
    /// The recorded actors, busiest since the previous snapshot first (then by total), filtered by
    /// label.
    pub(super) fn busiest(&self) -> Vec<BusyRow> {
        let now = &self.cur["handler_time"];
        let Some(actors) = now["actors"].as_array() else {
            return Vec::new();
        };
        let before = self.prev.as_ref().map(|p| &p["handler_time"]);
        let earlier = |id: &Value| -> u64 {
            before
                .and_then(|b| b["actors"].as_array())
                .and_then(|a| a.iter().find(|x| &x["id"] == id))
                .map_or(0, |x| u(x, "handler_ns"))
        };
        let busy = |s: &Value| -> u64 {
            s["worker_busy_ns"]
                .as_array()
                .map_or(0, |w| w.iter().filter_map(Value::as_u64).sum())
                + u(s, "dedicated_busy_ns")
        };
        let all = busy(now).saturating_sub(before.map_or(0, busy)).max(1) as f64;
        let sampled = !now["sample_interval_ns"].is_null();
        let dt_ns = self.interval() * 1e9;
        let mut rows: Vec<(u64, BusyRow)> = actors
            .iter()
            .map(|a| {
                let delta = u(a, "handler_ns").saturating_sub(earlier(&a["id"]));
                let label = a["registered"]
                    .as_str()
                    .or_else(|| a["name"].as_str())
                    .map_or_else(
                        || short_type(a["actor_type"].as_str().unwrap_or("?")),
                        str::to_owned,
                    );
                let row = BusyRow {
                    label,
                    id: a["id"]
                        .as_str()
                        .map_or_else(|| a["id"].to_string(), str::to_owned),
                    cpu: sampled.then(|| 100.0 * delta as f64 / dt_ns),
                    share: 100.0 * delta as f64 / all,
                    total_s: u(a, "handler_ns") as f64 / 1e9,
                };
                (delta, row)
            })
            .filter(|(_, r)| r.label.contains(self.filter.as_str()))
            .collect();
        // Busiest in the interval first; then by total (a quiet interval, or the simulation's
        // virtual time standing still between two snapshots).
        rows.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.total_s.total_cmp(&a.1.total_s)));
        rows.into_iter().map(|(_, r)| r).collect()
    }

    /// Worker `w`'s per cent of the time since the previous snapshot spent running actors,
    /// when the system samples on the wall clock.
    pub(super) fn busy_share(&self, w: usize) -> Option<f64> {
        let now = &self.cur["handler_time"];
        if now["sample_interval_ns"].is_null() {
            return None;
        }
        let at = |s: &Value| s["worker_busy_ns"].get(w).and_then(Value::as_u64);
        let before = self
            .prev
            .as_ref()
            .and_then(|p| at(&p["handler_time"]))
            .unwrap_or(0);
        Some(100.0 * at(now)?.saturating_sub(before) as f64 / (self.interval() * 1e9))
    }

    pub(super) fn draw_busiest(&self, f: &mut Frame, area: Rect) {
        let ht = &self.cur["handler_time"];
        let title = if ht.is_null() {
            "busiest actors: handler time is off (set handler_sample_us; bench run --observe \
             and --top turn it on)"
                .to_owned()
        } else if ht["sample_interval_ns"].is_null() {
            format!(
                "busiest actors by handler time (simulation: exact virtual time; {} tracked)",
                u(ht, "tracked")
            )
        } else {
            format!(
                "busiest actors by handler time (sampled every {:.2} ms, {} rounds; {} tracked)",
                u(ht, "sample_interval_ns") as f64 / 1e6,
                u(ht, "rounds"),
                u(ht, "tracked")
            )
        };
        let body: Vec<Row> = self
            .busiest()
            .into_iter()
            .map(|r| {
                Row::new(vec![
                    Cell::from(r.label),
                    Cell::from(r.id),
                    Cell::from(r.cpu.map_or("-".to_owned(), |c| format!("{c:.1}"))),
                    Cell::from(format!("{:.1}", r.share)),
                    Cell::from(format!("{:.3}", r.total_s)),
                ])
            })
            .collect();
        f.render_widget(
            Table::new(
                body,
                [
                    Constraint::Min(20),
                    Constraint::Length(10),
                    Constraint::Length(7),
                    Constraint::Length(8),
                    Constraint::Length(10),
                ],
            )
            .header(
                Row::new(["actor", "id", "cpu %", "share %", "total s"])
                    .style(Style::default().add_modifier(Modifier::BOLD)),
            )
            .block(Block::default().borders(Borders::TOP).title(title)),
            area,
        );
    }
}

/// A Rust type name without its module paths: `app::jobs::Worker<app::Job>` → `Worker<Job>`.
pub(super) fn short_type(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut segment = String::new();
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            segment.clear();
        } else if c.is_alphanumeric() || c == '_' {
            segment.push(c);
        } else {
            out.push_str(&segment);
            segment.clear();
            out.push(c);
        }
    }
    out.push_str(&segment);
    out
}
