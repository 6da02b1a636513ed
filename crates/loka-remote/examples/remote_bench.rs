//! loka-remote against raw Zenoh on the same machine, same payloads, two processes over
//! 127.0.0.1, alternating A B A B (docs/results/remote.md):
//!
//! - round trip: a plain thread asks an echo actor on the other node (`ask` + `wait`), against
//!   a Zenoh `put` answered by a `put` from the other process's subscriber;
//! - one way: N messages to a counting actor, then one ask for the count, against N `put`s to a
//!   counting subscriber that answers the last;
//! - pairs: the round trip from several threads at once;
//! - a large message must not stall small ones: the small round trip while another thread
//!   streams 1 MiB messages to another actor of the same node.
//!
//! ```sh
//! cargo run --release -p loka-remote --example remote_bench -- [--rounds 5] [--quick]
//! ```

use loka::{Actor, Context, ReplyTo, System};
use loka_remote::{Node, NodeConfig};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};
use zenoh::Wait;

// Binary payloads as a user writes them: `serde_bytes`, one length and the bytes.
#[derive(Serialize, Deserialize)]
enum Echo {
    Ping(
        #[serde(with = "serde_bytes")] Vec<u8>,
        ReplyTo<serde_bytes::ByteBuf>,
    ),
}

#[derive(Serialize, Deserialize)]
enum Count {
    Add(#[serde(with = "serde_bytes")] Vec<u8>),
    Total(ReplyTo<u64>),
}

struct EchoActor;
impl Actor for EchoActor {
    type Msg = Echo;
    fn handle(&mut self, _: &mut Context<Self>, Echo::Ping(bytes, reply): Echo) {
        reply.send(serde_bytes::ByteBuf::from(bytes))
    }
}

#[derive(Default)]
struct Counter(u64);
impl Actor for Counter {
    type Msg = Count;
    fn handle(&mut self, _: &mut Context<Self>, msg: Count) {
        match msg {
            Count::Add(_) => self.0 += 1,
            Count::Total(reply) => reply.send(self.0),
        }
    }
}

/// The other process: a loka node with `echo`, `count` and `bulk`, and a raw Zenoh session
/// answering `raw/ping` on `raw/pong` and counting `raw/flood` (the count on `raw/count`).
fn serve(port: u16, raw_port: u16) {
    let system = System::builder().workers(2).build().unwrap();
    let node = Node::open(
        &system,
        NodeConfig::default().listen(format!("tcp/127.0.0.1:{port}")),
    )
    .unwrap();
    node.register("echo", &system.spawn(EchoActor)).unwrap();
    node.register("count", &system.spawn(Counter::default()))
        .unwrap();
    node.register("bulk", &system.spawn(Counter::default()))
        .unwrap();

    let session = zenoh::open(raw_config("listen/endpoints", raw_port))
        .wait()
        .unwrap();
    let pong = session
        .declare_publisher("raw/pong")
        .express(true)
        .wait()
        .unwrap();
    let _ping = session
        .declare_subscriber("raw/ping")
        .callback(move |sample| {
            pong.put(sample.payload().to_bytes().into_owned())
                .wait()
                .unwrap();
        })
        .wait()
        .unwrap();
    let count = session
        .declare_publisher("raw/count")
        .express(true)
        .wait()
        .unwrap();
    let seen = AtomicU64::new(0);
    let _flood = session
        .declare_subscriber("raw/flood")
        .callback(move |sample| {
            let n = seen.fetch_add(1, Relaxed) + 1;
            // The last message of a run carries the run's length in its first 8 bytes.
            let bytes = sample.payload().to_bytes();
            if bytes.len() >= 9 && bytes[8] == 1 {
                count.put(n.to_le_bytes().to_vec()).wait().unwrap();
                seen.store(0, Relaxed);
            }
        })
        .wait()
        .unwrap();
    println!("READY");
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

fn raw_config(key: &str, port: u16) -> zenoh::Config {
    let mut config = zenoh::Config::default();
    config.insert_json5("mode", "\"peer\"").unwrap();
    config
        .insert_json5(key, &format!("[\"tcp/127.0.0.1:{port}\"]"))
        .unwrap();
    config
        .insert_json5("scouting/multicast/enabled", "false")
        .unwrap();
    config
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e6
}

/// Round trips: (p50 µs, p99 µs).
fn summarise(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    (percentile(&samples, 0.5), percentile(&samples, 0.99))
}

struct Loka {
    _system: System,
    node: Node,
}

struct Raw {
    _session: zenoh::Session,
    ping: zenoh::pubsub::Publisher<'static>,
    flood: zenoh::pubsub::Publisher<'static>,
    pongs: Arc<Mutex<mpsc::Receiver<Vec<u8>>>>,
    counts: mpsc::Receiver<u64>,
    _subscribers: Vec<zenoh::pubsub::Subscriber<()>>,
}

impl Raw {
    fn connect(port: u16) -> Raw {
        let session = zenoh::open(raw_config("connect/endpoints", port))
            .wait()
            .unwrap();
        let (pong_tx, pongs) = mpsc::channel();
        let (count_tx, counts) = mpsc::channel();
        let pong_sub = session
            .declare_subscriber("raw/pong")
            .callback(move |sample| {
                let _ = pong_tx.send(sample.payload().to_bytes().into_owned());
            })
            .wait()
            .unwrap();
        let count_sub = session
            .declare_subscriber("raw/count")
            .callback(move |sample| {
                let bytes = sample.payload().to_bytes();
                let _ = count_tx.send(u64::from_le_bytes(bytes[..8].try_into().unwrap()));
            })
            .wait()
            .unwrap();
        // Express: sent at once, not held for Zenoh's batching (the lowest latency raw Zenoh
        // offers, as loka's publishers are).
        let ping = session
            .declare_publisher("raw/ping")
            .express(true)
            .wait()
            .unwrap();
        let flood = session
            .declare_publisher("raw/flood")
            .congestion_control(zenoh::qos::CongestionControl::Block)
            .wait()
            .unwrap();
        // Wait until the other side's subscriber answers.
        loop {
            ping.put(vec![0u8; 8]).wait().unwrap();
            if pongs.recv_timeout(Duration::from_millis(200)).is_ok() {
                break;
            }
        }
        Raw {
            _session: session,
            ping,
            flood,
            pongs: Arc::new(Mutex::new(pongs)),
            counts,
            _subscribers: vec![pong_sub, count_sub],
        }
    }

    fn round_trips(&self, size: usize, count: usize) -> Vec<Duration> {
        let pongs = self.pongs.lock().unwrap();
        (0..count)
            .map(|_| {
                let start = Instant::now();
                self.ping.put(vec![7u8; size]).wait().unwrap();
                let back = pongs.recv_timeout(Duration::from_secs(10)).unwrap();
                assert_eq!(back.len(), size);
                start.elapsed()
            })
            .collect()
    }

    /// Messages per second, one way.
    fn one_way(&self, size: usize, count: u64) -> f64 {
        let start = Instant::now();
        for i in 0..count {
            let mut bytes = vec![0u8; size.max(9)];
            if i == count - 1 {
                bytes[..8].copy_from_slice(&count.to_le_bytes());
                bytes[8] = 1;
            }
            self.flood.put(bytes).wait().unwrap();
        }
        let got = self.counts.recv_timeout(Duration::from_secs(60)).unwrap();
        let elapsed = start.elapsed();
        assert_eq!(got, count, "raw Zenoh lost messages");
        count as f64 / elapsed.as_secs_f64()
    }
}

impl Loka {
    fn connect(port: u16) -> Loka {
        let system = System::builder().workers(2).build().unwrap();
        let node = Node::open(
            &system,
            NodeConfig::default()
                .connect(format!("tcp/127.0.0.1:{port}"))
                .lookup_timeout(Duration::from_secs(10)),
        )
        .unwrap();
        Loka {
            _system: system,
            node,
        }
    }

    fn round_trips(&self, size: usize, count: usize) -> Vec<Duration> {
        let echo = self.node.lookup::<Echo>("echo").unwrap();
        (0..count)
            .map(|_| {
                let start = Instant::now();
                let back = echo
                    .ask(|reply| Echo::Ping(vec![7u8; size], reply))
                    .unwrap()
                    .wait()
                    .unwrap();
                assert_eq!(back.len(), size);
                start.elapsed()
            })
            .collect()
    }

    fn one_way(&self, size: usize, count: u64) -> f64 {
        let counter = self.node.lookup::<Count>("count").unwrap();
        let before = counter.ask(Count::Total).unwrap().wait().unwrap();
        let start = Instant::now();
        for _ in 0..count {
            counter.send_blocking(Count::Add(vec![0u8; size])).unwrap();
        }
        let total = counter.ask(Count::Total).unwrap().wait().unwrap();
        let elapsed = start.elapsed();
        assert_eq!(total - before, count, "loka-remote lost messages");
        count as f64 / elapsed.as_secs_f64()
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("serve") {
        serve(args[1].parse().unwrap(), args[2].parse().unwrap());
        return ExitCode::SUCCESS;
    }
    let quick = args.iter().any(|a| a == "--quick");
    let rounds: usize = args
        .iter()
        .position(|a| a == "--rounds")
        .and_then(|i| args.get(i + 1))
        .map(|r| r.parse().expect("--rounds N"))
        .unwrap_or(if quick { 1 } else { 5 });
    let free = || {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    };
    let (port, raw_port) = (free(), free());
    let mut server = Command::new(std::env::current_exe().unwrap())
        .args(["serve", &port.to_string(), &raw_port.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = server.stdout.take().unwrap();
    for line in BufReader::new(stdout).lines() {
        if line.unwrap().starts_with("READY") {
            break;
        }
    }
    let loka = Loka::connect(port);
    let raw = Raw::connect(raw_port);
    let (trips, messages) = if quick {
        (200, 2_000)
    } else {
        (5_000, 200_000)
    };

    println!("| measure | payload | loka-remote | raw Zenoh | loka / raw |");
    println!("|---|---|---|---|---|");
    for size in [64usize, 4096, 65_536, 1 << 20] {
        let n = if size >= 65_536 { trips / 10 } else { trips };
        let (mut lp50, mut lp99, mut rp50, mut rp99) = (vec![], vec![], vec![], vec![]);
        for _ in 0..rounds {
            let (p50, p99) = summarise(loka.round_trips(size, n));
            lp50.push(p50);
            lp99.push(p99);
            let (p50, p99) = summarise(raw.round_trips(size, n));
            rp50.push(p50);
            rp99.push(p99);
        }
        let m = median;
        println!(
            "| round trip p50 | {size} B | {:.1} µs | {:.1} µs | {:.2} |",
            m(&lp50),
            m(&rp50),
            m(&lp50) / m(&rp50)
        );
        println!(
            "| round trip p99 | {size} B | {:.1} µs | {:.1} µs | {:.2} |",
            m(&lp99),
            m(&rp99),
            m(&lp99) / m(&rp99)
        );
    }
    for size in [64usize, 4096, 65_536] {
        let n = if size >= 65_536 {
            messages / 20
        } else {
            messages
        } as u64;
        let (mut l, mut r) = (vec![], vec![]);
        for _ in 0..rounds {
            l.push(loka.one_way(size, n));
            r.push(raw.one_way(size, n));
        }
        println!(
            "| one way | {size} B | {:.0} msg/s | {:.0} msg/s | {:.2} |",
            median(&l),
            median(&r),
            median(&l) / median(&r)
        );
    }
    // Pairs: 4 threads doing round trips at once, loka only (its queue per node is shared).
    let mut pairs = vec![];
    for _ in 0..rounds {
        let start = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| loka.round_trips(64, trips / 4));
            }
        });
        pairs.push(trips as f64 / start.elapsed().as_secs_f64());
    }
    println!(
        "| 4 pairs of round trips | 64 B | {:.0} trips/s | | |",
        median(&pairs)
    );
    // Small round trips while 1 MiB messages stream to another actor of the same node.
    let bulk = loka.node.lookup::<Count>("bulk").unwrap();
    let streaming = std::sync::atomic::AtomicBool::new(true);
    let (quiet, loaded) = std::thread::scope(|s| {
        let quiet = summarise(loka.round_trips(64, trips / 10));
        let streamer = s.spawn(|| {
            // At most 4 MiB on the way: every 4 messages, wait until the actor has them.
            let mut sent = 0u64;
            while streaming.load(Relaxed) {
                bulk.send_blocking(Count::Add(vec![0u8; 1 << 20])).unwrap();
                sent += 1;
                if sent % 4 == 0 {
                    bulk.ask(Count::Total).unwrap().wait().unwrap();
                }
            }
            sent
        });
        std::thread::sleep(Duration::from_millis(50));
        let loaded = summarise(loka.round_trips(64, trips / 10));
        streaming.store(false, Relaxed);
        let sent = streamer.join().unwrap();
        eprintln!("streamed {sent} messages of 1 MiB meanwhile");
        (quiet, loaded)
    });
    println!(
        "| 64 B round trip p50 / p99, quiet | 64 B | {:.1} / {:.1} µs | | |",
        quiet.0, quiet.1
    );
    println!(
        "| the same while 1 MiB messages stream to another actor of the node | 64 B | {:.1} / {:.1} µs | | {:.1}× p50 |",
        loaded.0,
        loaded.1,
        loaded.0 / quiet.0
    );
    drop(raw);
    let _ = server.kill();
    let _ = server.wait();
    ExitCode::SUCCESS
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}
