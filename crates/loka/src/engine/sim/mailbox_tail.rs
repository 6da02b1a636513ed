//! Contention on a mailbox's tail: senders on different cores writing one mailbox in turn.
//!
//! Every send claims a slot with a compare-and-swap on the mailbox's claim word, one cache line.
//! A sender alone keeps that line in its cache: its next sends find it there. Several senders
//! writing at the same virtual time take it from one another: each send first fetches the line
//! from the writer before it (a transfer at their distance), and only one core holds it at a
//! time, so the sends serialize: however many writers hammer a mailbox, it takes about one
//! message per transfer.
//!
//! The engine does not see most sends: a send to an actor that is already scheduled goes straight
//! into its mailbox (a hook on every send would cost the real engines). It sees a send that wakes
//! its receiver (`routing.rs`), and, for the receivers that wait in a queue after using their
//! budget with mail left, or that a send woke while several workers write them (the hammered
//! ones), it reads their mailboxes' lengths before and after every other activation ([`Watch`]):
//! activations run one at a time on the host, so the growth is exactly what that activation sent
//! there. Those sends are priced where they happen, on the sending activation ([`Tails::sent`]);
//! the receiver's batches then split the senders' share among the writers seen
//! ([`Tails::batch`]).

use super::contention::queue_wait;
use super::cost::CostModel;
use crate::engine::placement::NO_WAKER;
use crate::runtime::TaskRef;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// Mailboxes watched at once (the most recently requeued): a bound on what each activation
/// checks.
const MAX_WATCHED: usize = 8;

/// The mailboxes of actors that used their budget with mail left and wait in a queue for their
/// next activation, and of actors several workers write that a send just woke.
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

    /// `task` (actor `actor`), a mailbox several workers write, was just woken by a send from the
    /// running activation: watch it until it runs, so that the activation's further sends into
    /// it are counted too (the waking message is in its mailbox already).
    pub(crate) fn woken(&mut self, actor: u64, task: TaskRef) {
        self.requeued(actor, task);
        // SAFETY: this wake-up schedules the task (the engine queues it right after), so it is
        // alive, and stays so while queued (see `before`).
        let len = unsafe { task.info() }.mailbox_len;
        if let Some(entry) = self.queued.last_mut() {
            entry.2 = len.saturating_sub(1);
        }
    }

    /// Actor `actor` is about to run: its own activation consumes its mailbox, and when it stops
    /// its task may be freed, so it is no longer watched. Then reads the watched lengths.
    pub(crate) fn before(&mut self, actor: u64) {
        self.queued.retain(|&(a, _, _)| a != actor);
        for (_, task, len) in &mut self.queued {
            // SAFETY: a watched task waits in a virtual worker's queue (it leaves the watch when
            // it is next activated, above, and the watch is emptied when the engine stops), and a
            // queued actor is alive: it stops only in an activation of its own.
            *len = unsafe { task.info() }.mailbox_len;
        }
    }

    /// The activation that just ran (another actor's): the watched mailboxes it sent to, with
    /// how many messages each.
    pub(crate) fn after(&self) -> Vec<(u64, f64)> {
        self.queued
            .iter()
            .filter_map(|&(actor, task, before)| {
                // SAFETY: as in `before`.
                let now = unsafe { task.info() }.mailbox_len;
                (now > before).then(|| (actor, (now - before) as f64))
            })
            .collect()
    }
}

/// Writers kept per mailbox: the most recent distinct ones.
const MAX_WRITERS: usize = 16;

/// A run of sends by one activation into a watched mailbox.
#[derive(Debug, Clone, Copy)]
struct Burst {
    worker: usize,
    from: u64,
    to: u64,
    /// Messages per ns.
    rate: f64,
}

/// A sender seen writing a mailbox: the sending actor (its waker id, `placement::waker_id`;
/// `NO_WAKER` for timers), the worker it sent from, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Writer {
    worker: usize,
    sender: u32,
    at: u64,
}

