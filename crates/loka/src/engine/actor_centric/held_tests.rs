//! A worker held by a handler until the actor it woke has run, for the tests of what must reach
//! such an actor from elsewhere (`adaptive.rs`: a switch of policy releases the pinned hubs;
//! `gather.rs`: the stall guard spreads a gathered system).

use crate::{Actor, ActorRef, Context};
use std::sync::mpsc::Sender;
use std::time::Duration;

/// Holds its worker until the actor it wakes has run, or two seconds; answers which.
pub(super) struct Blocker {
    /// The actor it wakes, and waits for.
    pub(super) waiting: ActorRef<Sender<()>>,
}

impl Actor for Blocker {
    type Msg = Sender<bool>;
    fn handle(&mut self, _ctx: &mut Context<Self>, answer: Self::Msg) {
        let (ran, it_ran) = std::sync::mpsc::channel();
        self.waiting.send(ran).unwrap();
        let outcome = it_ran.recv_timeout(Duration::from_secs(2));
        answer.send(outcome.is_ok()).unwrap();
    }
}

/// Says it ran.
pub(super) struct Waiting;

impl Actor for Waiting {
    type Msg = Sender<()>;
    fn handle(&mut self, _ctx: &mut Context<Self>, ran: Self::Msg) {
        let _ = ran.send(());
    }
}
