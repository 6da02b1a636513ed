//! serialmsg (BenchErl, as Panini ran it: §4.5.4, Figure 9): P Generators each send N messages
//! carrying an L-element list to their own Receiver, every one through a single Dispatcher that
//! forwards it.
//!
//! Declared characteristics, as the paper's tables: Generator ⟨false, _, high, high, low⟩ (Hub →
//! `Task`), Dispatcher ⟨false, _, high, low, low⟩ (Figure 9; §4.5.4 prints ⟨low, low, low⟩; LowCPU
//! or Affinity, `Monitor` either way), Receiver ⟨false, _, low, low, low⟩ (Affinity → `Monitor`).
//! Under `auto` a Generator's thread thus runs the Dispatcher and the Receiver inline: the binding
//! of each Generator to its Receiver the paper describes.
//!
//! Check: each Receiver reports, at its generator's `done`, the lists it got, the sum of their
//! elements and how many came from another generator; all P reports must be N lists summing to
//! N·L(L + 1)/2 and none foreign. Messages: each generator's N lists and `done` handled by the
//! Dispatcher, and again by the Receiver: 2·P·(N + 1).

use super::{alive_since, noting, Gather, GatherMsg, Tally, LEAF};
use crate::{await_result, Bench, Fault, Measured, Run, Size};
use loka::exec_policy::{Characteristics, Comm, Cpu, Par};
use loka::{Actor, ActorRef, Context, System};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "panini-serialmsg",
    suite: "panini",
    about: "P Generators send N lists each to their Receivers via one Dispatcher (2·P·(N + 1) messages)",
    run,
    faults: &[
        Fault::Drop,
        Fault::Duplicate,
        Fault::Misroute,
        Fault::WrongRule,
    ],
};

/// Generator/Receiver pairs P, lists per generator N, list length L.
#[derive(Debug, Clone, Copy)]
struct Params {
    pairs: usize,
    messages: u64,
    length: usize,
}

/// `full`: the paper's 120 generators and 120 receivers (§4.5.4); it gives neither N nor L, so
/// those are ours.
fn of(size: Size) -> Params {
    size.pick(
        Params {
            pairs: 20,
            messages: 32_000,
            length: 8,
        },
        Params {
            pairs: 120,
            messages: 2_000,
            length: 32,
        },
    )
}

/// A message to the Dispatcher: forward `data` (or `done`, when `None`) to `to`.
struct Forward {
    from: usize,
    to: ActorRef<ReceiverMsg>,
    data: Option<Box<[u64]>>,
}

/// The one Dispatcher: forwards each message to the receiver it names.
struct Dispatcher {
    handled: u64,
    tally: Tally,
}

impl Actor for Dispatcher {
    type Msg = Forward;

    fn handle(&mut self, _ctx: &mut Context<Self>, msg: Forward) {
        self.handled += 1;
        let Forward { from, to, data } = msg;
        let msg = match data {
            Some(data) => ReceiverMsg::Data { from, data },
            None => ReceiverMsg::Done,
        };
        // A receiver stops at its `done`; only a misrouted list can come after it.
        let _ = to.send(msg);
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.tally.fetch_add(self.handled, Ordering::Relaxed);
    }

    /// ⟨false, _, high, low, low⟩ (Figure 9): LowCPU → `Monitor`.
    fn characteristics() -> Option<Characteristics> {
        Some(Characteristics::new(Par::High, Comm::Low, Cpu::Low))
    }
}

/// A message to a Receiver.
enum ReceiverMsg {
    Data { from: usize, data: Box<[u64]> },
    Done,
}

/// What a Receiver got.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Got {
    lists: u64,
    /// The sum of every list element received.
    sum: u64,
    /// Lists from a generator other than its own.
    foreign: u64,
}

/// A Receiver: sums the lists it gets; at `done` it reports and stops.
struct Receiver {
    index: usize,
    got: Got,
    gather: ActorRef<GatherMsg<Got>>,
    handled: u64,
    tally: Tally,
}

impl Actor for Receiver {
    type Msg = ReceiverMsg;

    fn handle(&mut self, ctx: &mut Context<Self>, msg: ReceiverMsg) {
        self.handled += 1;
        match msg {
            ReceiverMsg::Data { from, data } => {
                self.got.lists += 1;
                self.got.sum += data.iter().sum::<u64>();
                self.got.foreign += u64::from(from != self.index);
            }
            ReceiverMsg::Done => {
                let _ = self.gather.send(GatherMsg::Report(self.got));
                ctx.stop();
            }
        }
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.tally.fetch_add(self.handled, Ordering::Relaxed);
    }

    /// ⟨false, _, low, low, low⟩ (§4.5.4, Figure 9): Affinity → `Monitor`.
    fn characteristics() -> Option<Characteristics> {
        Some(LEAF)
    }
}

