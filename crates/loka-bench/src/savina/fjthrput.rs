//! Fork-Join Throughput: a driver sends N messages to each of A actors, round robin; each message
//! carries an angle and costs one `compute()` (Savina #4).
//!
//! Check: after the last round the driver asks every worker for what it received: how many
//! messages and the sum of their `compute()` results, in arrival order. The calling thread
//! replays each worker's messages sequentially (worker `w` gets the angles of messages
//! `r·A + w`, r = 0..N) and compares both, bit for bit: a lost, duplicated or misdelivered
//! message changes a count and a sum.

use crate::{await_result, compute, compute_angle, Bench, Fault, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "fjthrput",
    suite: "savina",
    about: "a driver sends N messages to each of A actors round robin, one compute() each (A·N messages)",
    run,
    faults: &[Fault::Drop, Fault::Misroute],
};

/// Messages sent per activation of the driver before it yields to the rest of the system.
const SLICE: usize = 10_000;

enum WorkerMsg {
    /// One unit of work: the angle to compute.
    Work(f64),
    /// After the last round: report to the driver, then stop.
    Finish,
}

/// What a worker received: messages, and the sum of their `compute()` results in arrival order.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Received {
    messages: u64,
    sum: f64,
}

struct Worker {
    index: usize,
    driver: ActorRef<DriverMsg>,
    received: Received,
}

impl Actor for Worker {
    type Msg = WorkerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: WorkerMsg) {
        match msg {
            WorkerMsg::Work(angle) => {
                self.received.messages += 1;
                self.received.sum += compute(angle);
                ctx.charge(crate::COMPUTE_COST);
            }
            WorkerMsg::Finish => {
                self.driver
                    .send(DriverMsg::Report(self.index, self.received))
                    .expect("driver alive");
                ctx.stop();
            }
        }
    }
}

enum DriverMsg {
    Start {
        workers: Vec<ActorRef<WorkerMsg>>,
        /// [`Fault::Drop`]: the first message is lost; [`Fault::Misroute`]: it goes to the
        /// second worker instead of the first.
        fault: Fault,
        done: ReplyTo<Vec<Received>>,
    },
    /// Sent to itself to go on with the next slice of rounds.
    Continue,
    /// What the worker with this index received.
    Report(usize, Received),
}

struct Driver {
    workers: Vec<ActorRef<WorkerMsg>>,
    per_worker: u64,
    /// The next round (one message to every worker) to send.
    round: u64,
    /// Reports by worker index; `None` until it reported.
    reports: Vec<Option<Received>>,
    reported: usize,
    done: Option<ReplyTo<Vec<Received>>>,
}

impl Driver {
    fn send_slice(&mut self, ctx: &mut Context<Self>) {
        let actors = self.workers.len() as u64;
        let rounds = (self.per_worker - self.round).min((SLICE as u64 / actors).max(1));
        let mut k = self.round * actors;
        for _ in 0..rounds {
            for worker in &self.workers {
                worker
                    .send(WorkerMsg::Work(compute_angle(k)))
                    .expect("worker alive");
                k += 1;
            }
        }
        self.round += rounds;
        if self.round < self.per_worker {
            ctx.myself()
                .send(DriverMsg::Continue)
                .expect("driver alive");
        } else {
            // Behind the last round on each worker's FIFO: each reports, then stops.
            for worker in std::mem::take(&mut self.workers) {
                worker.send(WorkerMsg::Finish).expect("worker alive");
            }
        }
    }

    /// The injected faults, on the first round: message 0 (for worker 0) is lost or misdelivered.
    fn send_faulty_round(&mut self, fault: Fault) {
        for (k, worker) in self.workers.iter().enumerate() {
            let to = match (k, fault) {
                (0, Fault::Drop) => continue,
                (0, Fault::Misroute) => &self.workers[1],
                _ => worker,
            };
            to.send(WorkerMsg::Work(compute_angle(k as u64)))
                .expect("worker alive");
        }
        self.round = 1;
    }
}

