//! Recursive Matrix Multiplication: work items for quadrant products are split into eight
//! sub-products until a block has at most T elements; W workers multiply the blocks into a
//! shared result matrix (Savina #20).

use crate::rng::XorShift;
use crate::{await_result, Bench, Fault, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "recmatmul",
    suite: "savina",
    about: "N×N product split recursively into 8 sub-products down to T-element blocks, W workers",
    run,
    faults: &[Fault::Drop, Fault::Duplicate],
};

/// The matrices, shared by all workers. A and B are read-only; C is stored as leaf blocks, each
/// behind its own lock. Savina sends every work item for one C block to the same worker, so the
/// locks are never contended; they only make the sharing safe.
struct Matrices {
    n: usize,
    /// Side of a leaf block (the `dim` of every work item that is multiplied directly).
    leaf: usize,
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<Mutex<Vec<f64>>>,
}

impl Matrices {
    fn c_block(&self, row: usize, col: usize) -> &Mutex<Vec<f64>> {
        let per_row = self.n / self.leaf;
        &self.c[(row / self.leaf) * per_row + col / self.leaf]
    }

    /// C[srC.., scC..] += A[srA.., scA..] · B[srB.., scB..] for `dim`×`dim` blocks: `dim³`
    /// multiply-adds, declared to the simulation as [`leaf_cost`].
    fn multiply(&self, w: &Work) {
        let n = self.n;
        let dim = w.dim;
        debug_assert_eq!(dim, self.leaf);
        let mut block = self
            .c_block(w.sr_c, w.sc_c)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        // i-k-j order (Savina's i-j-k walks B down a column); same products, same sums: the
        // values are small integers, so every sum is exact whatever the order.
        for i in 0..dim {
            let a_row = &self.a[(w.sr_a + i) * n + w.sc_a..][..dim];
            let c_row = &mut block[i * dim..][..dim];
            for (k, &a) in a_row.iter().enumerate() {
                let b_row = &self.b[(w.sr_b + k) * n + w.sc_b..][..dim];
                for (c, &b) in c_row.iter_mut().zip(b_row) {
                    *c += a * b;
                }
            }
        }
    }

    /// C as one row-major matrix.
    fn c_full(&self) -> Vec<f64> {
        let (n, leaf) = (self.n, self.leaf);
        let mut c = vec![0.0; n * n];
        for (index, block) in self.c.iter().enumerate() {
            let block = block.lock().unwrap_or_else(|e| e.into_inner());
            let (r0, c0) = ((index / (n / leaf)) * leaf, (index % (n / leaf)) * leaf);
            for i in 0..leaf {
                c[(r0 + i) * n + c0..][..leaf].copy_from_slice(&block[i * leaf..][..leaf]);
            }
        }
        c
    }
}

/// Savina's work message (without its priority, which only the priority-queue variants use).
#[derive(Clone, Copy)]
struct Work {
    sr_a: usize,
    sc_a: usize,
    sr_b: usize,
    sc_b: usize,
    sr_c: usize,
    sc_c: usize,
    num_blocks: usize,
    dim: usize,
}

impl Work {
    /// Savina's eight sub-products: C_ij += A_ik · B_kj for each quadrant (i, j) and k.
    fn split(&self) -> [Work; 8] {
        let d = self.dim / 2;
        let sub = |ra: usize, ca: usize, rb: usize, cb: usize, rc: usize, cc: usize| Work {
            sr_a: self.sr_a + ra,
            sc_a: self.sc_a + ca,
            sr_b: self.sr_b + rb,
            sc_b: self.sc_b + cb,
            sr_c: self.sr_c + rc,
            sc_c: self.sc_c + cc,
            num_blocks: self.num_blocks / 4,
            dim: d,
        };
        [
            sub(0, 0, 0, 0, 0, 0),
            sub(0, d, d, 0, 0, 0),
            sub(0, 0, 0, d, 0, d),
            sub(0, d, d, d, 0, d),
            sub(d, 0, 0, 0, d, 0),
            sub(d, d, d, 0, d, 0),
            sub(d, 0, 0, d, d, d),
            sub(d, d, d, d, d, d),
        ]
    }
}

/// The master's answer to the driver.
struct Report {
    sent: u64,
    split: u64,
    done: u64,
}

enum MasterMsg {
    /// Set-up: the workers.
    Workers(Vec<ActorRef<WorkerMsg>>),
    /// The driver's request: multiply.
    Start { n: usize, done: ReplyTo<Report> },
    /// A sub-product from a worker, to hand out.
    Work(Work),
    /// A worker finished one work item.
    Done,
}

