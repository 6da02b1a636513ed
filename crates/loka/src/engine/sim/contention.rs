//! Contention: what a transfer costs when others use the same hardware at the same virtual time.
//!
//! The memory model (`memory.rs`) prices a fetch by distance alone, as if the fetching core were
//! alone on the machine. Two shared resources make that wrong on a loaded big machine, and this
//! module prices them:
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
//!    for the line while the other writers have it ([`Tails`]).
//!
//! Both use virtual time only, and iterate in a fixed order, so a run stays reproducible.

use super::cost::CostModel;
use super::memory::{transfer, Path, LINE};
use crate::runtime::TaskRef;
use rustc_hash::FxHashMap;

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
    if !(rho > 0.0) {
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

/// Mailboxes watched at once (the most recently requeued): a bound on what each activation
/// checks.
const MAX_WATCHED: usize = 8;

/// The mailboxes of actors that used their budget with mail left and wait in a queue for their
/// next activation: the mailboxes many senders hammer. Sends to them never reach the engine (the
/// actor is scheduled already), so the driver reads their length before and after every other
/// activation: on the host activations run one at a time, so the growth across one activation
/// is what that activation sent there.
#[derive(Default)]
pub(crate) struct Watch {
    /// (actor id, its task, its mailbox's length before the running activation).
    queued: Vec<(u64, TaskRef, usize)>,
}

impl Watch {
    /// `task` (actor `actor`) was requeued with mail left: watch its mailbox until it runs.
    pub(crate) fn requeued(&mut self, actor: u64, task: TaskRef) {
        self.queued.retain(|&(a, _, _)| a != actor);
        if self.queued.len() == MAX_WATCHED {
            self.queued.remove(0);
        }
        self.queued.push((actor, task, 0));
    }

    /// Actor `actor` is about to run: its own activation consumes its mailbox, and when it stops
    /// its task may be freed, so it is no longer watched. Then reads the watched lengths.
    pub(crate) fn before(&mut self, actor: u64) {
        self.queued.retain(|&(a, _, _)| a != actor);
        for (_, task, len) in &mut self.queued {
            // SAFETY: a watched task waits in a virtual worker's queue (it leaves the watch when
            // it is next activated, above), and a queued actor is alive: it stops only in an
            // activation of its own.
            *len = unsafe { task.info() }.mailbox_len;
        }
    }

    /// The activation on worker `w` ended: every watched mailbox that grew had a writer on `w`,
    /// sending at virtual time `at`.
    pub(crate) fn after(&mut self, tails: &mut Tails, w: usize, at: u64) {
        for &(actor, task, before) in &self.queued {
            // SAFETY: as in `before`; the activation that just ran was another actor's.
            if unsafe { task.info() }.mailbox_len > before {
                tails.wrote(actor, w, at);
            }
        }
    }
}

/// Writers kept per mailbox: the most recent distinct ones (more cannot matter much, and the
/// list stays cheap to scan).
const MAX_WRITERS: usize = 16;

/// One receiver's recent writers: distinct workers with the virtual time of their last send the
/// engine saw, oldest first, and when its latest batches started (oldest first).
#[derive(Debug, Default)]
struct Tail {
    writers: Vec<(usize, u64)>,
    batches: std::collections::VecDeque<u64>,
}

/// The writers of every receiver's mailbox tail, as far as the engine sees them.
///
/// The engine sees a send when it wakes its receiver or reaches it while it runs (`routing.rs`),
/// and, for a receiver that used its budget and waits in a queue, through its mailbox's length
/// ([`Watch`]); other sends to an actor that is already queued go straight into its mailbox,
/// unseen (a hook on every send would cost the real engines). So the writers of a batch are
/// taken to be the distinct workers seen sending to the receiver since the start of its latest
/// `mailbox_batches` batches, each sending an equal share of it. The window is counted in the
/// receiver's own batches, not in nanoseconds, so that it spans the same number of wake-ups for
/// a fast receiver and a slow one.
#[derive(Default)]
pub(crate) struct Tails {
    tails: FxHashMap<u64, Tail>,
}

/// What a batch's senders pay for the tail line.
pub(crate) struct TailCharges {
    /// Per writer, oldest first: (worker, ns it spends on its share of the batch's sends:
    /// `send`, the slot's lines from the receiver, the tail from the previous writer, the wait).
    pub(crate) writers: Vec<(usize, f64)>,
    /// ns of those spent moving the tail and waiting for it.
    pub(crate) tail_ns: f64,
    /// ns the receiver pays per message for the slot's lines: their mean distance over the
    /// writers (each wrote its share of the slots in its own cache).
    pub(crate) slot_ns: f64,
}

impl Tails {
    /// Worker `w` sent to `actor` at virtual time `at`.
    pub(crate) fn wrote(&mut self, actor: u64, w: usize, at: u64) {
        let tail = self.tails.entry(actor).or_default();
        if let Some(i) = tail.writers.iter().position(|&(x, _)| x == w) {
            tail.writers.remove(i);
        } else if tail.writers.len() == MAX_WRITERS {
            tail.writers.remove(0);
        }
        // Kept in order of their last send (a late-charged clock may write out of order).
        let i = tail.writers.partition_point(|&(_, t)| t <= at);
        tail.writers.insert(i, (w, at));
    }

    /// The actor stopped.
    pub(crate) fn forget(&mut self, actor: u64) {
        self.tails.remove(&actor);
    }

    /// The charges of a batch of `messages` that `actor` handles on worker `receiver` from
    /// virtual time `start`, if several workers wrote to it in turn (`None`: one writer or none,
    /// priced as a single sender by the caller). `line(a, b)`: one line from `a`'s cache to
    /// `b`'s.
    ///
    /// The writers write in turn, oldest first, so writer `j` takes the tail from writer `j − 1`
    /// (the first from the last): `tail_lines × line(j − 1, j)`. While one writer holds the line
    /// the others wait: the tail is a server with service time `T` (the mean of those transfers)
    /// at utilisation `ρ = messages × T / interval`, `interval` the time since the receiver's
    /// previous batch began (in which this one's messages were written), and each send waits
    /// [`queue_wait`]`(ρ, T, (k − 1) × T)`: at most one transfer per other writer, one round of
    /// the line. Hammered by `k` writers, a send costs a whole round, so the mailbox takes at most
    /// one message per transfer whatever `k` is.
    pub(crate) fn batch(
        &mut self,
        model: &CostModel,
        actor: u64,
        receiver: usize,
        start: u64,
        messages: f64,
        line: impl Fn(usize, usize) -> f64,
    ) -> Option<TailCharges> {
        let tail = self.tails.get_mut(&actor)?;
        let previous = tail.batches.back().copied();
        let n = model.mailbox_batches as usize;
        tail.batches.push_back(start);
        while tail.batches.len() > n.max(1) {
            tail.batches.pop_front();
        }
        if n == 0 || messages <= 0.0 {
            return None;
        }
        // With fewer than `n` batches so far, every writer seen counts.
        let since = if tail.batches.len() == n {
            tail.batches[0]
        } else {
            0
        };
        tail.writers.retain(|&(_, t)| t >= since);
        let k = tail.writers.len();
        if k < 2 {
            return None;
        }
        let hop = |j: usize| {
            let (from, to) = (tail.writers[(j + k - 1) % k].0, tail.writers[j].0);
            model.tail_lines * line(from, to)
        };
        let hops: Vec<f64> = (0..k).map(hop).collect();
        let service = hops.iter().sum::<f64>() / k as f64;
        // Without a previous batch, the messages came at most as fast as the tail moved.
        let interval = previous
            .map_or(messages * service, |p| start.saturating_sub(p) as f64)
            .max(1.0);
        let rho = messages * service / interval;
        let wait = queue_wait(rho, service, (k - 1) as f64 * service);
        let share = messages / k as f64;
        let mut tail_ns = 0.0;
        let mut slot_ns = 0.0;
        let writers = tail
            .writers
            .iter()
            .zip(&hops)
            .map(|(&(w, _), &hop)| {
                tail_ns += share * (hop + wait);
                let slot = model.message_lines * line(w, receiver);
                slot_ns += slot / k as f64;
                (w, share * (model.send + slot + hop + wait))
            })
            .collect();
        Some(TailCharges {
            writers,
            tail_ns,
            slot_ns,
        })
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

    #[test]
    fn writers_in_turn_pay_the_tail_from_the_previous_writer() {
        let (topo, _) = machine("preset:opteron6376");
        let model = CostModel::default_for(&topo);
        // Workers 0 and 1 on one node (25 ns apart), 40 on another (160 ns).
        let line = |a: usize, b: usize| match (a, b) {
            _ if a == b => 0.0,
            (0, 1) | (1, 0) => 25.0,
            _ => 160.0,
        };
        let mut t = Tails::default();
        // One writer: no tail term.
        t.wrote(9, 1, 100);
        assert!(t.batch(&model, 9, 0, 200, 10.0, line).is_none());
        // Two writers on one node, sparse sends (ρ = 2 × 25 / 200): each send pays the transfer
        // from the other writer and a short M/D/1 wait.
        t.wrote(9, 0, 300);
        let c = t.batch(&model, 9, 0, 400, 2.0, line).unwrap();
        assert_eq!(c.writers.iter().map(|w| w.0).collect::<Vec<_>>(), [1, 0]);
        let wait = 0.25 * 25.0 / 1.5;
        assert!(
            (c.tail_ns - 2.0 * (25.0 + wait)).abs() < 1e-9,
            "{}",
            c.tail_ns
        );
        // Each writer's share: half the batch's sends, with the slot's line from the receiver.
        let w1 = 1.0 * (model.send + model.message_lines * 25.0 + 25.0 + wait);
        assert!((c.writers[0].1 - w1).abs() < 1e-9);
        // The receiver reads half the slots from worker 1's cache, half from its own.
        assert!((c.slot_ns - model.message_lines * 12.5).abs() < 1e-9);
        let near = c.tail_ns;
        // A writer on another node: two of the three hand-offs cross nodes.
        t.wrote(9, 40, 500);
        let c = t.batch(&model, 9, 0, 600, 2.0, line).unwrap();
        assert_eq!(c.writers.len(), 3);
        assert!(c.tail_ns > near);
        // Hammered (100 messages in 100 ns): every send waits for the line to go round the
        // three writers once, so the batch's sends cost 100 rounds in all.
        t.wrote(9, 1, 610);
        let c = t.batch(&model, 9, 0, 700, 100.0, line).unwrap();
        let round = 25.0 + 160.0 + 160.0;
        assert!((c.tail_ns - 100.0 * round).abs() < 1e-6, "{}", c.tail_ns);
        // Writers not seen since the receiver's 8th-latest batch no longer count: 4 batches
        // so far; after 4 more without a send, the oldest batch is 400 (writer 0 at 300 drops),
        // after 5 it is 600 (writer 40 at 500 drops), and writer 1 is alone.
        for at in [1_000, 2_000, 3_000, 4_000] {
            assert_eq!(
                t.batch(&model, 9, 0, at, 1.0, line).unwrap().writers.len(),
                3
            );
        }
        assert_eq!(
            t.batch(&model, 9, 0, 5_000, 1.0, line)
                .unwrap()
                .writers
                .len(),
            2
        );
        assert!(t.batch(&model, 9, 0, 6_000, 1.0, line).is_none());
        // No batches to look back on: the term is off.
        let off = CostModel {
            mailbox_batches: 0.0,
            ..model
        };
        t.wrote(9, 0, 200_000);
        t.wrote(9, 40, 200_010);
        assert!(t.batch(&off, 9, 0, 200_100, 5.0, line).is_none());
        assert!(t.batch(&model, 9, 0, 200_200, 5.0, line).is_some());
        t.forget(9);
        assert!(t.batch(&model, 9, 0, 200_200, 5.0, line).is_none());
    }
}
