//! On the real machine, `System` pins worker i to PU i (checked with `sched_getaffinity` from inside
//! actors running on each worker). Runs only where at least 2 PUs exist.

use loka::{Actor, Context, Placement, ReplyTo, SpawnOptions, System};

/// The CPUs the calling thread may run on.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: `cpu_set_t` is plain data; sched_getaffinity fills it for the calling thread (pid 0).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let rc = libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
        assert_eq!(rc, 0, "sched_getaffinity failed");
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&cpu| libc::CPU_ISSET(cpu, &set))
            .collect()
    }
}

struct Probe;

impl Actor for Probe {
    type Msg = ReplyTo<(Option<usize>, Vec<usize>)>;
    fn handle(&mut self, ctx: &mut Context<Self>, reply: Self::Msg) {
        reply.send((ctx.worker_index(), allowed_cpus()));
    }
}

#[test]
fn system_pins_each_worker_to_its_pu() {
    let pus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if pus < 2 || allowed_cpus().len() < 2 {
        eprintln!("skipped: needs at least 2 PUs");
        return;
    }
    let system = System::builder().workers(2).build().unwrap();
    let layout = &system.machine().layout;
    let topology = &system.machine().topology;
    // Placement is a hint (an idle worker may steal the probe), so probe until every worker has
    // answered, and check each answer against the worker that gave it.
    let mut seen = [false; 2];
    for attempt in 0..10_000 {
        let probe = system.spawn_with(
            Probe,
            SpawnOptions::new().placement(Placement::Worker(attempt % 2)),
        );
        let (ran_on, cpus) = probe.ask(|r| r).unwrap().wait().unwrap();
        let worker = ran_on.expect("probes run on workers");
        let os_index = topology.pu_os_index(layout.pu_of(worker));
        assert_eq!(
            cpus,
            vec![os_index],
            "worker {worker} should be pinned to PU {os_index}"
        );
        seen[worker] = true;
        if seen.iter().all(|&s| s) {
            return;
        }
    }
    panic!("never saw every worker run a probe: {seen:?}");
}

#[test]
fn synthetic_topologies_do_not_pin() {
    let before = allowed_cpus();
    let system = System::builder()
        .workers(4)
        .topology("synthetic:package:2 core:2 pu:1")
        .build()
        .unwrap();
    let probe = system.spawn(Probe);
    let (_, cpus) = probe.ask(|r| r).unwrap().wait().unwrap();
    assert_eq!(cpus, before, "a synthetic machine drives decisions only");
}
