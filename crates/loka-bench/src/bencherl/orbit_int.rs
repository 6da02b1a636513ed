//! orbit_int (BenchErl, Patrick Maier's orbit-int): the orbit of 0 under a set of generator
//! functions on 0..N, computed by P workers that each own one slice of a distributed hash table
//! (the *buckets*, hinted as hubs in Francesquini's fork). A bucket receiving a vertex it has not
//! stored yet stores it and spawns one short-lived actor per generator, which computes the image
//! (a naive Fibonacci number of varying cost) and sends it to the bucket that owns it. Termination
//! is detected with Maier's credit scheme: the master hands out credit 1, every vertex message
//! carries a piece, idle buckets return what they hold, and the orbit is complete when the master
//! holds 1 again. The master then asks every bucket for its part of the table.

use super::{noting, params, Scale};
use crate::verify::{fingerprint, mix};
use crate::{await_result, Bench, Fault, Measured, Run, Size};
use loka::{Actor, ActorRef, Context, ReplyTo, SpawnOptions, System};
use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "bencherl-orbit_int",
    suite: "bencherl",
    about:
        "orbit of a generator set over a hash table of P hub buckets (vertex and credit messages)",
    run,
    faults: &[Fault::Drop, Fault::Misroute, Fault::WrongRule],
};

/// The problem: generators, space size N, buckets P.
#[derive(Debug)]
struct Params {
    gens: &'static [Gen],
    space: i64,
    buckets: usize,
}

/// BenchErl's (generators, N, P): (g13, 11·cores, 2·cores) short, (g124, 157·cores, 2·cores)
/// intermediate, (g1245, 157·cores, 2·cores) long. BenchErl runs each with and without
/// image-computing processes; we run with them (`bench:par`).
fn of(size: Size) -> Params {
    let quick = Params {
        gens: &[Gen::F1, Gen::F2, Gen::F4],
        space: 157 * 96,
        buckets: 2 * 16,
    };
    params(size, quick, of_scale)
}

fn of_scale(s: Scale) -> Params {
    Params {
        gens: s.pick(
            &[Gen::F1, Gen::F3],
            &[Gen::F1, Gen::F2, Gen::F4],
            &[Gen::F1, Gen::F2, Gen::F4, Gen::F5],
        ),
        space: (s.pick(11, 157, 157) * s.cores) as i64,
        buckets: 2 * s.cores,
    }
}

/// What one call of [`fib`] takes on this project's host (a naive `fib(n)` makes `2·fib(n) − 1`
/// calls), declared to the simulation engine with `ctx.charge` (docs/simulation.md). Measured
/// with `cargo test --release -p loka-bench --lib fib_cost -- --ignored --nocapture
/// --test-threads=1`: the least of six runs on 2026-11-24 (635 ps; the others up to 1.09 ns).
const FIB_PS_PER_CALL: u64 = 635;

/// The declared compute of a naive Fibonacci whose result is `value`.
fn fib_cost(value: i64) -> std::time::Duration {
    let calls = (2 * value.max(1) - 1) as u64;
    std::time::Duration::from_nanos(calls * FIB_PS_PER_CALL / 1_000)
}

