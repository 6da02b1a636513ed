//! Producer-Consumer with Bounded Buffer: a manager actor hands the items of P producers to C
//! consumers through a buffer of B places (Savina #11).

use crate::verify::mix;
use crate::{await_result, Bench, Fault, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::collections::VecDeque;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "bndbuffer",
    suite: "savina",
    about: "P producers, C consumers and a manager with a B-place buffer; I items each (4·P·I + 2·P messages)",
    run,
    faults: &[Fault::Drop, Fault::Duplicate],
};

/// Savina's production and consumption cost (`prodCost`, `consCost`): 25·100 logarithms per item.
const COST: u32 = 25;

/// Savina's `processItem`: `100·cost` logarithms of pseudo-random numbers from a generator seeded
/// with `cost` (here xorshift64*), added to `term`.
fn process_item(term: f64, cost: u32) -> f64 {
    let mut state = u64::from(cost).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut res = term;
    for _ in 0..cost * 100 {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let unit = (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64;
        res += (unit + 0.01).ln();
    }
    std::hint::black_box(res)
}

struct Item {
    /// The producer's running `processItem` value (Savina's payload).
    data: f64,
    /// `producer · I + k` for the producer's k-th item.
    id: u64,
    producer: usize,
}

enum ProducerMsg {
    ProduceData,
}

struct Producer {
    index: usize,
    items: u64,
    produced: u64,
    /// `ProduceData` requests handled.
    handled: u64,
    term: f64,
    manager: ActorRef<ManagerMsg>,
}

impl Actor for Producer {
    type Msg = ProducerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, _msg: ProducerMsg) {
        self.handled += 1;
        if self.produced == self.items {
            self.manager
                .send(ManagerMsg::ProducerExit(self.handled))
                .expect("manager alive");
            ctx.stop();
            return;
        }
        self.term = process_item(self.term, COST);
        let item = Item {
            data: self.term,
            id: self.index as u64 * self.items + self.produced,
            producer: self.index,
        };
        self.produced += 1;
        self.manager
            .send(ManagerMsg::Data(item))
            .expect("manager alive");
    }
}

enum ConsumerMsg {
    Data(Item),
    /// After the last item: report the tally to the manager, then stop.
    Exit,
}

struct Consumer {
    index: usize,
    term: f64,
    consumed: u64,
    checksum: u64,
    manager: ActorRef<ManagerMsg>,
}

impl Actor for Consumer {
    type Msg = ConsumerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: ConsumerMsg) {
        match msg {
            ConsumerMsg::Data(item) => {
                self.term = process_item(self.term + item.data, COST);
                self.consumed += 1;
                self.checksum = self.checksum.wrapping_add(mix(item.id));
                self.manager
                    .send(ManagerMsg::ConsumerAvailable(self.index))
                    .expect("manager alive");
            }
            ConsumerMsg::Exit => {
                self.manager
                    .send(ManagerMsg::Tally {
                        consumed: self.consumed,
                        checksum: self.checksum,
                    })
                    .expect("manager alive");
                ctx.stop();
            }
        }
    }
}

/// `(items consumed, checksum, messages)`: the items the consumers took, the fingerprint of their
/// ids, and the messages every actor handled.
type Outcome = (u64, u64, u64);

enum ManagerMsg {
    Start {
        producers: Vec<ActorRef<ProducerMsg>>,
        consumers: Vec<ActorRef<ConsumerMsg>>,
        done: ReplyTo<Outcome>,
    },
    Data(Item),
    ConsumerAvailable(usize),
    /// A producer is done; the `ProduceData` requests it handled.
    ProducerExit(u64),
    /// A consumer's account: `Data` items it handled and the fingerprint of their ids.
    Tally {
        consumed: u64,
        checksum: u64,
    },
}

/// Savina's manager: buffers items while no consumer is free, and stops asking a producer for more
/// while the buffer holds `B − P` items or more.
struct Manager {
    adjusted_buffer: usize,
    producers: Vec<ActorRef<ProducerMsg>>,
    consumers: Vec<ActorRef<ConsumerMsg>>,
    available_producers: VecDeque<usize>,
    available_consumers: VecDeque<usize>,
    pending: VecDeque<Item>,
    terminated_producers: usize,
    exiting: bool,
    tallies: usize,
    consumed: u64,
    checksum: u64,
    /// Workload messages handled: by the manager, then also the producers' and consumers' counts.
    messages: u64,
    /// The defect to inject once ([`Fault::None`] in a real run, and once injected).
    fault: Fault,
    done: Option<ReplyTo<Outcome>>,
}

impl Manager {
    fn produce(&mut self, producer: usize) {
        self.producers[producer]
            .send(ProducerMsg::ProduceData)
            .expect("producer alive");
    }

