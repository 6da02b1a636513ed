//! The live actors of a system, so shutdown can stop every one of them whatever the engine, a
//! graceful shutdown can stop them children first (each entry names its parent), and
//! introspection can list them (`System::actors`).
//!
//! Sharded: spawns and terminations on different workers rarely meet on one lock.

use super::id::ActorId;
use super::task::TaskRef;
use crossbeam_utils::CachePadded;
use parking_lot::Mutex;
use std::borrow::Borrow;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

/// Registry shards.
const SHARDS: usize = 64;

/// One registered actor: its task alone, one word. The table hashes and compares an entry by the
/// actor's id, read from the cell's header, and takes the parent from the cell when a tree is
/// needed, so a live actor costs the table one word (and a control byte) instead of three: at a
/// million actors that was ~33 bytes of each idle actor (docs/results/actor-footprint.md).
///
/// Reading the header is sound because an entry's cell is alive while it is in the table: an
/// actor unregisters before its life reference goes, under its shard's lock, and every read of
/// an entry happens under that lock.
#[derive(Clone, Copy)]
struct Entry(TaskRef);

impl Entry {
    fn id(&self) -> ActorId {
        self.0.header().id
    }
}

impl Hash for Entry {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // The same hash as the id's, so that lookups by id (`Borrow<ActorId>`) find the entry.
        self.id().hash(state);
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.id() == other.id()
    }
}

impl Eq for Entry {}

impl Borrow<ActorId> for Entry {
    fn borrow(&self) -> &ActorId {
        &self.0.header().id
    }
}

/// Live actors whose ids hash to one shard. Fx hashing: ids are unique integers made by loka, not
/// attacker-chosen keys, and SipHash's flood resistance cost a spawn–stop pair ~15% of its time.
#[derive(Default)]
struct Shard {
    live: HashSet<Entry, rustc_hash::FxBuildHasher>,
    /// Set by the final drain of shutdown: no actor may register any more.
    closed: bool,
}

/// Live actors by id.
pub(crate) struct Registry {
    shards: Box<[CachePadded<Mutex<Shard>>]>,
}

impl Registry {
    pub(crate) fn new() -> Self {
        Registry {
            shards: (0..SHARDS)
                .map(|_| CachePadded::new(Mutex::new(Shard::default())))
                .collect(),
        }
    }

    fn shard(&self, id: ActorId) -> &Mutex<Shard> {
        &self.shards[(id.shard_hash() as usize) % SHARDS]
    }

    /// Registers a new actor, `task`, which stays alive until [`remove`](Self::remove); `false`
    /// (nothing registered) once shutdown has closed the registry. The check and the insertion
    /// are one step under the shard's lock, so an actor is either registered before the final
    /// drain (and terminated by it) or refused.
    pub(crate) fn insert(&self, task: TaskRef) -> bool {
        let entry = Entry(task);
        let mut shard = self.shard(entry.id()).lock();
        if shard.closed {
            return false;
        }
        shard.live.insert(entry);
        true
    }

    pub(crate) fn remove(&self, id: ActorId) {
        self.shard(id).lock().live.remove(&id);
    }

    /// Calls `f` with every registered task, one shard at a time, under that shard's lock: a task
    /// cannot terminate (and be freed) while `f` looks at it, since `terminate` unregisters it
    /// first. `f` must not take another registry lock.
    /// `f` gets each actor's id, task and parent.
    pub(crate) fn for_each(&self, mut f: impl FnMut(ActorId, TaskRef, Option<ActorId>)) {
        for shard in self.shards.iter() {
            for entry in shard.lock().live.iter() {
                // SAFETY: registered, under the shard's lock (see `Entry`).
                f(entry.id(), entry.0, unsafe { entry.0.parent() });
            }
        }
    }

    /// Runs `f` with whether `id` is registered (alive), under its shard's lock: `terminate`
    /// unregisters the actor under that lock, so it cannot stop while `f` runs.
    pub(crate) fn with_alive<R>(&self, id: ActorId, f: impl FnOnce(bool) -> R) -> R {
        let shard = self.shard(id).lock();
        f(shard.live.contains(&id))
    }

    /// Takes every registered task out (shutdown) and closes the registry: later registrations
    /// are refused. Each task is handed out once, children before their parents (deepest first
    /// in the tree of who spawned whom), so a prompt shutdown stops actors in the order a
    /// graceful one does.
    pub(crate) fn drain_and_close(&self) -> Vec<TaskRef> {
        // Each actor's task and parent, read under its shard's lock (see `Entry`); the tasks
        // handed out stay alive, as the caller's contract with a closed registry says.
        let mut live: HashMap<ActorId, (TaskRef, Option<ActorId>), rustc_hash::FxBuildHasher> =
            HashMap::default();
        for shard in self.shards.iter() {
            let mut shard = shard.lock();
            shard.closed = true;
            // SAFETY: registered until this drain, under the shard's lock.
            live.extend(
                shard
                    .live
                    .drain()
                    .map(|e| (e.id(), (e.0, unsafe { e.0.parent() }))),
            );
        }
        let mut depth: HashMap<ActorId, usize, rustc_hash::FxBuildHasher> = HashMap::default();
        let mut chain = Vec::new();
        for &id in live.keys() {
            // Up the parents not yet measured, then down again, each measured once.
            let mut at = id;
            let mut base = loop {
                if let Some(&d) = depth.get(&at) {
                    break d;
                }
                chain.push(at);
                match live[&at].1.filter(|p| live.contains_key(p)) {
                    Some(parent) => at = parent,
                    None => break 0,
                }
            };
            while let Some(node) = chain.pop() {
                base += 1;
                depth.insert(node, base);
            }
        }
        let mut tasks: Vec<(usize, TaskRef)> = live
            .into_iter()
            .map(|(id, (task, _))| (depth[&id], task))
            .collect();
        tasks.sort_by_key(|&(d, _)| std::cmp::Reverse(d));
        tasks.into_iter().map(|(_, task)| task).collect()
    }

    /// Every live actor and its parent, at about this moment (shards are read one at a time).
    pub(crate) fn tree(&self) -> Vec<(ActorId, Option<ActorId>)> {
        self.shards
            .iter()
            .flat_map(|shard| {
                let shard = shard.lock();
                shard
                    .live
                    .iter()
                    // SAFETY: registered, under the shard's lock (see `Entry`).
                    .map(|e| (e.id(), unsafe { e.0.parent() }))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Calls `f` with the task of actor `id` if it is registered, under its shard's lock: an
    /// actor unregisters before its cell can be freed, so the task is alive during `f`. `f` must
    /// not register, unregister or run an actor (the lock is not reentrant).
    pub(crate) fn with_live<R>(&self, id: ActorId, f: impl FnOnce(TaskRef) -> R) -> Option<R> {
        let shard = self.shard(id).lock();
        shard.live.get(&id).map(|e| f(e.0))
    }
}