/// BenchErl's Fibonacci: fib(0) = fib(1) = 1, computed naively (the variable work per image).
fn fib(n: i64) -> i64 {
    if n <= 1 {
        1
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

/// BenchErl's `r(R, N) = abs(N) rem R`.
fn r(modulus: i64, x: i64) -> i64 {
    x.abs() % modulus
}

/// BenchErl's step function `s(B0, .., N)`: how many of the bounds `x` reaches.
fn s(bounds: &[i64], x: i64) -> i64 {
    bounds.iter().take_while(|&&b| x >= b).count() as i64
}

/// BenchErl's generators f1..f5 on the space 0..N. Its polynomial helper `p(A0, _N) -> A0` is
/// the constant A0, so the `p(-1, X)` of f4 and the `p(1, X)` of f5 are −1 and +1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gen {
    F1,
    F2,
    F3,
    F4,
    F5,
}

impl Gen {
    /// The image of `x`, and the Fibonacci number computed on the way (its cost).
    fn apply(self, n: i64, x: i64) -> (i64, i64) {
        let computed = std::cell::Cell::new(0);
        let fib = |k: i64| {
            let f = fib(std::hint::black_box(k));
            computed.set(f);
            f
        };
        let y = match self {
            // fib(0..15) + x
            Gen::F1 => r(n, fib(r(16, x)) + x),
            // fib(5..20) + 2x² + 5x − 1
            Gen::F2 => r(n, fib(r(16, x) + 5) + 2 * x * x + 5 * x - 1),
            // fib(10..25) − x³ + 8x
            Gen::F3 => r(n, fib(r(16, x) + 10) - x * x * x + 8 * x),
            // fib(11, 19 or 27) − 1
            Gen::F4 => r(n, fib(8 * s(&[0, 49, 98, 100], r(100, x)) + 3) - 1),
            // fib(10, 20 or 30) + 1
            Gen::F5 => r(n, fib(10 * s(&[0, 900, 999, 1000], r(1000, x))) + 1),
        };
        (y, computed.get())
    }
}

/// Maier's credit: a sum of atomic credits 2^−k, kept as the set of exponents k (all distinct).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Credit(BTreeSet<u32>);

impl Credit {
    fn one() -> Credit {
        Credit(BTreeSet::from([0]))
    }
    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }
    fn is_one(&self) -> bool {
        self.0.len() == 1 && self.0.contains(&0)
    }
    /// Adds 2^−k, carrying: 2^−k + 2^−k = 2^−(k−1).
    fn add_atomic(&mut self, mut k: u32) {
        while self.0.remove(&k) {
            k = k.checked_sub(1).expect("credit never exceeds one");
        }
        self.0.insert(k);
    }
    fn add(&mut self, other: Credit) {
        for k in other.0 {
            self.add_atomic(k);
        }
    }
    /// Takes the smallest atomic piece (`debit_atomic`); the rest may be zero.
    fn debit_atomic(&mut self) -> u32 {
        self.0.pop_last().expect("non-zero credit")
    }
    /// Takes a piece and leaves non-zero credit (`debit_atomic_nz`): halves a lone piece.
    fn debit_atomic_nz(&mut self) -> u32 {
        if self.0.len() == 1 {
            let k = self.0.pop_last().expect("non-zero credit") + 1;
            self.0.insert(k);
            k
        } else {
            self.debit_atomic()
        }
    }
}

/// The static machine configuration every bucket and image computation shares.
struct Conf {
    gens: &'static [Gen],
    space: i64,
    buckets: Vec<ActorRef<BucketMsg>>,
    /// Slots per bucket: (2·N) div P + 1.
    local_size: usize,
    master: ActorRef<MasterMsg>,
    /// The fault injected into the images of vertex 0 (`Fault::None` in a real run).
    inject: Fault,
}

/// The owner of `x` in the global hash table of `buckets` × `local_size` slots: (bucket, slot).
fn owner(x: i64, buckets: usize, local_size: usize) -> (usize, usize) {
    let global = (mix(x as u64) % (local_size * buckets) as u64) as usize;
    (global / local_size, global % local_size)
}

impl Conf {
    /// Hashes `x` into the global table and sends it, with credit 2^−k, to the owning bucket.
    fn send_vertex(&self, x: i64, k: u32) {
        let (bucket, slot) = owner(x, self.buckets.len(), self.local_size);
        // A bucket stops only after the orbit is complete.
        let _ = self.buckets[bucket].send(BucketMsg::Vertex { x, slot, k });
    }
}

enum BucketMsg {
    Init(Arc<Conf>),
    /// Vertex `x` for slot `slot`, carrying credit 2^−k.
    Vertex {
        x: i64,
        slot: usize,
        k: u32,
    },
    /// Sent to itself: everything queued before it has been handled (BenchErl's `after 0`).
    Idle,
    /// From the master: send the table.
    Dump,
}

/// A bucket's part of the table (BenchErl's `{result, PartialOrbit, Stat}`) and what it did.
#[derive(Debug, Clone, Default)]
struct Part {
    bucket: usize,
    /// Its slots, each with the vertices stored there.
    table: Vec<Vec<i64>>,
    /// Vertex messages it received.
    received: u64,
    credit_returns: u64,
}

/// A worker of orbit-int: one slice of the hash table.
struct Bucket {
    conf: Option<Arc<Conf>>,
    credit: Credit,
    idle_pending: bool,
    part: Part,
}

