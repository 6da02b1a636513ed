//! What an actor's failure says: the message of the panic that stopped it, from a handler or a
//! hook.

use std::any::Any;

/// The message of a panic's payload.
pub(crate) fn panic_message(payload: Box<dyn Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}

/// The failure of an actor whose `stopped` hook panicked with `panic`, named as the hook's. When
/// a handler had already failed (`earlier`, why the actor stops), both go in one failure: the
/// actor fails once, so its parent hears of it once and `stats().panics` counts it once.
pub(super) fn stopped_panicked(earlier: Option<String>, panic: String) -> String {
    match earlier {
        None => format!("`stopped` hook panicked: {panic}"),
        Some(earlier) => format!("{earlier}; then its `stopped` hook panicked: {panic}"),
    }
}
