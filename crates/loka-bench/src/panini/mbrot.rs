//! mbrot (BenchErl, as Panini ran it: §5.3, Figure 9): a D×D image of the complex plane is split
//! into bands of rows among W Workers; for each of its pixels a Worker asks the one Mandel actor
//! whether the point belongs to the Mandelbrot set, and Mandel answers with the point's escape
//! iteration (at most `MAX_ITER`).
//!
//! Declared characteristics, as the paper's table: Worker ⟨false, _, high, high, low⟩ (Hub →
//! `Task`: it sends all its questions without waiting), Mandel ⟨false, _, low, low, low⟩
//! (Affinity → `Monitor`: under `auto` the asking Worker's thread does the check itself, the
//! paper's point). Mandel's loop is bounded by `MAX_ITER` (CPU low by §4.2's rule).
//!
//! Check: a Worker reports, once all its pixels are answered, how many answers it got, how many
//! points were in the set and an order-independent fingerprint of (pixel, escape iteration); all W
//! reports must equal a sequential computation of the same points (the check names the Workers
//! whose report differs). Messages: D² questions handled by Mandel and D² answers handled by the
//! Workers.

use super::{alive_since, noting, Gather, GatherMsg, Tally, LEAF};
use crate::verify::mix;
use crate::{await_result, Bench, Fault, Measured, Run, Size};
use loka::exec_policy::{Characteristics, Comm, Cpu, Par};
use loka::{Actor, ActorRef, Context, System};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "panini-mbrot",
    suite: "panini",
    about: "W Workers ask one Mandel actor about each pixel of a D×D image (2·D² messages)",
    run,
    faults: &[
        Fault::Drop,
        Fault::Duplicate,
        Fault::Misroute,
        Fault::WrongRule,
    ],
};

/// The escape bound: a point that has not left the radius-2 disc after this many steps is in the
/// set.
const MAX_ITER: u32 = 64;

/// Image side D and Workers W.
#[derive(Debug, Clone, Copy)]
struct Params {
    side: u32,
    workers: u32,
}

/// The paper gives no size for mbrot: both are ours.
fn of(size: Size) -> Params {
    size.pick(
        Params {
            side: 896,
            workers: 8,
        },
        Params {
            side: 1_024,
            workers: 64,
        },
    )
}

/// The point of pixel (x, y): the image spans [-2, 1] × [-1.5, 1.5].
fn point(side: u32, x: u32, y: u32) -> (f64, f64) {
    let scale = 3.0 / f64::from(side);
    (-2.0 + f64::from(x) * scale, -1.5 + f64::from(y) * scale)
}

/// The iteration at which z ← z² + c leaves the disc |z|² ≤ `radius2`, or `MAX_ITER`.
fn escape(c: (f64, f64), radius2: f64) -> u32 {
    let (mut zr, mut zi) = (0.0f64, 0.0f64);
    for i in 0..MAX_ITER {
        let (r2, i2) = (zr * zr, zi * zi);
        if r2 + i2 > radius2 {
            return i;
        }
        zi = 2.0 * zr * zi + c.1;
        zr = r2 - i2 + c.0;
    }
    MAX_ITER
}

/// The rows of Worker `w`: an equal band, the last Workers taking one row fewer when W does not
/// divide D.
fn band(p: Params, w: u32) -> std::ops::Range<u32> {
    let (base, extra) = (p.side / p.workers, p.side % p.workers);
    let start = w * base + w.min(extra);
    start..start + base + u32::from(w < extra)
}

/// What a Worker reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Report {
    worker: u32,
    answers: u64,
    in_set: u64,
    /// The wrapping sum of `mix(pixel · 256 + escape)` over its answers.
    fingerprint: u64,
}

impl Report {
    fn add(&mut self, pixel: u32, iter: u32) {
        self.answers += 1;
        self.in_set += u64::from(iter == MAX_ITER);
        self.fingerprint = self
            .fingerprint
            .wrapping_add(mix(u64::from(pixel) << 8 | u64::from(iter)));
    }
}

