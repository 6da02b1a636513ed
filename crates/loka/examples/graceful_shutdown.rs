//! Shutting a system down (docs/shutdown.md): a graceful shutdown that stops a tree of actors
//! children first after they have handled their backlog, its report, and the dead letters of a
//! prompt one. With `--until-signal` it runs as a service until Ctrl-C (SIGINT) or SIGTERM.
//!
//! ```sh
//! cargo run -p loka --example graceful_shutdown
//! cargo run -p loka --example graceful_shutdown -- --until-signal   # then press Ctrl-C
//! ```

use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

/// A worker of a shop: handles orders, says goodbye when it stops.
struct Clerk {
    name: String,
    handled: Arc<AtomicU64>,
}

impl Actor for Clerk {
    type Msg = u64;
    fn handle(&mut self, _ctx: &mut Context<Self>, _order: u64) {
        std::thread::sleep(Duration::from_micros(50)); // some work
        self.handled.fetch_add(1, Relaxed);
    }
    fn stopped(&mut self, ctx: &mut Context<Self>) {
        let thread = std::thread::current();
        println!(
            "  {} stopped (worker {:?}, thread {})",
            self.name,
            ctx.worker_index(),
            thread.name().unwrap_or("?")
        );
    }
}

/// Asks the shop for its clerks.
type Introduce = ReplyTo<Vec<ActorRef<u64>>>;

/// The shop: spawns its clerks and introduces them.
struct Shop {
    clerks: Vec<ActorRef<u64>>,
    handled: Arc<AtomicU64>,
}

impl Actor for Shop {
    type Msg = Introduce;
    fn started(&mut self, ctx: &mut Context<Self>) {
        for i in 0..3 {
            let clerk = ctx.spawn(Clerk {
                name: format!("clerk {i}"),
                handled: Arc::clone(&self.handled),
            });
            self.clerks.push(clerk);
        }
    }
    fn handle(&mut self, _ctx: &mut Context<Self>, reply: Self::Msg) {
        reply.send(self.clerks.clone());
    }
    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        println!("  the shop stopped");
    }
}

/// Opens a shop and queues `orders` orders at its clerks; returns the orders handled so far.
fn open_shop(system: &System, orders: u64) -> (ActorRef<Introduce>, Arc<AtomicU64>) {
    let handled = Arc::new(AtomicU64::new(0));
    let shop = system.spawn(Shop {
        clerks: Vec::new(),
        handled: Arc::clone(&handled),
    });
    let clerks = shop.ask(|reply| reply).unwrap().wait().unwrap();
    for order in 0..orders {
        clerks[order as usize % clerks.len()].send(order).unwrap();
    }
    (shop, handled)
}

fn main() {
    let until_signal = std::env::args().any(|a| a == "--until-signal");
    let system = System::builder().workers(2).build().unwrap();
    let (_shop, handled) = open_shop(&system, 2_000);

    if until_signal {
        println!("serving; press Ctrl-C (or send SIGTERM) to stop");
        #[cfg(unix)]
        match system.run_until_signal_timeout(Duration::from_secs(5)) {
            Ok((signal, report)) => println!("{signal}: {report:?}"),
            Err(e) => eprintln!("{e}"),
        }
        return;
    }

    println!("graceful shutdown with 2,000 orders queued:");
    let report = system.shutdown_timeout(Duration::from_secs(10));
    println!(
        "  {} orders handled, {} actors stopped in time, {} dead letters, clean: {} ({:?})",
        handled.load(Relaxed),
        report.stopped,
        report.dead_letters,
        report.is_clean(),
        report.elapsed
    );
    let late = system.spawn(Clerk {
        name: "late".into(),
        handled: Arc::new(AtomicU64::new(0)),
    });
    println!(
        "  a spawn after the shutdown is stopped: {} (send: {:?})",
        late.is_stopped(),
        late.send(0).map_err(|e| e.reason)
    );

    println!("prompt shutdown with 2,000 orders queued:");
    let system = System::builder().workers(2).build().unwrap();
    let (_shop, handled) = open_shop(&system, 2_000);
    system.shutdown();
    println!(
        "  {} orders handled, {} dead letters; the most recent:",
        handled.load(Relaxed),
        system.stats().dead_letters
    );
    for letter in system.dead_letters().iter().rev().take(3) {
        println!(
            "    {} × {} to actor {} ({})",
            letter.count, letter.message_type, letter.actor, letter.reason
        );
    }
}
