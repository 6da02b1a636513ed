//! N-Queens: a master hands partial boards round robin to W workers; a worker sends every valid
//! extension back to the master as new work, or below a depth threshold solves the board itself,
//! and reports every complete placement (Savina #19).

use crate::{await_result, Bench, Fault, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "nqueens",
    suite: "savina",
    about: "master and W workers count the N-queens solutions (3·items − 1 + solutions messages)",
    run,
    faults: &[Fault::Drop, Fault::Duplicate],
};

/// The number of solutions for N = 1, 2, … (Savina's table).
const SOLUTIONS: [u64; 16] = [
    1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2_680, 14_200, 73_712, 365_596, 2_279_184, 14_772_512,
];

/// Savina's THRESHOLD: boards with this many queens are solved sequentially by one worker.
const THRESHOLD: usize = 4;

/// Whether the last queen of `board` attacks none of the others (Savina's `boardValid`, checking
/// only the new queen: the others were valid before).
fn valid(board: &[u8]) -> bool {
    let (last, rest) = board.split_last().expect("a queen");
    let depth = rest.len();
    rest.iter().enumerate().all(|(row, &q)| {
        let distance = (depth - row) as i32;
        let diff = i32::from(*last) - i32::from(q);
        diff != 0 && diff.abs() != distance
    })
}

/// The work items of a run, counted sequentially: the empty board and every valid partial board of
/// 1..=THRESHOLD queens (a board below the threshold is extended by its worker, one at the
/// threshold is solved in place).
fn work_items(n: usize) -> u64 {
    fn count(board: &mut Vec<u8>, n: usize) -> u64 {
        if board.len() == THRESHOLD.min(n) {
            return 1;
        }
        let mut items = 1;
        for column in 0..n as u8 {
            board.push(column);
            if valid(board) {
                items += count(board, n);
            }
            board.pop();
        }
        items
    }
    count(&mut Vec::new(), n)
}

enum WorkerMsg {
    Work(Vec<u8>),
}

struct Worker {
    size: usize,
    master: ActorRef<MasterMsg>,
}

impl Worker {
    /// Savina's `nqueensKernelSeq`: every complete placement is reported.
    fn solve(&self, board: &mut Vec<u8>) {
        if board.len() == self.size {
            self.master.send(MasterMsg::Solution).expect("master alive");
            return;
        }
        for column in 0..self.size as u8 {
            board.push(column);
            if valid(board) {
                self.solve(board);
            }
            board.pop();
        }
    }
}

impl Actor for Worker {
    type Msg = WorkerMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: WorkerMsg) {
        let WorkerMsg::Work(mut board) = msg;
        if board.len() == self.size {
            self.master.send(MasterMsg::Solution).expect("master alive");
        } else if board.len() >= THRESHOLD {
            self.solve(&mut board);
        } else {
            for column in 0..self.size as u8 {
                let mut next = Vec::with_capacity(board.len() + 1);
                next.extend_from_slice(&board);
                next.push(column);
                if valid(&next) {
                    self.master
                        .send(MasterMsg::Work(next))
                        .expect("master alive");
                }
            }
        }
        self.master.send(MasterMsg::Done).expect("master alive");
    }
}

/// `(solutions, messages)`.
type Outcome = (u64, u64);

enum MasterMsg {
    Start {
        workers: Vec<ActorRef<WorkerMsg>>,
        done: ReplyTo<Outcome>,
    },
    /// A partial board to hand out.
    Work(Vec<u8>),
    Solution,
    /// A worker finished a work item.
    Done,
}

struct Master {
    workers: Vec<ActorRef<WorkerMsg>>,
    next_worker: usize,
    sent: u64,
    completed: u64,
    solutions: u64,
    /// Workload messages the master sent and received.
    messages: u64,
    /// The defect to inject once ([`Fault::None`] in a real run, and once injected).
    fault: Fault,
    done: Option<ReplyTo<Outcome>>,
}

impl Master {
    fn send_work(&mut self, board: Vec<u8>) {
        self.workers[self.next_worker]
            .send(WorkerMsg::Work(board))
            .expect("worker alive");
        self.next_worker = (self.next_worker + 1) % self.workers.len();
        self.sent += 1;
        self.messages += 1;
    }
}

impl Actor for Master {
    type Msg = MasterMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: MasterMsg) {
        match msg {
            MasterMsg::Start { workers, done } => {
                self.workers = workers;
                self.done = Some(done);
                self.send_work(Vec::new());
            }
            MasterMsg::Work(board) => {
                self.messages += 1;
                if self.fault == Fault::Drop {
                    // Fault injection: the first new work item is lost.
                    self.fault = Fault::None;
                    return;
                }
                self.send_work(board);
            }
            MasterMsg::Solution => {
                let copies = if self.fault == Fault::Duplicate {
                    // Fault injection: the first solution is delivered twice.
                    self.fault = Fault::None;
                    2
                } else {
                    1
                };
                self.messages += copies;
                self.solutions += copies;
            }
            MasterMsg::Done => {
                self.messages += 1;
                self.completed += 1;
                // A worker sends its new work and solutions before its Done, so when every item
                // handed out is done, nothing is left anywhere.
                if self.completed == self.sent {
                    if let Some(done) = self.done.take() {
                        done.send((self.solutions, self.messages));
                    }
                    for worker in &self.workers {
                        worker.stop();
                    }
                    ctx.stop();
                }
            }
        }
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    // Wölke's S = 1,500,000 solutions limit exceeds the 365,596 solutions for N = 14, so every
    // solution is searched and counted.
    let (n, workers) = size.pick((12, 20), (14, 100));
    let master = system.spawn(Master {
        workers: Vec::new(),
        next_worker: 0,
        sent: 0,
        completed: 0,
        solutions: 0,
        messages: 0,
        fault: run.fault,
        done: None,
    });
    let refs: Vec<_> = (0..workers)
        .map(|_| {
            system.spawn(Worker {
                size: n,
                master: master.clone(),
            })
        })
        .collect();
    system.run_until_idle();
    let start = Instant::now();
    let pending = master
        .ask(|done| MasterMsg::Start {
            workers: refs,
            done,
        })
        .expect("fresh actor");
    let outcome = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    let (solutions, messages) = match outcome {
        Ok(outcome) => outcome,
        Err(reason) => return Measured::failed(0, elapsed, reason),
    };
    let expected = SOLUTIONS[n - 1];
    let items = work_items(n);
    Measured {
        messages,
        elapsed,
        verified: solutions == expected,
        check: format!("{solutions} solutions (the known count for N = {n}: {expected})"),
    }
    .with_message_count(
        3 * items - 1 + expected,
        &format!("3·items − 1 + solutions, {items} items counted sequentially, = "),
    )
}
