//! `auto` gathering its work on fewer workers while they handle more
//! (docs/decisions/0108-auto-gathers-its-workers.md): tokens hop between random actors, a load
//! whose every hop may cross between cores. Run under `cls` (every worker, always) and `auto`
//! (all the workers or half of them, whichever the measurements favour), with `Stats::gather`
//! saying what `auto` did. Where a cache line moves slowly between cores (this project's VM in
//! its slow regime), `auto` ends on one worker of two and handles more; where it moves fast, it
//! keeps both.
//!
//! ```sh
//! cargo run --release -p loka --example auto_workers            # 2 workers
//! cargo run --release -p loka --example auto_workers -- 4       # 4 workers
//! ```

use loka::{Actor, ActorRef, Config, Context, System};
use std::sync::mpsc;
use std::time::Instant;

/// A token with the hops it has left.
struct Token(u32);

/// Passes each token to a random peer until its hops are spent, then reports it.
struct Hopper {
    peers: Vec<ActorRef<Msg>>,
    done: mpsc::Sender<()>,
    rng: fastrand::Rng,
}

enum Msg {
    Peers(Vec<ActorRef<Msg>>),
    Token(Token),
}

impl Actor for Hopper {
    type Msg = Msg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: Msg) {
        match msg {
            Msg::Peers(peers) => self.peers = peers,
            Msg::Token(Token(0)) => self.done.send(()).unwrap(),
            Msg::Token(Token(left)) => {
                let peer = &self.peers[self.rng.usize(..self.peers.len())];
                peer.send(Msg::Token(Token(left - 1))).unwrap();
            }
        }
    }
}

/// Runs the load under `policy`; returns hops per second and the system's statistics.
fn run(policy: &str, workers: usize) -> (f64, loka::Stats) {
    let config = Config {
        workers,
        policy: policy.parse().expect("a policy name"),
        ..Config::default()
    };
    let system = System::from_config(config).expect("a valid configuration");
    let (actors, tokens, hops) = (256usize, 512usize, 20_000u32);
    let (done, finished) = mpsc::channel();
    let refs: Vec<ActorRef<Msg>> = (0..actors)
        .map(|i| {
            system.spawn(Hopper {
                peers: Vec::new(),
                done: done.clone(),
                rng: fastrand::Rng::with_seed(i as u64),
            })
        })
        .collect();
    for r in &refs {
        r.send(Msg::Peers(refs.clone())).unwrap();
    }
    let start = Instant::now();
    for t in 0..tokens {
        refs[t % actors].send(Msg::Token(Token(hops))).unwrap();
    }
    for _ in 0..tokens {
        finished.recv().expect("every token arrives");
    }
    let rate = (tokens as f64 * f64::from(hops)) / start.elapsed().as_secs_f64();
    let stats = system.stats();
    system.shutdown();
    (rate, stats)
}

fn main() {
    let workers = std::env::args()
        .nth(1)
        .map_or(2, |w| w.parse().expect("a worker count"));
    for policy in ["cls", "auto"] {
        let (rate, stats) = run(policy, workers);
        let gathered = match &stats.gather {
            Some(g) => format!(
                "{} of {} workers active at the end (settled on {}), {} probes, {} switches, {} actors handed on",
                g.active, g.workers, g.settled, g.probes, g.switches, g.handed_off
            ),
            None => "every worker, always".to_owned(),
        };
        println!("{policy:<5} {:>6.1} M hops/s   {gathered}", rate / 1e6);
    }
}
