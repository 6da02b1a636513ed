//! Dining Philosophers: N philosophers around a table each eat M times; an arbitrator actor hands
//! out both forks at once or denies the request, and a denied philosopher asks again (Savina #12).

use crate::verify::mix;
use crate::{await_result, Bench, Fault, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "philosopher",
    suite: "savina",
    about: "N philosophers eat M times each via an arbitrator (2·H + 2·N·M + N messages, H = hungry requests)",
    run,
    faults: &[Fault::Drop, Fault::WrongRule],
};

/// A fork as handed out: its index and how many times it had been put back before (`fork << 32 |
/// uses`). A fork's use count only advances when it is put back, so two philosophers holding it at
/// once would both receive the same token.
fn token(fork: usize, uses: u32) -> u64 {
    (fork as u64) << 32 | u64::from(uses)
}

/// What the two philosophers sharing `fork` must together have received over a run where each
/// eats `rounds` times: the fork's tokens for uses 0..2·M, each exactly once.
fn expected_tokens(fork: usize, rounds: u64) -> u64 {
    (0..2 * rounds as u32).fold(0, |sum, u| sum.wrapping_add(mix(token(fork, u))))
}

enum PhilosopherMsg {
    /// Get hungry (from the arbitrator at the start, then from itself after each meal).
    Start,
    /// Eat with these forks ([`token`]s).
    Eat {
        left: u64,
        right: u64,
    },
    Denied,
}

/// A philosopher's account, sent with its exit.
#[derive(Clone, Copy, Default)]
struct Report {
    index: usize,
    meals: u64,
    /// Messages it handled.
    handled: u64,
    /// Fingerprints of the tokens of its left and right forks.
    left: u64,
    right: u64,
}

struct Philosopher {
    rounds: u64,
    report: Report,
    arbitrator: ActorRef<ArbitratorMsg>,
}

impl Actor for Philosopher {
    type Msg = PhilosopherMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: PhilosopherMsg) {
        let r = &mut self.report;
        r.handled += 1;
        match msg {
            PhilosopherMsg::Start | PhilosopherMsg::Denied => {
                self.arbitrator
                    .send(ArbitratorMsg::Hungry(r.index))
                    .expect("arbitrator alive");
            }
            PhilosopherMsg::Eat { left, right } => {
                r.meals += 1;
                r.left = r.left.wrapping_add(mix(left));
                r.right = r.right.wrapping_add(mix(right));
                self.arbitrator
                    .send(ArbitratorMsg::Done(r.index))
                    .expect("arbitrator alive");
                if r.meals < self.rounds {
                    ctx.myself()
                        .send(PhilosopherMsg::Start)
                        .expect("self alive");
                } else {
                    self.arbitrator
                        .send(ArbitratorMsg::Exit(*r))
                        .expect("arbitrator alive");
                    ctx.stop();
                }
            }
        }
    }
}

/// The arbitrator's answer: every philosopher's report, the hungry requests, the messages the
/// arbitrator handled, and its own count of fork-protocol violations.
struct Outcome {
    reports: Vec<Report>,
    hungry: u64,
    handled: u64,
    violations: u64,
}

enum ArbitratorMsg {
    Start {
        philosophers: Vec<ActorRef<PhilosopherMsg>>,
        done: ReplyTo<Outcome>,
    },
    Hungry(usize),
    /// Finished eating: put both forks back.
    Done(usize),
    /// Ate its M meals and left.
    Exit(Report),
}

struct Arbitrator {
    /// The forks of each philosopher: fork i lies between philosophers i − 1 and i; philosopher i
    /// uses forks i and i + 1 (mod N).
    forks_of: Vec<(usize, usize)>,
    held: Vec<bool>,
    /// How many times each fork was put back.
    uses: Vec<u32>,
    philosophers: Vec<ActorRef<PhilosopherMsg>>,
    reports: Vec<Report>,
    hungry: u64,
    handled: u64,
    exited: usize,
    violations: u64,
    /// The defect to inject once ([`Fault::None`] in a real run, and once injected).
    fault: Fault,
    done: Option<ReplyTo<Outcome>>,
}

