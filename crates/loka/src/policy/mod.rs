//! Pure scheduling decisions (docs/decisions/README.md, principle 1).
//!
//! A policy sees a read-only view of the situation (my worker, the worker count, a seeded RNG, an
//! actor's spawn options) and returns a decision that the engine carries out. Nothing here touches
//! threads, atomics or clocks, so every rule is unit-tested without threads and can later drive a
//! simulator of large machines.

pub mod adaptive;
pub mod auto;
pub mod balance;
pub mod cls;
pub mod erlang;
pub mod hierarchical;
pub mod lgs;
pub mod placement;
pub mod places;

pub use lgs::LgsVariants;
pub use places::PlacesMode;

use std::fmt;
use std::str::FromStr;

/// The scheduler policies loka knows.
///
/// Names: `cls`, `lgs`, `lgs:VARIANT[,VARIANT…]` with variants `tp`, `dfs`, `co`, `alt`,
/// `nosleep`, `auto` (see [`lgs`]), `hierarchical`, `hierarchical:auto` (see [`hierarchical`]),
/// `places`, `places:a`, `places:b` (see [`places`]), `erlang` (see [`erlang`]).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(try_from = "String", into = "String")]
pub enum PolicyKind {
    /// Chosen from the machine when the system starts (see [`auto`]): `cls` on one NUMA node,
    /// `hierarchical` on several. The default.
    #[default]
    Auto,
    /// CAF's random work stealing with communication locality (Wölke §3.1, docs/references.md).
    Cls,
    /// Locality-guided scheduling with its variant switches (Wölke ch. 4–5, docs/references.md).
    Lgs(LgsVariants),
    /// Hub-aware hierarchical scheduling (Francesquini ch. 4, docs/references.md); `auto` detects hubs online.
    Hierarchical {
        /// Mark actors as hubs automatically (beyond the text).
        auto_hubs: bool,
    },
    /// LASSI's places: actors run in the place their spawn hint names (round robin without one),
    /// idle workers steal inside their place first (Weibel, docs/references.md).
    Places(PlacesMode),
    /// The stock Erlang VM's scheduling: a woken actor goes back to the tail of the queue of the
    /// worker it last ran on, idle workers steal in index order (BEAM; Francesquini App. B,
    /// docs/references.md). The baseline of Francesquini's measurements.
    Erlang,
}

impl PolicyKind {
    /// The policy names, as accepted by [`FromStr`].
    pub const NAMES: &'static [&'static str] = &[
        "auto",
        "cls",
        "lgs",
        "lgs:VARIANTS (comma-separated: tp, dfs, co, alt, nosleep, auto)",
        "hierarchical",
        "hierarchical:auto",
        "places",
        "places:a",
        "erlang",
    ];

    /// A representative of every policy and variant, for tests and policy comparisons. (`co`
    /// needs L2 sharing between workers and is left out: it is an error on most small machines.)
    pub const ALL: &'static [PolicyKind] = &[
        PolicyKind::Auto,
        PolicyKind::Cls,
        PolicyKind::Lgs(LgsVariants::NONE),
        PolicyKind::Lgs(LgsVariants::TP),
        PolicyKind::Lgs(LgsVariants::DFS),
        PolicyKind::Lgs(LgsVariants::ALT),
        PolicyKind::Lgs(LgsVariants::AUTO),
        PolicyKind::Hierarchical { auto_hubs: false },
        PolicyKind::Hierarchical { auto_hubs: true },
        PolicyKind::Places(PlacesMode::PerWorker),
        PolicyKind::Erlang,
    ];
}

impl PolicyKind {
    /// The policy a system runs: `auto` resolved for a machine of `nodes` NUMA nodes and `workers`
    /// workers ([`auto::choose`]), any other policy as it is; with the reason for an `auto` choice.
    pub fn resolve(self, nodes: usize, workers: usize) -> (PolicyKind, Option<&'static str>) {
        match self {
            PolicyKind::Auto => {
                let (chosen, why) = auto::choose(nodes, workers);
                (chosen, Some(why))
            }
            other => (other, None),
        }
    }
}

impl fmt::Display for PolicyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicyKind::Auto => f.write_str("auto"),
            PolicyKind::Cls => f.write_str("cls"),
            PolicyKind::Lgs(v) if *v == LgsVariants::NONE => f.write_str("lgs"),
            PolicyKind::Lgs(v) => write!(f, "lgs:{v}"),
            PolicyKind::Hierarchical { auto_hubs: false } => f.write_str("hierarchical"),
            PolicyKind::Hierarchical { auto_hubs: true } => f.write_str("hierarchical:auto"),
            PolicyKind::Places(PlacesMode::PerWorker) => f.write_str("places"),
            PolicyKind::Places(PlacesMode::Shared) => f.write_str("places:a"),
            PolicyKind::Erlang => f.write_str("erlang"),
        }
    }
}

