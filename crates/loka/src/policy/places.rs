//! `places`: LASSI's work-stealing places (Weibel, *An Advanced Scheduler for Intervals*, ETH
//! Zürich 2010; docs/references.md and docs/places.md).
//!
//! The workers are grouped into *places* (one per package by default, `place_level`). An actor
//! may be spawned with a place hint ([`crate::SpawnOptions::place`]) and then lives in that place.
//! An actor without one has no place: it is spawned, woken and stolen as under `cls`, so that a
//! program that gives no hints runs as it does without the policy, the property LASSI states for
//! its "locality-ignorant" programs (LASSI itself gave such intervals a place round robin, which
//! for actors that talk to each other splits partners across places:
//! docs/decisions/0083-unhinted-actors-have-no-place.md). A hinted actor:
//!
//! * **mode B** (`places`, `places:b`): per-worker queues. The actor's home is one worker of its
//!   place (round robin inside the place); a wake-up from a worker of the same place runs on the
//!   sender's worker (communication locality, as `cls`), from elsewhere it goes to the home's
//!   queue. An idle worker steals from a random worker of its own place first, then from a random
//!   worker of a random other place.
//! * **mode A** (`places:a`): LASSI's own design, one shared queue per place that all its workers
//!   take from; every wake-up goes to the queue of the actor's place. An idle worker whose place
//!   queue is empty steals from the queue of a random victim place.
//!
//! A steal that crosses places takes an actor away from the place its hint named: LASSI calls
//! these "counter-productive" steals, and loka counts them (`cross_place_steals`).

use super::Route;
use loka_topology::WorkerLayout;

/// Which of LASSI's two queue layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlacesMode {
    /// Mode A: one shared queue per place (`places:a`). Needs at least two places.
    Shared,
    /// Mode B: per-worker queues, place-first victim order (`places`, `places:b`).
    PerWorker,
}

impl PlacesMode {
    /// Whether the mode keeps one shared queue per place.
    pub fn shared_queues(self) -> bool {
        self == PlacesMode::Shared
    }
}

/// The place an actor hinted to `hint` lives in. The hint is checked at spawn; here it is taken
/// modulo the place count so that this function never fails.
pub fn spawn_place(hint: usize, places: usize) -> usize {
    hint % places.max(1)
}

/// The worker of `place` an actor placed there calls home: round robin over the place's workers
/// (`ticket`: how many actors the place has been given before).
pub fn home_in_place(layout: &WorkerLayout, place: usize, ticket: usize) -> usize {
    let workers = layout.workers_of_place(place);
    workers[ticket % workers.len()]
}

/// Where a hinted actor whose home worker is `home` goes when a send from worker `sender`
/// (`None`: a plain thread) wakes it. (An unhinted actor is routed as its sender's place would
/// route an actor at home there: `home` is then the waking worker.)
pub fn route_woken(
    mode: PlacesMode,
    layout: &WorkerLayout,
    home: usize,
    sender: Option<usize>,
    local: Route,
) -> Route {
    let place = layout.place_of(home);
    match mode {
        PlacesMode::Shared => Route::Place(place),
        PlacesMode::PerWorker => match sender {
            Some(s) if layout.place_of(s) == place => local,
            _ => Route::Tail(home),
        },
    }
}

/// The victim order of one worker under mode B: the other workers of its place, then the other
/// places.
#[derive(Debug, Clone)]
pub struct PlaceVictims {
    own: Vec<usize>,
    /// The workers of each other place.
    others: Vec<Vec<usize>>,
}

impl PlaceVictims {
    /// The victims of worker `me`.
    pub fn new(me: usize, layout: &WorkerLayout) -> Self {
        let mine = layout.place_of(me);
        PlaceVictims {
            own: layout
                .workers_of_place(mine)
                .iter()
                .copied()
                .filter(|&w| w != me)
                .collect(),
            others: (0..layout.place_count())
                .filter(|&p| p != mine)
                .map(|p| layout.workers_of_place(p).to_vec())
                .collect(),
        }
    }

    /// One steal round: a random worker of the own place, then one random worker of a random
    /// other place; `(victim, crosses_places)`.
    pub fn round(&self, rng: &mut fastrand::Rng) -> impl Iterator<Item = (usize, bool)> {
        let own = (!self.own.is_empty()).then(|| (self.own[rng.usize(..self.own.len())], false));
        let other = (!self.others.is_empty()).then(|| {
            let place = &self.others[rng.usize(..self.others.len())];
            (place[rng.usize(..place.len())], true)
        });
        own.into_iter().chain(other)
    }
}

/// Under mode A: the place whose queue an idle worker of place `mine` steals from — a random
/// other place (`None` with one place).
pub fn victim_place(mine: usize, places: usize, rng: &mut fastrand::Rng) -> Option<usize> {
    if places < 2 {
        return None;
    }
    let v = rng.usize(..places - 1);
    Some(if v >= mine { v + 1 } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;
    use loka_topology::{CostMatrix, LayoutOptions, Topology, TopologySpec};

    fn layout(spec: &str, workers: usize) -> WorkerLayout {
        let topo = Topology::load(&spec.parse::<TopologySpec>().unwrap()).unwrap();
        let cost = CostMatrix::load(&topo, None, false).unwrap();
        let options = LayoutOptions {
            workers,
            ..LayoutOptions::default()
        };
        WorkerLayout::new(&topo, &cost, &options).unwrap()
    }

    #[test]
    fn hints_are_kept_modulo_the_place_count() {
        assert_eq!(spawn_place(1, 3), 1);
        assert_eq!(spawn_place(4, 3), 1);
        assert_eq!(spawn_place(4, 0), 0);
    }

    #[test]
    fn mode_b_runs_same_place_wakes_locally_and_sends_others_home() {
        let l = layout("synthetic:package:2 core:2 pu:1", 4);
        assert_eq!(l.place_count(), 2);
        let home = home_in_place(&l, 1, 0);
        assert_eq!(l.place_of(home), 1);
        let other_in_place = l.workers_of_place(1).iter().copied().find(|&w| w != home);
        let local = Route::LocalNext;
        assert_eq!(
            route_woken(PlacesMode::PerWorker, &l, home, other_in_place, local),
            local
        );
        let outsider = l.workers_of_place(0)[0];
        assert_eq!(
            route_woken(PlacesMode::PerWorker, &l, home, Some(outsider), local),
            Route::Tail(home)
        );
        assert_eq!(
            route_woken(PlacesMode::PerWorker, &l, home, None, local),
            Route::Tail(home)
        );
        assert_eq!(
            route_woken(PlacesMode::Shared, &l, home, Some(home), local),
            Route::Place(1)
        );
    }

    #[test]
    fn mode_b_victims_are_place_first() {
        let l = layout("synthetic:package:2 core:2 pu:1", 4);
        let me = l.workers_of_place(0)[0];
        let victims = PlaceVictims::new(me, &l);
        let mut rng = fastrand::Rng::with_seed(1);
        for _ in 0..20 {
            let round: Vec<_> = victims.round(&mut rng).collect();
            assert_eq!(round.len(), 2);
            assert_eq!(l.place_of(round[0].0), 0);
            assert!(!round[0].1 && round[0].0 != me);
            assert_eq!(l.place_of(round[1].0), 1);
            assert!(round[1].1);
        }
        let mut rng = fastrand::Rng::with_seed(2);
        assert_eq!(victim_place(0, 1, &mut rng), None);
        assert_eq!(victim_place(0, 2, &mut rng), Some(1));
    }
}
