//! The simulation's memory model of actor state: where an actor's bytes lie when an activation
//! needs them, and what fetching them costs.
//!
//! An actor's footprint is the runtime's own lines for it (`state_lines`), `size_of` its state
//! and what it declared (`SpawnOptions::footprint`, `Context::set_footprint`). Every cache of the
//! topology that a worker runs under (its L1, L2, L3, by the topology's sizes) is an LRU set of
//! footprints. An activation of actor `a` on worker `w` finds `a`'s bytes
//!
//! - in one of `w`'s own caches, shared ones included (an L2 of a module, a node's L3): that
//!   level's hit latency;
//! - in a cache of another PU that `w` shares none with: a transfer at the two PUs' distance;
//! - nowhere: in memory on `a`'s home node (where it was first touched: the node of the worker
//!   that spawned it, or of its first activation when a plain thread spawned it), at that node's
//!   latency from `w`.
//!
//! The first line pays the latency, the rest stream at what one core sustains with `mlp` lines in
//! flight (Little's law: `mlp × 64 B / latency`), capped by the path's peak bandwidth. Then the
//! footprint is in every cache of `w` it fits in (the least recently used footprints leave), and
//! in no cache `w` does not share: the activation wrote the actor's state, so other copies are
//! invalid. docs/simulation.md gives the constants and their sources.

use super::cost::{CostModel, Distance, Distances};
use loka_topology::{Level, Topology, WorkerLayout};
use rustc_hash::FxHashMap;

/// Bytes of a cache line.
pub(crate) const LINE: u64 = 64;

/// Where an activation found its actor's bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Source {
    /// A cache of this worker's (its own or one it shares) at this level.
    Cache(Level),
    /// A cache of another worker that this one shares no cache with.
    Peer(usize),
    /// Memory of this NUMA node (the actor's home).
    Memory(usize),
}

/// One cache: an LRU set of actor footprints. A doubly linked list through a slab of entries,
/// least recently used at the head, and a map from actor to its entry: a touch (unlink, append)
/// and an eviction (pop the head) cost O(1). A `BTreeMap` from use stamps to actors, the first
/// version, spent a fifth of a simulation's host time in its inserts and removes (three caches
/// touched per activation, `perf` on cforall-balance-multi).
struct Cache {
    level: Level,
    capacity: u64,
    used: u64,
    /// The list's entries; a removed one's slot is reused (`free`).
    entries: Vec<Entry>,
    free: Vec<u32>,
    /// Least and most recently used entry ([`NIL`]: empty).
    head: u32,
    tail: u32,
    /// Actor → its entry.
    held: FxHashMap<u64, u32>,
}

/// No entry.
const NIL: u32 = u32::MAX;

/// One footprint in a cache's LRU list.
#[derive(Clone, Copy)]
struct Entry {
    actor: u64,
    bytes: u64,
    /// Towards the head (less recently used), towards the tail (more recently used).
    prev: u32,
    next: u32,
}

impl Cache {
    fn new(level: Level, capacity: u64) -> Self {
        Cache {
            level,
            capacity,
            used: 0,
            entries: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            held: FxHashMap::default(),
        }
    }

    fn holds(&self, actor: u64) -> bool {
        self.held.contains_key(&actor)
    }

    /// Takes entry `i` out of the list (its slot stays allocated).
    fn unlink(&mut self, i: u32) {
        let Entry { prev, next, .. } = self.entries[i as usize];
        match prev {
            NIL => self.head = next,
            p => self.entries[p as usize].next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => self.entries[n as usize].prev = prev,
        }
    }

    /// Drops entry `i`: out of the list, the map and the bytes used; its slot is free.
    fn drop_entry(&mut self, i: u32) {
        self.unlink(i);
        let Entry { actor, bytes, .. } = self.entries[i as usize];
        self.held.remove(&actor);
        self.used -= bytes;
        self.free.push(i);
    }

