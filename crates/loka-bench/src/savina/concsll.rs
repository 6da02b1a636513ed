//! Concurrent Sorted Linked List: E workers send M requests each (insert, contains, size) to one
//! actor that keeps a sorted singly linked list, waiting for every answer (Savina #10).

use crate::rng::XorShift as Rng;
use crate::{Bench, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "concsll",
    suite: "savina",
    about: "E workers send M insert/contains/size requests to a sorted-linked-list actor (2·E·M messages)",
    run,
    faults: &[],
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

/// A sorted singly linked list whose nodes live in a vector (links are indices), walked node by
/// node exactly like Savina's `SortedLinkedList`: insertion after equal items, `contains` and
/// `size` walk the whole list.
struct SortedList {
    nodes: Vec<(u32, u32)>,
    head: u32,
}

impl SortedList {
    fn insert(&mut self, item: u32) {
        let new = self.nodes.len() as u32;
        if self.head == NIL || item < self.nodes[self.head as usize].0 {
            self.nodes.push((item, self.head));
            self.head = new;
            return;
        }
        let mut before = self.head;
        let mut after = self.nodes[before as usize].1;
        while after != NIL && item >= self.nodes[after as usize].0 {
            before = after;
            after = self.nodes[after as usize].1;
        }
        self.nodes.push((item, after));
        self.nodes[before as usize].1 = new;
    }

    fn contains(&self, item: u32) -> bool {
        let mut n = self.head;
        while n != NIL {
            let (value, next) = self.nodes[n as usize];
            if value == item {
                return true;
            }
            n = next;
        }
        false
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

enum ListMsg {
    Request {
        op: Op,
        from: ActorRef<WorkerMsg>,
    },
    /// After the run: the items in list order, then stop.
    Finish(ReplyTo<Vec<u32>>),
}

struct ListActor {
    list: SortedList,
}

impl Actor for ListActor {
    type Msg = ListMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: ListMsg) {
        match msg {
            ListMsg::Request { op, from } => {
                let answer = match op {
                    Op::Size => self.list.size() as u64,
                    Op::Insert(value) => {
                        self.list.insert(value);
                        u64::from(value)
                    }
                    Op::Contains(value) => u64::from(self.list.contains(value)),
                };
                let _ = from.send(WorkerMsg::Reply(answer));
            }
            ListMsg::Finish(reply) => {
                reply.send(self.list.walk());
                ctx.stop();
            }
        }
    }
}

enum WorkerMsg {
    Start,
    Reply(u64),
}

struct Worker {
    list: ActorRef<ListMsg>,
    master: ActorRef<MasterMsg>,
    rng: Rng,
    left: u64,
    /// The outstanding request.
    pending: Op,
    /// The largest size answer seen (at most the total number of inserts).
    max_size: u64,
}

impl Actor for Worker {
    type Msg = WorkerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: WorkerMsg) {
        if let (WorkerMsg::Reply(answer), Op::Size) = (msg, self.pending) {
            self.max_size = self.max_size.max(answer);
        }
        if self.left > 0 {
            self.left -= 1;
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
                .send(MasterMsg::Report(self.max_size))
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
    /// A worker finished; the largest size it was told.
    Report(u64),
}

struct Master {
    workers: usize,
    /// The workers' addresses, held until the end: every worker stays referenced while it
    /// works, so none can be taken for unreferenced between a reply and its next request.
    refs: Vec<ActorRef<WorkerMsg>>,
    reports: usize,
    max_size: u64,
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
            MasterMsg::Report(max_size) => {
                self.reports += 1;
                self.max_size = self.max_size.max(max_size);
                if self.reports == self.workers {
                    if let Some(done) = self.done.take() {
                        done.send(self.max_size);
                    }
                    ctx.stop();
                }
            }
        }
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    let (workers, per_worker) = size.pick((20, 2_000), (20, 8_000));
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
    let list = system.spawn(ListActor {
        list: SortedList {
            nodes: Vec::new(),
            head: NIL,
        },
    });
    let master = system.spawn(Master {
        workers,
        refs: Vec::new(),
        reports: 0,
        max_size: 0,
        done: None,
    });
    let refs: Vec<_> = (0..workers)
        .map(|index| {
            system.spawn(Worker {
                list: list.clone(),
                master: master.clone(),
                rng: Rng::new(index as u64 + 1),
                left: per_worker,
                pending: Op::Contains(0),
                max_size: 0,
            })
        })
        .collect();
    system.run_until_idle();
    let start = Instant::now();
    let max_size = master
        .ask(|done| MasterMsg::Start {
            workers: refs,
            done,
        })
        .expect("fresh actor")
        .wait()
        .unwrap_or(u64::MAX);
    let elapsed = start.elapsed();
    let items = list
        .ask(ListMsg::Finish)
        .expect("list alive")
        .wait()
        .unwrap_or_default();
    let sorted = items.windows(2).all(|w| w[0] <= w[1]);
    // In list order and sorted, the list must hold exactly the inserted values; no size answer
    // can exceed the number of inserts.
    let size_ok = max_size <= inserted.len() as u64;
    let same = items == inserted;
    Measured {
        messages: 2 * workers as u64 * per_worker,
        elapsed,
        verified: size_ok && sorted && same,
        check: format!(
            "list of {} items (sorted: {sorted}) holding exactly the {} inserted values: {same}; \
             largest size answer {max_size}",
            items.len(),
            inserted.len()
        ),
    }
}
