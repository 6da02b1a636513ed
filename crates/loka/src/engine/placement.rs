//! The per-actor state of the engines that queue actors (actor-centric, sim): where an actor lives and last ran, its hints, and
//! the counters of the automatic rules. Kept in the words the runtime reserves in every task header
//! ([`SchedWords`](crate::runtime::task::SchedWords)), so the runtime itself carries no policy's
//! metadata.
//!
//! Written with relaxed atomics: the home is set at spawn (before the actor is queued) and at its
//! first activation (by the holder of the schedule); the flags and wake counters are heuristics
//! read and written by senders, where a lost update only delays a decision.
//!
//! | field | used by |
//! |---|---|
//! | `home`, `last`, `RAN` | every policy: first-activation home (LGS Listing 5.2), locality telemetry, `hierarchical` routing |
//! | `UNPINNED` | `lgs` (spawn option, `lgs:auto` release) |
//! | `HUB` | `hierarchical` (spawn option, `set_hub`, `hierarchical:auto` detection) |
//! | `DETECTED` | a hub marked by the detection, which `auto` may turn off (docs/decisions/0109-auto-asks-whether-hubs-pay.md) |
//! | `wakes`, `last_waker` | `lgs:auto` and `hierarchical:auto` ([`crate::policy::lgs::should_release_hub`]) |
//! | `prev_waker` | `hierarchical:auto` (a change back to it weighs against a hub) |
//! | `enqueued_at` | the sampled queue-wait telemetry |

use crate::runtime::options::SpawnOptions;
use crate::runtime::task::SCHED_WORDS;
use crate::runtime::{SchedState, TaskRef};
use crate::sync::{AtomicU32, AtomicU64, AtomicU8};
use std::sync::atomic::Ordering::Relaxed;

/// Where an actor lives, as the scheduling policies see it.
pub(crate) struct ActorPlacement {
    home: AtomicU32,
    /// The worker of the latest activation.
    last: AtomicU32,
    /// Sampled enqueue time (ns since the engine started, 0 = none), for the queue-wait telemetry.
    pub(crate) enqueued_at: AtomicU64,
    /// Remote wake-ups, each by another partner than the latest (high 16 bits), and the wake-ups
    /// that weigh against them (low 16 bits), each saturating ([`Self::note_remote_wake`],
    /// [`Self::note_foreign_sender`]).
    wakes: AtomicU32,
    /// The actor behind the latest remote wake-up ([`waker_id`]; [`NO_WAKER`] before the first).
    last_waker: AtomicU32,
    /// The partner before `last_waker` (kept by the hub detection only).
    prev_waker: AtomicU32,
    flags: AtomicU8,
}

const _: () = assert!(
    std::mem::size_of::<ActorPlacement>() <= 8 * SCHED_WORDS
        && std::mem::align_of::<ActorPlacement>() <= 8
);

// SAFETY: the assertion above checks size and alignment; the fields are atomics (Sync, no drop
// glue).
unsafe impl SchedState for ActorPlacement {}

const NO_HOME: u32 = u32::MAX;
/// The waker of a wake-up that no actor sent: a plain thread's send, a timer firing.
pub(crate) const NO_WAKER: u32 = u32::MAX;

/// The actor whose activation sent the message that woke another, as that wake-up's routing sees
/// it (`choices::woken_route`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Waker {
    /// Its identity ([`waker_id`]; [`NO_WAKER`] for no actor): the partner the hub rules count.
    pub(crate) id: u32,
    /// Whether it is a hub: under `hierarchical` the actors it wakes do not take its worker's
    /// next slot (`choices::hierarchical_route`).
    pub(crate) hub: bool,
}

