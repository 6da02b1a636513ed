//! Where the message-centric engine binds a new actor (docs/message-centric.md, "A child joins its
//! parent's queue" and "Actors created together share a queue"): a child in its parent's queue
//! while the parent's gulp holds fewer than 32 letters, then over the parent's worker's queues 32
//! at a time, where a thief can take some of them; an actor placed on a worker with
//! `Placement::Worker` over that worker's queues 32 at a time, in blocks that grow once the
//! worker's placed actors fill two rounds of its queues.

use loka::{
    Actor, ActorId, ActorRef, Config, Context, EngineKind, Placement, SpawnOptions, System,
};
use std::collections::HashMap;
use std::sync::mpsc;
use std::time::Duration;

/// The gulp length below which a child joins its parent's queue (the engine's `WAKE_BACKLOG`).
const JOIN_BELOW: usize = 32;
/// Actors bound to one of a worker's queues before the next takes over (the engine's `FILL`).
const FILL: usize = 32;

/// A one-worker message-centric system with 8 queues.
fn one_worker_system() -> System {
    let mut config = Config {
        engine: EngineKind::MessageCentric,
        workers: 1,
        topology: "synthetic:package:1 core:1 pu:1".to_owned(),
        ..Config::default()
    };
    config.message_centric.queues_per_worker = 8;
    System::from_config(config).unwrap()
}

/// The queue of each live actor.
fn queues_of(system: &System) -> HashMap<ActorId, usize> {
    system
        .actors()
        .into_iter()
        .filter_map(|info| Some((info.id, info.queue?)))
        .collect()
}

/// Checks that `queues` come in runs of `FILL` actors, each run on one queue and the next run on
/// another.
fn in_runs_of_fill(queues: &[usize], what: &str) {
    let runs: Vec<&[usize]> = queues.chunks(FILL).collect();
    for run in &runs {
        assert!(
            run.iter().all(|&q| q == run[0]),
            "{what}: {FILL} actors in a row share a queue: {queues:?}"
        );
    }
    for pair in runs.windows(2) {
        assert_ne!(
            pair[0][0], pair[1][0],
            "{what}: the next {FILL} go to the next queue: {queues:?}"
        );
    }
}

struct Child;
impl Actor for Child {
    type Msg = u32;
    fn handle(&mut self, _: &mut Context<Self>, _: u32) {}
}

/// On `n`, spawns `n` lazy children (no start letter), sending each one message right after
/// spawning it (each message is appended to the running gulp, which grows by one letter per
/// child), and reports their ids in spawning order. Keeps them alive.
struct Parent {
    kids: Vec<ActorRef<u32>>,
    done: mpsc::Sender<Vec<ActorId>>,
}
impl Actor for Parent {
    type Msg = usize;
    fn handle(&mut self, ctx: &mut Context<Self>, n: usize) {
        for i in 0..n {
            let child = ctx.spawn_with(Child, SpawnOptions::new().lazy(true));
            child.send(i as u32).expect("a fresh child");
            self.kids.push(child);
        }
        let _ = self.done.send(self.kids.iter().map(ActorRef::id).collect());
    }
}

/// Has a parent spawn `n` children on a one-worker system; returns the parent's queue and its
/// children's, in spawning order.
fn parent_and_children_queues(n: usize) -> (usize, Vec<usize>) {
    let system = one_worker_system();
    // Plain-thread spawns go round robin from queue 0: the parent gets queue 1, so the children's
    // round robin (from queue 0) does not start at the parent's queue by chance.
    let _first = system.spawn(Child);
    let (tx, rx) = mpsc::channel();
    let parent = system.spawn(Parent {
        kids: Vec::new(),
        done: tx,
    });
    parent.send(n).unwrap();
    let kids = rx.recv_timeout(Duration::from_secs(10)).expect("spawned");
    assert!(system.run_until_idle_timeout(Duration::from_secs(10)));
    let queue_of = queues_of(&system);
    let home = queue_of[&parent.id()];
    (home, kids.iter().map(|id| queue_of[id]).collect())
}

