//! ehb (BenchErl): Erlang's version of Hackbench. N groups; each group's coordinator (the hub)
//! spawns 20 receivers and 20 senders (its affinity group). On `go` every sender sends a 12-word
//! payload M times to each receiver of its group; every 100 rounds it asks each receiver whether it
//! is keeping up and waits for the answers; at the end it sends `done`. A receiver that has seen
//! `done` from all 20 senders reports to its coordinator, which reports to the master.

use super::{noting, params, CollectMsg, Collector, Scale, Tally};
use crate::{await_result, Bench, Fault, Measured, Run, Size};
use loka::{Actor, ActorRef, Context, SpawnOptions, System};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "bencherl-ehb",
    suite: "bencherl",
    about: "Hackbench: N hub-coordinated groups of 20 senders × 20 receivers, M rounds each",
    run,
    faults: &[Fault::Drop, Fault::Duplicate, Fault::Misroute],
};

/// Senders and receivers per group (BenchErl's `GSIZE`).
const GSIZE: usize = 20;
/// Rounds between two "are you keeping up?" handshakes (BenchErl's `ACK`).
const ACK: u64 = 100;
/// BenchErl's `DATA`: a 12-element tuple (104 bytes on a 64-bit VM).
type Payload = [u64; 12];
const DATA: Payload = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];

/// Groups N and rounds M.
#[derive(Debug, Clone, Copy)]
struct Params {
    groups: usize,
    rounds: u64,
}

/// (groups N, rounds M) = (F1·cores, F2·cores); (F1, F2) is (1, 4) short, (2, 8) intermediate,
/// (8, 8) long.
fn of(size: Size) -> Params {
    params(
        size,
        Params {
            groups: 4,
            rounds: 3_000,
        },
        of_scale,
    )
}

fn of_scale(s: Scale) -> Params {
    let (f1, f2) = s.pick((1, 4), (2, 8), (8, 8));
    Params {
        groups: f1 * s.cores,
        rounds: (f2 * s.cores) as u64,
    }
}

/// Handshakes per sender–receiver pair: one per full block of `ACK` rounds left over `ACK`.
fn handshakes(rounds: u64) -> u64 {
    let mut left = rounds;
    let mut n = 0;
    while left > ACK {
        n += 1;
        left -= ACK;
    }
    n
}

/// The messages the formula of [`measure`] expects: per group 20 `go`s, per sender–receiver
/// pair M payloads, A questions, A answers and a `done`, and 20 receiver reports.
fn expected_messages(p: Params) -> u64 {
    let pairs = (GSIZE * GSIZE) as u64;
    let acks = handshakes(p.rounds);
    p.groups as u64 * (2 * GSIZE as u64 + pairs * (p.rounds + 2 * acks + 1))
}

/// The messages of BenchErl's `run/3` inside the groups, replayed from its `sender/2`,
/// `sender_ack/2` and `receiver/2` clauses: the group's `go` to each sender, what each sender sends
/// and is answered, and each receiver's `done` to its group. (The groups' `ready` and `done` to the
/// run process and its `go` to them are not counted.)
#[cfg(test)]
fn bencherl_messages(p: Params) -> u64 {
    let rs = GSIZE as u64;
    // sender(Rs, Loop), counting sends to the receivers and the receivers' answers.
    let sender = |mut lp: u64| {
        let mut sent = 0;
        loop {
            if lp == 0 {
                return sent + rs; // done to each receiver
            } else if lp > ACK {
                // sender_ack(Rs, ACK): one round per step down to 2, then the handshake step.
                let mut n = ACK;
                while n != 2 {
                    sent += rs;
                    n -= 1;
                }
                sent += rs + rs; // DATA and are_you_keeping_up to each
                sent += rs + rs; // i_am_keeping_up from each, DATA to each
                lp -= ACK;
            } else {
                sent += rs;
                lp -= 1;
            }
        }
    };
    let group = GSIZE as u64 + (0..GSIZE).map(|_| sender(p.rounds)).sum::<u64>() + GSIZE as u64;
    p.groups as u64 * group
}