enum WorkerMsg {
    Work(Work),
}

struct Master {
    workers: Vec<ActorRef<WorkerMsg>>,
    /// Work items sent to workers.
    sent: u64,
    /// Work items received from workers.
    split: u64,
    /// Done messages received.
    completed: u64,
    done: Option<ReplyTo<Report>>,
}

impl Master {
    fn send_work(&mut self, work: Work) {
        // Savina's mapping: every item of one C block goes to the same worker.
        let index = (work.sr_c + work.sc_c) % self.workers.len();
        self.workers[index]
            .send(WorkerMsg::Work(work))
            .expect("worker alive");
        self.sent += 1;
    }
}

impl Actor for Master {
    type Msg = MasterMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: MasterMsg) {
        match msg {
            MasterMsg::Workers(workers) => self.workers = workers,
            MasterMsg::Start { n, done } => {
                self.done = Some(done);
                self.send_work(Work {
                    sr_a: 0,
                    sc_a: 0,
                    sr_b: 0,
                    sc_b: 0,
                    sr_c: 0,
                    sc_c: 0,
                    num_blocks: n * n,
                    dim: n,
                });
            }
            MasterMsg::Work(work) => {
                self.split += 1;
                self.send_work(work);
            }
            MasterMsg::Done => {
                self.completed += 1;
                // A worker sends its sub-products before its Done, so when every item sent has
                // been reported done, none is left anywhere.
                if self.completed == self.sent {
                    if let Some(done) = self.done.take() {
                        done.send(Report {
                            sent: self.sent,
                            split: self.split,
                            done: self.completed,
                        });
                    }
                    for worker in &self.workers {
                        worker.stop();
                    }
                    ctx.stop();
                }
            }
        }
    }
}

struct Worker {
    master: ActorRef<MasterMsg>,
    threshold: usize,
    matrices: Arc<Matrices>,
    /// The defect to inject once, at a leaf ([`Fault::None`] in a real run, and once injected).
    fault: Fault,
}

impl Worker {
    /// Fault injection: the leaf product is lost, or its item is delivered twice.
    #[cold]
    fn faulty_leaf(&mut self, work: &Work) {
        match std::mem::replace(&mut self.fault, Fault::None) {
            Fault::Drop => {}
            Fault::Duplicate => {
                self.matrices.multiply(work);
                self.matrices.multiply(work);
                let _ = self.master.send(MasterMsg::Done);
            }
            _ => self.matrices.multiply(work),
        }
    }
}

impl Actor for Worker {
    type Msg = WorkerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: WorkerMsg) {
        let WorkerMsg::Work(work) = msg;
        if work.num_blocks > self.threshold {
            for sub in work.split() {
                self.master
                    .send(MasterMsg::Work(sub))
                    .expect("master alive");
            }
        } else if self.fault == Fault::None {
            self.matrices.multiply(&work);
            ctx.charge(leaf_cost(work.dim));
        } else {
            self.faulty_leaf(&work);
        }
        // The master stops once every item sent is done: only an extra `Done` (a fault) finds
        // it stopped.
        let _ = self.master.send(MasterMsg::Done);
    }
}

/// What one multiply-add of [`Matrices::multiply`] takes on this project's host, declared to the
/// simulation engine with `ctx.charge` (docs/simulation.md): measured with `cargo test --release
/// -p loka-bench --lib mac_cost -- --ignored --nocapture --test-threads=1`, a 128×128 leaf (the
/// quick size's) of a 256×256 matrix, whose three blocks (384 KiB) fit this host's 1 MiB L2, so
/// the constant is compute; the least of six runs on 2026-11-24 (148 ps; the others up to 246 ps).
const MAC_PS: u64 = 148;

/// The declared compute of one leaf product of `dim`×`dim` blocks.
fn leaf_cost(dim: usize) -> std::time::Duration {
    let macs = (dim as u64).pow(3);
    std::time::Duration::from_nanos(macs * MAC_PS / 1_000)
}

/// Work items in the recursion: 1 + 8 + 8² + … down to the leaf level.
fn work_items(n: usize, threshold: usize) -> u64 {
    let (mut items, mut level, mut blocks) = (0u64, 1u64, n * n);
    loop {
        items += level;
        if blocks <= threshold {
            return items;
        }
        level *= 8;
        blocks /= 4;
    }
}

