//! Big: W actors each ping pseudo-random others N times, one ping at a time (Savina #8).

use crate::{Bench, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::sync::Arc;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "big",
    suite: "savina",
    about: "W actors each ping a pseudo-random other N times (2·W·N messages)",
    run,
    faults: &[],
};

/// Every actor of the run, by index; shared read-only.
type Table = Arc<[ActorRef<BigMsg>]>;

enum BigMsg {
    /// Set-up: every actor's address.
    Table(Table),
    /// The run begins.
    Start,
    /// From the actor with this index; answer with a pong.
    Ping(usize),
    Pong,
}

struct Big {
    index: usize,
    table: Option<Table>,
    sink: ActorRef<SinkMsg>,
    /// The xorshift64* state.
    state: u64,
    pings_left: u64,
    pongs: u64,
}

impl Big {
    fn ping_next(&mut self) {
        let table = self.table.as_ref().expect("table set");
        let target = next_target(&mut self.state, self.index, table.len());
        self.pings_left -= 1;
        table[target]
            .send(BigMsg::Ping(self.index))
            .expect("target alive");
    }
}

/// The next target of actor `index`: xorshift64*, mod W − 1, skipping `index` itself.
fn next_target(state: &mut u64, index: usize, actors: usize) -> usize {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    let value = state.wrapping_mul(0x2545_F491_4F6C_DD1D);
    let target = (value % (actors as u64 - 1)) as usize;
    if target >= index {
        target + 1
    } else {
        target
    }
}

impl Actor for Big {
    type Msg = BigMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: BigMsg) {
        match msg {
            BigMsg::Table(table) => self.table = Some(table),
            BigMsg::Start => self.ping_next(),
            BigMsg::Ping(from) => {
                let table = self.table.as_ref().expect("table set");
                table[from].send(BigMsg::Pong).expect("sender alive");
            }
            BigMsg::Pong => {
                self.pongs += 1;
                if self.pings_left > 0 {
                    self.ping_next();
                } else {
                    self.sink
                        .send(SinkMsg::Report(self.pongs))
                        .expect("sink alive");
                }
            }
        }
    }
}

enum SinkMsg {
    Start {
        table: Table,
        done: ReplyTo<usize>,
    },
    /// An actor received all its pongs.
    Report(u64),
}

/// Starts every actor, counts their reports, answers the driver, then stops them.
struct Sink {
    actors: usize,
    table: Option<Table>,
    pings: u64,
    reports: usize,
    complete: usize,
    done: Option<ReplyTo<usize>>,
}

impl Actor for Sink {
    type Msg = SinkMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: SinkMsg) {
        match msg {
            SinkMsg::Start { table, done } => {
                for actor in table.iter() {
                    actor.send(BigMsg::Start).expect("actor alive");
                }
                self.table = Some(table);
                self.done = Some(done);
            }
            SinkMsg::Report(pongs) => {
                self.reports += 1;
                self.complete += usize::from(pongs == self.pings);
                if self.reports == self.actors {
                    if let Some(done) = self.done.take() {
                        done.send(self.complete);
                    }
                    // Every ping has been answered: the actors (which hold the table) can stop.
                    if let Some(table) = self.table.take() {
                        for actor in table.iter() {
                            actor.stop();
                        }
                    }
                    ctx.stop();
                }
            }
        }
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    let (actors, pings) = size.pick((60, 10_000), (360, 60_000));
    let sink = system.spawn(Sink {
        actors,
        table: None,
        pings,
        reports: 0,
        complete: 0,
        done: None,
    });
    let table: Table = (0..actors)
        .map(|index| {
            system.spawn(Big {
                index,
                table: None,
                sink: sink.clone(),
                state: index as u64 + 1,
                pings_left: pings,
                pongs: 0,
            })
        })
        .collect();
    for actor in table.iter() {
        actor
            .send(BigMsg::Table(Arc::clone(&table)))
            .expect("fresh actor");
    }
    system.run_until_idle();
    let start = Instant::now();
    let complete = sink
        .ask(|done| SinkMsg::Start { table, done })
        .expect("fresh actor")
        .wait()
        .unwrap_or(usize::MAX);
    Measured::checked(2 * actors as u64 * pings, start.elapsed(), complete, actors)
}
