//! Big: W actors each ping pseudo-random others N times, one ping at a time (Savina #8).
//!
//! Check: every pong names the actor that answered it, and the pinger checks it against the
//! actor it asked. After the run every actor reports its pongs, the pongs from the wrong actor,
//! the pings it answered and the sum of their senders' indices; the calling thread replays every
//! actor's generator to know who pings whom, and compares. A lost, duplicated or misdelivered
//! ping or pong shows as a count, a sender sum or a wrong answerer (or, where it stops an actor,
//! as a system that went idle without a result).

use crate::{await_result, Bench, Fault, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::sync::Arc;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "big",
    suite: "savina",
    about: "W actors each ping a pseudo-random other N times (2·W·N messages)",
    run,
    faults: &[Fault::Misroute, Fault::Duplicate],
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
    /// The answer of the actor with this index.
    Pong(usize),
    /// After the run: report, then stop.
    Collect(ReplyTo<Counts>),
}

/// What one actor saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Counts {
    pongs: u64,
    /// Pongs from another actor than the one last pinged.
    wrong_pongs: u64,
    pings: u64,
    /// The (wrapping) sum of `index + 1` over the senders of the pings answered.
    pingers: u64,
}

struct Big {
    index: usize,
    table: Option<Table>,
    sink: ActorRef<SinkMsg>,
    /// The xorshift64* state.
    state: u64,
    pings_left: u64,
    /// The actor pinged last.
    asked: usize,
    counts: Counts,
    /// The injected fault (actor 0 only), applied to its first ping. [`Fault::Misroute`]: the
    /// ping names the wrong sender, so its pong goes to the wrong actor; [`Fault::Duplicate`]:
    /// it is delivered twice. Set at spawn, not carried by `Start`: a payload on any variant
    /// of `BigMsg` changes its layout, which cost every ping and pong ~15%.
    fault: Fault,
}

impl Big {
    fn ping_next(&mut self, from: usize) {
        let table = self.table.as_ref().expect("table set");
        let target = next_target(&mut self.state, self.index, table.len());
        self.pings_left -= 1;
        self.asked = target;
        table[target]
            .send(BigMsg::Ping(from))
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
    fn handle(&mut self, ctx: &mut Context<Self>, msg: BigMsg) {
        match msg {
            BigMsg::Table(table) => self.table = Some(table),
            BigMsg::Start => match self.fault {
                Fault::Misroute => {
                    let actors = self.table.as_ref().expect("table set").len();
                    self.ping_next((self.index + 1) % actors);
                }
                Fault::Duplicate => {
                    self.ping_next(self.index);
                    let table = self.table.as_ref().expect("table set");
                    let _ = table[self.asked].send(BigMsg::Ping(self.index));
                }
                _ => self.ping_next(self.index),
            },
            BigMsg::Ping(from) => {
                self.counts.pings += 1;
                self.counts.pingers = self.counts.pingers.wrapping_add(from as u64 + 1);
                let table = self.table.as_ref().expect("table set");
                // Ignored failure: only an injected fault can leave a ping in flight at the end.
                let _ = table[from].send(BigMsg::Pong(self.index));
            }
            BigMsg::Pong(from) => {
                self.counts.pongs += 1;
                self.counts.wrong_pongs += u64::from(from != self.asked);
                if self.pings_left > 0 {
                    self.ping_next(self.index);
                } else {
                    // Ignored failure: only a duplicated pong makes a second, late report.
                    let _ = self.sink.send(SinkMsg::Finished(self.index));
                }
            }
            BigMsg::Collect(reply) => {
                reply.send(self.counts);
                ctx.stop();
            }
        }
    }
}

enum SinkMsg {
    Start {
        table: Table,
        done: ReplyTo<()>,
    },
    /// The actor with this index received all its pongs.
    Finished(usize),
}

/// Starts every actor and answers the driver once each has received all its pongs.
struct Sink {
    finished: Vec<bool>,
    left: usize,
    done: Option<ReplyTo<()>>,
}

impl Actor for Sink {
    type Msg = SinkMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: SinkMsg) {
        match msg {
            SinkMsg::Start { table, done } => {
                self.done = Some(done);
                for actor in table.iter() {
                    actor.send(BigMsg::Start).expect("actor alive");
                }
            }
            SinkMsg::Finished(index) => {
                if !std::mem::replace(&mut self.finished[index], true) {
                    self.left -= 1;
                }
                if self.left == 0 {
                    if let Some(done) = self.done.take() {
                        done.send(());
                    }
                    ctx.stop();
                }
            }
        }
    }
}

/// The run compared with the replay of the generators.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    actors: usize,
    /// Actors whose counts differ from the replay.
    actors_off_replay: usize,
}

fn run(system: &System, run: &Run) -> Measured {
    let (actors, pings) = run.pick((60, 25_000), (360, 60_000));
    let sink = system.spawn(Sink {
        finished: vec![false; actors],
        left: actors,
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
                asked: index,
                counts: Counts::default(),
                fault: if index == 0 { run.fault } else { Fault::None },
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
    let pending = sink
        .ask(|done| SinkMsg::Start {
            table: Arc::clone(&table),
            done,
        })
        .expect("fresh actor");
    let finished = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    if let Err(e) = finished {
        return Measured::failed(0, elapsed, e);
    }
    // Untimed: every actor's counts (then it stops, dropping its table).
    let pending: Vec<_> = table
        .iter()
        .map(|actor| actor.ask(BigMsg::Collect).expect("actor alive"))
        .collect();
    let mut counts = Vec::with_capacity(actors);
    for reply in pending {
        match await_result(system, reply, run, BENCH.name) {
            Ok(c) => counts.push(c),
            Err(e) => return Measured::failed(0, elapsed, e),
        }
    }
    // The replay: who pings whom, from every actor's own generator.
    let mut expected = vec![
        Counts {
            pongs: pings,
            ..Counts::default()
        };
        actors
    ];
    for index in 0..actors {
        let mut state = index as u64 + 1;
        for _ in 0..pings {
            let target = &mut expected[next_target(&mut state, index, actors)];
            target.pings += 1;
            target.pingers = target.pingers.wrapping_add(index as u64 + 1);
        }
    }
    let actors_off_replay = counts.iter().zip(&expected).filter(|(c, e)| c != e).count();
    let messages = counts.iter().map(|c| c.pings + c.pongs).sum();
    Measured::checked(
        messages,
        elapsed,
        Outcome {
            actors: counts.len(),
            actors_off_replay,
        },
        Outcome {
            actors,
            actors_off_replay: 0,
        },
    )
    .with_message_count(2 * actors as u64 * pings, "2·W·N = ")
}
