//! `loka bench remote`: loka-remote against raw Zenoh on this machine, same payloads, two
//! processes over 127.0.0.1, alternating A B A B (docs/results/remote.md):
//!
//! - round trip: a plain thread asks an echo actor on the other node (`ask` + `wait`), against
//!   a Zenoh `put` answered by a `put` from the other process's subscriber;
//! - one way: N messages to a counting actor, then one ask for the count, against N `put`s to a
//!   counting subscriber that answers the last;
//! - pairs: the round trip from several threads at once;
//! - a large message must not stall small ones: the small round trip while another thread
//!   streams 1 MiB messages to another actor of the same node.
//!
//! To profile one flood alone: `--only-one-way BYTES` (loka, then its frame counts) or
//! `--only-raw-one-way BYTES`; `--queue-bytes` and `--link-frames` set the measuring node's
//! `NodeConfig`.
//!
//! The other process is this same binary, run as `loka bench remote --serve PORT RAW_PORT`.
//! Every reply and every count is checked: a lost, short or late message fails the run.

use anyhow::{anyhow, bail, ensure, Context as _, Result};
use loka::{Actor, Context, ReplyTo, System};
use loka_remote::{Node, NodeConfig};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};
use zenoh::Wait;

/// Messages of one one-way flood at full size (and of each `--only-*` round).
const FLOOD: u64 = 200_000;

/// How long any one reply may take before the run fails.
const PATIENCE: Duration = Duration::from_secs(10);
/// The length of the raw Zenoh handshake's pings, which no measured ping has.
const HELLO: usize = 1;

/// `loka bench remote` arguments.
#[derive(clap::Args)]
pub struct RemoteArgs {
    /// Rounds per measure (the median is reported).
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// The smallest sizes, one round: a check that everything works, not a measurement.
    #[arg(long)]
    pub quick: bool,
    /// Only loka's one-way flood of 200,000 messages of this many bytes (--rounds times), no
    /// raw Zenoh beside it, then the sending node's frame counts: a run to profile.
    #[arg(long, value_name = "BYTES")]
    pub only_one_way: Option<usize>,
    /// Only raw Zenoh's one-way flood of 200,000 messages of this many bytes: a run to profile.
    #[arg(long, value_name = "BYTES")]
    pub only_raw_one_way: Option<usize>,
    /// The sending node's `NodeConfig::queue_bytes` (default: loka-remote's).
    #[arg(long, value_name = "BYTES")]
    pub queue_bytes: Option<usize>,
    /// The sending node's `NodeConfig::link_frames` (default: loka-remote's).
    #[arg(long, value_name = "FRAMES")]
    pub link_frames: Option<usize>,
    /// Internal: serve as the other process, loka on the first port, raw Zenoh on the second.
    #[arg(long, num_args = 2, value_names = ["PORT", "RAW_PORT"], hide = true)]
    pub serve: Option<Vec<u16>>,
}

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

/// Runs `loka bench remote`.
pub fn run(args: &RemoteArgs) -> Result<()> {
    if let Some(ports) = &args.serve {
        return serve(ports[0], ports[1]);
    }
    ensure!(args.rounds >= 1, "--rounds must be at least 1, got 0");
    // A bad node setting is refused before the other process starts.
    client_config(args).validate()?;
    let rounds = if args.quick { 1 } else { args.rounds };
    let mut server = Server::start()?;
    let loka = Loka::connect(server.port, args)?;
    if let Some(size) = args.only_one_way {
        flood("one way", size, args.rounds, |size| {
            loka.one_way(size, FLOOD)
        })?;
        let stats = loka.node.stats();
        println!(
            "frames out {}, items out {}, direct {}",
            stats.frames_out, stats.items_out, stats.direct_out
        );
        return Ok(());
    }
    let raw = Raw::connect(server.raw_port)?;
    if let Some(size) = args.only_raw_one_way {
        return flood("raw one way", size, args.rounds, |size| {
            raw.one_way(size, FLOOD)
        });
    }
    let (trips, messages) = if args.quick {
        (200, 2_000)
    } else {
        (5_000, FLOOD as usize)
    };
    println!("| measure | payload | loka-remote | raw Zenoh | loka / raw |");
    println!("|---|---|---|---|---|");
    for size in [64usize, 4096, 65_536, 1 << 20] {
        let n = if size >= 65_536 { trips / 10 } else { trips };
        let (mut lp50, mut lp99, mut rp50, mut rp99) = (vec![], vec![], vec![], vec![]);
        for _ in 0..rounds {
            let (p50, p99) = summarise(loka.round_trips(size, n)?);
            lp50.push(p50);
            lp99.push(p99);
            let (p50, p99) = summarise(raw.round_trips(size, n)?);
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
            l.push(loka.one_way(size, n)?);
            r.push(raw.one_way(size, n)?);
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
            let threads: Vec<_> = (0..4)
                .map(|_| s.spawn(|| loka.round_trips(64, trips / 4)))
                .collect();
            threads
                .into_iter()
                .try_for_each(|t| t.join().map_err(|_| anyhow!("a pair panicked"))?.map(drop))
        })?;
        pairs.push(trips as f64 / start.elapsed().as_secs_f64());
    }
    println!(
        "| 4 pairs of round trips | 64 B | {:.0} trips/s | | |",
        median(&pairs)
    );
    let (quiet, loaded, streamed) = loka.round_trips_beside_a_stream(trips / 10)?;
    println!(
        "| 64 B round trip p50 / p99, quiet | 64 B | {:.1} / {:.1} µs | | |",
        quiet.0, quiet.1
    );
    println!(
        "| the same while {streamed} messages of 1 MiB stream to another actor of the node | 64 B | {:.1} / {:.1} µs | | {:.1}× p50 |",
        loaded.0,
        loaded.1,
        loaded.0 / quiet.0
    );
    drop(raw);
    server.stop();
    Ok(())
}

