//! Static send (Cforall, "Performance: Message Sends"): one actor and one message, allocated
//! once; the actor sends the message back to itself until it has been sent N times. Measures the
//! latency of a single send (elapsed / N).
//!
//! Check: the message carries its sequence number (1, 2, …, N) and a checksum that every send
//! advances; the actor counts what it received and hashes the sequence numbers in arrival order.
//! The calling thread replays both. A lost send stops the chain (the system goes idle without a
//! result); a duplicated one starts a second chain, so the actor receives more than N messages
//! and its sequence hash differs.

use super::noting;
use crate::verify::{mix, SequenceHash};
use crate::{await_result, Bench, Fault, Measured, Run, Size};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "cforall-static-send",
    suite: "cforall",
    about: "one actor sends one message to itself N times (N messages)",
    run,
    faults: &[Fault::Drop, Fault::Duplicate],
};

/// Sends N.
#[derive(Debug, Clone, Copy)]
struct Params {
    sends: u64,
}

fn of(size: Size) -> Params {
    Params {
        sends: size.pick(5_000_000, 100_000_000),
    }
}

enum Msg {
    Start(Box<Start>),
    /// The message: its sequence number and the checksum of the sends so far.
    Hop {
        seq: u64,
        sum: u64,
    },
}

struct Start {
    /// [`Fault::Drop`]: the first send is lost; [`Fault::Duplicate`]: it is delivered twice.
    fault: Fault,
    done: ReplyTo<Tally>,
}

/// What the actor saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tally {
    /// Messages received, and the hash of their sequence numbers in arrival order.
    received: SequenceHash,
    /// The checksum carried by the N-th message.
    sum: u64,
}

struct Echo {
    sends: u64,
    /// Its own address, kept for the run (dropped when it stops).
    me: Option<ActorRef<Msg>>,
    received: SequenceHash,
    done: Option<ReplyTo<Tally>>,
}

impl Echo {
    fn send(&self, seq: u64, sum: u64) {
        let me = self.me.as_ref().expect("started");
        // Ignored failure: only an injected duplicate keeps sending after the actor stopped.
        let _ = me.send(Msg::Hop {
            seq,
            sum: sum.wrapping_add(mix(seq)),
        });
    }
}

impl Actor for Echo {
    type Msg = Msg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: Msg) {
        match msg {
            Msg::Start(start) => {
                let Start { fault, done } = *start;
                self.done = Some(done);
                self.me = Some(ctx.myself());
                match fault {
                    // Sent, never delivered.
                    Fault::Drop => {}
                    Fault::Duplicate => {
                        self.send(1, 0);
                        self.send(1, 0);
                    }
                    _ => self.send(1, 0),
                }
            }
            Msg::Hop { seq, sum } => {
                self.received.push(seq);
                if seq < self.sends {
                    self.send(seq + 1, sum);
                } else if let Some(done) = self.done.take() {
                    done.send(Tally {
                        received: self.received,
                        sum,
                    });
                    self.me = None;
                    ctx.stop();
                }
            }
        }
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let p = of(run.size);
    noting(measure(system, run, p), p)
}

fn measure(system: &System, run: &Run, p: Params) -> Measured {
    let echo = system.spawn(Echo {
        sends: p.sends,
        me: None,
        received: SequenceHash::new(),
        done: None,
    });
    system.run_until_idle();
    let start = Instant::now();
    let pending = echo
        .ask(|done| {
            Msg::Start(Box::new(Start {
                fault: run.fault,
                done,
            }))
        })
        .expect("fresh actor");
    let tally = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    let tally = match tally {
        Ok(tally) => tally,
        Err(e) => return Measured::failed(0, elapsed, e),
    };
    // The replay (untimed): sequence numbers 1..N in order, and their checksum.
    let expected = Tally {
        received: SequenceHash::of(1..=p.sends),
        sum: (1..=p.sends).fold(0u64, |sum, seq| sum.wrapping_add(mix(seq))),
    };
    Measured::checked(tally.received.count, elapsed, tally, expected)
        .with_message_count(p.sends, "N = ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_runs_verify_and_faults_fail() {
        let system = loka::System::builder().workers(2).build().unwrap();
        let p = Params { sends: 1_000 };
        let m = measure(&system, &Run::new(Size::Quick), p);
        assert!(m.verified, "{}", m.check);
        assert_eq!(m.messages, 1_000);
        for fault in BENCH.faults {
            let system = loka::System::builder().workers(2).build().unwrap();
            let m = measure(&system, &Run::new(Size::Quick).with_fault(*fault), p);
            assert!(!m.verified, "{fault:?}: {}", m.check);
        }
    }
}
