//! # loka — an actor runtime that knows the machine it runs on
//!
//! Actors are isolated state plus a typed message handler ([`Actor`]). They talk through
//! [`ActorRef`]s with asynchronous sends that never block; messages from one sender reach one
//! receiver in order; one actor's handler never runs concurrently with itself. A [`System`] runs
//! actors on worker threads under a scheduler policy chosen by configuration ([`policy`]).
//!
//! ```
//! use loka::{Actor, Context, System};
//!
//! struct Greeter;
//! impl Actor for Greeter {
//!     type Msg = (String, loka::ReplyTo<String>);
//!     fn handle(&mut self, _ctx: &mut Context<Self>, (name, reply): Self::Msg) {
//!         reply.send(format!("hello, {name}"));
//!     }
//! }
//!
//! let system = System::builder().workers(2).build().unwrap();
//! let greeter = system.spawn(Greeter);
//! let answer = greeter.ask(|reply| ("loka".to_owned(), reply)).unwrap().wait().unwrap();
//! assert_eq!(answer, "hello, loka");
//! ```

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod actor;
pub mod config;
mod engine;
pub mod exec_policy;
pub mod machine;
mod mailbox;
pub mod policy;
#[cfg(feature = "remote")]
pub mod remote;
mod runtime;
pub mod sim;
pub mod supervisor;
mod sync;
mod system;
pub mod telemetry;

pub use actor::{
    Actor, ActorFailure, ActorId, ActorRef, AskAsync, AskBlockingError, AskError, Async,
    AsyncActor, AsyncContext, Context, HubError, LookupError, Overflow, Pending, Placement,
    RegisterError, ReplyTo, Requirement, SendAsync, SendError, SendErrorReason, SpawnError,
    SpawnOptions, StopReason, TimerError, TimerHandle, TrySendError,
};
pub use config::{
    Config, ConfigError, EngineKind, IdleStrategy, MessageCentricConfig, ObserveError, PanicReport,
    QueueKind, SimCompute, SimConfig, StallGuard, UnknownEngine, UnknownPanicReport,
    VictimSelection,
};
pub use engine::adapt::AdaptiveStats;
pub use engine::gather::GatherStats;
pub use exec_policy::{Characteristics, ExecMode, ExecPolicy};
pub use loka_topology as topology;
pub use machine::Machine;
pub use policy::placement::PlacementStrategy;
pub use policy::PolicyKind;
pub use runtime::location::ActorState;
pub use runtime::{DeadLetter, DeadLetterReason, DEAD_LETTER_WINDOW};
pub use system::ActorInfo;
pub use system::{
    ActorTime, HandlerTime, RegisteredActor, Snapshot, TopologySnapshot, WorkerPlace,
    HANDLER_TIME_TOP,
};
#[cfg(feature = "metrics")]
pub use system::{ExportError, MetricsCollector, MetricsExporter};
pub use system::{ShutdownReport, System, SystemBuilder, UnstoppedActor};
#[cfg(unix)]
pub use system::{SignalError, StopSignal, DEFAULT_SIGNAL_GRACE};
#[cfg(unix)]
pub use system::{MIN_WATCH_MS, OBSERVE_MAX_CLIENTS};
pub use telemetry::{MessageCentricStats, SimStats, Stats, WorkerStats};
