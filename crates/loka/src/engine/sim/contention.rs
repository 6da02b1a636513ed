//! Contention: what a transfer costs when others use the same hardware at the same virtual time.
//!
//! The memory model (`memory.rs`) prices a fetch by distance alone, as if the fetching core were
//! alone on the machine. Two shared resources make that wrong on a loaded big machine; this module
//! prices the first, `mailbox_tail.rs` the second:
//!
//! 1. **Memory controllers and links.** Every byte of a fetch from a node's memory passes that
//!    node's controller (capacity `stream_node`, its STREAM bandwidth), and every byte that
//!    crosses nodes passes the link between them (`stream_link`). The demand on a resource at
//!    virtual time `t` is the sum of the rates of the transfers in progress at `t` (each
//!    transfer's bytes spread over its own duration: a sliding window as wide as the transfer).
//!    A new fetch's lines queue behind the others' ([`queue_wait`]), and when the others'
//!    demand and its own exceed the capacity it streams at its fair share of it.
//! 2. **A mailbox's tail.** Every send claims a slot with a read-modify-write on the mailbox's
//!    claim word, one cache line. With one sender the line stays in its cache; with several
//!    senders on different cores writing in turn, each send first takes the line from the
//!    previous writer (a transfer at their distance), and the transfers serialize: a send waits
//!    for the line while the other writers have it.
//!
//! Both use virtual time only, and iterate in a fixed order, so a run stays reproducible.

use super::cost::CostModel;
use super::memory::{transfer, Path, LINE};

/// Mean wait in a queue whose server takes `service` ns per item at utilisation `rho`, at most
/// `cap` ns.
///
/// Below saturation this is the M/D/1 queue's mean wait (Pollaczek–Khinchine with a
/// deterministic service time: `rho × service / (2 (1 − rho))`): the items come from many
/// independent cores, so their arrivals are close to Poisson, and a memory channel or a line
/// transfer takes a fixed time. That formula grows without bound as `rho` → 1, which a closed
/// system cannot do: the items ahead of one in the queue are at most those in flight, so the
/// caller passes what those take as `cap`. At or beyond saturation the wait is `cap`.
pub(crate) fn queue_wait(rho: f64, service: f64, cap: f64) -> f64 {
    if rho.is_nan() || rho <= 0.0 {
        return 0.0;
    }
    if rho >= 1.0 {
        return cap;
    }
    (rho * service / (2.0 * (1.0 - rho))).min(cap)
}

/// A transfer in progress on a shared resource.
#[derive(Debug, Clone, Copy)]
struct Flow {
    start: u64,
    end: u64,
    /// Bytes per ns.
    rate: f64,
}

/// The transfers in progress on one resource.
#[derive(Debug, Default)]
struct Load {
    flows: Vec<Flow>,
}

impl Load {
    /// The demand at virtual time `t`, bytes per ns. Forgets the transfers that ended by `t`:
    /// the driver advances the earliest worker first, so later queries are (nearly) never
    /// earlier than `t`.
    fn rate_at(&mut self, t: u64) -> f64 {
        self.flows.retain(|f| f.end > t);
        self.flows
            .iter()
            .filter(|f| f.start <= t)
            .map(|f| f.rate)
            .sum()
    }
}

/// The demand on every node's memory controller and every link between two nodes.
pub(crate) struct Contention {
    controllers: Vec<Load>,
    /// Nodes × nodes, by (from, to).
    links: Vec<Load>,
    nodes: usize,
}

/// What a fetch cost and how much of that others' transfers added.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Fetch {
    /// ns, contention included.
    pub(crate) ns: f64,
    /// ns of `ns` that others' demand added to what the fetch costs alone.
    pub(crate) queued: f64,
}

impl Contention {
    /// No transfer in progress on a machine of `nodes` NUMA nodes.
    pub(crate) fn new(nodes: usize) -> Contention {
        let nodes = nodes.max(1);
        Contention {
            controllers: (0..nodes).map(|_| Load::default()).collect(),
            links: (0..nodes * nodes).map(|_| Load::default()).collect(),
            nodes,
        }
    }

