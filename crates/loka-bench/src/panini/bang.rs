//! bang (BenchErl, as Panini ran it: §4.5.2, Figure 9): S Senders each flood one Receiver with M
//! messages — many-to-one, no replies.
//!
//! Declared characteristics, as the paper's table: Sender ⟨false, _, high, high, low⟩ (Hub →
//! `Task`), Receiver ⟨false, _, low, low, low⟩ (Affinity → `Monitor`: the sender's thread runs it
//! whenever it is idle).
//!
//! Check: every message carries its sender and sequence number; the Receiver counts the messages
//! that were not the next of their sender. Once the system is quiet the driver reads the tally:
//! S·M received, none out of sequence, all S senders complete, and every actor stopped.

use super::{alive_since, noting, LEAF};
use crate::{await_result, Bench, Fault, Measured, Run, Size};
use loka::exec_policy::{Characteristics, Comm, Cpu, Par};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "panini-bang",
    suite: "panini",
    about: "S Senders flood one Receiver with M messages each (S·M messages)",
    run,
    faults: &[Fault::Drop, Fault::Duplicate, Fault::WrongRule],
};

/// Senders S and messages per sender M.
#[derive(Debug, Clone, Copy)]
struct Params {
    senders: usize,
    messages: u32,
}

/// `full`: the paper's 440 senders × 440 messages (§4.5.2).
fn of(size: Size) -> Params {
    size.pick(
        Params {
            senders: 40,
            messages: 80_000,
        },
        Params {
            senders: 440,
            messages: 440,
        },
    )
}

/// A message to the Receiver.
enum ReceiverMsg {
    /// From the driver: answer once S·M messages have arrived.
    Arm(ReplyTo<()>),
    /// One bang: its sender and its sequence number there.
    Bang { from: u32, seq: u32 },
    /// From the driver, once the system is quiet: the tally, then stop.
    Tally(ReplyTo<Tally>),
}

/// What the Receiver saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tally {
    received: u64,
    /// Messages that were not the next one of their sender (a missing, repeated or extra one).
    out_of_sequence: u64,
    /// Senders whose messages 0..M all arrived, in order.
    complete_senders: usize,
}

/// The one Receiver: counts the bangs, per sender in sequence.
struct Receiver {
    messages: u32,
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
            ReceiverMsg::Bang { from, seq } => {
                self.received += 1;
                let next = &mut self.next[from as usize];
                self.out_of_sequence += u64::from(seq != *next);
                *next = seq.wrapping_add(1);
            }
            ReceiverMsg::Tally(reply) => {
                let messages = self.messages;
                reply.send(Tally {
                    received: self.received,
                    out_of_sequence: self.out_of_sequence,
                    complete_senders: self.next.iter().filter(|&&n| n == messages).count(),
                });
                ctx.stop();
                return;
            }
        }
        if self.received == self.expected {
            if let Some(done) = self.done.take() {
                done.send(());
            }
        }
    }

    /// ⟨false, _, low, low, low⟩ (Figure 9): Affinity → `Monitor`.
    fn characteristics() -> Option<Characteristics> {
        Some(LEAF)
    }
}

/// A Sender: on its one `Go`, sends its M bangs and stops.
struct Sender {
    index: u32,
    receiver: ActorRef<ReceiverMsg>,
    messages: u32,
    /// The injected fault (sender 0 only).
    fault: Fault,
}

impl Actor for Sender {
    /// Go.
    type Msg = ();

    fn handle(&mut self, ctx: &mut Context<Self>, _go: ()) {
        let from = self.index;
        for seq in 0..self.messages {
            let seq = match self.fault {
                // Drop: message 0 is never sent.
                Fault::Drop if seq == 0 => continue,
                // WrongRule: the sequence numbers count from 1.
                Fault::WrongRule => seq + 1,
                _ => seq,
            };
            self.receiver
                .send(ReceiverMsg::Bang { from, seq })
                .expect("receiver alive");
        }
        if self.fault == Fault::Duplicate {
            let seq = self.messages - 1;
            self.receiver
                .send(ReceiverMsg::Bang { from, seq })
                .expect("receiver alive");
        }
        ctx.stop();
    }

    /// ⟨false, _, high, high, low⟩ (§4.5.2): Hub → `Task`.
    fn characteristics() -> Option<Characteristics> {
        Some(Characteristics::new(Par::High, Comm::High, Cpu::Low))
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let p = of(run.size);
    noting(measure(system, run, p), p)
}

fn measure(system: &System, run: &Run, p: Params) -> Measured {
    let expected = p.senders as u64 * u64::from(p.messages);
    system.run_until_idle();
    let before = system.stats();
    let receiver = system.spawn(Receiver {
        messages: p.messages,
        expected,
        received: 0,
        next: vec![0; p.senders],
        out_of_sequence: 0,
        done: None,
    });
    let senders: Vec<ActorRef<()>> = (0..p.senders)
        .map(|index| {
            system.spawn(Sender {
                index: index as u32,
                receiver: receiver.clone(),
                messages: p.messages,
                fault: if index == 0 { run.fault } else { Fault::None },
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
    drop(senders);
    // Extra messages still in flight arrive before the tally is read.
    system.run_until_idle();
    let tally = match answered {
        Ok(()) => {
            let pending = receiver.ask(ReceiverMsg::Tally).expect("receiver alive");
            await_result(system, pending, run, BENCH.name)
        }
        Err(reason) => Err(reason),
    };
    receiver.stop();
    drop(receiver);
    system.run_until_idle();
    let tally = match tally {
        Ok(tally) => tally,
        Err(reason) => return Measured::failed(0, elapsed, reason),
    };
    let got = (tally, alive_since(system, &before));
    let want = (
        Tally {
            received: expected,
            out_of_sequence: 0,
            complete_senders: p.senders,
        },
        0,
    );
    Measured::checked(tally.received, elapsed, got, want).with_message_count(expected, "S·M = ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_runs_verify_and_faults_fail() {
        let p = Params {
            senders: 5,
            messages: 30,
        };
        let m = measure(
            &loka::System::builder().workers(2).build().unwrap(),
            &Run::new(Size::Quick),
            p,
        );
        assert!(m.verified, "{}", m.check);
        assert_eq!(m.messages, 150);
        for &fault in BENCH.faults {
            let system = loka::System::builder().workers(2).build().unwrap();
            let m = measure(&system, &Run::new(Size::Quick).with_fault(fault), p);
            assert!(!m.verified, "{fault:?}: {}", m.check);
        }
    }
}
