//! Spawn options: hints about where and how a new actor starts. None changes what a program
//! computes.

pub use crate::policy::placement::Placement;

/// Optional spawn settings. Every field is a hint that never changes program meaning.
#[derive(Debug, Clone, Default)]
pub struct SpawnOptions {
    /// A name for logs and failure reports.
    pub name: Option<String>,
    /// Start on the first message instead of right away: no activation is spent before the
    /// first message arrives, and [`Actor::started`] runs just before that message.
    pub lazy: bool,
    /// Where the actor is first placed.
    pub placement: Placement,
    /// The actor is a communication hub (used by hub-aware policies).
    pub hub: bool,
    /// Do not soft-pin this actor to a home worker (used by locality-guided policies).
    pub unpinned: bool,
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
}
