//! Concurrent Dictionary: E workers send M read/write requests each to one dictionary actor and
//! wait for every answer before the next request (Savina #9).

use crate::rng::XorShift as Rng;
use crate::{Bench, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::collections::HashMap;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "concdict",
    suite: "savina",
    about: "E workers send M read/write requests to a hash-map actor (2·E·M messages)",
    run,
    faults: &[],
};

/// Percentage of requests that are writes (Savina's W = 10).
const WRITE_PERCENT: u64 = 10;

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
    /// After the run: hand the contents back and stop.
    Finish(ReplyTo<HashMap<u32, u32>>),
}

struct Dictionary {
    map: HashMap<u32, u32>,
}

impl Actor for Dictionary {
    type Msg = DictMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: DictMsg) {
        match msg {
            DictMsg::Write { key, value, from } => {
                self.map.insert(key, value);
                let _ = from.send(WorkerMsg::Reply(Some(value)));
            }
            DictMsg::Read { key, from } => {
                let value = self.map.get(&key).copied();
                let _ = from.send(WorkerMsg::Reply(value));
            }
            DictMsg::Finish(reply) => {
                reply.send(std::mem::take(&mut self.map));
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

struct Worker {
    dict: ActorRef<DictMsg>,
    master: ActorRef<MasterMsg>,
    rng: Rng,
    keys: u32,
    left: u64,
    /// The key of the outstanding request.
    key: u32,
    /// Answers that are neither the initial nor the written value of their key.
    bad: u64,
}

impl Worker {
    fn send_next(&mut self, ctx: &mut Context<Self>) {
        self.left -= 1;
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
}

impl Actor for Worker {
    type Msg = WorkerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: WorkerMsg) {
        if let WorkerMsg::Reply(value) = msg {
            let ok = value == Some(self.key) || value == Some(written_value(self.key));
            self.bad += u64::from(!ok);
        }
        if self.left > 0 {
            self.send_next(ctx);
        } else {
            self.master
                .send(MasterMsg::Report(self.bad))
                .expect("master alive");
            ctx.stop();
        }
    }
}

enum MasterMsg {
    Start {
        workers: Vec<ActorRef<WorkerMsg>>,
        done: ReplyTo<u64>,
    },
    /// A worker finished; its count of bad answers.
    Report(u64),
}

struct Master {
    workers: usize,
    /// The workers' addresses, held until the end: every worker stays referenced while it
    /// works, so none can be taken for unreferenced between a reply and its next request.
    refs: Vec<ActorRef<WorkerMsg>>,
    reports: usize,
    bad: u64,
    done: Option<ReplyTo<u64>>,
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
            MasterMsg::Report(bad) => {
                self.reports += 1;
                self.bad += bad;
                if self.reports == self.workers {
                    if let Some(done) = self.done.take() {
                        done.send(self.bad);
                    }
                    ctx.stop();
                }
            }
        }
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    // Savina's DATA_LIMIT is Integer.MAX_VALUE / 4096 = 524,287 keys, all present initially.
    let (workers, per_worker, keys) = size.pick((20, 10_000, 65_536), (100, 50_000, 524_287));
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
    let dict = system.spawn(Dictionary { map: initial });
    let master = system.spawn(Master {
        workers,
        refs: Vec::new(),
        reports: 0,
        bad: 0,
        done: None,
    });
    let refs: Vec<_> = (0..workers)
        .map(|index| {
            system.spawn(Worker {
                dict: dict.clone(),
                master: master.clone(),
                rng: Rng::new(index as u64 + 1),
                keys,
                left: per_worker,
                key: 0,
                bad: 0,
            })
        })
        .collect();
    system.run_until_idle();
    let start = Instant::now();
    let bad = master
        .ask(|done| MasterMsg::Start {
            workers: refs,
            done,
        })
        .expect("fresh actor")
        .wait()
        .unwrap_or(u64::MAX);
    let elapsed = start.elapsed();
    let map = dict
        .ask(DictMsg::Finish)
        .expect("dictionary alive")
        .wait()
        .unwrap_or_default();
    let same = map == expected;
    Measured {
        messages: 2 * workers as u64 * per_worker,
        elapsed,
        verified: bad == 0 && same,
        check: format!(
            "{bad} answers inconsistent with their key; the dictionary ({} keys) {} the sequential \
             replay of the writes ({} keys)",
            map.len(),
            if same { "equals" } else { "differs from" },
            expected.len()
        ),
    }
}
