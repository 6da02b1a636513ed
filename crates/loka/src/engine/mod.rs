//! Engines: how runnable work is queued and handed to worker threads. One actor API, several
//! engines (`docs/internals/architecture.md`, "Adding an engine").
//!
//! | file or folder | what it is | layer |
//! |---|---|---|
//! | `kind.rs` | the catalogue: each engine's name, what it can run, its timer shards, how it resolves `auto` | below the configuration |
//! | `stats.rs` | what an engine reports of its own ([`crate::MessageCentricStats`], [`crate::SimStats`]) | below the counters |
//! | `adapt.rs` | the adaptive `auto`: which policy runs now, what its controller did ([`crate::AdaptiveStats`]) | above the policies |
//! | `choices/`, `placement.rs`, `sleepers.rs`, `balance_round.rs`, `workers.rs` | pieces several engines share | above the runtime |
//! | `actor_centric/`, `message_centric/`, `sim/` | the engines, each behind the runtime's boundary (`runtime/boundary.rs`) | above the runtime |
//! | `dispatch.rs` | a running engine, whichever it is: the calls a `System` makes | above the engines |
//!
//! An engine is started from a [`Config`](crate::Config) whose `engine` names it. It implements
//! the runtime's boundary: [`EngineCore`](crate::runtime::EngineCore), and one of
//! [`TaskQueues`](crate::runtime::TaskQueues) (it queues runnable actors) or
//! [`LetterQueues`](crate::runtime::LetterQueues) (it queues messages). Which policies an
//! engine can run is declared by [`EngineKind::supports`](kind::EngineKind::supports) and
//! checked when the configuration is validated.

pub(crate) mod actor_centric;
pub(crate) mod adapt;
pub(crate) mod balance_round;
pub(crate) mod choices;
pub(crate) mod dispatch;
pub(crate) mod gather;
pub(crate) mod kind;
pub(crate) mod message_centric;
pub(crate) mod placement;
pub(crate) mod sim;
pub(crate) mod sleepers;
pub(crate) mod stats;
pub(crate) mod workers;