/// The identity of an actor as a waker: the low 32 bits of its id. Two actors whose ids agree
/// there (one in 2^32 pairs, or an id reused after 2^32 spawns) read as one partner, which only
/// delays a release: the rule is a heuristic.
#[inline]
pub(crate) fn waker_id(task: &TaskRef) -> u32 {
    let id = task.header().id.as_u64() as u32;
    if id == NO_WAKER {
        NO_WAKER - 1
    } else {
        id
    }
}
/// One remote wake-up in `wakes` (its high half).
const REMOTE_WAKE: u32 = 1 << 16;
/// One local wake-up in `wakes` (its low half).
const LOCAL_WAKE: u32 = 1;
const RAN: u8 = 1;
const UNPINNED: u8 = 2;
const HUB: u8 = 4;
const SMALL: u8 = 8;
/// With `HUB`: the online detection marked it, not the user; it stops being a hub when the
/// detection is turned off ([`ActorPlacement::forget_detected_hub`]).
const DETECTED: u8 = 16;

/// The most bytes of state (`size_of` the actor plus its declared footprint,
/// [`SpawnOptions::footprint`]) an actor may have and still be *small*: no more than the two
/// lines a wake-up handed to another worker moves anyway (the message's and the queue slot's),
/// so running it where it was woken fetches no more than running it at home
/// (docs/decisions/0084-small-actors-stay-with-an-idle-waker.md).
const SMALL_STATE_BYTES: usize = 128;

/// Whether an actor whose type is `state_bytes` long (`size_of`) and that declared `footprint`
/// bytes of data ([`SpawnOptions::footprint`]) is small: at most [`SMALL_STATE_BYTES`].
#[inline]
pub(crate) fn is_small_state(state_bytes: usize, footprint: usize) -> bool {
    state_bytes.saturating_add(footprint) <= SMALL_STATE_BYTES
}

/// The placement state of a task of this engine.
#[inline]
pub(crate) fn of(task: &TaskRef) -> &ActorPlacement {
    // SAFETY: every task this engine sees was spawned into its system, whose runtime called this
    // engine's `init_task`, which initialises the words as an `ActorPlacement`.
    unsafe { task.sched::<ActorPlacement>() }
}

impl ActorPlacement {
    /// The placement state of a new actor spawned with `options`; `small`: whether it counts as
    /// small ([`is_small_state`]; only LGS and `hierarchical` ask, so the other policies' spawns
    /// skip the test).
    pub(crate) fn new(options: &SpawnOptions, small: bool) -> Self {
        let mut flags = 0;
        if small {
            flags |= SMALL;
        }
        if options.unpinned {
            flags |= UNPINNED;
        }
        if options.hub {
            flags |= HUB;
        }
        ActorPlacement {
            home: AtomicU32::new(NO_HOME),
            last: AtomicU32::new(NO_HOME),
            flags: AtomicU8::new(flags),
            enqueued_at: AtomicU64::new(0),
            wakes: AtomicU32::new(0),
            last_waker: AtomicU32::new(NO_WAKER),
            prev_waker: AtomicU32::new(NO_WAKER),
        }
    }

    /// The home worker (HPU), if any.
    #[inline]
    pub(crate) fn home(&self) -> Option<usize> {
        let h = self.home.load(Relaxed);
        (h != NO_HOME).then_some(h as usize)
    }

    pub(crate) fn set_home(&self, home: Option<usize>) {
        self.home.store(home.map_or(NO_HOME, |h| h as u32), Relaxed);
    }

    /// The home, unless the actor is unpinned (spawn option or hub release).
    #[inline]
    pub(crate) fn pinned_home(&self) -> Option<usize> {
        if self.flags.load(Relaxed) & UNPINNED != 0 {
            None
        } else {
            self.home()
        }
    }

    /// The worker of the latest activation, if any.
    #[inline]
    pub(crate) fn last(&self) -> Option<usize> {
        let l = self.last.load(Relaxed);
        (l != NO_HOME).then_some(l as usize)
    }

    /// Whether `worker` is both the actor's home and the worker of its latest activation (so it
    /// has run before, and running it there again moves nothing).
    #[inline]
    pub(crate) fn stays_home(&self, worker: usize) -> bool {
        // Relaxed: `last` and `home` are written before the actor is queued (spawn) or by the
        // holder of its schedule, which the caller is; the queue hand-over that gave it the
        // schedule orders those writes before these loads.
        let w = worker as u32;
        self.last.load(Relaxed) == w && self.home.load(Relaxed) == w
    }

