//! [`ObserveError`]: why the `observe` socket of a system was not opened (docs/observability.md,
//! *Live view*). Defined with the configuration, whose error carries it
//! ([`crate::ConfigError::Observe`]); the socket itself is served by `system/observe.rs`.

use std::path::PathBuf;

/// Why the `observe` socket was not opened ([`crate::ConfigError::Observe`]). Each names the
/// path; nothing of the system was started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ObserveError {
    /// Something exists at the path already: a stale socket of a process that died, another
    /// system's live socket, or any other file. loka never removes a file it did not create.
    #[error(
        "observe socket {}: the path exists (another system's socket, a stale one, or a file; \
         loka does not remove it)",
        path.display()
    )]
    Exists {
        /// The path.
        path: PathBuf,
    },
    /// The socket could not be bound: its directory is missing or not writable, or the path is
    /// too long for a Unix socket (108 bytes on Linux).
    #[error("observe socket {}: cannot bind: {error}", path.display())]
    Bind {
        /// The path.
        path: PathBuf,
        /// The operating system's error.
        error: std::io::Error,
    },
    /// The thread serving the socket could not be started.
    #[error("observe socket {}: cannot start its thread: {error}", path.display())]
    Spawn {
        /// The path.
        path: PathBuf,
        /// The operating system's error.
        error: std::io::Error,
    },
}