    /// Fetches `lines` lines along `path` starting at virtual time `at`, and records the
    /// transfer as demand on the resources it passes until it ends.
    ///
    /// Alone (no other demand), the cost is the memory model's: the first line's latency `L`,
    /// then one line per `max(L / mlp, 64 B / peak)`. On each resource of capacity `C`, with
    /// the others' demand `λ` (utilisation `ρ = λ / C`):
    /// - every line waits [`queue_wait`]`(ρ, 64 B / C, ρ × L)` in the resource's queue: the
    ///   cap is what the others have in flight by Little's law (`λ × L` bytes), served at `C`;
    /// - the stream gets at most its fair share of `C` when the demand, its own included,
    ///   exceeds it: a line every `64 B × (λ + r) / (C × r)` ns at its own rate `r`, i.e.
    ///   its lone per-line time scaled by the total utilisation.
    ///
    /// The costlier resource of the two (controller, link) sets the price.
    pub(crate) fn fetch(&mut self, model: &CostModel, path: &Path, lines: u64, at: u64) -> Fetch {
        let alone = transfer(lines, path.latency, path.peak, model.mlp);
        if lines == 0 || (path.controller.is_none() && path.link.is_none()) {
            return Fetch {
                ns: alone,
                queued: 0.0,
            };
        }
        let line = LINE as f64;
        let per_line_alone = (path.latency / model.mlp.max(1.0)).max(line / path.peak);
        let own_rate = line / per_line_alone;
        let mut wait: f64 = 0.0;
        let mut per_line = per_line_alone;
        let mut price = |load: &mut Load, capacity: f64| {
            let rho = load.rate_at(at) / capacity;
            wait = wait.max(queue_wait(rho, line / capacity, rho * path.latency));
            per_line = per_line.max(per_line_alone * (rho + own_rate / capacity));
        };
        if let Some(node) = path.controller {
            price(&mut self.controllers[node], model.stream_node);
        }
        if let Some((from, to)) = path.link {
            price(&mut self.links[from * self.nodes + to], model.stream_link);
        }
        let latency = path.latency + wait;
        per_line = per_line.max(latency / model.mlp.max(1.0));
        let ns = latency + (lines - 1) as f64 * per_line;
        let flow = Flow {
            start: at,
            end: at + (ns.max(1.0) as u64),
            rate: (lines * LINE) as f64 / ns.max(1.0),
        };
        if let Some(node) = path.controller {
            self.controllers[node].flows.push(flow);
        }
        if let Some((from, to)) = path.link {
            self.links[from * self.nodes + to].flows.push(flow);
        }
        Fetch {
            ns,
            queued: (ns - alone).max(0.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sim::test_machine as machine;

    #[test]
    fn the_queue_wait_grows_with_utilisation_and_stops_at_its_cap() {
        assert_eq!(queue_wait(0.0, 4.0, 100.0), 0.0);
        // M/D/1: ρ S / (2 (1 − ρ)).
        assert!((queue_wait(0.5, 4.0, 100.0) - 2.0).abs() < 1e-12);
        assert!(queue_wait(0.9, 4.0, 100.0) > queue_wait(0.5, 4.0, 100.0));
        assert_eq!(queue_wait(0.999, 4.0, 100.0), 100.0);
        assert_eq!(queue_wait(3.0, 4.0, 100.0), 100.0);
    }

    fn remote_path(model: &CostModel) -> Path {
        Path {
            latency: model.memory * 1.6,
            peak: model.bw_memory.min(model.bw_link),
            controller: Some(1),
            link: Some((1, 0)),
        }
    }

    #[test]
    fn a_lone_fetch_costs_what_the_memory_model_says_and_a_crowded_one_more() {
        let (topo, _) = machine("preset:opteron6376");
        let model = CostModel::default_for(&topo);
        let path = remote_path(&model);
        let lines = (1 << 20) / LINE;
        let alone = transfer(lines, path.latency, path.peak, model.mlp);
        let mut c = Contention::new(8);
        let first = c.fetch(&model, &path, lines, 0);
        assert_eq!(
            first,
            Fetch {
                ns: alone,
                queued: 0.0
            }
        );
        // Seven more cores stream from the same node at once: each waits behind the others.
        let mut last = first;
        for _ in 1..8 {
            let next = c.fetch(&model, &path, lines, 0);
            assert!(
                next.ns > last.ns && next.queued > 0.0,
                "{next:?} after {last:?}"
            );
            last = next;
        }
        // 8 streams share 12.8 GB/s of link: the last gets about an eighth of it, no less.
        let fair = lines as f64 * LINE as f64 / (model.stream_link / 8.0);
        assert!(
            last.ns > 0.7 * fair && last.ns < 2.0 * fair,
            "{last:?} {fair}"
        );
        // Once those transfers ended, a fetch is alone again.
        let after = c.fetch(&model, &path, lines, 10 * last.ns as u64);
        assert_eq!(after.ns, alone);
        // Another node's controller and link are not loaded by them.
        let mut c = Contention::new(8);
        c.fetch(&model, &path, lines, 0);
        let elsewhere = Path {
            controller: Some(2),
            link: Some((2, 0)),
            ..path
        };
        assert_eq!(c.fetch(&model, &elsewhere, lines, 0).queued, 0.0);
    }
}
