//! Measures the CPU an idle system uses: a burst of ping-pong work, then `--idle-secs` (default 5)
//! of idling, reporting the process CPU time over the idle period from `/proc/self/stat`.
//!
//! ```sh
//! cargo run --release -p loka --example idle_cpu -- --workers 2 --idle-secs 5
//! ```
//! Prints one JSON object: `{"workers":2,"idle_secs":5.0,"cpu_percent":0.0,...}`.

use loka::{Actor, ActorRef, Context, System};
use std::time::{Duration, Instant};

struct Echo {
    peer: Option<ActorRef<u32>>,
}

impl Actor for Echo {
    type Msg = u32;
    fn handle(&mut self, ctx: &mut Context<Self>, n: u32) {
        match (&self.peer, n) {
            (_, 0) => ctx.stop(),
            (Some(peer), n) => {
                let _ = peer.send(n - 1);
            }
            (None, _) => {}
        }
    }
}

/// User + system CPU time of this process, in seconds (Linux `/proc/self/stat`, clock ticks).
fn process_cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("Linux /proc/self/stat");
    // Fields after the command name (which may contain spaces) start after the last ')'.
    let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0 // USER_HZ is 100 on Linux
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut workers, mut idle_secs) = (2usize, 5.0f64);
    while let Some(flag) = args.next() {
        let value = args.next().unwrap_or_default();
        match flag.as_str() {
            "--workers" => workers = value.parse().expect("--workers N"),
            "--idle-secs" => idle_secs = value.parse().expect("--idle-secs S"),
            other => {
                eprintln!("error: unknown flag `{other}` (known: --workers, --idle-secs)");
                std::process::exit(2);
            }
        }
    }
    let system = System::builder()
        .workers(workers)
        .build()
        .unwrap_or_else(|e| {
            eprintln!("error: {e}");
            std::process::exit(1)
        });
    // Work first, so the idle period starts right after a busy one.
    let a = system.spawn(Echo { peer: None });
    let b = system.spawn(Echo {
        peer: Some(a.clone()),
    });
    drop(a);
    b.send(1_000_000).expect("alive");
    system.run_until_idle();
    let parks_before = system.stats().total.parks;
    let cpu_before = process_cpu_secs();
    let start = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(idle_secs));
    let cpu = process_cpu_secs() - cpu_before;
    let wall = start.elapsed().as_secs_f64();
    let stats = system.stats();
    println!(
        "{{\"workers\":{workers},\"idle_secs\":{wall:.3},\"cpu_secs\":{cpu:.3},\"cpu_percent\":{:.2},\"parks_during_idle\":{},\"steal_attempts\":{}}}",
        100.0 * cpu / wall,
        stats.total.parks - parks_before,
        stats.total.steal_attempts
    );
    system.shutdown();
}
