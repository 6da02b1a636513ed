//! [`System::snapshot`]: every counter of a system, with its age and the mailboxes of its
//! registered actors, as one plain value that serializes to JSON (docs/observability.md). The
//! metrics export (`export.rs`, feature `metrics`) publishes the same value.

use super::System;
use crate::actor::ActorId;
use crate::engine::dispatch::Engine;
use crate::runtime::Shared;
use crate::telemetry::{Stats, WorkerStats};
use loka_topology::Level;
use serde::Serialize;

/// Everything a system counts, at one moment: what [`System::snapshot`] returns and what the
/// metrics export publishes (docs/observability.md).
///
/// It is built on [`Stats`] (flattened into it when serialized: `policy`, `workers`, `total`,
/// `dead_letters`, … are top-level keys of the JSON) and adds what `Stats` lacks: the system's
/// age, the share of the dedicated threads of `thread` actors (in `total` but in no worker's
/// entry), and the mailbox depth of each registered actor. Reading it sends nothing and stops no
/// worker: the counters are read where the workers keep them, one relaxed load each, so the
/// figures of a running system are a moment apart from one another (exact once the system is
/// quiescent). Every counter only grows over a system's life.
///
/// ```
/// let system = loka::System::builder().workers(1).build().unwrap();
/// let json = serde_json::to_string(&system.snapshot()).unwrap();
/// assert!(json.contains("\"dead_letters\":0"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Snapshot {
    /// Wall-clock time since the system started, in nanoseconds.
    pub uptime_ns: u64,
    /// Every counter ([`System::stats`]): per worker, their total, and the system-wide ones.
    #[serde(flatten)]
    pub stats: Stats,
    /// The counters of the dedicated threads of `thread` actors, summed: `stats.total` less the
    /// workers' (all zero when no dedicated thread ran).
    pub dedicated: WorkerStats,
    /// The actors registered by name ([`System::register`]), sorted by name.
    pub registered: Vec<RegisteredActor>,
    /// The engine running the actors (`actor-centric`, `message-centric`, `sim`).
    pub engine: String,
    /// Actors queued on each worker at the moment of the snapshot (what a thief could take:
    /// deque, inbox, yielded actors), under the actor-centric engine; `None` under the other
    /// engines, whose queues are not kept per worker or are inside the simulation.
    pub queue_lengths: Option<Vec<usize>>,
    /// The machine and where each worker sits on it (the same every time).
    pub topology: TopologySnapshot,
    /// Handler time per actor, when [`Config::handler_sample_us`](crate::Config) asks for it
    /// (`None` otherwise): the busiest actors by the time their activations kept a worker busy.
    pub handler_time: Option<HandlerTime>,
}

/// How many of the busiest actors a [`HandlerTime`] lists.
pub const HANDLER_TIME_TOP: usize = 20;

/// Handler time per actor, in a [`Snapshot`] (docs/observability.md, "Handler time").
///
/// Under the wall-clock engines the figures are estimates from sampling: every
/// `handler_sample_us` (on average) a thread notes which actor each worker runs and credits it
/// the time since its previous look, so an actor's `handler_ns` is about its samples × the
/// interval, within about `1/√samples` of the truth. Under the simulation they are the exact virtual time of its
/// activations. An activation's time runs from the moment its worker takes the actor to the
/// moment it lets it go: the handlers and the mailbox's own work between them. Counts only grow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct HandlerTime {
    /// The sampling interval in ns; `None` under the simulation (exact virtual time).
    pub sample_interval_ns: Option<u64>,
    /// Sampling rounds taken so far (0 under the simulation).
    pub rounds: u64,
    /// Time each worker spent running actors, in ns, by worker index.
    pub worker_busy_ns: Vec<u64>,
    /// Time the dedicated threads of `thread` actors spent running them, in ns, summed.
    pub dedicated_busy_ns: u64,
    /// Actors the record holds: at most [`crate::telemetry::HANDLER_TIME_CAPACITY`], the busiest
    /// ones (an actor with more than that fraction of all the time recorded is always among them).
    pub tracked: usize,
    /// The busiest actors, most time first, at most [`HANDLER_TIME_TOP`].
    pub actors: Vec<ActorTime>,
}