impl Actor for Bucket {
    type Msg = BucketMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: BucketMsg) {
        match msg {
            BucketMsg::Init(conf) => {
                self.part.table = vec![Vec::new(); conf.local_size];
                self.conf = Some(conf);
            }
            BucketMsg::Vertex { x, slot, k } => {
                self.part.received += 1;
                self.credit.add_atomic(k);
                let conf = self.conf.as_ref().expect("initialised");
                if !self.part.table[slot].contains(&x) {
                    self.part.table[slot].push(x);
                    // The fault of a mutation test applies to the images of vertex 0 (stored once).
                    let inject = if x == 0 { conf.inject } else { Fault::None };
                    for (i, &gen) in conf.gens.iter().enumerate() {
                        let k = if i + 1 == conf.gens.len() {
                            self.credit.debit_atomic()
                        } else {
                            self.credit.debit_atomic_nz()
                        };
                        let fault = if i == 0 { inject } else { Fault::None };
                        if fault == Fault::Drop {
                            // The image is never computed; its credit stays here.
                            self.credit.add_atomic(k);
                            continue;
                        }
                        ctx.spawn(Image {
                            conf: Arc::clone(conf),
                            x,
                            gen,
                            k,
                            fault,
                        });
                    }
                }
                // Return what is left once the messages queued now have been handled.
                if !self.credit.is_zero() && !self.idle_pending {
                    self.idle_pending = true;
                    ctx.myself().send(BucketMsg::Idle).expect("running");
                }
            }
            BucketMsg::Idle => {
                self.idle_pending = false;
                if !self.credit.is_zero() {
                    let credit = std::mem::take(&mut self.credit);
                    self.part.credit_returns += 1;
                    let conf = self.conf.as_ref().expect("initialised");
                    conf.master
                        .send(MasterMsg::Credit(credit))
                        .expect("master collecting");
                }
            }
            BucketMsg::Dump => {
                let conf = self.conf.as_ref().expect("initialised");
                conf.master
                    .send(MasterMsg::Part(std::mem::take(&mut self.part)))
                    .expect("master collecting");
            }
        }
    }
}

/// One image computation: computes gen(x) and sends it on with credit 2^−k, then stops.
struct Image {
    conf: Arc<Conf>,
    x: i64,
    gen: Gen,
    k: u32,
    /// `Fault::None`, or the fault of a mutation test: the image is not reduced mod N
    /// (WrongRule), or goes to the bucket after its owner (Misroute).
    fault: Fault,
}

impl Actor for Image {
    type Msg = ();
    fn started(&mut self, ctx: &mut Context<Self>) {
        let conf = &self.conf;
        let (y, computed) = self.gen.apply(conf.space, self.x);
        ctx.charge(fib_cost(computed));
        match self.fault {
            Fault::None => conf.send_vertex(y, self.k),
            Fault::WrongRule => conf.send_vertex(y + conf.space, self.k),
            _ => {
                let (bucket, slot) = owner(y, conf.buckets.len(), conf.local_size);
                let wrong = (bucket + 1) % conf.buckets.len();
                let _ = conf.buckets[wrong].send(BucketMsg::Vertex {
                    x: y,
                    slot,
                    k: self.k,
                });
            }
        }
        ctx.stop();
    }
    fn handle(&mut self, _ctx: &mut Context<Self>, _msg: ()) {}
}

enum MasterMsg {
    Start {
        conf: Arc<Conf>,
        done: ReplyTo<Orbit>,
    },
    /// Credit returned by an idle bucket.
    Credit(Credit),
    /// A bucket's part of the table.
    Part(Part),
}

struct Master {
    conf: Option<Arc<Conf>>,
    credit: Credit,
    parts: Vec<Part>,
    /// Dump requests sent and parts received.
    sent_and_received: u64,
    done: Option<ReplyTo<Orbit>>,
}

/// The master's answer: every bucket's part, and the dump requests and parts it counted.
struct Orbit {
    parts: Vec<Part>,
    master_messages: u64,
}

impl Actor for Master {
    type Msg = MasterMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: MasterMsg) {
        match msg {
            MasterMsg::Start { conf, done } => {
                // distribute_vertices([0]) with credit one.
                let mut credit = Credit::one();
                let k = credit.debit_atomic();
                conf.send_vertex(0, k);
                self.credit = credit;
                self.conf = Some(conf);
                self.done = Some(done);
            }
            MasterMsg::Credit(credit) => {
                self.credit.add(credit);
                if self.credit.is_one() {
                    let conf = self.conf.as_ref().expect("started");
                    for bucket in &conf.buckets {
                        bucket.send(BucketMsg::Dump).expect("bucket alive");
                    }
                    self.sent_and_received += conf.buckets.len() as u64;
                }
            }
            MasterMsg::Part(part) => {
                self.sent_and_received += 1;
                self.parts.push(part);
                let conf = self.conf.take_if(|c| self.parts.len() == c.buckets.len());
                if let Some(conf) = conf {
                    if let Some(done) = self.done.take() {
                        done.send(Orbit {
                            parts: std::mem::take(&mut self.parts),
                            master_messages: self.sent_and_received,
                        });
                    }
                    for bucket in &conf.buckets {
                        bucket.stop();
                    }
                    ctx.stop();
                }
            }
        }
    }
}

