//! Spawn options: hints about where and how a new actor starts, and its mailbox's bound. No hint
//! changes what a program computes; a bound does, by design (docs/bounded-mailboxes.md).

pub use crate::policy::placement::Placement;

/// Optional spawn settings. Every field but [`capacity`](Self::capacity) and
/// [`overflow`](Self::overflow) is a hint that never changes program meaning.
#[derive(Debug, Clone, Default)]
pub struct SpawnOptions {
    /// A name for logs and failure reports.
    pub name: Option<String>,
    /// Start on the first message instead of right away: no activation is spent before the
    /// first message arrives, and [`Actor::started`](crate::Actor::started) runs just before that message.
    pub lazy: bool,
    /// Where the actor is first placed.
    pub placement: Placement,
    /// The actor is a communication hub (used by hub-aware policies).
    pub hub: bool,
    /// Do not soft-pin this actor to a home worker (used by locality-guided policies).
    pub unpinned: bool,
    /// The place (LASSI) the actor should run in, under the `places` policies: an index below
    /// [`Machine::places`](crate::Machine::places). `None`: round robin over the places. Other
    /// policies ignore it.
    pub place: Option<usize>,
    /// The actor's execution policy, whatever the system's execution mode
    /// (docs/exec-policies.md). `None`: the mode decides.
    pub exec: Option<crate::exec_policy::ExecPolicy>,
    /// The most user messages the actor's mailbox holds (docs/bounded-mailboxes.md). `None`
    /// (the default): unbounded. Control envelopes (start, stop, ask continuations, the
    /// unreferenced signal) never count and are never refused for room. 0 is refused at spawn
    /// ([`SpawnError::ZeroCapacity`](crate::SpawnError::ZeroCapacity)).
    pub capacity: Option<usize>,
    /// What a plain [`send`](crate::ActorRef::send) does when the bounded mailbox is full.
    /// Ignored without a [`capacity`](Self::capacity).
    pub overflow: Overflow,
    /// Bytes of data the actor owns beyond `size_of` its own struct (heap buffers it touches
    /// when it runs). Only the simulation engine's memory model reads it (docs/simulation.md);
    /// [`Context::set_footprint`](crate::Context::set_footprint) changes it later. 0 by default.
    pub footprint: usize,
}

/// What a plain [`send`](crate::ActorRef::send) to a full bounded mailbox does.
/// [`try_send`](crate::ActorRef::try_send) and [`send_async`](crate::ActorRef::send_async) never
/// drop a message, whatever the rule.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Overflow {
    /// Refuse the new message: `send` fails with
    /// [`SendErrorReason::Full`](crate::SendErrorReason::Full), handing it back. Counted in
    /// `stats().mailbox_full`.
    #[default]
    Reject,
    /// Discard the oldest queued message to make room; `send` succeeds. Counted in
    /// `stats().overflow_dropped` when the actor discards it (if the actor stops first, it is a
    /// dead letter like the rest of its mailbox).
    DropOldest,
    /// Discard the new message; `send` succeeds. Counted in `stats().overflow_dropped`.
    DropNewest,
}

impl SpawnOptions {
    /// Default options.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets [`SpawnOptions::name`].
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Sets [`SpawnOptions::lazy`].
    pub fn lazy(mut self, lazy: bool) -> Self {
        self.lazy = lazy;
        self
    }
    /// Sets [`SpawnOptions::placement`].
    pub fn placement(mut self, placement: Placement) -> Self {
        self.placement = placement;
        self
    }
    /// Sets [`SpawnOptions::hub`].
    pub fn hub(mut self, hub: bool) -> Self {
        self.hub = hub;
        self
    }
    /// Sets [`SpawnOptions::unpinned`].
    pub fn unpinned(mut self, unpinned: bool) -> Self {
        self.unpinned = unpinned;
        self
    }
    /// Sets [`SpawnOptions::place`].
    pub fn place(mut self, place: usize) -> Self {
        self.place = Some(place);
        self
    }
    /// Sets [`SpawnOptions::exec`].
    pub fn exec(mut self, policy: crate::exec_policy::ExecPolicy) -> Self {
        self.exec = Some(policy);
        self
    }
    /// Sets [`SpawnOptions::capacity`]: a bounded mailbox of `capacity` user messages.
    pub fn capacity(mut self, capacity: usize) -> Self {
        self.capacity = Some(capacity);
        self
    }
    /// Sets [`SpawnOptions::overflow`].
    pub fn overflow(mut self, overflow: Overflow) -> Self {
        self.overflow = overflow;
        self
    }
    /// Sets [`SpawnOptions::footprint`].
    pub fn footprint(mut self, bytes: usize) -> Self {
        self.footprint = bytes;
        self
    }
}
