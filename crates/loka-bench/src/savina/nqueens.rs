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

/// Savina's `nqueensKernelSeq` on a `size`×`size` board: calls `solution` for every complete
/// placement; returns how many boards it checked ([`valid`] calls), the work it declares.
fn search(board: &mut Vec<u8>, size: usize, solution: &mut impl FnMut()) -> u64 {
    if board.len() == size {
        solution();
        return 0;
    }
    let mut checked = 0;
    for column in 0..size as u8 {
        board.push(column);
        checked += 1;
        if valid(board) {
            checked += search(board, size, solution);
        }
        board.pop();
    }
    checked
}

/// What one [`valid`] check of a worker's sequential search (with its share of the recursion)
/// takes on this project's host, declared to the simulation engine with `ctx.charge`
/// (docs/simulation.md): measured with `cargo test --release -p loka-bench --lib valid_cost --
/// --ignored --nocapture --test-threads=1`, every threshold board of the quick size (N = 12)
/// searched without sending; the least of six runs on 2026-11-24 (8.3 ns; the others up to 11.7 ns).
const VALID_PS: u64 = 8_279;

impl Worker {
    /// Solves `board` in place, reporting every complete placement; returns the declared compute.
    fn solve(&self, board: &mut Vec<u8>) -> std::time::Duration {
        let checked = search(board, self.size, &mut || {
            self.master.send(MasterMsg::Solution).expect("master alive");
        });
        std::time::Duration::from_nanos(checked * VALID_PS / 1_000)
    }
}

impl Actor for Worker {
    type Msg = WorkerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: WorkerMsg) {
        let WorkerMsg::Work(mut board) = msg;
        if board.len() == self.size {
            self.master.send(MasterMsg::Solution).expect("master alive");
        } else if board.len() >= THRESHOLD {
            let compute = self.solve(&mut board);
            ctx.charge(compute);
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

#[cfg(test)]
mod cost_tests {
    use super::*;

    /// The cost of one check of the sequential search, for [`VALID_PS`].
    #[test]
    #[ignore = "a measurement, not a test"]
    fn valid_cost_per_check() {
        let n = 12;
        // Every valid board of THRESHOLD queens: what the workers search.
        fn boards(board: &mut Vec<u8>, n: usize, out: &mut Vec<Vec<u8>>) {
            if board.len() == THRESHOLD {
                out.push(board.clone());
                return;
            }
            for column in 0..n as u8 {
                board.push(column);
                if valid(board) {
                    boards(board, n, out);
                }
                board.pop();
            }
        }
        let mut starts = Vec::new();
        boards(&mut Vec::new(), n, &mut starts);
        for _ in 0..6 {
            let (mut checked, mut solutions) = (0, 0u64);
            let start = Instant::now();
            for board in &starts {
                let mut board = board.clone();
                checked += search(&mut board, n, &mut || solutions += 1);
            }
            let ps = start.elapsed().as_nanos() as f64 * 1000.0 / checked as f64;
            eprintln!("nqueens: {ps:.0} ps per check ({checked} checks, {solutions} solutions)");
        }
    }
}
