//! Thread Ring: a token makes R hops around a ring of A actors (Savina #3).
//!
//! Check, per member: how many hops it made and the sum of the token values it forwarded, and
//! which member received the spent token, all compared with a replay of the ring on the calling
//! thread (member `k mod A` forwards `Token(R − k)`). A skipped hop, a token sent to the wrong
//! member or a lost token shows, even where the total number of hops stays R.

use crate::{await_result, Bench, Fault, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "threadring",
    suite: "savina",
    about: "a token makes R hops around a ring of A actors (R messages)",
    run,
    faults: &[Fault::Misroute, Fault::WrongRule],
};

enum RingMsg {
    /// The ring is closed by telling the last actor its successor, the first.
    SetNext(ActorRef<RingMsg>),
    /// The token with the hops still to make.
    Token(u64),
    /// After the run: report what this member forwarded, then stop.
    Collect(ReplyTo<Hops>),
}

/// What one member forwarded: tokens, and the (wrapping) sum of their values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Hops {
    hops: u64,
    values: u64,
}

struct Member {
    index: usize,
    next: Option<ActorRef<RingMsg>>,
    conductor: ActorRef<ConductorMsg>,
    forwarded: Hops,
}

impl Actor for Member {
    type Msg = RingMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: RingMsg) {
        match msg {
            RingMsg::Token(0) => self
                .conductor
                .send(ConductorMsg::Finished(self.index))
                .expect("conductor alive"),
            RingMsg::Token(left) => {
                self.forwarded.hops += 1;
                self.forwarded.values = self.forwarded.values.wrapping_add(left);
                let next = self.next.as_ref().expect("ring closed");
                next.send(RingMsg::Token(left - 1))
                    .expect("successor alive");
            }
            RingMsg::SetNext(next) => self.next = Some(next),
            RingMsg::Collect(reply) => {
                reply.send(self.forwarded);
                ctx.stop();
            }
        }
    }
}

enum ConductorMsg {
    Start {
        first: ActorRef<RingMsg>,
        hops: u64,
        done: ReplyTo<usize>,
    },
    /// The member with this index received the spent token.
    Finished(usize),
}

/// Starts the token and answers the driver with the member that received the spent token.
struct Conductor {
    done: Option<ReplyTo<usize>>,
}

impl Actor for Conductor {
    type Msg = ConductorMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: ConductorMsg) {
        match msg {
            ConductorMsg::Start { first, hops, done } => {
                self.done = Some(done);
                first.send(RingMsg::Token(hops)).expect("ring alive");
            }
            ConductorMsg::Finished(member) => {
                if let Some(done) = self.done.take() {
                    done.send(member);
                }
                ctx.stop();
            }
        }
    }
}

/// What the ring did, compared with its replay.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    /// The member that received the spent token.
    finished_at: usize,
    /// Members whose hops or forwarded values differ from the replay.
    members_off_replay: usize,
}

fn run(system: &System, run: &Run) -> Measured {
    let (actors, hops) = run.pick((100, 2_000_000), (1_200, 1_200_000));
    let conductor = system.spawn(Conductor { done: None });
    // Built backwards so each actor is spawned knowing its successor; the last is linked at the end.
    let mut ring: Vec<ActorRef<RingMsg>> = Vec::with_capacity(actors);
    for index in (0..actors).rev() {
        let member = system.spawn(Member {
            index,
            next: ring.last().cloned(),
            conductor: conductor.clone(),
            forwarded: Hops::default(),
        });
        ring.push(member);
    }
    ring.reverse();
    ring[actors - 1]
        .send(RingMsg::SetNext(ring[0].clone()))
        .expect("fresh actor");
    // The injected faults: the token starts at the wrong member, or one hop short (as if one hop
    // had decremented it twice).
    let first = ring[usize::from(run.injects(Fault::Misroute))].clone();
    let start_hops = hops - u64::from(run.injects(Fault::WrongRule));
    system.run_until_idle();

    let start = Instant::now();
    let pending = conductor
        .ask(|done| ConductorMsg::Start {
            first,
            hops: start_hops,
            done,
        })
        .expect("fresh actor");
    let finished_at = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    let finished_at = match finished_at {
        Ok(member) => member,
        Err(e) => return Measured::failed(0, elapsed, e),
    };

    // Verification (untimed): every member's hops and values against a replay of the ring; each
    // member then stops.
    let pending: Vec<_> = ring
        .iter()
        .map(|member| member.ask(RingMsg::Collect).expect("member alive"))
        .collect();
    let mut forwarded = Vec::with_capacity(actors);
    for reply in pending {
        match await_result(system, reply, run, BENCH.name) {
            Ok(hops) => forwarded.push(hops),
            Err(e) => return Measured::failed(0, elapsed, e),
        }
    }
    let mut replay = vec![Hops::default(); actors];
    let mut member = 0;
    for left in (1..=hops).rev() {
        replay[member].hops += 1;
        replay[member].values = replay[member].values.wrapping_add(left);
        member = if member + 1 == actors { 0 } else { member + 1 };
    }
    let messages = forwarded.iter().map(|f| f.hops).sum();
    let members_off_replay = forwarded
        .iter()
        .zip(&replay)
        .filter(|(f, r)| f != r)
        .count();
    Measured::checked(
        messages,
        elapsed,
        Outcome {
            finished_at,
            members_off_replay,
        },
        Outcome {
            finished_at: member,
            members_off_replay: 0,
        },
    )
    .with_message_count(hops, "R = ")
}
