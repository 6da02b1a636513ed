//! Death watch and links, the cell's side (the API is `actor/watch.rs`; docs/fault-tolerance.md).
//!
//! * **Exit word** ([`Exit`]): why the actor stopped, written once by `terminate` *before* the
//!   mailbox closes, so whoever finds the actor stopped can read the reason. One word in the
//!   cell's spawn-time line; a box only for reasons that carry text (a panic, a link).
//! * **Watch state** ([`WatchState`], in the cell's lazily made extras): the actor's watchers (told
//!   when it stops), the actors it watches (to drop notices after an unwatch, and to unwatch when
//!   it stops first), its links and its trap. An actor that never watches, is never watched and
//!   never links has no extras for it and pays nothing: no field on the send path, nothing in the
//!   activation loop.
//!
//! Every change to another actor's watch state travels as an `Envelope::Call` through that actor's
//! mailbox, so it runs inside the actor's activation, in order with its messages, and only the
//! holder of an actor's schedule ever touches its extras. A change that arrives after the actor
//! stopped (refused by its closed mailbox, or queued behind its stop and dropped unrun) is still
//! answered: the [`Unseen`] guard it travels in fires on drop with the reason from the exit word.
//! So a watch registered at any time gets exactly one notice, and a link to a stopped actor acts
//! at once.

use super::{ActorCell, Behavior, CellBase, CellContext, Continuation, Envelope};
use crate::runtime::stop_reason::StopReason;
use crate::runtime::ActorId;
use crate::sync::{AtomicUsize, ReadMut};
use std::any::Any;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

// ------------------------------------------------------------------------------------- exit word

/// The exit word's values below a pointer: the reasons without text.
const RUNNING: usize = 0;
const NORMAL: usize = 1;
const STOPPED: usize = 2;
const KILLED: usize = 3;

/// Why the actor stopped: 0 while it runs, a small constant for a reason without text, else a
/// leaked `Box<StopReason>` (aligned, so never one of the constants), freed with the cell.
pub(crate) struct Exit(AtomicUsize);

impl Exit {
    pub(super) fn new() -> Self {
        Exit(AtomicUsize::new(RUNNING))
    }

    /// Records the reason. Called once, by `terminate`, before the mailbox closes. Release:
    /// whoever sees the mailbox closed (an Acquire load, or a refused send) sees the reason.
    #[inline(always)]
    pub(super) fn set(&self, reason: &StopReason) {
        let word = match reason {
            StopReason::Normal => NORMAL,
            StopReason::Stopped => STOPPED,
            StopReason::Killed => KILLED,
            other => Box::into_raw(Box::new(other.clone())) as usize,
        };
        debug_assert!(word != RUNNING);
        debug_assert_eq!(
            self.0.load(Ordering::Relaxed),
            RUNNING,
            "an actor terminates once"
        );
        // A store, not a swap: only `terminate` writes the word, once, so there is nothing to
        // read back, and a release store is a plain move where a swap is a locked instruction
        // on every actor's stop (spawn-and-stop benchmarks felt it).
        self.0.store(word, Ordering::Release);
    }

    /// The reason, once the actor has stopped.
    pub(crate) fn get(&self) -> Option<StopReason> {
        Some(match self.0.load(Ordering::Acquire) {
            RUNNING => return None,
            NORMAL => StopReason::Normal,
            STOPPED => StopReason::Stopped,
            KILLED => StopReason::Killed,
            // SAFETY: any other value is a box leaked by `set`, freed only by `drop`, which
            // cannot run while `&self` is borrowed.
            boxed => unsafe { (*(boxed as *const StopReason)).clone() },
        })
    }
}

impl Drop for Exit {
    fn drop(&mut self) {
        let word = self.0.read_mut();
        if word > KILLED {
            // SAFETY: leaked by `set` from a `Box<StopReason>`, freed once, here.
            drop(unsafe { Box::from_raw(word as *mut StopReason) });
        }
    }
}

