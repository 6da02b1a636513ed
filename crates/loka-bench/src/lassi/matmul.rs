//! Block matrix multiplication (LASSI, slides "Block Matrix Multiplication" and its "Locality"):
//! C = A·B for two random n×n matrices by the quadrant recursion
//! C_ij = A_i0·B_0j + A_i1·B_1j — eight multiplications of half-size blocks, which run in
//! parallel, then four additions, which run in parallel too — down to leaf blocks of side L,
//! which are multiplied directly.
//!
//! Every operation is an actor. A multiplication actor started on a block bigger than a leaf
//! spawns the four addition actors of its quadrants and the eight multiplications feeding them,
//! starts the eight, and once the four sums are back hands its product (a quadtree of blocks) on
//! to the addition that needs it, or, at the root, to a collector. A leaf multiplication computes
//! its block and hands it on. Quadrant q = 2i + j is C_ij.
//!
//! Hints (`Variant`), on P places; the root multiplication is on place 0:
//! * best: the slides' — every operation of quadrants 0 and 3 on place 0, of quadrants 1 and 2
//!   on place 1, all the way down (with more places the recursion keeps splitting: quadrants 0
//!   and 3 take the first half of the node's places, 1 and 2 the second half);
//! * worst: a quadrant's operations on different places: in a node on place p, quadrant q's
//!   first multiplication on c = p + [0, 1, 1, 0][q], its second and its addition on c + 1
//!   (mod P), so that every addition has one operand from another place and the places still
//!   get equal shares;
//! * ignorant: none;
//! * random: every operation on a seeded random place.
//!
//! The entries of A and B are below 16, so every entry of C is exact in `u32`. Check: C·x equals
//! A·(B·x) for two random vectors x (Freivalds; a wrong C passes with probability at most 2⁻²⁰
//! per vector), 256 random entries equal their dot products, no operation got an input it did not
//! expect, every actor stopped; the messages are exactly 13·M + L_n + 1 for M inner and L_n leaf
//! multiplications.

mod check;

use super::{at, noting, random_place, variants, Variant};
use crate::rng::XorShift;
use crate::{await_result, Bench, Fault, Measured, Run, Size};
use check::compare;
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

/// The four variants.
pub(super) const BENCHES: [Bench; 4] = variants!(
    "lassi-matmul",
    "C = A·B by quadrants, 8 multiplications and 4 additions per level, one actor each",
    run,
    &[
        Fault::Drop,
        Fault::Duplicate,
        Fault::Misroute,
        Fault::WrongRule
    ]
);

/// The run's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Params {
    /// Matrix side n (a power of two times `leaf`).
    n: usize,
    /// Side L of the leaf blocks.
    leaf: usize,
    /// Places of the machine.
    places: usize,
}

impl Params {
    /// Levels of the recursion above the leaves: n = L·2^depth.
    fn depth(&self) -> u32 {
        (self.n / self.leaf).trailing_zeros()
    }

    /// Messages of a run: every multiplication's start, every inner multiplication's four sums,
    /// every addition's two operands, the collector's result.
    fn messages(&self) -> u64 {
        let d = self.depth();
        let inner: u64 = (0..d).map(|k| 8u64.pow(k)).sum();
        13 * inner + 8u64.pow(d) + 1
    }
}

/// `quick`: 1024×1024 in 64×64 leaves (4 levels, 4,096 leaf multiplications; at least 50 ms on 2
/// workers). `full`: the slides' 2048×2048, in 128×128 leaves (the same 4 levels; the slides do
/// not give their leaf size).
fn of(size: Size, places: usize) -> Params {
    Params {
        n: size.pick(1024, 2048),
        leaf: size.pick(64, 128),
        places: places.max(1),
    }
}

/// What every operation reads: A and B, row-major, the run's shape and hint rule, and the count
/// of inputs no operation expected.
struct Shared {
    /// The run's shape.
    p: Params,
    /// The hint rule.
    variant: Variant,
    /// The run's injected fault ([`Fault::None`] in a real run).
    fault: Fault,
    /// A, row-major.
    a: Vec<u32>,
    /// B, row-major.
    b: Vec<u32>,
    /// Inputs no operation expected (a second operand or quadrant from one side, one after the sum).
    unexpected: AtomicU64,
}

/// The random n×n matrix `seed`, entries below 16.
fn random_matrix(n: usize, seed: u64) -> Vec<u32> {
    let mut rng = XorShift::new(seed);
    (0..n * n).map(|_| (rng.next() >> 60) as u32).collect()
}

