//! The simulation engine: the same actor program on a virtual 64-PU, 8-node machine under two
//! policies, with predicted (virtual) time, locality counters and a reproducible trace hash.
//!
//! ```sh
//! cargo run --release -p loka --example simulate
//! ```

use loka::{Actor, ActorRef, Config, Context, EngineKind, PolicyKind, System};

/// A member of a token ring.
struct Member {
    next: Option<ActorRef<Token>>,
}

enum Token {
    Next(ActorRef<Token>),
    Hop(u32),
}

impl Actor for Member {
    type Msg = Token;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: Token) {
        match msg {
            Token::Next(next) => self.next = Some(next),
            Token::Hop(0) => {}
            Token::Hop(left) => {
                let _ = self
                    .next
                    .as_ref()
                    .expect("ring closed")
                    .send(Token::Hop(left - 1));
            }
        }
    }
}

fn main() {
    for policy in ["cls", "lgs", "hierarchical:auto"] {
        let config = Config {
            engine: EngineKind::Sim,
            topology: "preset:opteron6376".to_owned(),
            workers: 64,
            policy: policy.parse::<PolicyKind>().expect("a known policy"),
            ..Config::default()
        };
        let system = System::from_config(config).expect("a valid configuration");
        // 32 rings of 16 actors, a token each.
        for _ in 0..32 {
            let ring: Vec<_> = (0..16)
                .map(|_| system.spawn(Member { next: None }))
                .collect();
            for (i, m) in ring.iter().enumerate() {
                let _ = m.send(Token::Next(ring[(i + 1) % ring.len()].clone()));
            }
            let _ = ring[0].send(Token::Hop(5_000));
        }
        system.run_until_idle();
        let stats = system.stats();
        let sim = stats.sim.expect("the sim engine reports its progress");
        let t = &stats.total;
        let homed = (t.exec_home_pu + t.exec_home_node + t.exec_remote_node).max(1);
        println!(
            "{policy:>18}: {:>8.3} ms virtual, {:>7} events, {:>5.1}% of activations on the home node, {} steals, trace {:016x}",
            sim.virtual_ns as f64 / 1e6,
            sim.events,
            100.0 * (t.exec_home_pu + t.exec_home_node) as f64 / homed as f64,
            t.steals,
            sim.trace_hash,
        );
        system.shutdown();
    }
}
