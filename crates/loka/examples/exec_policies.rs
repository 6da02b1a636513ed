//! Execution policies (docs/exec-policies.md): a reader that blocks on "I/O" feeds a hub that
//! updates small buckets, under the three modes Panini compares. Under `all-task` the reader's
//! sleeps hold a worker; under `auto` the reader (declared blocking) gets its own thread and the
//! buckets (declared light leaves) run inline in the hub's handler. A second part shows an
//! undeclared blocking actor promoted to its own thread under `auto`.
//!
//! ```sh
//! cargo run --release -p loka --example exec_policies
//! ```

use loka::exec_policy::{Characteristics, Comm, Cpu, Par};
use loka::{Actor, ActorRef, Config, Context, ExecMode, ReplyTo, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Reads "pages" (a sleep models the blocking read) and sends each byte to the hub.
struct Reader {
    hub: ActorRef<u8>,
    pages: u32,
}
impl Actor for Reader {
    type Msg = ReplyTo<()>;
    fn handle(&mut self, _ctx: &mut Context<Self>, done: ReplyTo<()>) {
        for page in 0..self.pages {
            std::thread::sleep(Duration::from_micros(300));
            for i in 0..512u32 {
                self.hub.send(((page * 31 + i * 7) % 128) as u8).unwrap();
            }
        }
        done.send(());
    }
    fn characteristics() -> Option<Characteristics> {
        Some(Characteristics::blocking())
    }
}

/// Routes each byte to its bucket.
struct Hub {
    buckets: Vec<ActorRef<()>>,
}
impl Actor for Hub {
    type Msg = u8;
    fn handle(&mut self, _ctx: &mut Context<Self>, byte: u8) {
        self.buckets[byte as usize].send(()).unwrap();
    }
    fn characteristics() -> Option<Characteristics> {
        Some(Characteristics::new(Par::High, Comm::Med, Cpu::Low))
    }
}

/// Counts one character.
struct Bucket {
    total: Arc<AtomicU64>,
}
impl Actor for Bucket {
    type Msg = ();
    fn handle(&mut self, _ctx: &mut Context<Self>, _: ()) {
        self.total.fetch_add(1, Relaxed);
    }
    fn characteristics() -> Option<Characteristics> {
        Some(Characteristics::new(Par::Low, Comm::Low, Cpu::Low))
    }
}

fn histogram(mode: ExecMode) {
    let system = System::from_config(Config {
        workers: 2,
        exec: mode,
        ..Config::default()
    })
    .unwrap();
    let total = Arc::new(AtomicU64::new(0));
    let buckets = (0..128)
        .map(|_| {
            system.spawn(Bucket {
                total: Arc::clone(&total),
            })
        })
        .collect();
    let hub = system.spawn(Hub { buckets });
    let readers: Vec<_> = (0..4)
        .map(|_| {
            system.spawn(Reader {
                hub: hub.clone(),
                pages: 50,
            })
        })
        .collect();
    let start = Instant::now();
    let pending: Vec<_> = readers.iter().map(|r| r.ask(|d| d).unwrap()).collect();
    for p in pending {
        p.wait().unwrap();
    }
    system.run_until_idle();
    let stats = system.stats();
    println!(
        "{:<10} {:>8.1} ms  {} bytes counted, {} dedicated threads, {} inline runs",
        mode.name(),
        start.elapsed().as_secs_f64() * 1e3,
        total.load(Relaxed),
        stats.dedicated_threads,
        stats.total.inline_runs
    );
}

/// Declares nothing, but sleeps in its handler.
struct Sneaky;
impl Actor for Sneaky {
    type Msg = ();
    fn handle(&mut self, _ctx: &mut Context<Self>, _: ()) {
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn main() {
    println!("histogram, 4 blocking readers × 50 pages of 512 bytes, 128 buckets, 2 workers:");
    for mode in ExecMode::PANINI {
        histogram(mode);
    }
    let system = System::from_config(Config {
        workers: 1,
        exec: ExecMode::Auto,
        throughput: 1,
        ..Config::default()
    })
    .unwrap();
    let sneaky = system.spawn(Sneaky);
    for _ in 0..10 {
        sneaky.send(()).unwrap();
    }
    system.run_until_idle();
    println!(
        "an undeclared actor that sleeps in its handler, under auto: promoted to its own thread = {}",
        system.stats().promoted_to_thread == 1
    );
}
