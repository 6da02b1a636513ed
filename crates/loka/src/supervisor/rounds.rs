//! How a supervisor restarts: its children's events, the restart intensity, and *rounds* — a
//! list of orders given one child at a time, each waiting for the child's acknowledgement, so
//! that `OneForAll` and `RestForOne` suspend the siblings in reverse start order and restart
//! them in start order, as OTP does.
//!
//! Work comes as jobs, one round at a time: a child's failure (what its round does is decided
//! when it begins, from the children then), a `terminate_child`, a `stop`. A failure whose child
//! a previous round already restarted is dropped. When a failure would exceed the intensity, the
//! pending jobs are refused and the last round terminates every child in reverse start order;
//! then the supervisor gives up ([`StopReason::Escalated`]).

use super::actor::Supervisor;
use super::handle::ChildState;
use super::jobs::{After, Job, Round, Step};
use super::{Restart, Strategy};
use crate::runtime::cell::{ChildEvent, Command};
use crate::{ActorId, Context, StopReason};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

impl ChildEvent {
    /// Whether this event ends the wait for the acknowledgement of order `seq`.
    fn answers(&self, seq: u64) -> bool {
        match self {
            ChildEvent::Exited { ack, .. } => ack.is_some_and(|ack| ack >= seq),
            ChildEvent::Suspended { ack } | ChildEvent::Restarted { ack } => *ack >= seq,
            ChildEvent::Terminated { .. } => true,
        }
    }
}

impl Supervisor {
    /// A child's event, run in the supervisor's activation (the children's event sink).
    pub(super) fn on_event(&mut self, ctx: &mut Context<Self>, actor: ActorId, event: ChildEvent) {
        let Some(&at) = self.by_actor.get(&actor) else {
            // A child of an earlier instance, or one already forgotten.
            return;
        };
        if let Some(round) = &mut self.current {
            if round
                .waiting
                .is_some_and(|(waited, seq)| waited == actor && event.answers(seq))
            {
                round.waiting = None;
            }
        }
        let child = &mut self.children[at];
        match event {
            ChildEvent::Exited { reason, lost, .. } => {
                self.stats.failures += 1;
                self.stats.lost += lost;
                child.state = ChildState::Restarting;
                if !self.closing {
                    let child = Arc::clone(child.spec.id());
                    self.jobs.push_back(Job::Failure {
                        child,
                        actor,
                        reason,
                    });
                }
            }
            ChildEvent::Suspended { .. } => child.state = ChildState::Restarting,
            ChildEvent::Restarted { .. } => child.state = ChildState::Running,
            ChildEvent::Terminated { reason, lost } => {
                if reason.is_failure() {
                    self.stats.failures += 1;
                }
                self.stats.lost += lost;
                self.by_actor.remove(&actor);
                child.live = None;
                child.state = ChildState::Stopped;
                if child.spec.restart() == Restart::Temporary {
                    self.remove(at);
                }
            }
        }
        self.advance(ctx);
    }

    /// Runs the current round on, and the next jobs, until a round waits for a child.
    pub(super) fn advance(&mut self, ctx: &mut Context<Self>) {
        loop {
            if let Some(round) = &mut self.current {
                if round.waiting.is_some() {
                    return;
                }
                if let Some(Step::Order(child, command)) = round.steps.pop_front() {
                    let waiting = self.give(&child, command);
                    if let Some(round) = &mut self.current {
                        round.waiting = waiting;
                    }
                    continue;
                }
                let round = self.current.take().expect("tested above");
                match round.after {
                    After::Nothing => {}
                    After::Reply(reply) => reply(Ok(())),
                    After::Escalate(message) => {
                        ctx.inner_mut().escalate(message);
                        return;
                    }
                    After::Stop(reply) => {
                        reply(Ok(()));
                        ctx.stop();
                        return;
                    }
                }
                continue;
            }
            let Some(job) = self.jobs.pop_front() else {
                return;
            };
            self.current = self.begin(ctx, job);
        }
    }

    /// Gives an order of a round to child `id`; returns the acknowledgement to wait for (`None`:
    /// nothing to wait for).
    fn give(&mut self, id: &str, command: Command) -> Option<(ActorId, u64)> {
        let at = self.find(id).ok()?;
        let child = &mut self.children[at];
        child.live.as_ref()?;
        match command {
            // Already suspended: by its own exit, or by an earlier order.
            Command::Suspend if child.state == ChildState::Restarting => return None,
            Command::Suspend => child.state = ChildState::Restarting,
            Command::Restart => {
                child.state = ChildState::Restarting;
                child.restarts += 1;
                self.stats.child_restarts += 1;
            }
            Command::Terminate => {}
        }
        self.order(at, command)
    }

    /// The round a job starts (`None`: nothing to do any more).
    fn begin(&mut self, ctx: &mut Context<Self>, job: Job) -> Option<Round> {
        match job {
            Job::Failure {
                child,
                actor,
                reason,
            } => self.restart_round(ctx, &child, actor, reason),
            Job::Terminate { child, reply } => {
                let running = self
                    .find(&child)
                    .is_ok_and(|at| self.children[at].live.is_some());
                if !running {
                    reply(Ok(()));
                    return None;
                }
                Some(Round {
                    steps: VecDeque::from([Step::Order(child, Command::Terminate)]),
                    waiting: None,
                    after: After::Reply(reply),
                })
            }
            Job::Stop { reply } => {
                self.close(ctx);
                Some(Round {
                    steps: self.terminate_all(),
                    waiting: None,
                    after: After::Stop(reply),
                })
            }
        }
    }

