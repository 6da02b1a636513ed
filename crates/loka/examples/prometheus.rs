//! loka's counters served to Prometheus (docs/observability.md): a small workload — a feeder
//! thread sending to a registered actor, a supervised child that panics now and then — while a
//! `MetricsCollector` publishes the system's counters every second through the `metrics`
//! facade to `metrics-exporter-prometheus`, which serves them over HTTP on 127.0.0.1.
//!
//! ```text
//! cargo run -p loka --features metrics --example prometheus -- [PORT] [SECONDS]
//! curl -s http://127.0.0.1:PORT/metrics | grep '^loka_'
//! ```
//!
//! PORT 0 (the default) takes any free port; the address is printed. Without SECONDS it serves
//! until Ctrl-C (SIGINT or SIGTERM); with it, for that many seconds, then prints the system's
//! final `snapshot()` as JSON and exits. A port already taken, or a bad argument, is one line
//! on stderr and a non-zero exit.

use loka::supervisor::{ChildSpec, Strategy, SupervisorSpec};
use loka::{Actor, Context, MetricsCollector, System};
use metrics_exporter_prometheus::PrometheusBuilder;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

/// Sums what it is sent.
struct Sink(u64);

impl Actor for Sink {
    type Msg = u64;
    fn handle(&mut self, _ctx: &mut Context<Self>, n: u64) {
        self.0 = self.0.wrapping_add(n);
    }
}

/// One of two players passing a ball: each pass wakes the other from a worker, the wake-ups
/// whose queue wait the runtime samples (`loka_worker_queue_wait_seconds`).
struct Player(Option<loka::ActorRef<Pass>>);

enum Pass {
    Partner(loka::ActorRef<Pass>),
    Ball(u32),
}

impl Actor for Player {
    type Msg = Pass;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: Pass) {
        match msg {
            Pass::Partner(partner) => self.0 = Some(partner),
            Pass::Ball(0) => {}
            Pass::Ball(n) => {
                if let Some(partner) = &self.0 {
                    let _ = partner.send(Pass::Ball(n - 1));
                }
            }
        }
    }
}

/// A supervised worker that panics on a poisoned job (its supervisor restarts it in place).
struct Worker;

impl Actor for Worker {
    type Msg = bool;
    fn handle(&mut self, _ctx: &mut Context<Self>, poisoned: bool) {
        if poisoned {
            panic!("poisoned job (the supervisor restarts this worker)");
        }
    }
}

/// What the command line asked for.
struct Args {
    port: u16,
    seconds: Option<u64>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let port = match args.next() {
        None => 0,
        Some(p) => p
            .parse()
            .map_err(|_| format!("PORT must be a number from 0 to 65535, not `{p}`"))?,
    };
    let seconds = match args.next() {
        None => None,
        Some(s) => Some(
            s.parse()
                .map_err(|_| format!("SECONDS must be a whole number, not `{s}`"))?,
        ),
    };
    if let Some(extra) = args.next() {
        return Err(format!(
            "unexpected argument `{extra}` (usage: prometheus [PORT] [SECONDS])"
        ));
    }
    Ok(Args { port, seconds })
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut addr = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
    if args.port == 0 {
        // The exporter binds the address itself and does not say which port it got: ask the
        // system for a free one first. (Another process could take it in between; then the
        // exporter fails below, with a message.)
        match TcpListener::bind(addr).and_then(|l| l.local_addr()) {
            Ok(free) => addr = free,
            Err(e) => {
                eprintln!("error: no free port on 127.0.0.1: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    // The recorder first, so that the collector's first publication reaches it.
    if let Err(e) = PrometheusBuilder::new().with_http_listener(addr).install() {
        eprintln!("error: cannot serve metrics on {addr}: {e}");
        return ExitCode::FAILURE;
    }

    let system = match System::builder().workers(2).build() {
        Ok(system) => system,
        Err(e) => {
            eprintln!("error: cannot start the actor system: {e}");
            return ExitCode::FAILURE;
        }
    };
    let exporter = match MetricsCollector::new(&system).spawn(Duration::from_secs(1)) {
        Ok(exporter) => exporter,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("serving loka metrics on http://{addr}/metrics");

    // The workload, every 100 ms: 1,000 messages to a registered actor, a rally of 1,000
    // passes; a poisoned job every 5 s.
    let sink = system.spawn(Sink(0));
    if let Err(e) = system.register("sink", &sink) {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    let spec = SupervisorSpec::new(Strategy::OneForOne).child(ChildSpec::new("worker", || Worker));
    let supervisor = match spec.and_then(|spec| system.spawn_supervisor(spec)) {
        Ok(supervisor) => supervisor,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let worker = match supervisor.child::<bool>("worker") {
        Ok(worker) => worker,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (a, b) = (system.spawn(Player(None)), system.spawn(Player(None)));
    let _ = a.send(Pass::Partner(b.clone()));
    let _ = b.send(Pass::Partner(a.clone()));
    let stop = Arc::new(AtomicBool::new(false));
    let feeder = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut round = 0u64;
            while !stop.load(Relaxed) {
                for n in 0..1_000 {
                    let _ = sink.send(n);
                }
                let _ = a.send(Pass::Ball(1_000));
                let _ = worker.send(round % 50 == 49);
                round += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };

    match args.seconds {
        Some(seconds) => {
            std::thread::sleep(Duration::from_secs(seconds));
            stop.store(true, Relaxed);
            let _ = feeder.join();
            system.run_until_idle();
            exporter.stop();
            match serde_json::to_string(&system.snapshot()) {
                Ok(json) => println!("{json}"),
                Err(e) => {
                    eprintln!("error: the snapshot does not serialize: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
        None => {
            #[cfg(unix)]
            {
                if let Err(e) = system.run_until_signal() {
                    eprintln!("error: {e}");
                    return ExitCode::FAILURE;
                }
                stop.store(true, Relaxed);
                let _ = feeder.join();
                exporter.stop();
            }
            #[cfg(not(unix))]
            {
                let _ = feeder.join(); // runs until the process is ended
            }
        }
    }
    ExitCode::SUCCESS
}