impl Writer {
    /// Who the senders' share is split between: the sending actor, wherever it sent from (a
    /// driver that a thief moved is one sender, not one per worker it ran on); a send with no
    /// actor behind it (a timer) counts as its worker's.
    fn who(&self) -> (u32, usize) {
        if self.sender == NO_WAKER {
            (NO_WAKER, self.worker)
        } else {
            (self.sender, 0)
        }
    }
}

/// One receiver's recent writers.
#[derive(Debug, Default)]
struct Tail {
    /// Distinct (worker, sending actor) pairs with the virtual time of their last send seen,
    /// oldest first.
    writers: Vec<Writer>,
    /// The bursts into this mailbox that may still be going on.
    bursts: Vec<Burst>,
    /// The worker that wrote the claim word last (it holds the line).
    last_writer: Option<usize>,
    /// When the receiver's latest batches started, oldest first.
    batches: VecDeque<u64>,
    /// One of its batches took more than a budget: a backlog was waiting for it.
    backlogged: bool,
}

/// The writers of every receiver's mailbox tail, as far as the engine sees them.
#[derive(Default)]
pub(crate) struct Tails {
    tails: FxHashMap<u64, Tail>,
}

/// How a batch's senders' share is split when several actors wrote it.
pub(crate) struct Shares {
    /// Per sending actor, oldest first: (the worker it runs on now, ns of `send` and the slot's
    /// lines for its share).
    pub(crate) writers: Vec<(usize, f64)>,
    /// ns the receiver pays per message for the slots' lines: their mean distance over the
    /// writers (each wrote its share of the slots from its own cache).
    pub(crate) slot_ns: f64,
}

impl Tails {
    /// Actor `sender` (a waker id; `NO_WAKER` for a timer) sent to `actor` from worker `w` at
    /// virtual time `at` (and `w` holds the claim word's line now).
    pub(crate) fn wrote(&mut self, actor: u64, w: usize, sender: u32, at: u64) {
        let tail = self.tails.entry(actor).or_default();
        tail.last_writer = Some(w);
        if let Some(i) = (tail.writers.iter()).position(|x| x.worker == w && x.sender == sender) {
            tail.writers.remove(i);
        } else if tail.writers.len() == MAX_WRITERS {
            tail.writers.remove(0);
        }
        // Kept in order of their last send (a late-charged clock may write out of order).
        let i = tail.writers.partition_point(|x| x.at <= at);
        let writer = Writer {
            worker: w,
            sender,
            at,
        };
        tail.writers.insert(i, writer);
    }

    /// Whether `actor`'s mailbox is worth watching whenever it is woken: several workers wrote
    /// it (among its latest 16 distinct writers, however long ago), or a backlog waited for one
    /// of its batches ([`Self::backlogged`]).
    pub(crate) fn watched_when_woken(&self, actor: u64) -> bool {
        self.tails.get(&actor).is_some_and(|t| {
            t.backlogged || t.writers.iter().any(|x| x.worker != t.writers[0].worker)
        })
    }

    /// A batch of `actor`'s took more than a budget: its senders had queued a backlog, the sends
    /// the engine does not see. Before the runtime gulped backlogs such an actor used its budget
    /// with mail left and was watched while it waited in a queue; a gulp empties the mailbox
    /// instead, so the next senders would go unseen and the one whose send wakes it next would
    /// be taken as the sender of all they queue (docs/simulation.md, "Mailbox tails"). From
    /// now on the mailbox is watched each time it is woken.
    pub(crate) fn backlogged(&mut self, actor: u64) {
        self.tails.entry(actor).or_default().backlogged = true;
    }

    /// The actor stopped.
    pub(crate) fn forget(&mut self, actor: u64) {
        self.tails.remove(&actor);
    }

