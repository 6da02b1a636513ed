//! What an idle actor costs: resident memory per actor, and the time to spawn one and to stop it.
//!
//! ```sh
//! cargo run --release -p loka --example actor_footprint [-- --actors N]   # default 1,000,000
//! ```
//!
//! Spawns N actors that hold no state from the main thread and keeps a reference to each (an
//! actor nobody references stops by itself), then reads resident memory (`/proc/self/statm`):
//! the growth, less the vector of references, divided by N is the bytes per idle actor (the
//! cell, its first mailbox block, its registry entry, and the allocator's overhead on each).
//! Then drops the references and waits until every actor has stopped. Erlang's figure, the one
//! users know, is ~2.7 KB per process (338 words on a 64-bit VM).

use loka::{Actor, ActorRef, Context, System};
use std::process::ExitCode;
use std::time::Instant;

/// An actor with no state.
struct Idle;

impl Actor for Idle {
    type Msg = ();
    fn handle(&mut self, _: &mut Context<Self>, _: ()) {}
}

/// Resident memory in bytes, from `/proc/self/statm` (0 where there is none).
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    // SAFETY: sysconf only reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as u64;
    pages * page
}

fn parse_actors() -> Result<usize, String> {
    let mut args = std::env::args().skip(1);
    let mut actors = 1_000_000;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--actors" => {
                let value = args.next().ok_or("--actors needs a number")?;
                actors = value
                    .parse()
                    .ok()
                    .filter(|&n: &usize| n > 0)
                    .ok_or(format!("--actors: `{value}` is not a positive number"))?;
            }
            other => return Err(format!("unknown argument `{other}` (known: --actors N)")),
        }
    }
    Ok(actors)
}

fn main() -> ExitCode {
    let actors = match parse_actors() {
        Ok(n) => n,
        Err(e) => {
            eprintln!("actor_footprint: {e}");
            return ExitCode::FAILURE;
        }
    };
    let system = System::builder().build().expect("a system with defaults");
    // Warm the allocator and the registry's tables, so the measurement sees actors, not first
    // growth of the runtime's own structures.
    drop((0..10_000).map(|_| system.spawn(Idle)).collect::<Vec<_>>());
    system.run_until_idle();

    let before = rss();
    let started = Instant::now();
    let refs: Vec<ActorRef<()>> = (0..actors).map(|_| system.spawn(Idle)).collect();
    let spawn = started.elapsed();
    system.run_until_idle();
    let grown = rss().saturating_sub(before);
    let vector = (refs.capacity() * std::mem::size_of::<ActorRef<()>>()) as u64;
    let per_actor = grown.saturating_sub(vector) as f64 / actors as f64;

    let stopped_before = system.stats().actors_stopped;
    let started = Instant::now();
    drop(refs);
    system.run_until_idle();
    let stop = started.elapsed();
    let stopped = system.stats().actors_stopped - stopped_before;
    if stopped != actors as u64 {
        eprintln!("actor_footprint: {stopped} of {actors} actors stopped");
        return ExitCode::FAILURE;
    }
    println!("actors: {actors}");
    println!(
        "resident memory: +{:.1} MiB, of which {:.1} MiB the vector of references",
        grown as f64 / (1 << 20) as f64,
        vector as f64 / (1 << 20) as f64
    );
    println!("bytes per idle actor: {per_actor:.0}");
    println!(
        "spawn from a plain thread: {:.0} ns per actor",
        spawn.as_nanos() as f64 / actors as f64
    );
    println!(
        "stop when unreferenced (until idle): {:.0} ns per actor",
        stop.as_nanos() as f64 / actors as f64
    );
    system.shutdown();
    ExitCode::SUCCESS
}
