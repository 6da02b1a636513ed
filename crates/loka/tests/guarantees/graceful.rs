//! The graceful shutdown, `System::shutdown_timeout` (docs/shutdown.md): actors stop top-down as
//! in OTP — children's `stopped` hooks before their parents' — on the threads that run them, not
//! the caller's; messages queued before the shutdown are handled (drained) until the deadline;
//! what has not stopped by then is reported. A prompt shutdown keeps the order. Runs under every configuration of
//! `common::configurations()` (the timeout case under every configuration with two workers).

use crate::common::{configurations, system};
use loka::{Actor, ActorId, ActorRef, Context, ReplyTo, SpawnOptions};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::Duration;

/// Long enough never to be the reason a graceful shutdown ends (not a measure of speed).
const PLENTY: Duration = Duration::from_secs(60);

/// (actor, its parent, the thread its `stopped` hook ran on), in the order the hooks ran.
type StopLog = Arc<Mutex<Vec<(ActorId, Option<ActorId>, ThreadId)>>>;

/// A node of a tree `depth` levels deep below it, `fanout` children each.
struct Node {
    depth: u32,
    fanout: u32,
    parent: Option<ActorId>,
    log: StopLog,
    children: Vec<ActorRef<()>>,
}

impl Actor for Node {
    type Msg = ();
    fn started(&mut self, ctx: &mut Context<Self>) {
        if self.depth == 0 {
            return;
        }
        for _ in 0..self.fanout {
            let child = ctx.spawn(Node {
                depth: self.depth - 1,
                fanout: self.fanout,
                parent: Some(ctx.id()),
                log: Arc::clone(&self.log),
                children: Vec::new(),
            });
            self.children.push(child);
        }
    }
    fn handle(&mut self, _ctx: &mut Context<Self>, _: ()) {}
    fn stopped(&mut self, ctx: &mut Context<Self>) {
        let me = (ctx.id(), self.parent, std::thread::current().id());
        self.log.lock().unwrap().push(me);
    }
}

#[test]
fn graceful_shutdown_stops_children_before_their_parents_on_the_actors_threads() {
    for (label, config) in configurations() {
        let system = system(&config);
        let log = StopLog::default();
        let roots: Vec<_> = (0..2)
            .map(|_| {
                system.spawn(Node {
                    depth: 2,
                    fanout: 3,
                    parent: None,
                    log: Arc::clone(&log),
                    children: Vec::new(),
                })
            })
            .collect();
        system.run_until_idle();
        let report = system.shutdown_timeout(PLENTY);
        assert!(report.is_clean(), "{label}: {report:?}");
        let log = log.lock().unwrap().clone();
        assert_eq!(log.len(), 2 * 13, "{label}: every node stopped");
        assert_eq!(report.stopped, 2 * 13, "{label}");
        assert_eq!(report.dead_letters, 0, "{label}");
        let at = |id: ActorId| log.iter().position(|e| e.0 == id).expect("logged");
        for (child, parent, _) in &log {
            if let Some(parent) = parent {
                assert!(
                    at(*child) < at(*parent),
                    "{label}: child {child} stopped after its parent {parent}: {log:?}"
                );
            }
        }
        let main = std::thread::current().id();
        assert!(
            log.iter().all(|e| e.2 != main),
            "{label}: `stopped` hooks ran on the actors' threads, not the caller's"
        );
        assert!(system.is_shut_down(), "{label}");
        assert!(roots.iter().all(ActorRef::is_stopped), "{label}");
    }
}

/// A prompt shutdown stops what is left in the same order, on the calling thread.
#[test]
fn prompt_shutdown_also_stops_children_before_their_parents() {
    for (label, config) in configurations() {
        let system = system(&config);
        let log = StopLog::default();
        let _root = system.spawn(Node {
            depth: 3,
            fanout: 2,
            parent: None,
            log: Arc::clone(&log),
            children: Vec::new(),
        });
        system.run_until_idle();
        system.shutdown();
        let log = log.lock().unwrap().clone();
        assert_eq!(log.len(), 15, "{label}: every node stopped");
        let at = |id: ActorId| log.iter().position(|e| e.0 == id).expect("logged");
        for (child, parent, _) in &log {
            if let Some(parent) = parent {
                assert!(at(*child) < at(*parent), "{label}: {log:?}");
            }
        }
    }
}

