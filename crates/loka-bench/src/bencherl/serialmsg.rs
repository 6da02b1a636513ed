//! serialmsg (BenchErl): P generators each push N messages carrying an L-element list to their
//! own receiver, but every message goes through one dispatcher — the single hub (hinted so in
//! Francesquini's fork) whose affinity group is every other actor.

use super::{noting, params, CollectMsg, Collector};
use crate::{Bench, Measured, Run, Size};
use loka::{Actor, ActorRef, Context, SpawnOptions, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "bencherl-serialmsg",
    suite: "bencherl",
    about: "P generators send N lists each to P receivers via one hub dispatcher (2·P·(N + 1) messages)",
    run,
    faults: &[],
};

/// (P, N, L) = (F1, F2, F3)·cores: (2, 16, 32) short, (2, 32, 40) intermediate, (5, 16, 32) long.
fn pnl(size: Size) -> (usize, u64, usize) {
    params(size, (32, 256, 512), |s| {
        let (f1, f2, f3) = s.pick((2, 16, 32), (2, 32, 40), (5, 16, 32));
        (f1 * s.cores, (f2 * s.cores) as u64, f3 * s.cores)
    })
}

enum DispatcherMsg {
    /// `{Pid, To, Data}`: forward the data (or `done` when `None`) to `to`.
    Forward {
        from: usize,
        to: ActorRef<ReceiverMsg>,
        data: Option<Vec<u64>>,
    },
}

struct Dispatcher;

impl Actor for Dispatcher {
    type Msg = DispatcherMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: DispatcherMsg) {
        let DispatcherMsg::Forward { from, to, data } = msg;
        let msg = match data {
            Some(data) => ReceiverMsg::Data { from, data },
            None => ReceiverMsg::Done,
        };
        to.send(msg).expect("receiver alive");
    }
}

enum ReceiverMsg {
    Data { from: usize, data: Vec<u64> },
    Done,
}

/// What a receiver got.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Got {
    messages: u64,
    /// The sum of every list element received.
    sum: u64,
    /// Messages from a generator other than its own.
    foreign: u64,
}

struct Receiver {
    index: usize,
    got: Got,
    master: ActorRef<CollectMsg<Got>>,
}

impl Actor for Receiver {
    type Msg = ReceiverMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: ReceiverMsg) {
        match msg {
            ReceiverMsg::Data { from, data } => {
                self.got.messages += 1;
                self.got.sum += data.iter().sum::<u64>();
                self.got.foreign += u64::from(from != self.index);
            }
            ReceiverMsg::Done => {
                let _ = self.master.send(CollectMsg::Report(self.got));
                ctx.stop();
            }
        }
    }
}

struct Generator {
    index: usize,
    receiver: ActorRef<ReceiverMsg>,
    dispatcher: ActorRef<DispatcherMsg>,
    messages: u64,
    /// `lists:seq(1, L)`.
    data: Vec<u64>,
}

impl Actor for Generator {
    /// `do`.
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _go: ()) {
        for _ in 0..self.messages {
            // Erlang copies the list into the message; so do we.
            self.dispatcher
                .send(DispatcherMsg::Forward {
                    from: self.index,
                    to: self.receiver.clone(),
                    data: Some(self.data.clone()),
                })
                .expect("dispatcher alive");
        }
        self.dispatcher
            .send(DispatcherMsg::Forward {
                from: self.index,
                to: self.receiver.clone(),
                data: None,
            })
            .expect("dispatcher alive");
        ctx.stop();
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    let (pairs, messages, length) = pnl(size);
    let master = system.spawn(Collector::<Got>::new());
    let receivers: Vec<ActorRef<ReceiverMsg>> = (0..pairs)
        .map(|index| {
            system.spawn(Receiver {
                index,
                got: Got::default(),
                master: master.clone(),
            })
        })
        .collect();
    let dispatcher =
        system.spawn_with(Dispatcher, SpawnOptions::new().name("dispatcher").hub(true));
    let generators: Vec<ActorRef<()>> = receivers
        .iter()
        .enumerate()
        .map(|(index, receiver)| {
            system.spawn(Generator {
                index,
                receiver: receiver.clone(),
                dispatcher: dispatcher.clone(),
                messages,
                data: (1..=length as u64).collect(),
            })
        })
        .collect();
    system.run_until_idle();
    let start = Instant::now();
    let pending = master
        .ask(|done| CollectMsg::Arm {
            expected: pairs,
            done,
        })
        .expect("fresh actor");
    for generator in &generators {
        generator.send(()).expect("fresh actor");
    }
    let reports = pending.wait().unwrap_or_default();
    let elapsed = start.elapsed();
    // `Disp ! {self(), done}`.
    dispatcher.stop();
    let list_sum = (length * (length + 1) / 2) as u64;
    let expected = Got {
        messages,
        sum: messages * list_sum,
        foreign: 0,
    };
    let all_as_expected = reports.iter().all(|got| *got == expected);
    let measured = Measured::checked(
        2 * pairs as u64 * (messages + 1),
        elapsed,
        (reports.len(), all_as_expected),
        (pairs, true),
    );
    noting(measured, ("P", pairs, "N", messages, "L", length))
}