#[test]
fn children_join_their_parents_queue_while_its_gulp_is_short_then_fill_the_others() {
    let (home, queues) = parent_and_children_queues(JOIN_BELOW + 3 * FILL);
    // The parent's own letter has left the gulp when its handler runs, so child k sees k letters.
    let joined = queues.iter().take_while(|&&q| q == home).count();
    assert_eq!(
        joined, JOIN_BELOW,
        "children join the parent's queue {home} until its gulp holds {JOIN_BELOW} letters: {queues:?}"
    );
    in_runs_of_fill(
        &queues[JOIN_BELOW..],
        "then they spread over the worker's queues",
    );
}

#[test]
fn actors_placed_on_a_worker_fill_its_queues_in_turn() {
    let system = one_worker_system();
    let actors: Vec<ActorRef<u32>> = (0..3 * FILL)
        .map(|_| system.spawn_with(Child, SpawnOptions::new().placement(Placement::Worker(0))))
        .collect();
    assert!(system.run_until_idle_timeout(Duration::from_secs(10)));
    let queue_of = queues_of(&system);
    let queues: Vec<usize> = actors.iter().map(|a| queue_of[&a.id()]).collect();
    in_runs_of_fill(&queues, "actors placed on worker 0");
}

/// Past two rounds of a worker's queues, each doubling of the actors placed on it is one round
/// over its queues in blocks twice as long as the last (docs/decisions/0046-longer-visits-growing-blocks.md): with 8 queues,
/// actors 0–511 come in runs of 32, 512–1,023 in runs of 64 and 1,024–2,047 in runs of 128, each
/// queue taking one run of every doubling. Red with fixed blocks (runs of 32 throughout).
/// Children spawned by an actor keep fixed blocks (`many_children_keep_blocks_of_fill`).
#[test]
fn blocks_grow_with_the_actors_placed_on_a_worker() {
    let system = one_worker_system();
    let actors: Vec<ActorRef<u32>> = (0..2048)
        .map(|_| system.spawn_with(Child, SpawnOptions::new().placement(Placement::Worker(0))))
        .collect();
    assert!(system.run_until_idle_timeout(Duration::from_secs(10)));
    let queue_of = queues_of(&system);
    let queues: Vec<usize> = actors.iter().map(|a| queue_of[&a.id()]).collect();
    in_runs_of_fill(&queues[..512], "the first 512 actors");
    for (from, to, block) in [(512, 1024, 64), (1024, 2048, 128)] {
        let runs: Vec<&[usize]> = queues[from..to].chunks(block).collect();
        for run in &runs {
            assert!(
                run.iter().all(|&q| q == run[0]),
                "actors {from}..{to}: {block} in a row share a queue: {:?}",
                &queues[from..to]
            );
        }
        let mut firsts: Vec<usize> = runs.iter().map(|run| run[0]).collect();
        firsts.sort_unstable();
        firsts.dedup();
        assert_eq!(
            firsts.len(),
            8,
            "actors {from}..{to}: one run on each of the 8 queues: {:?}",
            &queues[from..to]
        );
    }
}

/// Children spawned by an actor keep blocks of `FILL` however many there are: a fork tree's
/// children are short-lived and spread for thieves (growing blocks cost fjcreate a third of its
/// throughput at 1 worker, docs/decisions/0046-longer-visits-growing-blocks.md). 640 children past the parent's gulp, beyond
/// the 512 where placed actors' blocks start growing (8 queues). Red if children take the
/// growing blocks.
#[test]
fn many_children_keep_blocks_of_fill() {
    let (_, queues) = parent_and_children_queues(JOIN_BELOW + 20 * FILL);
    in_runs_of_fill(&queues[JOIN_BELOW..], "children past the parent's gulp");
}
