//! Request/reply: asks from outside and from inside actors (without blocking a worker), a dropped
//! request answers `NoReply` instead of hanging, and an actor referenced only by its own in-flight
//! requests gets every reply. Runs under every configuration of `common::configurations()` (every
//! engine in `loka::EngineKind::ALL` × every policy it supports × worker counts and variants); the
//! last test under its heavy subset, `common::heavy_configurations()`.

use crate::common::{configurations, heavy_configurations, system};
use loka::{Actor, ActorRef, AskError, Context, ReplyTo};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

// ------------------------------------------------------------------------------------------ ask

struct Doubler;

impl Actor for Doubler {
    type Msg = (u64, ReplyTo<u64>);
    fn handle(&mut self, _ctx: &mut Context<Self>, (n, reply): Self::Msg) {
        reply.send(n * 2);
    }
}

struct Asker {
    doubler: ActorRef<(u64, ReplyTo<u64>)>,
    sum: u64,
}

enum AskerMsg {
    Go(u64, ReplyTo<u64>),
}

impl Actor for Asker {
    type Msg = AskerMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: AskerMsg) {
        let AskerMsg::Go(n, done) = msg;
        // Ask n times in a chain, never blocking the worker; answer `done` at the end.
        fn step(me: &mut Asker, ctx: &mut Context<Asker>, left: u64, done: ReplyTo<u64>) {
            if left == 0 {
                done.send(me.sum);
                return;
            }
            let doubler = me.doubler.clone();
            ctx.ask(
                &doubler,
                |reply| (left, reply),
                move |me: &mut Asker, ctx, answer: Result<u64, AskError>| {
                    me.sum += answer.unwrap();
                    step(me, ctx, left - 1, done);
                },
            );
        }
        step(self, ctx, n, done);
    }
}

#[test]
fn ask_from_outside_and_from_inside_an_actor() {
    for (label, config) in configurations() {
        let system = system(&config);
        let doubler = system.spawn(Doubler);
        for n in 0..100 {
            let answer = doubler.ask(|r| (n, r)).unwrap().wait().unwrap();
            assert_eq!(answer, 2 * n, "{label}");
        }
        // Asks from inside: with one worker this only finishes if the asker does not block it.
        let asker = system.spawn(Asker {
            doubler: doubler.clone(),
            sum: 0,
        });
        let total = asker
            .ask(|r| AskerMsg::Go(50, r))
            .unwrap()
            .wait_timeout(Duration::from_secs(20))
            .unwrap();
        assert_eq!(total, (1..=50).map(|n| 2 * n).sum::<u64>(), "{label}");
    }
}

struct Silent;
impl Actor for Silent {
    type Msg = ReplyTo<u32>;
    fn handle(&mut self, _ctx: &mut Context<Self>, reply: ReplyTo<u32>) {
        drop(reply);
    }
}

#[test]
fn dropped_request_answers_no_reply_instead_of_hanging() {
    for (label, config) in configurations() {
        let system = system(&config);
        let silent = system.spawn(Silent);
        let answer = silent.ask(|r| r).unwrap().wait();
        assert_eq!(answer, Err(AskError::NoReply), "{label}");
    }
}

// ------------------------------------------- actors referenced only by their in-flight requests

enum ClientMsg {
    Go,
    Answer(u64),
}

struct Service;

impl Actor for Service {
    type Msg = (u64, ActorRef<ClientMsg>);
    fn handle(&mut self, _ctx: &mut Context<Self>, (n, reply_to): Self::Msg) {
        // Answer, then drop what may be the client's last reference.
        reply_to.send(ClientMsg::Answer(n)).unwrap();
    }
}

struct Client {
    service: ActorRef<(u64, ActorRef<ClientMsg>)>,
    answers: Arc<AtomicU64>,
    left: u32,
}

impl Actor for Client {
    type Msg = ClientMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: ClientMsg) {
        if let ClientMsg::Answer(n) = msg {
            self.answers.fetch_add(n, SeqCst);
            self.left -= 1;
        }
        if self.left == 0 {
            ctx.stop();
        } else {
            self.service.send((1, ctx.myself())).unwrap();
        }
    }
}

#[test]
fn an_actor_referenced_only_by_its_own_requests_gets_every_reply() {
    for (label, config) in heavy_configurations() {
        let system = system(&config);
        let service = system.spawn(Service);
        let answers = Arc::new(AtomicU64::new(0));
        for _ in 0..200 {
            // The only reference after this statement travels inside the client's requests.
            system
                .spawn(Client {
                    service: service.clone(),
                    answers: Arc::clone(&answers),
                    left: 50,
                })
                .send(ClientMsg::Go)
                .unwrap();
        }
        system.run_until_idle();
        assert_eq!(answers.load(SeqCst), 200 * 50, "{label}: a reply was lost");
        assert_eq!(system.stats().dead_letters, 0, "{label}");
    }
}
