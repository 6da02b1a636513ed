//! Where the message-centric engine binds an actor spawned by an actor (docs/message-centric.md,
//! "A child joins its parent's queue"): in its parent's queue while the parent's gulp holds fewer
//! than 32 letters, then round robin over the parent's worker's queues, where a thief can take
//! some of them.

use loka::{Actor, ActorId, ActorRef, Config, Context, EngineKind, SpawnOptions, System};
use std::collections::{BTreeSet, HashMap};
use std::sync::mpsc;
use std::time::Duration;

/// The gulp length below which a child joins its parent's queue (the engine's `WAKE_BACKLOG`).
const JOIN_BELOW: usize = 32;

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

#[test]
fn children_join_their_parents_queue_while_its_gulp_is_short_then_spread() {
    let mut config = Config {
        engine: EngineKind::MessageCentric,
        workers: 1,
        topology: "synthetic:package:1 core:1 pu:1".to_owned(),
        ..Config::default()
    };
    config.message_centric.queues_per_worker = 8;
    let system = System::from_config(config).unwrap();
    // Plain-thread spawns go round robin from queue 0: the parent gets queue 1, so the children's
    // round robin (from queue 0) does not start at the parent's queue by chance.
    let _first = system.spawn(Child);
    let (tx, rx) = mpsc::channel();
    let parent = system.spawn(Parent {
        kids: Vec::new(),
        done: tx,
    });
    parent.send(100).unwrap();
    let kids = rx.recv_timeout(Duration::from_secs(10)).expect("spawned");
    assert!(system.run_until_idle_timeout(Duration::from_secs(10)));
    let queue_of: HashMap<ActorId, usize> = system
        .actors()
        .into_iter()
        .filter_map(|info| Some((info.id, info.queue?)))
        .collect();
    let home = queue_of[&parent.id()];
    let queues: Vec<usize> = kids.iter().map(|id| queue_of[id]).collect();
    // The parent's own letter has left the gulp when its handler runs, so child k sees k letters.
    let joined = queues.iter().take_while(|&&q| q == home).count();
    assert_eq!(
        joined, JOIN_BELOW,
        "children join the parent's queue {home} until its gulp holds {JOIN_BELOW} letters: {queues:?}"
    );
    let later: BTreeSet<usize> = queues[JOIN_BELOW..].iter().copied().collect();
    assert!(
        later.len() >= 4,
        "then they spread over the worker's queues: {queues:?}"
    );
}
