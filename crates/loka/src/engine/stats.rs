//! What each engine reports of its own beyond the counters every engine keeps: the statistics
//! of the message-centric engine and of the simulation, part of [`crate::Stats`].

use serde::Serialize;

/// What the message-centric engine has done (docs/message-centric.md), Cforall's statistics.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MessageCentricStats {
    /// Sharded queues.
    pub queues: u64,
    /// Letters posted to the queues (messages and control envelopes: start, stop, …).
    pub letters_posted: u64,
    /// Queues taken whole by a worker.
    pub gulps: u64,
    /// Letters per gulp, on average.
    pub avg_gulp_size: f64,
    /// Gulps skipped because another worker was processing the queue.
    pub missed_gulps: u64,
    /// Steal attempts.
    pub steal_attempts: u64,
    /// Failed attempts: the victim had no candidate queue.
    pub steal_no_candidate: u64,
    /// Attempts that found a candidate and watched it (taken later if its letters still wait).
    pub steal_deferred: u64,
    /// Failed attempts: the wait-free swap lost to another thief.
    pub steal_failed_swap: u64,
    /// Queues stolen.
    pub queues_stolen: u64,
    /// Letters in the stolen queues when they were stolen.
    pub letters_stolen: u64,
    /// Letters per stolen queue, on average.
    pub avg_steal_size: f64,
    /// Idle actors re-bound to a queue of another worker, following a handler there that posted
    /// to them (`message_centric.follow`; beyond Cforall, whose actors keep their queue).
    pub actors_followed: u64,
    /// Letters queued for those actors when they moved, taken along into the gulp of the
    /// handler they followed.
    pub letters_followed: u64,
}

/// What the simulation engine has done (docs/simulation.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SimStats {
    /// Virtual nanoseconds since the system started: the latest clock of any virtual worker.
    pub virtual_ns: u64,
    /// Activations and steal attempts simulated.
    pub events: u64,
    /// A hash of every activation (worker, actor, virtual end time, messages): equal for equal
    /// runs (same program, topology, policy, seed and cost model).
    pub trace_hash: u64,
    /// Virtual nanoseconds activations spent fetching their actors' footprints (the memory
    /// model's share of the virtual time, summed over workers).
    pub footprint_ns: u64,
    /// Activations that found their actor's footprint in a cache of their worker's (its own or
    /// a shared one).
    pub footprint_in_cache: u64,
    /// … in a cache of a worker they share none with.
    pub footprint_in_peer: u64,
    /// … in memory on their own node.
    pub footprint_in_local_memory: u64,
    /// … in memory on another node.
    pub footprint_in_remote_memory: u64,
    /// Virtual nanoseconds that other workers' demand on memory controllers and links added to
    /// footprint fetches (part of `footprint_ns`; docs/simulation.md, *Contention*).
    pub memory_queue_ns: u64,
    /// Virtual nanoseconds senders spent taking a mailbox's tail line from the previous writer
    /// and waiting for it, when several workers wrote to one mailbox in turn.
    pub mailbox_tail_ns: u64,
    /// Virtual nanoseconds workers spent waking sleeping workers (the waker's system call,
    /// `wake_call` each; docs/simulation.md), summed over workers.
    pub waking_ns: u64,
    /// Virtual nanoseconds workers spent running activations (and sending what a later
    /// activation on another worker handled), summed over workers. `busy_ns / virtual_ns` is the
    /// average number of workers at work: the parallelism a schedule got out of the program.
    pub busy_ns: u64,
}
