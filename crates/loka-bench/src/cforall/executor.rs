//! Executor (Cforall, "Performance: Executor"): A actors in groups of S; every actor sends and
//! receives S messages per round, one to and one from every member of its group (itself
//! included), for R rounds. There is no work but the sends: the executor (loka's engine) is the
//! bottleneck.
//!
//! As in Cforall's program, sends are driven by receipts: an actor's first message (its kick)
//! and each message it receives make it send one message, to the group members in turn (its k-th
//! send goes to member k mod S), until it has sent S·R; it has then sent R to, and received R
//! from, every member. An actor completes round r once it has sent and received S·r messages.
//!
//! The same workload, laid out adversarially, is the balance benchmarks (`balance_one.rs`,
//! `balance_multi.rs`); this file holds it for all three. Actors are created in round-robin
//! order over the workers, as Cforall assigns them to its queues: the actor created at position
//! p is spawned with `Placement::Worker(p mod W)`, and the kicks of worker w's actors are sent by
//! a starter actor placed on w, so that the work begins where the actors were placed under every
//! policy (a woken actor is queued by the policy from where its waker runs). The actors are the
//! first spawns of the run, so an engine that ignores the hint and places round robin in creation
//! order over one queue per worker lays them out the same way.
//!
//! Check: every message names its sender. After the run, once the system is quiet, every member
//! reports what it sent and received and the (wrapping) sum of its senders' mixed indices; the
//! calling thread compares each with R messages from every member of its group. A lost message
//! leaves a member short (the system goes idle without a result); a duplicated or misrouted one
//! shows in the counts of the members involved. Dummies and all other actors of the run must have
//! stopped at the end (the system's live-actor count).

use super::noting;
use crate::verify::mix;
use crate::{await_result, Bench, Fault, Measured, Run, Size};
use loka::{Actor, ActorRef, Context, Placement, ReplyTo, SpawnOptions, System};
use std::sync::Arc;
use std::time::Instant;

pub(super) const BENCH: Bench = Bench {
    name: "cforall-executor",
    suite: "cforall",
    about: "A actors in groups of S, each sends to and receives from every member of its group for R rounds (A·S·R messages)",
    run,
    faults: FAULTS,
};

/// The faults the group workload injects, into the first send of working actor 0: not sent
/// (Drop), sent twice (Duplicate), sent to the next member of the group (Misroute).
pub(super) const FAULTS: &[Fault] = &[Fault::Drop, Fault::Duplicate, Fault::Misroute];

/// Working actors A, group size S, rounds R.
#[derive(Debug, Clone, Copy)]
struct Params {
    actors: usize,
    group: usize,
    rounds: u64,
}

fn of(size: Size) -> Params {
    size.pick(
        Params {
            actors: 2_000,
            group: 100,
            rounds: 20,
        },
        Params {
            actors: 40_000,
            group: 100,
            rounds: 400,
        },
    )
}

fn run(system: &System, run: &Run) -> Measured {
    let p = of(run.size);
    let layout = Layout {
        loaded: Loaded::All,
        per_worker: false,
        actors: p.actors,
        group: p.group,
        rounds: p.rounds,
    };
    noting(measure(system, run, BENCH.name, &layout), p)
}

/// Which workers get working actors; the others get dummies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Loaded {
    /// Every worker (the executor benchmark).
    All,
    /// Worker 0 only (balance-one).
    First,
    /// The even workers, 0, 2, 4, … (balance-multi).
    Even,
}

impl Loaded {
    fn has(self, worker: usize) -> bool {
        match self {
            Loaded::All => true,
            Loaded::First => worker == 0,
            Loaded::Even => worker % 2 == 0,
        }
    }
}

/// How the group workload is laid out.
#[derive(Debug, Clone, Copy)]
pub(super) struct Layout {
    pub(super) loaded: Loaded,
    /// `false`: `actors` working actors in all, grouped in creation order whatever their worker
    /// (the executor, balance-one). `true`: `actors` working actors on *each* loaded worker,
    /// grouped per worker, so that a group lives on one worker (balance-multi).
    pub(super) per_worker: bool,
    /// Working actors, in all or per loaded worker (see `per_worker`); a multiple of `group`.
    pub(super) actors: usize,
    /// Group size S.
    pub(super) group: usize,
    /// Rounds R.
    pub(super) rounds: u64,
}

/// One creation position of the round-robin layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// A working actor: its group and its place in the group.
    Member { group: usize, member: usize },
    /// An actor that stops on its first message.
    Dummy,
}

