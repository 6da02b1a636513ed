//! Regression tests of the engine's wake-ups (a letter in a sleeping worker's range is always
//! reached) and of a worker's visits.

use crate::runtime::options::{Placement, SpawnOptions};
use crate::{Actor, ActorRef, Config, Context, EngineKind, System};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::mpsc;
use std::time::Duration;

struct Echo(mpsc::Sender<u32>);
impl Actor for Echo {
    type Msg = u32;
    fn started(&mut self, _: &mut Context<Self>) {
        let _ = self.0.send(0);
    }
    fn handle(&mut self, _: &mut Context<Self>, msg: u32) {
        let _ = self.0.send(msg);
    }
}

/// A message-centric system of `workers` workers choosing victims by `victims`, every worker
/// parked.
fn parked_system(workers: usize, victims: crate::VictimSelection) -> System {
    let mut config = Config {
        engine: EngineKind::MessageCentric,
        workers,
        topology: format!("synthetic:package:1 core:{workers} pu:1"),
        ..Config::default()
    };
    config.message_centric.victims = victims;
    let system = System::from_config(config).unwrap();
    assert!(system.run_until_idle_timeout(Duration::from_secs(10)));
    system
}

fn engine(system: &System) -> &super::Engine {
    let crate::engine::dispatch::Engine::MessageCentric(engine) = system.engine() else {
        unreachable!("configured message-centric")
    };
    engine
}

/// Spawns an echo on one of worker `w`'s queues, then checks that its start letter and one
/// message are handled (each waits at most 10 s, so a letter nobody takes fails the test).
fn echo_on_worker(system: &System, w: usize, label: &str) {
    let (tx, rx) = mpsc::channel();
    let echo = system.spawn_with(
        Echo(tx),
        SpawnOptions::new().placement(Placement::Worker(w)),
    );
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(10)),
        Ok(0),
        "{label}: the actor started"
    );
    echo.send(7).unwrap();
    assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(7), "{label}");
    assert!(system.run_until_idle_timeout(Duration::from_secs(10)));
}

/// Regression: a post wakes *a* sleeping worker, preferring the queue's owner hint, which
/// can be stale after steals. With every worker asleep and the hint pointing at the wrong
/// one, the woken worker must take the queue from the sleeping owner; before the fix it
/// spun beside the letter forever (a `big` run timed out after 60 s).
#[test]
#[cfg_attr(
    miri,
    ignore = "builds a system: topology detection calls hwloc through FFI"
)]
fn a_letter_for_a_sleeping_owner_is_taken_by_whoever_is_woken() {
    let system = parked_system(2, crate::VictimSelection::default());
    // Every queue of worker 0 names worker 1 as its owner: the start letter's one wake-up
    // goes to the wrong worker.
    for q in &engine(&system).queues[engine(&system).ranges[0].clone()] {
        q.owner.store(1, Relaxed);
    }
    echo_on_worker(&system, 0, "stale hint");
}

/// Regression (CI hang in `fifo_from_plain_threads`, 4 workers): a letter waits in a sleeping
/// worker's queue while the owner hint names an awake one, and `longest` victim selection
/// always picks another sleeper (parked workers never steal, so every sleeper's timestamp is
/// old, and the oldest is always the same). The awake worker could neither park (its re-check
/// saw the letter) nor ever look at the right victim: it spun forever.
#[test]
#[cfg_attr(
    miri,
    ignore = "builds a system: topology detection calls hwloc through FFI"
)]
fn a_letter_in_a_sleepers_queue_is_reached_whatever_the_victim_selection() {
    for &victims in crate::VictimSelection::ALL {
        let system = parked_system(4, victims);
        let engine = engine(&system);
        // Worker 2's queues name worker 0 as their owner; worker 1 looks the stalest victim.
        for q in &engine.queues[engine.ranges[2].clone()] {
            q.owner.store(0, Relaxed);
        }
        engine.last_steal[1].store(0, Relaxed);
        for w in [0, 2, 3] {
            engine.last_steal[w].store(u64::MAX / 2, Relaxed);
        }
        echo_on_worker(&system, 2, &format!("victims={victims}"));
    }
}

