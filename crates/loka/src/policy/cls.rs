//! `cls`: CAF's default scheduler (Wölke §3.1, docs/references.md).
//!
//! * A woken actor runs on the sender's worker; from a plain thread it goes round robin.
//! * A spawned actor goes to the head of the parent's worker queue (stealable, so fork-join work
//!   spreads), or round robin from a plain thread.
//! * A thief picks a uniformly random other worker and takes one actor from the tail.
//!
//! Beyond CAF: the woken actor goes into a non-stealable *next slot* (as tokio's LIFO slot) instead
//! of the stealable head, so an idle thief cannot tear a ping-pong pair across cores; the actor the
//! slot displaces goes to the stealable head. `lifo_slot = false` restores CAF's exact behaviour.
//! The slot is not a hostage: while its worker stays in one handler past the stall guard's bound,
//! an idle worker or the monitor takes its actor (docs/stalls.md).

use super::placement::Placement;
use super::Route;

/// Routing and victim choice of `cls` for one worker.
#[derive(Debug, Clone)]
pub struct Cls {
    me: usize,
    workers: usize,
    lifo_slot: bool,
}

impl Cls {
    /// The policy as seen by worker `me` of `workers`.
    pub fn new(me: usize, workers: usize, lifo_slot: bool) -> Self {
        assert!(me < workers, "worker {me} out of range 0..{workers}");
        Cls {
            me,
            workers,
            lifo_slot,
        }
    }

    /// Where an actor woken by a message from an actor running on this worker goes.
    pub fn route_woken(&self) -> Route {
        if self.lifo_slot {
            Route::LocalNext
        } else {
            Route::LocalHead
        }
    }

    /// Where an actor spawned by an actor running on this worker goes.
    pub fn route_spawned(&self, placement: Placement) -> Route {
        match placement {
            Placement::Default => Route::LocalHead,
            Placement::Worker(w) => Route::Tail(w % self.workers),
        }
    }

    /// The next victim to steal from: a uniformly random other worker (`None` alone).
    pub fn next_victim(&mut self, rng: &mut fastrand::Rng) -> Option<usize> {
        if self.workers < 2 {
            return None;
        }
        let v = rng.usize(..self.workers - 1);
        Some(if v >= self.me { v + 1 } else { v })
    }
}

/// Where an actor made runnable by a plain (non-worker) thread goes: round robin, `ticket` being a
/// counter the engine increments per decision.
pub fn route_external(placement: Placement, ticket: usize, workers: usize) -> Route {
    match placement {
        Placement::Default => Route::Tail(ticket % workers),
        Placement::Worker(w) => Route::Tail(w % workers),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn victims_are_uniform_over_other_workers() {
        let mut p = Cls::new(2, 5, true);
        let mut rng = fastrand::Rng::with_seed(7);
        let mut hits = [0usize; 5];
        for _ in 0..40_000 {
            hits[p.next_victim(&mut rng).unwrap()] += 1;
        }
        assert_eq!(hits[2], 0, "never steals from itself");
        for (w, &h) in hits.iter().enumerate().filter(|&(w, _)| w != 2) {
            assert!((9_000..11_000).contains(&h), "worker {w}: {h} of 40000");
        }
    }

    #[test]
    fn single_worker_has_no_victim() {
        let mut p = Cls::new(0, 1, true);
        assert_eq!(p.next_victim(&mut fastrand::Rng::with_seed(1)), None);
    }

    #[test]
    fn routing_truth_table() {
        let with_slot = Cls::new(0, 4, true);
        let caf = Cls::new(0, 4, false);
        assert_eq!(with_slot.route_woken(), Route::LocalNext);
        assert_eq!(caf.route_woken(), Route::LocalHead);
        assert_eq!(
            with_slot.route_spawned(Placement::Default),
            Route::LocalHead
        );
        assert_eq!(
            with_slot.route_spawned(Placement::Worker(6)),
            Route::Tail(2)
        );
        assert_eq!(route_external(Placement::Default, 9, 4), Route::Tail(1));
        assert_eq!(route_external(Placement::Worker(3), 9, 4), Route::Tail(3));
    }
}