/// One actor's handler time, in a [`HandlerTime`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ActorTime {
    /// Its id.
    pub id: ActorId,
    /// Its Rust type.
    pub actor_type: String,
    /// The label it was spawned with, while it lives ([`crate::SpawnOptions::name`]).
    pub name: Option<String>,
    /// The name it is registered under, while it is ([`System::register`]).
    pub registered: Option<String>,
    /// Time its activations kept a worker busy, in ns (an estimate when sampled).
    pub handler_ns: u64,
    /// How much of `handler_ns` may belong to actors it displaced from the bounded record (0 for
    /// an actor recorded since its first sample; docs/observability.md, "Handler time").
    pub error_ns: u64,
}

/// The machine a [`Snapshot`]'s system runs on: its size and the place of each worker and PU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct TopologySnapshot {
    /// The topology source (`host`, `preset:NAME`, …).
    pub spec: String,
    /// Processor packages (sockets).
    pub packages: usize,
    /// NUMA nodes.
    pub nodes: usize,
    /// Every processing unit, by logical index: its package and NUMA node.
    pub pus: Vec<WorkerPlace>,
    /// Every worker, by index: the PU it is laid out on, with its package and node.
    pub workers: Vec<WorkerPlace>,
}

/// Where a processing unit (or the worker on it) sits, in a [`TopologySnapshot`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct WorkerPlace {
    /// The PU's logical index.
    pub pu: usize,
    /// Its package (socket), by logical index (0 on a machine without package objects).
    pub package: usize,
    /// Its NUMA node.
    pub node: usize,
}

/// A registered actor and its mailbox, in a [`Snapshot`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RegisteredActor {
    /// The name it is registered under.
    pub name: String,
    /// Its id.
    pub id: ActorId,
    /// User messages in its mailbox, as [`crate::ActorRef::mailbox_len`] reads it (exact for a
    /// bounded mailbox, best effort otherwise).
    pub mailbox_len: usize,
}

impl System {
    /// Every counter, the system's age and the registered actors' mailbox depths, as one
    /// serializable value ([`Snapshot`]; docs/observability.md). As cheap as
    /// [`stats`](Self::stats) plus one registry look-up per registered actor.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot::of(&self.engine, &self.shared)
    }
}

impl Snapshot {
    /// The full snapshot of the system `engine` runs on `shared` (the engine's own figures and
    /// queue lengths included): [`System::snapshot`], and what the `observe` socket serves.
    pub(crate) fn of(engine: &Engine, shared: &Shared) -> Snapshot {
        let mut snapshot = Snapshot::take(shared, super::stats_of(engine, shared));
        snapshot.queue_lengths = engine.queue_lengths();
        snapshot
    }

    /// The snapshot of `shared`, around `stats` (read from it just before), without the
    /// engine's queue lengths.
    pub(crate) fn take(shared: &Shared, stats: Stats) -> Snapshot {
        let mut workers = WorkerStats::default();
        for w in &stats.workers {
            workers.accumulate(w);
        }
        Snapshot {
            uptime_ns: shared.elapsed_ns(),
            dedicated: stats.total.minus(&workers),
            registered: registered(shared),
            engine: shared.config.engine.to_string(),
            queue_lengths: None,
            topology: topology(shared),
            handler_time: handler_time(shared),
            stats,
        }
    }
}

/// The handler-time record's busiest actors, with their names.
fn handler_time(shared: &Shared) -> Option<HandlerTime> {
    let times = shared.handler_time.as_ref()?;
    let report = times.report(HANDLER_TIME_TOP);
    let mut actors: Vec<ActorTime> = report
        .top
        .iter()
        .map(|e| {
            let id = ActorId::from_raw(e.id);
            ActorTime {
                id,
                actor_type: e.actor_type.to_owned(),
                name: shared.name_of(id).map(|n| n.to_string()),
                registered: None,
                handler_ns: e.ns,
                error_ns: e.error_ns,
            }
        })
        .collect();
    {
        let table = shared.directory.0.lock();
        for actor in &mut actors {
            actor.registered = table.by_actor.get(&actor.id).map(|n| n.to_string());
        }
    }
    Some(HandlerTime {
        sample_interval_ns: (times.interval_ns() > 0).then_some(times.interval_ns()),
        rounds: report.rounds,
        worker_busy_ns: report.worker_busy_ns,
        dedicated_busy_ns: report.dedicated_ns,
        tracked: report.tracked,
        actors,
    })
}