/// The cells of a chain's links, to check that they are freed.
type Cells =
    std::sync::Arc<std::sync::Mutex<Vec<std::sync::Weak<dyn crate::runtime::Deliver<()>>>>>;

/// Spawns the next link of a chain, sends it a message and stops, as dynamic send does: a link
/// spawned by a handler joins its parent's queue, so each one stops in a gulp of its own queue.
struct Link(u32, Cells);
impl Actor for Link {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _: ()) {
        if self.0 > 0 {
            let next = ctx.spawn_with(
                Link(self.0 - 1, std::sync::Arc::clone(&self.1)),
                SpawnOptions::new().lazy(true),
            );
            self.1.lock().unwrap().push(next.cell_weak());
            next.send(()).unwrap();
        }
        ctx.stop();
    }
}

/// A stopped actor's cell is freed once its letters are gone: its release letter is placed
/// behind them, in the running gulp when the queue holds nothing more (every link of a chain)
/// and in the queue otherwise. Red if the release letter is not queued (the cells leak) or is
/// never delivered.
#[test]
#[cfg_attr(
    miri,
    ignore = "builds a system: topology detection calls hwloc through FFI"
)]
fn a_stopped_actors_cell_is_freed() {
    for workers in [1, 2] {
        let system = parked_system(workers, crate::VictimSelection::Longest);
        let cells = Cells::default();
        let first = system.spawn(Link(1_000, std::sync::Arc::clone(&cells)));
        cells.lock().unwrap().push(first.cell_weak());
        first.send(()).unwrap();
        drop(first);
        assert!(system.run_until_idle_timeout(Duration::from_secs(10)));
        assert_eq!(system.stats().actors_live(), 0);
        let cells = cells.lock().unwrap();
        assert_eq!(cells.len(), 1_001);
        let alive = cells.iter().filter(|c| c.strong_count() > 0).count();
        assert_eq!(
            alive, 0,
            "{workers} workers: cells of stopped links not freed"
        );
    }
}

/// Puts every queue back in the slot it started in, owned by that slot's worker: steals at
/// start-up (a start letter waiting while its owner wakes) may have moved a test's queues.
/// Only while every worker is parked (after `run_until_idle`), when no worker reads the slots.
fn unsteal(system: &System) {
    let e = engine(system);
    for (w, range) in e.ranges.iter().enumerate() {
        for i in range.clone() {
            let q: &super::MessageQueue = &e.queues[i];
            e.slots[i].store(
                q as *const super::MessageQueue as *mut _,
                std::sync::atomic::Ordering::Release,
            );
            q.owner.store(w, Relaxed);
        }
    }
}

/// Blocks in its handler until the test opens its gate.
struct Blocker {
    entered: mpsc::Sender<()>,
    gate: std::sync::Arc<std::sync::Mutex<mpsc::Receiver<()>>>,
}
impl Actor for Blocker {
    type Msg = ();
    fn handle(&mut self, _: &mut Context<Self>, _: ()) {
        let _ = self.entered.send(());
        let _ = self.gate.lock().unwrap().recv();
    }
}

/// Worker 0 of a two-worker system, ready to be stuck. Worker 0's queues take 32 actors each:
/// a blocker and 31 echoes (`first`) share its first queue, so their letters wait behind the
/// blocker's handler; a 33rd echo (`next`) is alone in its next queue. `other` is an echo on
/// worker 1. Built with every actor started, the system idle and every queue in its first slot.
struct StuckZero {
    system: System,
    blocker: crate::ActorRef<()>,
    entered: mpsc::Receiver<()>,
    open: mpsc::Sender<()>,
    first: Vec<crate::ActorRef<u32>>,
    first_rx: mpsc::Receiver<u32>,
    next: crate::ActorRef<u32>,
    next_rx: mpsc::Receiver<u32>,
    other: crate::ActorRef<u32>,
    other_rx: mpsc::Receiver<u32>,
}