/// A square block of C: a leaf (row-major) or its four quadrants.
#[derive(Debug)]
enum Block {
    /// A leaf block, row-major.
    Leaf(Vec<u32>),
    /// The quadrants C00, C01, C10, C11.
    Quad(Box<[Block; 4]>),
}

impl Block {
    /// Adds `other`, of the same shape, to this block.
    fn add(&mut self, other: &Block) {
        match (self, other) {
            (Block::Leaf(x), Block::Leaf(y)) if x.len() == y.len() => {
                x.iter_mut()
                    .zip(y)
                    .for_each(|(x, &y)| *x = x.wrapping_add(y));
            }
            (Block::Quad(x), Block::Quad(y)) => {
                x.iter_mut().zip(y.iter()).for_each(|(x, y)| x.add(y));
            }
            // A shape mismatch can only come from a defect; the sum is then left wrong.
            (x, _) => *x = Block::Leaf(Vec::new()),
        }
    }

    /// y[r0 + r] += Σ_c self[r][c]·x[c0 + c] for this block of side `dim` at (r0, c0); `false`
    /// if the block is not `dim`×`dim`.
    fn mul_vec(&self, dim: usize, (r0, c0): (usize, usize), x: &[u64], y: &mut [u64]) -> bool {
        match self {
            Block::Leaf(v) if v.len() == dim * dim => {
                for (r, row) in v.chunks_exact(dim).enumerate() {
                    let dot = row.iter().zip(&x[c0..c0 + dim]).fold(0u64, |s, (&c, &x)| {
                        s.wrapping_add(u64::from(c).wrapping_mul(x))
                    });
                    y[r0 + r] = y[r0 + r].wrapping_add(dot);
                }
                true
            }
            Block::Quad(q) if dim >= 2 => {
                let h = dim / 2;
                q.iter()
                    .enumerate()
                    .all(|(k, b)| b.mul_vec(h, (r0 + h * (k / 2), c0 + h * (k % 2)), x, y))
            }
            _ => false,
        }
    }

    /// Entry (r, c) of this block of side `dim`, if the block has that shape.
    fn entry(&self, dim: usize, r: usize, c: usize) -> Option<u32> {
        match self {
            Block::Leaf(v) if v.len() == dim * dim => v.get(r * dim + c).copied(),
            Block::Quad(q) if dim >= 2 => {
                let h = dim / 2;
                q[2 * (r / h) + c / h].entry(h, r % h, c % h)
            }
            _ => None,
        }
    }
}

/// One multiplication: the A block at `a` times the B block at `b` (top-left corners, row and
/// column), both of side `dim`.
#[derive(Debug, Clone, Copy)]
struct Task {
    /// Top-left corner (row, column) of the A block.
    a: (usize, usize),
    /// Top-left corner (row, column) of the B block.
    b: (usize, usize),
    /// Side of both blocks.
    dim: usize,
}

/// The leaf product of `task`, row-major; `transposed` ([`Fault::WrongRule`]) multiplies by the
/// B block transposed.
fn multiply_leaf(s: &Shared, t: Task, transposed: bool) -> Vec<u32> {
    let (n, d) = (s.p.n, t.dim);
    let mut c = vec![0u32; d * d];
    for (i, c_row) in c.chunks_exact_mut(d).enumerate() {
        let a_row = &s.a[(t.a.0 + i) * n + t.a.1..][..d];
        for (k, &x) in a_row.iter().enumerate() {
            if transposed {
                for (j, c) in c_row.iter_mut().enumerate() {
                    let y = s.b[(t.b.0 + j) * n + t.b.1 + k];
                    *c = c.wrapping_add(x.wrapping_mul(y));
                }
            } else {
                let b_row = &s.b[(t.b.0 + k) * n + t.b.1..][..d];
                for (c, &y) in c_row.iter_mut().zip(b_row) {
                    *c = c.wrapping_add(x.wrapping_mul(y));
                }
            }
        }
    }
    c
}

/// Where a multiplication's product goes.
enum Out {
    /// Operand `k` of an addition.
    Add(ActorRef<Operand>, usize),
    /// The collector (the root).
    Collector(ActorRef<CollectMsg>),
}

