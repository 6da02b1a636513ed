//! Under LGS an idle home takes its own queue (docs/decisions/0105-an-idle-home-takes-its-own.md):
//! a thief of another NUMA node does not steal from a worker that is searching or asleep, so an
//! actor pushed to its idle home PU runs on its home's node, by its data, instead of on whichever
//! distant searcher looked first. Run under the simulation engine (deterministic) on the 4-node
//! Xeon preset with plain `lgs`.

mod scheduling_support;

use loka::{Actor, ActorRef, Context, EngineKind, Placement, SpawnOptions};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const ROUNDS: u64 = 200;
/// The seeker's home, on node 1 (workers 8–15 of the 32).
const SEEKER_HOME: usize = 9;
/// The driver's home, on node 0.
const DRIVER_HOME: usize = 0;

/// A simulated `lgs` system on a preset machine, `workers` workers, seed `seed`.
fn lgs_on(preset: &str, workers: usize, seed: u64) -> loka::System {
    scheduling_support::system(
        EngineKind::Sim,
        &format!("preset:{preset}"),
        workers,
        "lgs",
        seed,
    )
}

/// Spawned on worker `w`, declaring `footprint` bytes of data (so LGS keeps it at home).
fn on_worker(w: usize, footprint: usize) -> SpawnOptions {
    SpawnOptions::default()
        .placement(Placement::Worker(w))
        .footprint(footprint)
}

/// Where each activation ran: (actor, worker).
type Runs = Arc<Mutex<Vec<(&'static str, usize)>>>;

/// Searches its data for a while per job and reports to the driver.
struct Seeker {
    driver: Option<ActorRef<u64>>,
    runs: Runs,
}

enum SeekerMsg {
    Driver(ActorRef<u64>),
    Job(u64),
}

impl Actor for Seeker {
    type Msg = SeekerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: SeekerMsg) {
        match msg {
            SeekerMsg::Driver(driver) => self.driver = Some(driver),
            SeekerMsg::Job(round) => {
                let worker = ctx.worker_index().expect("on a worker");
                self.runs.lock().unwrap().push(("seeker", worker));
                ctx.charge(Duration::from_micros(20));
                self.driver.as_ref().unwrap().send(round).unwrap();
            }
        }
    }
}

/// Gives the seeker its next job when it reports, for `ROUNDS` rounds.
struct Driver {
    seeker: ActorRef<SeekerMsg>,
    runs: Runs,
}

impl Actor for Driver {
    type Msg = u64;
    fn handle(&mut self, ctx: &mut Context<Self>, round: u64) {
        let worker = ctx.worker_index().expect("on a worker");
        self.runs.lock().unwrap().push(("driver", worker));
        if round < ROUNDS {
            self.seeker.send(SeekerMsg::Job(round + 1)).unwrap();
        }
    }
}

/// A driver on node 0 and a seeker on node 1 hand a job back and forth; both keep data (so
/// LGS pushes each wake-up to the other's home PU) and 30 other workers look for work.
/// Returns where each activation ran and the stats.
fn ping_pong_between_homes() -> (Vec<(&'static str, usize)>, loka::Stats) {
    let system = lgs_on("xeon-x7560", 32, 3);
    let at = |w: usize| on_worker(w, 256 * 1024);
    let runs: Runs = Arc::default();
    let seeker = system.spawn_with(
        Seeker {
            driver: None,
            runs: Arc::clone(&runs),
        },
        at(SEEKER_HOME),
    );
    let driver = system.spawn_with(
        Driver {
            seeker: seeker.clone(),
            runs: Arc::clone(&runs),
        },
        at(DRIVER_HOME),
    );
    seeker.send(SeekerMsg::Driver(driver.clone())).unwrap();
    // Both run their first activation at home and go idle: from here each wakes the other.
    system.run_until_idle();
    runs.lock().unwrap().clear();
    driver.send(0).unwrap();
    system.run_until_idle();
    let stats = system.stats();
    system.shutdown();
    let runs = std::mem::take(&mut *runs.lock().unwrap());
    (runs, stats)
}

#[test]
fn an_actor_pushed_to_its_idle_home_runs_on_its_home_node() {
    let (runs, stats) = ping_pong_between_homes();
    let count = |who| runs.iter().filter(|(a, _)| *a == who).count() as u64;
    assert_eq!(count("seeker"), ROUNDS, "every job searched once");
    assert_eq!(count("driver"), ROUNDS + 1, "every report taken once");
    // Node n holds workers 8n..8n+7.
    let away: Vec<_> = runs
        .iter()
        .filter(|&&(who, w)| {
            let home = if who == "seeker" {
                SEEKER_HOME
            } else {
                DRIVER_HOME
            };
            w / 8 != home / 8
        })
        .collect();
    assert!(
        away.is_empty(),
        "{} of {} activations ran away from their home's node (first: {:?}); \
         steals {}, by level {:?}, left to an idle home {}",
        away.len(),
        runs.len(),
        away.first(),
        stats.total.steals,
        stats.total.steals_by_level,
        stats.total.steals_left_home,
    );
    // The rule was exercised: thieves of other nodes looked at an idle home with work queued.
    assert!(
        stats.total.hpu_pushes >= ROUNDS,
        "{}",
        stats.total.hpu_pushes
    );
    assert!(stats.total.steals_left_home > 0);
}

/// Searches for `SEARCH` and then tells the next one, if any.
struct Searcher {
    next: Option<ActorRef<()>>,
}

const SEARCH: Duration = Duration::from_millis(1);

impl Actor for Searcher {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _msg: ()) {
        ctx.charge(SEARCH);
        if let Some(next) = &self.next {
            next.send(()).unwrap();
        }
    }
}

/// The virtual time a message sent after a search takes to reach a second searcher on the other
/// node of the Nehalem preset and be searched there in turn.
fn two_searches_in_a_row() -> u64 {
    let system = lgs_on("nehalem-2x4", 8, 1);
    let at = |w: usize| on_worker(w, 4096);
    let second = system.spawn_with(Searcher { next: None }, at(4));
    let first = system.spawn_with(Searcher { next: Some(second) }, at(0));
    system.run_until_idle();
    let before = system.stats().sim.unwrap().virtual_ns;
    first.send(()).unwrap();
    system.run_until_idle();
    let after = system.stats().sim.unwrap().virtual_ns;
    system.shutdown();
    after - before
}

/// A handler that searches (declared compute, `Context::charge`) and then sends: the message
/// leaves when the search is done, so the second search starts after the first one ended, even
/// though the second searcher's home is another, idle worker. Before 2026-12-07 an activation's
/// sends all left when it began: the two searches overlapped (1.0 ms instead of 2.0).
#[test]
fn a_message_sent_after_a_search_leaves_when_the_search_is_done() {
    let elapsed = two_searches_in_a_row();
    let two = 2 * SEARCH.as_nanos() as u64;
    assert!(
        elapsed >= two && elapsed < two + two / 10,
        "two searches in a row took {elapsed} ns of virtual time (each {SEARCH:?})"
    );
}