    /// What `count` sends by worker `w` into `actor`'s (watched) mailbox from virtual time `at`
    /// cost it for the claim word's line (nothing with `mailbox_batches = 0`: the term is off).
    /// `line(a, b)`: one line from `a`'s cache to `b`'s.
    ///
    /// - No other writer's burst still going on at `at`: the line is where the last writer left
    ///   it; one transfer if that was another worker, then it stays with `w`.
    /// - `c` other bursts going on: the sends interleave, so each takes the line from one of the
    ///   others, `T = tail_lines ×` the mean `line(j, w)` over them, and waits while they hold
    ///   it: the line is a server of service time `T` whose utilisation is the others' send
    ///   rate × `T`, and the wait is [`queue_wait`]`(ρ, T, c × T)`, at most one turn of each other
    ///   writer. Hammered, a send costs `(c + 1) T`: the writers together deliver one message
    ///   per transfer.
    pub(crate) fn sent(
        &mut self,
        model: &CostModel,
        actor: u64,
        w: usize,
        at: u64,
        count: f64,
        line: impl Fn(usize, usize) -> f64,
    ) -> f64 {
        if model.mailbox_batches <= 0.0 {
            return 0.0;
        }
        let tail = self.tails.entry(actor).or_default();
        tail.bursts.retain(|b| b.to > at);
        let mut others = 0usize;
        let (mut distance, mut rate) = (0.0, 0.0);
        for b in tail.bursts.iter().filter(|b| b.worker != w && b.from <= at) {
            others += 1;
            distance += line(b.worker, w);
            rate += b.rate;
        }
        if others == 0 {
            return match tail.last_writer {
                Some(last) if last != w => model.tail_lines * line(last, w),
                _ => 0.0,
            };
        }
        let service = model.tail_lines * distance / others as f64;
        let wait = queue_wait(rate * service, service, others as f64 * service);
        count * (service + wait)
    }

    /// Records the burst priced by [`Self::sent`]: `count` sends by actor `sender` on worker `w`
    /// between `from` and `to`.
    pub(crate) fn record(
        &mut self,
        actor: u64,
        w: usize,
        sender: u32,
        span: (u64, u64),
        count: f64,
    ) {
        let (from, to) = span;
        let tail = self.tails.entry(actor).or_default();
        tail.bursts.push(Burst {
            worker: w,
            from,
            to,
            rate: count / (to.saturating_sub(from)).max(1) as f64,
        });
        self.wrote(actor, w, sender, from);
    }

