//! big (BenchErl): N actors each ping every other actor once, all at the same time, and answer
//! every ping with a pong — an all-to-all exchange with no hub that stands out. Francesquini's fork
//! nevertheless spawns every pinger as a `hub_process`; we keep that hint (see
//! `docs/workloads.md`).

use super::{noting, params, CollectMsg, Collector};
use crate::{Bench, Measured, Run, Size};
use loka::{Actor, ActorRef, Context, SpawnOptions, System};
use std::sync::Arc;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "bencherl-big",
    suite: "bencherl",
    about: "N actors each ping all N − 1 others, answering pings with pongs (2·N·(N − 1) messages)",
    run,
    faults: &[],
};

/// N = F·cores; F is 8 (short), 16 (intermediate), 24 (long).
fn actors(size: Size) -> usize {
    params(size, 200, |s| s.pick(8, 16, 24) * s.cores)
}

type Table = Arc<[ActorRef<PingerMsg>]>;

enum PingerMsg {
    /// Set-up: every pinger's address.
    Table(Table),
    Start,
    /// From the pinger with this index.
    Ping(usize),
    Pong,
}

struct Pinger {
    index: usize,
    table: Option<Table>,
    pongs_left: usize,
    collector: ActorRef<CollectMsg<usize>>,
}

impl Actor for Pinger {
    type Msg = PingerMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: PingerMsg) {
        match msg {
            PingerMsg::Table(table) => {
                self.pongs_left = table.len() - 1;
                self.table = Some(table);
            }
            PingerMsg::Start => {
                let table = self.table.as_ref().expect("table set");
                for (other, pinger) in table.iter().enumerate() {
                    if other != self.index {
                        pinger.send(PingerMsg::Ping(self.index)).expect("alive");
                    }
                }
                if self.pongs_left == 0 {
                    self.report();
                }
            }
            PingerMsg::Ping(from) => {
                let table = self.table.as_ref().expect("table set");
                table[from].send(PingerMsg::Pong).expect("alive");
            }
            PingerMsg::Pong => {
                self.pongs_left -= 1;
                if self.pongs_left == 0 {
                    self.report();
                }
            }
        }
    }
}

impl Pinger {
    fn report(&self) {
        let _ = self.collector.send(CollectMsg::Report(self.index));
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    let n = actors(size);
    let collector = system.spawn(Collector::<usize>::new());
    let table: Table = (0..n)
        .map(|index| {
            system.spawn_with(
                Pinger {
                    index,
                    table: None,
                    pongs_left: 0,
                    collector: collector.clone(),
                },
                SpawnOptions::new().hub(true),
            )
        })
        .collect();
    for pinger in table.iter() {
        pinger
            .send(PingerMsg::Table(Arc::clone(&table)))
            .expect("fresh actor");
    }
    system.run_until_idle();
    let start = Instant::now();
    let pending = collector
        .ask(|done| CollectMsg::Arm { expected: n, done })
        .expect("fresh actor");
    for pinger in table.iter() {
        pinger.send(PingerMsg::Start).expect("fresh actor");
    }
    let reports = pending.wait();
    let elapsed = start.elapsed();
    // Every ping has been answered once every pinger has all its pongs: they can stop.
    for pinger in table.iter() {
        pinger.stop();
    }
    let mut reported = reports.unwrap_or_default();
    reported.sort_unstable();
    let complete = reported == (0..n).collect::<Vec<_>>();
    let measured = Measured::checked(
        2 * (n * (n - 1)) as u64,
        elapsed,
        (complete, reported.len()),
        (true, n),
    );
    noting(measured, ("N", n))
}