    /// Records the worker of this activation; returns the previous one.
    #[inline]
    pub(crate) fn swap_last(&self, worker: usize) -> Option<usize> {
        let prev = self.last.load(Relaxed);
        if prev != worker as u32 {
            self.last.store(worker as u32, Relaxed);
        }
        (prev != NO_HOME).then_some(prev as usize)
    }

    /// Whether the actor's state is at most [`SMALL_STATE_BYTES`] (fixed at spawn: a later
    /// `Context::set_footprint` does not change it).
    #[inline]
    pub(crate) fn is_small(&self) -> bool {
        self.flags.load(Relaxed) & SMALL != 0
    }

    /// Whether the actor is a hub (spawn option, `set_hub`, or online detection).
    #[inline]
    pub(crate) fn is_hub(&self) -> bool {
        self.flags.load(Relaxed) & HUB != 0
    }

    /// Sets or clears the hub flag (the user's word: a hub set here is no detected one);
    /// returns whether it changed.
    pub(crate) fn set_hub(&self, hub: bool) -> bool {
        let prev = if hub {
            self.flags.fetch_and(!DETECTED, Relaxed);
            self.flags.fetch_or(HUB, Relaxed)
        } else {
            self.flags.fetch_and(!(HUB | DETECTED), Relaxed)
        };
        (prev & HUB != 0) != hub
    }

    /// Where an adaptive `auto` turned the hub detection off: a hub the detection marked is an
    /// ordinary actor again. One load for every other actor; returns whether it was such a hub. Called where the engines route
    /// the actor (its wake-ups and requeues), so the mark goes at its next one
    /// (docs/decisions/0109-auto-asks-whether-hubs-pay.md).
    #[inline]
    pub(crate) fn forget_detected_hub(&self) -> bool {
        self.flags.load(Relaxed) & DETECTED != 0
            && self.flags.fetch_and(!(HUB | DETECTED), Relaxed) & DETECTED != 0
    }

    /// True exactly once: at the actor's first activation.
    #[inline]
    pub(crate) fn first_run(&self) -> bool {
        self.flags.load(Relaxed) & RAN == 0 && self.flags.fetch_or(RAN, Relaxed) & RAN == 0
    }

    /// An activation of this actor on worker `me` (both engines that queue actors): the
    /// first-activation home rule (Listing 5.2; under `cls` the first worker to run an actor is
    /// its home), unless `spawn_home_kept` (`places`: the home was chosen in the actor's place at
    /// spawn; `hierarchical`: on its parent's node, docs/decisions/0104-hierarchical-homes-at-spawn.md),
    /// a migration if it last ran elsewhere, and where it runs relative to its home, counted on
    /// `me`'s `counters`.
    #[inline]
    pub(crate) fn account_run(
        &self,
        me: usize,
        spawn_home_kept: bool,
        layout: &loka_topology::WorkerLayout,
        counters: &crate::telemetry::WorkerCounters,
    ) {
        if self.first_run() && !spawn_home_kept {
            let home = crate::policy::lgs::first_activation_home(self.home(), me, |a, b| {
                layout.same_group0(a, b)
            });
            self.set_home(home);
        }
        if self.swap_last(me).is_some_and(|last| last != me) {
            counters.migrations.bump(1);
        }
        match self.home() {
            Some(home) if home == me => counters.exec_home_pu.bump(1),
            Some(home) if layout.node_of(home) == layout.node_of(me) => {
                counters.exec_home_node.bump(1)
            }
            Some(_) => counters.exec_remote_node.bump(1),
            None => {}
        }
    }

    /// Counts a wake-up by actor `waker` routed to a distant home; returns true when the hub rule
    /// says to unpin (and unpins). Racy increments on purpose: a heuristic, not worth a locked
    /// instruction.
    pub(crate) fn note_remote_wake(&self, waker: u32) -> bool {
        self.count_remote_wake_and_set(waker, UNPINNED, false)
    }