/// An unknown policy or variant name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnknownPolicy {
    /// No policy has this name.
    #[error("unknown scheduler policy `{name}` (known: {known})", known = PolicyKind::NAMES.join(", "))]
    Policy {
        /// The name given.
        name: String,
    },
    /// The policy exists but not this variant.
    #[error("unknown {policy} variant `{variant}` in `{name}` (known: {known})", known = match *policy { "lgs" => LgsVariants::NAMES.join(", "), "places" => "a, b".to_owned(), _ => "auto".to_owned() })]
    Variant {
        /// The whole name given.
        name: String,
        /// The policy.
        policy: &'static str,
        /// The bad variant.
        variant: String,
    },
}

impl FromStr for PolicyKind {
    type Err = UnknownPolicy;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (policy, variants) = s.split_once(':').unwrap_or((s, ""));
        match policy {
            "auto" if variants.is_empty() => Ok(PolicyKind::Auto),
            "cls" if variants.is_empty() => Ok(PolicyKind::Cls),
            "erlang" if variants.is_empty() => Ok(PolicyKind::Erlang),
            "lgs" => LgsVariants::parse(variants)
                .map(PolicyKind::Lgs)
                .map_err(|variant| UnknownPolicy::Variant {
                    name: s.to_owned(),
                    policy: "lgs",
                    variant,
                }),
            "hierarchical" => match variants {
                "" => Ok(PolicyKind::Hierarchical { auto_hubs: false }),
                "auto" => Ok(PolicyKind::Hierarchical { auto_hubs: true }),
                other => Err(UnknownPolicy::Variant {
                    name: s.to_owned(),
                    policy: "hierarchical",
                    variant: other.to_owned(),
                }),
            },
            "places" => match variants {
                "" | "b" => Ok(PolicyKind::Places(PlacesMode::PerWorker)),
                "a" => Ok(PolicyKind::Places(PlacesMode::Shared)),
                other => Err(UnknownPolicy::Variant {
                    name: s.to_owned(),
                    policy: "places",
                    variant: other.to_owned(),
                }),
            },
            _ => Err(UnknownPolicy::Policy { name: s.to_owned() }),
        }
    }
}

impl TryFrom<String> for PolicyKind {
    type Error = UnknownPolicy;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<PolicyKind> for String {
    fn from(p: PolicyKind) -> String {
        p.to_string()
    }
}

/// Where the engine must queue an actor that became runnable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// The current worker's next slot: runs right after the current activation, cannot be stolen
    /// meanwhile (communication locality for request/response chains).
    LocalNext,
    /// The head of the current worker's queue (CAF's internal enqueue): stealable.
    LocalHead,
    /// The tail of worker `w`'s queue (CAF's external enqueue).
    Tail(usize),
    /// The head of worker `w`'s queue from another worker (LGS-DFS): runs before `w`'s queued work.
    Head(usize),
    /// Worker `w`'s pinned queue: only `w` runs it, no thief takes it (hubs).
    Pinned(usize),
    /// Place `p`'s shared queue (`places:a`): any worker of the place takes it.
    Place(usize),
    /// Worker `worker`'s foreign queue for actors whose home is NUMA node `home_node`.
    Foreign {
        /// The worker that will run it unless a thief from its home node brings it home.
        worker: usize,
        /// The actor's home node.
        home_node: usize,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_names_round_trip() {
        for p in PolicyKind::ALL {
            assert_eq!(p.to_string().parse::<PolicyKind>().unwrap(), *p);
        }
        assert_eq!(
            "lgs:dfs,co".parse::<PolicyKind>().unwrap().to_string(),
            "lgs:dfs,co"
        );
    }

    #[test]
    fn unknown_policy_and_variant_are_named() {
        let e = "fifo".parse::<PolicyKind>().unwrap_err().to_string();
        assert!(e.contains("`fifo`") && e.contains("lgs"), "{e}");
        let e = "lgs:dfs,warp"
            .parse::<PolicyKind>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("`warp`") && e.contains("nosleep"), "{e}");
        assert!("cls:tp".parse::<PolicyKind>().is_err());
        let e = "places:c".parse::<PolicyKind>().unwrap_err().to_string();
        assert!(e.contains("`c`") && e.contains("a, b"), "{e}");
        assert_eq!(
            "places:b".parse::<PolicyKind>().unwrap(),
            PolicyKind::Places(PlacesMode::PerWorker)
        );
        assert_eq!(
            "places:a".parse::<PolicyKind>().unwrap().to_string(),
            "places:a"
        );
    }
}
