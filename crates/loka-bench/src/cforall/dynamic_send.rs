//! Dynamic send (Cforall, "Performance: Message Sends"): as the static send, but every send goes
//! to a new actor with a new message. Actor k receives message k, creates actor k + 1, sends it
//! message k + 1 and stops, until N messages have been sent. Measures a send plus an actor
//! creation and destruction.
//!
//! Check: message k carries its sequence number and a checksum that every send advances, and
//! actor k is created knowing k, so it counts a message that is not its own. Actor N answers the
//! driver with what the last message carries; the calling thread replays the checksum and reads
//! the system's counters: exactly N actors were created and all have stopped. A lost send stops
//! the chain (the system goes idle without a result); a duplicated one creates a second chain of
//! actors.

use super::noting;
use crate::verify::mix;
use crate::{await_result, Bench, Fault, Measured, Run, Size};
use loka::{Actor, Context, ReplyTo, SpawnOptions, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "cforall-dynamic-send",
    suite: "cforall",
    about: "N actors in a chain: each gets one message, creates the next actor, sends to it and stops (N messages)",
    run,
    faults: &[Fault::Drop, Fault::Duplicate],
};

/// Sends N (= actors).
#[derive(Debug, Clone, Copy)]
struct Params {
    sends: u64,
}

fn of(size: Size) -> Params {
    Params {
        sends: size.pick(500_000, 20_000_000),
    }
}

/// The message: its sequence number, the checksum of the sends so far, and the end of the chain
/// (`None` only in the injected duplicate chain).
struct Baton {
    seq: u64,
    sum: u64,
    end: Option<Box<End>>,
}

struct End {
    sends: u64,
    /// Messages that reached an actor created for another one.
    misdelivered: u64,
    /// [`Fault::Drop`]: the first send is lost; [`Fault::Duplicate`]: a second new actor gets a
    /// copy of it.
    fault: Fault,
    done: ReplyTo<Tally>,
}

/// What the last message carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tally {
    seq: u64,
    sum: u64,
    misdelivered: u64,
}

struct Link {
    /// The sequence number of the message this actor was created for.
    seq: u64,
}

impl Link {
    fn pass(ctx: &mut Context<Self>, seq: u64, sum: u64, end: Option<Box<End>>) {
        // Lazy: the new actor's first activation is the one that handles its message.
        let next = ctx.spawn_with(Link { seq }, SpawnOptions::new().lazy(true));
        next.send(Baton {
            seq,
            sum: sum.wrapping_add(mix(seq)),
            end,
        })
        .expect("fresh actor");
    }
}

impl Actor for Link {
    type Msg = Baton;
    fn handle(&mut self, ctx: &mut Context<Self>, Baton { seq, sum, end }: Baton) {
        ctx.stop();
        // `None`: the copy of the injected duplicate, which ends here (one actor too many).
        let Some(mut end) = end else { return };
        end.misdelivered += u64::from(seq != self.seq);
        if seq == end.sends {
            let tally = Tally {
                seq,
                sum,
                misdelivered: end.misdelivered,
            };
            end.done.send(tally);
            return;
        }
        match std::mem::replace(&mut end.fault, Fault::None) {
            // Never sent: the chain ends here, its answer dropped with `end`.
            Fault::Drop => {}
            Fault::Duplicate => {
                Self::pass(ctx, seq + 1, sum, None);
                Self::pass(ctx, seq + 1, sum, Some(end));
            }
            _ => Self::pass(ctx, seq + 1, sum, Some(end)),
        }
    }
}

/// The run compared with the replay and the counters.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    last: Tally,
    /// Actors created by the run (the first one included).
    created: u64,
    /// Actors of the run still alive once the system is quiet.
    alive: u64,
}

fn run(system: &System, run: &Run) -> Measured {
    let p = of(run.size);
    noting(measure(system, run, p), p)
}

fn measure(system: &System, run: &Run, p: Params) -> Measured {
    system.run_until_idle();
    let before = system.stats();
    let first = system.spawn_with(Link { seq: 1 }, SpawnOptions::new().lazy(true));
    let start = Instant::now();
    let pending = first
        .ask(|done| Baton {
            seq: 1,
            sum: mix(1),
            end: Some(Box::new(End {
                sends: p.sends,
                misdelivered: 0,
                fault: run.fault,
                done,
            })),
        })
        .expect("fresh actor");
    drop(first);
    let last = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    let last = match last {
        Ok(last) => last,
        Err(e) => return Measured::failed(0, elapsed, e),
    };
    // Every actor of the run has stopped once the system is quiet.
    system.run_until_idle();
    let after = system.stats();
    let outcome = Outcome {
        last,
        created: after.actors_spawned - before.actors_spawned,
        alive: after.actors_live().saturating_sub(before.actors_live()),
    };
    let expected = Outcome {
        last: Tally {
            seq: p.sends,
            sum: (1..=p.sends).fold(0u64, |sum, seq| sum.wrapping_add(mix(seq))),
            misdelivered: 0,
        },
        created: p.sends,
        alive: 0,
    };
    Measured::checked(last.seq, elapsed, outcome, expected).with_message_count(p.sends, "N = ")
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
