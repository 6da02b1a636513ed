//! bang (BenchErl): S senders each send M messages, all at once, to one receiver — a
//! many-to-one hot spot. The receiver is the hub (`hub_process` in Francesquini's fork).

use super::{noting, params};
use crate::{Bench, Measured, Run, Size};
use loka::{Actor, ActorRef, Context, ReplyTo, SpawnOptions, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "bencherl-bang",
    suite: "bencherl",
    about: "S senders each send M messages to one hub receiver (S·M messages)",
    run,
    faults: &[],
};

/// BenchErl's message: a tuple of five references, matched by the receiver.
type Bang = [u64; 5];
const BANG: Bang = [0xb1, 0xb2, 0xb3, 0xb4, 0xb5];

/// Senders S and messages per sender M.
#[derive(Debug, Clone, Copy)]
struct Params {
    senders: usize,
    messages: u64,
}

/// S = M = F·cores; F is 16 (short), 55 (intermediate), 79 (long).
fn of(size: Size) -> Params {
    params(
        size,
        Params {
            senders: 400,
            messages: 400,
        },
        |s| {
            let n = s.pick(16, 55, 79) * s.cores;
            Params {
                senders: n,
                messages: n as u64,
            }
        },
    )
}

enum ReceiverMsg {
    Arm(ReplyTo<u64>),
    Bang(Bang),
}

struct Receiver {
    expected: u64,
    received: u64,
    /// Messages that were not the bang token.
    wrong: u64,
    done: Option<ReplyTo<u64>>,
}

impl Actor for Receiver {
    type Msg = ReceiverMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: ReceiverMsg) {
        match msg {
            ReceiverMsg::Arm(done) => self.done = Some(done),
            ReceiverMsg::Bang(token) => {
                self.received += 1;
                self.wrong += u64::from(token != BANG);
            }
        }
        if self.received == self.expected {
            if let Some(done) = self.done.take() {
                done.send(self.received - self.wrong);
                ctx.stop();
            }
        }
    }
}

struct Sender {
    receiver: ActorRef<ReceiverMsg>,
    messages: u64,
}

impl Actor for Sender {
    /// Go.
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _go: ()) {
        for _ in 0..self.messages {
            self.receiver
                .send(ReceiverMsg::Bang(BANG))
                .expect("receiver alive");
        }
        ctx.stop();
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    let p = of(size);
    let (senders, messages) = (p.senders, p.messages);
    let expected = senders as u64 * messages;
    let receiver = system.spawn_with(
        Receiver {
            expected,
            received: 0,
            wrong: 0,
            done: None,
        },
        SpawnOptions::new().name("bang-receiver").hub(true),
    );
    let senders: Vec<ActorRef<()>> = (0..senders)
        .map(|_| {
            system.spawn(Sender {
                receiver: receiver.clone(),
                messages,
            })
        })
        .collect();
    system.run_until_idle();
    let start = Instant::now();
    let pending = receiver.ask(ReceiverMsg::Arm).expect("fresh actor");
    for sender in &senders {
        sender.send(()).expect("fresh actor");
    }
    let received = pending.wait().unwrap_or(u64::MAX);
    noting(
        Measured::checked(expected, start.elapsed(), received, expected),
        p,
    )
}
