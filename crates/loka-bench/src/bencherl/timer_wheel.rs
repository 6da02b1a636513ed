//! timer_wheel (BenchErl): N actors; each pings every other actor in turn, waiting for the pong
//! before the next ping, while answering every ping it receives. BenchErl runs it twice: `wheel`,
//! where the wait for a pong has a (never expiring) timeout, and `no_wheel`, without one. loka has
//! no timers yet, so this is the `no_wheel` variant. Francesquini's fork spawns every actor as a
//! `hub_process`; so do we.

use super::{noting, params, CollectMsg, Collector};
use crate::{Bench, Measured, Run, Size};
use loka::{Actor, ActorRef, Context, SpawnOptions, System};
use std::sync::Arc;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "bencherl-timer_wheel",
    suite: "bencherl",
    about: "N actors each ping the N − 1 others one at a time, no timeouts (2·N·(N − 1) messages)",
    run,
    faults: &[],
};

/// N = F·cores; F is 16 (short), 40 (intermediate), 125 (long).
fn actors(size: Size) -> usize {
    params(size, 400, |s| s.pick(16, 40, 125) * s.cores)
}

type Table = Arc<[ActorRef<HandlerMsg>]>;

enum HandlerMsg {
    /// `{init, Pids}`.
    Init(Table),
    Start,
    /// `{From, ping}`.
    Ping(usize),
    /// `{From, pong}`.
    Pong(usize),
}

struct Handler {
    index: usize,
    table: Option<Table>,
    /// The next actor to ping (in list order, skipping itself); `table.len()` when all were.
    next: usize,
    /// The actor whose pong is awaited.
    awaiting: Option<usize>,
    pings_answered: usize,
    pongs: usize,
    /// Pongs from an actor that was not awaited.
    stray: usize,
    collector: ActorRef<CollectMsg<(usize, usize)>>,
}

impl Handler {
    fn ping_next(&mut self) {
        let table = self.table.as_ref().expect("initialised");
        if self.next == self.index {
            self.next += 1;
        }
        if self.next < table.len() {
            table[self.next]
                .send(HandlerMsg::Ping(self.index))
                .expect("alive");
            self.awaiting = Some(self.next);
            self.next += 1;
        }
    }

    fn report_if_done(&self) {
        let others = self.table.as_ref().map_or(0, |t| t.len() - 1);
        if self.pongs == others && self.pings_answered == others {
            let _ = self
                .collector
                .send(CollectMsg::Report((self.index, self.stray)));
        }
    }
}

impl Actor for Handler {
    type Msg = HandlerMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: HandlerMsg) {
        match msg {
            HandlerMsg::Init(table) => self.table = Some(table),
            HandlerMsg::Start => {
                self.ping_next();
                self.report_if_done();
            }
            HandlerMsg::Ping(from) => {
                let table = self.table.as_ref().expect("initialised");
                table[from]
                    .send(HandlerMsg::Pong(self.index))
                    .expect("alive");
                self.pings_answered += 1;
                self.report_if_done();
            }
            HandlerMsg::Pong(from) => {
                if self.awaiting.take() != Some(from) {
                    self.stray += 1;
                }
                self.pongs += 1;
                self.ping_next();
                self.report_if_done();
            }
        }
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    let n = actors(size);
    let collector = system.spawn(Collector::<(usize, usize)>::new());
    let table: Table = (0..n)
        .map(|index| {
            system.spawn_with(
                Handler {
                    index,
                    table: None,
                    next: 0,
                    awaiting: None,
                    pings_answered: 0,
                    pongs: 0,
                    stray: 0,
                    collector: collector.clone(),
                },
                SpawnOptions::new().hub(true),
            )
        })
        .collect();
    for handler in table.iter() {
        handler
            .send(HandlerMsg::Init(Arc::clone(&table)))
            .expect("fresh actor");
    }
    system.run_until_idle();
    let start = Instant::now();
    let pending = collector
        .ask(|done| CollectMsg::Arm { expected: n, done })
        .expect("fresh actor");
    for handler in table.iter() {
        handler.send(HandlerMsg::Start).expect("fresh actor");
    }
    let reports = pending.wait();
    let elapsed = start.elapsed();
    // Every handler has its pongs and answered every ping: nothing is in flight.
    for handler in table.iter() {
        handler.stop();
    }
    let mut reports = reports.unwrap_or_default();
    reports.sort_unstable();
    let expected: Vec<(usize, usize)> = (0..n).map(|i| (i, 0)).collect();
    let measured = Measured::checked(2 * (n * (n - 1)) as u64, elapsed, reports == expected, true);
    noting(measured, ("N", n))
}
