//! `Context::pipe` (docs/futures.md) under every engine in `loka::EngineKind::ALL`, on one and two
//! workers, and under the `all-thread` and `all-monitor` execution modes: where a continuation
//! runs among the actor's messages, that it never overlaps a handler, that each runs exactly once,
//! that many wake-ups queue one poll and none is lost, what happens to a pending future when its
//! actor stops, that a pending future keeps its actor alive, that a panicking future fails its
//! actor like a handler panic, and (feature `tokio`) Tokio's timer through
//! `SystemBuilder::tokio_handle`. The futures and the actor are in `pipe_support/`.

mod pipe_support;

use loka::{Actor, ActorRef, Context, ReplyTo};
use pipe_support::{configurations, log, oneshot, system, wait_until, Logger, Msg, Seen};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

// Ordering.

/// A future completed by a wake-up: its continuation runs after the messages enqueued before the
/// wake-up and before those enqueued after it.
#[test]
fn a_continuation_runs_between_the_messages_enqueued_before_and_after_its_wake_up() {
    for (label, config) in configurations() {
        let system = system(&config);
        let seen = Seen::default();
        let actor = system.spawn(Logger::new(&seen));
        let (shot, recv) = oneshot();
        actor.send(Msg::Pipe(1, recv, None)).unwrap();
        assert!(log(&actor).is_empty(), "{label}: polled once, pending");
        actor.send(Msg::Note(1)).unwrap();
        actor.send(Msg::Note(2)).unwrap();
        shot.fire(7);
        actor.send(Msg::Note(3)).unwrap();
        assert_eq!(log(&actor), ["n1", "n2", "c1=7", "n3"], "{label}");
        assert_eq!(
            shot.polls(),
            2,
            "{label}: polled in `pipe`, then once after the wake-up"
        );
        assert!(
            system.failures().is_empty(),
            "{label}: {:?}",
            system.failures()
        );
        system.shutdown();
    }
}

/// A future ready at its first poll (inside `pipe`): the continuation is queued behind the
/// messages already in the mailbox, before anything enqueued after `pipe` returns.
#[test]
fn a_future_ready_at_once_continues_after_the_queued_messages_and_before_later_ones() {
    for (label, config) in configurations() {
        let system = system(&config);
        let seen = Seen::default();
        let actor = system.spawn(Logger::new(&seen));
        let (open, gate) = mpsc::channel();
        actor.send(Msg::Gate(gate)).unwrap();
        // Both queued before the actor handles `PipeReady`.
        actor.send(Msg::PipeReady(1)).unwrap();
        actor.send(Msg::Note(1)).unwrap();
        open.send(()).unwrap();
        // Read without a message: a `Log` request sent now could be queued before the
        // continuation.
        wait_until(&system, &label, "three entries", || {
            seen.log.lock().unwrap().len() >= 3
        });
        // `n1001` is sent by the handler right after its `pipe` call.
        assert_eq!(
            *seen.log.lock().unwrap(),
            ["n1", "c1=1", "n1001"],
            "{label}"
        );
        system.shutdown();
    }
}

// Exclusion, exactly once, one poll per batch of wake-ups.

/// Many pipes from one actor, completed from several threads in a scrambled order (some before
/// the actor even pipes them, some ready at once) while other messages flow: each continuation
/// runs exactly once, and never alongside a handler (`Logger::exclusive` asserts).
#[test]
fn many_pipes_complete_in_any_order_each_exactly_once_never_overlapping_a_handler() {
    const PIPES: u32 = 120;
    const NOTES: u32 = 400;
    for (label, config) in configurations() {
        let system = system(&config);
        let seen = Seen::default();
        let actor = system.spawn(Logger::new(&seen));
        let mut shots = Vec::new();
        for id in 0..PIPES {
            if id % 10 == 9 {
                actor.send(Msg::PipeReady(id)).unwrap();
                continue;
            }
            let (shot, recv) = oneshot();
            actor.send(Msg::Pipe(id, recv, None)).unwrap();
            shots.push((id, shot));
        }
        // Scramble the firing order (a fixed permutation), split over three threads.
        shots.sort_by_key(|(id, _)| (id.wrapping_mul(2_654_435_761)) % 1009);
        let firers: Vec<_> = (0..3)
            .map(|t| {
                let mine: Vec<_> = shots.iter().skip(t).step_by(3).cloned().collect();
                std::thread::spawn(move || {
                    for (id, shot) in mine {
                        shot.fire(id);
                        std::thread::yield_now();
                    }
                })
            })
            .collect();
        for n in 0..NOTES {
            actor.send(Msg::Note(n)).unwrap();
        }
        firers.into_iter().for_each(|t| t.join().unwrap());
        let conts = |log: &[String]| log.iter().filter(|e| e.starts_with('c')).count();
        wait_until(&system, &label, "every continuation", || {
            conts(&seen.log.lock().unwrap()) >= PIPES as usize
        });
        system.run_until_idle();
        let log = log(&actor);
        let mut got: Vec<String> = log.iter().filter(|e| e.starts_with('c')).cloned().collect();
        got.sort();
        let mut want: Vec<String> = (0..PIPES).map(|id| format!("c{id}={id}")).collect();
        want.sort();
        assert_eq!(got, want, "{label}: each continuation exactly once");
        assert_eq!(
            log.iter().filter(|e| e.starts_with('n')).count() as u32,
            NOTES + PIPES / 10,
            "{label}"
        );
        assert!(
            system.failures().is_empty(),
            "{label}: {:?}",
            system.failures()
        );
        system.shutdown();
    }
}