impl Actor for Driver {
    type Msg = DriverMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: DriverMsg) {
        match msg {
            DriverMsg::Start {
                workers,
                fault,
                done,
            } => {
                self.reports = vec![None; workers.len()];
                self.workers = workers;
                self.done = Some(done);
                if fault != Fault::None {
                    self.send_faulty_round(fault);
                }
                self.send_slice(ctx);
            }
            DriverMsg::Continue => self.send_slice(ctx),
            DriverMsg::Report(index, received) => {
                self.reported += usize::from(self.reports[index].replace(received).is_none());
                if self.reported == self.reports.len() {
                    if let Some(done) = self.done.take() {
                        done.send(self.reports.iter().map(|r| r.unwrap_or_default()).collect());
                    }
                    ctx.stop();
                }
            }
        }
    }
}

/// What the workers received, compared with the replay.
#[derive(Debug, PartialEq)]
struct Outcome {
    workers: usize,
    /// Workers whose message count or sum differs from the replay.
    workers_off_replay: usize,
}

fn run(system: &System, run: &Run) -> Measured {
    let (actors, per_worker) = run.pick((60, 60_000), (360, 60_000));
    let driver = system.spawn(Driver {
        workers: Vec::new(),
        per_worker,
        round: 0,
        reports: Vec::new(),
        reported: 0,
        done: None,
    });
    let workers: Vec<_> = (0..actors)
        .map(|index| {
            system.spawn(Worker {
                index,
                driver: driver.clone(),
                received: Received::default(),
            })
        })
        .collect();
    system.run_until_idle();
    let start = Instant::now();
    let pending = driver
        .ask(|done| DriverMsg::Start {
            workers,
            fault: run.fault,
            done,
        })
        .expect("fresh actor");
    let received = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    let received = match received {
        Ok(received) => received,
        Err(e) => return Measured::failed(0, elapsed, e),
    };
    // The replay (untimed): each worker's messages, in the order the driver sent them.
    let workers_off_replay = received
        .iter()
        .enumerate()
        .filter(|&(w, got)| {
            let mut expected = Received::default();
            for round in 0..per_worker {
                expected.messages += 1;
                expected.sum += compute(compute_angle(round * actors as u64 + w as u64));
            }
            // Bit for bit: the same additions in the same order.
            (got.messages, got.sum.to_bits()) != (expected.messages, expected.sum.to_bits())
        })
        .count();
    let messages = received.iter().map(|r| r.messages).sum();
    Measured::checked(
        messages,
        elapsed,
        Outcome {
            workers: received.len(),
            workers_off_replay,
        },
        Outcome {
            workers: actors,
            workers_off_replay: 0,
        },
    )
    .with_message_count(actors as u64 * per_worker, "A·N = ")
}

#[cfg(test)]
mod tests {
    use crate::{compute, compute_angle};
    use std::hint::black_box;
    use std::time::Instant;

    /// The per-call cost of the shared per-message work, as documented in docs/internals/benchmarks.md:
    /// `cargo test -p loka-bench --lib compute_cost -- --ignored --nocapture`.
    #[test]
    #[ignore = "a measurement, not a test"]
    fn compute_cost_per_call() {
        const CALLS: u64 = 20_000_000;
        for _ in 0..3 {
            // Independent calls, as a worker handling a batch of messages makes them.
            let start = Instant::now();
            let mut sum = 0.0;
            for k in 0..CALLS {
                sum += compute(compute_angle(black_box(k)));
            }
            black_box(sum);
            let independent = start.elapsed().as_nanos() as f64 / CALLS as f64;
            // Each angle depends on the previous result (`· 0.0` is never folded): latency.
            let start = Instant::now();
            let mut previous = 0.0;
            for k in 0..CALLS {
                previous = compute(compute_angle(black_box(k)) + previous * 0.0);
            }
            black_box(previous);
            let chained = start.elapsed().as_nanos() as f64 / CALLS as f64;
            eprintln!("compute(): {independent:.1} ns per call (independent calls), {chained:.1} ns (each waiting for the previous)");
        }
    }
}
