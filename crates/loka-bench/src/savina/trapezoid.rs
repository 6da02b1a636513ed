//! Trapezoidal Approximation: W workers each integrate a share of N trapezoids of
//! f(x) = sin(x³ − 1) / (x + 1) · √(1 + e^√(2x)) over [1, 5] and a master sums their areas
//! (Savina #28).

use crate::{await_result, Bench, Fault, Measured, Run};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "trapezoid",
    suite: "savina",
    about: "W workers integrate N trapezoids of Savina's f(x) on [1, 5] (2·W messages)",
    run,
    faults: &[Fault::Drop, Fault::WrongRule],
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

/// The trapezoid of piece `k` (two evaluations of f, as in Savina).
fn piece(k: u64, h: f64) -> f64 {
    let lx = boundary(k, h);
    let rx = lx + h;
    0.5 * (fx(lx) + fx(rx)) * h
}

/// The area of pieces `first..end`, summed in order: what a worker computes, and the sequential
/// reference for it.
/// What one piece of [`pieces_area`] takes on this project's host, declared to the simulation
/// engine with `ctx.charge` (docs/simulation.md). Measured with `cargo test --release -p
/// loka-bench --lib piece_cost -- --ignored --nocapture --test-threads=1`: the least of six runs on
/// 2026-11-24 (22.2 ns; the others up to 44 ns on the loaded host).
const PIECE_PS: u64 = 22_160;

/// The declared compute of `pieces` pieces.
fn pieces_cost(pieces: u64) -> std::time::Duration {
    std::time::Duration::from_nanos(pieces * PIECE_PS / 1_000)
}

fn pieces_area(first: u64, end: u64, h: f64, mut area: f64) -> f64 {
    for k in first..end {
        area += piece(k, h);
    }
    area
}

/// Worker `i`'s pieces of `pieces` split among `w` workers: whole pieces each (Savina divides the
/// interval and truncates (r − l) / h, which can drop a piece to rounding).
fn share(i: u64, w: u64, pieces: u64) -> (u64, u64) {
    (i * pieces / w, (i + 1) * pieces / w)
}

/// What the master answers the driver: every worker's area, by worker, their sum in worker order,
/// and the messages the master sent and handled.
struct Areas {
    areas: Vec<Option<f64>>,
    total: f64,
    messages: u64,
}

enum MasterMsg {
    /// Set-up: the workers.
    Workers(Vec<ActorRef<WorkerMsg>>),
    /// The driver's request: integrate `pieces` trapezoids.
    Start { pieces: u64, done: ReplyTo<Areas> },
    /// Worker `.0`'s area.
    Result(usize, f64),
}

enum WorkerMsg {
    /// Integrate pieces `first..end` of width `h`.
    Work { first: u64, end: u64, h: f64 },
}

