//! timer_wheel (BenchErl): N actors; each pings every other actor in turn, waiting for the pong
//! before the next ping, while answering every ping it receives. Once it has answered every ping it
//! stops waiting: it fires its remaining pings back to back and stops, so some pongs reach a
//! stopped actor, as in BenchErl. BenchErl runs it twice: `wheel`,
//! where the wait for a pong has a (never expiring) timeout, and `no_wheel`, without one. Both are
//! here: `bencherl-timer_wheel` is `no_wheel`, `bencherl-timer_wheel-timeouts` is `wheel` — each
//! wait for a pong arms a one-shot timer of [`TIMEOUT`] (Erlang's `receive ... after`), cancelled
//! when the pong comes, so every ping costs a timer insert and a cancel; a timeout that fires fails
//! the run. Francesquini's fork spawns every actor as a `hub_process`; so do we.

use super::{noting, params, CollectMsg, Collector, Scale};
use crate::verify::{fingerprint, mix};
use crate::{await_result, Bench, Fault, Measured, Run, Size};
use loka::{Actor, ActorRef, Context, SpawnOptions, System, TimerHandle};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(super) const BENCH: Bench = Bench {
    name: "bencherl-timer_wheel",
    suite: "bencherl",
    about: "N actors each ping the N − 1 others one at a time, no timeouts (2·N·(N − 1) messages)",
    run,
    faults: &[Fault::Drop, Fault::Duplicate, Fault::Misroute],
};

/// BenchErl's `wheel` variant: every wait for a pong has a timeout.
pub(super) const BENCH_TIMEOUTS: Bench = Bench {
    name: "bencherl-timer_wheel-timeouts",
    suite: "bencherl",
    about: "timer_wheel where each wait for a pong arms a (never expiring) timeout, cancelled by the pong",
    run: run_timeouts,
    faults: &[Fault::Drop, Fault::Duplicate, Fault::Misroute],
};

/// The timeout of a wait for a pong: long enough never to expire in a correct run (BenchErl's
/// waits never time out either); a wait that does expire is counted and fails the check.
const TIMEOUT: Duration = Duration::from_secs(60);

/// N = F·cores; F is 16 (short), 40 (intermediate), 125 (long).
fn actors(size: Size) -> usize {
    params(size, 1_400, of_scale)
}

fn of_scale(s: Scale) -> usize {
    s.pick(16, 40, 125) * s.cores
}

/// The messages of BenchErl's `test/2` between the handlers: each handler's `loop/4` sends
/// `{self(), ping}` to every pid of `Pids -- [Pid]`, and its `recv_loop/2` answers every ping it
/// takes with `{self(), pong}` — N − 1 of them, as it returns only once N − 1 are answered. (The
/// `init`, `start` and `done` messages are not counted.)
#[cfg(test)]
fn bencherl_messages(n: usize) -> u64 {
    let others = (n - 1) as u64;
    let pings: u64 = (0..n).map(|_| others).sum();
    let pongs: u64 = (0..n).map(|_| others).sum();
    pings + pongs
}

type Table = Arc<[ActorRef<HandlerMsg>]>;

enum HandlerMsg {
    /// `{init, Pids}`.
    Init(Table),
    Start,
    /// `{From, ping}`.
    Ping(usize),
    /// `{From, pong}`.
    Pong(usize),
}

/// What a handler reports when it is done.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Report {
    index: usize,
    pings_sent: u64,
    /// Pings that could not be sent (the target had stopped).
    pings_lost: u64,
    pings_answered: usize,
    /// [`fingerprint`] of the senders of the pings it answered.
    pingers: u64,
    /// Pongs queued at their handler (which may stop before it takes them: dead letters).
    pongs_queued: u64,
    /// Pongs whose send failed because their handler had stopped.
    pongs_to_stopped: u64,
    pongs_received: u64,
    /// Pongs from an actor it was not waiting for.
    stray: u64,
    /// Waits for a pong that timed out (`wheel` variant).
    timeouts: u64,
}

