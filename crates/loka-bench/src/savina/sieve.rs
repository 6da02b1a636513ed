//! Sieve of Eratosthenes: a producer sends the odd numbers below N down a dynamically grown chain
//! of prime-filter actors, each holding up to M primes; a number no stored prime divides is
//! passed on, stored by the last filter, or, when that one is full, becomes the first prime of a
//! new filter at the end of the chain (Savina #25).

use crate::{Bench, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, SpawnOptions, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "sieve",
    suite: "savina",
    about: "odd numbers below N through a growing chain of filters holding M primes each",
    run,
    faults: &[],
};

/// The last filter's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Report {
    primes: u64,
    filters: u64,
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
        let mut sent = 0;
        let mut candidate = 3;
        while candidate < self.limit {
            self.first
                .send(FilterMsg::Candidate(candidate))
                .expect("filter alive");
            sent += 1;
            candidate += 2;
        }
        self.first
            .send(FilterMsg::Exit {
                messages: sent + 1,
                done,
            })
            .expect("filter alive");
        ctx.stop();
    }
}

enum FilterMsg {
    Candidate(u64),
    /// End of input, with the messages counted so far up the chain.
    Exit {
        messages: u64,
        done: ReplyTo<Report>,
    },
}

struct Filter {
    /// 1-based position in the chain.
    id: u64,
    capacity: usize,
    primes: Vec<u64>,
    next: Option<ActorRef<FilterMsg>>,
    sent: u64,
}

impl Filter {
    fn new(id: u64, first_prime: u64, capacity: usize) -> Filter {
        let mut primes = Vec::with_capacity(capacity);
        primes.push(first_prime);
        Filter {
            id,
            capacity,
            primes,
            next: None,
            sent: 0,
        }
    }
}

impl Actor for Filter {
    type Msg = FilterMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: FilterMsg) {
        match msg {
            FilterMsg::Candidate(candidate) => {
                // Savina checks every stored prime (no √n cut-off).
                if self.primes.iter().any(|&p| candidate % p == 0) {
                    return;
                }
                if let Some(next) = &self.next {
                    next.send(FilterMsg::Candidate(candidate))
                        .expect("filter alive");
                    self.sent += 1;
                } else if self.primes.len() < self.capacity {
                    self.primes.push(candidate);
                } else {
                    let filter = Filter::new(self.id + 1, candidate, self.capacity);
                    // Lazy: its first activation is the one that handles its first candidate.
                    self.next = Some(ctx.spawn_with(filter, SpawnOptions::new().lazy(true)));
                }
            }
            FilterMsg::Exit { messages, done } => {
                let messages = messages + self.sent;
                match &self.next {
                    Some(next) => next
                        .send(FilterMsg::Exit {
                            messages: messages + 1,
                            done,
                        })
                        .expect("filter alive"),
                    None => done.send(Report {
                        primes: (self.id - 1) * self.capacity as u64 + self.primes.len() as u64,
                        filters: self.id,
                        messages,
                    }),
                }
                ctx.stop();
            }
        }
    }
}

/// The primes below `limit`, by a sequential sieve.
fn primes_below(limit: u64) -> u64 {
    let limit = limit as usize;
    let mut composite = vec![false; limit];
    let mut count = 0;
    for i in 2..limit {
        if !composite[i] {
            count += 1;
            let mut j = i * i;
            while j < limit {
                composite[j] = true;
                j += i;
            }
        }
    }
    count
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    // N (numbers below N are tested), M primes per filter.
    let (limit, capacity) = size.pick((100_000u64, 1_000usize), (2_000_000, 10_000));
    let first = system.spawn(Filter::new(1, 2, capacity));
    let producer = system.spawn(Producer { limit, first });
    system.run_until_idle();
    let start = Instant::now();
    let report = producer
        .ask(ProducerMsg::Start)
        .expect("fresh actor")
        .wait();
    let elapsed = start.elapsed();
    let expected = primes_below(limit);
    let Ok(report) = report else {
        return Measured {
            messages: 0,
            elapsed,
            verified: false,
            check: "the last filter never answered".to_owned(),
        };
    };
    let expected_filters = expected.div_ceil(capacity as u64);
    let verified = report.primes == expected && report.filters == expected_filters;
    Measured {
        messages: report.messages,
        elapsed,
        verified,
        check: format!(
            "{} primes below {limit} (sequential sieve: {expected}) in {} filters (expected \
             {expected_filters}); {} messages",
            report.primes, report.filters, report.messages
        ),
    }
}