/// How a handler's activation ends; `No` while it goes on. One byte the activation loop tests
/// after each envelope (as it tested the `bool` this replaced).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Stopping {
    /// Not stopping.
    No = 0,
    /// `Context::stop`, or no reference left: [`StopReason::Normal`].
    Normal,
    /// A stop signal: [`StopReason::Stopped`].
    Stopped,
    /// A linked actor failed: [`StopReason::Linked`] (details in the watch state).
    Linked,
    /// A supervisor gave up: [`StopReason::Escalated`] (its message in the extras).
    Escalated,
    /// A supervised child was suspended by its supervisor's order: the activation ends, the
    /// actor does not stop (`supervised/`).
    Suspended,
}

// ----------------------------------------------------------------------------------- watch state

/// Someone waiting for an actor's stop: a watching actor ([`ActorNotice`]) or a thread.
pub(crate) trait Notice: Send {
    /// The watching actor and the token of its watch (`None`: a thread's watch).
    fn key(&self) -> Option<(ActorId, u64)>;
    /// Whether nobody waits any more (the watcher stopped, the thread dropped its handle).
    fn is_gone(&self) -> bool;
    /// The watched actor `target` stopped with `reason`: tell the watcher.
    fn fire(self: Box<Self>, target: ActorId, reason: StopReason);
}

/// An actor this one watches (the watcher's record of its watch).
struct Watching {
    target: ActorId,
    token: u64,
    target_ref: Weak<dyn Watchable>,
}

/// A linked actor.
struct Link {
    peer: ActorId,
    peer_ref: Weak<dyn Watchable>,
}

/// The trap of an actor of message type `M` ([`CellContext::trap_exits`]), kept as `dyn Any`
/// because the watch state does not know the actor's type.
type Trap<M> = Arc<dyn Fn(ActorId, StopReason) -> M + Send + Sync>;

/// An actor's watch state, in its extras; touched only by the holder of its schedule.
#[derive(Default)]
pub(crate) struct WatchState {
    /// Who waits for this actor's stop. Pruned of watchers that stopped as it grows.
    watchers: Vec<Box<dyn Notice>>,
    /// Length after the last pruning.
    pruned_at: usize,
    /// The actors this actor watches.
    watching: Vec<Watching>,
    next_token: u64,
    links: Vec<Link>,
    /// `Trap<Msg>` while the actor traps exits.
    trap: Option<Box<dyn Any + Send>>,
    /// The linked actor whose failure stops this actor, and its message.
    linked_exit: Option<(ActorId, String)>,
}

impl WatchState {
    fn add_watcher(&mut self, notice: Box<dyn Notice>) {
        if self.watchers.len() >= 2 * self.pruned_at.max(8) {
            self.watchers.retain(|n| !n.is_gone());
            self.pruned_at = self.watchers.len();
        }
        self.watchers.push(notice);
    }

    fn remove_watcher(&mut self, key: (ActorId, u64)) {
        self.watchers.retain(|n| n.key() != Some(key));
    }

    /// Takes the record of the watch of `target` with `token`; `false` if it was unwatched (or
    /// replaced) meanwhile.
    fn take_watching(&mut self, target: ActorId, token: u64) -> bool {
        let at = self
            .watching
            .iter()
            .position(|w| w.target == target && w.token == token);
        at.map(|at| self.watching.swap_remove(at)).is_some()
    }

    /// Forgets the watch of `target`, returning its token and the target.
    fn forget_watching(&mut self, target: ActorId) -> Option<(u64, Weak<dyn Watchable>)> {
        let at = self.watching.iter().position(|w| w.target == target)?;
        let w = self.watching.swap_remove(at);
        Some((w.token, w.target_ref))
    }

    /// Removes the link with `peer`; `false` if there was none.
    fn unlink(&mut self, peer: ActorId) -> Option<Weak<dyn Watchable>> {
        let at = self.links.iter().position(|l| l.peer == peer)?;
        Some(self.links.swap_remove(at).peer_ref)
    }
}

// ------------------------------------------------------------------------ the watched side, erased

