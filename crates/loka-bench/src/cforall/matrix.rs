//! Matrix multiply (Cforall, "Performance: Matrix Multiply"): Z = X·Y for two n×n matrices, one
//! actor per row of X. The driver sends each actor a message naming its row; the actor computes
//! that row of Z, sends it to a collector and stops. The work is the arithmetic, not the
//! messages: the benchmark measures how well the workers share it out.
//!
//! The inputs are X[r][c] = r + 2c and Y[c][k] = 3c + k + 1 in 32-bit unsigned arithmetic
//! (wrapping), so every entry of the product has a closed form:
//! Z[r][k] = 3r·S₁ + n·r·(k + 1) + 6·S₂ + 2(k + 1)·S₁ with S₁ = Σc = n(n − 1)/2 and
//! S₂ = Σc² = (n − 1)n(2n − 1)/6 (mod 2³²).
//!
//! Check: the collector keeps each row once (a row that arrives twice counts as a duplicate) and
//! the calling thread compares every entry of Z with the closed form. A lost request stops the run
//! (the system goes idle without a result); a wrongly computed or misplaced row fails the
//! comparison.

use super::noting;
use crate::{await_result, Bench, Fault, Measured, Run, Size};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::sync::Arc;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "cforall-matrix",
    suite: "cforall",
    about: "Z = X·Y for n×n matrices, one actor per row (2·n messages)",
    run,
    faults: &[Fault::Drop, Fault::Misroute, Fault::WrongRule],
};

/// Matrix size n (X, Y and Z are n×n).
#[derive(Debug, Clone, Copy)]
struct Params {
    n: usize,
}

fn of(size: Size) -> Params {
    Params {
        n: size.pick(1_024, 3_072),
    }
}

/// X and Y, row-major; shared read-only by the row actors.
struct Inputs {
    n: usize,
    x: Vec<u32>,
    y: Vec<u32>,
}

impl Inputs {
    fn new(n: usize) -> Inputs {
        let (mut x, mut y) = (Vec::with_capacity(n * n), Vec::with_capacity(n * n));
        for r in 0..n as u32 {
            for c in 0..n as u32 {
                x.push(r + 2 * c);
                y.push(3 * r + c + 1);
            }
        }
        Inputs { n, x, y }
    }
}

/// Z[r][k], from the closed form (see the module documentation).
fn expected_entry(n: u64, r: u64, k: u64) -> u32 {
    let s1 = n * (n - 1) / 2;
    let s2 = (n - 1) * n * (2 * n - 1) / 6;
    (3 * r * s1 + n * r * (k + 1) + 6 * s2 + 2 * (k + 1) * s1) as u32
}

/// Row `r` of X·Y: the rows of Y scaled by X[r][j] and summed, so both inputs are read along
/// their rows.
fn multiply_row(inputs: &Inputs, r: usize) -> Box<[u32]> {
    let n = inputs.n;
    let mut z = vec![0u32; n];
    for (j, &a) in inputs.x[r * n..(r + 1) * n].iter().enumerate() {
        for (z, &b) in z.iter_mut().zip(&inputs.y[j * n..(j + 1) * n]) {
            *z = z.wrapping_add(a.wrapping_mul(b));
        }
    }
    z.into_boxed_slice()
}

/// The injected [`Fault::WrongRule`]: X[r]·Yᵀ instead of X[r]·Y.
fn multiply_row_transposed(inputs: &Inputs, r: usize) -> Box<[u32]> {
    let n = inputs.n;
    let x = &inputs.x[r * n..(r + 1) * n];
    (0..n)
        .map(|k| {
            let y = &inputs.y[k * n..(k + 1) * n];
            x.iter()
                .zip(y)
                .fold(0u32, |z, (&a, &b)| z.wrapping_add(a.wrapping_mul(b)))
        })
        .collect()
}

/// Computes the row it is sent, hands it to the collector and stops.
struct RowActor {
    inputs: Arc<Inputs>,
    collector: ActorRef<CollectMsg>,
    /// [`Fault::WrongRule`] (row actor 0 only).
    wrong: bool,
}

impl Actor for RowActor {
    /// The row to compute.
    type Msg = usize;
    fn handle(&mut self, ctx: &mut Context<Self>, r: usize) {
        let row = if self.wrong {
            multiply_row_transposed(&self.inputs, r)
        } else {
            multiply_row(&self.inputs, r)
        };
        self.collector
            .send(CollectMsg::Row(r, row))
            .expect("collector alive");
        ctx.stop();
    }
}

enum CollectMsg {
    /// From the driver: answer once every row has arrived.
    Arm(ReplyTo<Product>),
    Row(usize, Box<[u32]>),
}

/// The rows of Z as they arrived.
#[derive(Debug)]
struct Product {
    rows: Vec<Option<Box<[u32]>>>,
    /// Rows that arrived again.
    duplicates: usize,
}

struct Collector {
    product: Product,
    left: usize,
    done: Option<ReplyTo<Product>>,
}