/// The machine and the workers' places on it.
fn topology(shared: &Shared) -> TopologySnapshot {
    let (topo, layout) = (&shared.machine.topology, &shared.machine.layout);
    let place = |pu: usize| WorkerPlace {
        pu,
        package: topo.ancestor(pu, Level::Package).map_or(0, |o| o.index),
        node: topo.numa_node_of(pu),
    };
    let pus: Vec<WorkerPlace> = (0..topo.pu_count()).map(place).collect();
    TopologySnapshot {
        spec: shared.config.topology.clone(),
        packages: pus.iter().map(|p| p.package + 1).max().unwrap_or(1),
        nodes: pus.iter().map(|p| p.node + 1).max().unwrap_or(1),
        workers: (0..layout.workers())
            .map(|w| pus[layout.pu_of(w)])
            .collect(),
        pus,
    }
}

/// The registered actors and their mailbox depths, sorted by name. An actor that stops while
/// this runs is left out.
fn registered(shared: &Shared) -> Vec<RegisteredActor> {
    let names: Vec<(ActorId, std::sync::Arc<str>)> = {
        let table = shared.directory.0.lock();
        table
            .by_actor
            .iter()
            .map(|(&id, name)| (id, std::sync::Arc::clone(name)))
            .collect()
    };
    // The directory's lock is released: no other lock is taken under it (introspect.rs).
    let mut actors: Vec<RegisteredActor> = names
        .into_iter()
        .filter_map(|(id, name)| {
            let mailbox_len = shared.registry.with_live(id, |task| {
                // SAFETY: `with_live` calls us under the registry shard's lock while the actor is
                // registered, so its task is alive for the read.
                unsafe { task.queued() }
            })?;
            Some(RegisteredActor {
                name: name.to_string(),
                id,
                mailbox_len,
            })
        })
        .collect();
    actors.sort_by(|a, b| a.name.cmp(&b.name));
    actors
}

#[cfg(test)]
mod tests {
    use crate::{Actor, Context, System};

    struct Quiet;
    impl Actor for Quiet {
        type Msg = u32;
        fn handle(&mut self, _ctx: &mut Context<Self>, _msg: u32) {}
    }

    #[test]
    fn a_snapshot_has_the_stats_the_registered_actors_and_serializes_flat() {
        let system = System::builder().workers(1).build().unwrap();
        let b = system.spawn(Quiet);
        let a = system.spawn(Quiet);
        system.register("b", &b).unwrap();
        system.register("a", &a).unwrap();
        for i in 0..5 {
            a.send(i).unwrap();
        }
        system.run_until_idle();
        let snapshot = system.snapshot();
        let names: Vec<&str> = snapshot
            .registered
            .iter()
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(names, ["a", "b"], "sorted by name");
        assert_eq!(snapshot.registered[0].id, a.id());
        assert_eq!(snapshot.registered[0].mailbox_len, 0);
        let dedicated = &snapshot.dedicated;
        assert!(dedicated.counter_values().all(|n| n == 0), "{dedicated:?}");
        assert!(dedicated.queue_wait_hist.iter().all(|&n| n == 0));
        assert_eq!(snapshot.stats.actors_spawned, 2);
        assert!(snapshot.stats.total.messages >= 5);
        let json = serde_json::to_value(&snapshot).unwrap();
        for key in [
            "uptime_ns",
            "policy",
            "workers",
            "total",
            "dead_letters",
            "dedicated",
        ] {
            assert!(
                json.get(key).is_some(),
                "no `{key}` at the top level: {json}"
            );
        }
        assert_eq!(json["registered"][1]["name"], "b");
        system.unregister("a");
        assert_eq!(system.snapshot().registered.len(), 1);
    }
}
