//! orbit_int (BenchErl, Patrick Maier's orbit-int): the orbit of 0 under a set of generator
//! functions on 0..N, computed by P workers that each own one slice of a distributed hash table
//! (the *buckets*, hinted as hubs in Francesquini's fork). A bucket receiving a vertex it has not
//! stored yet stores it and spawns one short-lived actor per generator, which computes the image
//! (a naive Fibonacci number of varying cost) and sends it to the bucket that owns it. Termination
//! is detected with Maier's credit scheme: the master hands out credit 1, every vertex message
//! carries a piece, idle buckets return what they hold, and the orbit is complete when the master
//! holds 1 again. The master then asks every bucket for its part of the table.

use super::{noting, params};
use crate::verify::mix;
use crate::{Bench, Measured, Run, Size};
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
    faults: &[],
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
        gens: &[Gen::F1, Gen::F3],
        space: 11 * 16,
        buckets: 2 * 16,
    };
    params(size, quick, |s| Params {
        gens: s.pick(
            &[Gen::F1, Gen::F3],
            &[Gen::F1, Gen::F2, Gen::F4],
            &[Gen::F1, Gen::F2, Gen::F4, Gen::F5],
        ),
        space: (s.pick(11, 157, 157) * s.cores) as i64,
        buckets: 2 * s.cores,
    })
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

/// BenchErl's generators f1..f5 on the space 0..N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gen {
    F1,
    F2,
    F3,
    F4,
    F5,
}