    fn remove(&mut self, actor: u64) {
        if let Some(&i) = self.held.get(&actor) {
            self.drop_entry(i);
        }
    }

    /// Makes `actor` the most recently used, `bytes` large, evicting the least recently used
    /// until it fits; a footprint larger than the whole cache is not kept (it streams through).
    fn insert(&mut self, actor: u64, bytes: u64) {
        self.remove(actor);
        if bytes > self.capacity {
            return;
        }
        while self.used + bytes > self.capacity {
            debug_assert_ne!(self.head, NIL, "used > 0 means held");
            self.drop_entry(self.head);
        }
        let entry = Entry {
            actor,
            bytes,
            prev: self.tail,
            next: NIL,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.entries[i as usize] = entry;
                i
            }
            None => {
                self.entries.push(entry);
                u32::try_from(self.entries.len() - 1).expect("fewer than 2^32 footprints")
            }
        };
        match self.tail {
            NIL => self.head = i,
            t => self.entries[t as usize].next = i,
        }
        self.tail = i;
        self.held.insert(actor, i);
        self.used += bytes;
    }

    /// The actors held, least recently used first (tests).
    #[cfg(test)]
    fn lru_order(&self) -> Vec<u64> {
        let mut out = Vec::new();
        let mut i = self.head;
        while i != NIL {
            out.push(self.entries[i as usize].actor);
            i = self.entries[i as usize].next;
        }
        out
    }
}

/// What the model knows of one live actor.
#[derive(Debug, Clone, Copy)]
struct Resident {
    /// Declared bytes beyond `size_of` the state.
    declared: u64,
    /// NUMA node of first touch (`None`: not touched yet).
    home: Option<usize>,
    /// The worker whose caches may hold it (the last one to touch it).
    holder: Option<usize>,
}

/// Every worker's caches and every live actor's home and holder.
pub(crate) struct Memory {
    caches: Vec<Cache>,
    /// Per worker, its caches, innermost first.
    chains: Vec<Vec<usize>>,
    /// Per worker, its NUMA node (the topology's index).
    node: Vec<usize>,
    /// Nodes × nodes: latency of the column's memory from the row, relative to local.
    relative: Vec<f64>,
    nodes: usize,
    actors: FxHashMap<u64, Resident>,
}

impl Memory {
    /// The caches of `layout`'s workers, sized from `topology` (levels without a known size are
    /// left out).
    pub(crate) fn new(topology: &Topology, layout: &WorkerLayout, distances: &Distances) -> Self {
        let mut caches: Vec<Cache> = Vec::new();
        let mut index: FxHashMap<(u8, usize), usize> = FxHashMap::default();
        let mut chains = Vec::with_capacity(layout.workers());
        let mut node = Vec::with_capacity(layout.workers());
        for w in 0..layout.workers() {
            let pu = layout.pu_of(w);
            node.push(topology.numa_node_of(pu));
            let mut chain = Vec::new();
            for (rank, level) in [Level::L1, Level::L2, Level::L3].into_iter().enumerate() {
                let Some(obj) = topology.ancestor(pu, level) else {
                    continue;
                };
                let Some(capacity) = obj.size.filter(|&s| s > 0) else {
                    continue;
                };
                let i = *index.entry((rank as u8, obj.index)).or_insert_with(|| {
                    caches.push(Cache::new(level, capacity));
                    caches.len() - 1
                });
                chain.push(i);
            }
            chains.push(chain);
        }
        let nodes = topology.numa_node_count().max(1);
        let relative = (0..nodes * nodes)
            .map(|i| distances.node_relative(i / nodes, i % nodes))
            .collect();
        Memory {
            caches,
            chains,
            node,
            relative,
            nodes,
            actors: FxHashMap::default(),
        }
    }

