//! The machine a system runs on: its topology and the worker layout derived from it once at start.

use crate::config::{Config, ConfigError};
use crate::policy::PolicyKind;
use loka_topology::{CostMatrix, GroupLevel, LayoutOptions, Topology, TopologySpec, WorkerLayout};
use std::sync::Arc;

/// Topology plus worker layout, shared read-only by the workers and the policies.
#[derive(Debug, Clone)]
pub struct Machine {
    /// The topology the configuration named.
    pub topology: Arc<Topology>,
    /// Per-worker derived structures (victim groups, `dist`, node order, places).
    pub layout: Arc<WorkerLayout>,
}

impl Machine {
    /// Loads the topology named by `config.topology` (and `config.cost`) and lays out
    /// `config.workers` workers on it. Fails on an invalid spec, an unreadable cost file, or more
    /// workers than PUs.
    pub fn load(config: &Config) -> Result<Machine, ConfigError> {
        let err = |error| ConfigError::Topology {
            spec: config.topology.clone(),
            error,
        };
        let spec: TopologySpec = config.topology.parse().map_err(err)?;
        let topology = Topology::load(&spec).map_err(err)?;
        let cost = CostMatrix::load(&topology, config.cost.as_deref(), false).map_err(err)?;
        // LGS-CO: the innermost victim group is the L2 sharers instead of the NUMA node.
        let co = matches!(config.policy, PolicyKind::Lgs(v) if v.co);
        let options = LayoutOptions {
            workers: config.workers,
            group_level: if co { GroupLevel::L2 } else { GroupLevel::Numa },
            place_level: config.place_level,
        };
        let layout = WorkerLayout::new(&topology, &cost, &options).map_err(err)?;
        if co && !layout.has_l2_sharing() {
            return Err(ConfigError::Invalid {
                key: "policy",
                value: config.policy.to_string(),
                source_name: format!("topology `{}`", config.topology),
                reason: "the `co` variant needs workers that share an L2 cache, and none do here"
                    .to_owned(),
            });
        }
        if let PolicyKind::Places(mode) = config.policy {
            if mode.shared_queues() && layout.place_count() < 2 {
                return Err(ConfigError::Invalid {
                    key: "policy",
                    value: config.policy.to_string(),
                    source_name: format!("topology `{}`", config.topology),
                    reason: format!(
                        "mode A (one shared queue per place) needs at least two places, and this \
                         topology has one at place_level `{}` (use `places`, or a finer place_level)",
                        config.place_level
                    ),
                });
            }
        }
        Ok(Machine {
            topology: Arc::new(topology),
            layout: Arc::new(layout),
        })
    }

    /// How many places (LASSI) the workers form: one per package by default
    /// ([`Config::place_level`]).
    pub fn places(&self) -> usize {
        self.layout.place_count()
    }

    /// Whether worker threads are pinned: pinning is on, the topology is the real machine, and
    /// there are at least two workers. A lone worker has no partner whose distance a policy
    /// reasons about, so pinning buys it nothing, and it costs: a plain thread that sends from
    /// another CPU must wake it there, across CPUs (30–50 µs on a VM instead of 3–8 µs on the
    /// same one, docs/decisions/0055-wake-on-the-callers-cpu.md), where an unpinned thread is
    /// woken where the OS finds best.
    pub fn pins_workers(&self, config: &Config) -> bool {
        config.pin && self.topology.is_real() && config.workers >= 2
    }

    /// Pins the calling worker thread to its PU when [`pins_workers`](Self::pins_workers); a
    /// failure is logged, never fatal (the worker still runs, unpinned).
    pub(crate) fn pin_worker(&self, config: &Config, worker: usize) {
        if !self.pins_workers(config) {
            return;
        }
        let pu = self.layout.pu_of(worker);
        if let Err(e) = loka_topology::pin_current_thread(&self.topology, pu) {
            tracing::warn!(worker, pu, error = %e, "could not pin worker thread");
        }
    }
}
