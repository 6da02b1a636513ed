//! serialmsg (BenchErl): P generators each push N messages carrying an L-element list to their
//! own receiver, but every message goes through one dispatcher — the single hub (hinted so in
//! Francesquini's fork) whose affinity group is every other actor.

use super::{noting, params, CollectMsg, Collector, Scale, Tally};
use crate::{await_result, Bench, Fault, Measured, Run, Size};
use loka::{Actor, ActorRef, Context, SpawnOptions, System};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "bencherl-serialmsg",
    suite: "bencherl",
    about: "P generators send N lists each to P receivers via one hub dispatcher (2·P·(N + 1) messages)",
    run,
    faults: &[
        Fault::Drop,
        Fault::Duplicate,
        Fault::Misroute,
        Fault::WrongRule,
    ],
};

/// (P, N, L) = (F1, F2, F3)·cores: (2, 16, 32) short, (2, 32, 40) intermediate, (5, 16, 32) long.
fn pnl(size: Size) -> (usize, u64, usize) {
    params(size, (32, 1_536, 512), of_scale)
}

fn of_scale(s: Scale) -> (usize, u64, usize) {
    let (f1, f2, f3) = s.pick((2, 16, 32), (2, 32, 40), (5, 16, 32));
    (f1 * s.cores, (f2 * s.cores) as u64, f3 * s.cores)
}

/// The messages of BenchErl's `run/3` through the dispatcher: each generator's
/// `generator_push_loop` sends N `{self(), Recv, Data}` and one `{self(), Recv, done}` to it, and
/// the dispatcher forwards each one. (The `do`s, the receivers' `done`s to the run process and
/// the dispatcher's `done` are not counted.)
#[cfg(test)]
fn bencherl_messages((pairs, messages, _): (usize, u64, usize)) -> u64 {
    let pushed: u64 = (0..pairs).map(|_| messages + 1).sum();
    let forwarded = pushed;
    pushed + forwarded
}

enum DispatcherMsg {
    /// `{Pid, To, Data}`: forward the data (or `done` when `None`) to `to`.
    Forward {
        from: usize,
        to: ActorRef<ReceiverMsg>,
        data: Option<Vec<u64>>,
    },
}

struct Dispatcher {
    forwarded: u64,
    tally: Tally,
}

impl Actor for Dispatcher {
    type Msg = DispatcherMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: DispatcherMsg) {
        let DispatcherMsg::Forward { from, to, data } = msg;
        let msg = match data {
            Some(data) => ReceiverMsg::Data { from, data },
            None => ReceiverMsg::Done,
        };
        // A receiver stops at its `done`; only a misrouted list can come after it.
        if to.send(msg).is_ok() {
            self.forwarded += 1;
        }
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.tally.fetch_add(self.forwarded, Ordering::Relaxed);
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
    /// Fault injection: its first list goes to this receiver instead of its own.
    misroute_first: Option<ActorRef<ReceiverMsg>>,
    sent: u64,
    tally: Tally,
}

impl Actor for Generator {
    /// `do`.
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _go: ()) {
        let mut messages = self.messages;
        if let Some(to) = self.misroute_first.take() {
            self.dispatcher
                .send(DispatcherMsg::Forward {
                    from: self.index,
                    to,
                    data: Some(self.data.clone()),
                })
                .expect("dispatcher alive");
            messages -= 1;
        }
        for _ in 0..messages {
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
        // Its lists and its `done`.
        self.sent = self.messages + 1;
        ctx.stop();
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.tally.fetch_add(self.sent, Ordering::Relaxed);
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let (pairs, messages, length) = pnl(run.size);
    noting(
        measure(system, run, (pairs, messages, length)),
        ("P", pairs, "N", messages, "L", length),
    )
}

fn measure(system: &System, run: &Run, (pairs, messages, length): (usize, u64, usize)) -> Measured {
    let master = system.spawn(Collector::<Got>::new());
    let tally = Tally::default();
    let receivers: Vec<ActorRef<ReceiverMsg>> = (0..pairs)
        .map(|index| {
            system.spawn(Receiver {
                index,
                got: Got::default(),
                master: master.clone(),
            })
        })
        .collect();
    let dispatcher = system.spawn_with(
        Dispatcher {
            forwarded: 0,
            tally: Arc::clone(&tally),
        },
        SpawnOptions::new().name("dispatcher").hub(true),
    );
    // Faults, at set-up, all in generator 0: one list less (Drop), one more (Duplicate), its first
    // list to receiver 1 (Misroute), or a list whose first element is wrong (WrongRule).
    let generators: Vec<ActorRef<()>> = receivers
        .iter()
        .enumerate()
        .map(|(index, receiver)| {
            let faulty = index == 0;
            let mut data: Vec<u64> = (1..=length as u64).collect();
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
                sent: 0,
                tally: Arc::clone(&tally),
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
    let reports = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    // `Disp ! {self(), done}`; then every actor has stopped and added its count (not timed).
    dispatcher.stop();
    system.run_until_idle();
    let counted = tally.load(Ordering::Relaxed);
    let reports = match reports {
        Ok(reports) => reports,
        Err(reason) => return Measured::failed(counted, elapsed, reason),
    };
    let list_sum = (length * (length + 1) / 2) as u64;
    let expected = Got {
        messages,
        sum: messages * list_sum,
        foreign: 0,
    };
    let all_as_expected = reports.iter().filter(|got| **got == expected).count();
    Measured::checked(
        counted,
        elapsed,
        (reports.len(), all_as_expected),
        (pairs, pairs),
    )
    .with_message_count(2 * pairs as u64 * (messages + 1), "2·P·(N + 1) = ")
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
                2 * p.0 as u64 * (p.1 + 1),
                bencherl_messages(p),
                "{input:?}"
            );
        }
        crate::bencherl::assert_counted_runs_match_bencherl(of_scale, measure, bencherl_messages);
    }
}