    /// A new actor with `declared` bytes beyond its state, spawned by worker `from` (its memory is
    /// first touched there, and it is in that worker's caches) or by a plain thread (`None`: it is
    /// first touched where it first runs).
    pub(crate) fn spawned(&mut self, actor: u64, declared: u64, from: Option<usize>) {
        self.actors.insert(
            actor,
            Resident {
                declared,
                home: from.map(|w| self.node[w]),
                holder: None,
            },
        );
    }

    /// The actor declared a new footprint beyond its state.
    pub(crate) fn set_declared(&mut self, actor: u64, declared: u64) {
        self.resident(actor).declared = declared;
    }

    /// Bytes the actor declared beyond its state.
    pub(crate) fn declared(&self, actor: u64) -> u64 {
        self.actors.get(&actor).map_or(0, |r| r.declared)
    }

    fn resident(&mut self, actor: u64) -> &mut Resident {
        // An actor the model has not seen (spawned before the engine knew it) starts untouched.
        self.actors.entry(actor).or_insert(Resident {
            declared: 0,
            home: None,
            holder: None,
        })
    }

    /// Where worker `w` finds `actor`'s bytes now.
    pub(crate) fn locate(&mut self, w: usize, actor: u64) -> Source {
        let node = self.node[w];
        let r = *self.resident(actor);
        if let Some(h) = r.holder {
            // The innermost of `w`'s caches that holds it (one `w` shares with the holder), else
            // any of the holder's own.
            if let Some(&c) = self.chains[w]
                .iter()
                .find(|&&c| self.chains[h].contains(&c) && self.caches[c].holds(actor))
            {
                return Source::Cache(self.caches[c].level);
            }
            if self.chains[h].iter().any(|&c| self.caches[c].holds(actor)) {
                return Source::Peer(h);
            }
        }
        Source::Memory(r.home.unwrap_or(node))
    }

    /// Worker `w` touched (and wrote) `actor`'s `bytes`: they are in `w`'s caches, nowhere else.
    pub(crate) fn touch(&mut self, w: usize, actor: u64, bytes: u64) {
        let node = self.node[w];
        let r = self.resident(actor);
        r.home.get_or_insert(node);
        let previous = r.holder.replace(w);
        if let Some(h) = previous.filter(|&h| h != w) {
            for i in 0..self.chains[h].len() {
                let c = self.chains[h][i];
                if !self.chains[w].contains(&c) {
                    self.caches[c].remove(actor);
                }
            }
        }
        for i in 0..self.chains[w].len() {
            let c = self.chains[w][i];
            self.caches[c].insert(actor, bytes);
        }
    }

    /// The actor stopped: its bytes leave every cache and the model forgets it.
    pub(crate) fn forget(&mut self, actor: u64) {
        if let Some(r) = self.actors.remove(&actor) {
            if let Some(h) = r.holder {
                for i in 0..self.chains[h].len() {
                    let c = self.chains[h][i];
                    self.caches[c].remove(actor);
                }
            }
        }
    }

    /// Counts where worker `w` found a footprint, and what fetching it cost (`ns`).
    pub(crate) fn count(
        &self,
        stats: &mut crate::telemetry::SimStats,
        w: usize,
        source: Source,
        ns: f64,
    ) {
        stats.footprint_ns += ns as u64;
        *match source {
            Source::Cache(_) => &mut stats.footprint_in_cache,
            Source::Peer(_) => &mut stats.footprint_in_peer,
            Source::Memory(home) if home == self.node[w] => &mut stats.footprint_in_local_memory,
            Source::Memory(_) => &mut stats.footprint_in_remote_memory,
        } += 1;
    }

    /// What fetching `bytes` from `source` costs worker `w`, in ns, with nothing else loading
    /// the path (`contention.rs` adds what others' transfers cost it).
    #[cfg(test)]
    pub(crate) fn cost(
        &self,
        model: &CostModel,
        distances: &Distances,
        w: usize,
        source: Source,
        bytes: u64,
    ) -> f64 {
        let lines = lines(bytes);
        self.path(model, distances, w, source)
            .map_or(0.0, |p| transfer(lines, p.latency, p.peak, model.mlp))
    }

