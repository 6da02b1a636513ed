//! The type-erased task every engine schedules: a pointer to the [`Header`] at the start of an
//! actor cell, with a vtable to run it.
//!
//! Lifetime: a task is only queued while its mailbox says "scheduled", and an actor cannot terminate
//! while scheduled (termination happens inside an activation, or at shutdown after every worker has
//! stopped); the cell's *life reference* (see [`super::cell`]) therefore keeps every queued task
//! alive, and run queues can hold plain pointers.

use super::exec::Exec;
use super::id::ActorId;
use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::ptr::NonNull;

/// What an activation tells the engine. Must not be dropped: each outcome obliges the engine to do
/// something different with the task.
#[must_use = "the engine must re-queue a task that answers Requeue, and never touch a Stopped one"]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RunOutcome {
    /// The mailbox is empty; the actor is idle until the next send wakes it.
    Idle,
    /// Messages remain; the actor is still scheduled and the engine must queue it again.
    Requeue,
    /// The next message is claimed but its sender has not finished writing it (the sender was
    /// preempted mid-send). The actor is still scheduled and must be queued again, but running it
    /// at once would only spin on the same slot while the sender waits for a core.
    Waiting,
    /// The actor terminated; the task must not be touched again.
    Stopped,
    /// Only from [`TaskRef::run_holding`]: the mailbox was empty, and the actor did *not* go idle.
    /// It is still scheduled, in no queue: the engine holds it and must later either run it again
    /// (a message came) or release it ([`TaskRef::release`]). A sender meanwhile only claims a slot
    /// and schedules nothing, so a ping-pong pair saves the idle compare-and-swap and the wake-up
    /// on every message (docs/decisions/0036-hold-drained-actor.md).
    Drained,
}

/// Words of per-actor state that belong to the engine (and its policy), not to the runtime: where
/// the actor lives and ran, its hints, the counters of automatic rules. The runtime reserves the
/// space in every header; the engine gives it a type with [`SchedWords::init`] at spawn and reads it
/// through [`SchedWords::get`]. One engine, one type: a system runs one engine.
#[repr(C, align(8))]
pub(crate) struct SchedWords(UnsafeCell<MaybeUninit<[u64; SCHED_WORDS]>>);

/// Size of [`SchedWords`] in `u64`s.
#[cfg(not(loom))]
pub(crate) const SCHED_WORDS: usize = 4;
/// Size of [`SchedWords`] in `u64`s (loom's atomics carry model state and are larger).
#[cfg(loom)]
pub(crate) const SCHED_WORDS: usize = 32;

/// A type an engine may keep in [`SchedWords`]: fits, is aligned to at most 8, is `Sync` (senders
/// and workers read it concurrently, so all its fields are atomics) and needs no drop.
///
/// # Safety
/// `size_of::<Self>() <= 8 * SCHED_WORDS`, `align_of::<Self>() <= 8`, and `Self` has no drop glue.
pub(crate) unsafe trait SchedState: Sync + Sized {}

impl SchedWords {
    pub(crate) const fn uninit() -> Self {
        SchedWords(UnsafeCell::new(MaybeUninit::uninit()))
    }

    /// Gives the words their type and initial value. Called once, by the engine, before the task is
    /// shared with any other thread.
    ///
    /// # Safety
    /// No other thread can see the task yet, and every later [`get`](Self::get) uses the same `S`.
    pub(crate) unsafe fn init<S: SchedState>(&self, value: S) {
        // SAFETY: `SchedState` guarantees size and alignment fit; nobody else reads the words yet
        // (caller's contract), so this write races with nothing.
        unsafe { self.0.get().cast::<S>().write(value) }
    }

    /// The engine's per-actor state.
    ///
    /// # Safety
    /// [`init`](Self::init) was called with the same `S`.
    #[inline]
    pub(crate) unsafe fn get<S: SchedState>(&self) -> &S {
        // SAFETY: initialised as an `S` (caller's contract); `S: Sync` is all atomics, so shared
        // references from several threads are fine.
        unsafe { &*self.0.get().cast::<S>() }
    }
}

// SAFETY: the words hold a `SchedState` (Sync) once initialised, and are only written by `init`
// before the task is shared.
unsafe impl Sync for SchedWords {}

/// The part of every actor cell the engines see, whatever the actor type.
pub(crate) struct Header {
    vtable: &'static Vtable,
    pub(crate) id: ActorId,
    /// The engine's per-actor state.
    pub(crate) sched: SchedWords,
    /// The actor's execution policy and, for a `thread` actor, its dedicated thread.
    pub(crate) exec: super::exec_policy::ExecSlot,
}

