//! ehb (BenchErl): Erlang's version of Hackbench. N groups; each group's coordinator (the hub)
//! spawns 20 receivers and 20 senders (its affinity group). On `go` every sender sends a 12-word
//! payload M times to each receiver of its group; every 100 rounds it asks each receiver whether it
//! is keeping up and waits for the answers; at the end it sends `done`. A receiver that has seen
//! `done` from all 20 senders reports to its coordinator, which reports to the master.

use super::{noting, params, CollectMsg, Collector};
use crate::{Bench, Measured, Run, Size};
use loka::{Actor, ActorRef, Context, SpawnOptions, System};
use std::sync::Arc;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "bencherl-ehb",
    suite: "bencherl",
    about: "Hackbench: N hub-coordinated groups of 20 senders × 20 receivers, M rounds each",
    run,
    faults: &[],
};

/// Senders and receivers per group (BenchErl's `GSIZE`).
const GSIZE: usize = 20;
/// Rounds between two "are you keeping up?" handshakes (BenchErl's `ACK`).
const ACK: u64 = 100;
/// BenchErl's `DATA`: a 12-element tuple (104 bytes on a 64-bit VM).
type Payload = [u64; 12];
const DATA: Payload = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];

/// (groups N, rounds M) = (F1·cores, F2·cores); (F1, F2) is (1, 4) short, (2, 8) intermediate,
/// (8, 8) long.
fn groups_and_rounds(size: Size) -> (usize, u64) {
    params(size, (4, 128), |s| {
        let (f1, f2) = s.pick((1, 4), (2, 8), (8, 8));
        (f1 * s.cores, (f2 * s.cores) as u64)
    })
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

/// What a receiver saw, summed per group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Seen {
    data: u64,
    handshakes: u64,
    dones: u64,
    /// Payloads that were not `DATA`.
    wrong: u64,
}

impl Seen {
    fn add(&mut self, other: Seen) {
        self.data += other.data;
        self.handshakes += other.handshakes;
        self.dones += other.dones;
        self.wrong += other.wrong;
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
}

impl Actor for Coordinator {
    type Msg = CoordinatorMsg;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let me = ctx.myself();
        let receivers: Arc<[ActorRef<ReceiverMsg>]> = (0..GSIZE)
            .map(|_| {
                ctx.spawn(Receiver {
                    coordinator: me.clone(),
                    senders_left: GSIZE,
                    seen: Seen::default(),
                })
            })
            .collect();
        self.senders = (0..GSIZE)
            .map(|_| {
                ctx.spawn(Sender {
                    receivers: Arc::clone(&receivers),
                    left: self.rounds,
                    waiting: 0,
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
}

enum SenderMsg {
    Go,
    /// The receiver with this index is keeping up.
    KeepingUp(usize),
}

struct Sender {
    receivers: Arc<[ActorRef<ReceiverMsg>]>,
    /// Rounds still to send.
    left: u64,
    /// Handshake answers still awaited.
    waiting: usize,
}

impl Sender {
    fn data_round(&self) {
        for receiver in self.receivers.iter() {
            receiver
                .send(ReceiverMsg::Data(DATA))
                .expect("receiver alive");
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
            for (index, receiver) in self.receivers.iter().enumerate() {
                receiver
                    .send(ReceiverMsg::Data(DATA))
                    .expect("receiver alive");
                receiver
                    .send(ReceiverMsg::KeepingUp {
                        sender: me.clone(),
                        index,
                    })
                    .expect("receiver alive");
            }
            self.left -= ACK;
            self.waiting = self.receivers.len();
            return;
        }
        for _ in 0..self.left {
            self.data_round();
        }
        self.left = 0;
        for receiver in self.receivers.iter() {
            receiver.send(ReceiverMsg::Done).expect("receiver alive");
        }
        ctx.stop();
    }
}

impl Actor for Sender {
    type Msg = SenderMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: SenderMsg) {
        match msg {
            SenderMsg::Go => self.proceed(ctx),
            SenderMsg::KeepingUp(index) => {
                self.receivers[index]
                    .send(ReceiverMsg::Data(DATA))
                    .expect("receiver alive");
                self.waiting -= 1;
                if self.waiting == 0 {
                    self.proceed(ctx);
                }
            }
        }
    }
}

enum ReceiverMsg {
    Data(Payload),
    /// "Are you keeping up?" from a sender; `index` is this receiver's place in its list.
    KeepingUp {
        sender: ActorRef<SenderMsg>,
        index: usize,
    },
    Done,
}

struct Receiver {
    coordinator: ActorRef<CoordinatorMsg>,
    senders_left: usize,
    seen: Seen,
}

impl Actor for Receiver {
    type Msg = ReceiverMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: ReceiverMsg) {
        match msg {
            ReceiverMsg::Data(payload) => {
                self.seen.data += 1;
                self.seen.wrong += u64::from(payload != DATA);
            }
            ReceiverMsg::KeepingUp { sender, index } => {
                self.seen.handshakes += 1;
                sender
                    .send(SenderMsg::KeepingUp(index))
                    .expect("sender waits");
            }
            ReceiverMsg::Done => {
                self.seen.dones += 1;
                self.senders_left -= 1;
                if self.senders_left == 0 {
                    let _ = self
                        .coordinator
                        .send(CoordinatorMsg::ReceiverDone(self.seen));
                    ctx.stop();
                }
            }
        }
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    let (groups, rounds) = groups_and_rounds(size);
    let master = system.spawn(Collector::<Seen>::new());
    let coordinators: Vec<ActorRef<CoordinatorMsg>> = (0..groups)
        .map(|_| {
            system.spawn_with(
                Coordinator {
                    rounds,
                    master: master.clone(),
                    senders: Vec::new(),
                    receivers_left: 0,
                    seen: Seen::default(),
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
    let reports = pending.wait().unwrap_or_default();
    let elapsed = start.elapsed();

    let pairs = (GSIZE * GSIZE) as u64;
    let acks = handshakes(rounds);
    let per_group = Seen {
        data: pairs * rounds,
        handshakes: pairs * acks,
        dones: pairs,
        wrong: 0,
    };
    let mut expected = Seen::default();
    let mut got = Seen::default();
    for _ in 0..groups {
        expected.add(per_group);
    }
    for seen in &reports {
        got.add(*seen);
    }
    // go + data + handshake question and answer + done per pair, receiver and group reports.
    let messages =
        groups as u64 * (GSIZE as u64 + pairs * (rounds + 2 * acks + 1) + GSIZE as u64 + 1);
    let measured = Measured::checked(messages, elapsed, (reports.len(), got), (groups, expected));
    noting(measured, ("N", groups, "M", rounds))
}

#[cfg(test)]
mod tests {
    #[test]
    fn handshakes_follow_bencherl() {
        // sender/2 runs sender_ack/2 while more than ACK rounds are left.
        assert_eq!(super::handshakes(100), 0);
        assert_eq!(super::handshakes(101), 1);
        assert_eq!(super::handshakes(128), 1);
        assert_eq!(super::handshakes(256), 2);
    }
}
