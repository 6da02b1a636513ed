//! The part of every actor cell that does not depend on the actor's type ([`CellBase`]), and what
//! only reads it: compiled once, not once per actor type
//! (docs/decisions/0072-one-cell-code-for-every-actor-type.md).

use super::watch::Exit;
use super::{bound, Extras, FailureSink, Parent, Pipes};
use crate::runtime::exec::Exec;
use crate::runtime::id::ActorId;
use crate::runtime::options::SpawnOptions;
use crate::runtime::stop_reason::StopReason;
use crate::runtime::task::{Header, TaskRef};
use crate::runtime::Runtime;
use std::sync::Arc;

/// The fields of a cell that do not depend on the actor's type, first in every [`ActorCell`].
///
/// What only reads or writes these is written once, as methods here, instead of once per actor
/// type: every actor type a program spawns instantiates `ActorCell<B>`'s methods, and the
/// stopping, supervision and watch paths, which never touch the mailbox's messages or the state,
/// were two fifths of that code (docs/decisions/0072-one-cell-code-for-every-actor-type.md).
#[repr(C)]
pub(crate) struct CellBase {
    pub(super) header: Header,
    /// A bounded mailbox's bookkeeping; `None` (unbounded) costs a received message one test of
    /// this field.
    pub(super) bound: Option<bound::SharedBound>,
    /// A send is a plain push into the mailbox: the actor is unbounded and its mailbox queues
    /// (the actor-centric engine). The one test a send makes before it pushes (beside `bound`,
    /// in the same line); a bounded actor or a direct mailbox takes the other way
    /// (`Deliver::deliver`).
    pub(super) plain_send: bool,
    /// Spawned with a name (kept in the runtime's name table).
    pub(super) named: bool,
    /// Registered under a name (`System::register`): set under the live registry's lock.
    pub(super) registered: crate::sync::AtomicBool,
    /// Where a failure goes, if a parent spawned this actor.
    pub(super) sink: Option<FailureSink>,
    /// The `started` hook has run (or the actor has been built and started by its first
    /// activation). Written once, by that activation; read at the start of each activation,
    /// which reads this line anyway. Relaxed: only the holder of the schedule touches it, and
    /// the mailbox protocol orders activations.
    pub(super) started: crate::sync::AtomicBool,
    pub(super) runtime: Arc<Runtime>,
    /// The raw id of the actor that spawned this one, 0 if none did (no actor has id 0).
    pub(super) parent: u64,
    /// What the actor keeps only once it uses a feature (its own timers, its piped futures):
    /// null until then (`extras.rs`). Touched only by the activation holding the schedule, and by
    /// `terminate`; not in `inner`, because a handler reaches it through its context while the
    /// activation borrows `inner`. In the line written (almost) only at spawn: the per-message
    /// null test of an actor that uses no feature costs no miss.
    pub(super) extras: std::cell::UnsafeCell<Option<Box<Extras>>>,
    /// Why the actor stopped, once it has (`watch.rs`).
    pub(super) exit: Exit,
}

impl CellBase {
    #[inline]
    pub(super) fn task(&self) -> TaskRef {
        TaskRef::from_header(&self.header)
    }

    #[inline]
    pub(crate) fn id(&self) -> ActorId {
        self.header.id
    }