/// What a receiver saw, summed per group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Seen {
    data: u64,
    handshakes: u64,
    dones: u64,
    /// Payloads that were not `DATA`.
    wrong: u64,
    /// Sender–receiver pairs over which exactly M payloads, A handshakes and one `done` went.
    exact_pairs: u64,
}

impl Seen {
    fn add(&mut self, other: Seen) {
        self.data += other.data;
        self.handshakes += other.handshakes;
        self.dones += other.dones;
        self.wrong += other.wrong;
        self.exact_pairs += other.exact_pairs;
    }
}

enum CoordinatorMsg {
    /// From the master.
    Go,
    /// A receiver has seen `done` from every sender.
    ReceiverDone(Seen),
}

/// The group's hub: spawns its senders and receivers, starts the senders, collects the receivers.
struct Coordinator {
    rounds: u64,
    master: ActorRef<CollectMsg<Seen>>,
    senders: Vec<ActorRef<SenderMsg>>,
    receivers_left: usize,
    seen: Seen,
    /// Messages sent (the `go`s), added to `tally` when it stops.
    sent: u64,
    tally: Tally,
    /// The fault its first sender injects (group 0 only).
    fault: Fault,
}

impl Actor for Coordinator {
    type Msg = CoordinatorMsg;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let me = ctx.myself();
        let acks = handshakes(self.rounds);
        let receivers: Arc<[ActorRef<ReceiverMsg>]> = (0..GSIZE)
            .map(|_| {
                ctx.spawn(Receiver {
                    coordinator: me.clone(),
                    senders_left: GSIZE,
                    expected: (self.rounds, acks),
                    per_sender: [(0, 0, 0); GSIZE],
                    seen: Seen::default(),
                    sent: 0,
                    tally: Arc::clone(&self.tally),
                })
            })
            .collect();
        self.senders = (0..GSIZE)
            .map(|index| {
                ctx.spawn(Sender {
                    index,
                    receivers: Arc::clone(&receivers),
                    left: self.rounds,
                    waiting: 0,
                    sent: 0,
                    tally: Arc::clone(&self.tally),
                    fault: if index == 0 { self.fault } else { Fault::None },
                })
            })
            .collect();
        self.receivers_left = GSIZE;
    }

    fn handle(&mut self, ctx: &mut Context<Self>, msg: CoordinatorMsg) {
        match msg {
            CoordinatorMsg::Go => {
                for sender in &self.senders {
                    sender.send(SenderMsg::Go).expect("sender alive");
                }
                self.sent += self.senders.len() as u64;
            }
            CoordinatorMsg::ReceiverDone(seen) => {
                self.seen.add(seen);
                self.receivers_left -= 1;
                if self.receivers_left == 0 {
                    let _ = self.master.send(CollectMsg::Report(self.seen));
                    ctx.stop();
                }
            }
        }
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.tally.fetch_add(self.sent, Ordering::Relaxed);
    }
}

enum SenderMsg {
    Go,
    /// The receiver with this index is keeping up.
    KeepingUp(usize),
}

struct Sender {
    /// Its place in the group's list of senders.
    index: usize,
    receivers: Arc<[ActorRef<ReceiverMsg>]>,
    /// Rounds still to send.
    left: u64,
    /// Handshake answers still awaited.
    waiting: usize,
    sent: u64,
    tally: Tally,
    /// The fault it injects into its last block (at most one sender).
    fault: Fault,
}

impl Sender {
    fn data(&mut self, receiver: usize) {
        self.receivers[receiver]
            .send(ReceiverMsg::Data {
                from: self.index,
                payload: DATA,
            })
            .expect("receiver alive");
        self.sent += 1;
    }

    fn data_round(&mut self) {
        for receiver in 0..self.receivers.len() {
            self.data(receiver);
        }
    }