fn stuck_zero() -> StuckZero {
    let system = parked_system(2, crate::VictimSelection::default());
    let on = |w| SpawnOptions::new().placement(Placement::Worker(w));
    let (entered_tx, entered) = mpsc::channel();
    let (open, gate) = mpsc::channel();
    let blocker = system.spawn_with(
        Blocker {
            entered: entered_tx,
            gate: std::sync::Arc::new(std::sync::Mutex::new(gate)),
        },
        on(0),
    );
    let (tx, first_rx) = mpsc::channel();
    let first: Vec<_> = (0..31)
        .map(|_| system.spawn_with(Echo(tx.clone()), on(0)))
        .collect();
    let echo_on = |w| {
        let (tx, rx) = mpsc::channel();
        (system.spawn_with(Echo(tx), on(w)), rx)
    };
    let (next, next_rx) = echo_on(0);
    let (other, other_rx) = echo_on(1);
    for rx in std::iter::repeat_n(&first_rx, 31).chain([&next_rx, &other_rx]) {
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(0), "started");
    }
    assert!(system.run_until_idle_timeout(Duration::from_secs(10)));
    unsteal(&system);
    StuckZero {
        system,
        blocker,
        entered,
        open,
        first,
        first_rx,
        next,
        next_rx,
        other,
        other_rx,
    }
}

impl StuckZero {
    /// Worker 0 enters the blocker's handler and stays there until `open`.
    fn block(&self) {
        self.blocker.send(()).unwrap();
        self.entered
            .recv_timeout(Duration::from_secs(10))
            .expect("the blocker's handler runs");
    }
}

/// An idle worker parks beside a letter it cannot take: one waiting in a queue that its awake
/// holder is processing (the handler ahead of it blocks). The letter is the holder's to deliver,
/// so the idle worker must not spin beside it. Red when the parking re-check counts letters in
/// other workers' queues as work: worker 1 then never parks while the handler blocks.
///
/// Parked so, it still watches: a letter that then arrives in another queue of the stuck
/// worker (posts wake only an owner, and the owner is awake) is taken within a few watch
/// periods. Red without the watch (`Engine::park` with no period): it waits for the handler.
#[test]
#[cfg_attr(
    miri,
    ignore = "builds a system: topology detection calls hwloc through FFI"
)]
fn an_idle_worker_parks_beside_a_letter_it_cannot_take() {
    let z = stuck_zero();
    z.block();
    z.first[0].send(7).unwrap();
    // Wake worker 1 with work of its own; once it is done, it is idle beside the waiting letter.
    let parks = || engine(&z.system).shared.counters.worker(1).parks.get();
    let before = parks();
    z.other.send(1).unwrap();
    assert_eq!(z.other_rx.recv_timeout(Duration::from_secs(10)), Ok(1));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while parks() == before && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    let parked = parks() > before;
    // Worker 1 sleeps with a watch period (worker 0 is awake): a letter that now arrives in
    // another of worker 0's queues, which no post wakes anyone for, is taken at its next looks.
    z.next.send(5).unwrap();
    let taken = z.next_rx.recv_timeout(Duration::from_secs(5));
    z.open.send(()).unwrap();
    assert_eq!(
        z.first_rx.recv_timeout(Duration::from_secs(10)),
        Ok(7),
        "the letter was delivered"
    );
    assert!(
        parked,
        "worker 1 spun beside a letter in worker 0's claimed queue"
    );
    assert_eq!(taken, Ok(5), "a letter waited behind the stuck handler");
}

