//! Chameneos: C creatures meet in pairs at a Mall and change colour, M meetings (Savina #7).
//!
//! Check: the Mall logs each meeting it arranges (who waited, who arrived). The calling thread
//! replays the log in order from the initial colours, applying the complement rule from its own
//! table, and compares every creature's meeting count, final colour and colour history (a hash of
//! the colours it took, in order) with what the creature reports. A wrong colour rule, a meeting
//! one side missed or a change sent to the wrong creature shows in at least one creature.

use crate::{await_result, Bench, Fault, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "chameneos",
    suite: "savina",
    about: "C chameneos meet in pairs at a mall, M meetings (4·M messages)",
    run,
    faults: &[Fault::Drop, Fault::WrongRule],
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

/// The injected [`Fault::WrongRule`]: a rule that never gives the right colour.
fn wrong_rule(a: Colour, b: Colour) -> Colour {
    (complement(a, b) + 1) % 3
}

/// The colour history after taking `colour`: a polynomial hash of the colours in order.
fn record(history: u64, colour: Colour) -> u64 {
    history
        .wrapping_mul(0x100_0000_01b3)
        .wrapping_add(u64::from(colour) + 1)
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
    /// From the Mall after the last meeting: report, then stop.
    Report,
}

/// What a creature reports after the last meeting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Creature {
    meetings: u64,
    colour: Colour,
    history: u64,
}

/// A chameneo; `WRONG_RULE` (only for the injected fault) applies [`wrong_rule`].
struct Chameneo<const WRONG_RULE: bool> {
    index: usize,
    state: Creature,
    mall: ActorRef<MallMsg>,
}

impl<const WRONG_RULE: bool> Chameneo<WRONG_RULE> {
    fn take(&mut self, colour: Colour) {
        let state = &mut self.state;
        state.meetings += 1;
        state.colour = colour;
        state.history = record(state.history, colour);
    }

    fn go_to_mall(&self) {
        self.mall
            .send(MallMsg::Meet {
                from: self.index,
                colour: self.state.colour,
            })
            .expect("mall alive");
    }
}

impl<const WRONG_RULE: bool> Actor for Chameneo<WRONG_RULE> {
    type Msg = ChameneoMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: ChameneoMsg) {
        match msg {
            ChameneoMsg::Start => {}
            ChameneoMsg::Meet { other, colour } => {
                let new = if WRONG_RULE {
                    wrong_rule(self.state.colour, colour)
                } else {
                    complement(self.state.colour, colour)
                };
                self.take(new);
                other.send(ChameneoMsg::Change(new)).expect("partner alive");
            }
            ChameneoMsg::Change(colour) => self.take(colour),
            ChameneoMsg::Report => {
                self.mall
                    .send(MallMsg::Report(self.index, self.state))
                    .expect("mall alive");
                ctx.stop();
                return;
            }
        }
        self.go_to_mall();
    }
}

enum MallMsg {
    /// Boxed, so that the Meet requests on the hot path stay small.
    Start(Box<MallStart>),
    /// A chameneo (by index) wants to meet.
    Meet { from: usize, colour: Colour },
    /// What the chameneo with this index reports after the last meeting.
    Report(usize, Creature),
}

struct MallStart {
    chameneos: Vec<ActorRef<ChameneoMsg>>,
    /// [`Fault::Drop`]: the first creature's start message is lost.
    fault: Fault,
    done: ReplyTo<Log>,
}

/// What the Mall hands the driver: the meetings in the order it arranged them (waiting,
/// arriving), the Meet requests it paired, and every creature's report.
struct Log {
    meetings: Vec<(u32, u32)>,
    paired: u64,
    creatures: Vec<Option<Creature>>,
}

struct Mall {
    chameneos: Vec<ActorRef<ChameneoMsg>>,
    /// Meetings still to arrange.
    left: u64,
    waiting: Option<usize>,
    /// Chameneos that came after the last meeting (not answered).
    turned_away: usize,
    reported: usize,
    log: Log,
    done: Option<ReplyTo<Log>>,
}

