//! The simulation engine's cost model: what each step of a virtual worker costs in virtual
//! nanoseconds, by the distance between the processing units involved.
//!
//! Distances come from the topology: the innermost object two PUs share (the same PU, a core or
//! L2, an L3, a NUMA node) and, across nodes, the ACPI SLIT distance of their nodes (10 = local;
//! the SLIT is defined as relative memory latency, so a line from a node at distance `d` costs
//! `line_remote × d / 10`, [`CostModel::line`]). Every constant, its meaning and its source
//! are in `docs/simulation.md`; a cost file (`[sim] cost = "FILE"`, TOML, the same keys) replaces
//! any of them. An unknown key or a value that is not a non-negative number is an error naming
//! the key and the file.

use loka_topology::{Level, Topology, WorkerLayout};
use std::path::Path;

/// Where a cache line comes from, seen from the PU that needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Distance {
    /// The same PU: its own L1/L2.
    SamePu,
    /// Another PU sharing a core or an L2 cache.
    SharedL2,
    /// Another PU sharing an L3 cache.
    SharedL3,
    /// Another PU of the same NUMA node, no cache shared.
    SameNode,
    /// Another NUMA node, at this latency relative to the local node's, in thousandths (from
    /// the topology's distance matrix: an ACPI SLIT (10 = local) or hop counts (0 = local)).
    Remote(u32),
}

/// The constants, in nanoseconds (names as in the cost file).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CostModel {
    /// Fixed cost of one activation: dequeue, the cell's state machine, the outcome.
    pub(crate) activation: f64,
    /// Fixed cost of one message on the same PU: the send (slot claim, write) and the receive
    /// (read, dispatch) without any cache miss.
    pub(crate) message: f64,
    /// The sender's share of `message` (claiming the slot and writing it), charged to the
    /// activation that sends; the receiver pays `message − send`.
    pub(crate) send: f64,
    /// Cost of spawning an actor (allocation, registration) and, later, of its stop and release.
    pub(crate) spawn: f64,
    /// Cache lines a message whose slot fits in one line brings from its sender's PU (slot and
    /// payload); a larger slot brings its further lines as well ([`CostModel::slot_lines`]).
    pub(crate) message_lines: f64,
    /// Cache lines of an actor's state an activation touches (cell header, mailbox, state).
    pub(crate) state_lines: f64,
    /// Cost of one cache line from a PU sharing the core or L2.
    pub(crate) line_l2: f64,
    /// … sharing an L3.
    pub(crate) line_l3: f64,
    /// … in the same NUMA node without a shared cache.
    pub(crate) line_node: f64,
    /// … from another NUMA node, at the local node's latency (scaled by the relative latency of
    /// the two nodes: SLIT `distance / 10`, or `1 + remote_hop × hops`).
    pub(crate) line_remote: f64,
    /// Extra latency per hop between nodes, relative to local, when the topology gives hop
    /// counts instead of a SLIT.
    pub(crate) remote_hop: f64,
    /// One steal attempt on a victim at the same PU distance class (reading its queue's indices):
    /// this many lines at that distance, plus `steal_fixed`.
    pub(crate) steal_lines: f64,
    /// Fixed cost of a steal attempt.
    pub(crate) steal_fixed: f64,
    /// From a parked worker being notified to it running (a futex wake and a context switch).
    pub(crate) wake: f64,
    /// What waking a sleeping worker costs the waker: the futex wake system call (and, on a
    /// VM, the interrupt it sends through the hypervisor), on the waker's clock.
    pub(crate) wake_call: f64,
    /// Host CPU time (`[sim] compute = "measured"`) and declared compute (`Context::charge`) are
    /// multiplied by this: the modelled core's time for what took 1 ns on this host.
    pub(crate) compute_scale: f64,
    /// Latency of the first line from the local node's memory (remote nodes: × their relative
    /// latency, as for `line_remote`).
    pub(crate) memory: f64,
    /// Cache lines one core keeps in flight when it streams (the rest of a footprint after its
    /// first line arrives at `mlp` lines per latency).
    pub(crate) mlp: f64,
    /// Peak bandwidth of a node's memory, GB/s (bytes per ns): a cap on one core's stream.
    pub(crate) bw_memory: f64,
    /// Peak bandwidth of one interconnect link in one direction, GB/s: a cap on remote streams.
    pub(crate) bw_link: f64,
    /// Sustained bandwidth of one node's memory with all its cores streaming (STREAM), GB/s:
    /// the capacity that every transfer from that node's memory shares (`contention.rs`).
    pub(crate) stream_node: f64,
    /// Sustained bandwidth of the link from one node to another, one direction, GB/s: the
    /// capacity that every transfer between the two nodes shares (`contention.rs`).
    pub(crate) stream_link: f64,
    /// Cache lines of a mailbox's tail (the claim word) that a sender takes from the previous
    /// sender when several senders write to one mailbox in turn.
    pub(crate) tail_lines: f64,
    /// Senders seen sending to a mailbox since the start of the receiver's latest this-many
    /// batches (activations) count as writing to it in turn (0: the mailbox term is off).
    pub(crate) mailbox_batches: f64,
}

