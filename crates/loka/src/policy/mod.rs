//! Pure scheduling decisions (DESIGN principle 1).
//!
//! A policy sees a read-only view of the situation (my worker, the worker count, a seeded RNG, an
//! actor's spawn options) and returns a decision that the engine carries out. Nothing here touches
//! threads, atomics or clocks, so every rule is unit-tested without threads and can later drive a
//! simulator of large machines.

pub mod cls;

use std::fmt;
use std::str::FromStr;

/// The scheduler policies loka knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum PolicyKind {
    /// CAF's random work stealing with communication locality (SPEC §3.1).
    #[default]
    Cls,
}

impl PolicyKind {
    /// Every policy name, as accepted by [`FromStr`].
    pub const NAMES: &'static [&'static str] = &["cls"];
    /// Every policy.
    pub const ALL: &'static [PolicyKind] = &[PolicyKind::Cls];
}

impl fmt::Display for PolicyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PolicyKind::Cls => "cls",
        })
    }
}

/// An unknown policy name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown scheduler policy `{name}` (known: {known})", known = PolicyKind::NAMES.join(", "))]
pub struct UnknownPolicy {
    /// The name given.
    pub name: String,
}

impl FromStr for PolicyKind {
    type Err = UnknownPolicy;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "cls" => Ok(PolicyKind::Cls),
            _ => Err(UnknownPolicy { name: s.to_owned() }),
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
}