impl Actor for Mall {
    type Msg = MallMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: MallMsg) {
        match msg {
            MallMsg::Start(start) => {
                let MallStart {
                    chameneos,
                    fault,
                    done,
                } = *start;
                self.chameneos = chameneos;
                self.log.creatures = vec![None; self.chameneos.len()];
                self.done = Some(done);
                let lost = usize::from(fault == Fault::Drop);
                for chameneo in &self.chameneos[lost..] {
                    chameneo.send(ChameneoMsg::Start).expect("chameneo alive");
                }
            }
            MallMsg::Meet { from, colour } if self.left > 0 => {
                self.log.paired += 1;
                match self.waiting.take() {
                    None => self.waiting = Some(from),
                    Some(waiting) => {
                        self.left -= 1;
                        self.log.meetings.push((waiting as u32, from as u32));
                        let other = self.chameneos[from].clone();
                        self.chameneos[waiting]
                            .send(ChameneoMsg::Meet { other, colour })
                            .expect("chameneo alive");
                    }
                }
            }
            MallMsg::Meet { .. } => {
                // Each chameneo comes back exactly once after the last meeting was arranged; once
                // all have, every meeting is over and the creatures' states are final.
                self.turned_away += 1;
                if self.turned_away == self.chameneos.len() {
                    for chameneo in &self.chameneos {
                        chameneo.send(ChameneoMsg::Report).expect("chameneo alive");
                    }
                }
            }
            MallMsg::Report(index, creature) => {
                self.reported += usize::from(self.log.creatures[index].replace(creature).is_none());
                if self.reported == self.chameneos.len() {
                    if let Some(done) = self.done.take() {
                        done.send(std::mem::replace(
                            &mut self.log,
                            Log {
                                meetings: Vec::new(),
                                paired: 0,
                                creatures: Vec::new(),
                            },
                        ));
                    }
                    ctx.stop();
                }
            }
        }
    }
}

/// The complement rule as a table, independent of [`complement`]: `RULE[a][b]`.
const RULE: [[Colour; 3]; 3] = [[0, 2, 1], [2, 1, 0], [1, 0, 2]];

/// The run compared with the replay of the Mall's log.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    meetings: usize,
    /// Meetings of a creature with itself or with no such creature.
    bad_meetings: usize,
    /// Creatures whose report differs from the replay (or is missing).
    creatures_off_replay: usize,
}

fn replay(creatures: usize, meetings: &[(u32, u32)]) -> (Vec<Creature>, usize) {
    let mut state: Vec<Creature> = (0..creatures)
        .map(|i| Creature {
            colour: (i % 3) as Colour,
            ..Creature::default()
        })
        .collect();
    let mut bad = 0;
    for &(a, b) in meetings {
        let (a, b) = (a as usize, b as usize);
        if a == b || a >= creatures || b >= creatures {
            bad += 1;
            continue;
        }
        let colour = RULE[usize::from(state[a].colour)][usize::from(state[b].colour)];
        for c in [a, b] {
            state[c].meetings += 1;
            state[c].colour = colour;
            state[c].history = record(state[c].history, colour);
        }
    }
    (state, bad)
}

fn run(system: &System, run: &Run) -> Measured {
    let (creatures, meetings) = run.pick((100, 400_000), (4_000, 800_000));
    let mall = system.spawn(Mall {
        chameneos: Vec::new(),
        left: meetings,
        waiting: None,
        turned_away: 0,
        reported: 0,
        log: Log {
            meetings: Vec::with_capacity(meetings as usize),
            paired: 0,
            creatures: Vec::new(),
        },
        done: None,
    });
    let chameneos: Vec<_> = (0..creatures)
        .map(|index| {
            let state = Creature {
                colour: (index % 3) as Colour,
                ..Creature::default()
            };
            let mall = mall.clone();
            if index == 0 && run.injects(Fault::WrongRule) {
                system.spawn(Chameneo::<true> { index, state, mall })
            } else {
                system.spawn(Chameneo::<false> { index, state, mall })
            }
        })
        .collect();
    system.run_until_idle();
    let start = Instant::now();
    let pending = mall
        .ask(|done| {
            MallMsg::Start(Box::new(MallStart {
                chameneos,
                fault: run.fault,
                done,
            }))
        })
        .expect("fresh actor");
    let log = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    let log = match log {
        Ok(log) => log,
        Err(e) => return Measured::failed(0, elapsed, e),
    };
    let (expected, bad_meetings) = replay(creatures, &log.meetings);
    let creatures_off_replay = log
        .creatures
        .iter()
        .zip(&expected)
        .filter(|(got, want)| got.as_ref() != Some(want))
        .count();
    // Counted: the Meet requests the Mall paired, and the Meet and Change each creature handled.
    let handled: u64 = log.creatures.iter().flatten().map(|c| c.meetings).sum();
    Measured::checked(
        log.paired + handled,
        elapsed,
        Outcome {
            meetings: log.meetings.len(),
            bad_meetings,
            creatures_off_replay,
        },
        Outcome {
            meetings: meetings as usize,
            bad_meetings: 0,
            creatures_off_replay: 0,
        },
    )
    .with_message_count(4 * meetings, "4·M = ")
}