/// Every creation position, in order; position p belongs to worker p mod `workers`. Also returns
/// the number of groups.
fn positions(layout: &Layout, workers: usize) -> (Vec<Slot>, usize) {
    let loaded: Vec<usize> = (0..workers).filter(|&w| layout.loaded.has(w)).collect();
    let per_group = layout.actors / layout.group;
    let (cycles, groups) = if layout.per_worker {
        (layout.actors, per_group * loaded.len())
    } else {
        // Enough round-robin cycles to place `actors` on the loaded workers.
        (layout.actors.div_ceil(loaded.len()), per_group)
    };
    let mut slots = Vec::with_capacity(cycles * workers);
    let mut working = 0;
    for cycle in 0..cycles {
        for w in 0..workers {
            let slot = match loaded.iter().position(|&l| l == w) {
                Some(nth) if layout.per_worker => Slot::Member {
                    group: nth * per_group + cycle / layout.group,
                    member: cycle % layout.group,
                },
                Some(_) if working < layout.actors => {
                    working += 1;
                    Slot::Member {
                        group: (working - 1) / layout.group,
                        member: (working - 1) % layout.group,
                    }
                }
                // The last cycle of a layout whose actors do not fill it.
                Some(_) => continue,
                None => Slot::Dummy,
            };
            slots.push(slot);
        }
    }
    (slots, groups)
}

/// A group: its members' addresses, in group order.
type Group = Arc<[ActorRef<MemberMsg>]>;

enum MemberMsg {
    /// The start, from the starter of the member's worker.
    Kick(Box<Kickoff>),
    /// From the working actor with this index.
    Peer(u32),
    /// After the run: report, then stop.
    Collect(Box<ReplyTo<Counts>>),
}

/// What a member learns at its start.
struct Kickoff {
    group: Group,
    sink: ActorRef<SinkMsg>,
}

/// What one member did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Counts {
    sent: u64,
    received: u64,
    /// The wrapping sum of `mix(sender index)` over the messages received.
    senders: u64,
    /// Rounds completed: S·r messages sent and received.
    rounds: u64,
}

struct Member {
    /// Its index among the working actors (creation order).
    index: u32,
    group: Option<Group>,
    /// Messages to send (and to receive): S·R.
    quota: u64,
    /// Messages received before the kick, whose sends wait for the group's addresses.
    owed: u64,
    counts: Counts,
    finished: bool,
    sink: Option<ActorRef<SinkMsg>>,
    /// The injected fault, applied to its first send (working actor 0 only).
    fault: Fault,
}

impl Member {
    fn send_next(&mut self) {
        if self.counts.sent == self.quota {
            return;
        }
        let group = self.group.as_ref().expect("kicked");
        let target = (self.counts.sent % group.len() as u64) as usize;
        self.counts.sent += 1;
        let msg = || MemberMsg::Peer(self.index);
        // Ignored failures: only an injected fault can send to a member that finished and
        // was collected.
        match std::mem::replace(&mut self.fault, Fault::None) {
            // Sent, never delivered.
            Fault::Drop => {}
            Fault::Duplicate => {
                let _ = group[target].send(msg());
                let _ = group[target].send(msg());
            }
            Fault::Misroute => {
                let _ = group[(target + 1) % group.len()].send(msg());
            }
            _ => {
                let _ = group[target].send(msg());
            }
        }
    }

    fn check_finished(&mut self) {
        if !self.finished && self.counts.sent == self.quota && self.counts.received >= self.quota {
            self.finished = true;
            let sink = self.sink.as_ref().expect("kicked");
            sink.send(SinkMsg::Finished(self.index))
                .expect("sink alive");
        }
    }
}

impl Actor for Member {
    type Msg = MemberMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: MemberMsg) {
        match msg {
            MemberMsg::Kick(kickoff) => {
                let Kickoff { group, sink } = *kickoff;
                self.group = Some(group);
                self.sink = Some(sink);
                for _ in 0..=std::mem::take(&mut self.owed) {
                    self.send_next();
                }
            }
            MemberMsg::Peer(from) => {
                self.counts.received += 1;
                self.counts.senders = self.counts.senders.wrapping_add(mix(u64::from(from)));
                if self.group.is_some() {
                    self.send_next();
                } else {
                    self.owed += 1;
                }
            }
            MemberMsg::Collect(reply) => {
                let size = self.group.as_ref().map_or(1, |g| g.len() as u64);
                reply.send(Counts {
                    rounds: self.counts.sent.min(self.counts.received) / size,
                    ..self.counts
                });
                ctx.stop();
                return;
            }
        }
        self.check_finished();
    }
}

/// An actor of the balance layouts that stops on its first message.
struct Dummy;

impl Actor for Dummy {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _kick: ()) {
        ctx.stop();
    }
}

/// A kick a starter sends.
enum Kick {
    /// A member and what it learns (boxed at set-up, as the message carries it).
    Member(ActorRef<MemberMsg>, Box<Kickoff>),
    Dummy(ActorRef<()>),
}

