//! big (BenchErl): N actors each ping every actor once — itself included — all at the same time,
//! answer every ping with a pong, and take their pongs in a fixed order — an all-to-all exchange
//! with no hub that stands out. Francesquini's fork nevertheless spawns every pinger as a
//! `hub_process`; we keep that hint (see `docs/internals/workloads.md`).

use super::{noting, params, CollectMsg, Collector, Scale};
use crate::{await_result, Bench, Fault, Measured, Run, Size};
use loka::{Actor, ActorRef, Context, SpawnOptions, System};
use std::sync::Arc;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "bencherl-big",
    suite: "bencherl",
    about: "N actors each ping all N actors (themselves too), answering pings with pongs (2·N² messages)",
    run,
    faults: &[Fault::Drop, Fault::Duplicate, Fault::Misroute],
};

/// N = F·cores; F is 8 (short), 16 (intermediate), 24 (long).
fn actors(size: Size) -> usize {
    params(size, 1_400, of_scale)
}

fn of_scale(s: Scale) -> usize {
    s.pick(8, 16, 24) * s.cores
}

/// The messages of BenchErl's `run/3` between the pingers: each pinger sends `{ping, self()}` to
/// every process of `Procs` (itself included), and every `{ping, From}` is answered with
/// `{pong, self()}`. (The `{procs, ..}` start signals, the `{done, P}` reports to the run process
/// and the final `die`s are not counted.)
#[cfg(test)]
fn bencherl_messages(n: usize) -> u64 {
    let procs = n as u64;
    let pings: u64 = (0..n).map(|_| procs).sum();
    let pongs = pings;
    pings + pongs
}

type Table = Arc<[ActorRef<PingerMsg>]>;

enum PingerMsg {
    /// Set-up: every pinger's address.
    Table(Table),
    Start,
    /// From the pinger with this index.
    Ping(usize),
    /// From the pinger with this index.
    Pong(usize),
    /// The end (BenchErl's `die`): report the tally and stop.
    Die(ActorRef<CollectMsg<Tally>>),
}

/// What one pinger did and saw, reported when it stops.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Tally {
    pings_answered: usize,
    pongs: usize,
    /// Pongs from a pinger whose pong was already taken or already waiting in the buffer.
    unexpected_pongs: usize,
    /// Pings and pongs this pinger sent.
    sent: u64,
}

struct Pinger {
    index: usize,
    table: Option<Table>,
    /// Pongs still awaited, in BenchErl's order: the last pinger pinged first (its `Pongers` list
    /// is built by prepending). `expected` is the next one: N − 1, N − 2, …, 0; `None` when all
    /// arrived.
    expected: Option<usize>,
    /// Pongs that arrived before their turn (BenchErl leaves them in the mailbox, skipped by its
    /// selective receive; we keep them here until their turn).
    early: Vec<bool>,
    tally: Tally,
    collector: ActorRef<CollectMsg<usize>>,
    /// The fault this pinger injects into its pings (pinger 0 only, when the run injects one).
    fault: Fault,
}

impl Pinger {
    /// Sends `{ping, self()}` to every pinger in list order, itself included.
    fn ping_all(&mut self) {
        let table = self.table.as_ref().expect("table set");
        for pinger in table.iter() {
            pinger.send(PingerMsg::Ping(self.index)).expect("alive");
        }
        self.tally.sent += table.len() as u64;
    }

    /// [`ping_all`](Self::ping_all) with the injected fault: peer 1 gets no ping (Drop), two
    /// pings (Duplicate), or the ping meant for peer 2 (Misroute).
    fn ping_all_faulty(&mut self) {
        let table = self.table.as_ref().expect("table set");
        let targets: Vec<usize> = (0..table.len())
            .flat_map(|to| match (self.fault, to) {
                (Fault::Drop, 1) => vec![],
                (Fault::Duplicate, 1) => vec![1, 1],
                (Fault::Misroute, 2) => vec![1],
                _ => vec![to],
            })
            .collect();
        for &to in &targets {
            table[to].send(PingerMsg::Ping(self.index)).expect("alive");
        }
        self.tally.sent += targets.len() as u64;
    }

    fn pong(&mut self, from: usize) {
        self.tally.pongs += 1;
        let Some(mut expected) = self.expected else {
            self.tally.unexpected_pongs += 1;
            return;
        };
        if from != expected {
            // Not its turn: keep it, unless it was taken or kept already.
            if from > expected || std::mem::replace(&mut self.early[from], true) {
                self.tally.unexpected_pongs += 1;
            }
            return;
        }
        // Its turn: take it, and every kept one whose turn follows.
        loop {
            if expected == 0 {
                self.expected = None;
                let _ = self.collector.send(CollectMsg::Report(self.index));
                return;
            }
            expected -= 1;
            if !std::mem::take(&mut self.early[expected]) {
                self.expected = Some(expected);
                return;
            }
        }
    }
}

