//! Ping-Pong: two actors pass a message back and forth N times (Savina #1).
//!
//! Check: every ping carries its sequence number (1, 2, …, N), which Pong checks against the
//! next one it expects and echoes in its pong, which Ping checks against the ping it last sent;
//! both count what they received. A lost, duplicated or reordered message shows as a count or a
//! sequence error (or, if the exchange stops, as a system that went idle without a result).

use crate::{await_result, Bench, Fault, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "pingpong",
    suite: "savina",
    about: "two actors exchange N round trips (2·N messages)",
    run,
    faults: &[Fault::Drop, Fault::Duplicate],
};

// The rare messages are boxed so that the two on the hot path stay 16 bytes: a bigger message
// makes every mailbox slot bigger, and this workload is nothing but mailbox traffic.

pub(crate) enum PingMsg {
    Start(Box<Start>),
    /// The answer to the ping with this sequence number.
    Pong(u64),
}

pub(crate) struct Start {
    pong: ActorRef<PongMsg>,
    rounds: u64,
    /// [`Fault::Drop`]: the first ping is lost; [`Fault::Duplicate`]: it is delivered twice.
    fault: Fault,
    done: ReplyTo<Tally>,
}

pub(crate) enum PongMsg {
    SetPing(Box<ActorRef<PingMsg>>),
    /// The ping with this sequence number.
    Ping(u64),
    /// After the run: what Pong saw.
    Report(Box<ReplyTo<Tally>>),
}

/// What one side received: messages, and those whose sequence number was not the expected one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Tally {
    received: u64,
    out_of_sequence: u64,
}

pub(crate) struct Ping {
    pong: Option<ActorRef<PongMsg>>,
    left: u64,
    /// The sequence number of the last ping sent.
    sent: u64,
    pongs: Tally,
    done: Option<ReplyTo<Tally>>,
}

impl Ping {
    pub(crate) fn new() -> Self {
        Ping {
            pong: None,
            left: 0,
            sent: 0,
            pongs: Tally::default(),
            done: None,
        }
    }

    fn send_ping(&mut self) {
        self.left -= 1;
        self.sent += 1;
        let pong = self.pong.as_ref().expect("started");
        pong.send(PongMsg::Ping(self.sent)).expect("pong alive");
    }
}

impl Actor for Ping {
    type Msg = PingMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: PingMsg) {
        self.receive(msg);
    }
}

impl Ping {
    /// Ping's handler, also run by the async variant (`async_handlers.rs`).
    #[inline(always)]
    pub(crate) fn receive(&mut self, msg: PingMsg) {
        match msg {
            PingMsg::Start(start) => {
                let Start {
                    pong,
                    rounds,
                    fault,
                    done,
                } = *start;
                self.left = rounds;
                self.done = Some(done);
                self.pong = Some(pong);
                match fault {
                    Fault::Drop => {
                        // The first ping is lost on its way: counted as sent, never delivered.
                        self.left -= 1;
                        self.sent += 1;
                        return;
                    }
                    Fault::Duplicate => {
                        let pong = self.pong.as_ref().expect("started");
                        pong.send(PongMsg::Ping(1)).expect("pong alive");
                    }
                    _ => {}
                }
            }
            PingMsg::Pong(seq) => {
                self.pongs.received += 1;
                self.pongs.out_of_sequence += u64::from(seq != self.sent);
            }
        }
        if self.left > 0 {
            self.send_ping();
        } else if let Some(done) = self.done.take() {
            done.send(self.pongs);
        }
    }
}

pub(crate) struct Pong {
    ping: Option<ActorRef<PingMsg>>,
    pings: Tally,
}

impl Actor for Pong {
    type Msg = PongMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: PongMsg) {
        self.receive(msg);
    }
}

impl Pong {
    pub(crate) fn new() -> Self {
        Pong {
            ping: None,
            pings: Tally::default(),
        }
    }

    /// Pong's handler, also run by the async variant (`async_handlers.rs`).
    #[inline(always)]
    pub(crate) fn receive(&mut self, msg: PongMsg) {
        match msg {
            PongMsg::SetPing(ping) => self.ping = Some(*ping),
            PongMsg::Ping(seq) => {
                self.pings.received += 1;
                self.pings.out_of_sequence += u64::from(seq != self.pings.received);
                let ping = self.ping.as_ref().expect("ping set");
                // Ignored failure: only an injected fault can leave a ping unanswered at the end.
                let _ = ping.send(PingMsg::Pong(seq));
            }
            PongMsg::Report(reply) => reply.send(self.pings),
        }
    }
}

/// What both sides saw, compared with N messages each and no sequence error.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    pongs: Tally,
    pings: Tally,
}

fn run(system: &System, run: &Run) -> Measured {
    let (ping, pong) = (system.spawn(Ping::new()), system.spawn(Pong::new()));
    drive(system, run, BENCH.name, ping, pong)
}

/// The run and its check, with `ping` and `pong` spawned (sync here, async in
/// `async_handlers.rs`); `name` names the benchmark in a failure.
pub(crate) fn drive(
    system: &System,
    run: &Run,
    name: &str,
    ping: ActorRef<PingMsg>,
    pong: ActorRef<PongMsg>,
) -> Measured {
    let rounds = run.pick(1_800_000, 2_000_000);
    pong.send(PongMsg::SetPing(Box::new(ping.clone())))
        .expect("fresh actor");
    system.run_until_idle();
    let start = Instant::now();
    let pending = ping
        .ask(|done| {
            PingMsg::Start(Box::new(Start {
                pong: pong.clone(),
                rounds,
                fault: run.fault,
                done,
            }))
        })
        .expect("fresh actor");
    let pongs = await_result(system, pending, run, name);
    let elapsed = start.elapsed();
    let pongs = match pongs {
        Ok(pongs) => pongs,
        Err(e) => return Measured::failed(0, elapsed, e),
    };
    // Untimed: what Pong received.
    let pending = pong
        .ask(|reply| PongMsg::Report(Box::new(reply)))
        .expect("pong alive");
    let pings = match await_result(system, pending, run, name) {
        Ok(pings) => pings,
        Err(e) => return Measured::failed(0, elapsed, e),
    };
    let expected = Tally {
        received: rounds,
        out_of_sequence: 0,
    };
    Measured::checked(
        pongs.received + pings.received,
        elapsed,
        Outcome { pongs, pings },
        Outcome {
            pongs: expected,
            pings: expected,
        },
    )
    .with_message_count(2 * rounds, "2·N = ")
}
