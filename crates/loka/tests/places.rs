//! LASSI's places (docs/places.md): place hints are honoured, unhinted actors spread round robin
//! over places, idle workers steal inside their place first, and steals that cross places are
//! counted. Runs on synthetic two-package machines (decisions only: nothing is pinned).

use loka::policy::PlacesMode;
use loka::{Actor, Config, Context, PolicyKind, ReplyTo, SpawnOptions, System};

fn system(mode: PlacesMode, workers: usize) -> System {
    System::from_config(Config {
        workers,
        policy: PolicyKind::Places(mode),
        topology: format!("synthetic:package:2 core:{} pu:1", workers / 2),
        ..Config::default()
    })
    .unwrap()
}

/// Answers with the place of the worker running it.
struct Where;
impl Actor for Where {
    type Msg = ReplyTo<usize>;
    fn handle(&mut self, ctx: &mut Context<Self>, reply: ReplyTo<usize>) {
        // A handler that takes a while, so that an idle worker has time to steal.
        let until = std::time::Instant::now() + std::time::Duration::from_micros(20);
        while std::time::Instant::now() < until {
            std::hint::spin_loop();
        }
        let w = ctx.worker_index().expect("a worker");
        reply.send(PLACES.with(|p| p.get())[w]);
    }
}

thread_local! {
    static PLACES: std::cell::Cell<[usize; 4]> = const { std::cell::Cell::new([0; 4]) };
}

fn places_of(system: &System) -> [usize; 4] {
    let layout = &system.machine().layout;
    std::array::from_fn(|w| {
        if w < layout.workers() {
            layout.place_of(w)
        } else {
            0
        }
    })
}

/// Reports the place of the worker of its first activation.
struct Starts {
    places: [usize; 4],
    report: std::sync::mpsc::Sender<usize>,
}
impl Actor for Starts {
    type Msg = ();
    fn handle(&mut self, _ctx: &mut Context<Self>, _: ()) {}
    fn started(&mut self, ctx: &mut Context<Self>) {
        let w = ctx.worker_index().expect("a worker");
        self.report.send(self.places[w]).unwrap();
    }
}

/// The places of the first activations of actors spawned with `hints`, each spawned once every
/// worker has parked: then the only worker woken is the one the policy queues the actor for, and
/// no thief is awake to take it elsewhere.
fn first_places(policy: PolicyKind, hints: &[usize]) -> Vec<usize> {
    first_places_with(policy, hints, false)
}

fn first_places_with(policy: PolicyKind, hints: &[usize], lazy: bool) -> Vec<usize> {
    let system = System::from_config(Config {
        workers: 2,
        policy,
        topology: "synthetic:package:2 core:1 pu:1".to_owned(),
        ..Config::default()
    })
    .unwrap();
    let places = places_of(&system);
    let (tx, rx) = std::sync::mpsc::channel();
    let mut actors = Vec::new();
    hints
        .iter()
        .map(|&hint| {
            system.run_until_idle();
            // Past the idle spin and yield phases (100 µs by default): every worker parked.
            std::thread::sleep(std::time::Duration::from_millis(5));
            let starts = Starts {
                places,
                report: tx.clone(),
            };
            let actor = system.spawn_with(starts, SpawnOptions::new().place(hint).lazy(lazy));
            if lazy {
                // A lazy actor starts with its first message.
                system.run_until_idle();
                std::thread::sleep(std::time::Duration::from_millis(5));
                actor.send(()).unwrap();
            }
            actors.push(actor);
            rx.recv().unwrap()
        })
        .collect()
}

#[test]
fn hinted_actors_start_in_their_place_and_other_policies_ignore_hints() {
    let hints = [0, 0, 1, 1, 0, 0, 1, 1, 1, 0];
    for mode in [PlacesMode::PerWorker, PlacesMode::Shared] {
        assert_eq!(
            first_places(PolicyKind::Places(mode), &hints),
            hints,
            "{mode:?}"
        );
    }
    // A lazy actor has its place before its first message wakes it.
    for mode in [PlacesMode::PerWorker, PlacesMode::Shared] {
        let lazy = first_places_with(PolicyKind::Places(mode), &hints, true);
        assert_eq!(lazy, hints, "{mode:?}, lazy");
    }
    // Control: `cls` places from plain threads round robin, whatever the hint.
    let cls = first_places(PolicyKind::Cls, &hints);
    assert_ne!(cls, hints, "cls followed the hints");
}

#[test]
fn steals_that_cross_places_are_counted() {
    for mode in [PlacesMode::PerWorker, PlacesMode::Shared] {
        let system = system(mode, 4);
        // All the work in place 0: the idle workers of place 1 can only get it by crossing.
        let actors: Vec<_> = (0..64)
            .map(|_| system.spawn_with(Where, SpawnOptions::new().place(0)))
            .collect();
        let pending: Vec<_> = actors
            .iter()
            .flat_map(|a| (0..20).map(move |_| a.ask(|r| r).unwrap()))
            .collect();
        for p in pending {
            p.wait().unwrap();
        }
        system.run_until_idle();
        let stats = system.stats();
        assert!(
            stats.total.cross_place_steals > 0,
            "{mode:?}: no steal crossed places ({} steals) {:?}",
            stats.total.steals,
            stats
                .workers
                .iter()
                .map(|w| (w.activations, w.steals, w.cross_place_steals))
                .collect::<Vec<_>>()
        );
        assert!(stats.total.cross_place_steals <= stats.total.steals);
    }
}

#[test]
fn mode_a_on_one_place_is_refused_naming_the_policy() {
    let err = System::from_config(Config {
        workers: 2,
        policy: "places:a".parse().unwrap(),
        topology: "synthetic:package:1 core:2 pu:1".to_owned(),
        ..Config::default()
    })
    .map(|_| ())
    .expect_err("refused")
    .to_string();
    assert!(
        err.contains("places:a") && err.contains("two places"),
        "{err}"
    );
    // Mode B runs anywhere.
    System::from_config(Config {
        workers: 2,
        policy: "places".parse().unwrap(),
        topology: "synthetic:package:1 core:2 pu:1".to_owned(),
        ..Config::default()
    })
    .unwrap();
}