/// A timeout too long for the clock to count (`Duration::MAX`, which panicked with "overflow when
/// adding duration to instant") sets no deadline: the tree stops cleanly, children first. A zero
/// timeout gives no grace: the call returns at once and the prompt part stops everything.
#[test]
fn graceful_shutdown_of_duration_max_has_no_deadline_and_zero_gives_no_grace() {
    for (label, config) in configurations() {
        let system = system(&config);
        let log = StopLog::default();
        let _root = system.spawn(Node {
            depth: 2,
            fanout: 3,
            parent: None,
            log: Arc::clone(&log),
            children: Vec::new(),
        });
        system.run_until_idle();
        let report = system.shutdown_timeout(Duration::MAX);
        assert!(report.is_clean(), "{label}: {report:?}");
        assert_eq!(report.stopped, 13, "{label}");
        assert_eq!(log.lock().unwrap().len(), 13, "{label}: every node stopped");

        let system = crate::common::system(&config);
        let handled = Arc::new(AtomicU64::new(0));
        let counter = system.spawn(Counter {
            handled: Arc::clone(&handled),
        });
        for i in 0..100 {
            counter.send(i).unwrap();
        }
        let report = system.shutdown_timeout(Duration::ZERO);
        assert!(
            report.not_stopped.iter().all(|a| !a.signalled),
            "{label}: no stop signal with no grace: {report:?}"
        );
        system.shutdown();
        assert!(system.is_shut_down(), "{label}");
        assert!(counter.is_stopped(), "{label}");
    }
}

/// Counts its messages, each a little work.
struct Counter {
    handled: Arc<AtomicU64>,
}

impl Actor for Counter {
    type Msg = u64;
    fn handle(&mut self, _ctx: &mut Context<Self>, n: u64) {
        std::hint::black_box(n.wrapping_mul(0x9e37_79b9));
        self.handled.fetch_add(1, SeqCst);
    }
}

/// Messages queued before a graceful shutdown are handled, not dropped: no dead letter.
#[test]
fn graceful_shutdown_drains_queued_messages() {
    const ACTORS: u64 = 8;
    const EACH: u64 = 500;
    for (label, config) in configurations() {
        let system = system(&config);
        let handled = Arc::new(AtomicU64::new(0));
        let actors: Vec<_> = (0..ACTORS)
            .map(|_| {
                system.spawn(Counter {
                    handled: Arc::clone(&handled),
                })
            })
            .collect();
        for i in 0..EACH {
            for actor in &actors {
                actor.send(i).unwrap();
            }
        }
        let report = system.shutdown_timeout(PLENTY);
        assert_eq!(handled.load(SeqCst), ACTORS * EACH, "{label}: drained");
        assert_eq!(report.dead_letters, 0, "{label}");
        assert_eq!(system.stats().dead_letters, 0, "{label}");
        assert!(report.is_clean(), "{label}: {report:?}");
        assert_eq!(report.stopped, ACTORS, "{label}");
    }
}

enum BlockMsg {
    /// Reply, then block until the gate opens.
    Block(ReplyTo<()>),
}

/// Blocks in its handler until `gate` opens.
struct Blocker {
    gate: Arc<AtomicBool>,
}

impl Actor for Blocker {
    type Msg = BlockMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, BlockMsg::Block(reply): BlockMsg) {
        reply.send(());
        while !self.gate.load(SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// An actor whose handler blocks past the deadline is reported, and the call returns at the
/// deadline without waiting for it; the shutdown completes once the handler returns.
#[test]
fn graceful_shutdown_reports_an_actor_still_running_at_the_deadline() {
    for (label, config) in configurations().into_iter().filter(|(_, c)| c.workers == 2) {
        let system = system(&config);
        let gate = Arc::new(AtomicBool::new(false));
        let blocker = system.spawn_with(
            Blocker {
                gate: Arc::clone(&gate),
            },
            SpawnOptions::new().name("stuck"),
        );
        // Its reply comes from inside the handler that then blocks.
        blocker.ask(BlockMsg::Block).unwrap().wait().unwrap();
        let report = system.shutdown_timeout(Duration::from_millis(100));
        gate.store(true, SeqCst);
        let stuck: Vec<_> = report
            .not_stopped
            .iter()
            .filter(|a| a.actor == blocker.id())
            .collect();
        assert_eq!(stuck.len(), 1, "{label}: reported: {report:?}");
        assert_eq!(stuck[0].name.as_deref(), Some("stuck"), "{label}");
        assert!(stuck[0].actor_type.ends_with("Blocker"), "{label}");
        assert!(
            stuck[0].signalled,
            "{label}: it was told, and did not get to it"
        );
        assert!(
            !report.terminated,
            "{label}: the call did not wait for the handler"
        );
        assert!(!report.is_clean(), "{label}");
        // The shutdown completes once the handler has returned.
        system.shutdown();
        assert!(system.is_shut_down(), "{label}");
        assert!(blocker.is_stopped(), "{label}");
    }
}
