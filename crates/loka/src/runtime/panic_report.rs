//! `panic_report = "tracing"` (docs/observability.md, "Panic reports"): a panic in an actor's
//! code becomes one `tracing::error!` event instead of the panic hook's output on stderr.
//!
//! The process has one panic hook. A system built with `tracing` installs, once per process, a
//! hook that wraps the one in place then ([`install_hook`]); it reports a panic itself only when
//! the panicking thread runs an activation of such a system, which the activation announces in a
//! thread-local ([`Scope`]). Every other panic (of other code, of a system with `hook`, of a plain
//! thread) goes to the wrapped hook, as before. Systems with `hook` (the default) install nothing
//! and pay one test of a flag per activation, in a line the activation reads anyway.

use super::id::ActorId;
use super::Shared;
use std::cell::Cell;
use std::panic::PanicHookInfo;
use std::sync::Once;

/// The activation running on this thread, when its system reports panics as events.
#[derive(Clone, Copy)]
struct Current {
    id: ActorId,
    actor_type: &'static str,
    /// Spawned with a name (looked up only when a panic is reported).
    named: bool,
    /// The system's shared state, kept alive by the cell whose activation set this.
    shared: *const Shared,
}

thread_local! {
    static CURRENT: Cell<Option<Current>> = const { Cell::new(None) };
}

/// Installs the reporting hook over the current one, once per process. Skipped (and tried again
/// by the next system) on a thread that is panicking, where `set_hook` would panic.
pub(crate) fn install_hook() {
    static INSTALL: Once = Once::new();
    if std::thread::panicking() {
        return;
    }
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !report(info) {
                previous(info);
            }
        }));
    });
}

/// Reports the panic as an event if this thread runs an activation that asked for it.
fn report(info: &PanicHookInfo<'_>) -> bool {
    // `try_with`: a panic while this thread's locals are being destroyed goes to the old hook.
    let Some(current) = CURRENT.try_with(Cell::get).ok().flatten() else {
        return false;
    };
    let payload = info.payload();
    let message = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("non-string panic payload");
    let name = match current.named {
        // SAFETY: `Scope` set `shared` from a live cell's runtime and clears it before that
        // activation ends; the cell keeps the runtime, and so `Shared`, alive meanwhile.
        true => unsafe { &*current.shared }.try_name_of(current.id),
        false => None,
    };
    let location = info.location().map(ToString::to_string);
    tracing::error!(
        target: "loka::panic",
        actor = %current.id,
        name = name.as_deref(),
        actor_type = current.actor_type,
        panic = message,
        location = location.as_deref(),
        "actor panicked"
    );
    true
}

/// Marks this thread as running an activation whose panics are reported as events, until
/// dropped (which restores the activation it interrupted, for an inline run's caller).
pub(crate) struct Scope {
    outer: Option<Current>,
}

impl Scope {
    /// Announces the activation of actor `id` (type `actor_type`) of the system `shared`.
    #[cold]
    #[inline(never)]
    pub(crate) fn enter(
        id: ActorId,
        actor_type: &'static str,
        named: bool,
        shared: &Shared,
    ) -> Scope {
        let current = Current {
            id,
            actor_type,
            named,
            shared,
        };
        Scope {
            outer: CURRENT.with(|c| c.replace(Some(current))),
        }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.outer));
    }
}