    /// Counts a wake-up by actor `waker` from another worker than the actor's; returns true when
    /// the online hub detection marks it a hub (and marks it). The LGS release rule
    /// ([`Self::note_remote_wake`]: a change of partner counts), and a change back to the
    /// partner before the latest one also weighs against, as a local wake-up does. A hub talks
    /// with many partners in turn (a server, chameneos' mall, Matrix Search's controller: seven
    /// seekers); with k partners drawn evenly a change goes back to the one before in one case
    /// of k − 1. A chameneos creature alternates between the mall and the creature it met:
    /// every other wake-up is a change back, so it weighs half its changes against itself and
    /// never reaches [`crate::policy::lgs::HUB_REMOTE_RATIO`]. Counting only the changes marked
    /// 35–69 of chameneos' 101 actors as hubs with 16 workers, pinned them, and ran it at 0.06×
    /// of `cls` (docs/decisions/0080-a-hub-has-many-partners.md).
    pub(crate) fn note_foreign_sender(&self, waker: u32) -> bool {
        self.count_remote_wake_and_set(waker, HUB | DETECTED, true)
    }

    /// [`Self::note_foreign_sender`] that marks nothing: whether the detection would mark the
    /// actor a hub now (every wake-up after which it would, while it stays unmarked).
    pub(crate) fn note_foreign_sender_unmarked(&self, waker: u32) -> bool {
        self.count_remote_wake_and_set(waker, 0, true)
    }

    /// One more remote wake-up, counted only if another actor than the latest remote waker sent
    /// it: a hub is an actor that many partners wake (Francesquini's definition), not one that a
    /// single distant partner wakes again and again. Matrix Search's seekers are the second kind:
    /// the controller wakes each of them from its own PU, remote for almost all; counted, they
    /// were released and then ran wherever their job came from, away from the matrix they hold
    /// (docs/decisions/0037-hub-rules-count-partners.md). With `back_weighs` (the hub detection
    /// only: LGS never reads `prev_waker`), a change back to the partner before the latest also
    /// counts as a wake-up against. When [`crate::policy::lgs::should_release_hub`] holds, sets
    /// `flag` and returns whether this call set it (a `flag` of 0: returns whether it holds).
    fn count_remote_wake_and_set(&self, waker: u32, flag: u8, back_weighs: bool) -> bool {
        let last = self.last_waker.load(Relaxed);
        if last == waker {
            return false;
        }
        self.last_waker.store(waker, Relaxed);
        if back_weighs {
            let prev = self.prev_waker.load(Relaxed);
            self.prev_waker.store(last, Relaxed);
            if prev == waker {
                self.bump_wakes(LOCAL_WAKE);
            }
        }
        let wakes = self.bump_wakes(REMOTE_WAKE);
        crate::policy::lgs::should_release_hub(wakes >> 16, wakes & 0xffff)
            && (flag == 0 || self.flags.fetch_or(flag, Relaxed) & flag == 0)
    }

    /// Adds one to the remote (`REMOTE_WAKE`) or local (`LOCAL_WAKE`) half of `wakes`, saturating;
    /// returns the new value. A load and a store: a lost update only delays a decision.
    fn bump_wakes(&self, half: u32) -> u32 {
        let wakes = self.wakes.load(Relaxed);
        let mask = half * 0xffff;
        let next = if wakes & mask == mask {
            wakes
        } else {
            wakes + half
        };
        self.wakes.store(next, Relaxed);
        next
    }

    /// Where the actor last ran, else its home (introspection); the mailbox tells its state.
    pub(crate) fn locate(&self) -> crate::runtime::location::Location {
        crate::runtime::location::Location {
            worker: self.last().or_else(|| self.home()),
            ..Default::default()
        }
    }

