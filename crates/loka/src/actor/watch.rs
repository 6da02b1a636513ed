//! Death watch and links (docs/fault-tolerance.md): [`Context::watch_with`] turns another actor's
//! stop into a message of the watcher's own type, [`Context::link`] ties two actors' failures
//! together, [`ActorRef::watch`] lets a plain thread or a future wait for a stop.
//!
//! The cell's side (where watchers are kept, how they are told) is in `runtime/cell/watch.rs`.

use super::ask::{self, Pending};
use super::{Actor, ActorId, ActorRef, Context, StopReason};
use crate::runtime::cell::Notice;
use std::sync::Arc;

impl<A: Actor> Context<A> {
    /// Watches `other`: when it stops, `message` turns the [`StopReason`] into a message of this
    /// actor's own type, which is queued in this actor's mailbox and handled like any other.
    ///
    /// * Watching an actor that has already stopped queues the message at once.
    /// * Watching the same actor again replaces the earlier watch (one message, from the latest
    ///   `message`).
    /// * After [`unwatch`](Self::unwatch) no message comes, even one already queued.
    /// * If this actor stops first, the watch is forgotten: `other` drops it.
    /// * A watch keeps neither actor alive: `other` may still stop as unreferenced (reason
    ///   [`StopReason::Normal`]).
    ///
    /// ```
    /// use loka::{Actor, ActorRef, Context, StopReason, System};
    /// use std::sync::{Arc, Mutex};
    ///
    /// struct Worker;
    /// impl Actor for Worker {
    ///     type Msg = ();
    ///     fn handle(&mut self, ctx: &mut Context<Self>, _: ()) { ctx.stop() }
    /// }
    ///
    /// enum Msg { Watch(ActorRef<()>), Died(StopReason) }
    /// struct Watcher(Arc<Mutex<Vec<StopReason>>>);
    /// impl Actor for Watcher {
    ///     type Msg = Msg;
    ///     fn handle(&mut self, ctx: &mut Context<Self>, msg: Msg) {
    ///         match msg {
    ///             Msg::Watch(worker) => ctx.watch_with(&worker, Msg::Died),
    ///             Msg::Died(reason) => self.0.lock().unwrap().push(reason),
    ///         }
    ///     }
    /// }
    ///
    /// let system = System::builder().workers(2).build().unwrap();
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let watcher = system.spawn(Watcher(Arc::clone(&seen)));
    /// let worker = system.spawn(Worker);
    /// watcher.send(Msg::Watch(worker.clone())).unwrap();
    /// system.run_until_idle();
    /// worker.send(()).unwrap(); // the worker stops itself
    /// system.run_until_idle();
    /// assert_eq!(*seen.lock().unwrap(), [StopReason::Normal]);
    ///     /// ```
    pub fn watch_with<M: Send + 'static>(
        &mut self,
        other: &ActorRef<M>,
        message: impl FnOnce(StopReason) -> A::Msg + Send + 'static,
    ) {
        let target = Arc::clone(&other.cell).watchable();
        self.inner_mut().watch_with(target, Box::new(message));
    }

    /// Stops watching `other`: no message of the watch arrives after this call, even one already
    /// queued. Does nothing if this actor does not watch `other`.
    pub fn unwatch<M: Send + 'static>(&mut self, other: &ActorRef<M>) {
        self.inner_mut().unwatch(other.id());
    }

    /// Links this actor and `other` (Erlang's `link`): when either *fails* (a panic, or a failure
    /// reaching it through another link), the other is stopped with
    /// [`StopReason::Linked`], unless it traps exits ([`trap_exits`](Self::trap_exits)), and so
    /// on along its own links. A normal stop, a stop signal or the shutdown does not travel.
    ///
    /// The stop reaches the other actor through its mailbox, like a stop signal: messages queued
    /// before it are handled first. Linking to an actor that has already stopped acts at once
    /// as its stop would have. Linking twice, or linking to itself, does nothing. A link keeps
    /// neither actor alive.
    pub fn link<M: Send + 'static>(&mut self, other: &ActorRef<M>) {
        let peer = Arc::clone(&other.cell).watchable();
        self.inner_mut().link(peer);
    }

    /// Removes the link with `other` on both sides. A failure of `other` already on its way may
    /// still arrive before `other` hears of the unlink, and is then ignored: after this call
    /// nothing of `other`'s stop reaches this actor.
    pub fn unlink<M: Send + 'static>(&mut self, other: &ActorRef<M>) {
        self.inner_mut().unlink(other.id());
    }

    /// Traps exits: from now on the stop of a linked actor, whatever its reason, does not stop
    /// this actor; `message` turns it into a message instead, handled like any other (with the
    /// linked actor's id and reason). The link is gone once its actor stopped. Replaces an
    /// earlier `trap_exits`.
    pub fn trap_exits(
        &mut self,
        message: impl Fn(ActorId, StopReason) -> A::Msg + Send + Sync + 'static,
    ) {
        self.inner_mut().trap_exits(Some(Arc::new(message)));
    }

    /// Stops trapping exits: a linked actor's failure stops this actor again.
    pub fn untrap_exits(&mut self) {
        self.inner_mut().trap_exits(None);
    }
}

impl<M: Send + 'static> ActorRef<M> {
    /// Waits for the actor to stop, from a plain thread ([`Pending::wait`]) or a future
    /// (`.await`): the reply is its [`StopReason`]. Resolves at once for an actor that has
    /// already stopped. Under [`crate::System::shutdown`] every live actor's watch resolves
    /// with [`StopReason::Killed`]. Do not wait on it inside a handler; use
    /// [`Context::watch_with`] there.
    ///
    /// The watch does not keep the actor alive. A dropped `Pending` is forgotten the next time
    /// the actor adds a watcher, or when it stops.
    pub fn watch(&self) -> Pending<StopReason> {
        let (reply, mut pending, abandoned) = ask::oneshot_probed();
        let runtime = self.cell.system_runtime();
        if runtime.wants_wait_notice() {
            pending.notify = Some(Arc::clone(runtime));
        }
        let target = Arc::clone(&self.cell).watchable();
        target.add_watcher(Box::new(ThreadNotice {
            reply: Some(reply),
            abandoned: Box::new(abandoned),
        }));
        pending
    }
}

/// A plain thread's (or a future's) watch: a one-shot reply.
struct ThreadNotice {
    reply: Option<ask::ReplyTo<StopReason>>,
    /// Whether the `Pending` was dropped.
    abandoned: Box<dyn Fn() -> bool + Send>,
}

impl Notice for ThreadNotice {
    fn key(&self) -> Option<(ActorId, u64)> {
        None
    }

    fn is_gone(&self) -> bool {
        (self.abandoned)()
    }

    fn fire(mut self: Box<Self>, _target: ActorId, reason: StopReason) {
        if let Some(reply) = self.reply.take() {
            reply.send(reason);
        }
    }
}
