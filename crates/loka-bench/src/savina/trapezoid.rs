//! Trapezoidal Approximation: W workers each integrate a share of N trapezoids of
//! f(x) = sin(x³ − 1) / (x + 1) · √(1 + e^√(2x)) over [1, 5] and a master sums their areas
//! (Savina #28).

use crate::{Bench, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "trapezoid",
    suite: "savina",
    about: "W workers integrate N trapezoids of Savina's f(x) on [1, 5] (2·W messages)",
    run,
    faults: &[],
};

/// Savina's left and right end-points.
const LEFT: f64 = 1.0;
const RIGHT: f64 = 5.0;

/// Savina's integrand.
fn fx(x: f64) -> f64 {
    let a = (x * x * x - 1.0).sin();
    let b = x + 1.0;
    let c = a / b;
    let d = (1.0 + (2.0 * x).sqrt().exp()).sqrt();
    c * d
}

/// The x of piece boundary `k` (of `pieces`) on [LEFT, RIGHT].
fn boundary(k: u64, h: f64) -> f64 {
    LEFT + k as f64 * h
}

/// What the master answers the driver.
struct Area {
    area: f64,
    results: usize,
    messages: u64,
}

enum MasterMsg {
    /// Set-up: the workers.
    Workers(Vec<ActorRef<WorkerMsg>>),
    /// The driver's request: integrate `pieces` trapezoids.
    Start { pieces: u64, done: ReplyTo<Area> },
    /// A worker's area.
    Result(f64),
}

enum WorkerMsg {
    /// Integrate pieces `first..first + count` of width `h`.
    Work { first: u64, count: u64, h: f64 },
}

struct Master {
    workers: Vec<ActorRef<WorkerMsg>>,
    area: f64,
    results: usize,
    messages: u64,
    done: Option<ReplyTo<Area>>,
}

impl Actor for Master {
    type Msg = MasterMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: MasterMsg) {
        match msg {
            MasterMsg::Workers(workers) => self.workers = workers,
            MasterMsg::Start { pieces, done } => {
                self.done = Some(done);
                let h = (RIGHT - LEFT) / pieces as f64;
                let w = self.workers.len() as u64;
                for (i, worker) in self.workers.iter().enumerate() {
                    let i = i as u64;
                    // Whole pieces per worker (Savina divides the interval and truncates
                    // (r − l) / h, which can drop a piece to rounding).
                    let first = i * pieces / w;
                    let count = (i + 1) * pieces / w - first;
                    worker
                        .send(WorkerMsg::Work { first, count, h })
                        .expect("worker alive");
                    self.messages += 1;
                }
            }
            MasterMsg::Result(area) => {
                self.messages += 1;
                self.results += 1;
                self.area += area;
                if self.results == self.workers.len() {
                    if let Some(done) = self.done.take() {
                        done.send(Area {
                            area: self.area,
                            results: self.results,
                            messages: self.messages,
                        });
                    }
                    ctx.stop();
                }
            }
        }
    }
}

struct Worker {
    master: ActorRef<MasterMsg>,
}

impl Actor for Worker {
    type Msg = WorkerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: WorkerMsg) {
        let WorkerMsg::Work { first, count, h } = msg;
        let mut area = 0.0;
        for k in first..first + count {
            let lx = boundary(k, h);
            let rx = lx + h;
            area += 0.5 * (fx(lx) + fx(rx)) * h;
        }
        // The master may already have stopped if it failed; nothing to do then.
        let _ = self.master.send(MasterMsg::Result(area));
        ctx.stop();
    }
}

/// Pieces at most for the sequential reference (more would double a `full` run's time).
const REFERENCE_PIECES: u64 = 1 << 22;

/// The sequential trapezoid sum over min(`pieces`, 2²²) pieces: for `quick` exactly the
/// workload's pieces; for `full` a sum whose discretisation error (≈ 10⁻¹⁰ relative) is far
/// below the check's tolerance.
fn reference(pieces: u64) -> f64 {
    let n = pieces.min(REFERENCE_PIECES);
    let h = (RIGHT - LEFT) / n as f64;
    let mut sum = 0.5 * (fx(LEFT) + fx(RIGHT));
    for k in 1..n {
        sum += fx(boundary(k, h));
    }
    sum * h
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    let (workers, pieces) = size.pick((100, 4_000_000u64), (4_000, 400_000_000));
    let master = system.spawn(Master {
        workers: Vec::new(),
        area: 0.0,
        results: 0,
        messages: 0,
        done: None,
    });
    let refs = (0..workers)
        .map(|_| {
            system.spawn(Worker {
                master: master.clone(),
            })
        })
        .collect();
    master.send(MasterMsg::Workers(refs)).expect("fresh actor");
    system.run_until_idle();
    let start = Instant::now();
    let result = master
        .ask(|done| MasterMsg::Start { pieces, done })
        .expect("fresh actor")
        .wait();
    let elapsed = start.elapsed();
    let expected_messages = 2 * workers as u64;
    let Ok(got) = result else {
        return Measured {
            messages: expected_messages,
            elapsed,
            verified: false,
            check: "the master never answered".to_owned(),
        };
    };
    let want = reference(pieces);
    let relative = ((got.area - want) / want).abs();
    let verified = relative <= 1e-6 && got.results == workers && got.messages == expected_messages;
    Measured {
        messages: got.messages,
        elapsed,
        verified,
        check: format!(
            "area {:.12} vs sequential {:.12} (relative {relative:.1e}, limit 1e-6); \
             {} of {workers} results, {} messages (expected {expected_messages})",
            got.area, want, got.results, got.messages
        ),
    }
}