    /// The path a fetch by worker `w` from `source` takes: its first line's latency, its peak,
    /// and the shared resources it loads. `None`: the bytes are in `w`'s L1 (free).
    pub(crate) fn path(
        &self,
        model: &CostModel,
        distances: &Distances,
        w: usize,
        source: Source,
    ) -> Option<Path> {
        let here = self.node[w];
        let local = |latency, peak| Path {
            latency,
            peak,
            controller: None,
            link: None,
        };
        Some(match source {
            Source::Cache(Level::L1) => return None,
            Source::Cache(Level::L2) => local(model.line_l2, f64::INFINITY),
            Source::Cache(_) => local(model.line_l3, f64::INFINITY),
            Source::Peer(h) => match distances.get(w, h) {
                // Cache to cache across nodes: over the link from the holder's node, not through
                // any memory controller.
                d @ Distance::Remote(_) => Path {
                    link: Some((self.node[h], here)),
                    ..local(model.line(d), model.bw_link)
                },
                d => local(model.line(d), f64::INFINITY),
            },
            Source::Memory(home) if home == here => Path {
                controller: Some(home),
                ..local(model.memory, model.bw_memory)
            },
            Source::Memory(home) => Path {
                controller: Some(home),
                link: Some((home, here)),
                ..local(
                    model.memory * self.relative[here * self.nodes + home],
                    model.bw_memory.min(model.bw_link),
                )
            },
        })
    }
}

/// The cache lines a fetch of `bytes` moves (at least one: an actor is never empty).
pub(crate) fn lines(bytes: u64) -> u64 {
    bytes.div_ceil(LINE).max(1)
}

/// Where a fetch goes: what its first line costs, the fastest it can stream, and the shared
/// resources its bytes pass (a node's memory controller, the link between two nodes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Path {
    /// ns until the first line arrives, nothing else loading the path.
    pub(crate) latency: f64,
    /// The path's peak, GB/s (bytes per ns).
    pub(crate) peak: f64,
    /// The node whose memory serves the bytes.
    pub(crate) controller: Option<usize>,
    /// The link the bytes cross: (from node, to node).
    pub(crate) link: Option<(usize, usize)>,
}

