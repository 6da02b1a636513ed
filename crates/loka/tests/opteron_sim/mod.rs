//! The simulated machine of the tests that need many NUMA nodes: the 4-socket, 8-node Opteron
//! 6376 preset at all of its 64 PUs, seed 1, and no quiet-time wait (the tests drive it with
//! `run_until_idle`); and the fan-out of jobs they put on it.

use loka::{Actor, ActorRef, Config, Context, EngineKind, PolicyKind, System};
use std::time::Duration;

/// Workers of the preset: one per PU.
pub const WORKERS: usize = 64;

/// A system on the simulated Opteron under `policy`.
pub fn system(policy: PolicyKind) -> System {
    let mut config = Config {
        engine: EngineKind::Sim,
        topology: "preset:opteron6376".to_owned(),
        workers: WORKERS,
        policy,
        seed: 1,
        ..Config::default()
    };
    config.sim.quiet_ms = 0;
    System::from_config(config).unwrap()
}

/// Declared compute of one job.
pub const JOB: Duration = Duration::from_micros(100);

/// One job per message: declared compute, nothing else.
pub struct Job;

impl Actor for Job {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _: ()) {
        ctx.charge(JOB);
    }
}

/// Wakes every job in one activation: at its message, or `delay` after it (from a timer).
pub struct Fan {
    /// The jobs it wakes.
    pub jobs: Vec<ActorRef<()>>,
    /// `None`: at once.
    pub delay: Option<Duration>,
}

impl Fan {
    fn wake_all(&self) {
        for job in &self.jobs {
            let _ = job.send(());
        }
    }
}

impl Actor for Fan {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _: ()) {
        match self.delay {
            None => self.wake_all(),
            Some(delay) => {
                ctx.run_after(delay, |fan, _| fan.wake_all());
            }
        }
    }
}