impl Header {
    pub(crate) fn new(vtable: &'static Vtable, id: ActorId) -> Self {
        Header {
            vtable,
            id,
            sched: SchedWords::uninit(),
            exec: super::exec_policy::ExecSlot::new(),
        }
    }

    /// `size_of` the actor's state (its type's, fixed at compile time).
    pub(crate) fn state_bytes(&self) -> usize {
        self.vtable.state_bytes
    }

    /// The bytes of one message's slot in the actor's mailbox (fixed at compile time).
    pub(crate) fn slot_bytes(&self) -> usize {
        self.vtable.slot_bytes
    }
}

/// What a task can do, per actor type.
pub(crate) struct Vtable {
    /// Runs one activation; with `hold`, an emptied mailbox answers [`RunOutcome::Drained`]
    /// instead of going idle. One function for both: each is the actor type's largest (its
    /// handler is inlined in it), and a second copy made every actor type's code a fifth larger
    /// (docs/decisions/0072-one-cell-code-for-every-actor-type.md). Safety: the caller holds the
    /// schedule (see the mailbox protocol).
    pub(crate) run: unsafe fn(NonNull<Header>, &Exec, bool) -> RunOutcome,
    /// Ends a drained actor's hold: goes idle unless a message came (then `false`: the actor is
    /// still scheduled and must run). Safety: the caller holds the schedule of a drained actor.
    pub(crate) release: unsafe fn(NonNull<Header>) -> bool,
    /// Terminates the actor at shutdown. Safety: no activation runs any more.
    pub(crate) shutdown: unsafe fn(NonNull<Header>),
    /// Reads what introspection shows of the actor. Safety: the cell is alive.
    pub(crate) info: unsafe fn(NonNull<Header>) -> CellInfo,
    /// A strong reference to the cell, to stop and describe the actor from a shutdown (see
    /// [`TaskRef::control`]). Safety: the cell is alive.
    pub(crate) control: unsafe fn(NonNull<Header>) -> std::sync::Arc<dyn Control>,
    /// `size_of` the actor's state: the simulation's memory model prices it (static data, read by
    /// no real engine).
    pub(crate) state_bytes: usize,
    /// The bytes of one message's slot in the actor's mailbox (`mailbox::slot_bytes`): the
    /// simulation prices a message's transfer by it (static data, read by no real engine).
    pub(crate) slot_bytes: usize,
    /// The actor that spawned this one, if an actor did. Safety: the cell is alive.
    pub(crate) parent: unsafe fn(NonNull<Header>) -> Option<super::id::ActorId>,
}

/// A schedulable actor: a pointer to the [`Header`] at the start of an actor cell.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct TaskRef(NonNull<Header>);

// SAFETY: a TaskRef is a token moved between threads through run queues; the cell it points to is
// `Sync`, and only the thread holding the schedule dereferences it mutably (mailbox protocol).
unsafe impl Send for TaskRef {}
// SAFETY: as above; sharing the pointer value itself is harmless.
unsafe impl Sync for TaskRef {}

impl TaskRef {
    /// The task of a cell whose first field is `header`.
    pub(crate) fn from_header(header: &Header) -> TaskRef {
        TaskRef(NonNull::from(header))
    }

    /// Runs one activation on the worker described by `exec`.
    ///
    /// # Safety
    /// The caller must hold this task's schedule: it was taken from a run queue (or handed back by
    /// [`RunOutcome::Requeue`]) and nobody else runs it.
    #[inline]
    pub(crate) unsafe fn run(self, exec: &Exec) -> RunOutcome {
        // SAFETY: queued tasks are alive (module docs); the caller holds the schedule.
        unsafe { (self.0.as_ref().vtable.run)(self.0, exec, false) }
    }

    /// [`Self::run`] for an engine that holds drained actors ([`RunOutcome::Drained`]).
    ///
    /// # Safety
    /// As [`Self::run`].
    #[inline]
    pub(crate) unsafe fn run_holding(self, exec: &Exec) -> RunOutcome {
        // SAFETY: as `run`.
        unsafe { (self.0.as_ref().vtable.run)(self.0, exec, true) }
    }

    /// Ends the hold of an actor whose activation answered [`RunOutcome::Drained`]: `true` if it
    /// went idle, `false` if a message came meanwhile (it is still scheduled: run it).
    ///
    /// # Safety
    /// The caller holds this drained actor's schedule.
    #[inline]
    pub(crate) unsafe fn release(self) -> bool {
        // SAFETY: forwarded contract.
        unsafe { (self.0.as_ref().vtable.release)(self.0) }
    }

