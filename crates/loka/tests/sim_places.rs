//! `places` without hints, in the simulation (virtual time and counts, which no host load can
//! change): an actor spawned without a place hint has no place and runs as under `cls`
//! (docs/decisions/0083-unhinted-actors-have-no-place.md). LASSI gave such an actor a place round
//! robin; for actors that talk to each other that splits partners across places, and a token
//! passed around a ring of them crossed places at every hop (places at 0.02–0.19× of `cls` on
//! counting, pingpong and threadring on every simulated multi-node machine).

mod opteron_sim;
mod sim_ring;

use loka::{PolicyKind, SpawnOptions};
use sim_ring::{HOPS, RING};

/// The virtual ns a token took around a ring spawned from a plain thread under `policy`, member
/// `i` with the place hint `hint(i)`.
fn pass_token(policy: PolicyKind, hint: fn(usize) -> Option<usize>) -> u64 {
    sim_ring::pass_token(policy, |i| match hint(i) {
        Some(place) => SpawnOptions::new().place(place),
        None => SpawnOptions::new(),
    })
    .ns
}

/// Without hints, `places` passes the token within 1.1× of `cls`'s time (1.00: the ring runs on
/// one worker, as under `cls`). With the places LASSI's round robin gives, consecutive members
/// live in different places, every hop is pushed to the next member's home and the ring takes
/// several times `cls`'s time: the same ring with those places as hints is the control, which
/// must stay slow (hints are still honoured).
#[test]
fn a_ring_without_hints_runs_as_under_cls() {
    let cls = pass_token(PolicyKind::Cls, |_| None);
    let unhinted = pass_token("places".parse().unwrap(), |_| None);
    // The Opteron preset's places: its four packages.
    let hinted = pass_token("places".parse().unwrap(), |i| Some(i % 4));
    let table = format!(
        "cls {cls} ns; places without hints {unhinted} ns ({:.2}× cls); places hinted round \
         robin {hinted} ns ({:.2}× cls)",
        unhinted as f64 / cls as f64,
        hinted as f64 / cls as f64
    );
    assert!(
        unhinted as f64 <= 1.1 * cls as f64,
        "unhinted actors were given places: {table}"
    );
    assert!(
        hinted as f64 >= 1.5 * cls as f64,
        "hinted actors no longer live in their places: {table}"
    );
    println!("{HOPS} hops around {RING} actors: {table}");
}

/// Steals of actors without a place are not counted as crossing places (they take an actor
/// from no place of its own): 63 unhinted jobs woken in one activation of a fan on worker 0 are
/// taken by thieves of every place, and `cross_place_steals` stays 0. Counting every steal
/// across places instead (red once): most of the steals were counted.
#[test]
fn steals_of_unhinted_actors_do_not_count_as_crossing_places() {
    use opteron_sim::{Fan, Job, WORKERS};
    let system = opteron_sim::system("places".parse().unwrap());
    let jobs: Vec<_> = (1..WORKERS).map(|_| system.spawn(Job)).collect();
    let fan = system.spawn_with(
        Fan { jobs, delay: None },
        SpawnOptions::new().placement(loka::Placement::Worker(0)),
    );
    system.run_until_idle();
    let before = system.stats();
    fan.send(()).unwrap();
    system.run_until_idle();
    let after = system.stats();
    system.shutdown();
    let steals = after.total.steals - before.total.steals;
    let crossing = after.total.cross_place_steals - before.total.cross_place_steals;
    assert!(
        steals >= 8,
        "the fan's jobs were not stolen ({steals} steals)"
    );
    assert_eq!(
        crossing, 0,
        "{crossing} of {steals} steals counted as crossing places"
    );
}