/// Placed on one worker, it kicks that worker's actors in creation order in its first
/// activation, then stops.
struct Starter {
    kicks: Vec<Kick>,
}

impl Actor for Starter {
    type Msg = ();
    fn started(&mut self, ctx: &mut Context<Self>) {
        for kick in self.kicks.drain(..) {
            match kick {
                Kick::Member(member, kickoff) => {
                    member.send(MemberMsg::Kick(kickoff)).expect("member alive")
                }
                Kick::Dummy(dummy) => dummy.send(()).expect("dummy alive"),
            }
        }
        ctx.stop();
    }
    fn handle(&mut self, _ctx: &mut Context<Self>, _: ()) {}
}

enum SinkMsg {
    /// From the driver: spawn a starter on each worker with its kicks (index = worker).
    Start {
        kicks: Vec<Vec<Kick>>,
        done: ReplyTo<()>,
    },
    /// The working actor with this index sent and received all its messages.
    Finished(u32),
}

/// Starts the run and answers the driver once every working actor has finished.
struct Sink {
    finished: Vec<bool>,
    left: usize,
    done: Option<ReplyTo<()>>,
}

impl Actor for Sink {
    type Msg = SinkMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: SinkMsg) {
        match msg {
            SinkMsg::Start { kicks, done } => {
                self.done = Some(done);
                for (worker, kicks) in kicks.into_iter().enumerate() {
                    if !kicks.is_empty() {
                        let options = SpawnOptions::new().placement(Placement::Worker(worker));
                        drop(ctx.spawn_with(Starter { kicks }, options));
                    }
                }
            }
            SinkMsg::Finished(index) => {
                if !std::mem::replace(&mut self.finished[index as usize], true) {
                    self.left -= 1;
                }
            }
        }
        if self.left == 0 {
            if let Some(done) = self.done.take() {
                done.send(());
            }
            ctx.stop();
        }
    }
}

/// The run compared with the expectation.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    members: usize,
    /// Members whose counts differ from R messages to and from every member of their group.
    members_off: usize,
    /// Actors of the run (members, dummies, starters, sink) still alive at the end.
    alive: u64,
}