    /// The task whose header `ptr` points to: the inverse of [`Self::as_ptr`], for a task kept
    /// as a raw pointer in an atomic slot (the stall guard's next slot).
    #[inline]
    pub(crate) fn from_ptr(ptr: NonNull<Header>) -> TaskRef {
        TaskRef(ptr)
    }

    /// The pointer to the header (the cell's first field).
    #[inline]
    pub(crate) fn as_ptr(self) -> NonNull<Header> {
        self.0
    }

    /// The header: id and the engine's per-actor state.
    #[inline]
    pub(crate) fn header(&self) -> &Header {
        // SAFETY: a TaskRef handed to the engine points to a live cell: queued tasks are kept alive
        // by the life reference, and a sender scheduling one holds a reference to the actor.
        unsafe { self.0.as_ref() }
    }

    /// The engine's per-actor state.
    ///
    /// # Safety
    /// The engine initialised the task's [`SchedWords`] as an `S`.
    #[inline]
    pub(crate) unsafe fn sched<S: SchedState>(&self) -> &S {
        // SAFETY: forwarded contract.
        unsafe { self.header().sched.get::<S>() }
    }

    /// What introspection shows of the actor ([`crate::System::actors`]).
    ///
    /// # Safety
    /// The task is alive: registered, and kept so (the caller holds its registry shard's lock).
    pub(crate) unsafe fn info(self) -> CellInfo {
        // SAFETY: forwarded contract.
        unsafe { (self.0.as_ref().vtable.info)(self.0) }
    }

    /// User messages queued in the actor's mailbox (best effort, as `ActorRef::mailbox_len`).
    ///
    /// # Safety
    /// The task is alive: registered, or scheduled and its schedule held by the caller (a
    /// scheduled actor is not freed).
    pub(crate) unsafe fn queued(self) -> usize {
        // SAFETY: forwarded contract.
        unsafe { self.info() }.mailbox_len
    }

    /// The actor that spawned this one, if an actor did.
    ///
    /// # Safety
    /// The task is alive (registered, looked at under its registry shard's lock).
    pub(crate) unsafe fn parent(self) -> Option<super::id::ActorId> {
        // SAFETY: forwarded contract.
        unsafe { (self.0.as_ref().vtable.parent)(self.0) }
    }

    /// Terminates the actor at shutdown.
    ///
    /// # Safety
    /// No activation runs any more, and the task is still registered (alive).
    pub(crate) unsafe fn shutdown(self) {
        // SAFETY: forwarded contract.
        unsafe { (self.0.as_ref().vtable.shutdown)(self.0) }
    }

    /// A strong reference to the actor's cell that outlives the caller's proof of life (a
    /// graceful shutdown takes it under the registry's lock, then sends the stop signal without
    /// the lock).
    ///
    /// # Safety
    /// The cell is alive (e.g. still registered, looked at under the registry's lock).
    pub(crate) unsafe fn control(self) -> std::sync::Arc<dyn Control> {
        // SAFETY: forwarded contract.
        unsafe { (self.0.as_ref().vtable.control)(self.0) }
    }
}

/// One actor's part of an [`crate::ActorInfo`]: read from its cell, racing with its senders and
/// its activation (every field is a snapshot of an atomic, or written only at spawn).
pub(crate) struct CellInfo {
    /// The actor's Rust type.
    pub(crate) actor_type: &'static str,
    /// Spawned with a name (a label in the runtime's name table).
    pub(crate) named: bool,
    /// User messages queued (see `ActorRef::mailbox_len`).
    pub(crate) mailbox_len: usize,
    /// The mailbox is idle: not scheduled, not running. Meaningless for a direct mailbox.
    pub(crate) idle: bool,
    /// The mailbox has closed: the actor is stopping.
    pub(crate) closed: bool,
    /// The actor's messages travel through the engine's queues (message-centric engine).
    pub(crate) direct: bool,
}

/// What a shutdown does with an actor whatever its type: a strong reference to its cell, taken
/// while the actor is known to be alive (see [`crate::runtime::TaskRef::control`]).
pub(crate) trait Control: Send + Sync {
    /// Queues the stop signal behind the messages already queued; `false` if it has stopped.
    fn stop_signal(&self) -> bool;
    /// Its name (if spawned with one) and its Rust type name.
    fn describe(&self) -> (Option<String>, &'static str);
    /// Queues a `Start` envelope: a supervisor's order to a supervised child waits behind the
    /// messages already queued (`supervised/`). `false` if it has stopped.
    fn start_signal(&self) -> bool;
    /// Queues a child's failure for the `child_failed` hook; `false` if it has stopped.
    fn child_failed(&self, failure: crate::runtime::ActorFailure) -> bool;
}
