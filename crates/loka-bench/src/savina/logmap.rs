//! Logistic Map Series: T series workers each compute S terms of `x ← r·x·(1 − x)` by asking their
//! own rate computer actor for every term, one request at a time (Savina #15).

use crate::verify::SequenceHash;
use crate::{await_result, Bench, Fault, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "logmap",
    suite: "savina",
    about: "T series of S logistic-map terms, each term a request/response to a computer (3·T·S + 2·T messages)",
    run,
    faults: &[Fault::Drop, Fault::WrongRule],
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
    /// Fault injection: the next term is computed with the next series' rate (once).
    wrong_rate: bool,
}

impl RateComputer {
    #[cold]
    fn wrong_term(&mut self, term: f64) -> f64 {
        self.wrong_rate = false;
        next_term(term, self.rate + INCREMENT)
    }
}

impl Actor for RateComputer {
    type Msg = ComputerMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: ComputerMsg) {
        let ComputerMsg::Compute { term, from } = msg;
        let next = if self.wrong_rate {
            self.wrong_term(term)
        } else {
            next_term(term, self.rate)
        };
        let _ = from.send(WorkerMsg::Result(next));
    }
}

enum WorkerMsg {
    NextTerm,
    GetTerm,
    /// The computer's answer.
    Result(f64),
}

/// A series' result: its last term, the hash of all its terms in order, and the messages its
/// worker handled and sent to its computer.
#[derive(Clone, Copy, Debug)]
struct Series {
    last: f64,
    terms: SequenceHash,
    messages: u64,
}

/// A series worker. While it waits for its computer it handles no other request (Savina's manual
/// stash): the requests that arrive meanwhile are kept here and taken up, in order, after the
/// answer. `NextTerm` carries nothing, so the stash is a count; `GetTerm` comes last.
struct SeriesWorker {
    index: usize,
    term: f64,
    /// Every term so far, hashed in order (its bits).
    terms: SequenceHash,
    /// Messages handled, plus the `Compute` requests sent (each answered by one `Result`).
    messages: u64,
    computer: ActorRef<ComputerMsg>,
    master: ActorRef<MasterMsg>,
    waiting: bool,
    stashed_next: u64,
    stashed_get: bool,
}

impl SeriesWorker {
    fn next(&mut self, ctx: &mut Context<Self>) {
        self.waiting = true;
        self.messages += 1;
        self.computer
            .send(ComputerMsg::Compute {
                term: self.term,
                from: ctx.myself(),
            })
            .expect("computer alive");
    }

    fn get(&mut self) {
        let series = Series {
            last: self.term,
            terms: self.terms,
            messages: self.messages,
        };
        self.master
            .send(MasterMsg::Term(self.index, series))
            .expect("master alive");
    }
}

impl Actor for SeriesWorker {
    type Msg = WorkerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: WorkerMsg) {
        self.messages += 1;
        match msg {
            WorkerMsg::Result(term) => {
                self.term = term;
                self.terms.push(term.to_bits());
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
        done: ReplyTo<Vec<Option<Series>>>,
    },
    /// Series `.0` ended with `.1`.
    Term(usize, Series),
}

struct Master {
    terms: u64,
    workers: Vec<ActorRef<WorkerMsg>>,
    computers: Vec<ActorRef<ComputerMsg>>,
    results: Vec<Option<Series>>,
    received: usize,
    /// Fault injection: the first `NextTerm` for series 1 is lost.
    drop_one: bool,
    done: Option<ReplyTo<Vec<Option<Series>>>>,
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
                self.results = vec![None; workers.len()];
                // As in Savina: all S rounds of requests at once, then one GetTerm each.
                for (i, worker) in workers.iter().enumerate() {
                    // Fault injection: series 1's first `NextTerm` is lost.
                    if !(self.drop_one && i == 1) {
                        worker.send(WorkerMsg::NextTerm).expect("worker alive");
                    }
                }
                for _ in 1..self.terms {
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
            MasterMsg::Term(index, series) => {
                self.results[index] = Some(series);
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
    let (count, terms) = run.pick((10, 150_000_u64), (10, 25_000_u64));
    // The sequential computation: every term of every series, hashed in order, and the last.
    let expected: Vec<(u64, SequenceHash)> = (0..count)
        .map(|i| {
            let (rate, mut term) = series(i);
            let mut hash = SequenceHash::new();
            for _ in 0..terms {
                term = next_term(term, rate);
                hash.push(term.to_bits());
            }
            (term.to_bits(), hash)
        })
        .collect();
    let master = system.spawn(Master {
        terms,
        workers: Vec::new(),
        computers: Vec::new(),
        results: Vec::new(),
        received: 0,
        drop_one: run.injects(Fault::Drop),
        done: None,
    });
    let computers: Vec<_> = (0..count)
        .map(|i| {
            system.spawn(RateComputer {
                rate: series(i).0,
                // Series 1 (series 0 stays at 0, whatever its rate).
                wrong_rate: i == 1 && run.injects(Fault::WrongRule),
            })
        })
        .collect();
    let workers: Vec<_> = (0..count)
        .map(|i| {
            system.spawn(SeriesWorker {
                index: i,
                term: series(i).1,
                terms: SequenceHash::new(),
                messages: 0,
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
    let pending = master
        .ask(|done| MasterMsg::Start {
            workers,
            computers,
            done,
        })
        .expect("fresh actor");
    let results = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    let results = match results {
        Ok(results) => results,
        Err(reason) => return Measured::failed(0, elapsed, reason),
    };
    // Bit for bit: the same operations in the same order as the sequential computation.
    let got: Vec<Option<(u64, SequenceHash)>> = results
        .iter()
        .map(|s| s.map(|s| (s.last.to_bits(), s.terms)))
        .collect();
    let wrong: Vec<usize> = (0..count)
        .filter(|&i| got[i] != Some(expected[i]))
        .collect();
    let n = count as u64;
    // Each series' messages, plus the `Term`s the master handled (one per series reported).
    let messages = results
        .iter()
        .flatten()
        .map(|s| s.messages + 1)
        .sum::<u64>();
    let check = match wrong.first() {
        None => format!(
            "all {count} series: each of the {terms} terms, in order, and the last equal the \
             sequential computation bit for bit"
        ),
        Some(&i) => format!(
            "{} of {count} series differ from the sequential computation; series {i}: last term \
             {:?} (expected {}), {} terms with hash {:?} (expected {} terms, {:#x})",
            wrong.len(),
            results[i].map(|s| s.last),
            f64::from_bits(expected[i].0),
            results[i].map_or(0, |s| s.terms.count),
            results[i].map(|s| s.terms.hash),
            expected[i].1.count,
            expected[i].1.hash,
        ),
    };
    Measured {
        messages,
        elapsed,
        verified: wrong.is_empty(),
        check,
    }
    .with_message_count(3 * n * terms + 2 * n, "3·T·S + 2·T = ")
}