/// What watching and linking need of an actor, whatever its type (its cell, behind `Arc`/`Weak`).
/// Each method queues a closure in the actor's mailbox; none blocks.
pub(crate) trait Watchable: Send + Sync {
    /// The actor.
    fn watched_id(&self) -> ActorId;
    /// Adds a watcher; if the actor has stopped (or stops before it sees the watcher), the
    /// notice fires with its reason.
    fn add_watcher(self: Arc<Self>, notice: Box<dyn Notice>);
    /// Drops the watch `key`, if still there.
    fn remove_watcher(&self, key: (ActorId, u64));
    /// Links `peer` to the actor; if the actor has stopped (or stops before it sees the link),
    /// `peer` gets its exit signal.
    fn add_link(self: Arc<Self>, peer: ActorId, peer_ref: Weak<dyn Watchable>);
    /// Removes the link with `peer`, if still there.
    fn remove_link(&self, peer: ActorId);
    /// The linked actor `from` stopped with `reason`.
    fn exit_signal(&self, from: ActorId, reason: StopReason);
    /// Why the actor stopped, once it has.
    fn exit_reason(&self) -> Option<StopReason>;
}

/// A change to another actor's watch state on its way through that actor's mailbox. Dropped
/// unseen (the actor had stopped), it fires with the actor's exit reason.
struct Unseen<T> {
    target: Arc<dyn Watchable>,
    item: Option<T>,
    fire: fn(T, ActorId, StopReason),
}

impl<T> Unseen<T> {
    /// Takes the item out: the actor saw it, the guard will not fire.
    fn seen(mut self) -> T {
        self.item.take().expect("taken once")
    }
}

impl<T> Drop for Unseen<T> {
    fn drop(&mut self) {
        if let Some(item) = self.item.take() {
            // Dropped unseen only once the actor has stopped: refused by its closed mailbox,
            // drained by its `terminate`, or discarded as a letter to a stopped actor; `terminate`
            // wrote the reason before closing.
            let reason = self.target.exit_reason();
            debug_assert!(reason.is_some(), "unseen only by a stopped actor");
            (self.fire)(
                item,
                self.target.watched_id(),
                reason.unwrap_or(StopReason::Killed),
            );
        }
    }
}

impl<B: Behavior> ActorCell<B> {
    /// Queues a closure to run like a message, with or without a handle in hand. A handle is taken
    /// around the send: if it was the last, the `Unreferenced` signal is queued behind the
    /// closure, so an unreferenced actor still stops after running it. `false`: stopped (the
    /// closure was dropped).
    pub(super) fn call_held(&self, call: Continuation<B>) -> bool {
        self.acquire_handle();
        let queued = self.enqueue(Envelope::Call(call)).is_ok();
        self.release_handle();
        queued
    }

    /// The actor's watch state, made on first use.
    ///
    /// # Safety
    /// As for [`ActorCell::extras`].
    #[allow(clippy::mut_from_ref)]
    unsafe fn watch_state(&self) -> &mut WatchState {
        // SAFETY: forwarded contract.
        unsafe { &mut self.extras().watch }
    }
}

impl CellBase {
    /// The actor stops: every watcher gets its notice, every linked actor the exit signal, every
    /// actor it watches forgets it. Called by `terminate` once the actor is closed and
    /// unregistered (and its supervisor, if supervised, told), with the watch state it took out of
    /// the extras.
    pub(super) fn notify_watchers(&self, watch: WatchState, reason: &StopReason) {
        let id = self.id();
        for notice in watch.watchers {
            notice.fire(id, reason.clone());
        }
        for link in watch.links {
            if let Some(peer) = link.peer_ref.upgrade() {
                peer.exit_signal(id, reason.clone());
            }
        }
        for watching in watch.watching {
            if let Some(target) = watching.target_ref.upgrade() {
                target.remove_watcher((id, watching.token));
            }
        }
    }
}

impl<B: Behavior> Watchable for ActorCell<B> {
    fn watched_id(&self) -> ActorId {
        self.id()
    }

    fn add_watcher(self: Arc<Self>, notice: Box<dyn Notice>) {
        let unseen = Unseen {
            target: Arc::clone(&self) as Arc<dyn Watchable>,
            item: Some(notice),
            fire: |notice, target, reason| notice.fire(target, reason),
        };
        self.call_held(Box::new(move |_, ctx| {
            let notice = unseen.seen();
            // SAFETY: a call runs in the actor's activation; no user code runs while borrowed.
            unsafe { B::inner(ctx).cell().watch_state() }.add_watcher(notice);
        }));
    }

