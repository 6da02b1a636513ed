//! polynomial integral (Actor Collections' PolynomialIntegral, as Panini ran it: §5.3, Figure 11):
//! a DispatcherActor splits the integral of a polynomial over [a, b] into A equal pieces and hands
//! one to each of A ComputeActors, which integrate their piece with S steps of Simpson's rule
//! (small work each) and pass the partial result to the DelegateActor, which adds them up.
//!
//! The polynomial is p(x) = 4x³ − 3x² + 2x + 1 over [−1, 2] (ours: the paper names none), whose
//! integral is 12; Simpson's rule is exact for cubics, so only rounding separates the sum from it.
//!
//! Declared characteristics, as the paper's table: DispatcherActor ⟨false, _, high, high, low⟩
//! (Hub → `Task`), ComputeActor ⟨false, _, low, low, low⟩ (Affinity → `Monitor`: under `auto` the
//! Dispatcher's thread integrates the pieces inline), DelegateActor ⟨false, _, low, low, low⟩
//! (Affinity → `Monitor`). A ComputeActor's result goes to the DelegateActor (in Panini it is the
//! value its procedure returns).
//!
//! Check: the DelegateActor stores each partial at its piece's index and, once all A are in, adds
//! them in index order, so the sum is bit for bit the sum of the same A partials computed
//! sequentially; every piece must come back once, from the actor it was meant for. The sum is
//! also compared with the closed-form integral, within 10⁻¹⁰ relative. Messages: A pieces and A
//! partials: 2·A.

use super::{alive_since, noting, Tally, LEAF};
use crate::{await_result, Bench, Fault, Measured, Run, Size};
use loka::exec_policy::{Characteristics, Comm, Cpu, Par};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "panini-polynomial",
    suite: "panini",
    about: "a DispatcherActor splits a polynomial's integral over A ComputeActors; a DelegateActor adds up (2·A messages)",
    run,
    faults: &[
        Fault::Drop,
        Fault::Duplicate,
        Fault::Misroute,
        Fault::WrongRule,
    ],
};

/// p's coefficients, constant term first.
const POLY: [f64; 4] = [1.0, 2.0, -3.0, 4.0];

/// The interval of integration.
const FROM: f64 = -1.0;
const TO: f64 = 2.0;

/// ComputeActors A (one piece each) and Simpson steps per piece S.
#[derive(Debug, Clone, Copy)]
struct Params {
    actors: usize,
    steps: u32,
}

/// `full`: the paper's 500 ComputeActors (§5.3); the steps are ours.
fn of(size: Size) -> Params {
    size.pick(
        Params {
            actors: 100,
            steps: 500_000,
        },
        Params {
            actors: 500,
            steps: 2_000,
        },
    )
}

/// p(x), by Horner's rule.
fn p(x: f64) -> f64 {
    POLY.iter().rev().fold(0.0, |acc, &c| acc * x + c)
}

/// The closed form: Σ c_k (b^{k+1} − a^{k+1}) / (k + 1).
fn exact() -> f64 {
    POLY.iter()
        .enumerate()
        .map(|(k, &c)| {
            let e = k as i32 + 1;
            c * (TO.powi(e) - FROM.powi(e)) / f64::from(e)
        })
        .sum()
}

/// Piece `i` of `n`: [lo, hi).
fn piece(i: usize, n: usize) -> (f64, f64) {
    let width = (TO - FROM) / n as f64;
    (FROM + i as f64 * width, FROM + (i + 1) as f64 * width)
}

/// Simpson's rule with `steps` steps over [lo, hi]: each step adds h/6·(p(x) + 4p(x + h/2) +
/// p(x + h)). [`Fault::WrongRule`] uses the trapezoid rule's weights (1, 0, 1)·h/2 instead.
fn integrate(lo: f64, hi: f64, steps: u32, wrong: bool) -> f64 {
    let h = (hi - lo) / f64::from(steps);
    let (ends, middle, scale) = if wrong {
        (1.0, 0.0, h / 2.0)
    } else {
        (1.0, 4.0, h / 6.0)
    };
    (0..steps)
        .map(|j| {
            let x = lo + f64::from(j) * h;
            ends * (p(x) + p(x + h)) + middle * p(x + 0.5 * h)
        })
        .sum::<f64>()
        * scale
}

