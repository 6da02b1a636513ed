//! raytracer-like (JavaGrande's RayTracer, as Panini ran it: §5.1.5): a Runner (the master) hands
//! the rows of a W×H image to R RayTracer workers, one row at a time — each worker gets a row at
//! the start and the next one whenever it returns one — and collects a checksum of the image.
//!
//! The scene is ours, in JavaGrande's spirit: 64 spheres in a 4×4×4 grid, two point lights with
//! shadows, one mirror bounce, a sky gradient behind. Every primary ray is tested against all 64
//! spheres, and so is every shadow and reflected ray: the workers are CPU heavy.
//!
//! Declared characteristics, as the paper's table: Runner ⟨false, _, low, high, low⟩ (Master →
//! `Thread`), RayTracer ⟨false, _, low, low, high⟩ (Slave → `Task`).
//!
//! Check: a worker returns each row with a hash of its pixels' exact colour bits; the Runner
//! keeps each row once (a row that comes back again counts as repeated) and, once all H rows are
//! in, answers with the rows' hashes hashed in row order, which must equal a sequential rendering
//! of the same image. Messages: H rows handed out and H returned: 2·H.

use super::{alive_since, noting, Tally};
use crate::verify::SequenceHash;
use crate::{await_result, Bench, Fault, Measured, Run, Size};
use loka::exec_policy::{Characteristics, Comm, Cpu, Par};
use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "panini-raytracer",
    suite: "panini",
    about: "a Runner hands the rows of a W×H image to R RayTracer workers and checksums it (2·H messages)",
    run,
    faults: &[Fault::Drop, Fault::Duplicate, Fault::WrongRule],
};

/// Image width W and height H, RayTracer workers R.
#[derive(Debug, Clone, Copy)]
struct Params {
    width: u32,
    height: u32,
    workers: usize,
}

/// `full`: JavaGrande's size B image (500×500); the paper gives no worker count, 16 is ours.
/// `quick` renders a larger image on fewer workers: 500×500 runs under 50 ms on 2 workers
/// (docs/internals/benchmarks.md, "Sizes").
fn of(size: Size) -> Params {
    size.pick(
        Params {
            width: 640,
            height: 640,
            workers: 4,
        },
        Params {
            width: 500,
            height: 500,
            workers: 16,
        },
    )
}

type V3 = [f64; 3];

fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn scale(a: V3, s: f64) -> V3 {
    [a[0] * s, a[1] * s, a[2] * s]
}
fn mul(a: V3, b: V3) -> V3 {
    [a[0] * b[0], a[1] * b[1], a[2] * b[2]]
}
fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn norm(a: V3) -> V3 {
    scale(a, 1.0 / dot(a, a).sqrt())
}

struct Sphere {
    centre: V3,
    radius: f64,
    colour: V3,
}

/// The scene: 64 spheres, two lights; the camera sits at the origin looking along +z.
struct Scene {
    spheres: Vec<Sphere>,
    lights: [V3; 2],
}

/// Ambient light, each light's intensity, the spheres' reflectivity, the trace depth.
const AMBIENT: f64 = 0.1;
const LIGHT: f64 = 0.6;
const REFLECT: f64 = 0.3;
const DEPTH: u32 = 1;
const EPS: f64 = 1e-6;

impl Scene {
    fn new() -> Scene {
        let mut spheres = Vec::with_capacity(64);
        for i in 0..4 {
            for j in 0..4 {
                for k in 0..4 {
                    let at = |n: i32| (f64::from(n) - 1.5) * 2.2;
                    spheres.push(Sphere {
                        centre: [at(i), at(j), 13.3 + at(k)],
                        radius: 0.9,
                        colour: [
                            0.3 + 0.2 * f64::from(i),
                            0.3 + 0.2 * f64::from(j),
                            0.3 + 0.2 * f64::from(k),
                        ],
                    });
                }
            }
        }
        Scene {
            spheres,
            lights: [[-10.0, 10.0, -5.0], [10.0, 5.0, 0.0]],
        }
    }

    /// The nearest sphere the ray meets beyond `EPS`, and where.
    fn hit(&self, origin: V3, dir: V3) -> Option<(f64, &Sphere)> {
        let mut best: Option<(f64, &Sphere)> = None;
        for s in &self.spheres {
            let oc = sub(origin, s.centre);
            let b = dot(dir, oc);
            let disc = b * b - (dot(oc, oc) - s.radius * s.radius);
            if disc < 0.0 {
                continue;
            }
            let root = disc.sqrt();
            let t = if -b - root > EPS {
                -b - root
            } else {
                -b + root
            };
            if t > EPS && best.is_none_or(|(bt, _)| t < bt) {
                best = Some((t, s));
            }
        }
        best
    }