impl Gen {
    fn apply(self, n: i64, x: i64) -> i64 {
        let fib = |k: i64| fib(std::hint::black_box(k));
        match self {
            // fib(0..15) + x
            Gen::F1 => r(n, fib(r(16, x)) + x),
            // fib(5..20) + 2x² + 5x − 1
            Gen::F2 => r(n, fib(r(16, x) + 5) + 2 * x * x + 5 * x - 1),
            // fib(10..25) − x³ + 8x
            Gen::F3 => r(n, fib(r(16, x) + 10) - x * x * x + 8 * x),
            // fib(11, 19 or 27) − x
            Gen::F4 => r(n, fib(8 * s(&[0, 49, 98, 100], r(100, x)) + 3) - x),
            // fib(10, 20 or 30) + x
            Gen::F5 => r(n, fib(10 * s(&[0, 900, 999, 1000], r(1000, x))) + x),
        }
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
}

impl Conf {
    /// Hashes `x` into the global table and sends it, with credit 2^−k, to the owning bucket.
    fn send_vertex(&self, x: i64, k: u32) {
        let global = (mix(x as u64) % (self.local_size * self.buckets.len()) as u64) as usize;
        let (bucket, slot) = (global / self.local_size, global % self.local_size);
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

/// What a bucket holds and did.
#[derive(Debug, Clone, Copy, Default)]
struct Part {
    vertices: usize,
    sum: i64,
    received: u64,
    credit_returns: u64,
}

/// A worker of orbit-int: one slice of the hash table.
struct Bucket {
    conf: Option<Arc<Conf>>,
    table: Vec<Vec<i64>>,
    credit: Credit,
    idle_pending: bool,
    part: Part,
}

impl Actor for Bucket {
    type Msg = BucketMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: BucketMsg) {
        match msg {
            BucketMsg::Init(conf) => {
                self.table = vec![Vec::new(); conf.local_size];
                self.conf = Some(conf);
            }
            BucketMsg::Vertex { x, slot, k } => {
                self.part.received += 1;
                self.credit.add_atomic(k);
                let conf = self.conf.as_ref().expect("initialised");
                if !self.table[slot].contains(&x) {
                    self.table[slot].push(x);
                    self.part.vertices += 1;
                    self.part.sum += x;
                    for (i, &gen) in conf.gens.iter().enumerate() {
                        let k = if i + 1 == conf.gens.len() {
                            self.credit.debit_atomic()
                        } else {
                            self.credit.debit_atomic_nz()
                        };
                        ctx.spawn(Image {
                            conf: Arc::clone(conf),
                            x,
                            gen,
                            k,
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
                    .send(MasterMsg::Part(self.part))
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
}

impl Actor for Image {
    type Msg = ();
    fn started(&mut self, ctx: &mut Context<Self>) {
        let y = self.gen.apply(self.conf.space, self.x);
        self.conf.send_vertex(y, self.k);
        ctx.stop();
    }
    fn handle(&mut self, _ctx: &mut Context<Self>, _msg: ()) {}
}

enum MasterMsg {
    Start {
        conf: Arc<Conf>,
        done: ReplyTo<Part>,
    },
    /// Credit returned by an idle bucket.
    Credit(Credit),
    /// A bucket's part of the table.
    Part(Part),
}

struct Master {
    conf: Option<Arc<Conf>>,
    credit: Credit,
    parts: usize,
    total: Part,
    done: Option<ReplyTo<Part>>,
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
                }
            }
            MasterMsg::Part(part) => {
                self.parts += 1;
                self.total.vertices += part.vertices;
                self.total.sum += part.sum;
                self.total.received += part.received;
                self.total.credit_returns += part.credit_returns;
                let conf = self.conf.take_if(|c| self.parts == c.buckets.len());
                if let Some(conf) = conf {
                    if let Some(done) = self.done.take() {
                        done.send(self.total);
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

/// The orbit of 0, computed sequentially: (size, sum of its vertices).
fn sequential_orbit(gens: &[Gen], space: i64) -> (usize, i64) {
    let mut seen = HashSet::from([0]);
    let mut todo = vec![0];
    while let Some(x) = todo.pop() {
        for gen in gens {
            let y = gen.apply(space, x);
            if seen.insert(y) {
                todo.push(y);
            }
        }
    }
    (seen.len(), seen.iter().sum())
}

fn run(system: &System, run: &Run) -> Measured {
    let size = run.size;
    let p = of(size);
    let master = system.spawn(Master {
        conf: None,
        credit: Credit::default(),
        parts: 0,
        total: Part::default(),
        done: None,
    });
    let buckets: Vec<ActorRef<BucketMsg>> = (0..p.buckets)
        .map(|_| {
            system.spawn_with(
                Bucket {
                    conf: None,
                    table: Vec::new(),
                    credit: Credit::default(),
                    idle_pending: false,
                    part: Part::default(),
                },
                SpawnOptions::new().hub(true),
            )
        })
        .collect();
    let conf = Arc::new(Conf {
        gens: p.gens,
        space: p.space,
        buckets,
        local_size: (2 * p.space as usize) / p.buckets + 1,
        master: master.clone(),
    });
    for bucket in &conf.buckets {
        bucket
            .send(BucketMsg::Init(Arc::clone(&conf)))
            .expect("fresh actor");
    }
    system.run_until_idle();
    let start = Instant::now();
    let total = master
        .ask(|done| MasterMsg::Start { conf, done })
        .expect("fresh actor")
        .wait();
    let elapsed = start.elapsed();
    let Ok(total) = total else {
        return Measured {
            messages: 0,
            elapsed,
            verified: false,
            check: "the master did not answer".to_owned(),
        };
    };
    let (size, sum) = sequential_orbit(p.gens, p.space);
    // Vertex messages, credit returns, and a dump request and answer per bucket.
    let messages = total.received + total.credit_returns + 2 * p.buckets as u64;
    let vertex_messages = 1 + (size * p.gens.len()) as u64;
    let measured = Measured::checked(
        messages,
        elapsed,
        (total.vertices, total.sum, total.received),
        (size, sum, vertex_messages),
    );
    noting(measured, p)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // f1(N, 3) = (fib(3) + 3) rem N with fib(3) = 3.
        assert_eq!(Gen::F1.apply(100, 3), 6);
        // f3(N, 2) = |fib(12) − 8 + 16| rem N, fib(12) = 233.
        assert_eq!(Gen::F3.apply(1000, 2), 241);
        // f4(N, 0): s = 1, fib(11) = 144.
        assert_eq!(Gen::F4.apply(1000, 0), 144);
        assert!(sequential_orbit(&[Gen::F1, Gen::F3], 352).0 > 1);
    }
}
