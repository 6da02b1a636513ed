//! Ping-Pong: two actors pass a message back and forth N times (Savina #1).

use crate::{Bench, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "pingpong",
    suite: "savina",
    about: "two actors exchange N round trips (2·N messages)",
    run,
    faults: &[],
};

enum PingMsg {
    Start {
        pong: ActorRef<PongMsg>,
        rounds: u64,
        done: ReplyTo<u64>,
    },
    Pong,
}

enum PongMsg {
    SetPing(ActorRef<PingMsg>),
    Ping,
}

struct Ping {
    pong: Option<ActorRef<PongMsg>>,
    left: u64,
    received: u64,
    done: Option<ReplyTo<u64>>,
}

impl Actor for Ping {
    type Msg = PingMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: PingMsg) {
        match msg {
            PingMsg::Start { pong, rounds, done } => {
                self.left = rounds;
                self.done = Some(done);
                self.pong = Some(pong);
            }
            PingMsg::Pong => self.received += 1,
        }
        if self.left > 0 {
            self.left -= 1;
            let pong = self.pong.as_ref().expect("started");
            pong.send(PongMsg::Ping).expect("pong alive");
        } else if let Some(done) = self.done.take() {
            done.send(self.received);
        }
    }
}

struct Pong {
    ping: Option<ActorRef<PingMsg>>,
}

impl Actor for Pong {
    type Msg = PongMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: PongMsg) {
        match msg {
            PongMsg::SetPing(ping) => self.ping = Some(ping),
            PongMsg::Ping => {
                let ping = self.ping.as_ref().expect("ping set");
                ping.send(PingMsg::Pong).expect("ping alive");
            }
        }
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    let rounds = size.pick(500_000, 2_000_000);
    let ping = system.spawn(Ping {
        pong: None,
        left: 0,
        received: 0,
        done: None,
    });
    let pong = system.spawn(Pong { ping: None });
    pong.send(PongMsg::SetPing(ping.clone()))
        .expect("fresh actor");
    system.run_until_idle();
    let start = Instant::now();
    let received = ping
        .ask(|done| PingMsg::Start {
            pong: pong.clone(),
            rounds,
            done,
        })
        .expect("fresh actor")
        .wait()
        .unwrap_or(u64::MAX);
    Measured::checked(2 * rounds, start.elapsed(), received, rounds)
}
