//! Repeat (Cforall, "Performance: Executor"): one client and N servers. The client fans a
//! request out to every server; every server answers the client; once the client has all N
//! answers it starts the next round, R rounds in all. The answers all converge on the client:
//! the benchmark stresses contention on one actor's queue, and it does not scale with the
//! workers.
//!
//! Check: a request carries its round number and an answer names its server and echoes the
//! round. Per round the client counts the answers of that round and sums their servers' mixed
//! indices; an answer of another round counts as stale. After the run, once the system is quiet,
//! the calling thread compares every round with one answer from each of the N servers, and no
//! answer stale. A lost request or answer stops the run (the system goes idle without a result); a
//! duplicated or misrouted one changes a round's sum and leaves an answer stale.

use super::noting;
use crate::verify::mix;
use crate::{await_result, Bench, Fault, Measured, Run, Size};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::sync::Arc;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "cforall-repeat",
    suite: "cforall",
    about: "a client fans a request out to N servers and gathers their answers, R rounds (2·N·R messages)",
    run,
    faults: &[Fault::Drop, Fault::Duplicate, Fault::Misroute],
};

/// Servers N, rounds R.
#[derive(Debug, Clone, Copy)]
struct Params {
    servers: usize,
    rounds: u32,
}

fn of(size: Size) -> Params {
    size.pick(
        Params {
            servers: 20_000,
            rounds: 30,
        },
        Params {
            servers: 100_000,
            rounds: 200,
        },
    )
}

/// Every server, by index; shared read-only.
type Servers = Arc<[ActorRef<u32>]>;

// The rare messages are boxed so that the answers, the hot path, stay 16 bytes.
enum ClientMsg {
    /// Set-up: the servers' addresses.
    Servers(Box<Servers>),
    /// From the driver: run the rounds, then answer.
    Start(Box<ReplyTo<()>>),
    /// From a server.
    Answer { server: u32, round: u32 },
    /// After the run: the tally.
    Report(Box<ReplyTo<Tally>>),
}

/// What the client saw.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Tally {
    requests: u64,
    answers: u64,
    /// Rounds whose N answers arrived.
    rounds: u32,
    /// Per round, the wrapping sum of `mix(server)` over its answers.
    servers: Vec<u64>,
    /// Answers that arrived in another round than theirs.
    stale: u64,
}

struct Client {
    servers: Option<Servers>,
    rounds: u32,
    /// The current round and its answers so far.
    round: u32,
    answered: usize,
    tally: Tally,
    /// The injected fault, applied to the request of round 0 to server 0. [`Fault::Drop`]: it is
    /// not sent; [`Fault::Duplicate`]: it is sent twice; [`Fault::Misroute`]: it goes to server 1.
    fault: Fault,
    done: Option<ReplyTo<()>>,
}

impl Client {
    fn fan_out(&mut self) {
        let servers = self.servers.as_ref().expect("servers set");
        let round = self.round;
        let send = |server: &ActorRef<u32>| server.send(round).expect("server alive");
        let mut first = 0;
        let mut extra = 0;
        match std::mem::replace(&mut self.fault, Fault::None) {
            Fault::None => {}
            // Counted as sent, never delivered.
            Fault::Drop => first = 1,
            Fault::Duplicate => {
                send(&servers[0]);
                extra = 1;
            }
            _ => {
                first = 1;
                send(&servers[1 % servers.len()]);
            }
        }
        servers[first..].iter().for_each(send);
        self.tally.requests += servers.len() as u64 + extra;
    }
}

impl Actor for Client {
    type Msg = ClientMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: ClientMsg) {
        match msg {
            ClientMsg::Servers(servers) => self.servers = Some(*servers),
            ClientMsg::Start(done) => {
                self.done = Some(*done);
                self.tally.servers = vec![0; self.rounds as usize];
                self.fan_out();
            }
            ClientMsg::Answer { server, round } => {
                self.tally.answers += 1;
                if round != self.round || self.tally.rounds == self.rounds {
                    self.tally.stale += 1;
                    return;
                }
                let sum = &mut self.tally.servers[round as usize];
                *sum = sum.wrapping_add(mix(u64::from(server)));
                self.answered += 1;
                if self.answered == self.servers.as_ref().expect("servers set").len() {
                    self.tally.rounds += 1;
                    self.answered = 0;
                    if self.tally.rounds < self.rounds {
                        self.round += 1;
                        self.fan_out();
                    } else if let Some(done) = self.done.take() {
                        done.send(());
                    }
                }
            }
            ClientMsg::Report(reply) => reply.send(self.tally.clone()),
        }
    }
}

