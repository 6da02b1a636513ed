//! `lgs`: locality-guided scheduling (Wölke ch. 4–5, docs/references.md).
//!
//! * **Weighted stealing**: each idle cycle starts at the innermost victim group g0; a thief makes
//!   `|g_i|` random attempts in `g_i`, then moves to `g_{i+1}`, and stays at the outermost group.
//! * **Soft pinning**: every actor has a home PU (HPU): the worker it was placed on at spawn. At its
//!   first activation, if a neighbour (same g0) or anyone when there is no HPU runs it, that worker
//!   becomes the HPU (Listing 5.2). An actor woken by a message goes to the head of the sender's
//!   worker if the sender is its HPU or a neighbour of it, else to the tail of its HPU's queue; from
//!   a plain thread, to the tail of its HPU's queue (Listing 5.3). Anyone may still steal it.
//! * **A home that cannot take the actor at once yields** (beyond the text): a wake-up from a
//!   worker goes home only if the home's queue is no longer than the waking worker's and, on the
//!   waking worker's own node (on any node for a *small* actor, whose state and declared footprint
//!   fit in two lines), the home is not idle (asleep or searching) while the waking worker has
//!   nothing else to run; otherwise the waking worker runs it, and the actor keeps its home for
//!   the next wake-up (`engine/choices/mod.rs`, `woken_route`;
//!   docs/decisions/0078-a-home-that-is-behind-yields.md,
//!   docs/decisions/0082-an-idle-hand-off-buys-nothing.md,
//!   docs/decisions/0084-small-actors-stay-with-an-idle-waker.md).
//! * **A small actor runs where it is woken** (beyond the text): an actor whose state and declared
//!   footprint fit in two lines has no data for its home to keep; a wake-up from a worker runs it
//!   there, and its home serves the wake-ups from plain threads
//!   (docs/decisions/0098-lgs-small-actors-run-where-woken.md).
//!
//! Variants (switches): `tp` (pinned workers, free actors: no HPU routing, weighted stealing only),
//! `dfs` (the remote wake-up goes to the *head* of the HPU's queue), `co` (g0 = L2 sharers: chosen
//! when the layout is built), `alt` (no neighbour rule: only the HPU itself counts as local),
//! `nosleep` (idle workers keep polling much longer before parking), and beyond the text `auto`
//! (automatic release of convoyed hubs, [`should_release_hub`]). The per-actor `unpinned` spawn
//! option is LGS-UC/UW.

use super::Route;
use std::fmt;

/// The LGS variant switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct LgsVariants {
    /// Pin worker threads only; actors have no home (CLS-TP with weighted stealing).
    pub tp: bool,
    /// Remote wake-ups push at the head of the HPU's queue.
    pub dfs: bool,
    /// g0 = the workers sharing an L2 cache instead of a NUMA node.
    pub co: bool,
    /// No neighbour rule: only the HPU itself may run a woken actor locally.
    pub alt: bool,
    /// Idle workers poll far longer before parking (Wölke's "no sleeping").
    pub nosleep: bool,
    /// Automatically unpin actors detected as convoyed hubs.
    pub auto: bool,
}

impl LgsVariants {
    /// Plain LGS.
    pub const NONE: LgsVariants = LgsVariants {
        tp: false,
        dfs: false,
        co: false,
        alt: false,
        nosleep: false,
        auto: false,
    };
    /// `lgs:tp`.
    pub const TP: LgsVariants = LgsVariants {
        tp: true,
        ..Self::NONE
    };
    /// `lgs:dfs`.
    pub const DFS: LgsVariants = LgsVariants {
        dfs: true,
        ..Self::NONE
    };
    /// `lgs:alt`.
    pub const ALT: LgsVariants = LgsVariants {
        alt: true,
        ..Self::NONE
    };
    /// `lgs:auto`.
    pub const AUTO: LgsVariants = LgsVariants {
        auto: true,
        ..Self::NONE
    };

    /// Every variant name, in the order they are printed.
    pub const NAMES: &'static [&'static str] = &["tp", "dfs", "co", "alt", "nosleep", "auto"];

    fn flags(&self) -> [bool; 6] {
        [
            self.tp,
            self.dfs,
            self.co,
            self.alt,
            self.nosleep,
            self.auto,
        ]
    }

    /// Parses a comma-separated variant list (`"dfs,co"`); the error names the bad variant.
    pub fn parse(list: &str) -> Result<LgsVariants, String> {
        let mut v = LgsVariants::default();
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let flag = match name {
                "tp" => &mut v.tp,
                "dfs" => &mut v.dfs,
                "co" => &mut v.co,
                "alt" => &mut v.alt,
                "nosleep" => &mut v.nosleep,
                "auto" => &mut v.auto,
                _ => return Err(name.to_owned()),
            };
            *flag = true;
        }
        Ok(v)
    }
}