/// Wake-ups while a poll is queued queue nothing more: 100 self-wake-ups during the first poll
/// give one more poll, and 100 wake-ups from another thread while the actor is busy one more.
/// And a future that wakes itself during each poll (a `yield_now` loop) is polled until done.
#[test]
fn many_wake_ups_queue_one_poll() {
    for (label, config) in configurations() {
        let system = system(&config);
        let seen = Seen::default();
        let actor = system.spawn(Logger::new(&seen));
        let (shot, recv) = oneshot();
        shot.0.lock().unwrap().self_wakes = 100;
        actor.send(Msg::Pipe(1, recv, None)).unwrap();
        // Two round trips: the first request may be queued before the self-woken poll.
        assert!(log(&actor).is_empty(), "{label}");
        assert!(log(&actor).is_empty(), "{label}");
        assert_eq!(
            shot.polls(),
            2,
            "{label}: the first poll, then one for 100 self-wake-ups"
        );
        let (open, gate) = mpsc::channel();
        actor.send(Msg::Gate(gate)).unwrap();
        shot.wake(100);
        open.send(()).unwrap();
        assert!(log(&actor).is_empty(), "{label}");
        assert_eq!(
            shot.polls(),
            3,
            "{label}: one poll for 100 wake-ups from a thread"
        );
        shot.fire(9);
        assert_eq!(log(&actor), ["c1=9"], "{label}");
        assert_eq!(shot.polls(), 4, "{label}");
        // ... and none is lost: a wake-up *during* a poll queued by another wake-up (here the
        // thread's) queues the next poll.
        let (shot, recv) = oneshot();
        actor.send(Msg::PipeYield(2, recv)).unwrap();
        assert_eq!(log(&actor), ["c1=9"], "{label}");
        shot.fire(50);
        wait_until(&system, &label, "a yielding future", || {
            seen.log.lock().unwrap().len() == 2
        });
        assert_eq!(log(&actor), ["c1=9", "c2=50"], "{label}");
        system.shutdown();
    }
}

// Lifetime.

/// An actor that stops with a future pending drops it (never polled again, its continuation
/// never runs, nothing it owns leaks), even though a waker for it is still held elsewhere; the
/// same when the system shuts down.
#[test]
fn a_stopping_actor_drops_its_pending_futures() {
    for (label, config) in configurations() {
        for by_shutdown in [false, true] {
            let system = system(&config);
            let seen = Seen::default();
            let actor = system.spawn(Logger::new(&seen));
            let (future_token, then_token) = (Arc::new(()), Arc::new(()));
            let (shot, mut recv) = oneshot();
            recv.token = Some(Arc::clone(&future_token));
            actor
                .send(Msg::Pipe(1, recv, Some(Arc::clone(&then_token))))
                .unwrap();
            assert!(log(&actor).is_empty(), "{label}");
            assert!(
                shot.0.lock().unwrap().waker.is_some(),
                "{label}: the test holds the future's waker (and so its task)"
            );
            if by_shutdown {
                system.shutdown();
            } else {
                actor.send(Msg::Stop).unwrap();
                wait_until(&system, &label, "the actor stops", || {
                    seen.stopped.load(SeqCst)
                });
            }
            assert!(seen.stopped.load(SeqCst), "{label}");
            assert_eq!(
                Arc::strong_count(&future_token),
                1,
                "{label}: future dropped"
            );
            assert_eq!(
                Arc::strong_count(&then_token),
                1,
                "{label}: continuation dropped"
            );
            assert_eq!(Arc::strong_count(&seen.state), 1, "{label}: state dropped");
            // A late wake-up reaches a stopped actor: nothing is polled, nothing runs.
            shot.fire(1);
            if !by_shutdown {
                system.run_until_idle();
            }
            assert_eq!(shot.polls(), 1, "{label}: never polled again");
            assert!(
                seen.log.lock().unwrap().is_empty(),
                "{label}: no continuation ran"
            );
            assert!(
                system.failures().is_empty(),
                "{label}: {:?}",
                system.failures()
            );
            system.shutdown();
        }
    }
}