/// A worker woken from an idle system (every worker asleep, so every sleeper parked with no
/// watch period) and then stuck in a handler is watched all the same: its wake-up nudges a
/// sleeper, which parks with a period and takes a letter that arrives in another of the stuck
/// worker's queues. Red without the nudge (`Engine::ensure_a_watcher`): the letter waits for
/// the handler.
#[test]
#[cfg_attr(
    miri,
    ignore = "builds a system: topology detection calls hwloc through FFI"
)]
fn a_worker_woken_from_an_idle_system_is_watched() {
    let z = stuck_zero();
    // A sleeper that parked while another worker was still awake parked with a period (at
    // most 1 s); once that ends in an idle system, it parks on with none.
    std::thread::sleep(Duration::from_millis(1_100));
    // Every worker sleeps; the blocker's letter wakes worker 0 alone, and it blocks.
    z.block();
    z.next.send(5).unwrap();
    let taken = z.next_rx.recv_timeout(Duration::from_secs(5));
    z.open.send(()).unwrap();
    assert_eq!(taken, Ok(5), "a letter waited behind the stuck handler");
}

/// A message-centric system of one worker and one queue: every actor is in one queue.
pub(super) fn one_queue_system() -> System {
    let mut config = Config {
        engine: EngineKind::MessageCentric,
        workers: 1,
        topology: "synthetic:package:1 core:1 pu:1".to_owned(),
        ..Config::default()
    };
    config.message_centric.queues_per_worker = 1;
    System::from_config(config).unwrap()
}

enum Ring {
    /// Its successor in the ring.
    Next(ActorRef<Ring>),
    /// A token that has made this many hops.
    Token(u32),
}

/// Passes each token it gets to its successor until the token has made `hops` hops;
/// reports every token that is done.
struct RingMember {
    next: Option<ActorRef<Ring>>,
    hops: u32,
    done: mpsc::Sender<()>,
}
impl Actor for RingMember {
    type Msg = Ring;
    fn handle(&mut self, _: &mut Context<Self>, msg: Ring) {
        match msg {
            Ring::Next(next) => self.next = Some(next),
            Ring::Token(made) if made == self.hops => {
                let _ = self.done.send(());
            }
            Ring::Token(made) => {
                let next = self.next.as_ref().expect("ring closed first");
                next.send(Ring::Token(made + 1)).unwrap();
            }
        }
    }
}

/// A visit that keeps its work to itself gives its later gulps the rest of its budget as
/// room: a ring of 200 actors in one queue passing 200 tokens 100 hops each (20,200
/// letters, within the visit's budget of 128 · 200) runs in a handful of gulps, its letters
/// appended rather than posted through the lock for the next gulp. Red with a room of one
/// budget per gulp (then each gulp holds ~200 letters: about 100 gulps).
#[test]
#[cfg_attr(
    miri,
    ignore = "builds a system: topology detection calls hwloc through FFI"
)]
fn a_visit_that_keeps_to_itself_appends_its_letters_to_the_gulp() {
    const MEMBERS: usize = 200;
    const HOPS: u32 = 100;
    let system = one_queue_system();
    let (done, finished) = mpsc::channel();
    let ring: Vec<ActorRef<Ring>> = (0..MEMBERS)
        .map(|_| {
            system.spawn(RingMember {
                next: None,
                hops: HOPS,
                done: done.clone(),
            })
        })
        .collect();
    for (k, member) in ring.iter().enumerate() {
        member
            .send(Ring::Next(ring[(k + 1) % MEMBERS].clone()))
            .unwrap();
    }
    assert!(system.run_until_idle_timeout(Duration::from_secs(10)));
    let gulps_before = system.stats().message_centric.expect("mc").gulps;
    for member in &ring {
        member.send(Ring::Token(0)).unwrap();
    }
    for _ in 0..MEMBERS {
        finished
            .recv_timeout(Duration::from_secs(10))
            .expect("every token made its hops");
    }
    let gulps = system.stats().message_centric.expect("mc").gulps - gulps_before;
    assert!(
        gulps <= 10,
        "{gulps} gulps for one visit's worth of letters"
    );
}