    /// The first round of the last block, with the injected fault on receiver 0's payload:
    /// not sent (Drop), sent twice (Duplicate) or sent to receiver 1 (Misroute).
    fn faulty_round(&mut self) {
        for receiver in 0..self.receivers.len() {
            match (self.fault, receiver) {
                (Fault::Drop, 0) => {}
                (Fault::Duplicate, 0) => {
                    self.data(0);
                    self.data(0);
                }
                (Fault::Misroute, 0) => self.data(1),
                _ => self.data(receiver),
            }
        }
    }

    /// Sends until the next handshake or the end (BenchErl's `sender/2` and `sender_ack/2`).
    fn proceed(&mut self, ctx: &mut Context<Self>) {
        if self.left > ACK {
            // A block of ACK rounds: ACK − 2 plain rounds, one round with the question, and the
            // last round goes to each receiver as it answers.
            for _ in 0..ACK - 2 {
                self.data_round();
            }
            let me = ctx.myself();
            for index in 0..self.receivers.len() {
                self.data(index);
                self.receivers[index]
                    .send(ReceiverMsg::KeepingUp {
                        sender: me.clone(),
                        from: self.index,
                        index,
                    })
                    .expect("receiver alive");
                self.sent += 1;
            }
            self.left -= ACK;
            self.waiting = self.receivers.len();
            return;
        }
        let mut rounds = self.left;
        if self.fault != Fault::None && rounds > 0 {
            self.faulty_round();
            rounds -= 1;
        }
        for _ in 0..rounds {
            self.data_round();
        }
        self.left = 0;
        for receiver in self.receivers.iter() {
            receiver
                .send(ReceiverMsg::Done { from: self.index })
                .expect("receiver alive");
        }
        self.sent += self.receivers.len() as u64;
        ctx.stop();
    }
}

impl Actor for Sender {
    type Msg = SenderMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: SenderMsg) {
        match msg {
            SenderMsg::Go => self.proceed(ctx),
            SenderMsg::KeepingUp(index) => {
                self.data(index);
                self.waiting -= 1;
                if self.waiting == 0 {
                    self.proceed(ctx);
                }
            }
        }
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.tally.fetch_add(self.sent, Ordering::Relaxed);
    }
}

enum ReceiverMsg {
    /// A payload from the sender with this index.
    Data {
        from: usize,
        payload: Payload,
    },
    /// "Are you keeping up?" from sender `from`; `index` is this receiver's place in its list.
    KeepingUp {
        sender: ActorRef<SenderMsg>,
        from: usize,
        index: usize,
    },
    Done {
        from: usize,
    },
}

struct Receiver {
    coordinator: ActorRef<CoordinatorMsg>,
    senders_left: usize,
    /// What each sender must send it: (payloads M, handshakes A), and one `done`.
    expected: (u64, u64),
    /// Per sender: payloads, handshakes and `done`s received.
    per_sender: [(u64, u64, u64); GSIZE],
    seen: Seen,
    sent: u64,
    tally: Tally,
}

impl Actor for Receiver {
    type Msg = ReceiverMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: ReceiverMsg) {
        match msg {
            ReceiverMsg::Data { from, payload } => {
                self.per_sender[from].0 += 1;
                self.seen.wrong += u64::from(payload != DATA);
            }
            ReceiverMsg::KeepingUp {
                sender,
                from,
                index,
            } => {
                self.per_sender[from].1 += 1;
                sender
                    .send(SenderMsg::KeepingUp(index))
                    .expect("sender waits");
                self.sent += 1;
            }
            ReceiverMsg::Done { from } => {
                self.per_sender[from].2 += 1;
                self.senders_left -= 1;
                if self.senders_left == 0 {
                    let (rounds, acks) = self.expected;
                    for &(data, handshakes, dones) in &self.per_sender {
                        self.seen.data += data;
                        self.seen.handshakes += handshakes;
                        self.seen.dones += dones;
                        self.seen.exact_pairs +=
                            u64::from((data, handshakes, dones) == (rounds, acks, 1));
                    }
                    let _ = self
                        .coordinator
                        .send(CoordinatorMsg::ReceiverDone(self.seen));
                    self.sent += 1;
                    ctx.stop();
                }
            }
        }
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.tally.fetch_add(self.sent, Ordering::Relaxed);
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let p = of(run.size);
    noting(measure(system, run, p), ("N", p.groups, "M", p.rounds))
}

