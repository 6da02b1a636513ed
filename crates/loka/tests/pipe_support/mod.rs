//! What `tests/pipe.rs` pipes and who pipes it: the configurations, a one-shot future completed
//! (or only woken) from any thread, and the `Logger` actor whose log shows where each
//! continuation ran.

#![allow(dead_code)]

use loka::{Actor, ActorRef, Config, Context, EngineKind, ExecMode, ReplyTo, System};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Mutex};
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::{Duration, Instant};

/// Every engine, on one and two workers, and two execution modes. Wake-ups from the test's threads are input from plain
/// threads for the simulation: fold them in quickly (docs/simulation.md).
pub fn configurations() -> Vec<(String, Config)> {
    let mut out = Vec::new();
    for &engine in EngineKind::ALL {
        for workers in [1, 2] {
            let mut config = Config {
                engine,
                workers,
                ..Config::default()
            };
            config.sim.quiet_ms = 1;
            out.push((format!("{engine} workers={workers}"), config));
        }
    }
    // Polls on dedicated threads, and wake-ups from a worker running the actor inline.
    for exec in [ExecMode::AllThread, ExecMode::AllMonitor] {
        let config = Config {
            workers: 2,
            exec,
            ..Config::default()
        };
        out.push((format!("actor-centric workers=2 exec={exec}"), config));
    }
    out
}

pub fn system(config: &Config) -> System {
    System::builder().config(config.clone()).build().unwrap()
}

// A one-shot future completed (or only woken) from any thread.

#[derive(Default)]
pub struct Slot {
    pub value: Option<u32>,
    pub waker: Option<Waker>,
    pub polls: usize,
    /// Times the next poll wakes its own waker before returning `Pending`.
    pub self_wakes: usize,
}

/// The test's end of a [`Recv`]: completes it, wakes it, counts its polls.
#[derive(Clone)]
pub struct Shot(pub Arc<Mutex<Slot>>);

/// The future an actor pipes. `token` is dropped with it (counted to see that it was).
pub struct Recv {
    slot: Arc<Mutex<Slot>>,
    pub token: Option<Arc<()>>,
}

pub fn oneshot() -> (Shot, Recv) {
    let slot = Arc::new(Mutex::new(Slot::default()));
    (Shot(Arc::clone(&slot)), Recv { slot, token: None })
}

