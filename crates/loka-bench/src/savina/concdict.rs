//! Concurrent Dictionary: E workers send M read/write requests each to one dictionary actor and
//! wait for every answer before the next request (Savina #9).

use crate::rng::XorShift as Rng;
use crate::{await_result, Bench, Fault, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::collections::HashMap;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "concdict",
    suite: "savina",
    about: "E workers send M read/write requests to a hash-map actor (2·E·M messages)",
    run,
    faults: &[Fault::Drop, Fault::Duplicate, Fault::WrongRule],
};

/// Percentage of requests that are writes (Savina's W = 10).
const WRITE_PERCENT: u64 = 10;

/// What one request's lookup or insert into the dictionary's `HashMap` takes on this project's
/// host, declared to the simulation engine with `ctx.charge` (docs/simulation.md): measured with
/// `cargo test --release -p loka-bench --lib concdict_cost -- --ignored --nocapture
/// --test-threads=1`, the quick size's mix (10 % inserts) of random keys on a map holding all
/// 65,536 keys; the least of six runs on 2026-11-24.
const MAP_OP_PS: u64 = 21_960;

/// The value every write stores under `key`: a function of the key only, so the final dictionary
/// does not depend on the order in which the workers' writes arrive.
fn written_value(key: u32) -> u32 {
    key.wrapping_mul(0x9E37_79B1) ^ 0xA5A5_A5A5
}

/// One request of a worker's stream: `(is_write, key)`.
fn request(rng: &mut Rng, keys: u32) -> (bool, u32) {
    let write = rng.next() % 100 < WRITE_PERCENT;
    (write, (rng.next() % u64::from(keys)) as u32)
}

/// What the answer to one request must be, worked out on the driver thread from every worker's
/// request stream (a worker waits for each answer, so its own writes are applied before its next
/// request; other workers' writes race with it).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Expect {
    /// The key's initial value: a read of a key no other worker writes, before this worker's own
    /// write of it (if any).
    Initial,
    /// The written value: every write's answer, and a read of a key this worker wrote earlier.
    Written,
    /// Either: a read of a key another worker writes (whether the write came first is timing).
    Either,
}

/// Each worker's expected answers, in request order.
fn expectations(workers: usize, per_worker: u64, keys: u32) -> Vec<Vec<Expect>> {
    const NONE: u32 = u32::MAX;
    const MANY: u32 = u32::MAX - 1;
    // The worker writing each key (NONE, or MANY when more than one does).
    let mut writer = vec![NONE; keys as usize];
    for w in 0..workers {
        let mut rng = Rng::new(w as u64 + 1);
        for _ in 0..per_worker {
            if let (true, key) = request(&mut rng, keys) {
                let slot = &mut writer[key as usize];
                *slot = match *slot {
                    NONE => w as u32,
                    own if own == w as u32 => own,
                    _ => MANY,
                };
            }
        }
    }
    // `written_by[key] == w + 1`: worker w has written the key so far.
    let mut written_by = vec![0_u32; keys as usize];
    (0..workers)
        .map(|w| {
            let mut rng = Rng::new(w as u64 + 1);
            let me = w as u32 + 1;
            (0..per_worker)
                .map(|_| {
                    let (write, key) = request(&mut rng, keys);
                    let key = key as usize;
                    if write {
                        written_by[key] = me;
                        Expect::Written
                    } else if written_by[key] == me {
                        Expect::Written
                    } else if writer[key] == NONE || writer[key] == w as u32 {
                        Expect::Initial
                    } else {
                        Expect::Either
                    }
                })
                .collect()
        })
        .collect()
}

enum DictMsg {
    Write {
        key: u32,
        value: u32,
        from: ActorRef<WorkerMsg>,
    },
    Read {
        key: u32,
        from: ActorRef<WorkerMsg>,
    },
    /// After the run: hand the contents and the requests handled back, and stop.
    Finish(ReplyTo<(HashMap<u32, u32>, u64)>),
}

struct Dictionary {
    map: HashMap<u32, u32>,
    /// Requests handled.
    handled: u64,
    /// The defect to inject once ([`Fault::None`] in a real run, and once injected).
    fault: Fault,
}

impl Dictionary {
    fn reply(&mut self, to: &ActorRef<WorkerMsg>, value: Option<u32>) {
        if self.fault != Fault::None {
            return self.faulty_reply(to, value);
        }
        let _ = to.send(WorkerMsg::Reply(value));
    }

    /// Fault injection: the first answer is lost, or delivered twice.
    #[cold]
    fn faulty_reply(&mut self, to: &ActorRef<WorkerMsg>, value: Option<u32>) {
        match std::mem::replace(&mut self.fault, Fault::None) {
            Fault::Drop => {}
            Fault::Duplicate => {
                let _ = to.send(WorkerMsg::Reply(value));
                let _ = to.send(WorkerMsg::Reply(value));
            }
            other => {
                self.fault = other;
                let _ = to.send(WorkerMsg::Reply(value));
            }
        }
    }

    /// Fault injection: the first write stores a wrong value.
    #[cold]
    fn wrong_value(&mut self, value: u32) -> u32 {
        self.fault = Fault::None;
        value ^ 1
    }
}

impl Actor for Dictionary {
    type Msg = DictMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: DictMsg) {
        match msg {
            DictMsg::Write { key, value, from } => {
                self.handled += 1;
                let value = if self.fault == Fault::WrongRule {
                    self.wrong_value(value)
                } else {
                    value
                };
                ctx.charge(std::time::Duration::from_nanos(MAP_OP_PS / 1_000));
                self.map.insert(key, value);
                // The answer is the value now stored under the key.
                self.reply(&from, Some(value));
            }
            DictMsg::Read { key, from } => {
                self.handled += 1;
                ctx.charge(std::time::Duration::from_nanos(MAP_OP_PS / 1_000));
                let value = self.map.get(&key).copied();
                self.reply(&from, value);
            }
            DictMsg::Finish(reply) => {
                reply.send((std::mem::take(&mut self.map), self.handled));
                ctx.stop();
            }
        }
    }
}

