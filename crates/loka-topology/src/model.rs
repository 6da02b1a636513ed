//! The machine model: a tree machine › package › NUMA node › L3 › L2 › L1 › core › PU,
//! plus the NUMA distance matrix.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::error::TopologyError;
use crate::matrix::Square;
use crate::spec::TopologySpec;

/// A level of the machine tree, outermost first.
///
/// The order of the variants is the nesting order used when two objects cover
/// the same PUs (a package that is also a NUMA node is drawn above it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// The whole machine (the root).
    Machine,
    /// A processor package (socket).
    Package,
    /// A NUMA node (memory locality domain).
    Numa,
    /// A level-3 cache.
    L3,
    /// A level-2 cache.
    L2,
    /// A level-1 data (or unified) cache.
    L1,
    /// A core.
    Core,
    /// A processing unit (hardware thread), the leaves.
    Pu,
}

impl Level {
    /// All levels, outermost first.
    pub const ALL: [Level; 8] = [
        Level::Machine,
        Level::Package,
        Level::Numa,
        Level::L3,
        Level::L2,
        Level::L1,
        Level::Core,
        Level::Pu,
    ];

    /// The lower-case name used in output and accepted by `FromStr`.
    pub fn name(self) -> &'static str {
        match self {
            Level::Machine => "machine",
            Level::Package => "package",
            Level::Numa => "numa",
            Level::L3 => "l3",
            Level::L2 => "l2",
            Level::L1 => "l1",
            Level::Core => "core",
            Level::Pu => "pu",
        }
    }

    /// The name as hwloc's `lstopo` writes it (`Package`, `NUMANode`, `L3`, …).
    pub fn display_name(self) -> &'static str {
        match self {
            Level::Machine => "Machine",
            Level::Package => "Package",
            Level::Numa => "NUMANode",
            Level::L3 => "L3",
            Level::L2 => "L2",
            Level::L1 => "L1d",
            Level::Core => "Core",
            Level::Pu => "PU",
        }
    }

    fn rank(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Level {
    type Err = TopologyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "machine" => Ok(Level::Machine),
            "package" | "socket" => Ok(Level::Package),
            "numa" | "node" | "numanode" => Ok(Level::Numa),
            "l3" => Ok(Level::L3),
            "l2" => Ok(Level::L2),
            "l1" | "l1d" => Ok(Level::L1),
            "core" => Ok(Level::Core),
            "pu" => Ok(Level::Pu),
            _ => Err(TopologyError::BadLevel {
                what: "topology level",
                input: s.to_owned(),
                expected: "machine, package, numa, l3, l2, l1, core, pu",
            }),
        }
    }
}

/// Index of an object in [`Topology::objects`].
pub type ObjId = usize;

/// One object of the machine tree.
#[derive(Debug, Clone, PartialEq)]
pub struct TopoObject {
    /// Its level.
    pub level: Level,
    /// Logical index among the objects of its level (0, 1, … in PU order,
    /// like hwloc's `L#`).
    pub index: usize,
    /// The OS (physical) index where hwloc knows one (hwloc's `P#`).
    pub os_index: Option<usize>,
    /// The parent object (`None` only for the machine).
    pub parent: Option<ObjId>,
    /// Children, in PU order.
    pub children: Vec<ObjId>,
    /// Distance from the root (the machine has depth 0).
    pub depth: usize,
    /// The PUs below this object, in logical order (ascending).
    pub pus: Vec<usize>,
    /// Cache size, or local memory of a NUMA node, in bytes, where known.
    pub size: Option<u64>,
}

/// The NUMA distance matrix (hwloc's distances between NUMA nodes, a SLIT table,
/// or a hop matrix): rows and columns in NUMA logical order.
#[derive(Debug, Clone, PartialEq)]
pub struct NumaDistances {
    m: Square,
}

impl NumaDistances {
    /// Builds a matrix from row-major values; `source` says where it came from.
    ///
    /// # Errors
    /// [`TopologyError::BadDistances`] if `values.len()` is not `n * n`, an entry
    /// is negative or not finite, or a node is not nearest to itself.
    pub fn new(n: usize, values: Vec<f64>, source: &str) -> Result<Self, TopologyError> {
        let bad = |reason: String| TopologyError::BadDistances {
            input: source.to_owned(),
            reason,
        };
        if values.len() != n * n {
            return Err(bad(format!("{} values for {n} nodes", values.len())));
        }
        for i in 0..n {
            for j in 0..n {
                let v = values[i * n + j];
                if !v.is_finite() || v < 0.0 {
                    return Err(bad(format!(
                        "row {}, column {}: {v} is not a finite non-negative number",
                        i + 1,
                        j + 1
                    )));
                }
                if v < values[i * n + i] {
                    return Err(bad(format!(
                        "row {}, column {}: distance {v} is smaller than the node's distance to itself ({})",
                        i + 1,
                        j + 1,
                        values[i * n + i]
                    )));
                }
            }
        }
        Ok(NumaDistances {
            m: Square::new(n, values, source.to_owned()),
        })
    }