    fn consume(&mut self, consumer: usize, item: Item) {
        self.consumers[consumer]
            .send(ConsumerMsg::Data(item))
            .expect("consumer alive");
    }

    fn consumer_available(&mut self, consumer: usize) {
        self.messages += 1;
        match self.pending.pop_front() {
            None => {
                self.available_consumers.push_back(consumer);
                self.try_exit();
            }
            Some(item) => {
                self.consume(consumer, item);
                if let Some(producer) = self.available_producers.pop_front() {
                    self.produce(producer);
                }
            }
        }
    }

    fn try_exit(&mut self) {
        if !self.exiting
            && self.terminated_producers == self.producers.len()
            && self.available_consumers.len() == self.consumers.len()
        {
            self.exiting = true;
            for consumer in &self.consumers {
                consumer.send(ConsumerMsg::Exit).expect("consumer alive");
            }
        }
    }
}

impl Actor for Manager {
    type Msg = ManagerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: ManagerMsg) {
        match msg {
            ManagerMsg::Start {
                producers,
                consumers,
                done,
            } => {
                self.done = Some(done);
                self.available_consumers = (0..consumers.len()).collect();
                self.producers = producers;
                self.consumers = consumers;
                for producer in 0..self.producers.len() {
                    self.produce(producer);
                }
            }
            ManagerMsg::Data(item) => {
                self.messages += 1;
                let producer = item.producer;
                if self.fault == Fault::Drop {
                    // Fault injection: the first item is lost.
                    self.fault = Fault::None;
                } else {
                    match self.available_consumers.pop_front() {
                        Some(consumer) => self.consume(consumer, item),
                        None => self.pending.push_back(item),
                    }
                }
                if self.pending.len() >= self.adjusted_buffer {
                    self.available_producers.push_back(producer);
                } else {
                    self.produce(producer);
                }
            }
            ManagerMsg::ConsumerAvailable(consumer) => {
                if self.fault == Fault::Duplicate {
                    // Fault injection: the first is delivered twice (the consumer is taken
                    // for free twice; every item is still consumed once).
                    self.fault = Fault::None;
                    self.consumer_available(consumer);
                }
                self.consumer_available(consumer);
            }
            ManagerMsg::ProducerExit(handled) => {
                self.messages += 1 + handled;
                self.terminated_producers += 1;
                self.try_exit();
            }
            ManagerMsg::Tally { consumed, checksum } => {
                self.tallies += 1;
                self.consumed += consumed;
                self.messages += consumed;
                self.checksum = self.checksum.wrapping_add(checksum);
                if self.tallies == self.consumers.len() {
                    if let Some(done) = self.done.take() {
                        done.send((self.consumed, self.checksum, self.messages));
                    }
                    ctx.stop();
                }
            }
        }
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    let (buffer, producers, consumers, items) =
        size.pick((50_usize, 20, 20, 250_u64), (75, 60, 60, 1_500_u64));
    let manager = system.spawn(Manager {
        adjusted_buffer: buffer.saturating_sub(producers).max(1),
        producers: Vec::new(),
        consumers: Vec::new(),
        available_producers: VecDeque::new(),
        available_consumers: VecDeque::new(),
        pending: VecDeque::new(),
        terminated_producers: 0,
        exiting: false,
        tallies: 0,
        consumed: 0,
        checksum: 0,
        messages: 0,
        fault: run.fault,
        done: None,
    });
    let producer_refs: Vec<_> = (0..producers)
        .map(|index| {
            system.spawn(Producer {
                index,
                items,
                produced: 0,
                handled: 0,
                term: 0.0,
                manager: manager.clone(),
            })
        })
        .collect();
    let consumer_refs: Vec<_> = (0..consumers)
        .map(|index| {
            system.spawn(Consumer {
                index,
                term: 0.0,
                consumed: 0,
                checksum: 0,
                manager: manager.clone(),
            })
        })
        .collect();
    let total = producers as u64 * items;
    let checksum = (0..total).fold(0_u64, |sum, id| sum.wrapping_add(mix(id)));
    let messages = 4 * total + 2 * producers as u64;
    system.run_until_idle();
    let start = Instant::now();
    let pending = manager
        .ask(|done| ManagerMsg::Start {
            producers: producer_refs,
            consumers: consumer_refs,
            done,
        })
        .expect("fresh actor");
    let got = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    let (consumed, sum, counted) = match got {
        Ok(got) => got,
        Err(reason) => return Measured::failed(0, elapsed, reason),
    };
    Measured {
        messages: counted,
        elapsed,
        verified: (consumed, sum) == (total, checksum),
        check: format!(
            "{consumed} of {total} items consumed, fingerprint of their ids {sum:#x} (expected \
             {checksum:#x}: every item exactly once)"
        ),
    }
    .with_message_count(messages, "4·P·I + 2·P = ")
}
