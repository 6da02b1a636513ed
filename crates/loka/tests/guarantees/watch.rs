//! Death watch and links (docs/fault-tolerance.md): a watcher hears once, with the right reason,
//! of every stop (normal, unreferenced, panic, stop signal, shutdown), at once for an actor already
//! stopped, never after an unwatch; a watcher that stops first is forgotten; links stop the other
//! side on a failure, both ways and along chains, unless it traps exits. Under every
//! configuration of `common::configurations()`.

use crate::common::{configurations, system};
use loka::{Actor, ActorId, ActorRef, AskError, Context, Pending, ReplyTo, StopReason, System};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

const PANIC: &str = "node asked to panic";

type Log = Arc<Mutex<Vec<(ActorId, StopReason)>>>;

/// Does what it is told; records the stops it hears of (watches, trapped exits).
struct Node {
    log: Log,
}

enum Cmd {
    Watch(ActorRef<Cmd>),
    /// Watch with a message closure that holds this flag: set when the closure is dropped.
    WatchHolding(ActorRef<Cmd>, DropFlag),
    Unwatch(ActorRef<Cmd>),
    Link(ActorRef<Cmd>),
    Unlink(ActorRef<Cmd>),
    Trap,
    Untrap,
    Panic,
    StopSelf,
    /// Blocks until the sender says so, then unwatches.
    BlockThenUnwatch(mpsc::Receiver<()>, ActorRef<Cmd>),
    Ping(ReplyTo<()>),
    Died(ActorId, StopReason),
}

impl Actor for Node {
    type Msg = Cmd;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: Cmd) {
        match msg {
            Cmd::Watch(other) => {
                let id = other.id();
                ctx.watch_with(&other, move |reason| Cmd::Died(id, reason));
            }
            Cmd::WatchHolding(other, flag) => {
                let id = other.id();
                ctx.watch_with(&other, move |reason| {
                    let _flag = flag;
                    Cmd::Died(id, reason)
                });
            }
            Cmd::Unwatch(other) => ctx.unwatch(&other),
            Cmd::Link(other) => ctx.link(&other),
            Cmd::Unlink(other) => ctx.unlink(&other),
            Cmd::Trap => ctx.trap_exits(Cmd::Died),
            Cmd::Untrap => ctx.untrap_exits(),
            Cmd::Panic => panic!("{PANIC}"),
            Cmd::StopSelf => ctx.stop(),
            Cmd::BlockThenUnwatch(release, other) => {
                let _ = release.recv();
                ctx.unwatch(&other);
            }
            Cmd::Ping(reply) => reply.send(()),
            Cmd::Died(id, reason) => self.log.lock().unwrap().push((id, reason)),
        }
    }
}

/// Set when dropped.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, SeqCst);
    }
}

fn node(system: &System) -> (ActorRef<Cmd>, Log) {
    let log = Log::default();
    (system.spawn(Node { log: log.clone() }), log)
}

fn sorted(log: &Log) -> Vec<(ActorId, StopReason)> {
    let mut entries = log.lock().unwrap().clone();
    entries.sort_by_key(|(id, _)| *id);
    entries
}

fn panicked() -> StopReason {
    StopReason::Panicked(PANIC.to_owned())
}

fn linked(peer: &ActorRef<Cmd>) -> StopReason {
    StopReason::Linked {
        peer: peer.id(),
        message: PANIC.to_owned(),
    }
}

/// What a watch resolved with; bounded, so that a broken build fails instead of hanging.
fn reason(stops: Pending<StopReason>) -> Result<StopReason, AskError> {
    stops.wait_timeout(Duration::from_secs(10))
}

fn alive(label: &str, actor: &ActorRef<Cmd>) {
    let pong = actor
        .ask(Cmd::Ping)
        .unwrap()
        .wait_timeout(Duration::from_secs(10));
    assert!(pong.is_ok(), "{label}: {actor:?} still runs");
}

