//! Matrix Search (Wölke §6.2.2): one controller hands word-search jobs to S seekers, each of which
//! owns an M×M matrix of random letters and counts the occurrences of a 6-letter word along the
//! columns only (the matrix is stored row-wise, so a column walk defeats the prefetcher).
//!
//! Four benchmarks, one per job-assignment variant of the text (definitions in
//! `docs/workloads.md`):
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

use crate::{Bench, Measured, Run, Size};
use loka::{Actor, ActorRef, Context, Placement, ReplyTo, SpawnOptions, System};
use std::sync::{mpsc, Arc};
use std::time::Instant;

pub(crate) const BENCH: Bench = Bench {
    name: "matrix-search",
    suite: "matrix",
    about: "S seekers search M×M matrices column-wise, jobs continuous and local (2·S·N messages)",
    run: run_continuous_local,
    faults: &[],
};

pub(crate) const BENCH_RR: Bench = Bench {
    name: "matrix-search-rr",
    suite: "matrix",
    about: "matrix-search with jobs sent round robin from outside the workers (2·S·N messages)",
    run: run_continuous_rr,
    faults: &[],
};

pub(crate) const BENCH_BLOCK: Bench = Bench {
    name: "matrix-search-block",
    suite: "matrix",
    about: "matrix-search with block-wise rounds of jobs, sent locally (2·S·N messages)",
    run: run_block_local,
    faults: &[],
};

pub(crate) const BENCH_BLOCK_RR: Bench = Bench {
    name: "matrix-search-block-rr",
    suite: "matrix",
    about: "matrix-search with block-wise rounds of jobs, sent round robin (2·S·N messages)",
    run: run_block_rr,
    faults: &[],
};

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
    /// Seekers whose totals are recomputed sequentially (all of them when `None`).
    sample: Option<usize>,
}

impl Params {
    fn of(size: Size) -> Params {
        size.pick(
            Params {
                seekers: 16,
                side: 512,
                searches: 20,
                sample: None,
            },
            // Wölke: 1 controller, 225 seekers, 3500² bytes (≈12 MB each, 2.8 GB in all), 100 jobs.
            Params {
                seekers: 225,
                side: 3500,
                searches: 100,
                sample: Some(2),
            },
        )
    }
}

/// SplitMix64: the seeded generator of matrices and words.
fn splitmix(state: &mut u64) -> u64 {
    let current = *state;
    *state = current.wrapping_add(0x9E37_79B9_7F4A_7C15);
    crate::verify::mix(current)
}

/// Seeker `seeker`'s matrix, row-major: 32 letters from each 64-bit draw, two bits a letter.
fn matrix(seeker: usize, side: usize) -> Vec<u8> {
    let mut state = MATRIX_SEED ^ (seeker as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93);
    let mut cells = vec![0u8; side * side];
    for chunk in cells.chunks_mut(32) {
        let mut bits = splitmix(&mut state);
        for cell in chunk {
            *cell = ALPHABET[(bits & 3) as usize];
            bits >>= 2;
        }
    }
    cells
}

/// The word of job `job` of seeker `seeker` (independent of the order jobs are given out).
fn word(seeker: usize, job: usize) -> [u8; WORD] {
    let mut state = WORD_SEED ^ (((seeker as u64) << 32) | job as u64);
    let bits = splitmix(&mut state);
    std::array::from_fn(|k| ALPHABET[((bits >> (2 * k)) & 3) as usize])
}

/// The seeker's search: occurrences of `word` read downwards along a column, column by column.
fn count_in_columns(cells: &[u8], side: usize, word: &[u8; WORD]) -> u64 {
    if side < WORD {
        return 0;
    }
    let mut count = 0;
    for column in 0..side {
        for row in 0..=side - WORD {
            let at = row * side + column;
            if cells[at] == word[0] && (1..WORD).all(|k| cells[at + k * side] == word[k]) {
                count += 1;
            }
        }
    }
    count
}

/// The check's search, written differently: copy each column out, count matching windows.
fn count_sequentially(cells: &[u8], side: usize, word: &[u8; WORD]) -> u64 {
    let mut column = Vec::with_capacity(side);
    let mut count = 0;
    for c in 0..side {
        column.clear();
        column.extend((0..side).map(|r| cells[r * side + c]));
        count += column.windows(WORD).filter(|w| *w == word).count() as u64;
    }
    count
}

enum SeekerMsg {
    /// Search for this word and report the count.
    Job([u8; WORD]),
}

/// Owns one matrix, built on its first activation on the worker that runs it.
struct Seeker {
    index: usize,
    side: usize,
    cells: Vec<u8>,
    controller: ActorRef<ControllerMsg>,
}

impl Actor for Seeker {
    type Msg = SeekerMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: SeekerMsg) {
        let SeekerMsg::Job(word) = msg;
        let count = count_in_columns(&self.cells, self.side, &word);
        // The controller stops only after every job was reported.
        let _ = self.controller.send(ControllerMsg::Report {
            seeker: self.index,
            count,
        });
    }
}

type Seekers = Arc<[ActorRef<SeekerMsg>]>;

/// What the controller answers the driver.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    reports: usize,
    /// Per seeker, the sum of its reported counts.
    totals: Vec<u64>,
}

enum ControllerMsg {
    Start {
        seekers: Seekers,
        done: ReplyTo<Outcome>,
    },
    Report {
        seeker: usize,
        count: u64,
    },
}