    fn remove_watcher(&self, key: (ActorId, u64)) {
        self.call_held(Box::new(move |_, ctx| {
            // SAFETY: as in `add_watcher`; no extras are made for nothing.
            if let Some(extras) = unsafe { B::inner(ctx).cell().extras_if_any() } {
                extras.watch.remove_watcher(key);
            }
        }));
    }

    fn add_link(self: Arc<Self>, peer: ActorId, peer_ref: Weak<dyn Watchable>) {
        let unseen = Unseen {
            target: Arc::clone(&self) as Arc<dyn Watchable>,
            item: Some((peer, peer_ref)),
            fire: |(_, peer_ref), me, reason| {
                if let Some(peer) = peer_ref.upgrade() {
                    peer.exit_signal(me, reason);
                }
            },
        };
        self.call_held(Box::new(move |_, ctx| {
            let (peer, peer_ref) = unseen.seen();
            // SAFETY: as in `add_watcher`.
            let watch = unsafe { B::inner(ctx).cell().watch_state() };
            if !watch.links.iter().any(|l| l.peer == peer) {
                watch.links.push(Link { peer, peer_ref });
            }
        }));
    }

    fn remove_link(&self, peer: ActorId) {
        self.call_held(Box::new(move |_, ctx| {
            // SAFETY: as in `remove_watcher`.
            if let Some(extras) = unsafe { B::inner(ctx).cell().extras_if_any() } {
                extras.watch.unlink(peer);
            }
        }));
    }

    fn exit_signal(&self, from: ActorId, reason: StopReason) {
        self.call_held(Box::new(move |actor, ctx| {
            let inner = B::inner(ctx);
            let cell = inner.cell();
            // SAFETY: as in `add_watcher`; the borrow ends before the handler runs.
            let Some(extras) = (unsafe { cell.extras_if_any() }) else {
                return;
            };
            let watch = &mut extras.watch;
            if watch.unlink(from).is_none() {
                return; // unlinked meanwhile
            }
            let trap = watch.trap.as_ref().map(|trap| {
                let trap = trap.downcast_ref::<Trap<B::Msg>>();
                Arc::clone(trap.expect("the trap has the actor's message type"))
            });
            match trap {
                Some(trap) => {
                    cell.note_message();
                    let message = trap(from, reason);
                    actor.handle(ctx, message);
                }
                None if reason.is_failure() => {
                    let message = reason.panic_message().unwrap_or_default().to_owned();
                    watch.linked_exit = Some((from, message));
                    inner.stopping = Stopping::Linked;
                }
                None => {}
            }
        }));
    }

    fn exit_reason(&self) -> Option<StopReason> {
        self.exit.get()
    }
}

// ---------------------------------------------------------------------- the watching side (ctx)

/// A watching actor's notice: queued in the watcher's mailbox when the watched actor stops, and
/// handled there only if the watch still stands.
struct ActorNotice<W: Behavior> {
    watcher: Weak<ActorCell<W>>,
    id: ActorId,
    token: u64,
    message: Box<dyn FnOnce(StopReason) -> W::Msg + Send>,
}

impl<W: Behavior> Notice for ActorNotice<W> {
    fn key(&self) -> Option<(ActorId, u64)> {
        Some((self.id, self.token))
    }

    fn is_gone(&self) -> bool {
        self.watcher
            .upgrade()
            .is_none_or(|watcher| watcher.mailbox.is_closed())
    }

    fn fire(self: Box<Self>, target: ActorId, reason: StopReason) {
        let Some(watcher) = self.watcher.upgrade() else {
            return;
        };
        let (token, message) = (self.token, self.message);
        watcher.call_held(Box::new(move |actor, ctx| {
            let cell = W::inner(ctx).cell();
            // SAFETY: a call runs in the watcher's activation; the borrow ends before user code.
            let watched = unsafe { cell.extras_if_any() }
                .is_some_and(|extras| extras.watch.take_watching(target, token));
            if watched {
                cell.note_message();
                let message = message(reason);
                actor.handle(ctx, message);
            }
        }));
    }
}

