//! The simulation prices a message by its size (docs/simulation.md, *Messages*): a message whose
//! mailbox slot spans several cache lines brings all of them to its receiver, so a stream of
//! large messages across nodes takes longer than the same stream of small ones; on one worker,
//! where no line moves, both cost the same.

use loka::{Actor, ActorRef, Config, Context, EngineKind, Placement, SpawnOptions, System};

/// A message of 256 bytes (its slot: five cache lines, with the envelope's tag and the ready
/// flag).
type Large = [u64; 32];

/// Sends `left` default messages to `to`, one per activation (a message to itself between).
struct Sender<M: Send + 'static> {
    to: ActorRef<M>,
    left: u32,
}

impl<M: Default + Send + 'static> Actor for Sender<M> {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, (): ()) {
        let _ = self.to.send(M::default());
        self.left -= 1;
        if self.left > 0 {
            let _ = ctx.myself().send(());
        }
    }
}

struct Sink<M>(std::marker::PhantomData<M>);

impl<M: Send + 'static> Actor for Sink<M> {
    type Msg = M;
    fn handle(&mut self, _ctx: &mut Context<Self>, _: M) {}
}

fn sim() -> Config {
    let mut config = Config {
        engine: EngineKind::Sim,
        topology: "preset:xeon-x7560".to_owned(),
        workers: 32,
        policy: "hierarchical".parse().unwrap(),
        seed: 1,
        ..Config::default()
    };
    // The test waits with `run_until_idle`: only that runs the simulation.
    config.sim.quiet_ms = 0;
    config
}

/// Virtual ns for `n` messages of type `M` from a sender pinned on worker `from` to a sink
/// pinned on worker 0.
fn stream<M: Default + Send + 'static>(from: usize, n: u32) -> u64 {
    let system = System::from_config(sim()).unwrap();
    let pinned = |w| {
        SpawnOptions::default()
            .placement(Placement::Worker(w))
            .hub(true)
    };
    let sink = system.spawn_with(Sink::<M>(std::marker::PhantomData), pinned(0));
    let sender = system.spawn_with(Sender { to: sink, left: n }, pinned(from));
    sender.send(()).unwrap();
    system.run_until_idle();
    let ns = system.stats().sim.unwrap().virtual_ns;
    system.shutdown();
    ns
}

#[test]
fn large_messages_across_nodes_cost_their_further_lines() {
    let layout = loka::Machine::load(&sim()).unwrap().layout;
    // The first worker of another node than worker 0's.
    let far = (0..32)
        .find(|&w| layout.node_of(w) != layout.node_of(0))
        .unwrap();
    let n = 2_000;
    let small = stream::<u32>(far, n);
    let large = stream::<Large>(far, n);
    // Four further lines a message across QPI, streaming behind the first (the preset's remote
    // line: 135 ns × 1.5; 10 lines in flight): about 80 ns a message more, whoever pays it.
    assert!(
        large >= small + u64::from(n) * 40,
        "large {large} ns against small {small} ns for {n} messages across nodes"
    );
    // On one worker nothing moves between caches: the size costs nothing.
    assert_eq!(stream::<u32>(0, n), stream::<Large>(0, n));
}
