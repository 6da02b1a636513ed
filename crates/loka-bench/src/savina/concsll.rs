//! Concurrent Sorted Linked List: E workers send M requests each (insert, contains, size) to one
//! actor that keeps a sorted singly linked list, waiting for every answer (Savina #10).

use crate::rng::XorShift as Rng;
use crate::{await_result, Bench, Fault, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::collections::{HashMap, HashSet};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "concsll",
    suite: "savina",
    about: "E workers send M insert/contains/size requests to a sorted-linked-list actor (2·E·M messages)",
    run,
    faults: &[Fault::Drop, Fault::Duplicate, Fault::WrongRule],
};

/// Percentage of requests that insert (Savina's W = 10).
const WRITE_PERCENT: u64 = 10;
/// Percentage of requests that ask for the size (Savina's default 1).
const SIZE_PERCENT: u64 = 1;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Op {
    Size,
    Insert(u32),
    Contains(u32),
}

/// One request of a worker's stream (Savina: size 1 %, insert 10 %, contains the rest, values
/// uniform 31-bit integers).
fn request(rng: &mut Rng) -> Op {
    let kind = rng.next() % 100;
    let value = (rng.next() >> 33) as u32;
    if kind < SIZE_PERCENT {
        Op::Size
    } else if kind < SIZE_PERCENT + WRITE_PERCENT {
        Op::Insert(value)
    } else {
        Op::Contains(value)
    }
}

const NIL: u32 = u32::MAX;

/// What looking at one node of the list takes on this project's host, declared to the simulation
/// engine with `ctx.charge` (docs/simulation.md): measured with `cargo test --release -p
/// loka-bench --lib concsll_cost -- --ignored --nocapture --test-threads=1`, `contains` of absent
/// values in a list of 4,000 (the quick size's final length, 32 KB); the least of six runs on
/// 2026-11-24.
const NODE_PS: u64 = 1_656;

/// A sorted singly linked list whose nodes live in a vector (links are indices), walked node by
/// node exactly like Savina's `SortedLinkedList`: insertion after equal items, `contains` and
/// `size` walk the whole list.
struct SortedList {
    nodes: Vec<(u32, u32)>,
    head: u32,
}

impl SortedList {
    /// Inserts `item`; returns the nodes it walked past (the declared compute).
    fn insert(&mut self, item: u32) -> u64 {
        let new = self.nodes.len() as u32;
        if self.head == NIL || item < self.nodes[self.head as usize].0 {
            self.nodes.push((item, self.head));
            self.head = new;
            return 1;
        }
        let mut walked = 1;
        let mut before = self.head;
        let mut after = self.nodes[before as usize].1;
        while after != NIL && item >= self.nodes[after as usize].0 {
            before = after;
            after = self.nodes[after as usize].1;
            walked += 1;
        }
        self.nodes.push((item, after));
        self.nodes[before as usize].1 = new;
        walked
    }

    /// Whether `item` is in the list, and the nodes looked at.
    fn contains(&self, item: u32) -> (bool, u64) {
        let mut n = self.head;
        let mut walked = 0;
        while n != NIL {
            let (value, next) = self.nodes[n as usize];
            walked += 1;
            if value == item {
                return (true, walked);
            }
            n = next;
        }
        (false, walked)
    }

    fn walk(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.nodes.len());
        let mut n = self.head;
        while n != NIL {
            let (value, next) = self.nodes[n as usize];
            out.push(value);
            n = next;
        }
        out
    }

    fn size(&self) -> usize {
        let mut count = 0;
        let mut n = self.head;
        while n != NIL {
            count += 1;
            n = self.nodes[n as usize].1;
        }
        count
    }
}

/// What the answer to one request must be, worked out on the driver thread from every worker's
/// request stream (a worker waits for each answer, so its own inserts are in the list before its
/// next request; other workers' inserts race with it).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Expect {
    /// An insert: the value inserted.
    Echo,
    /// A size: at least the worker's own inserts so far, at most all inserts of the run.
    Size,
    /// `contains` of a value this worker inserted earlier.
    Present,
    /// `contains` of a value no other worker inserts (and this one not yet).
    Absent,
    /// `contains` of a value another worker inserts (whether it came first is timing).
    Either,
}

/// Each worker's expected answers, in request order.
fn expectations(workers: usize, per_worker: u64) -> Vec<Vec<Expect>> {
    // The workers inserting each value: Some(w) for one, None for more than one.
    let mut inserter: HashMap<u32, Option<usize>> = HashMap::new();
    for w in 0..workers {
        let mut rng = Rng::new(w as u64 + 1);
        for _ in 0..per_worker {
            if let Op::Insert(value) = request(&mut rng) {
                inserter
                    .entry(value)
                    .and_modify(|who| {
                        if *who != Some(w) {
                            *who = None
                        }
                    })
                    .or_insert(Some(w));
            }
        }
    }
    (0..workers)
        .map(|w| {
            let mut rng = Rng::new(w as u64 + 1);
            let mut own: HashSet<u32> = HashSet::new();
            (0..per_worker)
                .map(|_| match request(&mut rng) {
                    Op::Size => Expect::Size,
                    Op::Insert(value) => {
                        own.insert(value);
                        Expect::Echo
                    }
                    Op::Contains(value) if own.contains(&value) => Expect::Present,
                    Op::Contains(value) => match inserter.get(&value) {
                        None => Expect::Absent,
                        Some(&Some(who)) if who == w => Expect::Absent,
                        Some(_) => Expect::Either,
                    },
                })
                .collect()
        })
        .collect()
}

