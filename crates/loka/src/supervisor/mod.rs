//! Supervisors, Erlang/OTP style (docs/supervision.md): an actor that starts children from
//! [`ChildSpec`]s, restarts them when they fail — with a [`Strategy`], a restart intensity
//! ([`SupervisorSpec::max_restarts`]) and a per-child [`Restart`] kind — and gives up
//! ([`StopReason::Escalated`](crate::StopReason::Escalated)) when they fail too often, so that
//! its own parent hears of it. Supervisors nest into trees.
//!
//! **Restart in place.** A restarted child keeps its cell, mailbox and [`ActorId`]: every
//! [`ActorRef`] to it stays valid. Its state is rebuilt by the spec's factory; its `stopped`
//! hook runs on the old instance, `started` on the new one. The message whose handler panicked
//! is dropped (counted in [`SupervisorStats::lost`]); messages queued behind it, and those sent
//! while it restarts, are kept and handled by the new instance, in order.
//!
//! ```
//! use loka::supervisor::{ChildSpec, Strategy, SupervisorSpec};
//! use loka::{Actor, Context, ReplyTo, System};
//! use std::time::Duration;
//!
//! struct Worker { handled: u64 }
//! enum Job { Work(u64), Count(ReplyTo<u64>) }
//! impl Actor for Worker {
//!     type Msg = Job;
//!     fn handle(&mut self, _ctx: &mut Context<Self>, msg: Job) {
//!         match msg {
//!             Job::Work(0) => panic!("bad job"),
//!             Job::Work(_) => self.handled += 1,
//!             Job::Count(reply) => reply.send(self.handled),
//!         }
//!     }
//! }
//!
//! # fn main() -> Result<(), loka::supervisor::SupervisorError> {
//! let system = System::builder().workers(2).build().unwrap();
//! let spec = SupervisorSpec::new(Strategy::OneForOne)
//!     .max_restarts(3, Duration::from_secs(5))?
//!     .child(ChildSpec::new("worker", || Worker { handled: 0 }))?;
//! let supervisor = system.spawn_supervisor(spec)?;
//! let worker = supervisor.child::<Job>("worker")?;
//! worker.send(Job::Work(1)).unwrap();
//! worker.send(Job::Work(0)).unwrap(); // panics: dropped, the worker restarts in place
//! worker.send(Job::Work(2)).unwrap(); // handled by the new instance
//! assert_eq!(worker.ask(Job::Count).unwrap().wait().unwrap(), 1);
//! assert_eq!(supervisor.stats()?.lost, 1);
//! # system.shutdown();
//! # Ok(())
//! # }
//! ```
//!
//! | file | concern |
//! |---|---|
//! | this file | strategies and restart kinds |
//! | `spec.rs` | [`ChildSpec`], [`SupervisorSpec`] and how a child is spawned |
//! | `error.rs` | [`SupervisorError`] |
//! | `actor.rs` | the [`Supervisor`] actor: its children and its requests |
//! | `rounds.rs` | restarts, intensity, escalation: rounds of orders, one child at a time |
//! | `handle.rs` | [`SupervisorRef`], [`SupervisorMsg`], [`ChildInfo`], [`SupervisorStats`] |
//!
//! The child's side (suspending, stashing, obeying orders) is in the runtime
//! (`runtime/cell/supervised/`).
//!
//! [`ActorId`]: crate::ActorId
//! [`ActorRef`]: crate::ActorRef

mod actor;
mod error;
mod handle;
mod jobs;
mod rounds;
mod spec;

pub use crate::runtime::restart::Restart;
pub use actor::Supervisor;
pub use error::SupervisorError;
pub(crate) use handle::spawn_error;
pub use handle::{ChildInfo, ChildState, SupervisorMsg, SupervisorRef, SupervisorStats};
pub use spec::{ChildSpec, SupervisorSpec};

/// Which children a supervisor restarts when one fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Strategy {
    /// Only the child that failed (Erlang's `one_for_one`). For independent children, such as
    /// the workers of a pool.
    #[default]
    OneForOne,
    /// Every child (`one_for_all`): the others are suspended in reverse start order, then all
    /// are restarted in start order. For children that cannot work without each other.
    OneForAll,
    /// The child that failed and those started after it (`rest_for_one`), in the same order as
    /// `OneForAll`. For a chain where later children depend on earlier ones.
    RestForOne,
}
