//! Handler time per actor (`handler_sample_us`; docs/observability.md, "Handler time"): the
//! simulation records exact virtual time; off, nothing runs; bad values are refused naming the
//! key. The sampled figures under the wall-clock engines are checked in `tests/handler_time.rs`,
//! a test binary of their own, because a sampler shares the cores with whatever else runs.

use crate::config::{ConfigError, EngineKind};
use crate::{Actor, ActorId, Context, SpawnOptions, System};
use std::time::{Duration, Instant};

/// Busy for `us` of wall-clock time per message (or, under the simulation, charges it).
struct Spin {
    us: u64,
    /// Under the simulation: charge the time instead of spending it.
    charge: bool,
}

impl Actor for Spin {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _msg: ()) {
        let began = Instant::now();
        if self.charge {
            ctx.charge(Duration::from_micros(self.us));
        } else {
            while began.elapsed() < Duration::from_micros(self.us) {
                std::hint::spin_loop();
            }
        }
    }
}

struct Pair {
    system: System,
    heavy: ActorId,
    light: ActorId,
    /// Kept so the actors live (an unreferenced actor stops, and its label goes with it).
    _refs: [crate::ActorRef<()>; 2],
}

/// A heavy actor (3× the light one's handler time per message) and a light one, `n` messages
/// each, interleaved; run to idle.
fn run_pair(engine: EngineKind, workers: usize, sample_us: u64, n: usize) -> Pair {
    let system = System::builder()
        .engine(engine)
        .workers(workers)
        .handler_sample_us(sample_us)
        .build()
        .unwrap();
    let charge = engine == EngineKind::Sim;
    let heavy = system.spawn(Spin { us: 300, charge });
    let light = system.spawn_with(
        Spin { us: 100, charge },
        SpawnOptions::default().name("the-light-one"),
    );
    system.register("heavy", &heavy).unwrap();
    for _ in 0..n {
        heavy.send(()).unwrap();
        light.send(()).unwrap();
    }
    system.run_until_idle();
    Pair {
        heavy: heavy.id(),
        light: light.id(),
        system,
        _refs: [heavy, light],
    }
}

#[test]
fn the_simulation_records_each_activation_s_exact_virtual_time() {
    let pair = run_pair(EngineKind::Sim, 2, 1_000, 100);
    let report = pair
        .system
        .snapshot()
        .handler_time
        .expect("recording is on");
    assert_eq!(report.sample_interval_ns, None, "exact, not sampled");
    assert_eq!(report.rounds, 0);
    let find = |id| report.actors.iter().find(|a| a.id == id).unwrap();
    let (heavy, light) = (find(pair.heavy), find(pair.light));
    // Each message charged 300 µs (or 100), plus the model's few hundred ns per activation.
    assert!(heavy.handler_ns >= 100 * 300_000, "{report:#?}");
    assert!(light.handler_ns >= 100 * 100_000, "{report:#?}");
    let ratio = heavy.handler_ns as f64 / light.handler_ns as f64;
    assert!((2.9..=3.05).contains(&ratio), "ratio {ratio}: {report:#?}");
    let busy: u64 = report.worker_busy_ns.iter().sum();
    assert_eq!(
        busy,
        report.actors.iter().map(|a| a.handler_ns).sum::<u64>()
    );
    // The same run gives the same figures (virtual time).
    let again = run_pair(EngineKind::Sim, 2, 1_000, 100);
    assert_eq!(
        again.system.snapshot().handler_time.unwrap().actors[0].handler_ns,
        heavy.handler_ns
    );
}

#[test]
fn off_there_is_no_sampler_and_no_record() {
    for &engine in EngineKind::ALL {
        let pair = run_pair(engine, 1, 0, 3);
        assert!(pair.system.sampler.is_none(), "{engine}");
        assert!(pair.system.shared.handler_time.is_none(), "{engine}");
        assert_eq!(pair.system.snapshot().handler_time, None, "{engine}");
    }
    let on = run_pair(EngineKind::ActorCentric, 1, 500, 1);
    assert!(on.system.sampler.is_some());
    on.system.shutdown();
    assert!(
        !on.system.sampler.as_ref().unwrap().is_running(),
        "shutdown stops the sampler"
    );
}

#[test]
fn a_sampling_interval_out_of_range_is_refused_naming_the_key() {
    for us in [1, 99, 1_000_001] {
        let built = System::builder().workers(1).handler_sample_us(us).build();
        match built {
            Err(ConfigError::Invalid { key, value, .. }) => {
                assert_eq!((key, value), ("handler_sample_us", us.to_string()));
            }
            other => panic!("{us}: {other:?}"),
        }
    }
    for us in [0, 100, 1_000_000] {
        System::builder()
            .workers(1)
            .handler_sample_us(us)
            .build()
            .unwrap();
    }
}