enum ListMsg {
    Request {
        op: Op,
        from: ActorRef<WorkerMsg>,
    },
    /// After the run: the items in list order and the requests handled, then stop.
    Finish(ReplyTo<(Vec<u32>, u64)>),
}

struct ListActor {
    list: SortedList,
    /// Requests handled.
    handled: u64,
    /// The defect to inject once ([`Fault::None`] in a real run, and once injected).
    fault: Fault,
}

impl ListActor {
    fn reply(&mut self, to: &ActorRef<WorkerMsg>, answer: u64) {
        if self.fault != Fault::None {
            return self.faulty_reply(to, answer);
        }
        let _ = to.send(WorkerMsg::Reply(answer));
    }

    /// Fault injection: the first answer is lost, or delivered twice.
    #[cold]
    fn faulty_reply(&mut self, to: &ActorRef<WorkerMsg>, answer: u64) {
        match std::mem::replace(&mut self.fault, Fault::None) {
            Fault::Drop => {}
            Fault::Duplicate => {
                let _ = to.send(WorkerMsg::Reply(answer));
                let _ = to.send(WorkerMsg::Reply(answer));
            }
            other => {
                self.fault = other;
                let _ = to.send(WorkerMsg::Reply(answer));
            }
        }
    }

    /// Fault injection: the first insert stores a wrong value.
    #[cold]
    fn wrong_value(&mut self, value: u32) -> u32 {
        self.fault = Fault::None;
        value ^ 1
    }
}

impl Actor for ListActor {
    type Msg = ListMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: ListMsg) {
        match msg {
            ListMsg::Request { op, from } => {
                self.handled += 1;
                let mut walked = self.list.nodes.len() as u64;
                let answer = match op {
                    Op::Size => self.list.size() as u64,
                    Op::Insert(value) => {
                        let value = if self.fault == Fault::WrongRule {
                            self.wrong_value(value)
                        } else {
                            value
                        };
                        walked = self.list.insert(value);
                        // The answer is the value inserted.
                        u64::from(value)
                    }
                    Op::Contains(value) => {
                        let (found, looked_at) = self.list.contains(value);
                        walked = looked_at;
                        u64::from(found)
                    }
                };
                ctx.charge(std::time::Duration::from_nanos(walked * NODE_PS / 1_000));
                self.reply(&from, answer);
            }
            ListMsg::Finish(reply) => {
                reply.send((self.list.walk(), self.handled));
                ctx.stop();
            }
        }
    }
}

enum WorkerMsg {
    Start,
    Reply(u64),
}

/// A worker's account, sent to the master when it is done.
#[derive(Default, Clone, Copy)]
struct Tally {
    /// Answers other than the one their request must get (see [`Expect`]).
    bad: u64,
    /// Racing `contains` ([`Expect::Either`]) that found the value.
    racing_found: u64,
    /// The largest size answer.
    max_size: u64,
    /// Answers handled.
    replies: u64,
}

struct Worker {
    list: ActorRef<ListMsg>,
    master: ActorRef<MasterMsg>,
    rng: Rng,
    /// The answer each request must get, in order.
    expect: Vec<Expect>,
    /// Requests sent.
    sent: usize,
    /// The outstanding request.
    pending: Op,
    /// This worker's inserts answered so far.
    own_inserts: u64,
    /// Inserts of the whole run (the largest size possible).
    all_inserts: u64,
    tally: Tally,
}

impl Worker {
    /// Checks an answer against what the outstanding request must get.
    fn check(&mut self, answer: u64) {
        let t = &mut self.tally;
        t.replies += 1;
        let ok = match (self.expect.get(self.sent.wrapping_sub(1)), self.pending) {
            (Some(Expect::Echo), Op::Insert(value)) => {
                self.own_inserts += 1;
                answer == u64::from(value)
            }
            (Some(Expect::Size), Op::Size) => {
                t.max_size = t.max_size.max(answer);
                (self.own_inserts..=self.all_inserts).contains(&answer)
            }
            (Some(Expect::Present), Op::Contains(_)) => answer == 1,
            (Some(Expect::Absent), Op::Contains(_)) => answer == 0,
            (Some(Expect::Either), Op::Contains(_)) => {
                t.racing_found += u64::from(answer == 1);
                answer <= 1
            }
            _ => false,
        };
        t.bad += u64::from(!ok);
    }
}

