//! A key-value service in two processes over 127.0.0.1 (docs/remote.md), with a client that
//! survives the server's restart: it watches the store, and when the store's node is lost it
//! looks the name up again and carries on with the new incarnation.
//!
//! ```sh
//! cargo run -p loka-remote --example remote_kv -- server 7447 &
//! cargo run -p loka-remote --example remote_kv -- client 7447
//! cargo run -p loka-remote --example remote_kv -- --selftest   # both, with a kill -9 between
//! ```

use loka::{Actor, ActorRef, Context, ReplyTo, StopReason, System};
use loka_remote::{Node, NodeConfig};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::Duration;

#[derive(Debug, Serialize, Deserialize)]
enum Kv {
    Put(String, u64),
    Get(String, ReplyTo<Option<u64>>),
    Len(ReplyTo<usize>),
}

#[derive(Default)]
struct Store(HashMap<String, u64>);

impl Actor for Store {
    type Msg = Kv;
    fn handle(&mut self, _: &mut Context<Self>, msg: Kv) {
        match msg {
            Kv::Put(key, value) => {
                self.0.insert(key, value);
            }
            Kv::Get(key, reply) => reply.send(self.0.get(&key).copied()),
            Kv::Len(reply) => reply.send(self.0.len()),
        }
    }
}

const LEASE: Duration = Duration::from_secs(1);

fn server(port: u16) -> Result<(), String> {
    let system = System::builder()
        .workers(2)
        .build()
        .map_err(|e| e.to_string())?;
    let node = Node::open(
        &system,
        NodeConfig::default()
            .listen(format!("tcp/127.0.0.1:{port}"))
            .lease(LEASE),
    )
    .map_err(|e| e.to_string())?;
    node.register("kv", &system.spawn(Store::default()))
        .map_err(|e| e.to_string())?;
    println!(
        "READY serving kv on tcp/127.0.0.1:{port} as node {}",
        node.id()
    );
    // Serves until its standard input closes (or it is killed).
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    Ok(())
}

/// The client's side: the store's current reference, looked up again after a loss.
struct Client {
    node: Node,
}

impl Client {
    fn connect(system: &System, port: u16) -> Result<Client, String> {
        let node = Node::open(
            system,
            NodeConfig::default()
                .connect(format!("tcp/127.0.0.1:{port}"))
                .lease(LEASE)
                .lookup_timeout(Duration::from_secs(10)),
        )
        .map_err(|e| e.to_string())?;
        Ok(Client { node })
    }

    fn store(&self) -> Result<ActorRef<Kv>, String> {
        self.node.lookup::<Kv>("kv").map_err(|e| e.to_string())
    }

    /// Writes `count` keys and reads them back; the number read back right.
    fn round(&self, store: &ActorRef<Kv>, base: u64, count: u64) -> Result<u64, String> {
        for i in 0..count {
            store
                .send(Kv::Put(format!("k{i}"), base + i))
                .map_err(|e| e.to_string())?;
        }
        let mut right = 0;
        for i in 0..count {
            let got = store
                .ask(|reply| Kv::Get(format!("k{i}"), reply))
                .map_err(|e| e.to_string())?
                .wait_timeout(Duration::from_secs(5))
                .map_err(|e| e.to_string())?;
            right += u64::from(got == Some(base + i));
        }
        Ok(right)
    }
}

fn client(port: u16) -> Result<(), String> {
    let system = System::builder()
        .workers(2)
        .build()
        .map_err(|e| e.to_string())?;
    let client = Client::connect(&system, port)?;
    let mut round = 0;
    loop {
        let store = client.store()?;
        let lost = store.watch();
        println!("connected to the store ({store:?})");
        while !store.is_stopped() {
            match client.round(&store, round * 1000, 100) {
                Ok(right) => println!("round {round}: {right}/100 read back"),
                Err(error) => println!("round {round}: {error}"),
            }
            round += 1;
            std::thread::sleep(Duration::from_secs(1));
        }
        let reason = lost.wait().map_err(|e| e.to_string())?;
        println!("the store stopped ({reason}); looking it up again");
    }
}

/// A server child process (this example, `server PORT`), ready.
fn start_server(port: u16) -> Result<Child, String> {
    let mut child = Command::new(std::env::current_exe().map_err(|e| e.to_string())?)
        .args(["server", &port.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    for line in BufReader::new(stdout).lines() {
        if line.map_err(|e| e.to_string())?.starts_with("READY") {
            return Ok(child);
        }
    }
    Err("the server ended before it was ready".to_owned())
}

/// Server and client, the server killed and restarted in between: the client must be told,
/// find the new store, and be served by it.
fn selftest() -> Result<(), String> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| e.to_string())?
        .port();
    let mut first = start_server(port)?;
    let system = System::builder()
        .workers(2)
        .build()
        .map_err(|e| e.to_string())?;
    let client = Client::connect(&system, port)?;
    let store = client.store()?;
    let lost = store.watch();
    let right = client.round(&store, 0, 100)?;
    if right != 100 {
        return Err(format!("first server: {right}/100 read back"));
    }
    first.kill().map_err(|e| e.to_string())?;
    first.wait().map_err(|e| e.to_string())?;
    let reason = lost
        .wait_timeout(LEASE * 5)
        .map_err(|e| format!("the client was not told of the server's loss: {e}"))?;
    if reason != StopReason::NodeDown {
        return Err(format!("the store stopped with {reason}, not NodeDown"));
    }
    let mut second = start_server(port)?;
    let store = client.store()?;
    let fresh = store
        .ask(Kv::Len)
        .map_err(|e| e.to_string())?
        .wait_timeout(Duration::from_secs(5))
        .map_err(|e| e.to_string())?;
    let right = client.round(&store, 1000, 100)?;
    let _ = second.kill();
    let _ = second.wait();
    if fresh != 0 || right != 100 {
        return Err(format!(
            "restarted server: {fresh} keys before the client wrote (0 expected), {right}/100 read back"
        ));
    }
    println!("selftest: served, lost at kill -9 (NodeDown), served again by the new incarnation");
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let port = |i: usize| -> Result<u16, String> {
        args.get(i)
            .ok_or("missing PORT".to_owned())?
            .parse()
            .map_err(|_| format!("PORT {:?} is not a port number", args[i]))
    };
    let result = match args.first().map(String::as_str) {
        Some("server") => port(1).and_then(server),
        Some("client") => port(1).and_then(client),
        Some("--selftest") => selftest(),
        _ => Err("usage: remote_kv server PORT | client PORT | --selftest".to_owned()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("remote_kv: {error}");
            ExitCode::FAILURE
        }
    }
}