/// A pending future keeps its actor alive with no `ActorRef` left; once the future completes
/// and its continuation has run, the actor stops as unreferenced.
#[test]
fn a_pending_future_keeps_its_unreferenced_actor_alive_until_it_completes() {
    for (label, config) in configurations() {
        let system = system(&config);
        let seen = Seen::default();
        let actor = system.spawn(Logger::new(&seen));
        let (shot, recv) = oneshot();
        actor.send(Msg::Pipe(1, recv, None)).unwrap();
        assert!(log(&actor).is_empty(), "{label}");
        drop(actor);
        system.run_until_idle();
        std::thread::sleep(Duration::from_millis(5));
        system.run_until_idle();
        assert!(
            !seen.stopped.load(SeqCst),
            "{label}: stopped with a future pending"
        );
        shot.fire(5);
        wait_until(&system, &label, "the actor stops as unreferenced", || {
            seen.stopped.load(SeqCst)
        });
        assert_eq!(*seen.log.lock().unwrap(), ["c1=5"], "{label}");
        assert_eq!(Arc::strong_count(&seen.state), 1, "{label}: state dropped");
        system.shutdown();
    }
}

// Failures.

/// Spawns `Logger` children and records their failures.
struct Parent {
    failures: Arc<Mutex<Vec<String>>>,
    child: Seen,
}

impl Actor for Parent {
    type Msg = ReplyTo<ActorRef<Msg>>;
    fn handle(&mut self, ctx: &mut Context<Self>, reply: ReplyTo<ActorRef<Msg>>) {
        reply.send(ctx.spawn(Logger::new(&self.child)));
    }
    fn child_failed(&mut self, _ctx: &mut Context<Self>, failure: loka::ActorFailure) {
        self.failures.lock().unwrap().push(failure.message);
    }
}

/// A panic while polling a piped future, at the first poll (inside `pipe`) or a later one (a
/// queued poll), stops the actor like a handler panic: in `System::failures`, reported to the
/// parent's `child_failed`, pending futures dropped.
#[test]
fn a_panicking_future_fails_its_actor_like_a_handler_panic() {
    for (label, config) in configurations() {
        for later in [false, true] {
            let system = system(&config);
            let failures = Arc::new(Mutex::new(Vec::new()));
            let seen = Seen::default();
            let parent = system.spawn(Parent {
                failures: Arc::clone(&failures),
                child: seen.clone(),
            });
            let child = parent.ask(|reply| reply).unwrap().wait().unwrap();
            let (shot, recv) = oneshot();
            let other_token = Arc::new(());
            let (_other, mut other) = oneshot();
            other.token = Some(Arc::clone(&other_token));
            child.send(Msg::Pipe(2, other, None)).unwrap();
            let message = if later {
                child.send(Msg::PipePanicLater(recv)).unwrap();
                assert!(log(&child).is_empty(), "{label}");
                shot.fire(1);
                "boom at a later poll"
            } else {
                child.send(Msg::PipePanicNow).unwrap();
                "boom at the first poll"
            };
            wait_until(&system, &label, "the child fails", || {
                !failures.lock().unwrap().is_empty()
            });
            assert_eq!(
                *failures.lock().unwrap(),
                [message],
                "{label}: child_failed"
            );
            let recorded = system.failures();
            assert_eq!(recorded.len(), 1, "{label}");
            assert_eq!(recorded[0].message, message, "{label}");
            assert_eq!(recorded[0].actor, child.id(), "{label}");
            assert!(seen.stopped.load(SeqCst), "{label}: `stopped` ran");
            assert!(child.is_stopped(), "{label}");
            assert_eq!(
                Arc::strong_count(&other_token),
                1,
                "{label}: other pipe dropped"
            );
            system.shutdown();
        }
    }
}

