//! `exec = "auto"`: the characteristics of an actor that declared none, measured on the workers,
//! and its policy mapped by the eight heuristics ([`crate::exec_policy::map`]).
//!
//! Each worker keeps, per watched actor, what its activations there did: messages handled, wall
//! time, and the wake-ups they caused (sends that found their receiver idle and made it
//! runnable: routed by this worker, or run inline). After [`SAMPLE`] messages on one worker the
//! actor's vector is read off and mapped, once:
//!
//! * **CPU** high when a message costs at least [`HEAVY`] (the cost of waking a parked worker on
//!   this kind of machine: below it, moving the actor's work elsewhere costs more than the work);
//! * **COMM** from wake-ups per message: under 0.05 low (a leaf), up to 1.05 med (a router), above
//!   high (a broadcaster). Wake-ups, not sends: counting every send would put a counter on the
//!   send path of every actor; a send to a busy receiver costs no hand-off anyway;
//! * **PAR** high: a loka handler never waits for a reply (`Context::ask` continues in a later
//!   message), which is the paper's "sends asynchronously";
//! * **BLK** is `blocking.rs`'s business (promotion to `thread`).
//!
//! Messages the actor's sends ran inline are the receivers' and are not counted as its own; the
//! time of those inline runs is (timing them would cost every inline run two clock reads), which
//! can only make a sender look heavier than it is.
//!
//! Measuring costs the two clock reads `blocking.rs` already makes, plus a hash-map update per
//! activation of a watched actor, only under `auto`; a decided actor is no longer watched.

use crate::exec_policy::{map, Characteristics, Comm, Cpu, ExecPolicy, Par};
use crate::runtime::ActorId;
use std::time::Duration;

/// Messages observed on one worker before an actor's policy is decided.
pub(crate) const SAMPLE: u64 = 256;
/// Per-message cost from which an actor counts as computationally heavy.
pub(crate) const HEAVY: Duration = Duration::from_micros(20);
/// Watched actors one worker keeps figures for (beyond, it forgets them all and starts over:
/// a bound on memory when many short-lived actors pass through).
const MAX_WATCHED: usize = 65_536;

#[derive(Default, Clone, Copy)]
struct Sample {
    messages: u64,
    wakes: u64,
    nanos: u64,
}

/// One worker's figures for the actors it watches.
#[derive(Default)]
pub(crate) struct Watch {
    actors: rustc_hash::FxHashMap<ActorId, Sample>,
}

impl Watch {
    /// Adds one activation of `actor` (`messages` handled, `wakes` caused, `wall` time); returns
    /// the actor's measured characteristics once enough messages were seen (then forgets it).
    pub(crate) fn observe(
        &mut self,
        actor: ActorId,
        messages: u64,
        wakes: u64,
        wall: Duration,
    ) -> Option<Characteristics> {
        if self.actors.len() >= MAX_WATCHED && !self.actors.contains_key(&actor) {
            self.actors.clear();
        }
        let s = self.actors.entry(actor).or_default();
        s.messages += messages;
        s.wakes += wakes;
        s.nanos += wall.as_nanos() as u64;
        if s.messages < SAMPLE {
            return None;
        }
        let s = self.actors.remove(&actor).expect("just updated");
        Some(characteristics(s.messages, s.wakes, s.nanos))
    }
}

/// The vector of an actor that handled `messages` messages in `nanos`, causing `wakes` wake-ups
/// (module documentation).
pub(crate) fn characteristics(messages: u64, wakes: u64, nanos: u64) -> Characteristics {
    let per_message = |x: u64| x as f64 / messages.max(1) as f64;
    let comm = match per_message(wakes) {
        w if w < 0.05 => Comm::Low,
        w if w <= 1.05 => Comm::Med,
        _ => Comm::High,
    };
    let cpu = if per_message(nanos) >= HEAVY.as_nanos() as f64 {
        Cpu::High
    } else {
        Cpu::Low
    };
    Characteristics::new(Par::High, comm, cpu)
}

/// The policy measured characteristics give.
pub(crate) fn policy(c: &Characteristics) -> ExecPolicy {
    map(c).0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vector_is_read_off_the_figures() {
        // A leaf with short handlers: LowCPU → monitor.
        let leaf = characteristics(1000, 0, 1000 * 200);
        assert_eq!((leaf.comm, leaf.cpu), (Comm::Low, Cpu::Low));
        assert_eq!(policy(&leaf), ExecPolicy::Monitor);
        // A router: one wake-up per message, read as low (the open corner): monitor.
        let router = characteristics(1000, 1000, 1000 * 200);
        assert_eq!(router.comm, Comm::Med);
        assert_eq!(policy(&router), ExecPolicy::Monitor);
        // A heavy broadcaster: Heavy → thread.
        let heavy = characteristics(1000, 4000, 1000 * 50_000);
        assert_eq!((heavy.comm, heavy.cpu), (Comm::High, Cpu::High));
        assert_eq!(policy(&heavy), ExecPolicy::Thread);
        // A chatty light hub: Hub → task.
        assert_eq!(
            policy(&characteristics(1000, 3000, 1000 * 100)),
            ExecPolicy::Task
        );
        // Heavy and quiet: HighCPU → task.
        assert_eq!(
            policy(&characteristics(10, 0, 10 * 100_000)),
            ExecPolicy::Task
        );
    }

    #[test]
    fn a_decision_waits_for_the_sample_and_is_made_once() {
        let mut w = Watch::default();
        let id = ActorId::from_worker(0, 1);
        for _ in 0..(SAMPLE / 16 - 1) {
            assert!(w.observe(id, 16, 0, Duration::from_micros(3)).is_none());
        }
        let c = w
            .observe(id, 16, 0, Duration::from_micros(3))
            .expect("256 messages seen");
        assert_eq!(policy(&c), ExecPolicy::Monitor);
        assert!(w.actors.is_empty(), "forgotten once decided");
    }
}
