//! Sieve of Eratosthenes: a producer sends the odd numbers below N down a dynamically grown chain
//! of prime-filter actors, each holding up to M primes; a number no stored prime divides is
//! passed on, stored by the last filter, or, when that one is full, becomes the first prime of a
//! new filter at the end of the chain (Savina #25).

use crate::verify::SequenceHash;
use crate::{await_result, Bench, Fault, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, SpawnOptions, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "sieve",
    suite: "savina",
    about: "odd numbers below N through a growing chain of filters holding M primes each",
    run,
    faults: &[Fault::Drop, Fault::Duplicate],
};

/// What the `Exit` gathers down the chain, and the last filter answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Report {
    /// Every filter's primes, in chain order.
    primes: SequenceHash,
    filters: u64,
    /// Filters before the last holding fewer than M primes (a new filter is made only when the
    /// last one is full).
    unfilled: u64,
    /// Messages the filters handled.
    messages: u64,
}

enum ProducerMsg {
    Start(ReplyTo<Report>),
}

struct Producer {
    limit: u64,
    first: ActorRef<FilterMsg>,
}

impl Actor for Producer {
    type Msg = ProducerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, ProducerMsg::Start(done): ProducerMsg) {
        let mut candidate = 3;
        while candidate < self.limit {
            self.first
                .send(FilterMsg::Candidate(candidate))
                .expect("filter alive");
            candidate += 2;
        }
        let report = Report {
            primes: SequenceHash::new(),
            filters: 0,
            unfilled: 0,
            messages: 0,
        };
        self.first
            .send(FilterMsg::Exit { report, done })
            .expect("filter alive");
        ctx.stop();
    }
}

enum FilterMsg {
    Candidate(u64),
    /// End of input, with what the filters up the chain reported.
    Exit {
        report: Report,
        done: ReplyTo<Report>,
    },
}

struct Filter {
    capacity: usize,
    primes: Vec<u64>,
    next: Option<ActorRef<FilterMsg>>,
    /// Messages handled.
    handled: u64,
    /// The defect to inject once ([`Fault::None`] in a real run, and once injected).
    fault: Fault,
    /// Declared compute not yet charged: below a nanosecond (`ctx.charge` counts whole ns).
    owed_ps: u64,
}

/// What one divisibility check of [`Filter::candidate`] takes on this project's host, declared to
/// the simulation engine with `ctx.charge` (docs/simulation.md): measured with `cargo test
/// --release -p loka-bench --lib sieve_cost -- --ignored --nocapture --test-threads=1`, the first
/// filter of the quick size (the first 1,000 primes) checking every odd number below 150,000;
/// the least of six runs on 2026-11-24.
const CHECK_PS: u64 = 2_562;

/// The checks of `candidate` against `primes` until the first that divides it (Savina checks
/// every stored prime, no √n cut-off): how many were made, and whether one divides it.
fn checks(primes: &[u64], candidate: u64) -> (u64, bool) {
    match primes.iter().position(|&p| candidate % p == 0) {
        Some(i) => (i as u64 + 1, true),
        None => (primes.len() as u64, false),
    }
}

impl Filter {
    fn new(first_prime: u64, capacity: usize) -> Filter {
        let mut primes = Vec::with_capacity(capacity);
        primes.push(first_prime);
        Filter {
            capacity,
            primes,
            next: None,
            handled: 0,
            fault: Fault::None,
            owed_ps: 0,
        }
    }

    fn candidate(&mut self, ctx: &mut Context<Self>, candidate: u64) {
        let (made, divided) = checks(&self.primes, candidate);
        self.owed_ps += made * CHECK_PS;
        ctx.charge(std::time::Duration::from_nanos(self.owed_ps / 1_000));
        self.owed_ps %= 1_000;
        if divided {
            return;
        }
        if let Some(next) = &self.next {
            next.send(FilterMsg::Candidate(candidate))
                .expect("filter alive");
        } else if self.primes.len() < self.capacity {
            self.primes.push(candidate);
        } else {
            let filter = Filter::new(candidate, self.capacity);
            // Lazy: its first activation is the one that handles its first candidate.
            self.next = Some(ctx.spawn_with(filter, SpawnOptions::new().lazy(true)));
        }
    }

    /// Fault injection at the first candidate: it is lost, or delivered twice.
    #[cold]
    fn faulty_candidate(&mut self, ctx: &mut Context<Self>, candidate: u64) {
        match std::mem::replace(&mut self.fault, Fault::None) {
            Fault::Drop => {}
            Fault::Duplicate => {
                self.candidate(ctx, candidate);
                self.handled += 1;
                self.candidate(ctx, candidate);
            }
            _ => self.candidate(ctx, candidate),
        }
    }
}

