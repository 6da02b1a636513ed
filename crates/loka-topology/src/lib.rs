//! The machine model of loka; the user-facing description is `docs/topology.md`.
//! Research works cited by author (Wölke, Francesquini, LASSI) are listed with
//! full references in `docs/references.md`.
//!
//! - [`TopologySpec`] names a source: `host` (hwloc discovers this machine),
//!   `preset:NAME` (a machine from the research works, see [`presets`]), `synthetic:DESC`
//!   (an hwloc synthetic description, optionally with NUMA distances) or
//!   `xml:FILE` (an hwloc XML export).
//! - [`Topology`] is the tree machine › package › NUMA node › L3 › L2 › L1 ›
//!   core › PU plus the NUMA distance matrix, with tree queries
//!   ([`Topology::first_common_ancestor`], [`Topology::pus_sharing`], …).
//! - [`CostMatrix`] is Francesquini's `Cost(i, j)` between PUs: hierarchical by
//!   default, or read from a user file.
//! - [`WorkerLayout`] derives, once at startup, what the schedulers need: per
//!   worker the `dist` order and the nested victim groups of LGS, per NUMA node
//!   `numaNodesInDistanceOrder`, and LASSI's places.
//! - [`pin_current_thread`] binds a worker thread to its PU on the real machine.
//!
//! Worker `i` always runs on PU `i` in the topology's logical order (hwloc's
//! `L#` numbering); fewer workers than PUs use the first PUs.
//!
//! ```
//! use loka_topology::{CostMatrix, LayoutOptions, Topology, TopologySpec, WorkerLayout};
//! let spec: TopologySpec = "preset:opteron6376".parse()?;
//! let topo = Topology::load(&spec)?;
//! let cost = CostMatrix::hierarchical(&topo);
//! let layout = WorkerLayout::new(&topo, &cost, &LayoutOptions::default())?;
//! assert_eq!(layout.workers(), 64);
//! let sizes: Vec<usize> = layout.groups(0).iter().map(Vec::len).collect();
//! assert_eq!(sizes, [7, 39, 63]); // own node, nodes one hop away, everybody
//! # Ok::<(), loka_topology::TopologyError>(())
//! ```

mod cost;
mod error;
mod hwloc;
mod layout;
mod matrix;
mod model;
pub mod presets;
mod spec;

pub use cost::CostMatrix;
pub use error::TopologyError;
pub use hwloc::pin_current_thread;
pub use layout::{GroupLevel, LayoutOptions, PlaceLevel, WorkerLayout};
pub use model::{Level, NumaDistances, ObjId, TopoObject, Topology};
pub use spec::TopologySpec;

#[cfg(test)]
mod tests {
    use super::*;

    fn shareable<T: Clone + Send + Sync + std::fmt::Debug + 'static>() {}

    #[test]
    fn runtime_types_are_shareable() {
        shareable::<Topology>();
        shareable::<WorkerLayout>();
        shareable::<CostMatrix>();
        shareable::<TopologySpec>();
        shareable::<LayoutOptions>();
    }

    #[test]
    fn errors_are_std_errors() {
        fn is_error<E: std::error::Error + Send + Sync + 'static>() {}
        is_error::<TopologyError>();
    }
}