/// Gives out jobs, sums the reports, stops everyone at the end.
struct Controller {
    jobs: Jobs,
    searches: usize,
    /// Round robin: jobs go to the driver thread, which sends them.
    dispatch: Option<mpsc::Sender<(usize, [u8; WORD])>>,
    seekers: Option<Seekers>,
    /// Jobs given to each seeker so far.
    given: Vec<usize>,
    totals: Vec<u64>,
    reports: usize,
    /// Block-wise: reports still missing from the current round.
    round_left: usize,
    done: Option<ReplyTo<Outcome>>,
}

impl Controller {
    fn give(&mut self, seeker: usize) {
        let job = self.given[seeker];
        self.given[seeker] += 1;
        let word = word(seeker, job);
        match &self.dispatch {
            Some(driver) => driver.send((seeker, word)).expect("driver dispatching"),
            None => {
                let seekers = self.seekers.as_ref().expect("started");
                seekers[seeker]
                    .send(SeekerMsg::Job(word))
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
                totals: std::mem::take(&mut self.totals),
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
            ControllerMsg::Report { seeker, count } => {
                self.totals[seeker] += count;
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
    let size = run.size;
    search(system, Params::of(size), Jobs::Continuous, Assign::Local)
}

fn run_continuous_rr(system: &System, run: &Run) -> Measured {
    let size = run.size;
    search(
        system,
        Params::of(size),
        Jobs::Continuous,
        Assign::RoundRobin,
    )
}

fn run_block_local(system: &System, run: &Run) -> Measured {
    let size = run.size;
    search(system, Params::of(size), Jobs::Block, Assign::Local)
}

fn run_block_rr(system: &System, run: &Run) -> Measured {
    let size = run.size;
    search(system, Params::of(size), Jobs::Block, Assign::RoundRobin)
}

fn search(system: &System, p: Params, jobs: Jobs, assign: Assign) -> Measured {
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
            totals: vec![0; p.seekers],
            reports: 0,
            round_left: 0,
            done: None,
        },
        SpawnOptions::new()
            .name("controller")
            .hub(true)
            .placement(Placement::Worker(0)),
    );
    let side = p.side;
    let seekers: Seekers = (0..p.seekers)
        .map(|index| {
            let controller = controller.clone();
            // The matrix is built (first touched) by the worker that first runs the seeker.
            system.spawn_fn(
                move || Seeker {
                    index,
                    side,
                    cells: matrix(index, side),
                    controller,
                },
                SpawnOptions::new().placement(Placement::Worker((index + 1) % workers)),
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
        // Ends when the controller drops its sender (finished or failed).
        for (seeker, word) in driver_rx {
            let _ = seekers[seeker].send(SeekerMsg::Job(word));
        }
    }
    let outcome = pending.wait();
    let elapsed = start.elapsed();

    let messages = 2 * (p.seekers * p.searches) as u64;
    let Ok(outcome) = outcome else {
        return Measured {
            messages,
            elapsed,
            verified: false,
            check: "the controller did not answer".to_owned(),
        };
    };
    // Recompute the totals of the sampled seekers (all at quick size) sequentially.
    let sampled: Vec<usize> = match p.sample {
        None => (0..p.seekers).collect(),
        Some(n) if n >= p.seekers => (0..p.seekers).collect(),
        Some(n) => (0..n)
            .map(|i| i * (p.seekers - 1) / (n.max(2) - 1))
            .collect(),
    };
    let expected: Vec<(usize, u64)> = sampled
        .iter()
        .map(|&s| {
            let cells = matrix(s, p.side);
            let total = (0..p.searches)
                .map(|job| count_sequentially(&cells, p.side, &word(s, job)))
                .sum();
            (s, total)
        })
        .collect();
    let got: Vec<(usize, u64)> = sampled
        .iter()
        .map(|&s| (s, outcome.totals.get(s).copied().unwrap_or(u64::MAX)))
        .collect();
    Measured::checked(
        messages,
        elapsed,
        (outcome.reports, got),
        (p.seekers * p.searches, expected),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_searches_agree_and_find_planted_words() {
        let side = 40;
        let mut cells = matrix(3, side);
        // Plant "AAAAAA" down column 7 from row 2: exactly one match there, maybe others elsewhere.
        for k in 0..WORD {
            cells[(2 + k) * side + 7] = b'A';
        }
        let word = *b"AAAAAA";
        let fast = count_in_columns(&cells, side, &word);
        assert!(fast >= 1);
        assert_eq!(fast, count_sequentially(&cells, side, &word));
        for job in 0..50 {
            let w = super::word(3, job);
            assert_eq!(
                count_in_columns(&cells, side, &w),
                count_sequentially(&cells, side, &w)
            );
        }
        // Rows do not count: a word written along a row is not found there.
        let mut row = vec![b'C'; side * side];
        row[..WORD].copy_from_slice(b"GATTAC");
        assert_eq!(count_in_columns(&row, side, b"GATTAC"), 0);
    }

    #[test]
    fn matrices_and_words_are_seeded() {
        assert_eq!(matrix(5, 64), matrix(5, 64));
        assert_ne!(matrix(5, 64), matrix(6, 64));
        assert_eq!(word(1, 2), word(1, 2));
        assert!(matrix(0, 33).iter().all(|c| ALPHABET.contains(c)));
    }
}
