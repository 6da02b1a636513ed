//! Execution policies: *how* an actor's messages get a thread (Panini's automatic actor-to-thread
//! mapping; docs/exec-policies.md).
//!
//! Each actor runs under one [`ExecPolicy`]:
//!
//! | policy | who runs the handler | for |
//! |---|---|---|
//! | [`Task`](ExecPolicy::Task) | the engine's workers (the default) | most actors |
//! | [`Thread`](ExecPolicy::Thread) | a dedicated OS thread | actors that block (I/O, locks, sleeps) or must never wait for a worker |
//! | [`Monitor`](ExecPolicy::Monitor) | the *sender's* thread, inline, when the actor is idle; else it queues | small leaf actors fed by one busy partner |
//! | [`Seq`](ExecPolicy::Seq) | the sender's thread, inline; meant for an actor with one owner | helpers owned by one actor |
//!
//! The policy comes, first match wins, from [`SpawnOptions::exec`](crate::SpawnOptions::exec);
//! then the actor type's [`Actor::exec_policy`](crate::Actor::exec_policy); then the system's
//! [`ExecMode`]: `all-task` and `all-thread` give every other actor that policy
//! (Panini's two baselines), `auto` maps the actor type's declared [`Characteristics`]
//! ([`crate::Actor::characteristics`]) through the eight heuristics of [`mapping`], and keeps an
//! actor that declares nothing on `Task` while it watches it: one caught blocking a worker is
//! promoted to `Thread`.
//!
//! Whatever the policy, the guarantees hold: the mailbox's schedule bit still gives one handler at
//! a time, so an inline (`Monitor`/`Seq`) run happens only when the actor was idle, and a send
//! to an actor that is already running (on another thread, or further down this thread's inline
//! chain) just queues the message.

pub mod mapping;

pub use mapping::{map, Characteristics, Comm, Cpu, Heuristic, Par};

use std::fmt;
use std::str::FromStr;

/// How one actor's messages are run (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecPolicy {
    /// On the engine's workers, like every actor without a policy.
    #[default]
    Task,
    /// On a dedicated OS thread of its own, started at its first wake-up.
    Thread,
    /// Inline on the sending thread when the actor is idle and the inline chain is not too deep;
    /// otherwise queued like `Task`.
    Monitor,
    /// Inline on the sending thread, for an actor with a single owner; demoted to `Monitor` once
    /// wake-ups come from a second thread.
    Seq,
}

impl ExecPolicy {
    /// Every policy, in the order of the table above.
    pub const ALL: [ExecPolicy; 4] = [
        ExecPolicy::Task,
        ExecPolicy::Thread,
        ExecPolicy::Monitor,
        ExecPolicy::Seq,
    ];

    /// The policy's name (`task`, `thread`, `monitor`, `seq`).
    pub const fn name(self) -> &'static str {
        match self {
            ExecPolicy::Task => "task",
            ExecPolicy::Thread => "thread",
            ExecPolicy::Monitor => "monitor",
            ExecPolicy::Seq => "seq",
        }
    }

    pub(crate) const fn to_u8(self) -> u8 {
        match self {
            ExecPolicy::Task => 0,
            ExecPolicy::Thread => 1,
            ExecPolicy::Monitor => 2,
            ExecPolicy::Seq => 3,
        }
    }

    pub(crate) const fn from_u8(v: u8) -> ExecPolicy {
        match v {
            1 => ExecPolicy::Thread,
            2 => ExecPolicy::Monitor,
            3 => ExecPolicy::Seq,
            _ => ExecPolicy::Task,
        }
    }
}

