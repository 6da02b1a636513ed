//! The engine boundary: what the runtime and the actor layer ask of the engine that runs their
//! actors. Nothing else of an engine is visible to them.
//!
//! Engines differ in *what they queue*, so the boundary is split by that:
//!
//! | interface | who implements it | methods |
//! |---|---|---|
//! | [`EngineCore`] | every engine | 8: task set-up, hub marks, timers, location, waits, clock |
//! | [`TaskQueues`] | engines that queue runnable actors (actor-centric, simulation) | 2 |
//! | [`LetterQueues`] | engines that queue messages (message-centric) | 6 |
//!
//! An engine implements the core and exactly one delivery interface, and hands both to the
//! runtime once, when the system starts, as a [`Boundary`]. No method of any interface is
//! unreachable for the engines that implement it; the defaults of [`EngineCore`] are what an
//! engine that runs by itself on the wall clock answers.
//!
//! Which delivery interface a cell uses follows from its mailbox: a cell spawned under an engine
//! that queues letters gets a *direct* mailbox (`runtime/cell/direct.rs`) and posts letters; any
//! other cell's mailbox reports its idle → scheduled transition and the actor is queued as a
//! task. So the choice is made once, at spawn, from the boundary, and the send path reads the
//! interface it needs without testing which one it has ([`Runtime::tasks`](super::Runtime::tasks),
//! [`Runtime::letters`](super::Runtime::letters)).

use super::letter::{self, Letter, Slot};
use super::location::Location;
use super::options::SpawnOptions;
use super::{Exec, Header, TaskRef};
use std::ptr::NonNull;
use std::sync::Arc;

/// What every engine implements: setting up a task's scheduling state, hub marks, timers,
/// where an actor is, and the engine's relation to the clock and to threads that wait.
pub(crate) trait EngineCore: Send + Sync + 'static {
    /// Gives a new actor's per-actor scheduling state ([`Header::sched`]) its initial value.
    ///
    /// # Safety
    /// Called once per task, before the task is shared with any other thread. `from` is the
    /// worker spawning it (`None` for a plain thread).
    unsafe fn init_task(&self, header: &Header, options: &SpawnOptions, from: Option<&Exec>);

    /// Sets or clears the actor's hub mark; returns whether it changed.
    fn set_hub(&self, task: TaskRef, hub: bool) -> bool;

    /// Whether the actor is a hub.
    fn is_hub(&self, task: TaskRef) -> bool;

    /// A timer was armed in `shard` with an earlier deadline than any other there: whoever sleeps
    /// until that shard's next deadline (its worker) must wake and sleep again, shorter.
    fn timer_armed(&self, shard: usize);

    /// Where the actor is bound or last ran, and its state where the engine knows it better than
    /// the mailbox does (introspection: [`crate::System::actors`]). A snapshot, from any thread.
    fn locate(&self, task: TaskRef) -> Location;

    /// Whether [`waiting`](Self::waiting) must be called when a plain thread starts waiting for
    /// a reply (read once, when a [`Runtime`](super::Runtime) handle is made). Engines that run
    /// by themselves say no and cost nothing.
    fn wants_wait_notice(&self) -> bool {
        false
    }

    /// A plain thread starts waiting for a reply ([`crate::Pending`]) or for room in a bounded
    /// mailbox: an engine that runs only when someone waits (the simulation) runs now. May also
    /// be called from an actor's handler (a bounded mailbox found full), where it must do nothing
    /// harmful. An engine that runs by itself has nothing to do.
    fn waiting(&self) {}

    /// The engine's own clock in nanoseconds, if it keeps virtual time (the simulation): timers
    /// then run on it (`runtime/clock.rs`). `None`: wall-clock time.
    fn virtual_now_ns(&self) -> Option<u64> {
        None
    }

    /// An engine with virtual time: the time the running activation has reached after taking
    /// `processed` envelopes and declaring `charged_ns` of compute, which its gulp's time limit
    /// reads (`runtime/budget.rs`). `None`: [`virtual_now_ns`](Self::virtual_now_ns).
    fn activation_clock_ns(&self, _processed: usize, _charged_ns: u64) -> Option<u64> {
        None
    }
}

