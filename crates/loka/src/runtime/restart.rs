//! When a supervised child is restarted ([`Restart`]): read by the supervised cell
//! (`runtime/cell/supervised/`), configured through the supervisor API, which re-exports it.

/// When a child is restarted (Erlang's restart types).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Restart {
    /// Always: after a failure and after a normal stop ([`Context::stop`](crate::Context::stop),
    /// a stop signal). The default.
    #[default]
    Permanent,
    /// Only after an abnormal exit (a failure: [`StopReason::is_failure`]). A normal stop
    /// terminates it; it stays listed as stopped and [`SupervisorRef::restart_child`](crate::supervisor::SupervisorRef::restart_child) can start
    /// it again.
    ///
    /// [`StopReason::is_failure`]: crate::StopReason::is_failure
    Transient,
    /// Never: once it stops or fails it terminates and the supervisor forgets it. A
    /// `OneForAll`/`RestForOne` restart of its siblings terminates it too.
    Temporary,
}