/// A message to the DispatcherActor.
enum DispatcherMsg {
    /// From the driver: split the integral among the ComputeActors.
    Integrate,
}

/// The DispatcherActor: sends each ComputeActor its piece.
struct Dispatcher {
    computers: Vec<ActorRef<Piece>>,
    steps: u32,
    /// The injected fault, on piece 0: [`Fault::Drop`]: not sent; [`Fault::Duplicate`]: sent
    /// twice; [`Fault::Misroute`]: sent to ComputeActor 1.
    fault: Fault,
}

impl Actor for Dispatcher {
    type Msg = DispatcherMsg;

    fn handle(&mut self, ctx: &mut Context<Self>, DispatcherMsg::Integrate: DispatcherMsg) {
        let n = self.computers.len();
        for (index, computer) in self.computers.iter().enumerate() {
            let (lo, hi) = piece(index, n);
            let (to, copies) = match self.fault {
                Fault::Drop if index == 0 => (computer, 0),
                Fault::Duplicate if index == 0 => (computer, 2),
                Fault::Misroute if index == 0 => (&self.computers[1 % n], 1),
                _ => (computer, 1),
            };
            for _ in 0..copies {
                to.send(Piece {
                    index,
                    lo,
                    hi,
                    steps: self.steps,
                })
                .expect("computer alive");
            }
        }
        // Its ComputeActors stop once it is gone and their pieces are done.
        ctx.stop();
    }

    /// ⟨false, _, high, high, low⟩ (Figure 11): Hub → `Task`.
    fn characteristics() -> Option<Characteristics> {
        Some(Characteristics::new(Par::High, Comm::High, Cpu::Low))
    }
}

/// A piece of the integral.
struct Piece {
    index: usize,
    lo: f64,
    hi: f64,
    steps: u32,
}

/// A ComputeActor: integrates each piece it gets and passes the result on; it stops once the
/// DispatcherActor is gone (unreferenced), so an extra piece is still computed and counted.
struct Computer {
    index: usize,
    delegate: ActorRef<DelegateMsg>,
    handled: u64,
    tally: Tally,
    /// [`Fault::WrongRule`] (ComputeActor 0 only).
    wrong: bool,
}

impl Actor for Computer {
    type Msg = Piece;

    fn handle(&mut self, _ctx: &mut Context<Self>, piece: Piece) {
        self.handled += 1;
        let value = integrate(piece.lo, piece.hi, piece.steps, self.wrong);
        // The DelegateActor stops once it has every piece: only an extra one can find it gone.
        let _ = self.delegate.send(DelegateMsg::Partial {
            piece: piece.index,
            by: self.index,
            value,
        });
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.tally.fetch_add(self.handled, Ordering::Relaxed);
    }

    /// ⟨false, _, low, low, low⟩ (Figure 11): Affinity → `Monitor`.
    fn characteristics() -> Option<Characteristics> {
        Some(LEAF)
    }
}

/// What the DelegateActor computed.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Sum {
    /// The partials added in piece order.
    value: f64,
    /// Partials for a piece that had one already.
    repeated: usize,
    /// Partials computed by another actor than the piece's.
    foreign: usize,
}

/// A message to the DelegateActor.
enum DelegateMsg {
    /// From the driver: answer once every piece is in.
    Arm(ReplyTo<Sum>),
    Partial {
        piece: usize,
        by: usize,
        value: f64,
    },
}

/// The DelegateActor: stores the partials by piece, adds them once all are in.
struct Delegate {
    partials: Vec<Option<f64>>,
    left: usize,
    repeated: usize,
    foreign: usize,
    done: Option<ReplyTo<Sum>>,
    handled: u64,
    tally: Tally,
}

impl Actor for Delegate {
    type Msg = DelegateMsg;