impl Out {
    /// Hands the product on (`messages`: those handled in its subtree).
    fn send(&self, block: Block, messages: u64) {
        let sent = match self {
            Out::Add(add, k) => add
                .send(Operand {
                    k: *k,
                    block,
                    messages,
                })
                .is_ok(),
            Out::Collector(c) => c.send(CollectMsg::Product(block, messages)).is_ok(),
        };
        assert!(sent, "a consumer lives while its producer holds it");
    }
}

/// The place hints of a node's twelve operations: `muls[q][k]` and `adds[q]`, plus the place
/// range each one's own children split (best) and the place each one counts as its own.
struct ChildHints {
    /// Multiplication k of quadrant q: `muls[q][k]`.
    muls: [[Option<usize>; 2]; 4],
    /// The addition of quadrant q.
    adds: [Option<usize>; 4],
    /// Per quadrant, the place range (first, count) its operations split further (best).
    ranges: [(usize, usize); 4],
}

/// The place of quadrant q's operations relative to their node under the worst variant, and the
/// half of the node's places they take under the best: quadrants 0 and 3 together, 1 and 2.
const PAIR: [usize; 4] = [0, 1, 1, 0];

/// Key of operation `slot` (0 … 7: multiplication (q, k) = 2q + k, 8 … 11: addition q) of the
/// node with key `node`: unique per operation, for the random hints.
fn child_key(node: u64, slot: usize) -> u64 {
    node * 16 + slot as u64 + 1
}

/// The hints of the operations of a node with key `key` on place `place` that owns the place
/// range `range` (see the module documentation).
fn child_hints(
    variant: Variant,
    places: usize,
    key: u64,
    place: usize,
    range: (usize, usize),
) -> ChildHints {
    let mut h = ChildHints {
        muls: [[None; 2]; 4],
        adds: [None; 4],
        ranges: [range; 4],
    };
    for (q, &pair) in PAIR.iter().enumerate() {
        match variant {
            Variant::Best => {
                let (lo, len) = range;
                let half = len / 2;
                let sub = match (half, pair) {
                    (0, _) => range,
                    (_, 0) => (lo, half),
                    _ => (lo + half, len - half),
                };
                h.ranges[q] = sub;
                h.muls[q] = [Some(sub.0); 2];
                h.adds[q] = Some(sub.0);
            }
            Variant::Worst => {
                let c = place + pair;
                h.muls[q] = [Some(c % places), Some((c + 1) % places)];
                h.adds[q] = Some((c + 1) % places);
            }
            Variant::Ignorant => {}
            Variant::Random => {
                for k in 0..2 {
                    h.muls[q][k] = Some(random_place(child_key(key, 2 * q + k), places));
                }
                h.adds[q] = Some(random_place(child_key(key, 8 + q), places));
            }
        }
    }
    h
}

/// To a multiplication: its start, or the sum of one of its quadrants.
enum MulMsg {
    /// From its parent (or the driver): start.
    Start,
    /// From an addition: quadrant q's sum and the messages handled in making it.
    Quadrant(usize, Block, u64),
}

/// One multiplication (see the module documentation).
struct Mul {
    /// The inputs and the run's settings.
    shared: Arc<Shared>,
    /// The blocks it multiplies.
    task: Task,
    /// Where its product goes.
    out: Out,
    /// Its key, unique per operation (random hints).
    key: u64,
    /// The place it counts as its own (worst hints).
    place: usize,
    /// The places its operations split (best hints).
    range: (usize, usize),
    /// The leftmost leaf of the tree, where the faults are injected.
    first: bool,
    /// The sums of its quadrants so far, and the messages they carried.
    quadrants: [Option<Block>; 4],
    /// Messages handled in its subtree so far, its own included.
    messages: u64,
    /// Quadrants yet to arrive.
    left: usize,
}