    /// Whether the current instance has been built and started (see the field).
    #[inline(always)]
    pub(super) fn is_started(&self) -> bool {
        self.started.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Marks the current instance started, or (a supervised restart) not yet.
    pub(super) fn set_started(&self, started: bool) {
        self.started
            .store(started, std::sync::atomic::Ordering::Relaxed);
    }

    /// The actor that spawned this one, if an actor did.
    #[inline]
    pub(crate) fn parent(&self) -> Option<ActorId> {
        (self.parent != 0).then(|| ActorId::from_raw(self.parent))
    }

    /// Whether the actor is a hub.
    pub(crate) fn is_hub(&self) -> bool {
        self.runtime.core().is_hub(self.task())
    }

    /// The actor's pending piped futures, the set made on first use.
    ///
    /// # Safety
    /// The caller holds the actor's schedule (it runs the actor's activation), and drops the
    /// reference before anything else can reach the set (it is not reentrant: no user code runs
    /// while it is borrowed).
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn pipes(&self) -> &mut Pipes {
        // SAFETY: the caller's contract: only the holder of the schedule touches the set.
        unsafe { &mut self.extras().pipes }
    }

    /// This actor as the parent of a child it spawns: its failures go to `child_failed`.
    pub(crate) fn failure_sink(&self) -> Parent {
        (self.id(), FailureSink::Hook)
    }

    /// The actor's name, if it was spawned with one.
    pub(super) fn name(&self) -> Option<Arc<str>> {
        self.named
            .then(|| self.runtime.shared.name_of(self.id()))
            .flatten()
    }

    /// The actor's extras, made on first use.
    ///
    /// # Safety
    /// The caller holds the actor's schedule (it runs the actor's activation, or terminates it)
    /// and drops the reference before anything else can reach the extras (no user code runs while
    /// it is borrowed).
    #[allow(clippy::mut_from_ref)]
    pub(super) unsafe fn extras(&self) -> &mut Extras {
        // SAFETY: the caller's contract: only the holder of the schedule touches them.
        unsafe { (*self.extras.get()).get_or_insert_with(Box::default) }
    }

    /// The extras if the actor ever used a feature (no allocation otherwise).
    ///
    /// # Safety
    /// As for [`extras`](Self::extras).
    #[allow(clippy::mut_from_ref)]
    #[inline(always)]
    pub(super) unsafe fn extras_if_any(&self) -> Option<&mut Extras> {
        // SAFETY: the caller's contract.
        unsafe { (*self.extras.get()).as_deref_mut() }
    }

    /// A stopping actor's failure (if it is one) is recorded and told to its parent, and the
    /// actor leaves the live-actor registry, its names with it. Called by `terminate` once the
    /// state is dropped and the mailbox drained; `actor_type` names the actor in the failure.
    #[inline]
    pub(super) fn unregister_stopped(&self, reason: &StopReason, actor_type: &'static str) {
        if reason.is_failure() {
            self.report_failure(reason, actor_type);
        }
        let shared = &self.runtime.shared;
        shared.unregister(self.id(), self.named);
        if self.registered.load(std::sync::atomic::Ordering::Relaxed) {
            // Relaxed: set under the live registry's shard lock, which `unregister` took after.
            shared.directory.remove_actor(self.id());
        }
    }

    /// The part of a spawn that does not depend on the actor's type: the engine's state for the
    /// task, the execution policy (`exec`: the policy and whether `auto` watches the actor), the
    /// name, the live-actor registry. `false`: the system has shut down and refused the actor
    /// (nothing was registered; its name is in the table until `stillborn` forgets it).
    ///
    /// # Safety
    /// The cell was just made: no other thread can see it yet, and it stays in its `Arc`
    /// allocation until dropped there.
    #[inline]
    pub(super) unsafe fn register_spawned(
        &self,
        options: &SpawnOptions,
        from: Option<&Exec>,
        (policy, watched): (crate::exec_policy::ExecPolicy, bool),
    ) -> bool {
        let runtime = &self.runtime;
        // SAFETY: the caller's contract.
        unsafe { runtime.core().init_task(&self.header, options, from) };
        self.header.exec.init(policy, watched);
        if let Some(name) = &options.name {
            runtime.shared.name(self.id(), name);
        }
        runtime.shared.register(self.task(), from)
    }

    /// [`unregister_stopped`](Self::unregister_stopped) for a stop that may be a failure.
    #[cold]
    #[inline(never)]
    pub(super) fn report_failure(&self, reason: &StopReason, actor_type: &'static str) {
        let Some(failure) = self.note_failure(reason, actor_type) else {
            return;
        };
        // A sink is set exactly when a parent spawned the actor.
        let told = match (self.sink, self.parent()) {
            (Some(FailureSink::Hook), Some(parent)) => {
                self.runtime.shared.tell_parent(parent, failure.clone())
            }
            (Some(FailureSink::Supervisor), _) => true,
            _ => false,
        };
        if !told {
            tracing::warn!(actor = %failure.actor, name = ?failure.name, kind = failure.actor_type, message = %failure.message, "actor failed");
        }
    }
}