enum WorkerMsg {
    Start,
    /// The dictionary's answer to the last request.
    Reply(Option<u32>),
}

/// A worker's account, sent to the master when it is done.
#[derive(Default, Clone, Copy)]
struct Tally {
    /// Answers other than the one its request must get (see [`Expect`]).
    bad: u64,
    /// Racing reads ([`Expect::Either`]) that saw the written value.
    racing_written: u64,
    /// Answers handled.
    replies: u64,
}

struct Worker {
    dict: ActorRef<DictMsg>,
    master: ActorRef<MasterMsg>,
    rng: Rng,
    keys: u32,
    /// The answer each request must get, in order.
    expect: Vec<Expect>,
    /// Requests sent.
    sent: usize,
    /// The key of the outstanding request.
    key: u32,
    tally: Tally,
}

impl Worker {
    fn send_next(&mut self, ctx: &mut Context<Self>) {
        self.sent += 1;
        let (write, key) = request(&mut self.rng, self.keys);
        self.key = key;
        let from = ctx.myself();
        let msg = if write {
            DictMsg::Write {
                key,
                value: written_value(key),
                from,
            }
        } else {
            DictMsg::Read { key, from }
        };
        self.dict.send(msg).expect("dictionary alive");
    }

    /// Checks an answer against what the outstanding request must get.
    fn check(&mut self, value: Option<u32>) {
        let t = &mut self.tally;
        t.replies += 1;
        let (initial, written) = (Some(self.key), Some(written_value(self.key)));
        let ok = match self.expect.get(self.sent.wrapping_sub(1)) {
            Some(Expect::Initial) => value == initial,
            Some(Expect::Written) => value == written,
            Some(Expect::Either) => {
                t.racing_written += u64::from(value == written);
                value == written || value == initial
            }
            None => false,
        };
        t.bad += u64::from(!ok);
    }
}

impl Actor for Worker {
    type Msg = WorkerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: WorkerMsg) {
        if let WorkerMsg::Reply(value) = msg {
            self.check(value);
        }
        if self.sent < self.expect.len() {
            self.send_next(ctx);
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
                self.tally.racing_written += t.racing_written;
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
    // Savina's DATA_LIMIT is Integer.MAX_VALUE / 4096 = 524,287 keys, all present initially.
    let (workers, per_worker, keys) = run.pick((20, 40_000, 65_536), (100, 50_000, 524_287));
    let initial: HashMap<u32, u32> = (0..keys).map(|k| (k, k)).collect();
    let mut expected = initial.clone();
    for index in 0..workers {
        let mut rng = Rng::new(index as u64 + 1);
        for _ in 0..per_worker {
            if let (true, key) = request(&mut rng, keys) {
                expected.insert(key, written_value(key));
            }
        }
    }
    let expect = expectations(workers, per_worker, keys);
    let racing: usize = expect
        .iter()
        .map(|e| e.iter().filter(|&&x| x == Expect::Either).count())
        .sum();
    let dict = system.spawn(Dictionary {
        map: initial,
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
                dict: dict.clone(),
                master: master.clone(),
                rng: Rng::new(index as u64 + 1),
                keys,
                expect,
                sent: 0,
                key: 0,
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
    let finish = dict.ask(DictMsg::Finish).expect("dictionary alive");
    let (map, handled) = match await_result(system, finish, run, BENCH.name) {
        Ok(contents) => contents,
        Err(reason) => return Measured::failed(tally.replies, elapsed, reason),
    };
    let same = map == expected;
    let requests = workers as u64 * per_worker;
    Measured {
        messages: handled + tally.replies,
        elapsed,
        verified: tally.bad == 0 && same,
        check: format!(
            "{} of {requests} answers differ from what their request must get (each write's \
             answer and each read of a key the worker wrote before: the written value; a read of \
             a key no other worker writes: the initial one; {} of {racing} racing reads saw the \
             write); the dictionary ({} keys) {} the sequential replay of the writes ({} keys)",
            tally.bad,
            tally.racing_written,
            map.len(),
            if same { "equals" } else { "differs from" },
            expected.len()
        ),
    }
    .with_message_count(2 * requests, "2·E·M = ")
}

#[cfg(test)]
mod cost_tests {
    use super::*;

    /// The cost of one request's map operation, for [`MAP_OP_PS`].
    #[test]
    #[ignore = "a measurement, not a test"]
    fn concdict_cost_per_request() {
        let keys = 65_536;
        let mut map: HashMap<u32, u32> = (0..keys).map(|k| (k, written_value(k))).collect();
        let mut rng = Rng::new(5);
        let requests: Vec<(bool, u32)> = (0..1_000_000).map(|_| request(&mut rng, keys)).collect();
        for _ in 0..6 {
            let mut found = 0u64;
            let start = Instant::now();
            for &(write, key) in &requests {
                if write {
                    map.insert(std::hint::black_box(key), written_value(key));
                } else {
                    found += u64::from(map.get(&std::hint::black_box(key)).copied().is_some());
                }
            }
            let ps = start.elapsed().as_nanos() as f64 * 1e3 / requests.len() as f64;
            eprintln!("concdict: {ps:.0} ps per request ({found} found)");
        }
    }
}