/// The keys of a cost file, in the order of the documentation.
pub(crate) const KEYS: &[&str] = &[
    "activation",
    "message",
    "send",
    "spawn",
    "message_lines",
    "state_lines",
    "line_l2",
    "line_l3",
    "line_node",
    "line_remote",
    "remote_hop",
    "steal_lines",
    "steal_fixed",
    "wake",
    "wake_call",
    "compute_scale",
    "memory",
    "mlp",
    "bw_memory",
    "bw_link",
    "stream_node",
    "stream_link",
    "tail_lines",
    "mailbox_batches",
];

impl CostModel {
    /// The built-in model (docs/simulation.md gives every source). loka's own costs
    /// (`activation`, `message`) were measured on this project's host; the cache and memory
    /// latencies and bandwidths are published figures of the preset's CPU (the AMD Opteron 6376,
    /// the Intel Xeon X7560, the SGI UV 2000's Xeon E5-4640), and typical x86 server figures for
    /// every other topology.
    pub(crate) fn default_for(topology: &Topology) -> CostModel {
        let generic = CostModel::generic();
        let preset = match topology.spec() {
            loka_topology::TopologySpec::Preset(name) => name.as_str(),
            _ => "",
        };
        match preset {
            // Piledriver at 2.3 GHz: L2 ~21 cycles, L3 ~57 cycles; DDR3-1600 × 2 channels per
            // node; HyperTransport 3 at 6.4 GT/s, 16 bits: 12.8 GB/s a direction.
            "opteron6376" => CostModel {
                line_l2: 9.0,
                line_l3: 25.0,
                memory: 100.0,
                line_remote: 100.0,
                bw_memory: 25.6,
                bw_link: 12.8,
                // AMD: ~100 GB/s STREAM on four Opteron 6100 (8 nodes, DDR3-1333), 12.5 a node;
                // × 1600/1333 for the 6376's DDR3-1600.
                stream_node: 15.0,
                stream_link: 12.8,
                ..generic
            },
            // Nehalem-EX at 2.26 GHz: L2 10 cycles, L3 21 ns; 135 ns local memory (buffered
            // SMI channels), 4 SMI links of 6.4 GB/s; QPI 6.4 GT/s: 12.8 GB/s a direction.
            "xeon-x7560" => CostModel {
                line_l2: 4.4,
                line_l3: 21.0,
                memory: 135.0,
                line_remote: 135.0,
                bw_memory: 25.6,
                bw_link: 12.8,
                // Intel's expected STREAM for a four-socket Xeon 7500 server, 36 GB/s, a quarter.
                stream_node: 9.0,
                stream_link: 12.8,
                ..generic
            },
            // Sandy Bridge-EP at 2.4 GHz: L2 12 cycles, L3 30 cycles; DDR3-1600 × 4 channels;
            // NUMAlink 6: 6.7 GB/s a direction.
            "altix-uv2000" => CostModel {
                line_l2: 5.0,
                line_l3: 12.5,
                memory: 81.0,
                line_remote: 81.0,
                bw_memory: 51.2,
                bw_link: 6.7,
                // Two thirds of the peak (what multi-threaded streams reach on Nehalem/Westmere
                // Xeons; no E5-4640 figure found).
                stream_node: 34.1,
                stream_link: 6.7,
                ..generic
            },
            _ => generic,
        }
    }

