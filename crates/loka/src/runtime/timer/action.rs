//! What a timer does when it fires ([`Action`]), and the one-shot action kept inline in its
//! wheel entry ([`OnceFn`], docs/decisions/0076-inline-timer-actions.md).

use std::sync::Arc;

/// What a timer does when it fires. Runs on the firing thread, outside every lock.
pub(crate) enum Action {
    /// Runs once (see [`Action::once`]).
    Once(OnceFn),
    /// Runs once: fires an object its arming code already shares (an ask's waiting slot), so
    /// the timer costs no allocation of its own, only a reference count.
    Shared(Arc<dyn Fire>),
    /// Runs every period; returns `false` to stop (its target is gone).
    Every(Box<dyn FnMut() -> bool + Send>),
}

impl Action {
    /// A one-shot action running `f`: kept in the wheel entry itself when it is small (what
    /// `run_after` and `send_after` arm: an actor reference and a few words), so arming it
    /// allocates nothing; a larger one goes to the heap, as a `Box` would.
    pub(crate) fn once(f: impl FnOnce() + Send + 'static) -> Self {
        Action::Once(OnceFn::new(f))
    }
}

/// Inline room of a one-shot action, in words: an actor reference (one word for an actor's own
/// timers, two for an `ActorRef`) and what the closure captures besides.
type OnceSpace = [usize; 3];

/// A one-shot action, inline when it fits in [`OnceSpace`] (a `Box<dyn FnOnce>` costs an
/// allocation and a free per timer). Held as an `FnMut` over an `Option`, because a small box's
/// value cannot be moved out to be called by value.
pub(crate) struct OnceFn(smallbox::SmallBox<dyn FnMut() + Send, OnceSpace>);

impl OnceFn {
    /// Wraps `f`.
    pub(super) fn new(f: impl FnOnce() + Send + 'static) -> Self {
        let mut f = Some(f);
        OnceFn(smallbox::smallbox!(move || {
            if let Some(f) = f.take() {
                f()
            }
        }))
    }

    /// Runs the action (its captures are dropped with `self`, after it returns).
    pub(super) fn run(mut self) {
        (self.0)()
    }

    /// Whether the action lives on the heap (it did not fit inline).
    #[cfg(test)]
    pub(crate) fn is_heap(&self) -> bool {
        self.0.is_heap()
    }
}

/// A one-shot action shared with its arming code ([`Action::Shared`]).
pub(crate) trait Fire: Send + Sync {
    /// Runs the action (once: the timer drops its reference afterwards).
    fn fire(&self);
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::super::tests::{counter, Probe};
    use super::super::Timers;
    use super::*;
    // atomic outside sync.rs: test-only, never run under loom (real threads and timers).
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::sync::Weak;

    /// A one-shot action of a few words lives in its wheel entry (no allocation per timer), a larger
    /// one on the heap; either runs once, and its captures are dropped once: after it ran, or when
    /// the timer is cancelled.
    #[test]
    fn one_shot_actions_live_inline_when_small_and_run_or_drop_once() {
        let timers = Timers::new(1);
        let (ran, drops) = (counter(), counter());
        let probe = || Probe {
            drops: Arc::clone(&drops),
            reenter: Weak::new(),
        };
        let small = |p: Probe, ran: Arc<AtomicUsize>| {
            Action::once(move || {
                let _p = p;
                ran.fetch_add(1, SeqCst);
            })
        };
        let large = |p: Probe, ran: Arc<AtomicUsize>, pad: [u64; 8]| {
            Action::once(move || {
                let _p = p;
                ran.fetch_add(pad.len(), SeqCst);
            })
        };
        let inline = |a: &Action| match a {
            Action::Once(f) => !f.is_heap(),
            _ => unreachable!(),
        };
        let (a, b) = (
            small(probe(), ran.clone()),
            large(probe(), ran.clone(), [0; 8]),
        );
        assert!(inline(&a), "an action capturing two words is inline");
        assert!(!inline(&b), "an action capturing ten words is on the heap");
        timers.insert(0, 1, None, a);
        timers.insert(0, 1, None, b);
        let (c, _) = timers.insert(0, 5, None, small(probe(), ran.clone()));
        let (d, _) = timers.insert(0, 5, None, large(probe(), ran.clone(), [0; 8]));
        assert_eq!(timers.fire_due(0, 1), 2);
        assert_eq!(ran.load(SeqCst), 1 + 8, "each fired action ran once");
        assert_eq!(
            drops.load(SeqCst),
            2,
            "the fired actions' captures are dropped"
        );
        assert!(timers.cancel(&c) && timers.cancel(&d));
        assert_eq!(
            drops.load(SeqCst),
            4,
            "the cancelled actions' captures are dropped"
        );
        assert_eq!(timers.fire_due(0, 10), 0);
        assert_eq!(ran.load(SeqCst), 9, "a cancelled action never runs");
        assert_eq!(timers.pending(), 0);
    }
}
