//! The `observe` socket (docs/observability.md, "Live view"): a system built with
//! `observe = "PATH"` binds a Unix socket there and serves its [`Snapshot`]s as JSON lines to
//! `loka top` and to any other client (`socat`, a script), read-only.
//!
//! Protocol: a client sends one request line and reads JSON lines back.
//!
//! | request | answer |
//! |---|---|
//! | `snapshot` | one snapshot, then the server closes the connection |
//! | `watch MS` | a snapshot now and every `MS` milliseconds (at least [`MIN_WATCH_MS`]) until the client hangs up or the system stops |
//! | anything else | one line `{"error": "..."}`, then the server closes |
//!
//! One thread accepts connections, blocked in `accept` (no wake-up while nobody connects); each
//! client is served by a thread of its own, which sleeps between two snapshots. At most
//! [`MAX_CLIENTS`] at once: one more gets one `{"error": ...}` line. Reading a snapshot reads
//! the counters the workers keep (as [`crate::System::snapshot`]): nothing is sent to an actor
//! and no worker is stopped. The socket file is removed when the system shuts down, and only if
//! it is still the socket this system bound (never a file put in its place).

use super::snapshot::Snapshot;
use crate::config::ObserveError;
use crate::engine::dispatch::Engine;
use crate::runtime::lifecycle::TERMINATED;
use crate::runtime::Shared;
use parking_lot::{Condvar, Mutex};
use std::io::{BufRead, BufReader, Read as _, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The shortest interval a `watch` request is served at, in milliseconds (a shorter one is
/// raised to it): a client cannot make the system's observer thread spin.
pub const MIN_WATCH_MS: u64 = 50;

/// The most clients served at once; one more gets a one-line error.
pub const MAX_CLIENTS: usize = 16;

/// How long a client may take to send its request line, and a write to it may block, before it
/// is dropped: a stuck client never holds up a shutdown longer than this.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(2);

/// The bound socket, before the system it serves exists.
pub(crate) struct Bound {
    listener: UnixListener,
    path: PathBuf,
    /// Device and inode of the socket file: it is removed only while it is still ours.
    id: (u64, u64),
}

impl Bound {
    /// Binds `path`, refusing one that exists.
    pub(crate) fn bind(path: &Path) -> Result<Bound, ObserveError> {
        if std::fs::symlink_metadata(path).is_ok() {
            return Err(ObserveError::Exists {
                path: path.to_owned(),
            });
        }
        let listener = UnixListener::bind(path).map_err(|error| {
            if error.kind() == std::io::ErrorKind::AddrInUse {
                ObserveError::Exists {
                    path: path.to_owned(),
                }
            } else {
                ObserveError::Bind {
                    path: path.to_owned(),
                    error,
                }
            }
        })?;
        let meta = std::fs::symlink_metadata(path).map_err(|error| ObserveError::Bind {
            path: path.to_owned(),
            error,
        })?;
        Ok(Bound {
            listener,
            path: path.to_owned(),
            id: (meta.dev(), meta.ino()),
        })
    }

    /// Starts serving `shared`'s snapshots.
    pub(crate) fn serve(self, engine: Engine, shared: Arc<Shared>) -> Result<Server, ObserveError> {
        let state = Arc::new(State {
            stop: Mutex::new(false),
            wake: Condvar::new(),
            clients: Mutex::new(Vec::new()),
        });
        let listener = self
            .listener
            .try_clone()
            .map_err(|error| ObserveError::Spawn {
                path: self.path.clone(),
                error,
            })?;
        let source = Arc::new(Source { engine, shared });
        let thread_state = Arc::clone(&state);
        let accept = std::thread::Builder::new()
            .name("loka-observe".to_owned())
            .spawn(move || accept_loop(&listener, &source, &thread_state))
            .map_err(|error| ObserveError::Spawn {
                path: self.path.clone(),
                error,
            })?;
        Ok(Server {
            bound: self,
            state,
            accept: Mutex::new(Some(accept)),
        })
    }

    /// Removes the socket file if it is still the one bound here.
    fn remove(&self) {
        if let Ok(meta) = std::fs::symlink_metadata(&self.path) {
            if (meta.dev(), meta.ino()) == self.id {
                let _ = std::fs::remove_file(&self.path);
            }
        }
    }
}

impl Drop for Bound {
    fn drop(&mut self) {
        self.remove();
    }
}

/// What the serving threads read snapshots from.
struct Source {
    engine: Engine,
    shared: Arc<Shared>,
}

impl Source {
    fn snapshot(&self) -> Snapshot {
        Snapshot::of(&self.engine, &self.shared)
    }

    fn terminated(&self) -> bool {
        self.shared.lifecycle.phase() == TERMINATED
    }
}

/// Shared by the accepting thread, the client threads and the system.
struct State {
    stop: Mutex<bool>,
    wake: Condvar,
    clients: Mutex<Vec<JoinHandle<()>>>,
}

impl State {
    fn stopped(&self) -> bool {
        *self.stop.lock()
    }

    /// Sleeps `interval` or until the server stops; returns whether it stopped.
    fn sleep(&self, interval: Duration) -> bool {
        let mut stop = self.stop.lock();
        if !*stop {
            let _ = self.wake.wait_for(&mut stop, interval);
        }
        *stop
    }
}

/// The running server, owned by the system: [`stop`](Self::stop) ends its threads and removes
/// the socket file.
pub(crate) struct Server {
    bound: Bound,
    state: Arc<State>,
    accept: Mutex<Option<JoinHandle<()>>>,
}

impl Server {
    /// The socket's path.
    pub(crate) fn path(&self) -> &Path {
        &self.bound.path
    }

    /// Ends the serving threads (clients see the connection close) and removes the socket file.
    /// Idempotent.
    pub(crate) fn stop(&self) {
        let Some(accept) = self.accept.lock().take() else {
            return;
        };
        *self.state.stop.lock() = true;
        self.state.wake.notify_all();
        // The accepting thread is blocked in `accept`: a connection wakes it, and it sees the
        // flag. If the connection fails (the file was removed by someone else), the thread is
        // left blocked rather than waited for.
        if UnixStream::connect(&self.bound.path).is_ok() {
            let _ = accept.join();
        }
        let clients = std::mem::take(&mut *self.state.clients.lock());
        for client in clients {
            let _ = client.join();
        }
        self.bound.remove();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(listener: &UnixListener, source: &Arc<Source>, state: &Arc<State>) {
    for stream in listener.incoming() {
        if state.stopped() {
            return;
        }
        let Ok(mut stream) = stream else { continue };
        let mut clients = state.clients.lock();
        clients.retain(|c| !c.is_finished());
        if clients.len() >= MAX_CLIENTS {
            drop(clients);
            let _ = stream.set_write_timeout(Some(CLIENT_TIMEOUT));
            let _ = write_error(
                &mut stream,
                &format!("too many observers: {MAX_CLIENTS} are connected"),
            );
            continue;
        }
        let source = Arc::clone(source);
        let client_state = Arc::clone(state);
        let spawned = std::thread::Builder::new()
            .name("loka-observe-client".to_owned())
            .spawn(move || serve_client(stream, &source, &client_state));
        if let Ok(handle) = spawned {
            clients.push(handle);
        }
    }
}

/// A request line.
#[derive(Debug, PartialEq, Eq)]
enum Request {
    Snapshot,
    Watch(Duration),
}

fn parse_request(line: &str) -> Result<Request, String> {
    let mut words = line.split_whitespace();
    let request = match (words.next(), words.next(), words.next()) {
        (Some("snapshot"), None, None) => Request::Snapshot,
        (Some("watch"), Some(ms), None) => {
            let ms: u64 = ms
                .parse()
                .map_err(|_| format!("bad interval `{ms}` in `watch MS`: milliseconds expected"))?;
            Request::Watch(Duration::from_millis(ms.max(MIN_WATCH_MS)))
        }
        _ => {
            return Err(format!(
                "unknown request `{}` (known: `snapshot`, `watch MS`)",
                line.trim()
            ))
        }
    };
    Ok(request)
}

fn write_error(stream: &mut UnixStream, message: &str) -> std::io::Result<()> {
    let line = serde_json::json!({ "error": message }).to_string();
    stream.write_all(line.as_bytes())?;
    stream.write_all(b"\n")
}

fn write_snapshot(stream: &mut UnixStream, source: &Source) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(&source.snapshot()).map_err(std::io::Error::other)?;
    line.push(b'\n');
    stream.write_all(&line)
}

fn serve_client(mut stream: UnixStream, source: &Source, state: &State) {
    let _ = stream.set_read_timeout(Some(CLIENT_TIMEOUT));
    let _ = stream.set_write_timeout(Some(CLIENT_TIMEOUT));
    let mut line = String::new();
    let read = stream
        .try_clone()
        .and_then(|s| BufReader::new(s).take(1024).read_line(&mut line));
    if read.is_err() || line.is_empty() {
        return;
    }
    match parse_request(&line) {
        Err(message) => {
            let _ = write_error(&mut stream, &message);
        }
        Ok(Request::Snapshot) => {
            let _ = write_snapshot(&mut stream, source);
        }
        Ok(Request::Watch(interval)) => loop {
            // A client that hung up makes the write fail: its thread ends.
            if write_snapshot(&mut stream, source).is_err() || source.terminated() {
                return;
            }
            if state.sleep(interval) {
                return;
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_parse_and_bad_ones_are_named() {
        assert_eq!(parse_request("snapshot\n"), Ok(Request::Snapshot));
        assert_eq!(
            parse_request("watch 1000\n"),
            Ok(Request::Watch(Duration::from_secs(1)))
        );
        assert_eq!(
            parse_request("watch 1"),
            Ok(Request::Watch(Duration::from_millis(MIN_WATCH_MS)))
        );
        let err = parse_request("watch soon").unwrap_err();
        assert!(err.contains("`soon`"), "{err}");
        let err = parse_request("stop everything").unwrap_err();
        assert!(err.contains("`stop everything`"), "{err}");
    }
}