/// A question to Mandel: is the point of `pixel` in the set? The answer goes to `reply`.
struct Check {
    pixel: u32,
    c: (f64, f64),
    reply: ActorRef<WorkerMsg>,
}

/// The one Mandel actor: answers each question with the point's escape iteration.
struct Mandel {
    handled: u64,
    tally: Tally,
    /// [`Fault::WrongRule`]: it tests |z|² > 2 instead of > 4.
    wrong: bool,
}

impl Actor for Mandel {
    type Msg = Check;

    fn handle(&mut self, _ctx: &mut Context<Self>, msg: Check) {
        self.handled += 1;
        let radius2 = if self.wrong { 2.0 } else { 4.0 };
        let iter = escape(msg.c, radius2);
        // A Worker stops once it has all its answers: only an extra one can find it gone.
        let _ = msg.reply.send(WorkerMsg::Answer {
            pixel: msg.pixel,
            iter,
        });
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.tally.fetch_add(self.handled, Ordering::Relaxed);
    }

    /// ⟨false, _, low, low, low⟩ (Figure 9): Affinity → `Monitor`.
    fn characteristics() -> Option<Characteristics> {
        Some(LEAF)
    }
}

/// A message to a Worker.
enum WorkerMsg {
    /// From the driver: ask about every pixel of the band.
    Go,
    /// From Mandel.
    Answer { pixel: u32, iter: u32 },
}

/// A Worker: asks Mandel about each pixel of its band, then collects the answers, reports them
/// and stops.
struct Worker {
    params: Params,
    report: Report,
    pixels: u64,
    mandel: ActorRef<Check>,
    gather: ActorRef<GatherMsg<Report>>,
    handled: u64,
    tally: Tally,
    /// The injected fault (Worker 0 only), on the question about its first pixel:
    /// [`Fault::Drop`]: not sent; [`Fault::Duplicate`]: sent twice; [`Fault::Misroute`]: its
    /// answer is to go to `next` (Worker 1).
    fault: Fault,
    next: Option<ActorRef<WorkerMsg>>,
}

impl Actor for Worker {
    type Msg = WorkerMsg;

    fn handle(&mut self, ctx: &mut Context<Self>, msg: WorkerMsg) {
        match msg {
            WorkerMsg::Go => {
                let p = self.params;
                let rows = band(p, self.report.worker);
                self.pixels = u64::from(rows.len() as u32 * p.side);
                let first = rows.start * p.side;
                let me = ctx.myself();
                for y in rows {
                    for x in 0..p.side {
                        let pixel = y * p.side + x;
                        let (copies, reply) = match self.fault {
                            Fault::Drop if pixel == first => (0, &me),
                            Fault::Duplicate if pixel == first => (2, &me),
                            Fault::Misroute if pixel == first => {
                                (1, self.next.as_ref().unwrap_or(&me))
                            }
                            _ => (1, &me),
                        };
                        for _ in 0..copies {
                            self.mandel
                                .send(Check {
                                    pixel,
                                    c: point(p.side, x, y),
                                    reply: reply.clone(),
                                })
                                .expect("mandel alive");
                        }
                    }
                }
                self.next = None;
            }
            WorkerMsg::Answer { pixel, iter } => {
                self.handled += 1;
                self.report.add(pixel, iter);
            }
        }
        if self.report.answers == self.pixels {
            let _ = self.gather.send(GatherMsg::Report(self.report));
            ctx.stop();
        }
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.tally.fetch_add(self.handled, Ordering::Relaxed);
    }

    /// ⟨false, _, high, high, low⟩ (Figure 9): Hub → `Task`.
    fn characteristics() -> Option<Characteristics> {
        Some(Characteristics::new(Par::High, Comm::High, Cpu::Low))
    }
}

