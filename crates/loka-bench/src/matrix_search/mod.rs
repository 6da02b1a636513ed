//! Matrix Search (Wölke §6.2.2): one controller hands word-search jobs to S seekers, each of which
//! owns an M×M matrix of random letters and counts the occurrences of a 6-letter word along the
//! columns only (the matrix is stored row-wise, so a column walk defeats the prefetcher).
//!
//! Four benchmarks, one per job-assignment variant of the text (definitions in
//! `docs/internals/workloads.md`):
//!
//! | bench | jobs | assignment |
//! |---|---|---|
//! | `matrix-search` | continuous | local |
//! | `matrix-search-rr` | continuous | round robin |
//! | `matrix-search-block` | block-wise | local |
//! | `matrix-search-block-rr` | block-wise | round robin |
//!
//! *Continuous*: a seeker reports and immediately gets its next job. *Block-wise*: every seeker
//! finishes round r before any gets its job of round r + 1. *Local*: the controller sends the job
//! itself, so loka wakes the seeker on the controller's worker (CAF's default). *Round robin*: the
//! controller hands the job to the driver thread, which sends it from outside the workers; loka
//! queues an actor woken from a plain thread round robin over the workers (`cls`) or at its home
//! worker (`lgs`) — the "manually forced spreading" of Wölke Fig. 6.8.

use crate::{await_result, Bench, Fault, Measured, Run, Size};
use loka::{Actor, ActorRef, Context, Placement, ReplyTo, SpawnOptions, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

mod data;
use data::{count_in_columns, count_in_rows, expected_counts, matrix, scan_cost, word};

pub(crate) const BENCH: Bench = Bench {
    name: "matrix-search",
    suite: "matrix",
    about: "S seekers search M×M matrices column-wise, jobs continuous and local (2·S·N messages)",
    run: run_continuous_local,
    faults: FAULTS,
};

pub(crate) const BENCH_RR: Bench = Bench {
    name: "matrix-search-rr",
    suite: "matrix",
    about: "matrix-search with jobs sent round robin from outside the workers (2·S·N messages)",
    run: run_continuous_rr,
    faults: FAULTS,
};

pub(crate) const BENCH_BLOCK: Bench = Bench {
    name: "matrix-search-block",
    suite: "matrix",
    about: "matrix-search with block-wise rounds of jobs, sent locally (2·S·N messages)",
    run: run_block_local,
    faults: FAULTS,
};

pub(crate) const BENCH_BLOCK_RR: Bench = Bench {
    name: "matrix-search-block-rr",
    suite: "matrix",
    about: "matrix-search with block-wise rounds of jobs, sent round robin (2·S·N messages)",
    run: run_block_rr,
    faults: FAULTS,
};

/// The faults every variant injects (into seeker 0's first job): its job is not sent (Drop), sent
/// twice (Duplicate), sent to seeker 1 (Misroute), or searched along the rows (WrongRule).
const FAULTS: &[Fault] = &[
    Fault::Drop,
    Fault::Duplicate,
    Fault::Misroute,
    Fault::WrongRule,
];

/// Every Matrix Search variant, in listing order.
pub(crate) fn all() -> Vec<Bench> {
    vec![BENCH, BENCH_RR, BENCH_BLOCK, BENCH_BLOCK_RR]
}

/// Letters of a word.
const WORD: usize = 6;
/// The letters of the matrices and words. The text does not name an alphabet; with four letters a
/// random word occurs about (M − 5)·M / 4⁶ times per search, so the result check is not all zeros.
const ALPHABET: [u8; 4] = *b"ACGT";
const MATRIX_SEED: u64 = 0x6d61_7472_6978_0001;
const WORD_SEED: u64 = 0x776f_7264_7300_0002;

/// When the controller gives out the next job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Jobs {
    /// A seeker gets its next job as soon as it reports.
    Continuous,
    /// All seekers finish a round before the next round starts.
    Block,
}

/// Who sends a job to its seeker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Assign {
    /// The controller (the seeker wakes on the controller's worker).
    Local,
    /// The driver thread (the seeker wakes where the policy puts external wake-ups).
    RoundRobin,
}

/// The problem size.
#[derive(Debug, Clone, Copy)]
struct Params {
    seekers: usize,
    side: usize,
    searches: usize,
}

impl Params {
    fn of(size: Size) -> Params {
        size.pick(
            Params {
                seekers: 16,
                side: 512,
                searches: 20,
            },
            // Wölke: 1 controller, 225 seekers, 3500² bytes (≈12 MB each, 2.8 GB in all), 100 jobs.
            Params {
                seekers: 225,
                side: 3500,
                searches: 100,
            },
        )
    }
}

enum SeekerMsg {
    /// Search for the word of this job and report the count.
    Job { job: usize, word: [u8; WORD] },
}