/// `lines` cache lines at `latency` ns: the first pays it, the others stream at what `mlp` lines
/// in flight sustain at that latency, but no faster than `peak` GB/s (bytes per ns).
pub(crate) fn transfer(lines: u64, latency: f64, peak: f64, mlp: f64) -> f64 {
    if lines == 0 {
        return 0.0;
    }
    let per_line = (latency / mlp.max(1.0)).max(LINE as f64 / peak);
    latency + (lines - 1) as f64 * per_line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sim::test_machine as machine;

    /// The cache against the plainest LRU there is (a list, most recently used last, searched
    /// and shifted on every operation), over random inserts and removes of actors of random
    /// sizes: the same actors held, in the same order, the same bytes used, after every step.
    #[test]
    fn the_cache_evicts_exactly_as_a_plain_lru_list() {
        let mut rng = fastrand::Rng::with_seed(41);
        for capacity in [64, 1_000, 10_000] {
            let mut cache = Cache::new(Level::L2, capacity);
            let mut reference: Vec<(u64, u64)> = Vec::new();
            for step in 0..20_000 {
                let actor = rng.u64(0..60);
                if rng.u8(0..8) == 0 {
                    cache.remove(actor);
                    reference.retain(|&(a, _)| a != actor);
                } else {
                    let bytes = rng.u64(1..capacity / 4 + 2);
                    cache.insert(actor, bytes);
                    reference.retain(|&(a, _)| a != actor);
                    if bytes <= capacity {
                        while reference.iter().map(|&(_, b)| b).sum::<u64>() + bytes > capacity {
                            reference.remove(0);
                        }
                        reference.push((actor, bytes));
                    }
                }
                let want: Vec<u64> = reference.iter().map(|&(a, _)| a).collect();
                assert_eq!(cache.lru_order(), want, "capacity {capacity}, step {step}");
                assert_eq!(
                    cache.used,
                    reference.iter().map(|&(_, b)| b).sum::<u64>(),
                    "capacity {capacity}, step {step}"
                );
                assert_eq!(cache.held.len(), want.len());
                assert!(want.iter().all(|&a| cache.holds(a)));
            }
        }
    }

    #[test]
    fn an_actor_is_found_where_it_was_last_touched() {
        let (topo, layout) = machine("preset:opteron6376");
        let model = CostModel::default_for(&topo);
        let d = Distances::new(&topo, &layout, &model);
        let mut m = Memory::new(&topo, &layout, &d);
        let a = 7;
        m.spawned(a, 0, None);
        // Untouched: in memory, homed where it first runs.
        assert_eq!(
            m.locate(0, a),
            Source::Memory(layout_node(&topo, &layout, 0))
        );
        m.touch(0, a, 200);
        assert_eq!(m.locate(0, a), Source::Cache(Level::L1));
        // The other core of the same module shares the L2; the node shares the L3.
        let module = (1..64)
            .find(|&w| d.get(0, w) == Distance::SharedL2)
            .unwrap();
        assert_eq!(m.locate(module, a), Source::Cache(Level::L2));
        let node = (1..64)
            .find(|&w| d.get(0, w) == Distance::SharedL3)
            .unwrap();
        assert_eq!(m.locate(node, a), Source::Cache(Level::L3));
        let far = (1..64)
            .find(|&w| matches!(d.get(0, w), Distance::Remote(_)))
            .unwrap();
        assert_eq!(m.locate(far, a), Source::Peer(0));
        // Touched far away: it left worker 0's caches (written there), its home stays.
        m.touch(far, a, 200);
        let home = layout_node(&topo, &layout, 0);
        assert_eq!(m.locate(0, a), Source::Peer(far));
        // Evicted from the far worker's caches by other actors: back to its home's memory.
        for other in 100..100 + 8 * 1024 {
            m.touch(far, other, 1024);
        }
        assert_eq!(m.locate(0, a), Source::Memory(home));
        assert_eq!(m.locate(far, a), Source::Memory(home));
        // Remote memory costs more than local, and a big footprint more than a small one.
        let here = m.cost(&model, &d, 0, Source::Memory(home), 1 << 20);
        let there = m.cost(&model, &d, far, Source::Memory(home), 1 << 20);
        assert!(there > here && here > m.cost(&model, &d, 0, Source::Memory(home), 64));
        m.forget(a);
        assert_eq!(m.declared(a), 0);
    }

    #[test]
    fn a_footprint_larger_than_a_cache_streams_through_it() {
        let (topo, layout) = machine("preset:opteron6376");
        let model = CostModel::default_for(&topo);
        let d = Distances::new(&topo, &layout, &model);
        let mut m = Memory::new(&topo, &layout, &d);
        m.spawned(1, 12 << 20, Some(0));
        m.touch(0, 1, 12 << 20);
        // 12 MB fits in no cache of the Opteron (6 MB L3): every activation reads memory.
        assert_eq!(
            m.locate(0, 1),
            Source::Memory(layout_node(&topo, &layout, 0))
        );
        // Latency for the first line, Little's law for the rest.
        let t = transfer(3, 100.0, f64::INFINITY, 10.0);
        assert!((t - 120.0).abs() < 1e-9, "{t}");
        assert!((transfer(3, 100.0, 0.64, 10.0) - 300.0).abs() < 1e-9);
    }

    fn layout_node(topo: &Topology, layout: &WorkerLayout, w: usize) -> usize {
        topo.numa_node_of(layout.pu_of(w))
    }
}