impl Actor for Worker {
    type Msg = WorkerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: WorkerMsg) {
        if let WorkerMsg::Reply(answer) = msg {
            self.check(answer);
        }
        if self.sent < self.expect.len() {
            self.sent += 1;
            let op = request(&mut self.rng);
            self.pending = op;
            self.list
                .send(ListMsg::Request {
                    op,
                    from: ctx.myself(),
                })
                .expect("list alive");
        } else {
            self.master
                .send(MasterMsg::Report(self.tally))
                .expect("master alive");
            ctx.stop();
        }
    }
}

enum MasterMsg {
    Start {
        workers: Vec<ActorRef<WorkerMsg>>,
        done: ReplyTo<Tally>,
    },
    /// A worker finished; its account.
    Report(Tally),
}

struct Master {
    workers: usize,
    /// The workers' addresses, held until the end: every worker stays referenced while it
    /// works, so none can be taken for unreferenced between a reply and its next request.
    refs: Vec<ActorRef<WorkerMsg>>,
    reports: usize,
    tally: Tally,
    done: Option<ReplyTo<Tally>>,
}

impl Actor for Master {
    type Msg = MasterMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: MasterMsg) {
        match msg {
            MasterMsg::Start { workers, done } => {
                self.done = Some(done);
                for worker in &workers {
                    worker.send(WorkerMsg::Start).expect("worker alive");
                }
                self.refs = workers;
            }
            MasterMsg::Report(t) => {
                self.reports += 1;
                self.tally.bad += t.bad;
                self.tally.racing_found += t.racing_found;
                self.tally.max_size = self.tally.max_size.max(t.max_size);
                self.tally.replies += t.replies;
                if self.reports == self.workers {
                    if let Some(done) = self.done.take() {
                        done.send(self.tally);
                    }
                    ctx.stop();
                }
            }
        }
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let (workers, per_worker) = run.pick((20, 2_000), (20, 8_000));
    let mut inserted: Vec<u32> = Vec::new();
    for index in 0..workers {
        let mut rng = Rng::new(index as u64 + 1);
        for _ in 0..per_worker {
            if let Op::Insert(value) = request(&mut rng) {
                inserted.push(value);
            }
        }
    }
    inserted.sort_unstable();
    let expect = expectations(workers, per_worker);
    let racing: usize = expect
        .iter()
        .map(|e| e.iter().filter(|&&x| x == Expect::Either).count())
        .sum();
    let list = system.spawn(ListActor {
        list: SortedList {
            nodes: Vec::new(),
            head: NIL,
        },
        handled: 0,
        fault: run.fault,
    });
    let master = system.spawn(Master {
        workers,
        refs: Vec::new(),
        reports: 0,
        tally: Tally::default(),
        done: None,
    });
    let refs: Vec<_> = expect
        .into_iter()
        .enumerate()
        .map(|(index, expect)| {
            system.spawn(Worker {
                list: list.clone(),
                master: master.clone(),
                rng: Rng::new(index as u64 + 1),
                expect,
                sent: 0,
                pending: Op::Contains(0),
                own_inserts: 0,
                all_inserts: inserted.len() as u64,
                tally: Tally::default(),
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
    let tally = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    let tally = match tally {
        Ok(tally) => tally,
        Err(reason) => return Measured::failed(0, elapsed, reason),
    };
    let finish = list.ask(ListMsg::Finish).expect("list alive");
    let (items, handled) = match await_result(system, finish, run, BENCH.name) {
        Ok(contents) => contents,
        Err(reason) => return Measured::failed(tally.replies, elapsed, reason),
    };
    let sorted = items.windows(2).all(|w| w[0] <= w[1]);
    // In list order and sorted, the list must hold exactly the inserted values.
    let same = items == inserted;
    let requests = workers as u64 * per_worker;
    Measured {
        messages: handled + tally.replies,
        elapsed,
        verified: tally.bad == 0 && sorted && same,
        check: format!(
            "{} of {requests} answers differ from what their request must get (an insert: its \
             value; contains of a value the worker inserted: true, of one no other worker \
             inserts: false, {} of {racing} racing ones found; a size: between the worker's own \
             inserts and all {}, largest {}); list of {} items (sorted: {sorted}) holding exactly \
             the inserted values: {same}",
            tally.bad,
            tally.racing_found,
            inserted.len(),
            tally.max_size,
            items.len(),
        ),
    }
    .with_message_count(2 * requests, "2·E·M = ")
}

#[cfg(test)]
mod cost_tests {
    use super::*;

    /// The cost of one node of a walk, for [`NODE_PS`].
    #[test]
    #[ignore = "a measurement, not a test"]
    fn concsll_cost_per_node() {
        let mut rng = Rng::new(3);
        let mut list = SortedList {
            nodes: Vec::new(),
            head: NIL,
        };
        for _ in 0..4_000 {
            list.insert((rng.next() >> 33) as u32 | 1);
        }
        for _ in 0..6 {
            let mut walked = 0;
            let start = Instant::now();
            for k in 0..2_000u32 {
                // Even values are absent: every lookup walks the whole list.
                walked += list.contains(std::hint::black_box(k * 2)).1;
            }
            let ps = start.elapsed().as_nanos() as f64 * 1e3 / walked as f64;
            eprintln!("concsll: {ps:.0} ps per node ({walked} nodes)");
        }
    }
}