// Tokio.

/// A one-thread Tokio runtime with its timer: it drives the timers the actors' futures arm.
#[cfg(feature = "tokio")]
fn tokio_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_time()
        .build()
        .unwrap()
}

/// A system of `config` given `tokio`'s handle.
#[cfg(feature = "tokio")]
fn with_tokio(config: &loka::Config, tokio: &tokio::runtime::Runtime) -> loka::System {
    loka::System::builder()
        .config(config.clone())
        .tokio_handle(tokio.handle().clone())
        .build()
        .unwrap()
}

/// Sleeps with Tokio's timer in a piped future, then answers with the time asked for.
#[cfg(feature = "tokio")]
struct Sleeper;

#[cfg(feature = "tokio")]
impl Actor for Sleeper {
    type Msg = (u64, ReplyTo<u64>);
    fn handle(&mut self, ctx: &mut Context<Self>, (ms, reply): Self::Msg) {
        let sleep = async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            ms
        };
        ctx.pipe(sleep, move |_: &mut Self, _, ms| reply.send(ms));
    }
}

/// `tokio::time::sleep` in a piped future works through `SystemBuilder::tokio_handle` (the
/// runtime's own thread drives the timer and wakes the actor), and fails the actor without it
/// (no Tokio context to register with).
#[cfg(feature = "tokio")]
#[test]
fn tokio_time_works_in_a_piped_future_through_the_handle() {
    let tokio = tokio_runtime();
    for (label, config) in configurations() {
        let system = with_tokio(&config, &tokio);
        let sleeper = system.spawn(Sleeper);
        let start = std::time::Instant::now();
        let pending: Vec<_> = [30, 10, 20]
            .into_iter()
            .map(|ms| sleeper.ask(|reply| (ms, reply)).unwrap())
            .collect();
        let got: Vec<u64> = pending.into_iter().map(|p| p.wait().unwrap()).collect();
        assert_eq!(got, [30, 10, 20], "{label}");
        assert!(
            start.elapsed() >= Duration::from_millis(30),
            "{label}: slept"
        );
        assert!(
            system.failures().is_empty(),
            "{label}: {:?}",
            system.failures()
        );
        system.shutdown();

        let without = self::system(&config);
        let sleeper = without.spawn(Sleeper);
        let reply = sleeper.ask(|reply| (1, reply)).unwrap().wait();
        assert_eq!(reply, Err(loka::AskError::NoReply), "{label}");
        // The reply was dropped while the handler unwound, before the failure was recorded.
        wait_until(&without, &label, "the failure", || {
            !without.failures().is_empty()
        });
        let failures = without.failures();
        assert_eq!(failures.len(), 1, "{label}");
        assert!(
            failures[0].message.contains("Tokio"),
            "{label}: {}",
            failures[0].message
        );
        without.shutdown();
    }
}

/// Pipes a Tokio timer created in the sync handler itself, which needs the runtime entered
/// around the handler: it declares so (`requires`).
#[cfg(feature = "tokio")]
struct DirectSleeper;

#[cfg(feature = "tokio")]
impl Actor for DirectSleeper {
    type Msg = (u64, ReplyTo<u64>);
    fn handle(&mut self, ctx: &mut Context<Self>, (ms, reply): Self::Msg) {
        ctx.pipe(
            tokio::time::sleep(Duration::from_millis(ms)),
            move |_: &mut Self, _, ()| reply.send(ms),
        );
    }
    fn requires() -> &'static [loka::Requirement] {
        &[loka::Requirement::Tokio]
    }
}

/// An actor that declares `Requirement::Tokio` has the handle entered around its handler, so
/// `ctx.pipe(tokio::time::sleep(d), ..)` written directly in a sync handler works (without the
/// declaration Tokio panics there: no reactor running).
#[cfg(feature = "tokio")]
#[test]
fn a_tokio_future_made_in_a_sync_handler_works_when_the_actor_declares_tokio() {
    let tokio = tokio_runtime();
    for (label, config) in configurations() {
        let system = with_tokio(&config, &tokio);
        let sleeper = system.spawn(DirectSleeper);
        let start = std::time::Instant::now();
        let got = sleeper.ask(|reply| (15, reply)).unwrap().wait();
        assert_eq!(got, Ok(15), "{label}: {:?}", system.failures());
        assert!(start.elapsed() >= Duration::from_millis(15), "{label}");
        assert!(system.failures().is_empty(), "{label}");
        system.shutdown();
    }
}