    fn handle(&mut self, ctx: &mut Context<Self>, msg: DelegateMsg) {
        match msg {
            DelegateMsg::Arm(done) => self.done = Some(done),
            DelegateMsg::Partial { piece, by, value } => {
                self.handled += 1;
                self.foreign += usize::from(by != piece);
                match &mut self.partials[piece] {
                    Some(_) => self.repeated += 1,
                    slot => {
                        *slot = Some(value);
                        self.left -= 1;
                    }
                }
            }
        }
        if self.left == 0 {
            if let Some(done) = self.done.take() {
                done.send(Sum {
                    value: self.partials.iter().map(|v| v.unwrap_or(0.0)).sum(),
                    repeated: self.repeated,
                    foreign: self.foreign,
                });
                ctx.stop();
            }
        }
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.tally.fetch_add(self.handled, Ordering::Relaxed);
    }

    /// ⟨false, _, low, low, low⟩ (Figure 11): Affinity → `Monitor`.
    fn characteristics() -> Option<Characteristics> {
        Some(LEAF)
    }
}

/// The sum a correct run gives: the same partials, computed sequentially, added in order.
fn expected(p: Params) -> f64 {
    (0..p.actors)
        .map(|i| {
            let (lo, hi) = piece(i, p.actors);
            integrate(lo, hi, p.steps, false)
        })
        .sum()
}

fn run(system: &System, run: &Run) -> Measured {
    let p = of(run.size);
    noting(measure(system, run, p), p)
}

fn measure(system: &System, run: &Run, p: Params) -> Measured {
    system.run_until_idle();
    let before = system.stats();
    let tally = Tally::default();
    let delegate = system.spawn(Delegate {
        partials: vec![None; p.actors],
        left: p.actors,
        repeated: 0,
        foreign: 0,
        done: None,
        handled: 0,
        tally: Arc::clone(&tally),
    });
    let computers = (0..p.actors)
        .map(|index| {
            system.spawn(Computer {
                index,
                delegate: delegate.clone(),
                handled: 0,
                tally: Arc::clone(&tally),
                wrong: index == 0 && run.injects(Fault::WrongRule),
            })
        })
        .collect();
    let dispatcher = system.spawn(Dispatcher {
        computers,
        steps: p.steps,
        fault: run.fault,
    });
    system.run_until_idle();
    let start = Instant::now();
    let pending = delegate.ask(DelegateMsg::Arm).expect("fresh actor");
    drop(delegate);
    dispatcher
        .send(DispatcherMsg::Integrate)
        .expect("fresh actor");
    drop(dispatcher);
    let sum = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    system.run_until_idle();
    let counted = tally.load(Ordering::Relaxed);
    let sum = match sum {
        Ok(sum) => sum,
        Err(reason) => return Measured::failed(counted, elapsed, reason),
    };
    let exact = exact();
    let close = ((sum.value - exact) / exact).abs() <= 1e-10;
    let mut m = Measured::checked(
        counted,
        elapsed,
        (sum, close, alive_since(system, &before)),
        (
            Sum {
                value: expected(p),
                repeated: 0,
                foreign: 0,
            },
            true,
            0,
        ),
    )
    .with_message_count(2 * p.actors as u64, "2·A = ");
    m.check = format!("{}; closed form {exact}", m.check);
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pieces_add_up_to_the_closed_form() {
        // ∫₋₁² p = [x⁴ − x³ + x² + x]₋₁² = 15 − 9 + 3 + 3.
        assert!((exact() - 12.0).abs() < 1e-12, "{}", exact());
        for p in [of(Size::Quick), of(Size::Full)] {
            assert!(((expected(p) - exact()) / exact()).abs() < 1e-10, "{p:?}");
        }
        // The wrong rule is visibly wrong.
        let (lo, hi) = piece(0, 100);
        assert!((integrate(lo, hi, 200, true) - integrate(lo, hi, 200, false)).abs() > 1e-9);
    }

    #[test]
    fn small_runs_verify_and_faults_fail() {
        let p = Params {
            actors: 12,
            steps: 50,
        };
        let m = measure(
            &loka::System::builder().workers(2).build().unwrap(),
            &Run::new(Size::Quick),
            p,
        );
        assert!(m.verified, "{}", m.check);
        assert_eq!(m.messages, 24);
        for &fault in BENCH.faults {
            let system = loka::System::builder().workers(2).build().unwrap();
            let m = measure(&system, &Run::new(Size::Quick).with_fault(fault), p);
            assert!(!m.verified, "{fault:?}: {}", m.check);
        }
    }
}
