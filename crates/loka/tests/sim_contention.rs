//! The simulation's contention term (docs/simulation.md, *Contention*): many workers streaming
//! from one node's memory, or writing one mailbox in turn, take longer than the same work spread
//! out; one worker alone costs what it did without the term; runs stay reproducible.

use loka::{Actor, ActorRef, Config, Context, EngineKind, Placement, SpawnOptions, System};

fn sim(topology: &str, workers: usize, policy: &str) -> Config {
    let mut config = Config {
        engine: EngineKind::Sim,
        topology: topology.to_owned(),
        workers,
        policy: policy.parse().unwrap(),
        seed: 1,
        ..Config::default()
    };
    // The tests wait with `run_until_idle`: only that runs the simulation.
    config.sim.quiet_ms = 0;
    config
}

/// `config` with the contention term switched off by a cost file: capacities no demand reaches,
/// no batches to find a mailbox's writers in.
fn without_contention(mut config: Config, name: &str) -> Config {
    let dir = std::env::temp_dir().join(format!("loka-sim-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("cost.toml");
    std::fs::write(
        &file,
        "stream_node = 1e12\nstream_link = 1e12\nmailbox_batches = 0\n",
    )
    .unwrap();
    config.sim.cost = Some(file);
    config
}

/// Handles `left` messages, sending itself the next after each: every activation reads its whole
/// declared footprint again.
struct Streamer {
    left: u32,
}

impl Actor for Streamer {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, (): ()) {
        self.left -= 1;
        if self.left > 0 {
            let _ = ctx.myself().send(());
        }
    }
}

/// Virtual ns and stats of one streamer of 8 MiB (more than any Opteron cache, so every
/// activation reads its home node's memory) on each of `workers`, all started at once.
fn streams(config: Config, workers: &[usize]) -> loka::SimStats {
    let system = System::from_config(config).unwrap();
    let streamers: Vec<_> = workers
        .iter()
        .map(|&w| {
            let options = SpawnOptions::default()
                .placement(Placement::Worker(w))
                .hub(true)
                .footprint(8 << 20);
            system.spawn_with(Streamer { left: 10 }, options)
        })
        .collect();
    for s in &streamers {
        s.send(()).unwrap();
    }
    system.run_until_idle();
    let stats = system.stats().sim.unwrap();
    system.shutdown();
    stats
}

/// The first worker of each of the Opteron preset's first `n` nodes, and `n` workers of node 0.
fn spread_and_crowded(n: usize) -> (Vec<usize>, Vec<usize>) {
    let layout = loka::Machine::load(&sim("preset:opteron6376", 64, "lgs"))
        .unwrap()
        .layout;
    let spread = (0..layout.node_count())
        .map(|node| layout.workers_of_node(node)[0])
        .take(n)
        .collect();
    let crowded = layout.workers_of_node(layout.node_of(0))[..n].to_vec();
    (spread, crowded)
}

/// Eight streams from one node's memory share its controller (15 GB/s on this preset; one core
/// streams 6.4 GB/s): they take far longer than eight streams from eight nodes, which the model
/// without contention prices the same.
#[test]
fn many_workers_streaming_from_one_node_wait_for_its_memory() {
    let (spread, crowded) = spread_and_crowded(8);
    let config = sim("preset:opteron6376", 64, "lgs");
    let (s, c) = (streams(config.clone(), &spread), streams(config, &crowded));
    assert!(
        c.virtual_ns as f64 > 2.0 * s.virtual_ns as f64,
        "one node {} ns, eight nodes {} ns",
        c.virtual_ns,
        s.virtual_ns
    );
    assert!(c.memory_queue_ns > 10 * s.memory_queue_ns.max(1), "{c:?}");
    // Without the term the two cost the same: the difference is the term's.
    let off = without_contention(sim("preset:opteron6376", 64, "lgs"), "streams");
    let (s0, c0) = (streams(off.clone(), &spread), streams(off, &crowded));
    assert_eq!(s0.virtual_ns, c0.virtual_ns);
    assert_eq!(c0.memory_queue_ns, 0);
    // The same program twice: the same schedule, bit for bit.
    let again = streams(sim("preset:opteron6376", 64, "lgs"), &crowded);
    assert_eq!(again, c);
}

/// One worker alone has nobody to contend with: its virtual time is the model's without the
/// term, to the nanosecond, both for streams and for a mailbox it alone writes.
#[test]
fn a_lone_worker_costs_what_it_did_without_contention() {
    let on = streams(sim("preset:opteron6376", 64, "lgs"), &[0]);
    let off = streams(
        without_contention(sim("preset:opteron6376", 64, "lgs"), "lone"),
        &[0],
    );
    assert_eq!(on.virtual_ns, off.virtual_ns);
    assert_eq!(on.trace_hash, off.trace_hash);
    assert_eq!(on.memory_queue_ns, 0);
    let on = fan_in(sim("preset:xeon-x7560", 32, "hierarchical"), &[0, 0, 0]);
    let off = fan_in(
        without_contention(sim("preset:xeon-x7560", 32, "hierarchical"), "lone-tail"),
        &[0, 0, 0],
    );
    assert_eq!(on.virtual_ns, off.virtual_ns);
    assert_eq!(on.mailbox_tail_ns, 0);
}

/// Sends `left` messages to `to`, one per activation (it sends itself the next turn).
struct Sender {
    to: ActorRef<u32>,
    left: u32,
}

impl Actor for Sender {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, (): ()) {
        let _ = self.to.send(self.left);
        self.left -= 1;
        if self.left > 0 {
            let _ = ctx.myself().send(());
        }
    }
}

