//! Fork-Join Throughput: a driver sends N messages to each of A actors, round robin; each message
//! costs one `compute()` (Savina #4).

use crate::{compute, Bench, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "fjthrput",
    suite: "savina",
    about: "a driver sends N messages to each of A actors round robin, one compute() each (A·N messages)",
    run,
    faults: &[],
};

/// Messages sent per activation of the driver before it yields to the rest of the system.
const SLICE: usize = 10_000;

struct Work;

struct Worker {
    driver: ActorRef<DriverMsg>,
    expected: u64,
    received: u64,
}

impl Actor for Worker {
    type Msg = Work;
    fn handle(&mut self, ctx: &mut Context<Self>, _msg: Work) {
        compute();
        self.received += 1;
        if self.received == self.expected {
            self.driver
                .send(DriverMsg::Report(self.received))
                .expect("driver alive");
            ctx.stop();
        }
    }
}

enum DriverMsg {
    Start {
        workers: Vec<ActorRef<Work>>,
        done: ReplyTo<usize>,
    },
    /// Sent to itself to go on with the next slice of rounds.
    Continue,
    /// A worker received all its messages.
    Report(u64),
}

struct Driver {
    workers: Vec<ActorRef<Work>>,
    actors: usize,
    per_worker: u64,
    /// Rounds (one message to every worker) still to send.
    rounds_left: u64,
    /// Workers that reported, and those among them that reported N.
    reports: usize,
    complete: usize,
    done: Option<ReplyTo<usize>>,
}

impl Driver {
    fn send_slice(&mut self, ctx: &mut Context<Self>) {
        let rounds = self.rounds_left.min((SLICE / self.actors).max(1) as u64);
        for _ in 0..rounds {
            for worker in &self.workers {
                worker.send(Work).expect("worker alive");
            }
        }
        self.rounds_left -= rounds;
        if self.rounds_left > 0 {
            ctx.myself()
                .send(DriverMsg::Continue)
                .expect("driver alive");
        } else {
            // Each worker stops by itself after its last message.
            self.workers = Vec::new();
        }
    }
}

impl Actor for Driver {
    type Msg = DriverMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: DriverMsg) {
        match msg {
            DriverMsg::Start { workers, done } => {
                self.workers = workers;
                self.done = Some(done);
                self.send_slice(ctx);
            }
            DriverMsg::Continue => self.send_slice(ctx),
            DriverMsg::Report(received) => {
                self.reports += 1;
                self.complete += usize::from(received == self.per_worker);
                if self.reports == self.actors {
                    if let Some(done) = self.done.take() {
                        done.send(self.complete);
                    }
                    ctx.stop();
                }
            }
        }
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    let (actors, per_worker) = size.pick((60, 20_000), (360, 60_000));
    let driver = system.spawn(Driver {
        workers: Vec::new(),
        actors,
        per_worker,
        rounds_left: per_worker,
        reports: 0,
        complete: 0,
        done: None,
    });
    let workers: Vec<_> = (0..actors)
        .map(|_| {
            system.spawn(Worker {
                driver: driver.clone(),
                expected: per_worker,
                received: 0,
            })
        })
        .collect();
    system.run_until_idle();
    let start = Instant::now();
    let complete = driver
        .ask(|done| DriverMsg::Start { workers, done })
        .expect("fresh actor")
        .wait()
        .unwrap_or(usize::MAX);
    Measured::checked(
        actors as u64 * per_worker,
        start.elapsed(),
        complete,
        actors,
    )
}
