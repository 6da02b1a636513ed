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

/// A lone worker is left to the OS: no partner's distance to keep, and a plain thread's send
/// from another CPU would wake it across CPUs (docs/decisions/0055-wake-on-the-callers-cpu.md).
#[test]
fn a_single_worker_is_not_pinned() {
    let before = allowed_cpus();
    let system = System::builder().workers(1).build().unwrap();
    assert!(!system.machine().pins_workers(system.config()));
    let probe = system.spawn(Probe);
    let (_, cpus) = probe.ask(|r| r).unwrap().wait().unwrap();
    assert_eq!(cpus, before, "one worker runs where the process may");
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

/// Pins the calling thread to one CPU (OS index).
fn pin_to(cpu: usize) {
    // SAFETY: as in `allowed_cpus`; sched_setaffinity reads the set for the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        let rc = libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        assert_eq!(rc, 0, "sched_setaffinity({cpu}) failed");
    }
}

struct WhereRan;

impl Actor for WhereRan {
    type Msg = std::sync::mpsc::Sender<Option<usize>>;
    fn handle(&mut self, ctx: &mut Context<Self>, to: Self::Msg) {
        let _ = to.send(ctx.worker_index());
    }
}

/// A send from a plain thread wakes the actor on the worker pinned to the CPU the sender runs
/// on (no cross-CPU wake-up, docs/decisions/0055-wake-on-the-callers-cpu.md). Round robin would
/// put half the wakes on each worker; an idle worker may still steal one, so the check asks for
/// a clear majority on each CPU, run in a thread of its own so the pinning dies with it.
#[test]
fn a_plain_threads_wake_goes_to_the_worker_on_its_cpu() {
    if allowed_cpus().len() < 2 {
        eprintln!("skipped: needs at least 2 PUs");
        return;
    }
    let system = System::builder().workers(2).build().unwrap();
    let layout = system.machine().layout.clone();
    let topology = system.machine().topology.clone();
    let actor = system.spawn(WhereRan);
    std::thread::scope(|s| {
        s.spawn(|| {
            for worker in [1, 0] {
                pin_to(topology.pu_os_index(layout.pu_of(worker)));
                let (to, from) = std::sync::mpsc::channel();
                let rounds = 40;
                let mut on_it = 0;
                for _ in 0..rounds {
                    // Let both workers go idle, so the wake is a real one.
                    std::thread::sleep(std::time::Duration::from_millis(2));
                    actor.send(to.clone()).unwrap();
                    let ran = from.recv().unwrap().expect("handlers run on workers");
                    on_it += usize::from(ran == worker);
                }
                assert!(
                    on_it * 4 >= rounds * 3,
                    "a sender pinned to worker {worker}'s CPU woke it for {on_it} of {rounds} sends"
                );
            }
        });
    });
}