    /// Whether anything lies between `point` and `dist` along `dir`.
    fn shadowed(&self, point: V3, dir: V3, dist: f64) -> bool {
        self.hit(point, dir).is_some_and(|(t, _)| t < dist)
    }

    fn trace(&self, origin: V3, dir: V3, depth: u32) -> V3 {
        let Some((t, s)) = self.hit(origin, dir) else {
            // The sky: a gradient over the direction.
            return [0.2 + 0.3 * dir[1], 0.3 + 0.2 * dir[0], 0.5];
        };
        let point = add(origin, scale(dir, t));
        let normal = scale(sub(point, s.centre), 1.0 / s.radius);
        let lifted = add(point, scale(normal, 1e-4));
        let mut colour = scale(s.colour, AMBIENT);
        for light in self.lights {
            let to = sub(light, point);
            let dist = dot(to, to).sqrt();
            let l = scale(to, 1.0 / dist);
            let lambert = dot(normal, l);
            if lambert > 0.0 && !self.shadowed(lifted, l, dist) {
                colour = add(colour, scale(s.colour, LIGHT * lambert));
            }
        }
        if depth < DEPTH {
            let r = sub(dir, scale(normal, 2.0 * dot(dir, normal)));
            let reflected = self.trace(lifted, r, depth + 1);
            colour = add(scale(colour, 1.0 - REFLECT), mul([REFLECT; 3], reflected));
        }
        colour
    }

    /// The hash of row `y`'s colours, bit for bit. [`Fault::WrongRule`] aims the rays at the
    /// pixels' corners instead of their centres.
    fn render_row(&self, p: Params, y: u32, wrong: bool) -> u64 {
        let offset = if wrong { 0.0 } else { 0.5 };
        let aspect = f64::from(p.width) / f64::from(p.height);
        let sy = 0.5 - (f64::from(y) + offset) / f64::from(p.height);
        let mut hash = SequenceHash::new();
        for x in 0..p.width {
            let sx = ((f64::from(x) + offset) / f64::from(p.width) - 0.5) * aspect;
            let colour = self.trace([0.0; 3], norm([sx, sy, 1.0]), 0);
            colour.iter().for_each(|c| hash.push(c.to_bits()));
        }
        hash.hash
    }
}

/// A row to render; the result goes to `reply`.
struct Render {
    row: u32,
    reply: ActorRef<RunnerMsg>,
}

/// A RayTracer worker: renders the rows it is handed.
struct RayTracer {
    index: usize,
    params: Params,
    scene: Arc<Scene>,
    handled: u64,
    tally: Tally,
    /// [`Fault::WrongRule`] (worker 0 only).
    wrong: bool,
}

impl Actor for RayTracer {
    type Msg = Render;

    fn handle(&mut self, _ctx: &mut Context<Self>, msg: Render) {
        self.handled += 1;
        let hash = self.scene.render_row(self.params, msg.row, self.wrong);
        // The Runner stops once it has every row: only a repeated row can find it gone.
        let _ = msg.reply.send(RunnerMsg::Row {
            row: msg.row,
            worker: self.index,
            hash,
        });
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.tally.fetch_add(self.handled, Ordering::Relaxed);
    }

    /// ⟨false, _, low, low, high⟩ (§5.1.5): Slave → `Task`.
    fn characteristics() -> Option<Characteristics> {
        Some(Characteristics::new(Par::Low, Comm::Low, Cpu::High))
    }
}

/// What the Runner answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Image {
    rows: u32,
    /// Rows that came back more than once.
    repeated: u32,
    /// The row hashes, in row order.
    hash: SequenceHash,
}

/// A message to the Runner.
enum RunnerMsg {
    /// From the driver: render the image, answer with its checksum.
    Start(ReplyTo<Image>),
    /// A rendered row.
    Row { row: u32, worker: usize, hash: u64 },
}

/// The Runner: hands out rows, one per worker at a time, and collects them.
struct Runner {
    height: u32,
    workers: Vec<ActorRef<Render>>,
    next: u32,
    rows: Vec<Option<u64>>,
    received: u32,
    repeated: u32,
    done: Option<ReplyTo<Image>>,
    handled: u64,
    tally: Tally,
    /// The injected fault, on row 0: [`Fault::Drop`]: never handed out; [`Fault::Duplicate`]:
    /// handed out twice.
    fault: Fault,
}