impl Actor for Pinger {
    type Msg = PingerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: PingerMsg) {
        match msg {
            PingerMsg::Table(table) => {
                self.expected = table.len().checked_sub(1);
                self.early = vec![false; table.len()];
                self.table = Some(table);
            }
            PingerMsg::Start => {
                if self.fault == Fault::None {
                    self.ping_all();
                } else {
                    self.ping_all_faulty();
                }
            }
            PingerMsg::Ping(from) => {
                let table = self.table.as_ref().expect("table set");
                table[from]
                    .send(PingerMsg::Pong(self.index))
                    .expect("alive");
                self.tally.sent += 1;
                self.tally.pings_answered += 1;
            }
            PingerMsg::Pong(from) => self.pong(from),
            PingerMsg::Die(tallies) => {
                let _ = tallies.send(CollectMsg::Report(self.tally));
                ctx.stop();
            }
        }
    }
}

fn run(system: &System, run: &Run) -> Measured {
    let n = actors(run.size);
    noting(measure(system, run, n), ("N", n))
}

fn measure(system: &System, run: &Run, n: usize) -> Measured {
    let collector = system.spawn(Collector::<usize>::new());
    // The fault (if any) is injected by pinger 0, decided here once.
    let table: Table = (0..n)
        .map(|index| {
            system.spawn_with(
                Pinger {
                    index,
                    table: None,
                    expected: None,
                    early: Vec::new(),
                    tally: Tally::default(),
                    collector: collector.clone(),
                    fault: if index == 0 { run.fault } else { Fault::None },
                },
                SpawnOptions::new().hub(true),
            )
        })
        .collect();
    for pinger in table.iter() {
        pinger
            .send(PingerMsg::Table(Arc::clone(&table)))
            .expect("fresh actor");
    }
    system.run_until_idle();
    let start = Instant::now();
    let pending = collector
        .ask(|done| CollectMsg::Arm { expected: n, done })
        .expect("fresh actor");
    for pinger in table.iter() {
        pinger.send(PingerMsg::Start).expect("fresh actor");
    }
    let reports = await_result(system, pending, run, BENCH.name);
    let elapsed = start.elapsed();
    // Every pinger has all its pongs; whatever is still in flight (an extra pong) arrives before
    // the `die`s. Each pinger then reports its tally and stops.
    system.run_until_idle();
    let tallies = system.spawn(Collector::<Tally>::new());
    let pending = tallies
        .ask(|done| CollectMsg::Arm { expected: n, done })
        .expect("fresh actor");
    for pinger in table.iter() {
        pinger
            .send(PingerMsg::Die(tallies.clone()))
            .expect("pinger alive");
    }
    drop(tallies);
    let tallies = await_result(system, pending, run, BENCH.name);
    // The pingers stop after their tallies.
    system.run_until_idle();
    let (mut reported, tallies) = match (reports, tallies) {
        (Ok(reported), Ok(tallies)) => (reported, tallies),
        (Err(reason), _) | (_, Err(reason)) => return Measured::failed(0, elapsed, reason),
    };
    reported.sort_unstable();
    let messages = tallies.iter().map(|t| t.sent).sum();
    // Every pinger answered N pings and took N pongs, one from each pinger, in order.
    let exact = tallies
        .iter()
        .filter(|t| (t.pings_answered, t.pongs, t.unexpected_pongs) == (n, n, 0))
        .count();
    Measured::checked(
        messages,
        elapsed,
        (reported == (0..n).collect::<Vec<_>>(), exact),
        (true, n),
    )
    .with_message_count(2 * (n * n) as u64, "2·N² = ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bencherl::Input;

    #[test]
    fn message_count_is_bencherls() {
        for input in [Input::Short, Input::Intermediate] {
            let n = of_scale(Scale { input, cores: 32 });
            assert_eq!(2 * (n * n) as u64, bencherl_messages(n), "{input:?}");
        }
        assert_eq!(bencherl_messages(512), 524_288);
        crate::bencherl::assert_counted_runs_match_bencherl(of_scale, measure, bencherl_messages);
    }

    #[test]
    fn pongs_are_taken_in_bencherls_order() {
        let system = System::builder().workers(1).build().unwrap();
        let collector = system.spawn(Collector::<usize>::new());
        let mut p = Pinger {
            index: 0,
            table: None,
            expected: Some(3),
            early: vec![false; 4],
            tally: Tally::default(),
            collector,
            fault: Fault::None,
        };
        p.pong(1);
        p.pong(2);
        assert_eq!(p.expected, Some(3));
        p.pong(3); // takes 3, then the kept 2 and 1
        assert_eq!(p.expected, Some(0));
        p.pong(2); // again: unexpected
        p.pong(0);
        assert_eq!(p.expected, None);
        assert_eq!((p.tally.pongs, p.tally.unexpected_pongs), (5, 1));
        system.shutdown();
    }
}
