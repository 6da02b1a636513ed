//! The `panic_report` key: where a panic in an actor's code is reported
//! (docs/observability.md, "Panic reports").

use std::fmt;
use std::str::FromStr;

/// Where a panic in an actor's handler, `started` or `stopped` hook is reported
/// (`panic_report` in TOML, `LOKA_PANIC_REPORT`, [`crate::SystemBuilder::panic_report`]).
///
/// Either way the actor fails as before (its supervisor or parent hears of it, `failures()` and
/// `stats().panics` count it); only the report of the panic itself differs.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(try_from = "String", into = "String")]
pub enum PanicReport {
    /// The process's panic hook, as for any other panic: Rust's default hook prints the message
    /// (and a backtrace under `RUST_BACKTRACE=1`) on stderr. The default; loka installs nothing.
    #[default]
    Hook,
    /// One `tracing::error!` event per panic, with the actor's id, name (if it has one), type and
    /// the panic's message and location, instead of the panic hook's output. loka installs, once
    /// per process, a hook that reports this way the panics of this system's activations and
    /// hands every other panic to the hook it replaced.
    Tracing,
}

impl PanicReport {
    /// Every value, in the order the docs list them.
    pub const ALL: [PanicReport; 2] = [PanicReport::Hook, PanicReport::Tracing];

    /// The value's name, as accepted by [`FromStr`].
    pub const fn name(self) -> &'static str {
        match self {
            PanicReport::Hook => "hook",
            PanicReport::Tracing => "tracing",
        }
    }
}

impl fmt::Display for PanicReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown `panic_report` value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown panic_report `{0}` (known: {known})", known = PanicReport::ALL.map(PanicReport::name).join(", "))]
pub struct UnknownPanicReport(pub String);

impl FromStr for PanicReport {
    type Err = UnknownPanicReport;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        // The names are `name()`'s, so parsing and printing cannot drift apart.
        let s = s.trim();
        PanicReport::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| UnknownPanicReport(s.to_owned()))
    }
}

impl TryFrom<String> for PanicReport {
    type Error = UnknownPanicReport;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<PanicReport> for String {
    fn from(r: PanicReport) -> String {
        r.name().to_owned()
    }
}