impl Actor for Collector {
    type Msg = CollectMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: CollectMsg) {
        match msg {
            CollectMsg::Arm(done) => self.done = Some(done),
            CollectMsg::Row(r, row) => match &mut self.product.rows[r] {
                Some(_) => self.product.duplicates += 1,
                slot => {
                    *slot = Some(row);
                    self.left -= 1;
                }
            },
        }
        if self.left == 0 {
            if let Some(done) = self.done.take() {
                let rows = std::mem::take(&mut self.product.rows);
                done.send(Product {
                    rows,
                    duplicates: self.product.duplicates,
                });
                ctx.stop();
            }
        }
    }
}

/// The product compared with the closed form.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    rows: usize,
    duplicates: usize,
    /// Entries of Z that differ from the closed form.
    entries_off: usize,
    /// Actors of the run still alive at the end.
    alive: u64,
}

fn run(system: &System, run: &Run) -> Measured {
    let p = of(run.size);
    noting(measure(system, run, p), p)
}

fn measure(system: &System, run: &Run, p: Params) -> Measured {
    let n = p.n;
    let inputs = Arc::new(Inputs::new(n));
    system.run_until_idle();
    let before = system.stats();
    let collector = system.spawn(Collector {
        product: Product {
            rows: vec![None; n],
            duplicates: 0,
        },
        left: n,
        done: None,
    });
    // One actor per row, created from here (placed round robin over the workers).
    let actors: Vec<ActorRef<usize>> = (0..n)
        .map(|r| {
            system.spawn(RowActor {
                inputs: Arc::clone(&inputs),
                collector: collector.clone(),
                wrong: r == 0 && run.injects(Fault::WrongRule),
            })
        })
        .collect();
    system.run_until_idle();
    let start = Instant::now();
    let pending = collector.ask(CollectMsg::Arm).expect("fresh actor");
    drop(collector);
    for (r, actor) in actors.iter().enumerate() {
        let to = match run.fault {
            // Row 0's request is not sent, or goes to row 1's actor.
            Fault::Drop if r == 0 => continue,
            Fault::Misroute if r == 0 => &actors[1 % n],
            _ => actor,
        };
        // Ignored failure: only after a misrouted request can an actor have stopped already.
        let _ = to.send(r);
    }
    let product = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    let product = match product {
        Ok(product) => product,
        Err(e) => {
            actors.iter().for_each(|a| {
                a.stop();
            });
            return Measured::failed(0, elapsed, e);
        }
    };
    drop(actors);
    system.run_until_idle();
    let mut rows = 0;
    let mut entries_off = 0;
    for (r, row) in product.rows.iter().enumerate() {
        let Some(row) = row else { continue };
        rows += 1;
        entries_off += (0..n)
            .filter(|&k| row.get(k) != Some(&expected_entry(n as u64, r as u64, k as u64)))
            .count();
    }
    let outcome = Outcome {
        rows,
        duplicates: product.duplicates,
        entries_off,
        alive: system
            .stats()
            .actors_live()
            .saturating_sub(before.actors_live()),
    };
    let expected = Outcome {
        rows: n,
        duplicates: 0,
        entries_off: 0,
        alive: 0,
    };
    // n requests handled by the row actors, n rows handled by the collector.
    let messages = 2 * (rows + product.duplicates) as u64;
    Measured::checked(messages, elapsed, outcome, expected)
        .with_message_count(2 * n as u64, "2·n = ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closed_form_is_the_product() {
        for n in [1, 2, 7, 33] {
            let inputs = Inputs::new(n);
            for r in 0..n {
                let row = multiply_row(&inputs, r);
                let naive: Vec<u32> = (0..n)
                    .map(|k| {
                        (0..n).fold(0u32, |z, c| {
                            z.wrapping_add(inputs.x[r * n + c].wrapping_mul(inputs.y[c * n + k]))
                        })
                    })
                    .collect();
                assert_eq!(&row[..], &naive[..], "n = {n}, row {r}");
                for (k, &z) in row.iter().enumerate() {
                    assert_eq!(
                        z,
                        expected_entry(n as u64, r as u64, k as u64),
                        "{n} {r} {k}"
                    );
                }
            }
        }
        // At the full size the entries exceed 32 bits; the closed form wraps like the product.
        let n = 3_072;
        let inputs = Inputs::new(n);
        let row = multiply_row(&inputs, n - 1);
        assert_eq!(
            row[n - 1],
            expected_entry(n as u64, n as u64 - 1, n as u64 - 1)
        );
    }

    #[test]
    fn small_runs_verify_and_faults_fail() {
        let p = Params { n: 24 };
        let system = loka::System::builder().workers(2).build().unwrap();
        let m = measure(&system, &Run::new(Size::Quick), p);
        assert!(m.verified, "{}", m.check);
        assert_eq!(m.messages, 48);
        for fault in BENCH.faults {
            let system = loka::System::builder().workers(2).build().unwrap();
            let m = measure(&system, &Run::new(Size::Quick).with_fault(*fault), p);
            assert!(!m.verified, "{fault:?}: {}", m.check);
        }
    }
}