/// The reports a correct run gives, computed sequentially.
fn expected_reports(p: Params) -> Vec<Report> {
    (0..p.workers)
        .map(|w| {
            let mut report = Report {
                worker: w,
                ..Report::default()
            };
            for y in band(p, w) {
                for x in 0..p.side {
                    report.add(y * p.side + x, escape(point(p.side, x, y), 4.0));
                }
            }
            report
        })
        .collect()
}

fn run(system: &System, run: &Run) -> Measured {
    let p = of(run.size);
    noting(measure(system, run, p), p)
}

fn measure(system: &System, run: &Run, p: Params) -> Measured {
    system.run_until_idle();
    let before = system.stats();
    let tally = Tally::default();
    let gather = system.spawn(Gather::<Report>::new());
    let mandel = system.spawn(Mandel {
        handled: 0,
        tally: Arc::clone(&tally),
        wrong: run.injects(Fault::WrongRule),
    });
    // Spawned last to first, so that Worker 0 can be given Worker 1's address (a misroute).
    let mut workers: Vec<ActorRef<WorkerMsg>> = Vec::with_capacity(p.workers as usize);
    for w in (0..p.workers).rev() {
        let faulty = w == 0 && run.fault != Fault::WrongRule;
        let next = if faulty {
            workers.last().cloned()
        } else {
            None
        };
        workers.push(system.spawn(Worker {
            params: p,
            report: Report {
                worker: w,
                ..Report::default()
            },
            pixels: u64::MAX,
            mandel: mandel.clone(),
            gather: gather.clone(),
            handled: 0,
            tally: Arc::clone(&tally),
            fault: if faulty { run.fault } else { Fault::None },
            next,
        }));
    }
    workers.reverse();
    drop(mandel);
    system.run_until_idle();
    let start = Instant::now();
    let pending = gather
        .ask(|done| GatherMsg::Arm {
            expected: p.workers as usize,
            done,
        })
        .expect("fresh actor");
    drop(gather);
    for worker in &workers {
        worker.send(WorkerMsg::Go).expect("fresh actor");
    }
    let reports = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    // A Worker that never completed (a lost answer) is stopped here.
    for worker in &workers {
        worker.stop();
    }
    drop(workers);
    system.run_until_idle();
    let counted = tally.load(Ordering::Relaxed);
    let mut reports = match reports {
        Ok(reports) => reports,
        Err(reason) => return Measured::failed(counted, elapsed, reason),
    };
    reports.sort_by_key(|r| r.worker);
    let expected = expected_reports(p);
    // The Workers whose report differs from the sequential one.
    let workers_off: Vec<u32> = reports
        .iter()
        .filter(|r| expected.get(r.worker as usize) != Some(*r))
        .map(|r| r.worker)
        .collect();
    let pixels = u64::from(p.side) * u64::from(p.side);
    Measured::checked(
        counted,
        elapsed,
        (reports.len(), workers_off, alive_since(system, &before)),
        (p.workers as usize, Vec::new(), 0),
    )
    .with_message_count(2 * pixels, "2·D² = ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_cover_the_image_and_small_runs_verify_and_faults_fail() {
        let p = Params {
            side: 21,
            workers: 4,
        };
        let rows: Vec<u32> = (0..p.workers).flat_map(|w| band(p, w)).collect();
        assert_eq!(rows, (0..p.side).collect::<Vec<_>>());
        // Some points are in the set, not all.
        let whole = expected_reports(Params {
            side: 96,
            workers: 1,
        });
        assert!(
            whole[0].in_set > 0 && whole[0].in_set < 96 * 96,
            "{whole:?}"
        );
        let m = measure(
            &loka::System::builder().workers(2).build().unwrap(),
            &Run::new(Size::Quick),
            p,
        );
        assert!(m.verified, "{}", m.check);
        assert_eq!(m.messages, 2 * 21 * 21);
        for &fault in BENCH.faults {
            let system = loka::System::builder().workers(2).build().unwrap();
            let m = measure(&system, &Run::new(Size::Quick).with_fault(fault), p);
            assert!(!m.verified, "{fault:?}: {}", m.check);
        }
    }
}