impl Mul {
    /// Spawns the node's four additions and eight multiplications and starts the latter.
    fn split(&mut self, ctx: &mut Context<Self>) {
        let s = Arc::clone(&self.shared);
        let (places, h) = (s.p.places, self.task.dim / 2);
        let hints = child_hints(s.variant, places, self.key, self.place, self.range);
        let me = ctx.myself();
        for q in 0..4 {
            let add = ctx.spawn_with(
                Add {
                    node: me.clone(),
                    q,
                    operands: [None, None],
                    summed: false,
                    shared: Arc::clone(&s),
                },
                at(hints.adds[q], places),
            );
            let (i, j) = (q / 2, q % 2);
            for k in 0..2 {
                let (a, b) = (self.task.a, self.task.b);
                let task = Task {
                    a: (a.0 + i * h, a.1 + k * h),
                    b: (b.0 + k * h, b.1 + j * h),
                    dim: h,
                };
                let first = self.first && q == 0 && k == 0;
                let child = ctx.spawn_with(
                    Mul {
                        shared: Arc::clone(&s),
                        task,
                        out: Out::Add(add.clone(), k),
                        key: child_key(self.key, 2 * q + k),
                        place: hints.muls[q][k].unwrap_or(self.place) % places,
                        range: hints.ranges[q],
                        first,
                        quadrants: [None, None, None, None],
                        messages: 0,
                        left: 4,
                    },
                    at(hints.muls[q][k], places),
                );
                // Fault::Drop: the leftmost multiplication of the root is never started.
                if !(first && self.key == 0 && s.fault == Fault::Drop) {
                    child.send(MulMsg::Start).expect("fresh actor");
                }
            }
        }
    }
}

impl Actor for Mul {
    type Msg = MulMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: MulMsg) {
        let s = Arc::clone(&self.shared);
        match msg {
            MulMsg::Start if self.task.dim <= s.p.leaf => {
                // A leaf: its product, handed on; its start is its one message.
                let wrong = self.first && s.fault == Fault::WrongRule;
                let block = Block::Leaf(multiply_leaf(&s, self.task, wrong));
                match (&self.out, self.first, s.fault) {
                    // Fault::Duplicate: the product is handed on twice.
                    (_, true, Fault::Duplicate) => {
                        let copy = Block::Leaf(multiply_leaf(&s, self.task, false));
                        self.out.send(copy, 1);
                        self.out.send(block, 1);
                    }
                    // Fault::Misroute: it goes in as the other operand of its addition.
                    (Out::Add(add, k), true, Fault::Misroute) => {
                        Out::Add(add.clone(), 1 - k).send(block, 1);
                    }
                    _ => self.out.send(block, 1),
                }
                ctx.stop();
            }
            MulMsg::Start => {
                self.messages += 1;
                self.split(ctx);
            }
            MulMsg::Quadrant(q, block, messages) => {
                self.messages += messages + 1;
                match &mut self.quadrants[q] {
                    Some(_) => {
                        s.unexpected.fetch_add(1, Relaxed);
                        return;
                    }
                    slot => *slot = Some(block),
                }
                self.left -= 1;
                if self.left == 0 {
                    let [Some(c00), Some(c01), Some(c10), Some(c11)] =
                        std::mem::take(&mut self.quadrants)
                    else {
                        unreachable!("four quadrants are here")
                    };
                    let product = Block::Quad(Box::new([c00, c01, c10, c11]));
                    self.out.send(product, self.messages);
                    ctx.stop();
                }
            }
        }
    }
}

/// To an addition: its operand `k` (the product A_i,k·B_k,j), with the messages handled in the
/// subtree that made it.
struct Operand {
    /// Which operand: 0 or 1.
    k: usize,
    /// The product.
    block: Block,
    /// Messages handled in the subtree that made it.
    messages: u64,
}

/// One addition: its two operands summed and sent to its node as quadrant `q`. It stops once its
/// multiplications have (its last reference gone, its mailbox empty).
struct Add {
    /// The multiplication whose quadrant it sums.
    node: ActorRef<MulMsg>,
    /// That quadrant.
    q: usize,
    /// The operands so far, with their message counts.
    operands: [Option<(Block, u64)>; 2],
    /// Whether it has added its operands already.
    summed: bool,
    /// For the count of unexpected inputs.
    shared: Arc<Shared>,
}

impl Actor for Add {
    type Msg = Operand;
    fn handle(&mut self, _ctx: &mut Context<Self>, op: Operand) {
        let slot = &mut self.operands[op.k];
        if self.summed || slot.is_some() {
            self.shared.unexpected.fetch_add(1, Relaxed);
            return;
        }
        *slot = Some((op.block, op.messages));
        if let [Some(_), Some(_)] = &self.operands {
            let [Some((mut sum, m0)), Some((other, m1))] = std::mem::take(&mut self.operands)
            else {
                unreachable!("both operands are here")
            };
            sum.add(&other);
            self.summed = true;
            // Ignored failure: only a defect elsewhere (a quadrant sent twice) stops the node
            // early, and that is counted there.
            let _ = self.node.send(MulMsg::Quadrant(self.q, sum, m0 + m1 + 2));
        }
    }
}