    /// Number of NUMA nodes (rows).
    pub fn size(&self) -> usize {
        self.m.size()
    }

    /// Distance from node `a` to node `b`.
    pub fn get(&self, a: usize, b: usize) -> f64 {
        self.m.get(a, b)
    }

    /// Row `a`: distances from node `a` to every node.
    pub fn row(&self, a: usize) -> &[f64] {
        self.m.row(a)
    }

    /// Where the matrix came from (`hwloc`, a preset, a spec, a file).
    pub fn source(&self) -> &str {
        self.m.source()
    }

    /// Distinct off-diagonal values of the whole matrix, ascending.
    pub fn classes(&self) -> Vec<f64> {
        let n = self.size();
        let mut v: Vec<f64> = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| self.get(i, j))
            .collect();
        v.sort_by(f64::total_cmp);
        v.dedup();
        v
    }
}

/// An object before it is placed in the tree.
#[derive(Debug, Clone)]
pub(crate) struct RawObject {
    pub level: Level,
    pub os_index: Option<usize>,
    pub pus: Vec<usize>,
    pub size: Option<u64>,
    /// A key that identifies the object in its source (hwloc logical index).
    pub key: usize,
}

/// The machine model: the tree of [`TopoObject`]s, the PUs in logical order,
/// the NUMA nodes and, where known, their distance matrix.
///
/// Built by [`Topology::load`] from a [`TopologySpec`]. Cheap to clone (the hwloc
/// handle kept for pinning and XML export is shared).
#[derive(Clone)]
pub struct Topology {
    pub(crate) spec: TopologySpec,
    pub(crate) description: Option<String>,
    pub(crate) real: bool,
    pub(crate) objects: Vec<TopoObject>,
    pub(crate) by_level: [Vec<ObjId>; 8],
    pub(crate) pu_obj: Vec<ObjId>,
    pub(crate) numa_of_pu: Vec<usize>,
    /// hwloc logical index of each NUMA node (to map hwloc distances and export).
    pub(crate) numa_keys: Vec<usize>,
    pub(crate) distances: Option<NumaDistances>,
    pub(crate) hwloc: Option<Arc<hwlocality::Topology>>,
}

impl fmt::Debug for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Topology")
            .field("spec", &self.spec)
            .field("real", &self.real)
            .field("pus", &self.pu_count())
            .field("numa_nodes", &self.numa_node_count())
            .field("packages", &self.count(Level::Package))
            .field("distances", &self.distances)
            .finish_non_exhaustive()
    }
}

impl Topology {
    /// The most PUs a topology may have, as many as the workers a system may run. The cost
    /// matrix and the worker layout grow with the square of the PU count (16.7 million cost
    /// entries at 4,096 PUs); [`Topology::load`] refuses a larger machine with
    /// [`TopologyError::TooManyPus`], and a synthetic description before hwloc builds it.
    pub const MAX_PUS: usize = 4096;