/// The orbit of 0, computed sequentially (depth first, one hash set): its size and the
/// [`fingerprint`] of its vertices.
fn sequential_orbit(gens: &[Gen], space: i64) -> (usize, u64) {
    let mut seen = HashSet::from([0]);
    let mut todo = vec![0];
    while let Some(x) = todo.pop() {
        for gen in gens {
            let (y, _) = gen.apply(space, x);
            if seen.insert(y) {
                todo.push(y);
            }
        }
    }
    (seen.len(), fingerprint(seen.iter().map(|&x| x as u64)))
}

/// What the buckets' tables hold, read after the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Held {
    vertices: usize,
    fingerprint: u64,
    /// Vertices stored in a bucket or slot that does not own them.
    misplaced: usize,
    /// Vertex messages the buckets received.
    received: u64,
}

fn run(system: &System, run: &Run) -> Measured {
    let p = of(run.size);
    noting(measure(system, run, &p), p)
}

fn measure(system: &System, run: &Run, p: &Params) -> Measured {
    let master = system.spawn(Master {
        conf: None,
        credit: Credit::default(),
        parts: Vec::new(),
        sent_and_received: 0,
        done: None,
    });
    let buckets: Vec<ActorRef<BucketMsg>> = (0..p.buckets)
        .map(|bucket| {
            system.spawn_with(
                Bucket {
                    conf: None,
                    credit: Credit::default(),
                    idle_pending: false,
                    part: Part {
                        bucket,
                        ..Part::default()
                    },
                },
                SpawnOptions::new().hub(true),
            )
        })
        .collect();
    let local_size = (2 * p.space as usize) / p.buckets + 1;
    let conf = Arc::new(Conf {
        gens: p.gens,
        space: p.space,
        buckets: buckets.clone(),
        local_size,
        master: master.clone(),
        inject: run.fault,
    });
    for bucket in &conf.buckets {
        bucket
            .send(BucketMsg::Init(Arc::clone(&conf)))
            .expect("fresh actor");
    }
    system.run_until_idle();
    let start = Instant::now();
    let pending = master
        .ask(|done| MasterMsg::Start { conf, done })
        .expect("fresh actor");
    let orbit = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    let orbit = match orbit {
        Ok(orbit) => orbit,
        Err(reason) => {
            master.stop();
            for bucket in &buckets {
                bucket.stop();
            }
            return Measured::failed(0, elapsed, reason);
        }
    };
    // The result, read from the tables after the clock stopped.
    let mut held = Held {
        vertices: 0,
        fingerprint: 0,
        misplaced: 0,
        received: 0,
    };
    let mut credit_returns = 0;
    for part in &orbit.parts {
        for (slot, vertices) in part.table.iter().enumerate() {
            for &x in vertices {
                held.vertices += 1;
                held.fingerprint = held.fingerprint.wrapping_add(mix(x as u64));
                held.misplaced +=
                    usize::from(owner(x, p.buckets, local_size) != (part.bucket, slot));
            }
        }
        held.received += part.received;
        credit_returns += part.credit_returns;
    }
    let (size, fingerprint) = sequential_orbit(p.gens, p.space);
    let want = Held {
        vertices: size,
        fingerprint,
        misplaced: 0,
        received: bencherl_vertex_messages(size, p.gens.len()),
    };
    // Vertex messages, credit returns, and a dump request and answer per bucket, as counted.
    let messages = held.received + credit_returns + orbit.master_messages;
    let expected_messages = want.received + credit_returns + 2 * p.buckets as u64;
    Measured::checked(messages, elapsed, held, want).with_message_count(
        expected_messages,
        "1 + orbit·generators + credit returns (counted) + 2·P = ",
    )
}