impl fmt::Display for LgsVariants {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let on: Vec<_> = Self::NAMES
            .iter()
            .zip(self.flags())
            .filter(|(_, on)| *on)
            .map(|(n, _)| *n)
            .collect();
        f.write_str(&on.join(","))
    }
}

/// Listing 5.2: the HPU after an actor's first activation on worker `runner`.
///
/// `hpu` is the home chosen at spawn (`None` = CAF's "dummy execution unit", e.g. spawned from a
/// plain thread with no placement). A run elsewhere means the actor was stolen before it ever ran:
/// a neighbour (or anyone, when there is no HPU) adopts it; a distant thief does not.
pub fn first_activation_home(
    hpu: Option<usize>,
    runner: usize,
    neighbours: impl Fn(usize, usize) -> bool,
) -> Option<usize> {
    match hpu {
        None => Some(runner),
        Some(h) if h != runner && neighbours(h, runner) => Some(runner),
        keep => keep,
    }
}

/// Listing 5.3: where an actor woken by a message goes.
///
/// `sender` is the sending actor's worker (`None` from a plain thread), `hpu` the actor's home
/// (`None` = unpinned: routed like `cls`), `local` the route for a local wake-up (the sender's
/// next slot or head).
pub fn route_woken(
    variants: LgsVariants,
    sender: Option<usize>,
    hpu: Option<usize>,
    neighbours: impl Fn(usize, usize) -> bool,
    local: Route,
) -> Route {
    let remote = |h: usize| {
        if variants.dfs {
            Route::Head(h)
        } else {
            Route::Tail(h)
        }
    };
    match (sender, hpu) {
        (Some(_), None) => local,
        (None, Some(h)) => remote(h),
        (None, None) => {
            unreachable!("the engine routes unpinned plain-thread wake-ups round robin")
        }
        (Some(s), Some(h)) => {
            if s == h || (!variants.alt && neighbours(s, h)) {
                local
            } else {
                remote(h)
            }
        }
    }
}

/// The automatic hub release rule (beyond Wölke: LGS's best result needed the controller unpinned
/// by hand). An actor is a *convoyed hub* when its wake-ups come overwhelmingly from senders outside
/// its home's neighbourhood: each such wake-up queues it at the tail of a distant HPU, behind
/// whatever long jobs sit there, while its partners wait. Such an actor is released (unpinned) and
/// from then on runs where its partners are, like under `cls`.
///
/// Rule: at least [`HUB_MIN_WAKES`] remote wake-ups and more than [`HUB_REMOTE_RATIO`] times as many
/// remote as local ones. The engines count a remote wake-up only when another actor sent it than
/// the latest remote one (`engine/placement.rs`): an actor that one distant partner wakes again and
/// again (Matrix Search's seekers, fed by the controller) is no hub, and unpinned it would only
/// follow that partner away from its data (docs/decisions/0037-hub-rules-count-partners.md).
pub fn should_release_hub(remote_wakes: u32, local_wakes: u32) -> bool {
    remote_wakes >= HUB_MIN_WAKES && remote_wakes > HUB_REMOTE_RATIO * local_wakes
}

/// Remote wake-ups needed before an actor may be called a hub.
pub const HUB_MIN_WAKES: u32 = 16;
/// How many times more remote than local wake-ups make a hub.
pub const HUB_REMOTE_RATIO: u32 = 4;

/// Weighted victim choice over nested groups g0 ⊆ g1 ⊆ … ⊆ gk (worker ids, innermost first).
#[derive(Debug, Clone)]
pub struct WeightedVictims {
    groups: Vec<Vec<usize>>,
    level: usize,
    attempts: usize,
}

impl WeightedVictims {
    /// Victim groups as [`loka_topology::WorkerLayout::groups`] gives them (empty groups are
    /// skipped).
    pub fn new(groups: &[Vec<usize>]) -> Self {
        WeightedVictims {
            groups: groups.iter().filter(|g| !g.is_empty()).cloned().collect(),
            level: 0,
            attempts: 0,
        }
    }

    /// Starts a new idle cycle at g0 (Wölke: the back-off resets with each cycle).
    pub fn restart(&mut self) {
        self.level = 0;
        self.attempts = 0;
    }