/// To the collector.
enum CollectMsg {
    /// From the driver: answer with C.
    Arm(ReplyTo<(Block, u64)>),
    /// From the root: C and the messages handled in the whole tree.
    Product(Block, u64),
}

/// Receives C from the root and answers the driver with it.
struct Collector {
    /// C and the messages of the run, once the root sent them.
    product: Option<(Block, u64)>,
    /// The driver's request, once armed.
    done: Option<ReplyTo<(Block, u64)>>,
}

impl Actor for Collector {
    type Msg = CollectMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: CollectMsg) {
        match msg {
            CollectMsg::Arm(done) => self.done = Some(done),
            // Its own receipt of C is the last message counted.
            CollectMsg::Product(c, messages) => self.product = Some((c, messages + 1)),
        }
        if self.product.is_some() && self.done.is_some() {
            let (Some(product), Some(done)) = (self.product.take(), self.done.take()) else {
                unreachable!("both are here")
            };
            done.send(product);
            ctx.stop();
        }
    }
}

/// C compared with the driver's own products.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    /// Whether C is an n×n quadtree of blocks.
    shape_ok: bool,
    /// Rows where C·x differs from A·(B·x), over both vectors.
    freivalds_rows_off: usize,
    /// Sampled entries that differ from their dot product.
    entries_off: usize,
    /// Inputs no operation expected.
    unexpected: u64,
    /// Actors of the run still alive at the end.
    alive: u64,
}

/// One run at the size of `run` on this machine, its parameters noted in the check.
fn run(system: &System, run: &Run, variant: Variant) -> Measured {
    let p = of(run.size, system.machine().places());
    noting(measure(system, run, variant, p), p)
}

/// One run with the parameters `p`: set-up, the timed product, the check.
fn measure(system: &System, run: &Run, variant: Variant, p: Params) -> Measured {
    assert!(
        p.leaf >= 1 && p.n % p.leaf == 0 && (p.n / p.leaf).is_power_of_two(),
        "{p:?}"
    );
    let shared = Arc::new(Shared {
        p,
        variant,
        fault: run.fault,
        a: random_matrix(p.n, 0xA),
        b: random_matrix(p.n, 0xB),
        unexpected: AtomicU64::new(0),
    });
    system.run_until_idle();
    let before = system.stats();
    let collector = system.spawn(Collector {
        product: None,
        done: None,
    });
    // The root, on place 0 unless the variant places nothing.
    let root_hint = match variant {
        Variant::Ignorant => None,
        Variant::Random => Some(random_place(0, p.places)),
        Variant::Best | Variant::Worst => Some(0),
    };
    let root = system.spawn_with(
        Mul {
            shared: Arc::clone(&shared),
            task: Task {
                a: (0, 0),
                b: (0, 0),
                dim: p.n,
            },
            out: Out::Collector(collector.clone()),
            key: 0,
            place: root_hint.unwrap_or(0),
            range: (0, p.places),
            first: true,
            quadrants: [None, None, None, None],
            messages: 0,
            left: 4,
        },
        at(root_hint, p.places),
    );
    system.run_until_idle();
    let start = Instant::now();
    let pending = collector.ask(CollectMsg::Arm).expect("fresh actor");
    drop(collector);
    root.send(MulMsg::Start).expect("fresh actor");
    let result = await_result(system, pending, run, &variant.bench("matmul"));
    let elapsed = start.elapsed();
    let (c, messages) = match result {
        Ok(r) => r,
        Err(e) => {
            root.stop();
            return Measured::failed(0, elapsed, e);
        }
    };
    drop(root);
    system.run_until_idle();
    let (shape_ok, freivalds_rows_off, entries_off) = compare(&shared, &c);
    let unexpected = shared.unexpected.load(Relaxed);
    let outcome = Outcome {
        shape_ok,
        freivalds_rows_off,
        entries_off,
        unexpected,
        alive: system
            .stats()
            .actors_live()
            .saturating_sub(before.actors_live()),
    };
    let want = Outcome {
        shape_ok: true,
        freivalds_rows_off: 0,
        entries_off: 0,
        unexpected: 0,
        alive: 0,
    };
    Measured::checked(messages + unexpected, elapsed, outcome, want)
        .with_message_count(p.messages(), "13·M + L_n + 1 = ")
}

#[cfg(test)]
mod tests;