impl fmt::Display for ExecPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a system gives actors their execution policy (`exec = "..."` in the configuration,
/// `LOKA_EXEC`, `--exec` on `loka bench`). An actor spawned with
/// [`SpawnOptions::exec`](crate::SpawnOptions::exec) keeps its own policy in every mode.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(try_from = "String", into = "String")]
pub enum ExecMode {
    /// Every actor on the workers (Panini's "default-task"; loka's default: it costs nothing).
    #[default]
    AllTask,
    /// Every actor on a thread of its own (Panini's "default-thread").
    AllThread,
    /// Declared characteristics mapped by the eight heuristics; undeclared actors start as `Task`
    /// and are promoted to `Thread` when caught blocking a worker.
    Auto,
    /// Every actor `Monitor` (beyond Panini: to test and measure the policy on whole programs).
    AllMonitor,
    /// Every actor `Seq` (beyond Panini, as `AllMonitor`).
    AllSeq,
}

impl ExecMode {
    /// The three modes Panini compares, in the order benchmarks show them.
    pub const PANINI: [ExecMode; 3] = [ExecMode::AllThread, ExecMode::AllTask, ExecMode::Auto];

    /// Every mode.
    pub const ALL: [ExecMode; 5] = [
        ExecMode::AllThread,
        ExecMode::AllTask,
        ExecMode::Auto,
        ExecMode::AllMonitor,
        ExecMode::AllSeq,
    ];

    /// The mode's name, as accepted by [`FromStr`].
    pub const fn name(self) -> &'static str {
        match self {
            ExecMode::AllTask => "all-task",
            ExecMode::AllThread => "all-thread",
            ExecMode::Auto => "auto",
            ExecMode::AllMonitor => "all-monitor",
            ExecMode::AllSeq => "all-seq",
        }
    }

    /// The policy this mode gives an actor spawned without an explicit one, whose type declares
    /// `declared` (`None`: nothing).
    pub fn policy_for(self, declared: Option<&Characteristics>) -> ExecPolicy {
        match self {
            ExecMode::AllTask => ExecPolicy::Task,
            ExecMode::AllThread => ExecPolicy::Thread,
            ExecMode::Auto => declared.map_or(ExecPolicy::Task, |c| map(c).0),
            ExecMode::AllMonitor => ExecPolicy::Monitor,
            ExecMode::AllSeq => ExecPolicy::Seq,
        }
    }
}

impl fmt::Display for ExecMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown execution mode name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown execution mode `{0}` (known: all-task, all-thread, auto, all-monitor, all-seq)")]
pub struct UnknownExecMode(pub String);

impl FromStr for ExecMode {
    type Err = UnknownExecMode;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "all-task" | "task" => Ok(ExecMode::AllTask),
            "all-thread" | "thread" => Ok(ExecMode::AllThread),
            "auto" => Ok(ExecMode::Auto),
            "all-monitor" | "monitor" => Ok(ExecMode::AllMonitor),
            "all-seq" | "seq" => Ok(ExecMode::AllSeq),
            other => Err(UnknownExecMode(other.to_owned())),
        }
    }
}

impl TryFrom<String> for ExecMode {
    type Error = UnknownExecMode;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<ExecMode> for String {
    fn from(m: ExecMode) -> String {
        m.name().to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_round_trip_and_unknown_ones_are_named() {
        for m in ExecMode::ALL {
            assert_eq!(m.name().parse::<ExecMode>().unwrap(), m);
        }
        let e = "all-fibers".parse::<ExecMode>().unwrap_err().to_string();
        assert!(e.contains("`all-fibers`") && e.contains("auto"), "{e}");
        for p in ExecPolicy::ALL {
            assert_eq!(ExecPolicy::from_u8(p.to_u8()), p);
        }
    }

    #[test]
    fn modes_give_their_policy() {
        let leaf = Characteristics::new(Par::Low, Comm::Low, Cpu::Low);
        assert_eq!(ExecMode::AllTask.policy_for(Some(&leaf)), ExecPolicy::Task);
        assert_eq!(ExecMode::AllThread.policy_for(None), ExecPolicy::Thread);
        assert_eq!(ExecMode::Auto.policy_for(Some(&leaf)), ExecPolicy::Monitor);
        assert_eq!(ExecMode::Auto.policy_for(None), ExecPolicy::Task);
    }
}