impl Actor for Arbitrator {
    type Msg = ArbitratorMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: ArbitratorMsg) {
        match msg {
            ArbitratorMsg::Start { philosophers, done } => {
                self.done = Some(done);
                for philosopher in &philosophers {
                    philosopher
                        .send(PhilosopherMsg::Start)
                        .expect("philosopher alive");
                }
                self.philosophers = philosophers;
            }
            ArbitratorMsg::Hungry(index) => {
                self.handled += 1;
                self.hungry += 1;
                let (left, right) = self.forks_of[index];
                let answer = if self.held[left] || self.held[right] {
                    PhilosopherMsg::Denied
                } else {
                    self.held[left] = true;
                    self.held[right] = true;
                    PhilosopherMsg::Eat {
                        left: token(left, self.uses[left]),
                        right: token(right, self.uses[right]),
                    }
                };
                self.philosophers[index]
                    .send(answer)
                    .expect("philosopher alive");
            }
            ArbitratorMsg::Done(index) => {
                self.handled += 1;
                let (left, right) = self.forks_of[index];
                // Both forks must be held by the philosopher that just ate.
                self.violations += u64::from(!self.held[left] || !self.held[right]);
                self.held[left] = false;
                self.held[right] = false;
                self.uses[left] += 1;
                self.uses[right] += 1;
            }
            ArbitratorMsg::Exit(report) => {
                if self.fault == Fault::Drop {
                    // Fault injection: the first exit is lost.
                    self.fault = Fault::None;
                    return;
                }
                self.handled += 1;
                self.exited += 1;
                self.reports[report.index] = report;
                if self.exited == self.held.len() {
                    self.violations += self.held.iter().filter(|&&held| held).count() as u64;
                    if let Some(done) = self.done.take() {
                        done.send(Outcome {
                            reports: std::mem::take(&mut self.reports),
                            hungry: self.hungry,
                            handled: self.handled,
                            violations: self.violations,
                        });
                    }
                    ctx.stop();
                }
            }
        }
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let (count, rounds) = run.pick((20, 15_000_u64), (80, 40_000_u64));
    let mut forks_of: Vec<(usize, usize)> = (0..count).map(|i| (i, (i + 1) % count)).collect();
    if run.injects(Fault::WrongRule) {
        // Fault injection: philosopher 0 is given the wrong right fork (2 instead of 1).
        forks_of[0].1 = 2;
    }
    let expected: Vec<u64> = (0..count).map(|f| expected_tokens(f, rounds)).collect();
    let arbitrator = system.spawn(Arbitrator {
        forks_of,
        held: vec![false; count],
        uses: vec![0; count],
        philosophers: Vec::new(),
        reports: vec![Report::default(); count],
        hungry: 0,
        handled: 0,
        exited: 0,
        violations: 0,
        fault: run.fault,
        done: None,
    });
    let philosophers: Vec<_> = (0..count)
        .map(|index| {
            system.spawn(Philosopher {
                rounds,
                report: Report {
                    index,
                    ..Report::default()
                },
                arbitrator: arbitrator.clone(),
            })
        })
        .collect();
    system.run_until_idle();
    let start = Instant::now();
    let pending = arbitrator
        .ask(|done| ArbitratorMsg::Start { philosophers, done })
        .expect("fresh actor");
    let outcome = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(reason) => return Measured::failed(0, elapsed, reason),
    };
    let n = count as u64;
    let reports = &outcome.reports;
    let complete = reports.iter().filter(|r| r.meals == rounds).count();
    let meals: u64 = reports.iter().map(|r| r.meals).sum();
    // Fork f is philosopher f's left fork and philosopher f − 1's right fork.
    let forks_ok = (0..count)
        .filter(|&f| {
            let got = reports[f]
                .left
                .wrapping_add(reports[(f + count - 1) % count].right);
            got == expected[f]
        })
        .count();
    let messages = outcome.handled + reports.iter().map(|r| r.handled).sum::<u64>();
    let hungry = outcome.hungry;
    Measured {
        messages,
        elapsed,
        verified: complete == count && forks_ok == count && outcome.violations == 0,
        check: format!(
            "{complete} of {count} philosophers ate {rounds} times ({meals} meals); {forks_ok} of \
             {count} forks went to their two philosophers with the tokens of uses 0..2·M, each \
             once (a fork's use count advances only when it is put back, so neighbours eating at \
             once would share a token); {} violations seen by the arbitrator; {hungry} hungry \
             requests (varies from run to run)",
            outcome.violations
        ),
    }
    .with_message_count(
        2 * hungry + 2 * n * rounds + n,
        "2·H + 2·N·M + N, H counted, = ",
    )
}