impl<B: Behavior> CellContext<B> {
    /// See `Context::watch_with`.
    pub(crate) fn watch_with(
        &mut self,
        target: Arc<dyn Watchable>,
        message: Box<dyn FnOnce(StopReason) -> B::Msg + Send>,
    ) {
        let me = self.cell_arc();
        let id = me.id();
        let target_id = target.watched_id();
        // SAFETY: a context exists only in its actor's activation; no user code runs while
        // borrowed.
        let watch = unsafe { me.watch_state() };
        let replaced = watch.forget_watching(target_id);
        let token = watch.next_token;
        watch.next_token += 1;
        watch.watching.push(Watching {
            target: target_id,
            token,
            target_ref: Arc::downgrade(&target),
        });
        if let Some((old, _)) = replaced {
            target.remove_watcher((id, old));
        }
        target.add_watcher(Box::new(ActorNotice {
            watcher: Arc::downgrade(&me),
            id,
            token,
            message,
        }));
    }

    /// See `Context::unwatch`.
    pub(crate) fn unwatch(&mut self, target: ActorId) {
        // SAFETY: as in `watch_with`.
        let Some(extras) = (unsafe { self.cell().extras_if_any() }) else {
            return;
        };
        if let Some((token, target_ref)) = extras.watch.forget_watching(target) {
            if let Some(target) = target_ref.upgrade() {
                target.remove_watcher((self.cell().id(), token));
            }
        }
    }

    /// See `Context::link`.
    pub(crate) fn link(&mut self, peer: Arc<dyn Watchable>) {
        let me = self.cell_arc();
        let peer_id = peer.watched_id();
        if peer_id == me.id() {
            return;
        }
        // SAFETY: as in `watch_with`.
        let watch = unsafe { me.watch_state() };
        if watch.links.iter().any(|l| l.peer == peer_id) {
            return;
        }
        watch.links.push(Link {
            peer: peer_id,
            peer_ref: Arc::downgrade(&peer),
        });
        let id = me.id();
        let me: Arc<dyn Watchable> = me;
        peer.add_link(id, Arc::downgrade(&me));
    }

    /// See `Context::unlink`.
    pub(crate) fn unlink(&mut self, peer: ActorId) {
        // SAFETY: as in `watch_with`.
        let Some(extras) = (unsafe { self.cell().extras_if_any() }) else {
            return;
        };
        if let Some(peer) = extras.watch.unlink(peer).and_then(|p| p.upgrade()) {
            peer.remove_link(self.cell().id());
        }
    }

    /// See `Context::trap_exits` (`None`: stop trapping).
    pub(crate) fn trap_exits(&mut self, trap: Option<Trap<B::Msg>>) {
        // SAFETY: as in `watch_with`.
        let watch = unsafe { self.cell().watch_state() };
        watch.trap = trap.map(|trap| Box::new(trap) as Box<dyn Any + Send>);
    }

    /// Whether the handler asked to stop (or a stop signal, the last reference's drop or a
    /// linked actor's failure did).
    #[inline(always)]
    pub(crate) fn is_stopping(&self) -> bool {
        self.stopping != Stopping::No
    }

    /// Why the activation stops, `failure` being a panic's message.
    pub(super) fn stop_reason(&self, failure: Option<String>) -> StopReason {
        if let Some(message) = failure {
            return StopReason::Panicked(message);
        }
        match self.stopping {
            Stopping::No | Stopping::Normal | Stopping::Suspended => StopReason::Normal,
            Stopping::Stopped => StopReason::Stopped,
            Stopping::Linked => {
                // SAFETY: as in `watch_with`.
                let linked = unsafe { self.cell().extras_if_any() }
                    .and_then(|extras| extras.watch.linked_exit.take());
                let (peer, message) = linked.expect("a linked stop records its peer");
                StopReason::Linked { peer, message }
            }
            Stopping::Escalated => {
                // SAFETY: as in `watch_with`.
                let message = unsafe { self.cell().extras_if_any() }
                    .and_then(|extras| extras.escalation.take());
                StopReason::Escalated {
                    message: message.expect("an escalation records its message"),
                }
            }
        }
    }
}
