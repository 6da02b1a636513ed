//! Supervisors from a plain thread: the [`System`] side of `supervisor/`.

use super::System;
use crate::supervisor::{Supervisor, SupervisorError, SupervisorRef, SupervisorSpec};

impl System {
    /// Spawns a top-level supervisor of `spec` from a plain thread; its children start with it.
    /// Checks every child's spawn options and needs ([`crate::Actor::requires`]) first (nested
    /// supervisors' included). Once the system
    /// has shut down: [`SupervisorError::ShutDown`]. A supervisor spawned here has no parent:
    /// when it gives up, the failure is recorded in [`System::failures`] and logged.
    pub fn spawn_supervisor(&self, spec: SupervisorSpec) -> Result<SupervisorRef, SupervisorError> {
        spec.check(&self.shared)?;
        self.try_spawn(Supervisor::new(spec))
            .map(SupervisorRef::new)
            .map_err(crate::supervisor::spawn_error)
    }
}
