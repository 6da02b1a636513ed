//! The live actors of a system, so shutdown can stop every one of them whatever the engine.
//!
//! Sharded: spawns and terminations on different workers rarely meet on one lock.

use super::id::ActorId;
use super::task::TaskRef;
use crossbeam_utils::CachePadded;
use parking_lot::Mutex;
use std::collections::HashMap;

/// Registry shards.
const SHARDS: usize = 64;

/// Live actors whose ids hash to one shard. Fx hashing: ids are unique integers made by loka, not
/// attacker-chosen keys, and SipHash's flood resistance cost a spawn–stop pair ~15% of its time.
type Shard = HashMap<ActorId, TaskRef, rustc_hash::FxBuildHasher>;

/// Live actors by id.
pub(crate) struct Registry {
    shards: Box<[CachePadded<Mutex<Shard>>]>,
}

impl Registry {
    pub(crate) fn new() -> Self {
        Registry {
            shards: (0..SHARDS)
                .map(|_| CachePadded::new(Mutex::new(HashMap::default())))
                .collect(),
        }
    }

    fn shard(&self, id: ActorId) -> &Mutex<Shard> {
        &self.shards[(id.shard_hash() as usize) % SHARDS]
    }

    pub(crate) fn insert(&self, id: ActorId, task: TaskRef) {
        self.shard(id).lock().insert(id, task);
    }

    pub(crate) fn remove(&self, id: ActorId) {
        self.shard(id).lock().remove(&id);
    }

    /// Takes every registered task out (shutdown). Each task is handed out once.
    pub(crate) fn drain(&self) -> Vec<TaskRef> {
        self.shards
            .iter()
            .flat_map(|shard| shard.lock().drain().map(|(_, t)| t).collect::<Vec<_>>())
            .collect()
    }
}