struct Master {
    workers: Vec<ActorRef<WorkerMsg>>,
    areas: Vec<Option<f64>>,
    results: usize,
    messages: u64,
    done: Option<ReplyTo<Areas>>,
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
                self.areas = vec![None; self.workers.len()];
                for (i, worker) in self.workers.iter().enumerate() {
                    let (first, end) = share(i as u64, w, pieces);
                    worker
                        .send(WorkerMsg::Work { first, end, h })
                        .expect("worker alive");
                    self.messages += 1;
                }
            }
            MasterMsg::Result(index, area) => {
                self.messages += 1;
                self.results += 1;
                self.areas[index] = Some(area);
                if self.results == self.workers.len() {
                    // Summed in worker order, so the total does not depend on arrival order.
                    let total = self.areas.iter().map(|a| a.unwrap_or(f64::NAN)).sum();
                    if let Some(done) = self.done.take() {
                        done.send(Areas {
                            areas: std::mem::take(&mut self.areas),
                            total,
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
    index: usize,
    master: ActorRef<MasterMsg>,
    /// The defect to inject ([`Fault::None`] in a real run).
    fault: Fault,
}

impl Worker {
    /// Fault injection: the first piece is lost, or evaluated at the next piece's place.
    #[cold]
    fn faulty_first_piece(&self, first: u64, h: f64) -> f64 {
        match self.fault {
            Fault::Drop => 0.0,
            Fault::WrongRule => piece(first + 1, h),
            _ => piece(first, h),
        }
    }
}

impl Actor for Worker {
    type Msg = WorkerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: WorkerMsg) {
        let WorkerMsg::Work { first, end, h } = msg;
        let area = if self.fault == Fault::None || first == end {
            pieces_area(first, end, h, 0.0)
        } else {
            pieces_area(first + 1, end, h, self.faulty_first_piece(first, h))
        };
        ctx.charge(pieces_cost(end - first));
        // The master may already have stopped if it failed; nothing to do then.
        let _ = self.master.send(MasterMsg::Result(self.index, area));
        ctx.stop();
    }
}

/// Pieces at most for the coarse sequential reference of the total.
const REFERENCE_PIECES: u64 = 1 << 22;

/// A sequential trapezoid sum over min(`pieces`, 2²²) pieces, summed another way (each interior
/// point once); for `full` its discretisation error (≈ 10⁻¹⁰ relative) is far below the check's
/// tolerance.
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
    let (workers, pieces) = run.pick((100, 6_000_000u64), (4_000, 400_000_000));
    // Workers whose area is recomputed sequentially: all for `quick`; every 16th for `full`
    // (all of them would double a `full` run's time), the total then checked against a coarse
    // reference.
    let stride = run.pick(1, 16);
    let master = system.spawn(Master {
        workers: Vec::new(),
        areas: Vec::new(),
        results: 0,
        messages: 0,
        done: None,
    });
    let refs = (0..workers)
        .map(|index| {
            system.spawn(Worker {
                index,
                master: master.clone(),
                fault: if index == 0 { run.fault } else { Fault::None },
            })
        })
        .collect();
    master.send(MasterMsg::Workers(refs)).expect("fresh actor");
    system.run_until_idle();
    let start = Instant::now();
    let pending = master
        .ask(|done| MasterMsg::Start { pieces, done })
        .expect("fresh actor");
    let result = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    let got = match result {
        Ok(got) => got,
        Err(reason) => return Measured::failed(0, elapsed, reason),
    };
    let h = (RIGHT - LEFT) / pieces as f64;
    let w = workers as u64;
    // The sampled workers' areas, recomputed sequentially.
    let expected: Vec<(usize, f64)> = (0..workers)
        .step_by(stride)
        .map(|i| {
            let (first, end) = share(i as u64, w, pieces);
            (i, pieces_area(first, end, h, 0.0))
        })
        .collect();
    let differing = expected
        .iter()
        .filter(|&&(i, area)| got.areas[i].map(f64::to_bits) != Some(area.to_bits()))
        .count();
    let reported = got.areas.iter().filter(|a| a.is_some()).count();
    let (total_ok, total_check) = if stride == 1 {
        // Every area recomputed: the total must be their sum in worker order, bit for bit.
        let want: f64 = expected.iter().map(|&(_, area)| area).sum();
        let same = got.total.to_bits() == want.to_bits();
        (
            same,
            format!(
                "total {:.12} {} the sequential sum over the same partition bit for bit",
                got.total,
                if same { "equals" } else { "DIFFERS from" }
            ),
        )
    } else {
        let want = reference(pieces);
        let relative = ((got.total - want) / want).abs();
        (
            relative <= 1e-6,
            format!(
                "total {:.12} vs a sequential {:.12} over {} pieces (relative {relative:.1e}, \
                 limit 1e-6)",
                got.total,
                want,
                pieces.min(REFERENCE_PIECES)
            ),
        )
    };
    let sampled = workers.div_ceil(stride);
    Measured {
        messages: got.messages,
        elapsed,
        verified: differing == 0 && reported == workers && total_ok,
        check: format!(
            "{reported} of {workers} areas reported; {differing} of {sampled} recomputed \
             sequentially (the same pieces, in the same order) differ bit for bit; {total_check}"
        ),
    }
    .with_message_count(2 * workers as u64, "2·W = ")
}

#[cfg(test)]
mod cost_tests {
    use super::*;

    /// The per-piece cost of the integration, for [`PIECE_PS`].
    #[test]
    #[ignore = "a measurement, not a test"]
    fn piece_cost_per_piece() {
        let pieces = 2_000_000;
        let h = (RIGHT - LEFT) / pieces as f64;
        for _ in 0..3 {
            let start = Instant::now();
            std::hint::black_box(pieces_area(0, std::hint::black_box(pieces), h, 0.0));
            let ps = start.elapsed().as_nanos() as f64 / pieces as f64 * 1000.0;
            eprintln!("trapezoid: {ps:.0} ps per piece");
        }
    }
}