/// Owns one matrix, built on its first activation on the worker that runs it.
struct Seeker {
    index: usize,
    side: usize,
    cells: Vec<u8>,
    controller: ActorRef<ControllerMsg>,
    /// Jobs received and reports sent, added to `tally` when it stops.
    messages: u64,
    tally: Arc<AtomicU64>,
    /// The fault of a mutation test: its next search goes along the rows.
    rows_once: bool,
}

impl Actor for Seeker {
    type Msg = SeekerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: SeekerMsg) {
        let SeekerMsg::Job { job, word } = msg;
        self.messages += 1;
        ctx.charge(scan_cost(self.side));
        let count = if std::mem::take(&mut self.rows_once) {
            count_in_rows(&self.cells, self.side, &word)
        } else {
            count_in_columns(&self.cells, self.side, &word)
        };
        // The controller stops only after every job was reported (unless one is reported twice).
        let report = ControllerMsg::Report {
            seeker: self.index,
            job,
            count,
        };
        if self.controller.send(report).is_ok() {
            self.messages += 1;
        }
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.tally.fetch_add(self.messages, Ordering::Relaxed);
    }
}

type Seekers = Arc<[ActorRef<SeekerMsg>]>;

/// A job as the round-robin driver sends it: (seeker, job, word).
type Dispatched = (usize, usize, [u8; WORD]);

/// What the controller answers the driver.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    reports: usize,
    /// Per job (seeker · N + job), the reported count; `None` if it was never reported.
    counts: Vec<Option<u64>>,
    /// Reports of a job that was already reported, or that does not exist.
    unexpected: usize,
}

enum ControllerMsg {
    Start {
        seekers: Seekers,
        done: ReplyTo<Outcome>,
    },
    Report {
        seeker: usize,
        job: usize,
        count: u64,
    },
}

/// Gives out jobs, records the reports, stops everyone at the end.
struct Controller {
    jobs: Jobs,
    searches: usize,
    /// Round robin: jobs go to the driver thread, which sends them.
    dispatch: Option<mpsc::Sender<Dispatched>>,
    seekers: Option<Seekers>,
    /// Jobs given to each seeker so far.
    given: Vec<usize>,
    counts: Vec<Option<u64>>,
    unexpected: usize,
    reports: usize,
    /// Block-wise: reports still missing from the current round.
    round_left: usize,
    done: Option<ReplyTo<Outcome>>,
    /// The fault of a mutation test, injected into seeker 0's first job (`Fault::None` in a real
    /// run; WrongRule is the seeker's).
    inject: Fault,
}

impl Controller {
    fn give(&mut self, seeker: usize) {
        let job = self.given[seeker];
        self.given[seeker] += 1;
        let word = word(seeker, job);
        if job == 0 && seeker == 0 && self.inject != Fault::None {
            match self.inject {
                Fault::Drop => {}
                Fault::Duplicate => {
                    self.send(seeker, job, word);
                    self.send(seeker, job, word);
                }
                Fault::Misroute => self.send(1 % self.given.len(), job, word),
                _ => self.send(seeker, job, word),
            }
            return;
        }
        self.send(seeker, job, word);
    }

    fn send(&self, seeker: usize, job: usize, word: [u8; WORD]) {
        match &self.dispatch {
            Some(driver) => driver
                .send((seeker, job, word))
                .expect("driver dispatching"),
            None => {
                let seekers = self.seekers.as_ref().expect("started");
                seekers[seeker]
                    .send(SeekerMsg::Job { job, word })
                    .expect("seeker alive");
            }
        }
    }

    fn give_round(&mut self) {
        self.round_left = self.given.len();
        for seeker in 0..self.given.len() {
            self.give(seeker);
        }
    }

    fn finish(&mut self, ctx: &mut Context<Self>) {
        // Closing the channel ends the driver's dispatch loop.
        self.dispatch = None;
        if let Some(done) = self.done.take() {
            done.send(Outcome {
                reports: self.reports,
                counts: std::mem::take(&mut self.counts),
                unexpected: self.unexpected,
            });
        }
        if let Some(seekers) = self.seekers.take() {
            for seeker in seekers.iter() {
                seeker.stop();
            }
        }
        ctx.stop();
    }
}

impl Actor for Controller {
    type Msg = ControllerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: ControllerMsg) {
        match msg {
            ControllerMsg::Start { seekers, done } => {
                self.seekers = Some(seekers);
                self.done = Some(done);
                if self.searches == 0 || self.given.is_empty() {
                    self.finish(ctx);
                } else {
                    // Both variants start with every seeker's first job.
                    self.give_round();
                }
            }
            ControllerMsg::Report { seeker, job, count } => {
                let slot = (job < self.searches)
                    .then(|| &mut self.counts[seeker * self.searches + job])
                    .filter(|slot| slot.is_none());
                match slot {
                    Some(slot) => *slot = Some(count),
                    None => self.unexpected += 1,
                }
                self.reports += 1;
                match self.jobs {
                    Jobs::Continuous => {
                        if self.given[seeker] < self.searches {
                            self.give(seeker);
                        }
                    }
                    Jobs::Block => {
                        self.round_left -= 1;
                        if self.round_left == 0 && self.given[0] < self.searches {
                            self.give_round();
                        }
                    }
                }
                if self.reports == self.given.len() * self.searches {
                    self.finish(ctx);
                }
            }
        }
    }
}