    /// The model of a topology that is none of the seeds' machines.
    fn generic() -> CostModel {
        CostModel {
            activation: 19.0,
            message: 18.0,
            send: 7.5,
            spawn: 370.0,
            message_lines: 1.0,
            state_lines: 2.0,
            line_l2: 6.0,
            line_l3: 25.0,
            line_node: 60.0,
            line_remote: 100.0,
            remote_hop: 0.6,
            steal_lines: 1.0,
            steal_fixed: 10.0,
            wake: 5_000.0,
            wake_call: 1_700.0,
            compute_scale: 1.0,
            memory: 100.0,
            mlp: 10.0,
            bw_memory: 25.6,
            bw_link: 12.8,
            stream_node: 17.1,
            stream_link: 12.8,
            tail_lines: 1.0,
            mailbox_batches: 8.0,
        }
    }

    /// The model a configuration asks for: the built-in one, with the keys of `[sim] cost`'s
    /// file replacing its values.
    pub(crate) fn load(
        config: &crate::Config,
        machine: &crate::machine::Machine,
    ) -> Result<CostModel, crate::ConfigError> {
        let model = CostModel::default_for(&machine.topology);
        let Some(path) = &config.sim.cost else {
            return Ok(model);
        };
        let err = |message| crate::ConfigError::SimCost {
            path: path.clone(),
            message,
        };
        let text = std::fs::read_to_string(path)
            .map_err(|e| err(format!("cannot read sim cost file {}: {e}", path.display())))?;
        model.with_overrides(&text, path).map_err(err)
    }

    /// The built-in model with the keys of the TOML text `text` replaced; `file` names it in
    /// errors.
    pub(crate) fn with_overrides(mut self, text: &str, file: &Path) -> Result<CostModel, String> {
        let name = file.display();
        let table: toml::Table = text
            .parse()
            .map_err(|e| format!("sim cost file {name}: {e}"))?;
        for (key, value) in &table {
            let v = match value {
                toml::Value::Float(f) => *f,
                toml::Value::Integer(i) => *i as f64,
                _ => {
                    return Err(format!(
                        "sim cost file {name}: `{key}` must be a number of nanoseconds (or lines), not {value}"
                    ))
                }
            };
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!(
                    "sim cost file {name}: `{key}` must be a non-negative number, not {v}"
                ));
            }
            if v == 0.0
                && matches!(
                    key.as_str(),
                    "mlp" | "bw_memory" | "bw_link" | "stream_node" | "stream_link"
                )
            {
                return Err(format!(
                    "sim cost file {name}: `{key}` must be positive (it divides), not 0"
                ));
            }
            let slot = match key.as_str() {
                "activation" => &mut self.activation,
                "message" => &mut self.message,
                "send" => &mut self.send,
                "spawn" => &mut self.spawn,
                "message_lines" => &mut self.message_lines,
                "state_lines" => &mut self.state_lines,
                "line_l2" => &mut self.line_l2,
                "line_l3" => &mut self.line_l3,
                "line_node" => &mut self.line_node,
                "line_remote" => &mut self.line_remote,
                "remote_hop" => &mut self.remote_hop,
                "steal_lines" => &mut self.steal_lines,
                "steal_fixed" => &mut self.steal_fixed,
                "wake" => &mut self.wake,
                "wake_call" => &mut self.wake_call,
                "compute_scale" => &mut self.compute_scale,
                "memory" => &mut self.memory,
                "mlp" => &mut self.mlp,
                "bw_memory" => &mut self.bw_memory,
                "bw_link" => &mut self.bw_link,
                "stream_node" => &mut self.stream_node,
                "stream_link" => &mut self.stream_link,
                "tail_lines" => &mut self.tail_lines,
                "mailbox_batches" => &mut self.mailbox_batches,
                _ => {
                    return Err(format!(
                        "sim cost file {name}: unknown key `{key}` (known: {})",
                        KEYS.join(", ")
                    ))
                }
            };
            *slot = v;
        }
        Ok(self)
    }

    /// The cost of one cache line at `distance`.
    /// What a message brings to its receiver, in lines at the sender→receiver distance, when its
    /// mailbox slot is `slot_bytes` long (`mailbox::slot_bytes`: the message as sent, inline;
    /// what it points to on the heap is not counted): `message_lines` for a slot of one line or
    /// less (its slot's line, with the claim and ready flag around it), plus the slot's further
    /// lines, which stream behind the first as the memory model's do (`memory::transfer`:
    /// `mlp` lines in flight, so each costs `1 / mlp` of a line's latency). 0 bytes (no slot
    /// known): `message_lines`.
    pub(crate) fn slot_lines(&self, slot_bytes: usize) -> f64 {
        let lines = (slot_bytes as u64).div_ceil(super::memory::LINE).max(1);
        self.message_lines + (lines - 1) as f64 / self.mlp.max(1.0)
    }

    pub(crate) fn line(&self, distance: Distance) -> f64 {
        match distance {
            Distance::SamePu => 0.0,
            Distance::SharedL2 => self.line_l2,
            Distance::SharedL3 => self.line_l3,
            Distance::SameNode => self.line_node,
            Distance::Remote(milli) => self.line_remote * f64::from(milli) / 1000.0,
        }
    }
}