impl Shot {
    pub fn fire(&self, value: u32) {
        let waker = {
            let mut slot = self.0.lock().unwrap();
            slot.value = Some(value);
            slot.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Wakes the stored waker `n` times without completing the future.
    pub fn wake(&self, n: usize) {
        let waker = self.0.lock().unwrap().waker.clone().expect("polled once");
        for _ in 0..n {
            waker.wake_by_ref();
        }
    }

    pub fn polls(&self) -> usize {
        self.0.lock().unwrap().polls
    }
}

impl Future for Recv {
    type Output = u32;
    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<u32> {
        let self_wakes = {
            let mut slot = self.slot.lock().unwrap();
            slot.polls += 1;
            if let Some(value) = slot.value.take() {
                return Poll::Ready(value);
            }
            slot.waker = Some(cx.waker().clone());
            std::mem::take(&mut slot.self_wakes)
        };
        for _ in 0..self_wakes {
            cx.waker().wake_by_ref();
        }
        Poll::Pending
    }
}

/// Returns `Pending` once, having woken itself (as `tokio::task::yield_now` does).
struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        if std::mem::replace(&mut self.0, true) {
            return Poll::Ready(());
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

// The actor under test.

pub enum Msg {
    /// Pipe the future; the continuation logs `c{id}={value}`, holding `token` until it runs.
    Pipe(u32, Recv, Option<Arc<()>>),
    /// Pipe a future ready at once, then send itself `Note(1000 + id)`.
    PipeReady(u32),
    /// Pipe a future that waits for `n` from the `Recv`, then wakes itself and returns `Pending`
    /// `n` times (a `yield_now` loop), then returns `n`.
    PipeYield(u32, Recv),
    /// Pipe a future that panics at its first poll, inside `pipe`.
    PipePanicNow,
    /// Pipe the future, wrapped so that it panics once it completes (a later poll).
    PipePanicLater(Recv),
    /// Logs `n{id}`.
    Note(u32),
    /// Blocks the handler until the test sends on the channel.
    Gate(mpsc::Receiver<()>),
    Stop,
    Log(ReplyTo<Vec<String>>),
}

/// What a test can see of a [`Logger`] without a reference to it.
#[derive(Clone, Default)]
pub struct Seen {
    pub log: Arc<Mutex<Vec<String>>>,
    /// Set while a handler or continuation runs: finding it set means two overlapped.
    pub busy: Arc<AtomicBool>,
    pub stopped: Arc<AtomicBool>,
    /// Held by the actor's state: a count of 1 means the state was dropped.
    pub state: Arc<()>,
}

pub struct Logger {
    seen: Seen,
    _state: Arc<()>,
}

impl Logger {
    pub fn new(seen: &Seen) -> Self {
        Logger {
            seen: seen.clone(),
            _state: Arc::clone(&seen.state),
        }
    }

    /// Runs `body` as one handler or continuation, checking that no other one overlaps it.
    fn exclusive(&mut self, body: impl FnOnce(&mut Self)) {
        assert!(
            !self.seen.busy.swap(true, SeqCst),
            "a continuation or handler overlapped another"
        );
        // Widen the window in which an overlap would be seen.
        for _ in 0..200 {
            std::hint::spin_loop();
        }
        body(self);
        self.seen.busy.store(false, SeqCst);
    }

    fn push(&self, entry: String) {
        self.seen.log.lock().unwrap().push(entry);
    }
}

impl Actor for Logger {
    type Msg = Msg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: Msg) {
        self.exclusive(|me| match msg {
            Msg::Pipe(id, recv, token) => ctx.pipe(recv, move |me: &mut Self, _ctx, value| {
                let _held = token;
                me.exclusive(|me| me.push(format!("c{id}={value}")));
            }),
            Msg::PipeReady(id) => {
                ctx.pipe(std::future::ready(id), move |me: &mut Self, _ctx, value| {
                    me.exclusive(|me| me.push(format!("c{id}={value}")));
                });
                ctx.myself().send(Msg::Note(1000 + id)).unwrap();
            }
            Msg::PipeYield(id, mut recv) => ctx.pipe(
                async move {
                    let n = (&mut recv).await;
                    for _ in 0..n {
                        YieldNow(false).await;
                    }
                    n
                },
                move |me: &mut Self, _ctx, value| {
                    me.exclusive(|me| me.push(format!("c{id}={value}")))
                },
            ),
            Msg::PipePanicNow => ctx.pipe(
                std::future::poll_fn(|_| -> Poll<u32> { panic!("boom at the first poll") }),
                |_: &mut Self, _, _| unreachable!("the future panicked"),
            ),
            Msg::PipePanicLater(mut recv) => ctx.pipe(
                std::future::poll_fn(move |cx| match Pin::new(&mut recv).poll(cx) {
                    Poll::Ready(_) => panic!("boom at a later poll"),
                    Poll::Pending => Poll::<u32>::Pending,
                }),
                |_: &mut Self, _, _| unreachable!("the future panicked"),
            ),
            Msg::Note(id) => me.push(format!("n{id}")),
            Msg::Gate(open) => open.recv().unwrap(),
            Msg::Stop => ctx.stop(),
            Msg::Log(reply) => reply.send(me.seen.log.lock().unwrap().clone()),
        });
    }
    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.seen.stopped.store(true, SeqCst);
    }
}

pub fn log(actor: &ActorRef<Msg>) -> Vec<String> {
    actor.ask(Msg::Log).unwrap().wait().unwrap()
}

/// Waits (up to 10 s) until `done` holds, letting the system run; a timeout shows the actors'
/// failures (an assertion inside an actor stops it instead of failing the test).
pub fn wait_until(system: &System, label: &str, what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(
            Instant::now() < deadline,
            "{label}: timed out waiting: {what} (failures: {:?})",
            system.failures()
        );
        system.run_until_idle_timeout(Duration::from_millis(10));
        std::thread::sleep(Duration::from_millis(1));
    }
}