impl Actor for Filter {
    type Msg = FilterMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: FilterMsg) {
        self.handled += 1;
        match msg {
            FilterMsg::Candidate(candidate) => {
                if self.fault == Fault::None {
                    self.candidate(ctx, candidate)
                } else {
                    self.faulty_candidate(ctx, candidate)
                }
            }
            FilterMsg::Exit { mut report, done } => {
                self.primes.iter().for_each(|&p| report.primes.push(p));
                report.filters += 1;
                report.messages += self.handled;
                match &self.next {
                    Some(next) => {
                        report.unfilled += u64::from(self.primes.len() < self.capacity);
                        next.send(FilterMsg::Exit { report, done })
                            .expect("filter alive")
                    }
                    None => done.send(report),
                }
                ctx.stop();
            }
        }
    }
}

/// What a correct run must report, worked out sequentially: the primes below `limit` (Sieve of
/// Eratosthenes), and the messages of the chain that holds them `capacity` to a filter. An odd
/// composite visits the filters up to the one holding its smallest prime factor; a prime visits
/// the filters up to the one storing it, or up to the one before if it starts a new filter; each
/// filter handles one `Exit`.
fn expected(limit: u64, capacity: usize) -> (Vec<u64>, u64) {
    let limit = limit as usize;
    // Smallest prime factor of every number below the limit (0 for primes).
    let mut spf = vec![0_u32; limit];
    let mut primes = Vec::new();
    for i in 2..limit {
        if spf[i] == 0 {
            primes.push(i as u64);
            let mut j = i * i;
            while j < limit {
                if spf[j] == 0 {
                    spf[j] = i as u32;
                }
                j += i;
            }
        }
    }
    // Each prime's index; the filter holding the prime of index k is k / M + 1.
    let mut index = vec![0_u32; limit];
    for (k, &p) in primes.iter().enumerate() {
        index[p as usize] = k as u32;
    }
    let filter = |k: usize| (k / capacity) as u64 + 1;
    let mut messages = 0;
    for c in (3..limit).step_by(2) {
        messages += match spf[c] {
            0 => {
                let k = index[c] as usize;
                filter(k) - u64::from(k % capacity == 0)
            }
            p => filter(index[p as usize] as usize),
        };
    }
    messages += (primes.len() as u64).div_ceil(capacity as u64);
    (primes, messages)
}

fn run(system: &System, run: &Run) -> Measured {
    // N (numbers below N are tested), M primes per filter.
    let (limit, capacity) = run.pick((150_000u64, 1_000usize), (2_000_000, 10_000));
    let mut first = Filter::new(2, capacity);
    first.fault = run.fault;
    let first = system.spawn(first);
    let producer = system.spawn(Producer { limit, first });
    system.run_until_idle();
    let start = Instant::now();
    let pending = producer.ask(ProducerMsg::Start).expect("fresh actor");
    let report = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    let report = match report {
        Ok(report) => report,
        Err(reason) => return Measured::failed(0, elapsed, reason),
    };
    let (primes, messages) = expected(limit, capacity);
    let expected_primes = SequenceHash::of(primes.iter().copied());
    let expected_filters = (primes.len() as u64).div_ceil(capacity as u64);
    let same = report.primes == expected_primes;
    let verified = same && report.filters == expected_filters && report.unfilled == 0;
    Measured {
        messages: report.messages,
        elapsed,
        verified,
        check: format!(
            "the filters hold {} numbers, {} the {} primes below {limit} in order (sequential \
             sieve); {} filters (expected {expected_filters}), {} before the last not full",
            report.primes.count,
            if same { "exactly" } else { "NOT" },
            primes.len(),
            report.filters,
            report.unfilled
        ),
    }
    .with_message_count(messages, "from the sequential sieve, ")
}

#[cfg(test)]
mod cost_tests {
    use super::*;

    /// The cost of one divisibility check, for [`CHECK_PS`].
    #[test]
    #[ignore = "a measurement, not a test"]
    fn sieve_cost_per_check() {
        let (primes, _) = expected(150_000, 1_000);
        let first: Vec<u64> = primes[..1_000].to_vec();
        for _ in 0..6 {
            let (mut made, mut divided) = (0, 0);
            let start = Instant::now();
            for candidate in (3..150_000).step_by(2) {
                let (m, d) = checks(std::hint::black_box(&first), candidate);
                made += m;
                divided += u64::from(d);
            }
            let ps = start.elapsed().as_nanos() as f64 * 1e3 / made as f64;
            eprintln!("sieve: {ps:.0} ps per check ({made} checks, {divided} divided)");
        }
    }
}
