//! Dining Philosophers: N philosophers around a table each eat M times; an arbitrator actor hands
//! out both forks at once or denies the request, and a denied philosopher asks again (Savina #12).

use crate::{Bench, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "philosopher",
    suite: "savina",
    about: "N philosophers eat M times each via an arbitrator (2·H + 2·N·M + N messages, H = hungry requests)",
    run,
    faults: &[],
};

enum PhilosopherMsg {
    /// Get hungry (from the arbitrator at the start, then from itself after each meal).
    Start,
    Eat,
    Denied,
}

struct Philosopher {
    index: usize,
    rounds: u64,
    eaten: u64,
    arbitrator: ActorRef<ArbitratorMsg>,
}

impl Actor for Philosopher {
    type Msg = PhilosopherMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: PhilosopherMsg) {
        match msg {
            PhilosopherMsg::Start | PhilosopherMsg::Denied => {
                self.arbitrator
                    .send(ArbitratorMsg::Hungry(self.index))
                    .expect("arbitrator alive");
            }
            PhilosopherMsg::Eat => {
                self.eaten += 1;
                self.arbitrator
                    .send(ArbitratorMsg::Done(self.index))
                    .expect("arbitrator alive");
                if self.eaten < self.rounds {
                    ctx.myself()
                        .send(PhilosopherMsg::Start)
                        .expect("self alive");
                } else {
                    self.arbitrator
                        .send(ArbitratorMsg::Exit(self.eaten))
                        .expect("arbitrator alive");
                    ctx.stop();
                }
            }
        }
    }
}

/// `(philosophers that ate M times, meals, fork-protocol violations, hungry requests)`.
type Outcome = (usize, u64, u64, u64);

enum ArbitratorMsg {
    Start {
        philosophers: Vec<ActorRef<PhilosopherMsg>>,
        done: ReplyTo<Outcome>,
    },
    Hungry(usize),
    /// Finished eating: put both forks back.
    Done(usize),
    /// Ate its M meals (the count) and left.
    Exit(u64),
}

struct Arbitrator {
    rounds: u64,
    /// Fork i lies between philosophers i − 1 and i; philosopher i uses forks i and i + 1 (mod N).
    forks: Vec<bool>,
    philosophers: Vec<ActorRef<PhilosopherMsg>>,
    hungry: u64,
    meals: u64,
    complete: usize,
    exited: usize,
    violations: u64,
    done: Option<ReplyTo<Outcome>>,
}

impl Arbitrator {
    fn forks_of(&self, index: usize) -> (usize, usize) {
        (index, (index + 1) % self.forks.len())
    }
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
                self.hungry += 1;
                let (left, right) = self.forks_of(index);
                let answer = if self.forks[left] || self.forks[right] {
                    PhilosopherMsg::Denied
                } else {
                    self.forks[left] = true;
                    self.forks[right] = true;
                    PhilosopherMsg::Eat
                };
                self.philosophers[index]
                    .send(answer)
                    .expect("philosopher alive");
            }
            ArbitratorMsg::Done(index) => {
                let (left, right) = self.forks_of(index);
                // Both forks must be held by the philosopher that just ate.
                self.violations += u64::from(!self.forks[left] || !self.forks[right]);
                self.forks[left] = false;
                self.forks[right] = false;
                self.meals += 1;
            }
            ArbitratorMsg::Exit(eaten) => {
                self.exited += 1;
                self.complete += usize::from(eaten == self.rounds);
                if self.exited == self.forks.len() {
                    self.violations += self.forks.iter().filter(|&&held| held).count() as u64;
                    if let Some(done) = self.done.take() {
                        done.send((self.complete, self.meals, self.violations, self.hungry));
                    }
                    ctx.stop();
                }
            }
        }
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    let (count, rounds) = size.pick((20, 10_000_u64), (80, 40_000_u64));
    let arbitrator = system.spawn(Arbitrator {
        rounds,
        forks: vec![false; count],
        philosophers: Vec::new(),
        hungry: 0,
        meals: 0,
        complete: 0,
        exited: 0,
        violations: 0,
        done: None,
    });
    let philosophers: Vec<_> = (0..count)
        .map(|index| {
            system.spawn(Philosopher {
                index,
                rounds,
                eaten: 0,
                arbitrator: arbitrator.clone(),
            })
        })
        .collect();
    system.run_until_idle();
    let start = Instant::now();
    let (complete, meals, violations, hungry) = arbitrator
        .ask(|done| ArbitratorMsg::Start { philosophers, done })
        .expect("fresh actor")
        .wait()
        .unwrap_or((0, 0, u64::MAX, 0));
    let elapsed = start.elapsed();
    let n = count as u64;
    // Per meal: Start, Hungry, Eat, Done (the last Start of each is an Exit instead); per denial:
    // Denied and another Hungry. So 2·H + 2·N·M + N with H hungry requests.
    let messages = 2 * hungry + 2 * n * rounds + n;
    Measured {
        messages,
        elapsed,
        verified: (complete, meals, violations) == (count, n * rounds, 0),
        check: format!(
            "{complete} of {count} philosophers ate {rounds} times, {meals} meals (expected {}), \
             {violations} fork violations, {hungry} hungry requests",
            n * rounds
        ),
    }
}
