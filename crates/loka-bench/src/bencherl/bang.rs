//! bang (BenchErl): S senders each send M messages, all at once, to one receiver — a
//! many-to-one hot spot. The receiver is the hub (`hub_process` in Francesquini's fork).

use super::{noting, params, Scale};
use crate::{await_result, Bench, Fault, Measured, Run, Size};
use loka::{Actor, ActorRef, Context, ReplyTo, SpawnOptions, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "bencherl-bang",
    suite: "bencherl",
    about: "S senders each send M messages to one hub receiver (S·M messages)",
    run,
    faults: &[Fault::Drop, Fault::Duplicate],
};

/// BenchErl's token: a tuple of five references, matched by the receiver.
type Token = [u64; 5];
const TOKEN: Token = [0xb1, 0xb2, 0xb3, 0xb4, 0xb5];

/// One message: the token, plus the sender and its sequence number, which the receiver checks
/// (BenchErl's message is the bare token).
struct Bang {
    token: Token,
    from: u32,
    seq: u32,
}

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
            messages: 10_000,
        },
        of_scale,
    )
}

fn of_scale(s: Scale) -> Params {
    let n = s.pick(16, 55, 79) * s.cores;
    Params {
        senders: n,
        messages: n as u64,
    }
}

/// The messages of BenchErl's `run/3` for these parameters, but for the receiver's `Done` to the
/// run process: each of the S senders runs `send(Rec, Bang, M)`, M messages.
#[cfg(test)]
fn bencherl_messages(p: Params) -> u64 {
    (0..p.senders).map(|_| p.messages).sum()
}

enum ReceiverMsg {
    /// From the driver: answer once S·M messages have arrived.
    Arm(ReplyTo<()>),
    Bang(Bang),
    /// From the driver, once the system is quiet: the final tally, then stop.
    Tally(ReplyTo<Tally>),
}

/// What the receiver saw, read once nothing is in flight any more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tally {
    received: u64,
    /// Messages whose sequence number was not the next one of their sender (a missing, repeated
    /// or extra message), or whose token was not BenchErl's.
    out_of_sequence: u64,
    /// Senders whose messages 0..M all arrived, in order.
    complete_senders: usize,
}

struct Receiver {
    messages: u64,
    expected: u64,
    received: u64,
    /// Per sender, the sequence number it must send next.
    next: Vec<u32>,
    out_of_sequence: u64,
    done: Option<ReplyTo<()>>,
}

impl Actor for Receiver {
    type Msg = ReceiverMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: ReceiverMsg) {
        match msg {
            ReceiverMsg::Arm(done) => self.done = Some(done),
            ReceiverMsg::Bang(bang) => {
                self.received += 1;
                let next = &mut self.next[bang.from as usize];
                self.out_of_sequence += u64::from(bang.seq != *next || bang.token != TOKEN);
                *next = bang.seq.wrapping_add(1);
            }
            ReceiverMsg::Tally(reply) => {
                let messages = self.messages;
                reply.send(Tally {
                    received: self.received,
                    out_of_sequence: self.out_of_sequence,
                    complete_senders: self
                        .next
                        .iter()
                        .filter(|&&n| u64::from(n) == messages)
                        .count(),
                });
                ctx.stop();
                return;
            }
        }
        // BenchErl's receiver ends after S·M messages (`rec(Bang, S*M)`).
        if self.received == self.expected {
            if let Some(done) = self.done.take() {
                done.send(());
            }
        }
    }
}

struct Sender {
    index: u32,
    receiver: ActorRef<ReceiverMsg>,
    messages: u64,
    /// Fault injection: send the last message twice.
    duplicate_last: bool,
}

impl Actor for Sender {
    /// Go.
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _go: ()) {
        let from = self.index;
        for seq in 0..self.messages as u32 {
            self.receiver
                .send(ReceiverMsg::Bang(Bang {
                    token: TOKEN,
                    from,
                    seq,
                }))
                .expect("receiver alive");
        }
        if self.duplicate_last {
            let seq = self.messages as u32 - 1;
            self.receiver
                .send(ReceiverMsg::Bang(Bang {
                    token: TOKEN,
                    from,
                    seq,
                }))
                .expect("receiver alive");
        }
        ctx.stop();
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let p = of(run.size);
    noting(measure(system, run, p), p)
}

fn measure(system: &System, run: &Run, p: Params) -> Measured {
    let (senders, messages) = (p.senders, p.messages);
    let expected = senders as u64 * messages;
    // Faults, at set-up: sender 0 sends one message less (Drop) or its last one twice (Duplicate).
    let (drop, duplicate) = (run.injects(Fault::Drop), run.injects(Fault::Duplicate));
    let receiver = system.spawn_with(
        Receiver {
            messages,
            expected,
            received: 0,
            next: vec![0; senders],
            out_of_sequence: 0,
            done: None,
        },
        SpawnOptions::new().name("bang-receiver").hub(true),
    );
    let senders: Vec<ActorRef<()>> = (0..senders)
        .map(|index| {
            system.spawn(Sender {
                index: index as u32,
                receiver: receiver.clone(),
                messages: messages - u64::from(drop && index == 0),
                duplicate_last: duplicate && index == 0,
            })
        })
        .collect();
    system.run_until_idle();
    let start = Instant::now();
    let pending = receiver.ask(ReceiverMsg::Arm).expect("fresh actor");
    for sender in &senders {
        sender.send(()).expect("fresh actor");
    }
    let answered = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    if let Err(reason) = answered {
        receiver.stop();
        return Measured::failed(0, elapsed, reason);
    }
    // Messages still in flight (extra ones) arrive before the tally is read.
    system.run_until_idle();
    let pending = receiver.ask(ReceiverMsg::Tally).expect("receiver alive");
    let tally = await_result(system, pending, run, BENCH.name);
    // The receiver stops after its tally.
    system.run_until_idle();
    let tally = match tally {
        Ok(tally) => tally,
        Err(reason) => return Measured::failed(0, elapsed, reason),
    };
    let want = Tally {
        received: expected,
        out_of_sequence: 0,
        complete_senders: senders.len(),
    };
    Measured::checked(tally.received, elapsed, tally, want).with_message_count(expected, "S·M = ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bencherl::Input;

    #[test]
    fn message_count_is_bencherls() {
        for input in [Input::Short, Input::Intermediate] {
            let p = of_scale(Scale { input, cores: 32 });
            assert_eq!(
                p.senders as u64 * p.messages,
                bencherl_messages(p),
                "{input:?}"
            );
        }
        crate::bencherl::assert_counted_runs_match_bencherl(of_scale, measure, bencherl_messages);
    }
}