    /// Counts a wake-up run next to the home.
    pub(crate) fn note_local_wake(&self) {
        self.bump_wakes(LOCAL_WAKE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::lgs::HUB_MIN_WAKES;

    #[test]
    fn one_distant_partner_waking_again_and_again_is_no_hub() {
        let p = ActorPlacement::new(&SpawnOptions::default(), false);
        for _ in 0..10 * HUB_MIN_WAKES {
            assert!(!p.note_remote_wake(7), "one partner released it");
        }
        assert_eq!(p.flags.load(Relaxed) & UNPINNED, 0);
    }

    #[test]
    fn one_partner_and_changing_others_in_turn_make_no_hub() {
        // A chameneos creature: the mall (0), then the creature it met (1, 2, 3, …), in turn.
        let p = ActorPlacement::new(&SpawnOptions::default(), false);
        for i in 0..40 * HUB_MIN_WAKES {
            let waker = if i % 2 == 0 { 0 } else { 1 + i };
            assert!(!p.note_foreign_sender(waker), "marked a hub at wake-up {i}");
        }
        // The mall: a different creature every time.
        let mall = ActorPlacement::new(&SpawnOptions::default(), false);
        let marked = (0..HUB_MIN_WAKES)
            .filter(|&i| mall.note_foreign_sender(100 + i))
            .count();
        assert_eq!(marked, 1);
        assert!(mall.is_hub());
    }

    #[test]
    fn saturated_counts_stay_in_their_half() {
        let p = ActorPlacement::new(&SpawnOptions::default(), false);
        for _ in 0..70_000 {
            p.note_local_wake();
        }
        assert_eq!(
            p.wakes.load(Relaxed),
            0xffff,
            "the local half saturates alone"
        );
        // Distinct wakers: every one counts as remote.
        for i in 0..70_000 {
            p.note_remote_wake(i);
        }
        assert_eq!(p.wakes.load(Relaxed), 0xffff_ffff);
    }

    #[test]
    fn changing_partners_make_a_hub() {
        let p = ActorPlacement::new(&SpawnOptions::default(), false);
        // Two partners in turn: each wake-up is from another actor than the one before.
        let released = (0..HUB_MIN_WAKES)
            .filter(|&i| p.note_remote_wake(i % 2))
            .count();
        assert_eq!(released, 1, "released once, at the threshold");
        assert_ne!(p.flags.load(Relaxed) & UNPINNED, 0);
        let q = ActorPlacement::new(&SpawnOptions::default(), false);
        for i in 0..HUB_MIN_WAKES {
            assert!(!q.note_foreign_sender(i), "a hub before the threshold");
            q.note_local_wake();
        }
        // Local wake-ups weigh against: 16 local need more than 64 changing remote ones.
        let marked = (0..4 * HUB_MIN_WAKES + 1)
            .filter(|&i| q.note_foreign_sender(100 + i))
            .count();
        assert_eq!(marked, 1);
        assert!(q.is_hub());
    }

    /// A hub the detection marked stops being one when the detection is off (decision 0109's
    /// `forget_detected_hub`); a declared one never does, and counting candidates marks nothing.
    #[test]
    fn only_detected_hubs_are_forgotten_and_candidates_mark_nothing() {
        let detected = ActorPlacement::new(&SpawnOptions::default(), false);
        let marked = (0..4 * HUB_MIN_WAKES)
            .filter(|&i| detected.note_foreign_sender(i))
            .count();
        assert_eq!(marked, 1);
        assert!(detected.forget_detected_hub());
        assert!(!detected.is_hub());
        assert!(!detected.forget_detected_hub(), "forgotten once");
        let declared = ActorPlacement::new(&SpawnOptions::default(), false);
        declared.set_hub(true);
        assert!(!declared.forget_detected_hub());
        assert!(declared.is_hub());
        // Marked by the detection, then declared by the user: the user's word stands.
        let both = ActorPlacement::new(&SpawnOptions::default(), false);
        (0..4 * HUB_MIN_WAKES).for_each(|i| {
            both.note_foreign_sender(i);
        });
        both.set_hub(true);
        assert!(!both.forget_detected_hub());
        assert!(both.is_hub());
        let counted = ActorPlacement::new(&SpawnOptions::default(), false);
        let candidates = (0..4 * HUB_MIN_WAKES)
            .filter(|&i| counted.note_foreign_sender_unmarked(i))
            .count();
        assert!(candidates >= 1);
        assert!(!counted.is_hub());
    }
}
