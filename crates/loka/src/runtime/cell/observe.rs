//! What an activation tells observers (docs/observability.md): the `tracing` span it runs in
//! (feature `trace-activations`) and, under `panic_report = "tracing"`, the announcement that
//! lets the panic hook report a panic of its actor as an event (`runtime/panic_report.rs`).

use super::{ActorCell, Behavior};
use crate::runtime::panic_report::Scope;

impl<B: Behavior> ActorCell<B> {
    /// Under `panic_report = "tracing"`, announces this activation to the panic hook until the
    /// returned scope drops; otherwise nothing (one test of a flag beside `throughput`).
    #[inline(always)]
    pub(super) fn panic_scope(&self) -> Option<Scope> {
        if self.runtime.panic_events() {
            return Some(Scope::enter(
                self.id(),
                std::any::type_name::<B>(),
                self.named,
                &self.runtime.shared,
            ));
        }
        None
    }

    /// The span of one activation (TRACE, target `loka::activation`): the actor's id, its name if
    /// it was spawned with one, its type, the worker running it (none on a `thread` actor's own
    /// thread) and the system's policy. `messages` is recorded when it ends (envelopes taken under
    /// the actor-centric engine, the start included; user messages under the message-centric one;
    /// not for a supervised child's activations between two instances). The fields are
    /// computed only when a subscriber wants the span (`tracing` evaluates them after its level
    /// and callsite checks); the name then costs a look-up in the runtime's name table.
    #[cfg(feature = "trace-activations")]
    #[inline(always)]
    pub(super) fn activation_span(&self, exec: &crate::runtime::Exec) -> tracing::Span {
        tracing::trace_span!(
            target: "loka::activation",
            "activation",
            actor = %self.id(),
            name = self.name().as_deref(),
            actor_type = std::any::type_name::<B>(),
            worker = exec.worker(),
            policy = %self.runtime.shared.config.policy,
            messages = tracing::field::Empty,
        )
    }
}