/// A Generator: on its one `Go`, sends its N lists and its `done` through the Dispatcher, stops.
struct Generator {
    index: usize,
    receiver: ActorRef<ReceiverMsg>,
    dispatcher: ActorRef<Forward>,
    messages: u64,
    /// `1..=L`.
    data: Box<[u64]>,
    /// [`Fault::Misroute`]: its first list goes to this receiver instead of its own.
    misroute_first: Option<ActorRef<ReceiverMsg>>,
}

impl Generator {
    fn push(&self, to: ActorRef<ReceiverMsg>, data: Option<Box<[u64]>>) {
        self.dispatcher
            .send(Forward {
                from: self.index,
                to,
                data,
            })
            .expect("dispatcher alive");
    }
}

impl Actor for Generator {
    /// Go.
    type Msg = ();

    fn handle(&mut self, ctx: &mut Context<Self>, _go: ()) {
        let mut messages = self.messages;
        if let Some(to) = self.misroute_first.take() {
            self.push(to, Some(self.data.clone()));
            messages -= 1;
        }
        for _ in 0..messages {
            self.push(self.receiver.clone(), Some(self.data.clone()));
        }
        self.push(self.receiver.clone(), None);
        ctx.stop();
    }

    /// ⟨false, _, high, high, low⟩ (§4.5.4, Figure 9): Hub → `Task`.
    fn characteristics() -> Option<Characteristics> {
        Some(Characteristics::new(Par::High, Comm::High, Cpu::Low))
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let p = of(run.size);
    noting(measure(system, run, p), p)
}

fn measure(system: &System, run: &Run, p: Params) -> Measured {
    let Params {
        pairs,
        messages,
        length,
    } = p;
    system.run_until_idle();
    let before = system.stats();
    let tally = Tally::default();
    let gather = system.spawn(Gather::<Got>::new());
    let receivers: Vec<ActorRef<ReceiverMsg>> = (0..pairs)
        .map(|index| {
            system.spawn(Receiver {
                index,
                got: Got::default(),
                gather: gather.clone(),
                handled: 0,
                tally: Arc::clone(&tally),
            })
        })
        .collect();
    let dispatcher = system.spawn(Dispatcher {
        handled: 0,
        tally: Arc::clone(&tally),
    });
    // Faults, at set-up, all in generator 0: one list less (Drop), one more (Duplicate), its first
    // list to receiver 1 (Misroute), or a list whose first element is 0 (WrongRule).
    let generators: Vec<ActorRef<()>> = receivers
        .iter()
        .enumerate()
        .map(|(index, receiver)| {
            let faulty = index == 0;
            let mut data: Box<[u64]> = (1..=length as u64).collect();
            if faulty && run.injects(Fault::WrongRule) {
                data[0] = 0;
            }
            let messages = match run.fault {
                Fault::Drop if faulty => messages - 1,
                Fault::Duplicate if faulty => messages + 1,
                _ => messages,
            };
            system.spawn(Generator {
                index,
                receiver: receiver.clone(),
                dispatcher: dispatcher.clone(),
                messages,
                data,
                misroute_first: (faulty && run.injects(Fault::Misroute))
                    .then(|| receivers[1 % pairs].clone()),
            })
        })
        .collect();
    drop(receivers);
    system.run_until_idle();
    let start = Instant::now();
    let pending = gather
        .ask(|done| GatherMsg::Arm {
            expected: pairs,
            done,
        })
        .expect("fresh actor");
    drop(gather);
    for generator in &generators {
        generator.send(()).expect("fresh actor");
    }
    let reports = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    // The Dispatcher stops once the generators are gone; then every actor has added its count.
    drop((generators, dispatcher));
    system.run_until_idle();
    let counted = tally.load(Ordering::Relaxed);
    let reports = match reports {
        Ok(reports) => reports,
        Err(reason) => return Measured::failed(counted, elapsed, reason),
    };
    let list_sum = (length * (length + 1) / 2) as u64;
    let expected = Got {
        lists: messages,
        sum: messages * list_sum,
        foreign: 0,
    };
    let as_expected = reports.iter().filter(|got| **got == expected).count();
    Measured::checked(
        counted,
        elapsed,
        (reports.len(), as_expected, alive_since(system, &before)),
        (pairs, pairs, 0),
    )
    .with_message_count(2 * pairs as u64 * (messages + 1), "2·P·(N + 1) = ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_runs_verify_and_faults_fail() {
        let p = Params {
            pairs: 4,
            messages: 20,
            length: 5,
        };
        let m = measure(
            &loka::System::builder().workers(2).build().unwrap(),
            &Run::new(Size::Quick),
            p,
        );
        assert!(m.verified, "{}", m.check);
        assert_eq!(m.messages, 2 * 4 * 21);
        for &fault in BENCH.faults {
            let system = loka::System::builder().workers(2).build().unwrap();
            let m = measure(&system, &Run::new(Size::Quick).with_fault(fault), p);
            assert!(!m.verified, "{fault:?}: {}", m.check);
        }
    }
}