struct Handler {
    table: Option<Table>,
    /// The next actor to ping (in list order, skipping itself); `table.len()` when all were.
    next: usize,
    /// The actor whose pong is awaited.
    awaiting: Option<usize>,
    /// Pings that arrived before `start` (BenchErl's handler takes `start` first, leaving them in
    /// its mailbox); `None` once started.
    before_start: Option<Vec<usize>>,
    report: Report,
    collector: ActorRef<CollectMsg<Report>>,
    /// The fault it injects into its pings (handler 0 only, when the run injects one).
    fault: Fault,
    /// `wheel` variant: waits for a pong time out.
    with_timeouts: bool,
    /// The timeout of the current wait.
    wait: Option<TimerHandle>,
}

impl Handler {
    fn others(&self) -> usize {
        self.table.as_ref().map_or(0, |t| t.len() - 1)
    }

    /// Sends the next ping.
    fn ping(&mut self, to: usize) {
        if self.fault != Fault::None {
            return self.ping_faulty(to);
        }
        self.ping_one(to);
    }

    fn ping_one(&mut self, to: usize) {
        let table = self.table.as_ref().expect("initialised");
        match table[to].send(HandlerMsg::Ping(self.report.index)) {
            Ok(()) => self.report.pings_sent += 1,
            Err(_) => self.report.pings_lost += 1,
        }
    }

    /// [`ping`](Self::ping) with the injected fault: for the ping meant for actor 1, no ping
    /// (Drop), two (Duplicate), or one to actor 2 instead (Misroute).
    fn ping_faulty(&mut self, to: usize) {
        match (self.fault, to) {
            (Fault::Drop, 1) => {}
            (Fault::Duplicate, 1) => {
                self.ping_one(1);
                self.ping_one(1);
            }
            (Fault::Misroute, 1) => self.ping_one(2),
            _ => self.ping_one(to),
        }
    }

    /// BenchErl's `loop/4` with `recv_loop/2`: ping the next actor and wait for its pong, but once
    /// every ping from the others has been answered stop waiting: fire the remaining pings back to
    /// back, report and stop (pongs still to come reach a stopped actor).
    fn proceed(&mut self, ctx: &mut Context<Self>) {
        let others = self.others();
        let len = others + 1;
        loop {
            if self.awaiting.is_some() && self.report.pings_answered < others {
                return;
            }
            self.awaiting = None;
            if let Some(wait) = self.wait.take() {
                wait.cancel();
            }
            if self.next == self.report.index {
                self.next += 1;
            }
            if self.next < len {
                let to = self.next;
                self.next += 1;
                self.ping(to);
                self.awaiting = Some(to);
                if self.with_timeouts {
                    self.wait = Some(ctx.run_after(TIMEOUT, |me: &mut Handler, ctx| {
                        me.report.timeouts += 1;
                        me.awaiting = None;
                        me.wait = None;
                        me.proceed(ctx);
                    }));
                }
                continue;
            }
            if self.report.pings_answered == others {
                let _ = self.collector.send(CollectMsg::Report(self.report));
                ctx.stop();
            }
            return;
        }
    }
}

impl Handler {
    fn answer(&mut self, ctx: &mut Context<Self>, from: usize) {
        let table = self.table.as_ref().expect("initialised");
        match table[from].send(HandlerMsg::Pong(self.report.index)) {
            Ok(()) => self.report.pongs_queued += 1,
            Err(_) => self.report.pongs_to_stopped += 1,
        }
        self.report.pings_answered += 1;
        self.report.pingers = self.report.pingers.wrapping_add(mix(from as u64));
        self.proceed(ctx);
    }
}

impl Actor for Handler {
    type Msg = HandlerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: HandlerMsg) {
        match msg {
            HandlerMsg::Init(table) => self.table = Some(table),
            HandlerMsg::Start => {
                let early = self.before_start.take().unwrap_or_default();
                // The first ping, then the pings that were waiting, in their order.
                self.proceed(ctx);
                for from in early {
                    self.answer(ctx, from);
                }
            }
            HandlerMsg::Ping(from) => match &mut self.before_start {
                Some(early) => early.push(from),
                None => self.answer(ctx, from),
            },
            HandlerMsg::Pong(from) => {
                self.report.pongs_received += 1;
                if let Some(wait) = self.wait.take() {
                    wait.cancel();
                }
                if self.awaiting.take() != Some(from) {
                    self.report.stray += 1;
                }
                self.proceed(ctx);
            }
        }
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let n = actors(run.size);
    noting(measure(system, run, n), ("N", n))
}