/// Freivalds' check, exact: C·x = A·(B·x) in wrapping u64 arithmetic for random 64-bit x
/// (every entry is an integer well below 2⁵³, so the f64 values convert exactly). A wrong
/// entry escapes one vector with probability ≤ 2⁻⁶⁴ · 2^(trailing zeros of its error).
fn freivalds(m: &Matrices, c: &[f64], rng: &mut XorShift) -> bool {
    let n = m.n;
    let as_u64 = |v: f64| v as u64;
    (0..2).all(|_| {
        let x: Vec<u64> = (0..n).map(|_| rng.next()).collect();
        let dot = |row: &[f64], v: &[u64]| {
            row.iter().zip(v).fold(0u64, |s, (&r, &v)| {
                s.wrapping_add(as_u64(r).wrapping_mul(v))
            })
        };
        let bx: Vec<u64> = (0..n).map(|i| dot(&m.b[i * n..][..n], &x)).collect();
        (0..n).all(|i| dot(&c[i * n..][..n], &x) == dot(&m.a[i * n..][..n], &bx))
    })
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    // N, W, T (T bounds a block's element count: leaf blocks are √T × √T).
    let (n, workers, threshold) = size.pick((1_024, 20, 16_384), (2_048, 40, 16_384));
    let mut leaf = n;
    while leaf * leaf > threshold {
        leaf /= 2;
    }
    let mut rng = XorShift(0x5EED_0020);
    // Entries in 0..1024: every product sum stays below 2³¹, exact in f64.
    let mut random_matrix = || -> Vec<f64> {
        (0..n * n)
            .map(|_| (rng.next() >> 54) as f64)
            .collect::<Vec<_>>()
    };
    let a = random_matrix();
    let b = random_matrix();
    let matrices = Arc::new(Matrices {
        n,
        leaf,
        a,
        b,
        c: (0..(n / leaf) * (n / leaf))
            .map(|_| Mutex::new(vec![0.0; leaf * leaf]))
            .collect(),
    });
    let master = system.spawn(Master {
        workers: Vec::new(),
        sent: 0,
        split: 0,
        completed: 0,
        done: None,
    });
    let refs = (0..workers)
        .map(|index| {
            system.spawn(Worker {
                master: master.clone(),
                threshold,
                matrices: Arc::clone(&matrices),
                fault: if index == 0 { run.fault } else { Fault::None },
            })
        })
        .collect();
    master.send(MasterMsg::Workers(refs)).expect("fresh actor");
    system.run_until_idle();
    let start = Instant::now();
    let pending = master
        .ask(|done| MasterMsg::Start { n, done })
        .expect("fresh actor");
    let report = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    let items = work_items(n, threshold);
    let expected_messages = 3 * items - 1;
    let report = match report {
        Ok(report) => report,
        Err(reason) => return Measured::failed(0, elapsed, reason),
    };
    let messages = report.sent + report.split + report.done;
    let c = matrices.c_full();
    let product_ok = freivalds(&matrices, &c, &mut XorShift(0xF2E1_7A1D));
    let verified = product_ok && report.sent == items && messages == expected_messages;
    Measured {
        messages,
        elapsed,
        verified,
        check: format!(
            "C = A·B {} (Freivalds, 2 random vectors, exact); {} work items of {items}, \
             {messages} messages (expected {expected_messages})",
            if product_ok { "holds" } else { "FAILS" },
            report.sent
        ),
    }
}

#[cfg(test)]
mod cost_tests {
    use super::*;

    /// The per-multiply-add cost of a leaf product, for [`MAC_PS`].
    #[test]
    #[ignore = "a measurement, not a test"]
    fn mac_cost_per_multiply_add() {
        let (n, leaf) = (256, 128);
        let matrix = |seed: u64| {
            (0..n * n)
                .map(|i| ((i as u64 * seed) % 1024) as f64)
                .collect()
        };
        let m = Matrices {
            n,
            leaf,
            a: matrix(7),
            b: matrix(13),
            c: (0..(n / leaf) * (n / leaf))
                .map(|_| Mutex::new(vec![0.0; leaf * leaf]))
                .collect(),
        };
        let work = Work {
            sr_a: 0,
            sc_a: leaf,
            sr_b: leaf,
            sc_b: 0,
            sr_c: 0,
            sc_c: 0,
            num_blocks: leaf * leaf,
            dim: leaf,
        };
        const ROUNDS: u64 = 20;
        for _ in 0..6 {
            let start = Instant::now();
            for _ in 0..ROUNDS {
                m.multiply(std::hint::black_box(&work));
            }
            let ps =
                start.elapsed().as_nanos() as f64 * 1000.0 / (ROUNDS * (leaf as u64).pow(3)) as f64;
            eprintln!("recmatmul: {ps:.0} ps per multiply-add");
        }
    }
}