#[test]
fn watchers_hear_once_why_an_actor_stopped() {
    for (label, config) in configurations() {
        let system = system(&config);
        let (watcher, log) = node(&system);
        let (by_itself, _) = node(&system);
        let (panics, _) = node(&system);
        let (signalled, _) = node(&system);
        let (unreferenced, _) = node(&system);
        for target in [&by_itself, &panics, &signalled, &unreferenced] {
            watcher.send(Cmd::Watch(target.clone())).unwrap();
        }
        let unreferenced_id = unreferenced.id();
        // The watcher drops its copy after watching: the last reference goes.
        drop(unreferenced);
        system.run_until_idle();
        by_itself.send(Cmd::StopSelf).unwrap();
        panics.send(Cmd::Panic).unwrap();
        assert!(signalled.stop(), "{label}");
        system.run_until_idle();
        let mut expected = vec![
            (by_itself.id(), StopReason::Normal),
            (panics.id(), panicked()),
            (signalled.id(), StopReason::Stopped),
            (unreferenced_id, StopReason::Normal),
        ];
        expected.sort_by_key(|(id, _)| *id);
        assert_eq!(sorted(&log), expected, "{label}: one message per stop");
        alive(&label, &watcher);
    }
}

#[test]
fn watching_a_stopped_actor_reports_at_once() {
    for (label, config) in configurations() {
        let system = system(&config);
        let (signalled, _) = node(&system);
        let (panics, _) = node(&system);
        signalled.stop();
        panics.send(Cmd::Panic).unwrap();
        system.run_until_idle();
        assert!(signalled.is_stopped() && panics.is_stopped(), "{label}");
        let (watcher, log) = node(&system);
        watcher.send(Cmd::Watch(signalled.clone())).unwrap();
        watcher.send(Cmd::Watch(panics.clone())).unwrap();
        system.run_until_idle();
        let mut expected = vec![
            (signalled.id(), StopReason::Stopped),
            (panics.id(), panicked()),
        ];
        expected.sort_by_key(|(id, _)| *id);
        assert_eq!(sorted(&log), expected, "{label}");
        // A thread's watch of a stopped actor resolves at once.
        assert_eq!(reason(panics.watch()), Ok(panicked()), "{label}");
        assert_eq!(
            reason(signalled.watch()),
            Ok(StopReason::Stopped),
            "{label}"
        );
    }
}

#[test]
fn no_message_comes_after_an_unwatch_even_one_already_queued() {
    // The watched actors live in a second system, which stops them while the watcher is held up.
    let elsewhere = System::builder().workers(2).build().unwrap();
    for (label, config) in configurations() {
        let system = system(&config);
        let (watcher, log) = node(&system);
        // Unwatched before it stops.
        let (early, _) = node(&elsewhere);
        watcher.send(Cmd::Watch(early.clone())).unwrap();
        watcher.send(Cmd::Unwatch(early.clone())).unwrap();
        system.run_until_idle();
        early.stop();
        assert_eq!(reason(early.watch()), Ok(StopReason::Stopped), "{label}");
        // Unwatched after its notice is queued in the watcher's mailbox.
        let (late, _) = node(&elsewhere);
        watcher.send(Cmd::Watch(late.clone())).unwrap();
        system.run_until_idle();
        let (release, blocked) = mpsc::channel();
        watcher
            .send(Cmd::BlockThenUnwatch(blocked, late.clone()))
            .unwrap();
        let stopped = late.watch();
        late.stop();
        // The watcher's notice was queued before this thread's (watchers are told in order).
        assert_eq!(reason(stopped), Ok(StopReason::Stopped), "{label}");
        release.send(()).unwrap();
        system.run_until_idle();
        assert_eq!(sorted(&log), [], "{label}: nothing after unwatch");
        alive(&label, &watcher);
    }
}

#[test]
fn a_watcher_that_stops_first_is_forgotten() {
    for (label, config) in configurations() {
        let system = system(&config);
        let (watcher, log) = node(&system);
        let (target, _) = node(&system);
        let dropped = Arc::new(AtomicBool::new(false));
        let flag = DropFlag(Arc::clone(&dropped));
        watcher
            .send(Cmd::WatchHolding(target.clone(), flag))
            .unwrap();
        system.run_until_idle();
        assert!(
            !dropped.load(SeqCst),
            "{label}: the watch holds its closure"
        );
        watcher.send(Cmd::StopSelf).unwrap();
        system.run_until_idle();
        assert!(
            dropped.load(SeqCst),
            "{label}: the live target dropped the stopped watcher's watch"
        );
        target.send(Cmd::StopSelf).unwrap();
        system.run_until_idle();
        assert_eq!(sorted(&log), [], "{label}");
    }
}

