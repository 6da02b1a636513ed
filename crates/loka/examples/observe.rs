//! A system serving its snapshots on a Unix socket for `loka top` (docs/observability.md, "Live
//! view"): a feeder thread sends to two registered actors, one of which is slow, so its mailbox
//! grows and shrinks; the socket path is printed.
//!
//! ```text
//! cargo run -p loka --example observe -- [PATH] [SECONDS]
//! loka top --socket PATH            # in another terminal
//! loka top --socket PATH --json     # one snapshot as JSON
//! ```
//!
//! PATH defaults to `loka-observe.sock` in the temporary directory; without SECONDS it runs
//! until Ctrl-C. A path that exists, or a directory that does not, is one line on stderr and a
//! non-zero exit.

use loka::{Actor, Context, System};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Sums what it is sent.
struct Sink(u64);

impl Actor for Sink {
    type Msg = u64;
    fn handle(&mut self, _ctx: &mut Context<Self>, n: u64) {
        self.0 = self.0.wrapping_add(n);
    }
}

/// Takes 50 µs per message: its mailbox fills while the feeder sends in bursts.
struct Slow;

impl Actor for Slow {
    type Msg = u64;
    fn handle(&mut self, _ctx: &mut Context<Self>, _n: u64) {
        let until = Instant::now() + Duration::from_micros(50);
        while Instant::now() < until {
            std::hint::spin_loop();
        }
    }
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let path = args.next().map_or_else(
        || std::env::temp_dir().join("loka-observe.sock"),
        Into::into,
    );
    let seconds: Option<u64> = match args.next().map(|s| s.parse()) {
        None => None,
        Some(Ok(s)) => Some(s),
        Some(Err(e)) => {
            eprintln!("error: SECONDS: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Handler time on (10 ms samples, unless LOKA_HANDLER_SAMPLE_US says otherwise): the view
    // lists the busiest actors.
    let system = match System::builder()
        .handler_sample_us(10_000)
        .env()
        .and_then(|b| b.observe(&path).build())
    {
        Ok(system) => system,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let sink = system.spawn(Sink(0));
    let slow = system.spawn(Slow);
    system.register("sink", &sink).unwrap();
    system.register("slow", &slow).unwrap();
    println!("serving snapshots on {}", path.display());
    println!("watch with: loka top --socket {}", path.display());
    // A feeder thread; the main thread waits for the deadline or a signal.
    let stop = Arc::new(AtomicBool::new(false));
    let feeder = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut round = 0u64;
            while !stop.load(Relaxed) {
                for i in 0..10_000 {
                    let _ = sink.send(i);
                }
                for i in 0..(round % 40) * 25 {
                    let _ = slow.send(i);
                }
                round += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    match seconds {
        Some(s) => std::thread::sleep(Duration::from_secs(s)),
        None => {
            // Ctrl-C: a graceful shutdown, which removes the socket file.
            if let Err(e) = system.run_until_signal() {
                eprintln!("error: {e}");
            }
        }
    }
    stop.store(true, Relaxed);
    let _ = feeder.join();
    drop(system);
    ExitCode::SUCCESS
}