fn measure(system: &System, run: &Run, p: Params) -> Measured {
    let Params { groups, rounds } = p;
    let master = system.spawn(Collector::<Seen>::new());
    let tally = Tally::default();
    let coordinators: Vec<ActorRef<CoordinatorMsg>> = (0..groups)
        .map(|group| {
            system.spawn_with(
                Coordinator {
                    rounds,
                    master: master.clone(),
                    senders: Vec::new(),
                    receivers_left: 0,
                    seen: Seen::default(),
                    sent: 0,
                    tally: Arc::clone(&tally),
                    // The fault (if any) goes to group 0's first sender, decided here once.
                    fault: if group == 0 { run.fault } else { Fault::None },
                },
                SpawnOptions::new().hub(true),
            )
        })
        .collect();
    // Every group has spawned its senders and receivers ("ready") before the clock starts.
    system.run_until_idle();
    let start = Instant::now();
    let pending = master
        .ask(|done| CollectMsg::Arm {
            expected: groups,
            done,
        })
        .expect("fresh actor");
    for coordinator in &coordinators {
        coordinator.send(CoordinatorMsg::Go).expect("fresh actor");
    }
    let reports = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    // Every actor has stopped or is stopping: let them add their counts (not timed).
    system.run_until_idle();
    let messages = tally.load(Ordering::Relaxed);
    let reports = match reports {
        Ok(reports) => reports,
        Err(reason) => {
            for coordinator in &coordinators {
                coordinator.stop();
            }
            return Measured::failed(messages, elapsed, reason);
        }
    };

    let pairs = (GSIZE * GSIZE) as u64;
    let acks = handshakes(rounds);
    let per_group = Seen {
        data: pairs * rounds,
        handshakes: pairs * acks,
        dones: pairs,
        wrong: 0,
        exact_pairs: pairs,
    };
    let mut expected = Seen::default();
    let mut got = Seen::default();
    for _ in 0..groups {
        expected.add(per_group);
    }
    for seen in &reports {
        got.add(*seen);
    }
    Measured::checked(messages, elapsed, (reports.len(), got), (groups, expected))
        .with_message_count(expected_messages(p), "N·(40 + 400·(M + 2·A + 1)) = ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bencherl::Input;

    #[test]
    fn message_count_is_bencherls() {
        for input in [Input::Short, Input::Intermediate] {
            let p = of_scale(Scale { input, cores: 32 });
            assert_eq!(expected_messages(p), bencherl_messages(p), "{input:?}");
        }
        // Counted runs: BenchErl's short input for one core, and one group with two handshakes.
        let short = of_scale(Scale {
            input: Input::Short,
            cores: 1,
        });
        let handshaking = Params {
            groups: 1,
            rounds: 250,
        };
        for p in [short, handshaking] {
            let system = System::builder().workers(2).build().unwrap();
            let m = measure(&system, &Run::new(Size::Quick), p);
            assert!(m.verified, "{}", m.check);
            assert_eq!(m.messages, bencherl_messages(p), "{p:?}");
        }
    }

    #[test]
    fn handshakes_follow_bencherl() {
        // sender/2 runs sender_ack/2 while more than ACK rounds are left.
        assert_eq!(super::handshakes(100), 0);
        assert_eq!(super::handshakes(101), 1);
        assert_eq!(super::handshakes(128), 1);
        assert_eq!(super::handshakes(256), 2);
    }
}