struct Sink;

impl Actor for Sink {
    type Msg = u32;
    fn handle(&mut self, _ctx: &mut Context<Self>, _: u32) {}
}

/// Pinned on worker `w`, as a hub (`hierarchical` keeps it there when it yields).
fn pinned(w: usize) -> SpawnOptions {
    SpawnOptions::default()
        .placement(Placement::Worker(w))
        .hub(true)
}

/// A sink pinned on worker 0 and one sender pinned on each of `senders` (workers), all sending
/// at once; the stats when all is delivered.
fn fan_in(config: Config, senders: &[usize]) -> loka::SimStats {
    let system = System::from_config(config).unwrap();
    let sink = system.spawn_with(Sink, pinned(0));
    let senders: Vec<_> = senders
        .iter()
        .map(|&w| {
            let sender = Sender {
                to: sink.clone(),
                left: 2_000,
            };
            system.spawn_with(sender, pinned(w))
        })
        .collect();
    for s in &senders {
        s.send(()).unwrap();
    }
    system.run_until_idle();
    let stats = system.stats().sim.unwrap();
    system.shutdown();
    stats
}

/// Four senders write one mailbox on node 0 of the Xeon preset from other nodes. They take the
/// mailbox's tail line from one another in turn, one at a time: 8,000 messages take at least one
/// hand-off each, across QPI for three of the four hand-offs when the senders sit on nodes 1, 2
/// and 3, within node 1's L3 when all four sit there. (Without the term the model charged a
/// batch's sends to the one sender that woke the receiver, and, with these senders on three
/// nodes, predicted 0.15 ms: 18 ns a message.)
#[test]
fn senders_on_many_nodes_serialize_on_one_mailbox_tail() {
    let layout = loka::Machine::load(&sim("preset:xeon-x7560", 32, "hierarchical"))
        .unwrap()
        .layout;
    let node = |n: usize, i: usize| layout.workers_of_node((layout.node_of(0) + n) % 4)[i];
    let one_node = [node(1, 0), node(1, 1), node(1, 2), node(1, 3)];
    let three_nodes = [node(1, 0), node(2, 0), node(3, 0), node(1, 1)];
    let config = sim("preset:xeon-x7560", 32, "hierarchical");
    let near = fan_in(config.clone(), &one_node);
    let far = fan_in(config.clone(), &three_nodes);
    assert!(near.mailbox_tail_ns > 0 && far.mailbox_tail_ns > near.mailbox_tail_ns);
    // The writers take turns: 8,000 messages cannot go faster than one tail transfer each,
    // and three of the four hand-offs cross QPI (202 ns), one stays in node 1's L3 (21 ns).
    let round = 3.0 * 202.5 + 21.0;
    assert!(
        far.virtual_ns as f64 > 0.5 * 8_000.0 * round / 4.0,
        "{far:?}"
    );
    // Reproducible with the term on.
    let again = fan_in(sim("preset:xeon-x7560", 32, "hierarchical"), &three_nodes);
    assert_eq!(again, far);
}