/// The distance class of every pair of workers, computed once (workers × workers bytes).
pub(crate) struct Distances {
    workers: usize,
    class: Vec<Distance>,
    /// Nodes × nodes (the topology's indices): latency of the column's memory from the row,
    /// relative to the row's own.
    relative: Vec<f64>,
    nodes: usize,
}

impl Distances {
    pub(crate) fn new(topology: &Topology, layout: &WorkerLayout, model: &CostModel) -> Distances {
        let n = layout.workers();
        let slit = topology.numa_distances();
        // Latency of node b's memory seen from node a, relative to a's own.
        let relative = |a: usize, b: usize| -> f64 {
            match slit {
                Some(d) if d.get(a, a) > 0.0 => d.get(a, b) / d.get(a, a),
                Some(d) => 1.0 + model.remote_hop * d.get(a, b),
                None => 1.0 + model.remote_hop,
            }
        };
        let mut class = Vec::with_capacity(n * n);
        for a in 0..n {
            for b in 0..n {
                let (pa, pb) = (layout.pu_of(a), layout.pu_of(b));
                let (na, nb) = (topology.numa_node_of(pa), topology.numa_node_of(pb));
                class.push(if pa == pb {
                    Distance::SamePu
                } else if na != nb {
                    Distance::Remote((relative(na, nb) * 1000.0).round() as u32)
                } else {
                    match topology.first_common_ancestor(pa, pb).level {
                        Level::Pu | Level::Core | Level::L1 | Level::L2 => Distance::SharedL2,
                        Level::L3 => Distance::SharedL3,
                        _ => Distance::SameNode,
                    }
                });
            }
        }
        let nodes = topology.numa_node_count().max(1);
        let relative = (0..nodes * nodes)
            .map(|i| {
                let (a, b) = (i / nodes, i % nodes);
                if a == b {
                    1.0
                } else {
                    relative(a, b)
                }
            })
            .collect();
        Distances {
            workers: n,
            class,
            relative,
            nodes,
        }
    }

    /// Latency of node `b`'s memory seen from node `a`, relative to `a`'s own (topology indices).
    pub(crate) fn node_relative(&self, a: usize, b: usize) -> f64 {
        self.relative[a * self.nodes + b]
    }

