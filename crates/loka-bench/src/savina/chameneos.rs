//! Chameneos: C creatures meet in pairs at a Mall and change colour, M meetings (Savina #7).

use crate::{Bench, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "chameneos",
    suite: "savina",
    about: "C chameneos meet in pairs at a mall, M meetings (4·M messages)",
    run,
    faults: &[],
};

/// Blue, red, yellow: `i mod 3`.
type Colour = u8;

/// The colour both take after a meeting of `a` and `b`.
fn complement(a: Colour, b: Colour) -> Colour {
    if a == b {
        a
    } else {
        3 - a - b
    }
}

enum ChameneoMsg {
    /// The run begins: go to the Mall.
    Start,
    /// From the Mall: `other` (of `colour`) arrived while this one was waiting.
    Meet {
        other: ActorRef<ChameneoMsg>,
        colour: Colour,
    },
    /// From the partner of a meeting: the colour to take.
    Change(Colour),
    /// From the Mall after the last meeting: report the meetings, then stop.
    Report,
}

struct Chameneo {
    index: usize,
    colour: Colour,
    meetings: u64,
    mall: ActorRef<MallMsg>,
}

impl Chameneo {
    fn go_to_mall(&self) {
        self.mall
            .send(MallMsg::Meet {
                from: self.index,
                colour: self.colour,
            })
            .expect("mall alive");
    }
}

impl Actor for Chameneo {
    type Msg = ChameneoMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: ChameneoMsg) {
        match msg {
            ChameneoMsg::Start => {}
            ChameneoMsg::Meet { other, colour } => {
                self.meetings += 1;
                self.colour = complement(self.colour, colour);
                other
                    .send(ChameneoMsg::Change(self.colour))
                    .expect("partner alive");
            }
            ChameneoMsg::Change(colour) => {
                self.meetings += 1;
                self.colour = colour;
            }
            ChameneoMsg::Report => {
                self.mall
                    .send(MallMsg::Count(self.meetings))
                    .expect("mall alive");
                ctx.stop();
                return;
            }
        }
        self.go_to_mall();
    }
}

enum MallMsg {
    Start {
        chameneos: Vec<ActorRef<ChameneoMsg>>,
        done: ReplyTo<u64>,
    },
    /// A chameneo (by index) wants to meet.
    Meet { from: usize, colour: Colour },
    /// A chameneo's meeting count, after the last meeting.
    Count(u64),
}

struct Mall {
    chameneos: Vec<ActorRef<ChameneoMsg>>,
    /// Meetings still to arrange.
    left: u64,
    waiting: Option<(usize, Colour)>,
    /// Chameneos that came after the last meeting (not answered).
    turned_away: usize,
    reported: usize,
    total: u64,
    done: Option<ReplyTo<u64>>,
}

impl Actor for Mall {
    type Msg = MallMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: MallMsg) {
        match msg {
            MallMsg::Start { chameneos, done } => {
                self.chameneos = chameneos;
                self.done = Some(done);
                for chameneo in &self.chameneos {
                    chameneo.send(ChameneoMsg::Start).expect("chameneo alive");
                }
            }
            MallMsg::Meet { from, colour } if self.left > 0 => match self.waiting.take() {
                None => self.waiting = Some((from, colour)),
                Some((waiting, _)) => {
                    self.left -= 1;
                    let other = self.chameneos[from].clone();
                    self.chameneos[waiting]
                        .send(ChameneoMsg::Meet { other, colour })
                        .expect("chameneo alive");
                }
            },
            MallMsg::Meet { .. } => {
                // Each chameneo comes back exactly once after the last meeting was arranged; once
                // all have, every meeting is over and the counts are final.
                self.turned_away += 1;
                if self.turned_away == self.chameneos.len() {
                    for chameneo in &self.chameneos {
                        chameneo.send(ChameneoMsg::Report).expect("chameneo alive");
                    }
                }
            }
            MallMsg::Count(meetings) => {
                self.total += meetings;
                self.reported += 1;
                if self.reported == self.chameneos.len() {
                    if let Some(done) = self.done.take() {
                        done.send(self.total);
                    }
                    ctx.stop();
                }
            }
        }
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    let (creatures, meetings) = size.pick((100, 200_000), (4_000, 800_000));
    let mall = system.spawn(Mall {
        chameneos: Vec::new(),
        left: meetings,
        waiting: None,
        turned_away: 0,
        reported: 0,
        total: 0,
        done: None,
    });
    let chameneos: Vec<_> = (0..creatures)
        .map(|index| {
            system.spawn(Chameneo {
                index,
                colour: (index % 3) as Colour,
                meetings: 0,
                mall: mall.clone(),
            })
        })
        .collect();
    system.run_until_idle();
    let start = Instant::now();
    let total = mall
        .ask(|done| MallMsg::Start { chameneos, done })
        .expect("fresh actor")
        .wait()
        .unwrap_or(u64::MAX);
    Measured::checked(4 * meetings, start.elapsed(), total, 2 * meetings)
}