    /// Assembles the tree from objects given with their PU sets.
    ///
    /// Objects are nested by PU-set inclusion (larger sets above; equal sets in
    /// [`Level`] order). Objects that would overlap without nesting, duplicates
    /// of their parent, and objects without PUs (CPU-less NUMA nodes) are left
    /// out. A machine root and one NUMA node are added when missing.
    pub(crate) fn assemble(
        spec: TopologySpec,
        real: bool,
        pu_os: &[usize],
        mut raw: Vec<RawObject>,
    ) -> Topology {
        let n = pu_os.len();
        let all: Vec<usize> = (0..n).collect();
        raw.retain(|o| !o.pus.is_empty() && o.level != Level::Machine);
        raw.push(RawObject {
            level: Level::Machine,
            os_index: Some(0),
            pus: all.clone(),
            size: None,
            key: 0,
        });
        if !raw.iter().any(|o| o.level == Level::Numa) {
            raw.push(RawObject {
                level: Level::Numa,
                os_index: Some(0),
                pus: all.clone(),
                size: None,
                key: 0,
            });
        }
        for o in &mut raw {
            o.pus.sort_unstable();
            o.pus.dedup();
        }
        raw.sort_by(|a, b| {
            b.pus
                .len()
                .cmp(&a.pus.len())
                .then(a.level.rank().cmp(&b.level.rank()))
                .then(a.pus[0].cmp(&b.pus[0]))
        });
        let mut objects: Vec<TopoObject> = Vec::new();
        let mut keys: Vec<usize> = Vec::new();
        let mut deepest: Vec<Option<ObjId>> = vec![None; n];
        for o in raw {
            let parent = deepest[o.pus[0]];
            if o.pus.iter().any(|&p| deepest[p] != parent) {
                continue; // not nested in the tree built so far
            }
            if let Some(p) = parent {
                let po = &objects[p];
                if po.level == o.level && po.pus.len() == o.pus.len() {
                    continue; // duplicate (e.g. two NUMA nodes with the same CPUs)
                }
            } else if o.level != Level::Machine {
                continue;
            }
            let id = objects.len();
            let depth = parent.map_or(0, |p| objects[p].depth + 1);
            if let Some(p) = parent {
                objects[p].children.push(id);
            }
            for &p in &o.pus {
                deepest[p] = Some(id);
            }
            objects.push(TopoObject {
                level: o.level,
                index: 0,
                os_index: o.os_index,
                parent,
                children: Vec::new(),
                depth,
                pus: o.pus,
                size: o.size,
            });
            keys.push(o.key);
        }
        // Children and per-level lists in PU order; logical indices per level.
        let first_pu: Vec<usize> = objects.iter().map(|o| o.pus[0]).collect();
        for o in &mut objects {
            o.children.sort_by_key(|&c| first_pu[c]);
        }
        let mut by_level: [Vec<ObjId>; 8] = Default::default();
        for (id, o) in objects.iter().enumerate() {
            by_level[o.level.rank()].push(id);
        }
        for list in &mut by_level {
            list.sort_by_key(|&id| first_pu[id]);
            for (i, &id) in list.iter().enumerate() {
                objects[id].index = i;
            }
        }
        let mut pu_obj = vec![0; n];
        for &id in &by_level[Level::Pu.rank()] {
            pu_obj[objects[id].pus[0]] = id;
        }
        let numa_keys = by_level[Level::Numa.rank()]
            .iter()
            .map(|&id| keys[id])
            .collect();
        let mut topo = Topology {
            spec,
            description: None,
            real,
            objects,
            by_level,
            pu_obj,
            numa_of_pu: vec![0; n],
            numa_keys,
            distances: None,
            hwloc: None,
        };
        for p in 0..n {
            topo.numa_of_pu[p] = topo.ancestor(p, Level::Numa).map_or_else(
                || {
                    topo.by_level[Level::Numa.rank()]
                        .iter()
                        .position(|&id| topo.objects[id].pus.binary_search(&p).is_ok())
                        .unwrap_or(0)
                },
                |o| o.index,
            );
        }
        topo
    }

    /// Attaches a NUMA distance matrix after checking its size.
    pub(crate) fn set_distances(&mut self, d: NumaDistances) -> Result<(), TopologyError> {
        if d.size() != self.numa_node_count() {
            return Err(TopologyError::BadDistances {
                input: d.source().to_owned(),
                reason: format!(
                    "the matrix is {0}×{0} but the topology has {1} NUMA nodes",
                    d.size(),
                    self.numa_node_count()
                ),
            });
        }
        self.distances = Some(d);
        Ok(())
    }

    /// The spec this topology was loaded from.
    pub fn spec(&self) -> &TopologySpec {
        &self.spec
    }

    /// A one-line description (presets carry one; others say where they come from).
    pub fn description(&self) -> String {
        match (&self.description, &self.spec) {
            (Some(d), _) => d.clone(),
            (None, TopologySpec::Host) => "this machine, discovered by hwloc".to_owned(),
            (None, TopologySpec::Synthetic(_)) => "hwloc synthetic topology".to_owned(),
            (None, TopologySpec::Xml(p)) => format!("hwloc XML file {}", p.display()),
            (None, TopologySpec::Preset(n)) => format!("preset {n}"),
        }
    }

    /// True only for the host machine: its workers are pinned to their PUs.
    pub fn is_real(&self) -> bool {
        self.real
    }

    /// Number of PUs (hardware threads).
    pub fn pu_count(&self) -> usize {
        self.pu_obj.len()
    }

    /// Number of NUMA nodes that hold PUs (at least 1).
    pub fn numa_node_count(&self) -> usize {
        self.by_level[Level::Numa.rank()].len()
    }

    /// Number of objects of `level` (0 where the machine has no such level).
    pub fn count(&self, level: Level) -> usize {
        self.by_level[level.rank()].len()
    }

    /// All objects; [`ObjId`]s index this slice. The machine is object 0.
    pub fn objects(&self) -> &[TopoObject] {
        &self.objects
    }

    /// One object.
    ///
    /// # Panics
    /// If `id` is out of range.
    pub fn object(&self, id: ObjId) -> &TopoObject {
        &self.objects[id]
    }

