//! Thread Ring: a token makes R hops around a ring of A actors (Savina #3).

use crate::{Bench, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "threadring",
    suite: "savina",
    about: "a token makes R hops around a ring of A actors (R messages)",
    run,
    faults: &[],
};

enum RingMsg {
    /// The ring is closed by telling the last actor its successor, the first.
    SetNext(ActorRef<RingMsg>),
    /// The token with the hops still to make.
    Token(u64),
    /// After the run: report the hops this actor made, then stop.
    Collect(ReplyTo<u64>),
}

struct Member {
    next: Option<ActorRef<RingMsg>>,
    conductor: ActorRef<ConductorMsg>,
    hops: u64,
}

impl Actor for Member {
    type Msg = RingMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: RingMsg) {
        match msg {
            RingMsg::Token(0) => self
                .conductor
                .send(ConductorMsg::Finished)
                .expect("conductor alive"),
            RingMsg::Token(left) => {
                self.hops += 1;
                let next = self.next.as_ref().expect("ring closed");
                next.send(RingMsg::Token(left - 1))
                    .expect("successor alive");
            }
            RingMsg::SetNext(next) => self.next = Some(next),
            RingMsg::Collect(reply) => {
                reply.send(self.hops);
                ctx.stop();
            }
        }
    }
}

enum ConductorMsg {
    Start {
        first: ActorRef<RingMsg>,
        hops: u64,
        done: ReplyTo<()>,
    },
    Finished,
}

/// Starts the token and answers the driver when the token has run out.
struct Conductor {
    done: Option<ReplyTo<()>>,
}

impl Actor for Conductor {
    type Msg = ConductorMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: ConductorMsg) {
        match msg {
            ConductorMsg::Start { first, hops, done } => {
                self.done = Some(done);
                first.send(RingMsg::Token(hops)).expect("ring alive");
            }
            ConductorMsg::Finished => {
                if let Some(done) = self.done.take() {
                    done.send(());
                }
                ctx.stop();
            }
        }
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    let (actors, hops) = size.pick((100, 1_000_000), (1_200, 1_200_000));
    let conductor = system.spawn(Conductor { done: None });
    // Built backwards so each actor is spawned knowing its successor; the last is linked at the end.
    let mut ring: Vec<ActorRef<RingMsg>> = Vec::with_capacity(actors);
    for _ in 0..actors {
        let member = system.spawn(Member {
            next: ring.last().cloned(),
            conductor: conductor.clone(),
            hops: 0,
        });
        ring.push(member);
    }
    ring.reverse();
    let first = ring[0].clone();
    ring[actors - 1]
        .send(RingMsg::SetNext(first.clone()))
        .expect("fresh actor");
    system.run_until_idle();

    let start = Instant::now();
    let finished = conductor
        .ask(|done| ConductorMsg::Start { first, hops, done })
        .expect("fresh actor")
        .wait();
    let elapsed = start.elapsed();

    // Verification (untimed): the hops every member made add up to R; each member then stops.
    let pending: Vec<_> = ring
        .iter()
        .map(|member| member.ask(RingMsg::Collect).expect("member alive"))
        .collect();
    let mut taken = finished.ok().map(|()| 0u64);
    for reply in pending {
        taken = taken.zip(reply.wait().ok()).map(|(sum, h)| sum + h);
    }
    let got = taken.unwrap_or(u64::MAX);
    Measured::checked(hops, elapsed, got, hops)
}