/// The other process.
struct Server {
    child: Child,
    port: u16,
    raw_port: u16,
}

impl Server {
    fn start() -> Result<Server> {
        let free = || -> Result<u16> {
            Ok(std::net::TcpListener::bind("127.0.0.1:0")
                .context("finding a free port on 127.0.0.1")?
                .local_addr()?
                .port())
        };
        let (port, raw_port) = (free()?, free()?);
        let exe = std::env::current_exe().context("finding this program to run the server")?;
        let mut child = Command::new(exe)
            .args(["bench", "remote", "--serve"])
            .args([port.to_string(), raw_port.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .context("starting the server process")?;
        let stdout = child.stdout.take().context("the server's output")?;
        let mut server = Server {
            child,
            port,
            raw_port,
        };
        for line in BufReader::new(stdout).lines() {
            if line
                .context("reading the server's output")?
                .starts_with("READY")
            {
                return Ok(server);
            }
        }
        server.stop();
        bail!("the server process ended before it was ready")
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Prints `rounds` one-way floods of `size`-byte messages (msg/s), one line each: the
/// `--only-*` runs (the other process stops when its `Server` is dropped).
fn flood(
    label: &str,
    size: usize,
    rounds: usize,
    run: impl Fn(usize) -> Result<f64>,
) -> Result<()> {
    for _ in 0..rounds {
        println!("{label}, {size} B: {:.0} msg/s", run(size)?);
    }
    Ok(())
}

/// The measuring node's settings, with the queue and link settings asked for.
fn client_config(args: &RemoteArgs) -> NodeConfig {
    let mut config = NodeConfig::default().lookup_timeout(PATIENCE);
    if let Some(bytes) = args.queue_bytes {
        config = config.queue_bytes(bytes);
    }
    if let Some(frames) = args.link_frames {
        config = config.link_frames(frames);
    }
    config
}

/// The other process: a loka node with `echo`, `count` and `bulk`, and a raw Zenoh session
/// answering `raw/ping` on `raw/pong` and counting `raw/flood` (the count on `raw/count`).
fn serve(port: u16, raw_port: u16) -> Result<()> {
    let system = System::builder().workers(2).build()?;
    let node = Node::open(
        &system,
        NodeConfig::default().listen(format!("tcp/127.0.0.1:{port}")),
    )?;
    node.register("echo", &system.spawn(EchoActor))?;
    node.register("count", &system.spawn(Counter::default()))?;
    node.register("bulk", &system.spawn(Counter::default()))?;

    let zenoh_error = |error: zenoh::Error| anyhow!("zenoh: {error}");
    let session = zenoh::open(raw_config("listen/endpoints", raw_port)?)
        .wait()
        .map_err(zenoh_error)?;
    // Blocking, as loka's own publishers are: under load Zenoh's default (drop when the queue
    // is full) loses a pong now and then, and the round trip waits out its patience for it.
    let pong = session
        .declare_publisher("raw/pong")
        .congestion_control(zenoh::qos::CongestionControl::Block)
        .express(true)
        .wait()
        .map_err(zenoh_error)?;
    let _ping = session
        .declare_subscriber("raw/ping")
        .callback(move |sample| {
            // A failed answer shows as a late reply on the other side.
            let _ = pong.put(sample.payload().to_bytes().into_owned()).wait();
        })
        .wait()
        .map_err(zenoh_error)?;
    let count = session
        .declare_publisher("raw/count")
        .congestion_control(zenoh::qos::CongestionControl::Block)
        .express(true)
        .wait()
        .map_err(zenoh_error)?;
    let seen = AtomicU64::new(0);
    let _flood = session
        .declare_subscriber("raw/flood")
        .callback(move |sample| {
            let n = seen.fetch_add(1, Relaxed) + 1;
            // The last message of a run carries the run's length in its first 8 bytes.
            let bytes = sample.payload().to_bytes();
            if bytes.len() >= 9 && bytes[8] == 1 {
                let _ = count.put(n.to_le_bytes().to_vec()).wait();
                seen.store(0, Relaxed);
            }
        })
        .wait()
        .map_err(zenoh_error)?;
    println!("READY");
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    Ok(())
}

fn raw_config(key: &str, port: u16) -> Result<zenoh::Config> {
    let mut config = zenoh::Config::default();
    for (key, value) in [
        ("mode", "\"peer\"".to_owned()),
        (key, format!("[\"tcp/127.0.0.1:{port}\"]")),
        ("scouting/multicast/enabled", "false".to_owned()),
    ] {
        config
            .insert_json5(key, &value)
            .map_err(|error| anyhow!("zenoh setting {key}: {error}"))?;
    }
    Ok(config)
}

/// A refused send as an error (the message, which holds a reply handle, is dropped: it cannot
/// travel between threads inside an error).
fn refused<M>(error: loka::SendError<M>) -> anyhow::Error {
    anyhow!("actor {} refused a message: {}", error.actor, error.reason)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e6
}

/// Round trips' (p50, p99) in µs.
type Percentiles = (f64, f64);

/// Round trips: (p50 µs, p99 µs).
fn summarise(mut samples: Vec<Duration>) -> Percentiles {
    samples.sort();
    (percentile(&samples, 0.5), percentile(&samples, 0.99))
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

struct Loka {
    _system: System,
    node: Node,
}

impl Loka {
    fn connect(port: u16, args: &RemoteArgs) -> Result<Loka> {
        let system = System::builder().workers(2).build()?;
        let config = client_config(args).connect(format!("tcp/127.0.0.1:{port}"));
        let node = Node::open(&system, config)?;
        Ok(Loka {
            _system: system,
            node,
        })
    }

    fn round_trips(&self, size: usize, count: usize) -> Result<Vec<Duration>> {
        let echo = self.node.lookup::<Echo>("echo")?;
        (0..count)
            .map(|_| {
                let start = Instant::now();
                let back = echo
                    .ask(|reply| Echo::Ping(vec![7u8; size], reply))
                    .map_err(refused)?
                    .wait_timeout(PATIENCE)
                    .context("a loka-remote round trip")?;
                ensure!(
                    back.len() == size,
                    "a {size} B ping came back as {} B",
                    back.len()
                );
                Ok(start.elapsed())
            })
            .collect()
    }

    fn total(&self, counter: &loka::ActorRef<Count>) -> Result<u64> {
        counter
            .ask(Count::Total)
            .map_err(refused)?
            .wait_timeout(PATIENCE * 6)
            .context("asking for the count")
    }

    /// Messages per second, one way.
    fn one_way(&self, size: usize, count: u64) -> Result<f64> {
        let counter = self.node.lookup::<Count>("count")?;
        let before = self.total(&counter)?;
        let start = Instant::now();
        for _ in 0..count {
            counter
                .send_blocking(Count::Add(vec![0u8; size]))
                .map_err(refused)?;
        }
        let total = self.total(&counter)?;
        let elapsed = start.elapsed();
        ensure!(
            total - before == count,
            "loka-remote lost messages: {} of {count} arrived",
            total - before
        );
        Ok(count as f64 / elapsed.as_secs_f64())
    }

    /// 64 B round trips quiet, then while 1 MiB messages stream to another actor of the same
    /// node (at most 4 MiB on the way: every 4 messages, the streamer waits until the actor has
    /// them): (p50, p99) quiet, (p50, p99) loaded, messages streamed.
    fn round_trips_beside_a_stream(&self, n: usize) -> Result<(Percentiles, Percentiles, u64)> {
        let bulk = self.node.lookup::<Count>("bulk")?;
        let streaming = AtomicBool::new(true);
        std::thread::scope(|s| {
            let quiet = summarise(self.round_trips(64, n)?);
            let streamer = s.spawn(|| -> Result<u64> {
                let mut sent = 0u64;
                while streaming.load(Relaxed) {
                    bulk.send_blocking(Count::Add(vec![0u8; 1 << 20]))
                        .map_err(refused)?;
                    sent += 1;
                    if sent % 4 == 0 {
                        self.total(&bulk)?;
                    }
                }
                Ok(sent)
            });
            std::thread::sleep(Duration::from_millis(50));
            let loaded = self.round_trips(64, n);
            streaming.store(false, Relaxed);
            let sent = streamer
                .join()
                .map_err(|_| anyhow!("the streaming thread panicked"))??;
            Ok((quiet, summarise(loaded?), sent))
        })
    }
}

struct Raw {
    _session: zenoh::Session,
    ping: zenoh::pubsub::Publisher<'static>,
    flood: zenoh::pubsub::Publisher<'static>,
    pongs: Mutex<mpsc::Receiver<Vec<u8>>>,
    counts: mpsc::Receiver<u64>,
    _subscribers: Vec<zenoh::pubsub::Subscriber<()>>,
}

impl Raw {
    fn connect(port: u16) -> Result<Raw> {
        let zenoh_error = |error: zenoh::Error| anyhow!("zenoh: {error}");
        let session = zenoh::open(raw_config("connect/endpoints", port)?)
            .wait()
            .map_err(zenoh_error)?;
        let (pong_tx, pongs) = mpsc::channel();
        let (count_tx, counts) = mpsc::channel();
        let pong_sub = session
            .declare_subscriber("raw/pong")
            .callback(move |sample| {
                let _ = pong_tx.send(sample.payload().to_bytes().into_owned());
            })
            .wait()
            .map_err(zenoh_error)?;
        let count_sub = session
            .declare_subscriber("raw/count")
            .callback(move |sample| {
                let bytes = sample.payload().to_bytes();
                if let Some(count) = bytes.get(..8).and_then(|b| b.try_into().ok()) {
                    let _ = count_tx.send(u64::from_le_bytes(count));
                }
            })
            .wait()
            .map_err(zenoh_error)?;
        // Express: sent at once, not held for Zenoh's batching (the lowest latency raw Zenoh
        // offers, as loka's publishers are).
        let ping = session
            .declare_publisher("raw/ping")
            .congestion_control(zenoh::qos::CongestionControl::Block)
            .express(true)
            .wait()
            .map_err(zenoh_error)?;
        let flood = session
            .declare_publisher("raw/flood")
            .congestion_control(zenoh::qos::CongestionControl::Block)
            .wait()
            .map_err(zenoh_error)?;
        // Wait until the other side's subscriber answers. The hellos are `HELLO` bytes, which
        // no measured ping is: an answer to a repeated hello that comes late is skipped.
        let deadline = Instant::now() + PATIENCE;
        loop {
            ping.put(vec![0u8; HELLO]).wait().map_err(zenoh_error)?;
            if pongs.recv_timeout(Duration::from_millis(200)).is_ok() {
                break;
            }
            ensure!(
                Instant::now() < deadline,
                "the raw Zenoh server did not answer"
            );
        }
        Ok(Raw {
            _session: session,
            ping,
            flood,
            pongs: Mutex::new(pongs),
            counts,
            _subscribers: vec![pong_sub, count_sub],
        })
    }

    fn round_trips(&self, size: usize, count: usize) -> Result<Vec<Duration>> {
        let pongs = self.pongs.lock().map_err(|_| anyhow!("a poisoned lock"))?;
        (0..count)
            .map(|_| {
                let start = Instant::now();
                self.ping
                    .put(vec![7u8; size])
                    .wait()
                    .map_err(|error| anyhow!("zenoh: {error}"))?;
                let deadline = start + PATIENCE;
                let back = loop {
                    let wait = deadline.saturating_duration_since(Instant::now());
                    let back = pongs.recv_timeout(wait).context("a raw Zenoh round trip")?;
                    if back.len() != HELLO || size == HELLO {
                        break back;
                    }
                };
                ensure!(
                    back.len() == size,
                    "a {size} B raw ping came back as {} B",
                    back.len()
                );
                Ok(start.elapsed())
            })
            .collect()
    }

    /// Messages per second, one way.
    fn one_way(&self, size: usize, count: u64) -> Result<f64> {
        let start = Instant::now();
        for i in 0..count {
            let mut bytes = vec![0u8; size.max(9)];
            if i == count - 1 {
                bytes[..8].copy_from_slice(&count.to_le_bytes());
                bytes[8] = 1;
            }
            self.flood
                .put(bytes)
                .wait()
                .map_err(|error| anyhow!("zenoh: {error}"))?;
        }
        let got = self
            .counts
            .recv_timeout(PATIENCE * 6)
            .context("the raw Zenoh count")?;
        let elapsed = start.elapsed();
        ensure!(
            got == count,
            "raw Zenoh lost messages: {got} of {count} arrived"
        );
        Ok(count as f64 / elapsed.as_secs_f64())
    }
}
