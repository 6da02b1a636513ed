//! The starvation bound, under every policy: with work queued on one worker of a 64-PU machine
//! and every other worker idle, the idle workers find it. Under the simulation (the 4-socket,
//! 8-node Opteron 6376 preset at 64 workers), so the bound is a virtual time that no host load
//! can stretch.

mod opteron_sim;

use loka::{Placement, PolicyKind, SpawnOptions};
use opteron_sim::{Fan, Job, JOB, WORKERS};

/// Jobs queued at once; each declares `JOB` of compute.
const JOBS: usize = 256;

/// Virtual nanoseconds from the fan-out to the last job done.
fn fan_out(policy: PolicyKind) -> u64 {
    let system = opteron_sim::system(policy);
    let on_worker_0 = || SpawnOptions {
        placement: Placement::Worker(0),
        ..SpawnOptions::default()
    };
    // Every job's first activation, and so its home under the policies that keep one, is
    // worker 0's.
    let jobs: Vec<_> = (0..JOBS)
        .map(|_| system.spawn_with(Job, on_worker_0()))
        .collect();
    let fan = system.spawn_with(Fan { jobs, delay: None }, on_worker_0());
    system.run_until_idle();
    let before = system.stats().sim.unwrap().virtual_ns;
    fan.send(()).unwrap();
    system.run_until_idle();
    let took = system.stats().sim.unwrap().virtual_ns - before;
    system.shutdown();
    took
}

/// 256 jobs of 100 µs queued on worker 0 of 64: spread over every worker they take 400 µs; on
/// one NUMA node's 8 workers, 3.2 ms; on worker 0 alone, 25.6 ms. Every policy must stay under
/// 4× the spread time (1.6 ms): a policy whose home preference holds work on a busy home while
/// other nodes idle, or whose thieves give up, exceeds it. Every policy is run before any
/// assertion, so a failure lists them all.
#[test]
fn idle_workers_find_work_queued_on_one_worker_under_every_policy() {
    let ideal = JOBS as u64 * JOB.as_nanos() as u64 / WORKERS as u64;
    let bound = 4 * ideal;
    let results: Vec<(PolicyKind, u64)> = PolicyKind::ALL
        .iter()
        .map(|&policy| (policy, fan_out(policy)))
        .collect();
    let table: String = results
        .iter()
        .map(|(policy, took)| {
            format!(
                "\n  {policy}: {took} ns ({:.2}× the spread time)",
                *took as f64 / ideal as f64
            )
        })
        .collect();
    let starving: Vec<String> = results
        .iter()
        .filter(|(_, took)| *took > bound)
        .map(|(policy, _)| policy.to_string())
        .collect();
    assert!(
        starving.is_empty(),
        "over {bound} ns under {starving:?}:{table}"
    );
    println!("fan-out of {JOBS} × {JOB:?} on {WORKERS} workers:{table}");
}
