//! What the multi-process tests share: the message types both sides are built from, the
//! server node a child process runs, and how the parent starts and kills it.
#![allow(dead_code)]

use loka::{Actor, ActorRef, Context, ReplyTo, System};
use loka_remote::{Node, NodeConfig};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The lease the tests run with: a killed node must be noticed within it.
pub const LEASE: Duration = Duration::from_millis(1000);

/// What the server's store takes.
#[derive(Debug, Serialize, Deserialize)]
pub enum Kv {
    Put(String, u64),
    Get(String, ReplyTo<Option<u64>>),
    /// Message `n` of sender `from`: must come in order, each once.
    Seq {
        from: u32,
        n: u64,
    },
    /// Message `n` of sender `from` with `bytes` (byte `i` is `n + i` modulo 256): counted
    /// with `Seq`, wrong if out of order, repeated or damaged.
    Blob {
        from: u32,
        n: u64,
        #[serde(with = "serde_bytes")]
        bytes: Vec<u8>,
    },
    /// How many `Seq` and `Blob` arrived, and how many out of order, repeated or damaged.
    Check(ReplyTo<(u64, u64)>),
    /// Sends `count` events to `to`, then answers.
    Publish {
        to: ActorRef<Event>,
        count: u32,
        done: ReplyTo<u32>,
    },
    /// Keeps the reply handle and never answers (an ask that waits for the node's loss).
    Hold(ReplyTo<u64>),
    /// Stops the actor.
    Quit,
}

/// What the store publishes to a subscriber.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Event(pub u32);

/// A type no server actor takes.
#[derive(Debug, Serialize, Deserialize)]
pub struct Other(pub u8);

#[derive(Default)]
pub struct Store {
    values: std::collections::HashMap<String, u64>,
    next: std::collections::HashMap<u32, u64>,
    seen: u64,
    wrong: u64,
    held: Vec<ReplyTo<u64>>,
}

impl Actor for Store {
    type Msg = Kv;

    fn handle(&mut self, ctx: &mut Context<Self>, msg: Kv) {
        match msg {
            Kv::Put(key, value) => {
                self.values.insert(key, value);
            }
            Kv::Get(key, reply) => reply.send(self.values.get(&key).copied()),
            Kv::Seq { from, n } => {
                self.seen += 1;
                let next = self.next.entry(from).or_insert(0);
                if n != *next {
                    self.wrong += 1;
                }
                *next = n + 1;
            }
            Kv::Blob { from, n, bytes } => {
                self.handle(ctx, Kv::Seq { from, n });
                if bytes != blob(n, bytes.len()) {
                    self.wrong += 1;
                }
            }
            Kv::Check(reply) => reply.send((self.seen, self.wrong)),
            Kv::Publish { to, count, done } => {
                for i in 0..count {
                    to.send(Event(i)).unwrap();
                }
                done.send(count);
            }
            Kv::Hold(reply) => self.held.push(reply),
            Kv::Quit => ctx.stop(),
        }
    }
}

/// The bytes of blob `n`, `len` long.
pub fn blob(n: u64, len: usize) -> Vec<u8> {
    (0..len).map(|i| (n as usize + i) as u8).collect()
}

/// The node a child process runs: the store as `kv`, a second store as `victim`; prints
/// `READY` once registered, then serves until killed or its standard input closes.
pub fn serve(port: u16) {
    let system = System::builder().workers(2).build().unwrap();
    let node = Node::open(
        &system,
        NodeConfig::default()
            .listen(format!("tcp/127.0.0.1:{port}"))
            .lease(LEASE),
    )
    .unwrap();
    node.register("kv", &system.spawn(Store::default()))
        .unwrap();
    node.register("victim", &system.spawn(Store::default()))
        .unwrap();
    println!("READY {}", node.id());
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

/// A free TCP port on loopback (bound, then released for the child to take).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A server node in a child process (this test binary, running its ignored `child_server`
/// test), started and ready.
pub struct Server {
    pub child: Child,
    pub port: u16,
}

impl Server {
    pub fn start(port: u16) -> Server {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--ignored", "--exact", "child_server", "--nocapture"])
            .env("LOKA_REMOTE_CHILD_PORT", port.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        loop {
            match lines.next() {
                Some(Ok(line)) if line.starts_with("READY") => break,
                Some(Ok(_)) => continue,
                other => panic!("the server process ended before it was ready: {other:?}"),
            }
        }
        Server { child, port }
    }

    /// `kill -9`.
    pub fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client node connected to the server on `port`.
pub fn client(system: &System, port: u16) -> Node {
    Node::open(
        system,
        NodeConfig::default()
            .connect(format!("tcp/127.0.0.1:{port}"))
            .lease(LEASE)
            .lookup_timeout(Duration::from_secs(5)),
    )
    .unwrap()
}