/// What an engine that queues runnable actors implements (actor-centric, simulation): a cell
/// hands it an actor when the actor has something to do.
pub(crate) trait TaskQueues: EngineCore {
    /// Queues a new actor for its first activation. `from` is the worker that spawned it (`None`
    /// for a plain thread).
    fn schedule_spawned(&self, task: TaskRef, options: &SpawnOptions, from: Option<&Exec>);

    /// A send found `task` idle and made it runnable: queue it. Called exactly once per idle →
    /// scheduled transition of its mailbox, from any thread.
    fn schedule_woken(&self, task: TaskRef);

    /// Whether an actor waits to run on the calling thread's worker that has not had a turn
    /// there since it was woken, spawned or pushed there (actors that used their budget and wait
    /// behind the others do not count): a gulp ends for it (`runtime/budget.rs`). A hint, read
    /// once per budget of a gulping activation; `false` off the engine's workers.
    fn woken_waiting(&self) -> bool {
        false
    }
}

/// What an engine that queues messages implements (message-centric): actors get *direct*
/// mailboxes, and their envelopes come to the engine as [`Letter`]s, sealed where they will wait.
pub(crate) trait LetterQueues: EngineCore {
    /// Queues a letter for `task`, sealed by `seal` straight where it will wait (it is called at
    /// most once, with a place to [`Letter::write_at`]); `false`, without calling `seal`, if
    /// the actor has closed (see [`close`](Self::close)). `append`: the letter may join the
    /// calling thread's running gulp instead of the queue.
    fn post_sealed(
        &self,
        task: TaskRef,
        append: bool,
        seal: &mut dyn FnMut(NonNull<Letter>),
    ) -> bool;

    /// Where a letter to `task` sent from the calling thread goes: a place at the end of the
    /// gulp this thread's worker is processing, if `task` is one of its actors (written in place
    /// by the caller), a place in its queue whose lock is held until
    /// [`finish_post`](Self::finish_post) ([`Slot::Queued`]), or [`Slot::Elsewhere`] for
    /// [`post_sealed`](Self::post_sealed).
    fn append_slot(&self, task: TaskRef) -> Slot;

    /// [`append_slot`](Self::append_slot) for a letter that must come after every letter already
    /// queued for `task` (a stop, the last handle's signal): it may join the gulp only while the
    /// actor's queue holds nothing. A method of its own, so that a message's path carries no
    /// extra argument.
    fn append_slot_after_queued(&self, task: TaskRef) -> Slot;

    /// Publishes the letter to `task` written in a [`Slot::Queued`] place and releases its
    /// queue.
    fn finish_post(&self, task: TaskRef);

    /// The actor `task` has stopped: refuse its later letters and queue its release letter (a
    /// `release` letter with no envelope, which frees the actor) behind those already queued;
    /// `None` for an actor that never lived (refused at spawn: no letter, nothing to free).
    /// The engine writes the letter where it goes: built by the caller and moved here, it was
    /// read back while its stores were still in flight.
    fn close(&self, task: TaskRef, release: Option<&'static letter::LetterVtable>);

    /// Whether letters to `task` are queued (behind the one being delivered). Called by the
    /// actor's own delivery, rarely (an actor about to stop because no reference is left).
    fn has_queued(&self, task: TaskRef) -> bool;
}

/// How an engine delivers work: the delivery interface it implements.
#[derive(Clone)]
pub(crate) enum Delivery {
    /// It queues runnable actors.
    Tasks(Arc<dyn TaskQueues>),
    /// It queues letters; actors get direct mailboxes.
    Letters(Arc<dyn LetterQueues>),
}

/// An engine as the runtime holds it: its core and its delivery interface, chosen once when the
/// system starts.
#[derive(Clone)]
pub(crate) struct Boundary {
    pub(crate) core: Arc<dyn EngineCore>,
    pub(crate) delivery: Delivery,
}

impl Boundary {
    /// The boundary of an engine that queues runnable actors.
    pub(crate) fn tasks<E: TaskQueues>(engine: Arc<E>) -> Self {
        Boundary {
            core: engine.clone(),
            delivery: Delivery::Tasks(engine),
        }
    }

    /// The boundary of an engine that queues letters.
    pub(crate) fn letters<E: LetterQueues>(engine: Arc<E>) -> Self {
        Boundary {
            core: engine.clone(),
            delivery: Delivery::Letters(engine),
        }
    }
}
