//! Logistic Map Series: T series workers each compute S terms of `x ← r·x·(1 − x)` by asking their
//! own rate computer actor for every term, one request at a time (Savina #15).

use crate::{Bench, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "logmap",
    suite: "savina",
    about: "T series of S logistic-map terms, each term a request/response to a computer (3·T·S + 2·T messages)",
    run,
    faults: &[],
};

/// Savina's rate of series 0 (Wölke's r = 3.46).
const START_RATE: f64 = 3.46;
/// Savina's step between the series' rates and start terms.
const INCREMENT: f64 = 0.0025;

/// Savina's `computeNextTerm`.
fn next_term(term: f64, rate: f64) -> f64 {
    rate * term * (1.0 - term)
}

/// Series `i`: rate `3.46 + i·0.0025`, first term `i·0.0025` (as in Savina).
fn series(i: usize) -> (f64, f64) {
    (START_RATE + i as f64 * INCREMENT, i as f64 * INCREMENT)
}

enum ComputerMsg {
    Compute {
        term: f64,
        from: ActorRef<WorkerMsg>,
    },
}

struct RateComputer {
    rate: f64,
}

impl Actor for RateComputer {
    type Msg = ComputerMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: ComputerMsg) {
        let ComputerMsg::Compute { term, from } = msg;
        let _ = from.send(WorkerMsg::Result(next_term(term, self.rate)));
    }
}

enum WorkerMsg {
    NextTerm,
    GetTerm,
    /// The computer's answer.
    Result(f64),
}

/// A series worker. While it waits for its computer it handles no other request (Savina's manual
/// stash): the requests that arrive meanwhile are kept here and taken up, in order, after the
/// answer. `NextTerm` carries nothing, so the stash is a count; `GetTerm` comes last.
struct SeriesWorker {
    index: usize,
    term: f64,
    computer: ActorRef<ComputerMsg>,
    master: ActorRef<MasterMsg>,
    waiting: bool,
    stashed_next: u64,
    stashed_get: bool,
}

impl SeriesWorker {
    fn next(&mut self, ctx: &mut Context<Self>) {
        self.waiting = true;
        self.computer
            .send(ComputerMsg::Compute {
                term: self.term,
                from: ctx.myself(),
            })
            .expect("computer alive");
    }

    fn get(&mut self) {
        self.master
            .send(MasterMsg::Term(self.index, self.term))
            .expect("master alive");
    }
}

impl Actor for SeriesWorker {
    type Msg = WorkerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: WorkerMsg) {
        match msg {
            WorkerMsg::Result(term) => {
                self.term = term;
                self.waiting = false;
                if self.stashed_next > 0 {
                    self.stashed_next -= 1;
                    self.next(ctx);
                } else if self.stashed_get {
                    self.stashed_get = false;
                    self.get();
                }
            }
            WorkerMsg::NextTerm if self.waiting => self.stashed_next += 1,
            WorkerMsg::NextTerm => self.next(ctx),
            WorkerMsg::GetTerm if self.waiting || self.stashed_next > 0 => self.stashed_get = true,
            WorkerMsg::GetTerm => self.get(),
        }
    }
}

enum MasterMsg {
    Start {
        workers: Vec<ActorRef<WorkerMsg>>,
        computers: Vec<ActorRef<ComputerMsg>>,
        done: ReplyTo<Vec<f64>>,
    },
    /// Series `.0` ended with term `.1`.
    Term(usize, f64),
}

struct Master {
    terms: u64,
    workers: Vec<ActorRef<WorkerMsg>>,
    computers: Vec<ActorRef<ComputerMsg>>,
    results: Vec<f64>,
    received: usize,
    done: Option<ReplyTo<Vec<f64>>>,
}

impl Actor for Master {
    type Msg = MasterMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: MasterMsg) {
        match msg {
            MasterMsg::Start {
                workers,
                computers,
                done,
            } => {
                self.done = Some(done);
                self.results = vec![f64::NAN; workers.len()];
                // As in Savina: all S rounds of requests at once, then one GetTerm each.
                for _ in 0..self.terms {
                    for worker in &workers {
                        worker.send(WorkerMsg::NextTerm).expect("worker alive");
                    }
                }
                for worker in &workers {
                    worker.send(WorkerMsg::GetTerm).expect("worker alive");
                }
                self.workers = workers;
                self.computers = computers;
            }
            MasterMsg::Term(index, term) => {
                self.results[index] = term;
                self.received += 1;
                if self.received == self.workers.len() {
                    if let Some(done) = self.done.take() {
                        done.send(std::mem::take(&mut self.results));
                    }
                    for worker in &self.workers {
                        worker.stop();
                    }
                    for computer in &self.computers {
                        computer.stop();
                    }
                    ctx.stop();
                }
            }
        }
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    let (count, terms) = size.pick((10, 25_000_u64), (10, 25_000_u64));
    let expected: Vec<u64> = (0..count)
        .map(|i| {
            let (rate, mut term) = series(i);
            for _ in 0..terms {
                term = next_term(term, rate);
            }
            term.to_bits()
        })
        .collect();
    let master = system.spawn(Master {
        terms,
        workers: Vec::new(),
        computers: Vec::new(),
        results: Vec::new(),
        received: 0,
        done: None,
    });
    let computers: Vec<_> = (0..count)
        .map(|i| system.spawn(RateComputer { rate: series(i).0 }))
        .collect();
    let workers: Vec<_> = (0..count)
        .map(|i| {
            system.spawn(SeriesWorker {
                index: i,
                term: series(i).1,
                computer: computers[i].clone(),
                master: master.clone(),
                waiting: false,
                stashed_next: 0,
                stashed_get: false,
            })
        })
        .collect();
    system.run_until_idle();
    let start = Instant::now();
    let results = master
        .ask(|done| MasterMsg::Start {
            workers,
            computers,
            done,
        })
        .expect("fresh actor")
        .wait()
        .unwrap_or_default();
    let elapsed = start.elapsed();
    // Bit for bit: the same operations in the same order as the sequential computation.
    let got: Vec<u64> = results.iter().map(|t| t.to_bits()).collect();
    let n = count as u64;
    let check = match (0..count).find(|&i| got.get(i) != Some(&expected[i])) {
        None => format!("all {count} series after {terms} terms equal the sequential computation"),
        Some(i) => format!(
            "series {i}: got {:?}, expected {}",
            results.get(i),
            f64::from_bits(expected[i])
        ),
    };
    Measured {
        messages: 3 * n * terms + 2 * n,
        elapsed,
        verified: got == expected,
        check,
    }
}
