//! `loka top`: a live view of a running system, read from the Unix socket it serves its
//! snapshots on (`observe = "PATH"`; docs/observability.md, "Live view"). `--json` prints one
//! snapshot and exits. This file holds the connection, the keys and the layout; the worker
//! table and topology are in `top/workers.rs`, the busiest actors in `top/busiest.rs`, the view
//! of a series of benchmark runs in `top/bench_runs.rs`.

use anyhow::{bail, Context as _, Result};
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table};
use ratatui::Frame;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

mod bench_runs;
mod busiest;
mod workers;
pub use bench_runs::watch_runs;
use workers::SortBy;

/// `loka top` arguments.
#[derive(clap::Args)]
pub struct TopArgs {
    /// The socket the system serves its snapshots on (its `observe` setting).
    #[arg(long, value_name = "PATH")]
    pub socket: PathBuf,
    /// Milliseconds between two snapshots (at least 50).
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    pub refresh: u64,
    /// Print one snapshot as JSON (one line) and exit.
    #[arg(long)]
    pub json: bool,
}

/// Runs `loka top`.
pub fn run(args: &TopArgs) -> Result<()> {
    anyhow::ensure!(
        args.refresh >= 50,
        "--refresh must be at least 50 ms, got {}",
        args.refresh
    );
    if args.json {
        let line = request(&args.socket, "snapshot")?
            .next()
            .with_context(|| {
                format!(
                    "{}: the system closed the connection",
                    args.socket.display()
                )
            })??;
        let mut out = std::io::stdout().lock();
        writeln!(out, "{line}").context("writing to stdout")?;
        return Ok(());
    }
    let lines = request(&args.socket, &format!("watch {}", args.refresh))?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in lines {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    // The first snapshot before the terminal is taken over: an error is a plain line.
    let first = match rx.recv_timeout(Duration::from_secs(5)) {
        Ok(line) => line?,
        Err(_) => bail!("{}: no snapshot within 5 s", args.socket.display()),
    };
    let mut app = App::new(args.socket.clone());
    app.push(&first);
    let mut terminal = ratatui::try_init().context("cannot take over the terminal")?;
    let outcome = app.run(&mut terminal, &rx);
    ratatui::restore();
    match outcome? {
        Exit::Quit => Ok(()),
        Exit::Gone => {
            eprintln!(
                "loka top: the system at {} stopped (connection closed)",
                args.socket.display()
            );
            Ok(())
        }
    }
}

/// Sends `request` and returns the JSON lines that come back; a line `{"error": ...}` is an
/// error.
fn request(socket: &Path, request: &str) -> Result<impl Iterator<Item = Result<Value>>> {
    let mut stream = UnixStream::connect(socket).map_err(|e| {
        anyhow::anyhow!(
            "cannot connect to {}: {e} (is a system running with `observe` set to this path?)",
            socket.display()
        )
    })?;
    writeln!(stream, "{request}")
        .with_context(|| format!("cannot send a request to {}", socket.display()))?;
    let socket = socket.to_owned();
    Ok(BufReader::new(stream).lines().map(move |line| {
        let line = line.with_context(|| format!("reading from {}", socket.display()))?;
        let value: Value = serde_json::from_str(&line)
            .with_context(|| format!("{}: not a snapshot: {line}", socket.display()))?;
        if let Some(message) = value.get("error").and_then(Value::as_str) {
            bail!("{}: {message}", socket.display());
        }
        Ok(value)
    }))
}

/// Why the view ended.
enum Exit {
    Quit,
    Gone,
}

/// The view's state: the last two snapshots and the keys' effects.
struct App {
    socket: PathBuf,
    /// `loka bench run --top`: the run under way, set by the thread that runs them.
    run_label: Option<Arc<Mutex<String>>>,
    prev: Option<Value>,
    cur: Value,
    /// `cur` is another system's (`loka bench run --top`, a run that ended): shown until the
    /// next snapshot comes, never a base for its rates.
    cur_of_old_system: bool,
    sort: SortBy,
    filter: String,
    editing: bool,
    scroll: usize,
}

fn u(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

impl App {
    fn new(socket: PathBuf) -> App {
        App {
            socket,
            run_label: None,
            prev: None,
            cur: Value::Null,
            cur_of_old_system: false,
            sort: SortBy::Worker,
            filter: String::new(),
            editing: false,
            scroll: 0,
        }
    }

    fn push(&mut self, snapshot: &Value) {
        let old = std::mem::replace(&mut self.cur, snapshot.clone());
        let same_system = !std::mem::take(&mut self.cur_of_old_system);
        self.prev = (same_system && !old.is_null()).then_some(old);
    }

    fn run(
        &mut self,
        terminal: &mut ratatui::DefaultTerminal,
        rx: &mpsc::Receiver<Result<Value>>,
    ) -> Result<Exit> {
        loop {
            terminal
                .draw(|f| self.draw(f))
                .context("drawing the view")?;
            // Keys first; then whatever snapshots arrived.
            if event::poll(Duration::from_millis(100)).context("reading the terminal")? {
                if let Event::Key(key) = event::read().context("reading the terminal")? {
                    if key.kind == KeyEventKind::Press && self.key(key.code) {
                        return Ok(Exit::Quit);
                    }
                }
            }
            loop {
                match rx.try_recv() {
                    Ok(Ok(snapshot)) => self.push(&snapshot),
                    Ok(Err(_)) | Err(mpsc::TryRecvError::Disconnected) => return Ok(Exit::Gone),
                    Err(mpsc::TryRecvError::Empty) => break,
                }
            }
        }
    }

    /// Applies a key; returns whether to quit.
    fn key(&mut self, code: KeyCode) -> bool {
        if self.editing {
            match code {
                KeyCode::Enter | KeyCode::Esc => self.editing = false,
                KeyCode::Backspace => {
                    self.filter.pop();
                }
                KeyCode::Char(c) => self.filter.push(c),
                _ => {}
            }
            return false;
        }
        match code {
            KeyCode::Char('q') | KeyCode::Esc => return true,
            KeyCode::Char('s') => self.sort = self.sort.next(),
            KeyCode::Char('/') | KeyCode::Char('f') => {
                self.editing = true;
                self.filter.clear();
            }
            KeyCode::Down => self.scroll = self.scroll.saturating_add(1),
            KeyCode::Up => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::PageDown => self.scroll = self.scroll.saturating_add(10),
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(10),
            KeyCode::Home => self.scroll = 0,
            _ => {}
        }
        false
    }

    /// Seconds between the previous snapshot and this one (since start without one).
    fn interval(&self) -> f64 {
        let now = u(&self.cur, "uptime_ns");
        let then = self.prev.as_ref().map_or(0, |p| u(p, "uptime_ns"));
        (now.saturating_sub(then) as f64 / 1e9).max(1e-9)
    }

    /// `key` of worker `w` (or a system-wide one with `w = None`) per second.
    fn delta(&self, w: Option<usize>, key: &str) -> f64 {
        let get = |s: &Value| match w {
            Some(w) => s["workers"].get(w).map_or(0, |x| u(x, key)),
            None => u(s, key),
        };
        let before = self.prev.as_ref().map_or(0, get);
        get(&self.cur).saturating_sub(before) as f64
    }

    fn draw(&self, f: &mut Frame) {
        let rows = self.workers();
        let [header, body, actors] = Layout::vertical([
            Constraint::Length(3),
            Constraint::Min(6),
            Constraint::Length(10),
        ])
        .areas(f.area());
        self.draw_header(f, header);
        let [table, topo] =
            Layout::horizontal([Constraint::Percentage(65), Constraint::Percentage(35)])
                .areas(body);
        self.draw_workers(f, table, &rows);
        self.draw_topology(f, topo, &rows);
        let [registered, busiest] =
            Layout::horizontal([Constraint::Percentage(40), Constraint::Percentage(60)])
                .areas(actors);
        self.draw_actors(f, registered);
        self.draw_busiest(f, busiest);
    }

    fn draw_header(&self, f: &mut Frame, area: Rect) {
        let c = &self.cur;
        let uptime = u(c, "uptime_ns") as f64 / 1e9;
        let live = u(c, "actors_spawned").saturating_sub(u(c, "actors_stopped"));
        let source = match &self.run_label {
            Some(label) => format!(
                "bench run: {}",
                label.lock().unwrap_or_else(|e| e.into_inner())
            ),
            None => self.socket.display().to_string(),
        };
        let line1 = format!(
            "loka top  {source}  policy {}  engine {}  workers {}  topology {}  uptime {uptime:.1} s",
            c["policy"].as_str().unwrap_or("?"),
            c["engine"].as_str().unwrap_or("?"),
            c["workers"].as_array().map_or(0, Vec::len),
            c["topology"]["spec"].as_str().unwrap_or("?"),
        );
        let line2 = format!(
            "actors {live}  msgs/s {:.0}  dead letters {} (+{:.0}/s)  panics {}  restarts {}  hubs {}  \
             sort: {}  filter: {}{}   q quit  s sort  / filter  ↑↓ scroll",
            self.delta_total("messages") / self.interval(),
            u(c, "dead_letters"),
            self.delta(None, "dead_letters") / self.interval(),
            u(c, "panics"),
            u(c, "restarts"),
            u(c, "hubs"),
            self.sort.name(),
            if self.filter.is_empty() && !self.editing { "-" } else { &self.filter },
            if self.editing { "▏" } else { "" },
        );
        f.render_widget(
            Paragraph::new(vec![Line::from(line1), Line::from(line2)])
                .block(Block::default().borders(Borders::BOTTOM)),
            area,
        );
    }

    fn delta_total(&self, key: &str) -> f64 {
        let before = self.prev.as_ref().map_or(0, |p| u(&p["total"], key));
        u(&self.cur["total"], key).saturating_sub(before) as f64
    }

    fn draw_actors(&self, f: &mut Frame, area: Rect) {
        let mut actors: Vec<&Value> = self.cur["registered"]
            .as_array()
            .map(|a| a.iter().collect())
            .unwrap_or_default();
        actors.retain(|a| {
            a["name"]
                .as_str()
                .is_some_and(|n| n.contains(self.filter.as_str()))
        });
        actors.sort_by_key(|a| std::cmp::Reverse(u(a, "mailbox_len")));
        let body: Vec<Row> = actors
            .iter()
            .map(|a| {
                Row::new(vec![
                    Cell::from(a["name"].as_str().unwrap_or("").to_owned()),
                    Cell::from(a["id"].to_string()),
                    Cell::from(u(a, "mailbox_len").to_string()),
                ])
            })
            .collect();
        let title = format!(
            "registered actors by mailbox length ({} shown)",
            actors.len()
        );
        f.render_widget(
            Table::new(
                body,
                [
                    Constraint::Length(30),
                    Constraint::Length(10),
                    Constraint::Length(10),
                ],
            )
            .header(
                Row::new(["name", "id", "mailbox"])
                    .style(Style::default().add_modifier(Modifier::BOLD)),
            )
            .block(Block::default().borders(Borders::TOP).title(title)),
            area,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;
    use serde_json::json;

    #[test]
    fn a_new_systems_first_snapshot_keeps_the_old_one_on_screen_but_not_as_its_rates_base() {
        let mut app = App::new(PathBuf::from("x"));
        app.push(&snapshot(1, [10, 20], 0));
        app.push(&snapshot(2, [30, 40], 0));
        assert!(
            app.prev.is_some(),
            "one system: rates from the snapshot before"
        );
        // `loka bench run --top`: the next run is a new system.
        app.prev = None;
        app.cur_of_old_system = true;
        assert_eq!(
            app.cur,
            snapshot(2, [30, 40], 0),
            "the last run stays on screen"
        );
        app.push(&snapshot(1, [5, 5], 0));
        assert!(
            app.prev.is_none(),
            "another system's snapshot is no base for rates"
        );
        app.push(&snapshot(2, [9, 9], 0));
        assert_eq!(app.prev, Some(snapshot(1, [5, 5], 0)));
    }

    fn snapshot(uptime_s: u64, messages: [u64; 2], mailbox: u64) -> Value {
        let worker = |m: u64| {
            json!({"messages": m, "activations": m / 2, "parks": 1, "steals": 0,
                   "steals_by_level": [0, 0], "exec_home_pu": m * 3 / 4, "exec_home_node": m / 4,
                   "exec_remote_node": 0, "hubs": 0})
        };
        json!({
            "uptime_ns": uptime_s * 1_000_000_000,
            "policy": "lgs", "engine": "sim",
            "workers": [worker(messages[0]), worker(messages[1])],
            "total": {"messages": messages[0] + messages[1]},
            "dead_letters": 2, "panics": 0, "restarts": 1, "hubs": 0,
            "actors_spawned": 3, "actors_stopped": 1,
            "queue_lengths": [4, 0],
            "registered": [{"name": "sink", "id": 7, "mailbox_len": mailbox},
                           {"name": "other", "id": 8, "mailbox_len": 0}],
            // The sink runs 40% of a worker from the start, a `Job` 10%; workers' busy time.
            "handler_time": {"sample_interval_ns": 1_000_000, "rounds": uptime_s * 1000,
                "tracked": 2, "dedicated_busy_ns": 0,
                "worker_busy_ns": [uptime_s * 400_000_000, uptime_s * 100_000_000],
                "actors": [
                    {"id": 7, "actor_type": "app::Sink", "name": null, "registered": "sink",
                     "handler_ns": uptime_s * 400_000_000, "error_ns": 0},
                    {"id": 9, "actor_type": "app::jobs::Job<app::Input>", "name": null,
                     "registered": null, "handler_ns": uptime_s * 100_000_000, "error_ns": 0}]},
            "topology": {"spec": "preset:x", "packages": 1, "nodes": 1,
                "pus": [{"pu": 0, "package": 0, "node": 0}, {"pu": 1, "package": 0, "node": 0},
                        {"pu": 2, "package": 0, "node": 0}],
                "workers": [{"pu": 0, "package": 0, "node": 0}, {"pu": 1, "package": 0, "node": 0}]}
        })
    }

    fn screen(app: &App) -> String {
        let mut terminal = Terminal::new(TestBackend::new(160, 30)).unwrap();
        terminal.draw(|f| app.draw(f)).unwrap();
        let buffer = terminal.backend().buffer();
        let mut text = String::new();
        for y in 0..buffer.area.height {
            for x in 0..buffer.area.width {
                text.push_str(buffer[(x, y)].symbol());
            }
            text.push('\n');
        }
        text
    }

    #[test]
    fn rates_come_from_the_last_two_snapshots_and_keys_sort_and_filter() {
        let mut app = App::new(PathBuf::from("/tmp/s"));
        app.push(&snapshot(1, [100, 0], 5));
        app.push(&snapshot(3, [700, 40], 5));
        let rows = app.workers();
        assert_eq!(rows[0].worker, 0);
        assert_eq!(rows[0].messages, 300.0, "(700 - 100) / 2 s");
        assert_eq!(rows[1].messages, 20.0);
        assert_eq!(rows[0].queue, Some(4));
        assert_eq!(rows[0].home_pu, Some(75.0));
        let text = screen(&app);
        assert!(text.contains("policy lgs  engine sim  workers 2"), "{text}");
        assert!(text.contains("restarts 1"), "{text}");
        assert!(text.contains("sink"), "{text}");
        // The topology: PU 0 busiest, PU 1 lightly loaded, PU 2 without a worker.
        assert!(text.contains("node 0  █▁·"), "{text}");
        assert_eq!(
            rows[0].busy,
            Some(40.0),
            "(1.2 s - 0.4 s) of busy time / 2 s"
        );
        let busiest = app.busiest();
        let labels: Vec<&str> = busiest.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(
            labels,
            ["sink", "Job<Input>"],
            "busiest first, type without paths"
        );
        assert_eq!(busiest[0].cpu, Some(40.0));
        assert_eq!(
            busiest[0].share, 80.0,
            "0.8 s of the 1.0 s recorded in the interval"
        );
        assert!(
            text.contains("sampled every 1.00 ms, 3000 rounds"),
            "{text}"
        );
        assert!(text.contains("Job<Input>"), "{text}");
        app.key(KeyCode::Char('s'));
        assert_eq!(app.sort, SortBy::Busy);
        app.key(KeyCode::Char('s'));
        app.key(KeyCode::Char('s'));
        assert_eq!(app.sort, SortBy::Queue);
        app.key(KeyCode::Char('/'));
        for c in "oth".chars() {
            app.key(KeyCode::Char(c));
        }
        assert!(
            !app.key(KeyCode::Char('q')),
            "typing q into the filter does not quit"
        );
        app.key(KeyCode::Backspace);
        app.key(KeyCode::Enter);
        assert_eq!(app.filter, "oth");
        let text = screen(&app);
        assert!(text.contains("other") && !text.contains("sink "), "{text}");
        assert!(
            app.busiest().is_empty(),
            "the filter applies to the busiest too"
        );
        assert!(app.key(KeyCode::Char('q')));
    }

    #[test]
    fn without_handler_time_the_panel_says_how_to_turn_it_on_and_the_sim_shows_no_cpu() {
        let mut app = App::new(PathBuf::from("/tmp/s"));
        let mut off = snapshot(1, [1, 1], 0);
        off["handler_time"] = Value::Null;
        app.push(&off);
        assert!(app.busiest().is_empty());
        assert_eq!(app.workers()[0].busy, None);
        assert!(screen(&app).contains("handler time is off"));
        let mut sim = snapshot(2, [1, 1], 0);
        sim["handler_time"]["sample_interval_ns"] = Value::Null;
        app.push(&sim);
        let busiest = app.busiest();
        assert_eq!(
            busiest[0].cpu, None,
            "virtual time against wall-clock ages: no cpu %"
        );
        assert_eq!(busiest[0].share, 80.0);
        assert!(screen(&app).contains("exact virtual time"));
    }
}
