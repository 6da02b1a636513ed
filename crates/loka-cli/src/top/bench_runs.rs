//! The view of `loka bench run --top`: one view over a series of runs, each serving its own
//! socket for as long as it runs.

use super::{request, App, Exit};
use anyhow::{Context as _, Result};
use ratatui::crossterm::event::{self, Event, KeyEventKind};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// The view of `loka bench run --top`: the runs, one after another, each serve their snapshots
/// on `socket` while they run; the view connects to each in turn (showing the last snapshot in
/// between) until `done` says the runs are over or the user presses `q` (the runs go on; their
/// records are printed once the view has closed). `label` names the run under way.
pub fn watch_runs(
    socket: &Path,
    refresh: u64,
    label: Arc<Mutex<String>>,
    done: &AtomicBool,
) -> Result<()> {
    let mut app = App::new(socket.to_owned());
    app.run_label = Some(label);
    let mut terminal = ratatui::try_init().context("cannot take over the terminal")?;
    let outcome = (|| loop {
        if done.load(SeqCst) {
            return Ok(());
        }
        match request(socket, &format!("watch {refresh}")) {
            Ok(lines) => {
                let (tx, rx) = mpsc::channel();
                std::thread::spawn(move || {
                    for line in lines {
                        if tx.send(line).is_err() {
                            return;
                        }
                    }
                });
                // A new run is a new system: rates start again from its first snapshot, and the
                // last run's stays on screen until then (a run shorter than a refresh would
                // otherwise never be seen: its one snapshot and its end arrive together).
                app.prev = None;
                app.cur_of_old_system = true;
                match app.run(&mut terminal, &rx)? {
                    Exit::Quit => return Ok(()),
                    Exit::Gone => continue,
                }
            }
            // Between two runs nothing is bound: keep the view (and the keys) alive.
            Err(_) => {
                terminal.draw(|f| app.draw(f)).context("drawing the view")?;
                if event::poll(Duration::from_millis(100)).context("reading the terminal")? {
                    if let Event::Key(key) = event::read().context("reading the terminal")? {
                        if key.kind == KeyEventKind::Press && app.key(key.code) {
                            return Ok(());
                        }
                    }
                }
            }
        }
    })();
    ratatui::restore();
    outcome
}