/// Runs the group workload laid out as `layout` on this system's workers.
pub(super) fn measure(system: &System, run: &Run, name: &str, layout: &Layout) -> Measured {
    let workers = system.workers();
    let (slots, groups) = positions(layout, workers);
    let quota = layout.group as u64 * layout.rounds;
    let members = groups * layout.group;
    system.run_until_idle();
    let before = system.stats();
    // Set-up, untimed: every actor, in round-robin creation order.
    let mut group_refs: Vec<Vec<ActorRef<MemberMsg>>> = vec![Vec::new(); groups];
    // Per working actor, by index (its creation order among the working actors).
    let mut member_refs: Vec<ActorRef<MemberMsg>> = Vec::with_capacity(members);
    let mut group_of: Vec<usize> = Vec::with_capacity(members);
    // Per worker, in creation order: a working actor's index, or a dummy.
    let mut order: Vec<Vec<Result<usize, ActorRef<()>>>> =
        (0..workers).map(|_| Vec::new()).collect();
    for (p, slot) in slots.iter().enumerate() {
        let worker = p % workers;
        let options = SpawnOptions::new().placement(Placement::Worker(worker));
        match *slot {
            Slot::Member { group, member } => {
                debug_assert_eq!(group_refs[group].len(), member, "members in group order");
                let index = member_refs.len();
                let actor = system.spawn_with(
                    Member {
                        index: index as u32,
                        group: None,
                        quota,
                        owed: 0,
                        counts: Counts::default(),
                        finished: false,
                        sink: None,
                        fault: if index == 0 { run.fault } else { Fault::None },
                    },
                    options,
                );
                group_refs[group].push(actor.clone());
                member_refs.push(actor);
                group_of.push(group);
                order[worker].push(Ok(index));
            }
            Slot::Dummy => order[worker].push(Err(system.spawn_with(Dummy, options))),
        }
    }
    // Spawned last, so that the actors above are the system's first spawns from this thread: an
    // engine that ignores the placement hint and places round robin in creation order still lays
    // them out as intended when it has one queue per worker.
    let sink = system.spawn(Sink {
        finished: vec![false; members],
        left: members,
        done: None,
    });
    let tables: Vec<Group> = group_refs.into_iter().map(Group::from).collect();
    let kicks: Vec<Vec<Kick>> = order
        .into_iter()
        .map(|list| {
            list.into_iter()
                .map(|kick| match kick {
                    Ok(index) => Kick::Member(
                        member_refs[index].clone(),
                        Box::new(Kickoff {
                            group: Arc::clone(&tables[group_of[index]]),
                            sink: sink.clone(),
                        }),
                    ),
                    Err(dummy) => Kick::Dummy(dummy),
                })
                .collect()
        })
        .collect();
    // The starts of the actors (not handled yet: spawned from here, their first activation is
    // the `started` hook) before the clock starts.
    system.run_until_idle();
    let start = Instant::now();
    let pending = sink
        .ask(|done| SinkMsg::Start { kicks, done })
        .expect("fresh actor");
    drop(sink);
    let finished = await_result(system, pending, run, name);
    let elapsed = start.elapsed();
    if let Err(e) = finished {
        return Measured::failed(0, elapsed, e);
    }
    // Messages still in flight (extra ones) arrive before the counts are read.
    system.run_until_idle();
    let pending: Vec<_> = member_refs
        .iter()
        .map(|member| {
            member
                .ask(|reply| MemberMsg::Collect(Box::new(reply)))
                .expect("member alive")
        })
        .collect();
    let mut counts = Vec::with_capacity(members);
    for reply in pending {
        match await_result(system, reply, run, name) {
            Ok(c) => counts.push(c),
            Err(e) => return Measured::failed(0, elapsed, e),
        }
    }
    drop((member_refs, tables));
    system.run_until_idle();
    let after = system.stats();
    // Expected: R messages from every member of the group, S·R sent and received.
    let mut group_senders = vec![0u64; groups];
    for (index, &g) in group_of.iter().enumerate() {
        group_senders[g] =
            group_senders[g].wrapping_add(mix(index as u64).wrapping_mul(layout.rounds));
    }
    let members_off = counts
        .iter()
        .enumerate()
        .filter(|&(index, c)| {
            let want = Counts {
                sent: quota,
                received: quota,
                senders: group_senders[group_of[index]],
                rounds: layout.rounds,
            };
            *c != want
        })
        .count();
    let messages = counts.iter().map(|c| c.received).sum();
    Measured::checked(
        messages,
        elapsed,
        Outcome {
            members: counts.len(),
            members_off,
            alive: after.actors_live().saturating_sub(before.actors_live()),
        },
        Outcome {
            members,
            members_off: 0,
            alive: 0,
        },
    )
    .with_message_count(members as u64 * quota, "A·S·R = ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(loaded: Loaded, per_worker: bool) -> Layout {
        Layout {
            loaded,
            per_worker,
            actors: 6,
            group: 3,
            rounds: 2,
        }
    }

    #[test]
    fn layouts_put_the_working_actors_where_they_belong() {
        let (slots, groups) = positions(&layout(Loaded::All, false), 4);
        assert_eq!(groups, 2);
        assert_eq!(slots.len(), 6);
        assert!(slots.iter().all(|s| matches!(s, Slot::Member { .. })));
        let (slots, groups) = positions(&layout(Loaded::First, false), 3);
        assert_eq!((slots.len(), groups), (18, 2));
        for (p, slot) in slots.iter().enumerate() {
            assert_eq!(matches!(slot, Slot::Member { .. }), p % 3 == 0, "{p}");
        }
        let (slots, groups) = positions(&layout(Loaded::Even, true), 5);
        assert_eq!((slots.len(), groups), (30, 6));
        for (p, slot) in slots.iter().enumerate() {
            match slot {
                Slot::Member { group, .. } => {
                    assert_eq!(p % 5 % 2, 0, "{p}");
                    // A group lives on one worker.
                    assert_eq!(group / 2, p % 5 / 2, "{p}");
                }
                Slot::Dummy => assert_eq!(p % 5 % 2, 1, "{p}"),
            }
        }
    }

    /// A system of `workers`: the host's for 1 and 2, a simulated 64-core machine beyond.
    fn system(workers: usize) -> System {
        let mut config = loka::Config {
            workers,
            ..loka::Config::default()
        };
        if workers > 2 {
            config.engine = loka::EngineKind::Sim;
            config.topology = "preset:opteron6376".to_owned();
            config.sim.quiet_ms = 0;
        }
        System::from_config(config).unwrap()
    }

    #[test]
    fn small_layouts_verify_and_faults_fail() {
        for (loaded, per_worker) in [
            (Loaded::All, false),
            (Loaded::First, false),
            (Loaded::Even, true),
        ] {
            for workers in [1, 2, 5] {
                let l = layout(loaded, per_worker);
                let m = measure(&system(workers), &Run::new(Size::Quick), "test", &l);
                assert!(m.verified, "{loaded:?} on {workers}: {}", m.check);
                for &fault in FAULTS {
                    let run = Run::new(Size::Quick).with_fault(fault);
                    let m = measure(&system(workers), &run, "test", &l);
                    assert!(!m.verified, "{loaded:?} {fault:?}: {}", m.check);
                }
            }
        }
    }
}