fn run_continuous_local(system: &System, run: &Run) -> Measured {
    search(system, run, BENCH.name, Jobs::Continuous, Assign::Local)
}

fn run_continuous_rr(system: &System, run: &Run) -> Measured {
    search(
        system,
        run,
        BENCH_RR.name,
        Jobs::Continuous,
        Assign::RoundRobin,
    )
}

fn run_block_local(system: &System, run: &Run) -> Measured {
    search(system, run, BENCH_BLOCK.name, Jobs::Block, Assign::Local)
}

fn run_block_rr(system: &System, run: &Run) -> Measured {
    search(
        system,
        run,
        BENCH_BLOCK_RR.name,
        Jobs::Block,
        Assign::RoundRobin,
    )
}

/// The round-robin driver: sends each job the controller hands over until the controller closes
/// the channel (it finished or stopped), or the system goes quiet with no job waiting (a job or a
/// report was lost: the controller will never finish), or the run's time is up.
fn dispatch(system: &System, run: &Run, jobs: mpsc::Receiver<Dispatched>, seekers: &Seekers) {
    let limit = crate::limit::Limit::start(system, run.timeout);
    let send = |(seeker, job, word): Dispatched| {
        let _ = seekers[seeker].send(SeekerMsg::Job { job, word });
    };
    loop {
        match jobs.recv_timeout(Duration::from_millis(20)) {
            Ok(job) => send(job),
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if system.run_until_idle_timeout(Duration::ZERO) {
                    // Quiet: a job handed over before the actors went idle is in the channel now.
                    match jobs.try_recv() {
                        Ok(job) => send(job),
                        Err(_) => return,
                    }
                } else if limit.passed() {
                    return;
                }
            }
        }
    }
}

fn search(system: &System, run: &Run, name: &str, jobs: Jobs, assign: Assign) -> Measured {
    let p = Params::of(run.size);
    let workers = system.workers();
    let (driver_tx, driver_rx) = mpsc::channel();
    // All actors are placed round robin; the controller (the hub every seeker talks to) first.
    let controller = system.spawn_with(
        Controller {
            jobs,
            searches: p.searches,
            dispatch: (assign == Assign::RoundRobin).then_some(driver_tx),
            seekers: None,
            given: vec![0; p.seekers],
            counts: vec![None; p.seekers * p.searches],
            unexpected: 0,
            reports: 0,
            round_left: 0,
            done: None,
            inject: run.fault,
        },
        SpawnOptions::new()
            .name("controller")
            .hub(true)
            .placement(Placement::Worker(0)),
    );
    let side = p.side;
    let tally = Arc::new(AtomicU64::new(0));
    let rows_once = run.injects(Fault::WrongRule);
    let seekers: Seekers = (0..p.seekers)
        .map(|index| {
            let controller = controller.clone();
            let tally = Arc::clone(&tally);
            // The matrix is built (first touched) by the worker that first runs the seeker.
            system.spawn_fn(
                move || Seeker {
                    index,
                    side,
                    cells: matrix(index, side),
                    controller,
                    messages: 0,
                    tally,
                    rows_once: rows_once && index == 0,
                },
                // The matrix is what each search reads (the memory model prices it).
                SpawnOptions::new()
                    .placement(Placement::Worker((index + 1) % workers))
                    .footprint(side * side),
            )
        })
        .collect();
    // Every matrix is built before the clock starts.
    system.run_until_idle();

    let start = Instant::now();
    let pending = controller
        .ask(|done| ControllerMsg::Start {
            seekers: Arc::clone(&seekers),
            done,
        })
        .expect("fresh actor");
    if assign == Assign::RoundRobin {
        dispatch(system, run, driver_rx, &seekers);
    }
    let outcome = await_result(system, pending, run, name);
    let elapsed = start.elapsed();
    // The seekers add their counts when they stop (not timed).
    controller.stop();
    for seeker in seekers.iter() {
        seeker.stop();
    }
    system.run_until_idle();
    let messages = tally.load(Ordering::Relaxed);
    let expected_messages = 2 * (p.seekers * p.searches) as u64;
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(reason) => return Measured::failed(messages, elapsed, reason),
    };
    // Every job of every seeker, recomputed from the histograms of the seeded matrices.
    let expected = expected_counts(&p);
    let wrong = outcome
        .counts
        .iter()
        .zip(&expected)
        .filter(|&(got, want)| *got != Some(*want))
        .count();
    Measured::checked(
        messages,
        elapsed,
        (outcome.reports, outcome.unexpected, wrong),
        (p.seekers * p.searches, 0, 0),
    )
    .with_message_count(expected_messages, "2·S·N = ")
}