impl Runner {
    /// Hands the next row, if any, to worker `w`.
    fn hand_out(&mut self, ctx: &Context<Self>, w: usize) {
        if self.next == self.height {
            return;
        }
        let row = self.next;
        self.next += 1;
        let copies = match self.fault {
            Fault::Drop if row == 0 => 0,
            Fault::Duplicate if row == 0 => 2,
            _ => 1,
        };
        for _ in 0..copies {
            self.workers[w]
                .send(Render {
                    row,
                    reply: ctx.myself(),
                })
                .expect("worker alive");
        }
    }
}

impl Actor for Runner {
    type Msg = RunnerMsg;

    fn handle(&mut self, ctx: &mut Context<Self>, msg: RunnerMsg) {
        match msg {
            RunnerMsg::Start(done) => {
                self.done = Some(done);
                for w in 0..self.workers.len() {
                    self.hand_out(ctx, w);
                }
            }
            RunnerMsg::Row { row, worker, hash } => {
                self.handled += 1;
                match &mut self.rows[row as usize] {
                    Some(_) => self.repeated += 1,
                    slot => {
                        *slot = Some(hash);
                        self.received += 1;
                    }
                }
                self.hand_out(ctx, worker);
            }
        }
        if self.received == self.height {
            if let Some(done) = self.done.take() {
                done.send(Image {
                    rows: self.received,
                    repeated: self.repeated,
                    hash: SequenceHash::of(self.rows.iter().map(|h| h.unwrap_or(0))),
                });
                ctx.stop();
            }
        }
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.tally.fetch_add(self.handled, Ordering::Relaxed);
    }

    /// ⟨false, _, low, high, low⟩ (§5.1.5): Master → `Thread`.
    fn characteristics() -> Option<Characteristics> {
        Some(Characteristics::new(Par::Low, Comm::High, Cpu::Low))
    }
}

/// The image of a correct run, rendered sequentially.
fn expected(p: Params) -> Image {
    let scene = Scene::new();
    Image {
        rows: p.height,
        repeated: 0,
        hash: SequenceHash::of((0..p.height).map(|y| scene.render_row(p, y, false))),
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let p = of(run.size);
    noting(measure(system, run, p), p)
}

fn measure(system: &System, run: &Run, p: Params) -> Measured {
    system.run_until_idle();
    let before = system.stats();
    let tally = Tally::default();
    let scene = Arc::new(Scene::new());
    let workers = (0..p.workers)
        .map(|index| {
            system.spawn(RayTracer {
                index,
                params: p,
                scene: Arc::clone(&scene),
                handled: 0,
                tally: Arc::clone(&tally),
                wrong: index == 0 && run.injects(Fault::WrongRule),
            })
        })
        .collect();
    let runner = system.spawn(Runner {
        height: p.height,
        workers,
        next: 0,
        rows: vec![None; p.height as usize],
        received: 0,
        repeated: 0,
        done: None,
        handled: 0,
        tally: Arc::clone(&tally),
        fault: run.fault,
    });
    system.run_until_idle();
    let start = Instant::now();
    let pending = runner.ask(RunnerMsg::Start).expect("fresh actor");
    let image = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    // A Runner still waiting for a row (a lost one) is stopped here; its workers follow.
    runner.stop();
    drop(runner);
    system.run_until_idle();
    let counted = tally.load(Ordering::Relaxed);
    let image = match image {
        Ok(image) => image,
        Err(reason) => return Measured::failed(counted, elapsed, reason),
    };
    Measured::checked(
        counted,
        elapsed,
        (image, alive_since(system, &before)),
        (expected(p), 0),
    )
    .with_message_count(2 * u64::from(p.height), "2·H = ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scene_has_spheres_shadows_and_sky() {
        let scene = Scene::new();
        // The centre ray meets a sphere; a ray to the side sees the sky.
        assert!(scene.hit([0.0; 3], norm([0.05, 0.05, 1.0])).is_some());
        assert!(scene.hit([0.0; 3], norm([1.0, 0.0, 0.1])).is_none());
        // The wrong rule changes every row.
        let p = Params {
            width: 16,
            height: 16,
            workers: 1,
        };
        for y in 0..p.height {
            assert_ne!(scene.render_row(p, y, false), scene.render_row(p, y, true));
        }
    }

    #[test]
    fn small_runs_verify_and_faults_fail() {
        let p = Params {
            width: 24,
            height: 20,
            workers: 3,
        };
        let m = measure(
            &loka::System::builder().workers(2).build().unwrap(),
            &Run::new(Size::Quick),
            p,
        );
        assert!(m.verified, "{}", m.check);
        assert_eq!(m.messages, 40);
        for &fault in BENCH.faults {
            let system = loka::System::builder().workers(2).build().unwrap();
            let m = measure(&system, &Run::new(Size::Quick).with_fault(fault), p);
            assert!(!m.verified, "{fault:?}: {}", m.check);
        }
    }
}
