//! A busy actor does not starve the actors queued behind it on its worker. An actor that used its
//! throughput budget goes behind every actor waiting on that worker, so a message sent to an idle
//! actor from a plain thread waits for at most one budget of each busy actor queued before it —
//! what an Erlang user expects of reductions, and what a latency-sensitive actor needs beside a
//! batch job (docs/results/latency.md).
//!
//! Counted in messages, not time, under both real engines: one worker, three actors that each always have a next message
//! (they send themselves one per message), and a probe sent from the test's thread. The busy
//! actors' messages handled between the probe's send and its handling are at most about three
//! budgets; a worker that let a busy actor keep the next slot while others waited ran dozens of
//! budgets first.

use loka::{Actor, Config, Context, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

const THROUGHPUT: usize = 64;
const BUSY: usize = 3;

struct Busy {
    handled: Arc<AtomicU64>,
}

impl Actor for Busy {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, (): ()) {
        self.handled.fetch_add(1, Relaxed);
        let _ = ctx.myself().send(());
    }
}

struct Probe {
    handled: Arc<AtomicU64>,
    seen: mpsc::Sender<u64>,
}

impl Actor for Probe {
    type Msg = u64;
    fn handle(&mut self, _: &mut Context<Self>, busy_at_send: u64) {
        let _ = self.seen.send(self.handled.load(Relaxed) - busy_at_send);
    }
}

#[test]
fn a_message_to_an_idle_actor_waits_one_budget_per_busy_actor_not_dozens() {
    for engine in [
        loka::EngineKind::ActorCentric,
        loka::EngineKind::MessageCentric,
    ] {
        probe_behind_busy_actors(engine);
    }
}

fn probe_behind_busy_actors(engine: loka::EngineKind) {
    let system = System::from_config(Config {
        workers: 1,
        throughput: THROUGHPUT,
        engine,
        ..Config::default()
    })
    .unwrap();
    let handled = Arc::new(AtomicU64::new(0));
    let (seen, waits) = mpsc::channel();
    let probe = system.spawn(Probe {
        handled: Arc::clone(&handled),
        seen,
    });
    for _ in 0..BUSY {
        let busy = system.spawn(Busy {
            handled: Arc::clone(&handled),
        });
        busy.send(()).unwrap();
    }
    let mut worst = 0;
    for _ in 0..20 {
        // Let the busy actors settle into their rotation, then probe.
        let start = handled.load(Relaxed);
        let deadline = Instant::now() + Duration::from_secs(10);
        while handled.load(Relaxed) < start + 20 * THROUGHPUT as u64 {
            assert!(Instant::now() < deadline, "the busy actors stopped running");
            std::thread::yield_now();
        }
        probe.send(handled.load(Relaxed)).unwrap();
        let waited = waits
            .recv_timeout(Duration::from_secs(10))
            .expect("the probe never ran: starved behind the busy actors");
        worst = worst.max(waited);
    }
    system.shutdown();
    // Each busy actor ahead of the probe finishes at most its current budget and runs at most
    // once more before the probe's turn: 2 budgets each is generous. Dozens of budgets (the
    // next-slot streak limit is 32) mean an actor jumped the queue.
    let bound = (2 * BUSY * THROUGHPUT) as u64;
    assert!(
        worst <= bound,
        "{engine:?}: the probe waited behind {worst} busy messages (bound {bound})"
    );
}