    /// The machine (root) object.
    pub fn root(&self) -> &TopoObject {
        &self.objects[0]
    }

    /// The objects of one level, in logical order.
    pub fn objects_at(&self, level: Level) -> impl Iterator<Item = &TopoObject> + '_ {
        self.by_level[level.rank()]
            .iter()
            .map(move |&id| &self.objects[id])
    }

    /// The id of the `index`-th object of `level`.
    pub fn object_id(&self, level: Level, index: usize) -> Option<ObjId> {
        self.by_level[level.rank()].get(index).copied()
    }

    /// The PU object of PU `pu`.
    ///
    /// # Panics
    /// If `pu >= pu_count()`.
    pub fn pu(&self, pu: usize) -> &TopoObject {
        &self.objects[self.pu_obj[pu]]
    }

    /// The OS index of PU `pu` (what `taskset` and `sched_setaffinity` use).
    ///
    /// # Panics
    /// If `pu >= pu_count()`.
    pub fn pu_os_index(&self, pu: usize) -> usize {
        self.pu(pu).os_index.unwrap_or(pu)
    }

    /// The NUMA node (logical index) holding PU `pu`.
    ///
    /// # Panics
    /// If `pu >= pu_count()`.
    pub fn numa_node_of(&self, pu: usize) -> usize {
        self.numa_of_pu[pu]
    }

    /// The NUMA node object with logical index `node`.
    ///
    /// # Panics
    /// If `node >= numa_node_count()`.
    pub fn numa_node(&self, node: usize) -> &TopoObject {
        &self.objects[self.by_level[Level::Numa.rank()][node]]
    }

    /// The PUs of NUMA node `node`.
    ///
    /// # Panics
    /// If `node >= numa_node_count()`.
    pub fn numa_pus(&self, node: usize) -> &[usize] {
        &self.numa_node(node).pus
    }

    /// The NUMA distance matrix, if the source has one (hwloc on a multi-node
    /// machine, a preset, `;distances=` on a synthetic spec, an XML file with distances).
    pub fn numa_distances(&self) -> Option<&NumaDistances> {
        self.distances.as_ref()
    }

    /// The ancestor of PU `pu` at `level` (the PU itself for [`Level::Pu`]),
    /// `None` where the machine has no such level above this PU.
    ///
    /// # Panics
    /// If `pu >= pu_count()`.
    pub fn ancestor(&self, pu: usize, level: Level) -> Option<&TopoObject> {
        let mut id = Some(self.pu_obj[pu]);
        while let Some(i) = id {
            let o = &self.objects[i];
            if o.level == level {
                return Some(o);
            }
            id = o.parent;
        }
        None
    }

    /// The PUs sharing the `level` object of PU `pu` (including `pu`), `None`
    /// where the machine has no such level above this PU. For example
    /// `pus_sharing(p, Level::L2)` are the L2 sharers of `p`.
    ///
    /// # Panics
    /// If `pu >= pu_count()`.
    pub fn pus_sharing(&self, pu: usize, level: Level) -> Option<&[usize]> {
        self.ancestor(pu, level).map(|o| o.pus.as_slice())
    }

    /// The deepest object that contains both PUs (the PU itself when `a == b`).
    ///
    /// # Panics
    /// If a PU is out of range.
    pub fn first_common_ancestor(&self, a: usize, b: usize) -> &TopoObject {
        let mut x = self.pu_obj[a];
        let mut y = self.pu_obj[b];
        while self.objects[x].depth > self.objects[y].depth {
            x = self.objects[x].parent.unwrap_or(0);
        }
        while self.objects[y].depth > self.objects[x].depth {
            y = self.objects[y].parent.unwrap_or(0);
        }
        while x != y {
            x = self.objects[x].parent.unwrap_or(0);
            y = self.objects[y].parent.unwrap_or(0);
        }
        &self.objects[x]
    }

    /// Hierarchical distance [Francesquini §4.2.1]: the height of the first
    /// common ancestor above the two PUs (0 for the same PU, 1 for two PUs of
    /// one core, …, the root's height for PUs that share nothing).
    ///
    /// # Panics
    /// If a PU is out of range.
    pub fn hierarchical_distance(&self, a: usize, b: usize) -> usize {
        if a == b {
            return 0;
        }
        let fca = self.first_common_ancestor(a, b).depth;
        let da = self.pu(a).depth;
        let db = self.pu(b).depth;
        da.max(db) - fca
    }

    /// The height of the tree (the largest PU depth).
    pub fn height(&self) -> usize {
        self.by_level[Level::Pu.rank()]
            .iter()
            .map(|&id| self.objects[id].depth)
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests;
