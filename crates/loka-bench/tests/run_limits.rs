//! A run's time limit (`src/limit.rs`): under the simulation it counts the CPU time the process
//! used, so a run whose host is slow, not its work, gets its result; under a real engine it stays
//! wall time. In a test binary of its own, because that CPU time is the whole process's: beside
//! the crate's other tests running in parallel threads, their CPU use counted against the
//! simulated wait (it failed so in a CI run on a loaded host). The two tests here use none.

use loka::{Actor, Config, Context, EngineKind, ReplyTo, System};
use loka_bench::{await_result, Run, Size};
use std::time::Duration;

/// Answers after holding the driver for a while without using CPU, as a starved process does.
struct Slow;

impl Actor for Slow {
    type Msg = ReplyTo<u32>;
    fn handle(&mut self, _ctx: &mut Context<Self>, reply: ReplyTo<u32>) {
        std::thread::sleep(Duration::from_millis(400));
        reply.send(7);
    }
}

/// A wall-clock limit of 100 ms would fail this 400 ms wait; 100 ms of CPU time does not.
#[test]
fn a_starved_simulation_is_not_timed_out() {
    let mut config = Config {
        engine: EngineKind::Sim,
        workers: 2,
        ..Config::default()
    };
    config.sim.quiet_ms = 0;
    let system = System::from_config(config).unwrap();
    let slow = system.spawn(Slow);
    let pending = slow.ask(|reply| reply).unwrap();
    let run = Run::new(Size::Quick).with_timeout(Duration::from_millis(100));
    assert_eq!(await_result(&system, pending, &run, "slow"), Ok(7));
    system.shutdown();
}

/// Under a real engine the limit stays wall time: the same wait fails, naming the benchmark.
#[test]
fn a_real_run_past_its_wall_time_fails() {
    let config = Config {
        workers: 1,
        ..Config::default()
    };
    let system = System::from_config(config).unwrap();
    let slow = system.spawn(Slow);
    let pending = slow.ask(|reply| reply).unwrap();
    let run = Run::new(Size::Quick).with_timeout(Duration::from_millis(100));
    let err = await_result(&system, pending, &run, "slow").unwrap_err();
    assert!(err.contains("slow: no result within 100ms"), "{err}");
    system.shutdown();
}

/// A limit too long for the clock to count (`Duration::MAX`, what `loka bench run --timeout
/// 18446744073709551615` asks for) is no limit, under a real engine and under the simulation; it
/// panicked with "overflow when adding duration to instant".
#[test]
fn a_limit_too_long_for_the_clock_is_no_limit() {
    for engine in [EngineKind::ActorCentric, EngineKind::Sim] {
        let mut config = Config {
            engine,
            workers: 1,
            ..Config::default()
        };
        config.sim.quiet_ms = 0;
        let system = System::from_config(config).unwrap();
        let slow = system.spawn(Slow);
        let pending = slow.ask(|reply| reply).unwrap();
        let run = Run::new(Size::Quick).with_timeout(Duration::MAX);
        assert_eq!(
            await_result(&system, pending, &run, "slow"),
            Ok(7),
            "{engine}"
        );
        system.shutdown();
    }
}