    /// The next victim and the level of the group it came from; `None` when alone.
    pub fn next_victim(&mut self, rng: &mut fastrand::Rng) -> Option<(usize, usize)> {
        let group = self.groups.get(self.level)?;
        let victim = group[rng.usize(..group.len())];
        let level = self.level;
        self.attempts += 1;
        if self.attempts >= group.len() && self.level + 1 < self.groups.len() {
            self.level += 1;
            self.attempts = 0;
        }
        Some((victim, level))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Workers 0..8 in pairs: {0,1}, {2,3}, … are neighbours (same g0).
    fn pairs(a: usize, b: usize) -> bool {
        a / 2 == b / 2
    }

    #[test]
    fn listing_5_2_truth_table() {
        // Ran on its HPU: unchanged.
        assert_eq!(first_activation_home(Some(2), 2, pairs), Some(2));
        // Stolen by a neighbour before its first run: the neighbour becomes the HPU.
        assert_eq!(first_activation_home(Some(2), 3, pairs), Some(3));
        // Stolen by a distant worker: the HPU stays.
        assert_eq!(first_activation_home(Some(2), 6, pairs), Some(2));
        // No HPU (dummy execution unit): whoever runs it first.
        assert_eq!(first_activation_home(None, 5, pairs), Some(5));
    }

    #[test]
    fn listing_5_3_truth_table() {
        let lgs = LgsVariants::default();
        let local = Route::LocalNext;
        // Sender is the HPU, or its neighbour: internal enqueue at the sender.
        assert_eq!(route_woken(lgs, Some(2), Some(2), pairs, local), local);
        assert_eq!(route_woken(lgs, Some(3), Some(2), pairs, local), local);
        // Distant sender: external enqueue at the HPU.
        assert_eq!(
            route_woken(lgs, Some(6), Some(2), pairs, local),
            Route::Tail(2)
        );
        // Plain thread: external enqueue at the HPU.
        assert_eq!(
            route_woken(lgs, None, Some(2), pairs, local),
            Route::Tail(2)
        );
        // Unpinned actor (LGS-UC): like cls.
        assert_eq!(route_woken(lgs, Some(6), None, pairs, local), local);
    }

    #[test]
    fn variants_change_exactly_their_rule() {
        let local = Route::LocalHead;
        let dfs = LgsVariants::parse("dfs").unwrap();
        assert_eq!(
            route_woken(dfs, Some(6), Some(2), pairs, local),
            Route::Head(2)
        );
        assert_eq!(route_woken(dfs, Some(3), Some(2), pairs, local), local);
        let alt = LgsVariants::parse("alt").unwrap();
        assert_eq!(
            route_woken(alt, Some(3), Some(2), pairs, local),
            Route::Tail(2)
        );
        assert_eq!(route_woken(alt, Some(2), Some(2), pairs, local), local);
    }

    #[test]
    fn variant_names_round_trip_and_unknown_is_named() {
        let v = LgsVariants::parse("dfs, co,auto").unwrap();
        assert!(v.dfs && v.co && v.auto && !v.tp);
        assert_eq!(v.to_string(), "dfs,co,auto");
        assert_eq!(LgsVariants::parse("dfs,warp"), Err("warp".to_owned()));
    }

    #[test]
    fn weighted_stealing_walks_groups_with_group_size_attempts() {
        // g0 = {1}, g1 = {1,2,3}, g2 = {1..7}
        let groups = vec![vec![1], vec![1, 2, 3], (1..8).collect()];
        let mut w = WeightedVictims::new(&groups);
        let mut rng = fastrand::Rng::with_seed(3);
        let levels: Vec<usize> = (0..15)
            .map(|_| w.next_victim(&mut rng).unwrap().1)
            .collect();
        // 1 attempt in g0, 3 in g1, then g2 for good.
        assert_eq!(levels, [0, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]);
        w.restart();
        assert_eq!(
            w.next_victim(&mut rng),
            Some((1, 0)),
            "each idle cycle restarts at g0"
        );
        for _ in 0..100 {
            let (v, level) = w.next_victim(&mut rng).unwrap();
            assert!(groups[level].contains(&v) && v != 0);
        }
    }

    #[test]
    fn alone_there_is_no_victim() {
        let mut w = WeightedVictims::new(&[vec![]]);
        assert_eq!(w.next_victim(&mut fastrand::Rng::with_seed(1)), None);
    }

    #[test]
    fn hub_release_rule() {
        assert!(
            !should_release_hub(HUB_MIN_WAKES - 1, 0),
            "too few wake-ups to judge"
        );
        assert!(should_release_hub(HUB_MIN_WAKES, 0));
        assert!(should_release_hub(100, 24));
        assert!(!should_release_hub(100, 25), "ratio not above 4");
    }
}
