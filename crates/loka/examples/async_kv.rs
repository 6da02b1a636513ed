//! A TCP key-value server whose sessions are async actors (docs/async.md): one `Store` actor
//! holds the map; each connection is a `Session` ([`AsyncActor`]) started under a supervisor,
//! whose handler reads one line, asks the store, and writes the reply, top to bottom. The
//! protocol, one request per line: `SET key value` (answers `OK`), `GET key` (the value, or
//! `NONE`); anything else answers `ERR ...`.
//!
//! ```sh
//! cargo run -p loka --example async_kv --features tokio -- 127.0.0.1:7878   # serve
//! cargo run -p loka --example async_kv --features tokio -- --selftest       # check, exit 0
//! ```
//!
//! `--selftest` serves on an ephemeral loopback port, runs two clients against it at once,
//! checks every reply and exits 0 (1 on a wrong reply).

use loka::supervisor::{ChildSpec, Restart, Strategy, SupervisorSpec};
use loka::{Actor, Async, AsyncActor, AsyncContext, Context, ReplyTo, Requirement, System};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

/// The store's requests.
enum StoreMsg {
    Get(String, ReplyTo<Option<String>>),
    Set(String, String, ReplyTo<()>),
}

/// Holds the map; a plain sync actor.
#[derive(Default)]
struct Store {
    map: HashMap<String, String>,
}

impl Actor for Store {
    type Msg = StoreMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: StoreMsg) {
        match msg {
            StoreMsg::Get(key, reply) => reply.send(self.map.get(&key).cloned()),
            StoreMsg::Set(key, value, reply) => {
                self.map.insert(key, value);
                reply.send(());
            }
        }
    }
}

/// One connection. Its only message, `Next`, serves one request; it sends itself the next one
/// until the client hangs up.
struct Session {
    store: loka::ActorRef<StoreMsg>,
    /// The accepted socket, taken by `started` (a std socket: accepted on a plain thread).
    socket: Arc<Mutex<Option<std::net::TcpStream>>>,
    reader: Option<tokio::io::BufReader<OwnedReadHalf>>,
    writer: Option<OwnedWriteHalf>,
}

/// Serve the next request.
struct Next;

impl Session {
    /// Reads one request line, asks the store, writes the reply. `false` once the client is gone.
    async fn serve_one(&mut self, ctx: &mut AsyncContext<Self>) -> std::io::Result<bool> {
        let (Some(reader), Some(writer)) = (self.reader.as_mut(), self.writer.as_mut()) else {
            return Ok(false);
        };
        let mut line = String::new();
        if reader.read_line(&mut line).await? == 0 {
            return Ok(false);
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let answer = match words.as_slice() {
            ["GET", key] => {
                let key = key.to_string();
                match ctx.ask(&self.store, |r| StoreMsg::Get(key, r)).await {
                    Ok(Some(value)) => value,
                    Ok(None) => "NONE".to_owned(),
                    Err(e) => format!("ERR store: {e}"),
                }
            }
            ["SET", key, value] => {
                let (key, value) = (key.to_string(), value.to_string());
                match ctx.ask(&self.store, |r| StoreMsg::Set(key, value, r)).await {
                    Ok(()) => "OK".to_owned(),
                    Err(e) => format!("ERR store: {e}"),
                }
            }
            _ => format!("ERR unknown request {:?}", line.trim_end()),
        };
        writer.write_all(format!("{answer}\n").as_bytes()).await?;
        Ok(true)
    }
}

impl AsyncActor for Session {
    type Msg = Next;

    // Its futures use `tokio::net`: spawning it on a system without a Tokio handle is refused
    // with `SpawnError::MissingRuntime` instead of failing inside `started`.
    fn requires() -> &'static [Requirement] {
        &[Requirement::Tokio]
    }

    async fn started(&mut self, ctx: &mut AsyncContext<Self>) {
        // Registered with Tokio's reactor here: the system's handle is entered around this call.
        let socket = self.socket.lock().unwrap().take();
        let Some(socket) = socket else {
            ctx.stop();
            return;
        };
        let socket = socket
            .set_nonblocking(true)
            .and_then(|()| tokio::net::TcpStream::from_std(socket));
        match socket {
            Ok(socket) => {
                let (read, write) = socket.into_split();
                self.reader = Some(tokio::io::BufReader::new(read));
                self.writer = Some(write);
                let _ = ctx.myself().send(Next);
            }
            Err(e) => {
                eprintln!("session: {e}");
                ctx.stop();
            }
        }
    }