    /// The split of the senders' share of a batch of `messages` that `actor` handles on worker
    /// `receiver` from virtual time `start`, if several actors sent to it (`None`: one sender
    /// or none, priced by the caller's one-sender rule). The senders are the distinct actors
    /// seen sending to it since the start of its latest `mailbox_batches` batches: a window
    /// counted in the receiver's own batches, so that it looks back over as many wake-ups for a
    /// fast receiver as for a slow one. Each is taken to have sent an equal share (the engine
    /// knows who wrote, not how much), and pays `send` and the slot's lines (from the worker it
    /// last sent from) on the worker it runs on now, `now_on(sender, that worker)`, as the
    /// one-sender rule does (docs/decisions/0101-sim-senders-are-actors.md); the receiver reads
    /// the slots from all their caches. `slot(a, b)`: what one message's slot costs to move from
    /// worker `a`'s cache to worker `b`'s (its lines at their distance).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn batch(
        &mut self,
        model: &CostModel,
        actor: u64,
        receiver: usize,
        start: u64,
        messages: f64,
        slot: impl Fn(usize, usize) -> f64,
        now_on: impl Fn(u32, usize) -> usize,
    ) -> Option<Shares> {
        let tail = self.tails.get_mut(&actor)?;
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
        // (Kept in the list: a mailbox once written by several workers stays watched.) The
        // latest pair of each sender, newest first; counted before anything is allocated: most
        // batches have one sender.
        let recent = || {
            let writers = &tail.writers;
            (0..writers.len()).rev().filter_map(move |i| {
                let x = &writers[i];
                let newest = x.at >= since && !writers[i + 1..].iter().any(|y| y.who() == x.who());
                newest.then_some(x)
            })
        };
        let k = recent().count();
        if k < 2 {
            return None;
        }
        let share = messages / k as f64;
        let mut slot_ns = 0.0;
        let mut writers: Vec<(usize, f64)> = recent()
            .map(|x| {
                // The slots came from the cache of the worker it sent from; the time is the
                // sender's, wherever it runs now.
                let slot = slot(x.worker, receiver);
                slot_ns += slot / k as f64;
                (now_on(x.sender, x.worker), share * (model.send + slot))
            })
            .collect();
        writers.reverse();
        Some(Shares { writers, slot_ns })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sim::test_machine as machine;

    /// Workers 0 and 1 share an L3 (25 ns apart); 40 and 50 are on other nodes (160 ns).
    /// One actor per worker, as the tests of several writers have them (its waker id).
    fn sender(w: usize) -> u32 {
        100 + w as u32
    }

    /// Every sender still runs where it sent from.
    fn stays(_: u32, from: usize) -> usize {
        from
    }

    fn line(a: usize, b: usize) -> f64 {
        match (a, b) {
            _ if a == b => 0.0,
            (0, 1) | (1, 0) => 25.0,
            _ => 160.0,
        }
    }

    #[test]
    fn a_lone_writer_keeps_the_line_and_concurrent_writers_take_turns() {
        let (topo, _) = machine("preset:opteron6376");
        let model = CostModel::default_for(&topo);
        let mut t = Tails::default();
        // The first writer: nobody held the line before it.
        assert_eq!(t.sent(&model, 9, 1, 0, 100.0, line), 0.0);
        t.record(9, 1, sender(1), (0, 1_000), 100.0);
        // Later, alone: one transfer from worker 1, then the line stays.
        assert_eq!(t.sent(&model, 9, 0, 2_000, 100.0, line), 25.0);
        t.record(9, 0, sender(0), (2_000, 3_000), 100.0);
        assert_eq!(t.sent(&model, 9, 0, 4_000, 100.0, line), 0.0);
        // Worker 40 sends while worker 0's burst (100 messages in 1 µs) goes on: every send
        // takes the line from worker 0 (160 ns) and waits behind its sends, whose utilisation
        // of the line is 0.1 / ns × 160 ns ≥ 1: at most one turn of worker 0's.
        t.record(9, 0, sender(0), (5_000, 6_000), 100.0);
        let cost = t.sent(&model, 9, 40, 5_500, 10.0, line);
        assert_eq!(cost, 10.0 * (160.0 + 160.0));
        // Sparse concurrent sends (1 message in 100 µs): a transfer each, a short wait.
        let mut t = Tails::default();
        t.record(9, 0, sender(0), (0, 100_000), 1.0);
        let sparse = t.sent(&model, 9, 40, 50, 1.0, line);
        let rho = 1.0 / 100_000.0 * 160.0;
        assert!((sparse - (160.0 + rho * 160.0 / (2.0 * (1.0 - rho)))).abs() < 1e-9);
        // Three others hammering: a send waits a turn of each, one line per message overall.
        let mut t = Tails::default();
        for w in [1, 40, 50] {
            t.record(9, w, sender(w), (0, 1_000), 1_000.0);
        }
        let hammered = t.sent(&model, 9, 0, 500, 1.0, line);
        let mean = (25.0 + 160.0 + 160.0) / 3.0;
        assert!((hammered - 4.0 * mean).abs() < 1e-9, "{hammered}");
        // Bursts that ended no longer count.
        assert_eq!(
            t.sent(&model, 9, 0, 2_000, 1.0, line),
            model.tail_lines * 160.0
        );
    }

    #[test]
    fn a_batch_from_several_writers_splits_their_share() {
        let (topo, _) = machine("preset:opteron6376");
        let model = CostModel::default_for(&topo);
        let mut t = Tails::default();
        // One writer: the caller's one-sender rule.
        t.wrote(9, 1, sender(1), 100);
        assert!(t.batch(&model, 9, 0, 200, 10.0, line, stays).is_none());
        // Two writers: half the batch each, with the slot's line from the receiver's cache.
        t.wrote(9, 40, sender(40), 300);
        let s = t.batch(&model, 9, 0, 400, 10.0, line, stays).unwrap();
        let w: Vec<usize> = s.writers.iter().map(|x| x.0).collect();
        assert_eq!(w, [1, 40]);
        assert!((s.writers[0].1 - 5.0 * (model.send + model.message_lines * 25.0)).abs() < 1e-9);
        assert!((s.slot_ns - model.message_lines * (25.0 + 160.0) / 2.0).abs() < 1e-9);
        // Writers not seen since the receiver's 8th-latest batch no longer count: two batches so
        // far; with 6 more the 8th-latest is the one at 200, and writer 1 (at 100) drops.
        for at in [1_000, 2_000, 3_000, 4_000, 5_000] {
            assert!(t.batch(&model, 9, 0, at, 1.0, line, stays).is_some());
        }
        assert!(t.batch(&model, 9, 0, 6_000, 1.0, line, stays).is_none());
        // No batches to look back on: off.
        let off = CostModel {
            mailbox_batches: 0.0,
            ..model.clone()
        };
        t.wrote(9, 0, sender(0), 7_000);
        t.wrote(9, 40, sender(40), 7_010);
        assert!(t.batch(&off, 9, 0, 7_100, 5.0, line, stays).is_none());
        assert!(t.batch(&model, 9, 0, 7_200, 5.0, line, stays).is_some());
        t.forget(9);
        assert!(t.batch(&model, 9, 0, 7_300, 5.0, line, stays).is_none());
    }

    /// A sender is an actor, not a worker: one actor that ran on two workers is one sender (the
    /// one-sender rule prices it), and a share goes to the worker its sender runs on now
    /// (docs/decisions/0101-sim-senders-are-actors.md).
    #[test]
    fn a_sender_that_moved_is_one_sender_charged_where_it_runs() {
        let (topo, _) = machine("preset:opteron6376");
        let model = CostModel::default_for(&topo);
        let mut t = Tails::default();
        // Actor 7 sent from worker 1, then (stolen) from worker 40.
        t.wrote(9, 1, 7, 100);
        t.wrote(9, 40, 7, 300);
        assert!(t.batch(&model, 9, 0, 400, 10.0, line, stays).is_none());
        // A second actor, 8, on worker 50: two senders, half each. Actor 7 runs on worker 1
        // now: its share is charged there, its slots' lines came from worker 40's cache.
        t.wrote(9, 50, 8, 500);
        let on = |sender: u32, from: usize| if sender == 7 { 1 } else { from };
        let s = t.batch(&model, 9, 0, 600, 10.0, line, on).unwrap();
        let w: Vec<usize> = s.writers.iter().map(|x| x.0).collect();
        assert_eq!(w, [1, 50]);
        let half = 5.0 * (model.send + model.message_lines * 160.0);
        assert!((s.writers[0].1 - half).abs() < 1e-9);
        assert!((s.slot_ns - model.message_lines * 160.0).abs() < 1e-9);
        // Timers (no actor) count as their worker's: two workers, two senders.
        let mut t = Tails::default();
        t.wrote(9, 1, NO_WAKER, 100);
        t.wrote(9, 40, NO_WAKER, 200);
        let s = t.batch(&model, 9, 0, 300, 4.0, line, stays).unwrap();
        assert_eq!(s.writers.len(), 2);
        // Watched when woken: written from two workers, whoever sent.
        let mut t = Tails::default();
        t.wrote(9, 1, 7, 100);
        assert!(!t.watched_when_woken(9));
        t.wrote(9, 40, 7, 200);
        assert!(t.watched_when_woken(9));
    }
}