/// BenchErl's vertex messages for an orbit of `size` vertices: the master's `{vertex, 0, ..}`, and
/// one image of each orbit vertex per generator (`distribute_images`).
fn bencherl_vertex_messages(size: usize, gens: usize) -> u64 {
    1 + (size * gens) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bencherl::Input;

    /// The per-call cost of [`fib`], for [`FIB_PS_PER_CALL`]:
    /// `cargo test --release -p loka-bench --lib fib_cost -- --ignored --nocapture`.
    #[test]
    #[ignore = "a measurement, not a test"]
    fn fib_cost_per_call() {
        for _ in 0..3 {
            let start = std::time::Instant::now();
            let f = fib(std::hint::black_box(32));
            let calls = (2 * f - 1) as f64;
            let ps = start.elapsed().as_nanos() as f64 / calls * 1000.0;
            eprintln!("fib: {ps:.0} ps per call (fib(32) = {f})");
        }
    }

    #[test]
    fn credit_follows_maier() {
        let mut c = Credit::one();
        assert_eq!(c.debit_atomic_nz(), 1); // half of one, half left
        assert_eq!(c.debit_atomic_nz(), 2);
        assert_eq!(c.debit_atomic(), 2);
        assert!(c.is_zero());
        let mut m = Credit::default();
        m.add_atomic(2);
        m.add_atomic(1);
        assert!(!m.is_one());
        m.add_atomic(2); // 1/4 + 1/2 + 1/4 = 1
        assert!(m.is_one());
    }

    #[test]
    fn generators_match_bencherl() {
        // Each value worked out from BenchErl's bench.erl: fib(0) = fib(1) = 1,
        // p(A1, A0, X) = A1·X + A0, p(A0, _) = A0, s(B0.., X) = how many bounds X reaches.
        // f1(N, 3) = (fib(3) + 3) rem N with fib(3) = 3.
        assert_eq!(Gen::F1.apply(100, 3).0, 6);
        // f2(1000, 3) = (fib(8) + 2·9 + 15 − 1) rem 1000 = 34 + 32.
        assert_eq!(Gen::F2.apply(1000, 3).0, 66);
        // f3(N, 2) = |fib(12) − 8 + 16| rem N, fib(12) = 233.
        assert_eq!(Gen::F3.apply(1000, 2).0, 241);
        // f4(N, X) = (fib(8·s + 3) − 1) rem N: s(0) = 1 → fib(11) − 1 = 143;
        // s(49) = 2 → fib(19) − 1 = 6,764; s(98) = 3 → fib(27) − 1 = 317,810.
        assert_eq!(Gen::F4.apply(1000, 0).0, 143);
        assert_eq!(Gen::F4.apply(1000, 49).0, 764);
        assert_eq!(Gen::F4.apply(1_000_000, 98).0, 317_810);
        // f5(N, X) = (fib(10·s) + 1) rem N: s(0) = 1 → fib(10) + 1 = 90;
        // s(950) = 2 → fib(20) + 1 = 10,947; s(999) = 3 → fib(30) + 1 = 1,346,270.
        assert_eq!(Gen::F5.apply(1000, 0).0, 90);
        assert_eq!(Gen::F5.apply(1_000_000, 950).0, 10_947);
        assert_eq!(Gen::F5.apply(10_000_000, 999).0, 1_346_270);
    }

    #[test]
    fn orbit_sizes_and_message_counts_are_bencherls() {
        // Orbit sizes of BenchErl's definition (bench.erl's generators and sequential:orbit/3):
        // short, intermediate and long for 32 cores, and short and intermediate for 1 and 2.
        for (input, cores, size) in [
            (Input::Short, 32, 296),
            (Input::Intermediate, 32, 3_396),
            (Input::Long, 32, 3_398),
            (Input::Short, 1, 10),
            (Input::Intermediate, 1, 133),
            (Input::Short, 2, 21),
            (Input::Intermediate, 2, 250),
        ] {
            let p = of_scale(Scale { input, cores });
            assert_eq!(
                sequential_orbit(p.gens, p.space).0,
                size,
                "{input:?} {cores}"
            );
        }
        // Vertex messages at 32 cores: short 1 + 296·2, intermediate 1 + 3,396·3.
        assert_eq!(bencherl_vertex_messages(296, 2), 593);
        assert_eq!(bencherl_vertex_messages(3_396, 3), 10_189);
        // Counted runs at BenchErl's inputs for 2 cores: their check compares the counted vertex
        // messages with 1 + orbit·generators and the counted total with the formula.
        for input in [Input::Short, Input::Intermediate] {
            let p = of_scale(Scale { input, cores: 2 });
            let system = System::builder().workers(2).build().unwrap();
            let m = measure(&system, &Run::new(Size::Quick), &p);
            assert!(m.verified, "{}", m.check);
        }
    }
}