    async fn handle(&mut self, ctx: &mut AsyncContext<Self>, Next: Next) {
        match self.serve_one(ctx).await {
            Ok(true) => {
                let _ = ctx.myself().send(Next);
            }
            Ok(false) => ctx.stop(),
            Err(e) => {
                eprintln!("session: {e}");
                ctx.stop();
            }
        }
    }
}

/// Accepts connections on `listener` forever, each one a temporary child of `sessions`.
fn accept(
    listener: std::net::TcpListener,
    sessions: loka::supervisor::SupervisorRef,
    store: loka::ActorRef<StoreMsg>,
) {
    for (n, socket) in listener.incoming().enumerate() {
        let Ok(socket) = socket else { continue };
        let socket = Arc::new(Mutex::new(Some(socket)));
        let store = store.clone();
        let spec = ChildSpec::new(format!("session-{n}"), move || {
            Async::new(Session {
                store: store.clone(),
                socket: Arc::clone(&socket),
                reader: None,
                writer: None,
            })
        })
        .restart(Restart::Temporary);
        if let Err(e) = sessions.start_child(spec) {
            eprintln!("accept: {e}");
            return;
        }
    }
}

/// One client: sends `requests` in order on one connection, returns the reply lines.
fn client(addr: std::net::SocketAddr, requests: &[String]) -> std::io::Result<Vec<String>> {
    let mut stream = std::net::TcpStream::connect(addr)?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut replies = Vec::new();
    for request in requests {
        stream.write_all(format!("{request}\n").as_bytes())?;
        let mut line = String::new();
        reader.read_line(&mut line)?;
        replies.push(line.trim_end().to_owned());
    }
    Ok(replies)
}

/// Two clients at once, each on its own keys; every reply checked.
fn selftest(addr: std::net::SocketAddr) -> Result<(), String> {
    let runs: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|who| {
            std::thread::spawn(move || {
                let mut requests = Vec::new();
                let mut expected = Vec::new();
                for i in 0..50 {
                    requests.push(format!("GET {who}{i}"));
                    expected.push("NONE".to_owned());
                    requests.push(format!("SET {who}{i} v{i}"));
                    expected.push("OK".to_owned());
                    requests.push(format!("GET {who}{i}"));
                    expected.push(format!("v{i}"));
                }
                requests.push("DROP everything".to_owned());
                expected.push("ERR unknown request \"DROP everything\"".to_owned());
                let got = client(addr, &requests).map_err(|e| format!("client {who}: {e}"))?;
                match got.iter().zip(&expected).position(|(g, e)| g != e) {
                    None if got.len() == expected.len() => Ok(got.len()),
                    None => Err(format!(
                        "client {who}: {} replies of {}",
                        got.len(),
                        expected.len()
                    )),
                    Some(i) => Err(format!(
                        "client {who}: request {:?} answered {:?}, expected {:?}",
                        requests[i], got[i], expected[i]
                    )),
                }
            })
        })
        .collect();
    let mut total = 0;
    for run in runs {
        total += run.join().map_err(|_| "a client panicked".to_owned())??;
    }
    println!("selftest: {total} replies checked, all as expected");
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arg = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:7878".to_owned());
    let selftest_mode = arg == "--selftest";
    let bind = if selftest_mode {
        "127.0.0.1:0"
    } else {
        arg.as_str()
    };

    // Tokio's threads drive the reactor; loka's workers poll the sessions' futures.
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_io()
        .build()?;
    let system = System::builder()
        .workers(2)
        .tokio_handle(tokio.handle().clone())
        .build()?;
    let store = system.spawn(Store::default());
    let sessions = system.spawn_supervisor(SupervisorSpec::new(Strategy::OneForOne))?;
    let listener = std::net::TcpListener::bind(bind)?;
    let addr = listener.local_addr()?;
    println!("async_kv: serving on {addr}");
    {
        let sessions = sessions.clone();
        std::thread::spawn(move || accept(listener, sessions, store));
    }
    if !selftest_mode {
        loop {
            std::thread::park();
        }
    }
    let outcome = selftest(addr);
    let _ = sessions.stop();
    system.shutdown();
    tokio.shutdown_timeout(std::time::Duration::from_secs(1));
    if let Err(e) = outcome {
        eprintln!("selftest failed: {e}");
        std::process::exit(1);
    }
    Ok(())
}