    /// The round that restarts after child `id` exited, per the strategy; or the last round,
    /// which gives up, if this restart exceeds the intensity.
    fn restart_round(
        &mut self,
        ctx: &mut Context<Self>,
        id: &Arc<str>,
        actor: ActorId,
        reason: StopReason,
    ) -> Option<Round> {
        let at = self.find(id).ok()?;
        let child = &self.children[at];
        let waiting = child.state == ChildState::Restarting
            && child.live.as_ref().is_some_and(|live| live.actor == actor);
        // Restarted by an earlier round meanwhile, or gone; no restart during a shutdown.
        if !waiting || ctx.inner().cell().shutting_down() {
            return None;
        }
        let now = ctx.now();
        let (max, within) = (self.spec.max_restarts, self.spec.within);
        if !allow_restart(&mut self.restarts_at, now, max, within) {
            let message = format!(
                "supervisor {} exceeded max_restarts({max}, {within:?}): child `{id}` {reason}",
                ctx.id()
            );
            self.close(ctx);
            return Some(Round {
                steps: self.terminate_all(),
                waiting: None,
                after: After::Escalate(message),
            });
        }
        self.stats.restarts += 1;
        let affected: Vec<usize> = match self.spec.strategy {
            Strategy::OneForOne => vec![at],
            Strategy::OneForAll => (0..self.children.len()).collect(),
            Strategy::RestForOne => (at..self.children.len()).collect(),
        };
        let affected: Vec<usize> = affected
            .into_iter()
            .filter(|&i| self.children[i].live.is_some())
            .collect();
        let mut steps = VecDeque::new();
        for &i in affected.iter().rev().filter(|&&i| i != at) {
            let sibling = &self.children[i].spec;
            let command = match sibling.restart().with_siblings() {
                true => Command::Suspend,
                false => Command::Terminate,
            };
            steps.push_back(Step::Order(Arc::clone(sibling.id()), command));
        }
        for &i in &affected {
            let spec = &self.children[i].spec;
            if i == at || spec.restart().with_siblings() {
                steps.push_back(Step::Order(Arc::clone(spec.id()), Command::Restart));
            }
        }
        Some(Round {
            steps,
            waiting: None,
            after: After::Nothing,
        })
    }

    /// The supervisor closes (gives up or stops): no new child, no restart; the jobs still
    /// pending are refused.
    fn close(&mut self, ctx: &Context<Self>) {
        self.closing = true;
        for job in std::mem::take(&mut self.jobs) {
            match job {
                Job::Failure { .. } => {}
                Job::Terminate { reply, .. } | Job::Stop { reply } => {
                    reply(Err(Self::stopped_error(ctx)))
                }
            }
        }
    }

    /// Orders terminating every running child, in reverse start order.
    fn terminate_all(&self) -> VecDeque<Step> {
        self.children
            .iter()
            .rev()
            .filter(|child| child.live.is_some())
            .map(|child| Step::Order(Arc::clone(child.spec.id()), Command::Terminate))
            .collect()
    }
}

/// The restart intensity: whether one more restart at `now` keeps within `max` restarts in any
/// period of `within`, given when the earlier ones happened (`at`, oldest first). If it does, it is
/// recorded; restarts older than the period are forgotten either way.
fn allow_restart(at: &mut VecDeque<Duration>, now: Duration, max: u32, within: Duration) -> bool {
    while at.front().is_some_and(|&t| now.saturating_sub(t) >= within) {
        at.pop_front();
    }
    if at.len() >= max as usize {
        return false;
    }
    at.push_back(now);
    true
}

#[cfg(test)]
mod tests {
    use super::allow_restart;
    use std::collections::VecDeque;
    use std::time::Duration;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_intensity_counts_restarts_within_the_period_and_forgets_older_ones() {
        let mut at = VecDeque::new();
        // max_restarts(2, 100 ms): two restarts pass, a third within the period does not.
        assert!(allow_restart(&mut at, ms(0), 2, ms(100)));
        assert!(allow_restart(&mut at, ms(50), 2, ms(100)));
        assert!(!allow_restart(&mut at, ms(99), 2, ms(100)));
        // 100 ms after the first, it no longer counts.
        assert!(allow_restart(&mut at, ms(100), 2, ms(100)));
        assert!(!allow_restart(&mut at, ms(149), 2, ms(100)));
        // Long after, both earlier ones are forgotten.
        assert!(allow_restart(&mut at, ms(1000), 2, ms(100)));
        assert_eq!(at.len(), 1);
    }

    #[test]
    fn zero_restarts_allowed_refuses_the_first() {
        let mut at = VecDeque::new();
        assert!(!allow_restart(&mut at, ms(0), 0, ms(100)));
        assert!(at.is_empty());
    }
}