#[test]
fn shutdown_reports_killed_to_every_watcher() {
    // A watching actor in a second system outlives this one's shutdown.
    let elsewhere = System::builder().workers(2).build().unwrap();
    for (label, config) in configurations() {
        let system = system(&config);
        let (outside, log) = node(&elsewhere);
        let (a, _) = node(&system);
        let (b, _) = node(&system);
        outside.send(Cmd::Watch(a.clone())).unwrap();
        let (a_stops, b_stops) = (a.watch(), b.watch());
        elsewhere.run_until_idle();
        system.run_until_idle();
        system.shutdown();
        assert_eq!(reason(a_stops), Ok(StopReason::Killed), "{label}");
        assert_eq!(reason(b_stops), Ok(StopReason::Killed), "{label}");
        elsewhere.run_until_idle();
        assert_eq!(sorted(&log), [(a.id(), StopReason::Killed)], "{label}");
        outside.stop();
    }
}

#[test]
fn a_failure_stops_linked_actors_both_ways_and_along_chains() {
    for (label, config) in configurations() {
        let system = system(&config);
        let nodes: Vec<_> = (0..9).map(|_| node(&system).0).collect();
        let [a, b, c, d, e, f, g, h, i] = &nodes[..] else {
            unreachable!()
        };
        a.send(Cmd::Link(b.clone())).unwrap(); // a fails: b stops
        d.send(Cmd::Link(c.clone())).unwrap(); // c fails: d stops (the other way round)
        e.send(Cmd::Link(f.clone())).unwrap(); // g fails: f, then e, stop
        f.send(Cmd::Link(g.clone())).unwrap();
        h.send(Cmd::Link(i.clone())).unwrap(); // unlinked again: i's failure stays its own
        h.send(Cmd::Unlink(i.clone())).unwrap();
        system.run_until_idle();
        let stops: Vec<_> = nodes.iter().map(ActorRef::watch).collect();
        for failing in [a, c, g, i] {
            failing.send(Cmd::Panic).unwrap();
        }
        system.run_until_idle();
        let reasons: Vec<_> = stops.into_iter().take(7).map(reason).collect();
        assert_eq!(reasons[0], Ok(panicked()), "{label}: a");
        assert_eq!(
            reasons[1],
            Ok(linked(a)),
            "{label}: b stopped by its link to a"
        );
        assert_eq!(reasons[2], Ok(panicked()), "{label}: c");
        assert_eq!(
            reasons[3],
            Ok(linked(c)),
            "{label}: d stopped by its link to c"
        );
        assert_eq!(
            reasons[4],
            Ok(linked(f)),
            "{label}: e stopped by f, g's message"
        );
        assert_eq!(reasons[5], Ok(linked(g)), "{label}: f");
        assert_eq!(reasons[6], Ok(panicked()), "{label}: g");
        alive(&label, h);
        // Linking to an actor that already failed acts at once.
        let (late, _) = node(&system);
        late.send(Cmd::Link(a.clone())).unwrap();
        assert_eq!(reason(late.watch()), Ok(linked(a)), "{label}: late link");
    }
}

#[test]
fn only_failures_travel_along_links_and_trapping_exits_turns_them_into_messages() {
    for (label, config) in configurations() {
        let system = system(&config);
        let (stays, _) = node(&system);
        let (normal, _) = node(&system);
        let (signalled, _) = node(&system);
        stays.send(Cmd::Link(normal.clone())).unwrap();
        stays.send(Cmd::Link(signalled.clone())).unwrap();
        let (trapper, log) = node(&system);
        let (fails, _) = node(&system);
        let (quits, _) = node(&system);
        trapper.send(Cmd::Trap).unwrap();
        trapper.send(Cmd::Link(fails.clone())).unwrap();
        trapper.send(Cmd::Link(quits.clone())).unwrap();
        system.run_until_idle();
        normal.send(Cmd::StopSelf).unwrap();
        signalled.stop();
        fails.send(Cmd::Panic).unwrap();
        quits.send(Cmd::StopSelf).unwrap();
        system.run_until_idle();
        alive(&label, &stays);
        alive(&label, &trapper);
        let mut expected = vec![(fails.id(), panicked()), (quits.id(), StopReason::Normal)];
        expected.sort_by_key(|(id, _)| *id);
        assert_eq!(sorted(&log), expected, "{label}: every exit, as a message");
        // No longer trapping: the next linked failure stops the trapper.
        let (again, _) = node(&system);
        trapper.send(Cmd::Untrap).unwrap();
        trapper.send(Cmd::Link(again.clone())).unwrap();
        system.run_until_idle();
        let stopped = trapper.watch();
        again.send(Cmd::Panic).unwrap();
        assert_eq!(reason(stopped), Ok(linked(&again)), "{label}");
    }
}