/// Sends `n` messages to `to` in one activation, as bang's senders do.
struct Burst {
    to: ActorRef<u32>,
    n: u32,
}

impl Actor for Burst {
    type Msg = ();
    fn handle(&mut self, _ctx: &mut Context<Self>, (): ()) {
        for i in 0..self.n {
            let _ = self.to.send(i);
        }
    }
}

/// Bursts from four workers on three nodes into a sink that gulps them (bang's shape). The engine
/// sees only the send that wakes the sink; the others find it scheduled and go straight into its
/// mailbox. Once a batch of the sink's took more than a budget, a wake-up of it has its mailbox
/// watched, so the next round's bursts are seen and take the tail line from one another as in
/// the test above. (Before that rule, after backlogs were gulped instead of requeued, every
/// round's 8,000 sends were charged to the one worker whose send woke the sink, at its distance,
/// and no tail was priced: bang on the Xeon preset predicted 7 ms under `erlang` and 52 ms under
/// `hierarchical`, both from that one worker's clock.)
#[test]
fn bursts_into_a_gulped_backlog_are_seen_and_priced() {
    let config = sim("preset:xeon-x7560", 32, "hierarchical");
    let layout = loka::Machine::load(&config).unwrap().layout;
    let node = |n: usize, i: usize| layout.workers_of_node((layout.node_of(0) + n) % 4)[i];
    let system = System::from_config(config).unwrap();
    let sink = system.spawn_with(Sink, pinned(0));
    let senders: Vec<_> = [node(1, 0), node(2, 0), node(3, 0), node(1, 1)]
        .iter()
        .map(|&w| {
            let to = sink.clone();
            system.spawn_with(Burst { to, n: 2_000 }, pinned(w))
        })
        .collect();
    let round = || {
        for s in &senders {
            s.send(()).unwrap();
        }
        system.run_until_idle();
        system.stats().sim.unwrap()
    };
    let first = round();
    let second = round();
    system.shutdown();
    // The second round's bursts were watched: they paid for the tail.
    assert!(
        second.mailbox_tail_ns > first.mailbox_tail_ns,
        "{first:?} {second:?}"
    );
    // And they took turns: at least half of one tail transfer per message, three of the four
    // hand-offs across QPI (202 ns) and one within node 1's L3 (21 ns).
    let turn = (3.0 * 202.5 + 21.0) / 4.0;
    let took = (second.virtual_ns - first.virtual_ns) as f64;
    assert!(
        took > 0.5 * 8_000.0 * turn,
        "{took} ns for the second round"
    );
}

/// The term's keys are checked like every cost-file key: a bad value or a misspelt key is a
/// typed error naming the key and the file.
#[test]
fn a_bad_contention_key_names_the_key_and_the_file() {
    let dir = std::env::temp_dir().join(format!("loka-sim-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (text, key) in [
        ("stream_node = 0\n", "stream_node"),
        ("stream_link = -2\n", "stream_link"),
        ("tail_lines = \"x\"\n", "tail_lines"),
        ("mailbox_window = 5000\n", "mailbox_window"),
    ] {
        let file = dir.join("contention.toml");
        std::fs::write(&file, text).unwrap();
        let mut config = sim("preset:xeon-x7560", 4, "cls");
        config.sim.cost = Some(file);
        let Err(err) = System::from_config(config) else {
            panic!("{text} was accepted")
        };
        let message = err.to_string();
        assert!(matches!(err, loka::ConfigError::SimCost { .. }), "{err:?}");
        assert!(
            message.contains(&format!("`{key}`")) && message.contains("contention.toml"),
            "{message}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
