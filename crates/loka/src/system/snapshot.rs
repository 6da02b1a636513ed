//! [`System::snapshot`]: every counter of a system, with its age and the mailboxes of its
//! registered actors, as one plain value that serializes to JSON (docs/observability.md). The
//! metrics export (`export.rs`, feature `metrics`) publishes the same value.

use super::System;
use crate::actor::ActorId;
use crate::runtime::Shared;
use crate::telemetry::{Stats, WorkerStats};
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
        Snapshot::take(&self.shared, self.stats())
    }
}

impl Snapshot {
    /// The snapshot of `shared`, around `stats` (read from it just before).
    pub(crate) fn take(shared: &Shared, stats: Stats) -> Snapshot {
        let mut workers = WorkerStats::default();
        for w in &stats.workers {
            workers.accumulate(w);
        }
        Snapshot {
            uptime_ns: u64::try_from(shared.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX),
            dedicated: stats.total.minus(&workers),
            registered: registered(shared),
            stats,
        }
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