fn run_timeouts(system: &System, run: &Run) -> Measured {
    let n = actors(run.size);
    noting(measure_with(system, run, n, true), ("N", n))
}

fn measure(system: &System, run: &Run, n: usize) -> Measured {
    measure_with(system, run, n, false)
}

fn measure_with(system: &System, run: &Run, n: usize, with_timeouts: bool) -> Measured {
    let collector = system.spawn(Collector::<Report>::new());
    let table: Table = (0..n)
        .map(|index| {
            system.spawn_with(
                Handler {
                    table: None,
                    next: 0,
                    awaiting: None,
                    before_start: Some(Vec::new()),
                    report: Report {
                        index,
                        ..Report::default()
                    },
                    collector: collector.clone(),
                    // The fault (if any) is injected by handler 0, decided here once.
                    fault: if index == 0 { run.fault } else { Fault::None },
                    with_timeouts,
                    wait: None,
                },
                SpawnOptions::new().hub(true),
            )
        })
        .collect();
    for handler in table.iter() {
        handler
            .send(HandlerMsg::Init(Arc::clone(&table)))
            .expect("fresh actor");
    }
    system.run_until_idle();
    let dead_before = system.stats().dead_letters;
    let start = Instant::now();
    let pending = collector
        .ask(|done| CollectMsg::Arm { expected: n, done })
        .expect("fresh actor");
    for handler in table.iter() {
        handler.send(HandlerMsg::Start).expect("fresh actor");
    }
    let reports = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    // Every handler has stopped or is stopping: the pongs queued at a stopped handler are counted
    // as dead letters when it terminates, those still being written when its last reference goes.
    for handler in table.iter() {
        handler.stop();
    }
    drop(table);
    system.run_until_idle();
    let dead_letters = system.stats().dead_letters - dead_before;
    let mut reports = match reports {
        Ok(reports) => reports,
        Err(reason) => return Measured::failed(0, elapsed, reason),
    };
    reports.sort_unstable_by_key(|r| r.index);
    let sum = |f: fn(&Report) -> u64| reports.iter().map(f).sum::<u64>();
    let pings_sent = sum(|r| r.pings_sent);
    let pongs_sent = sum(|r| r.pongs_queued + r.pongs_to_stopped);
    let pongs_received = sum(|r| r.pongs_received);
    let pongs_to_stopped = sum(|r| r.pongs_to_stopped) + dead_letters;
    let others = (n - 1) as u64;
    // Each handler answered exactly one ping from each other handler and took only the pongs it
    // awaited; no ping was lost; every pong sent was either taken or reached a stopped handler.
    let all_pingers = fingerprint(0..n as u64);
    let exact = reports
        .iter()
        .enumerate()
        .filter(|&(i, r)| {
            r.index == i
                && r.pings_answered as u64 == others
                && r.pingers == all_pingers.wrapping_sub(mix(i as u64))
                && r.stray == 0
                && r.pings_lost == 0
                && r.timeouts == 0
        })
        .count();
    let pairs = n as u64 * others;
    let accounted = pongs_received + pongs_to_stopped;
    let mut measured = Measured::checked(
        pings_sent + pongs_sent,
        elapsed,
        (exact, accounted),
        (n, pairs),
    )
    .with_message_count(2 * pairs, "2·N·(N − 1) = ");
    measured.check = format!(
        "{}; {pongs_to_stopped} of {pongs_sent} pongs ({:.1} %) reached a stopped handler",
        measured.check,
        100.0 * pongs_to_stopped as f64 / pongs_sent.max(1) as f64
    );
    measured
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bencherl::Input;

    #[test]
    fn message_count_is_bencherls() {
        for input in [Input::Short, Input::Intermediate] {
            let n = of_scale(Scale { input, cores: 32 });
            assert_eq!(2 * (n * (n - 1)) as u64, bencherl_messages(n), "{input:?}");
        }
        assert_eq!(bencherl_messages(1_280), 3_274_240);
        crate::bencherl::assert_counted_runs_match_bencherl(of_scale, measure, bencherl_messages);
    }
}