/// Answers every request with its own index and the request's round.
struct Server {
    index: u32,
    client: ActorRef<ClientMsg>,
}

impl Actor for Server {
    /// A request: its round.
    type Msg = u32;
    fn handle(&mut self, _ctx: &mut Context<Self>, round: u32) {
        self.client
            .send(ClientMsg::Answer {
                server: self.index,
                round,
            })
            .expect("client alive");
    }
}

/// The run compared with the expectation.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    rounds: u32,
    /// Rounds whose answers were not one from each server.
    rounds_off: usize,
    stale: u64,
    /// Actors of the run still alive once they were stopped.
    alive: u64,
}

fn run(system: &System, run: &Run) -> Measured {
    let p = of(run.size);
    noting(measure(system, run, p), p)
}

fn measure(system: &System, run: &Run, p: Params) -> Measured {
    system.run_until_idle();
    let before = system.stats();
    let client = system.spawn(Client {
        servers: None,
        rounds: p.rounds,
        round: 0,
        answered: 0,
        tally: Tally::default(),
        fault: run.fault,
        done: None,
    });
    let servers: Servers = (0..p.servers)
        .map(|index| {
            system.spawn(Server {
                index: index as u32,
                client: client.clone(),
            })
        })
        .collect();
    client
        .send(ClientMsg::Servers(Box::new(Arc::clone(&servers))))
        .expect("fresh actor");
    system.run_until_idle();
    let start = Instant::now();
    let pending = client
        .ask(|done| ClientMsg::Start(Box::new(done)))
        .expect("fresh actor");
    let finished = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    let stop = || {
        for actor in servers.iter() {
            actor.stop();
        }
        client.stop();
    };
    if let Err(e) = finished {
        stop();
        return Measured::failed(0, elapsed, e);
    }
    // Answers still in flight (extra ones) arrive before the tally is read.
    system.run_until_idle();
    let pending = client
        .ask(|reply| ClientMsg::Report(Box::new(reply)))
        .expect("client alive");
    let tally = await_result(system, pending, run, BENCH.name);
    stop();
    drop((client, servers));
    system.run_until_idle();
    let tally = match tally {
        Ok(tally) => tally,
        Err(e) => return Measured::failed(0, elapsed, e),
    };
    let every_server = (0..p.servers as u64).fold(0u64, |sum, i| sum.wrapping_add(mix(i)));
    let outcome = Outcome {
        rounds: tally.rounds,
        rounds_off: tally.servers.iter().filter(|&&s| s != every_server).count(),
        stale: tally.stale,
        alive: system
            .stats()
            .actors_live()
            .saturating_sub(before.actors_live()),
    };
    let expected = Outcome {
        rounds: p.rounds,
        rounds_off: 0,
        stale: 0,
        alive: 0,
    };
    Measured::checked(tally.requests + tally.answers, elapsed, outcome, expected)
        .with_message_count(2 * p.servers as u64 * u64::from(p.rounds), "2·N·R = ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_runs_verify_and_faults_fail() {
        let p = Params {
            servers: 50,
            rounds: 4,
        };
        let system = loka::System::builder().workers(2).build().unwrap();
        let m = measure(&system, &Run::new(Size::Quick), p);
        assert!(m.verified, "{}", m.check);
        assert_eq!(m.messages, 400);
        for fault in BENCH.faults {
            let system = loka::System::builder().workers(2).build().unwrap();
            let m = measure(&system, &Run::new(Size::Quick).with_fault(*fault), p);
            assert!(!m.verified, "{fault:?}: {}", m.check);
        }
    }
}