    /// From worker `a`'s point of view, where worker `b`'s cache is.
    #[inline]
    pub(crate) fn get(&self, a: usize, b: usize) -> Distance {
        self.class[a * self.workers + b]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sim::test_machine as machine;

    /// A slot of one line or less is `message_lines`; each further line streams behind it at
    /// `1 / mlp` of a line.
    #[test]
    fn a_message_brings_its_slot_s_further_lines_at_the_streaming_rate() {
        let m = CostModel::generic();
        assert_eq!(m.slot_lines(0), m.message_lines);
        assert_eq!(m.slot_lines(32), m.message_lines);
        assert_eq!(m.slot_lines(64), m.message_lines);
        assert_eq!(m.slot_lines(65), m.message_lines + 1.0 / m.mlp);
        assert_eq!(m.slot_lines(264), m.message_lines + 4.0 / m.mlp);
    }

    #[test]
    fn distances_follow_the_topology() {
        let (topo, layout) = machine("preset:xeon-x7560");
        let model = CostModel::default_for(&topo);
        let d = Distances::new(&topo, &layout, &model);
        assert_eq!(d.get(0, 0), Distance::SamePu);
        let same_node = layout.workers_of_node(layout.node_of(0))[1];
        assert!(matches!(
            d.get(0, same_node),
            Distance::SharedL2 | Distance::SharedL3 | Distance::SameNode
        ));
        let other = layout.workers_of_node((layout.node_of(0) + 1) % 4)[0];
        assert!(matches!(d.get(0, other), Distance::Remote(_)));
        assert!(model.line(d.get(0, other)) > model.line(d.get(0, same_node)));
        // This preset's SLIT: remote nodes at 15/10 of the local latency.
        assert_eq!(d.get(0, other), Distance::Remote(1500));
        // Hop counts (the Opteron's) scale like a SLIT: one hop 1.6× local, two hops 2.2×.
        let (topo, layout) = machine("preset:opteron6376");
        let model = CostModel::default_for(&topo);
        let d = Distances::new(&topo, &layout, &model);
        let lines: Vec<f64> = (0..64).map(|w| model.line(d.get(0, w))).collect();
        let far = lines.iter().cloned().fold(0.0, f64::max);
        assert!((far - 2.2 * model.line_remote).abs() < 1e-9, "{lines:?}");
        assert!((d.node_relative(0, 3) - 2.2).abs() < 1e-9);
    }

    #[test]
    fn a_cost_file_overrides_keys_and_names_bad_ones() {
        let (topo, _) = machine("preset:opteron6376");
        let base = CostModel::default_for(&topo);
        let m = base
            .clone()
            .with_overrides(
                "wake = 1000\nline_l3 = 30.5\nsend = 5\n",
                Path::new("c.toml"),
            )
            .unwrap();
        assert_eq!(m.wake, 1000.0);
        assert_eq!(m.send, 5.0);
        assert_eq!(m.line_l3, 30.5);
        assert_eq!(m.message, base.message);
        let err = base
            .clone()
            .with_overrides("wakeup = 1\n", Path::new("c.toml"))
            .unwrap_err();
        assert!(err.contains("`wakeup`") && err.contains("c.toml"), "{err}");
        let err = base
            .clone()
            .with_overrides("wake = -1\n", Path::new("c.toml"))
            .unwrap_err();
        assert!(err.contains("`wake`"), "{err}");
        let err = base
            .clone()
            .with_overrides("wake = \"fast\"\n", Path::new("c.toml"))
            .unwrap_err();
        assert!(err.contains("`wake`"), "{err}");
        // The memory model's keys: replaced, and refused when bad, by name.
        let m = base
            .clone()
            .with_overrides(
                "memory = 90\nmlp = 8\nbw_memory = 20\nbw_link = 6.4\n",
                Path::new("c.toml"),
            )
            .unwrap();
        assert_eq!(
            (m.memory, m.mlp, m.bw_memory, m.bw_link),
            (90.0, 8.0, 20.0, 6.4)
        );
        // The contention term's keys (`contention.rs`).
        let m = base
            .clone()
            .with_overrides(
                "stream_node = 12.5\nstream_link = 6.4\ntail_lines = 2\nmailbox_batches = 0\n",
                Path::new("c.toml"),
            )
            .unwrap();
        assert_eq!(
            (
                m.stream_node,
                m.stream_link,
                m.tail_lines,
                m.mailbox_batches
            ),
            (12.5, 6.4, 2.0, 0.0)
        );
        for bad in [
            "stream_node = 0",
            "stream_link = -1",
            "tail_lines = \"one\"",
            "mailbox_batches = inf",
            "stream_nodes = 3",
            "memory = -5",
            "mlp = \"many\"",
            "bw_link = nan",
            "bw_memory = 0",
            "bw_memry = 3",
        ] {
            let err = base
                .clone()
                .with_overrides(bad, Path::new("c.toml"))
                .unwrap_err();
            let key = bad.split(' ').next().unwrap();
            assert!(
                err.contains(&format!("`{key}`")) && err.contains("c.toml"),
                "{err}"
            );
        }
    }
}
