//! FIFO per sender→receiver pair: messages from one sender (an actor, or a plain thread) to one
//! receiver arrive in the order they were sent. Runs under every configuration of
//! `common::configurations()` (every engine in `loka::EngineKind::ALL` × every policy it supports ×
//! worker counts and variants). Also checks that matrix itself: it covers every engine and every
//! policy the engine supports, so adding an engine widens it.

use crate::common::{configurations, heavy_configurations, system};
use loka::{Actor, ActorRef, Context, EngineKind, PolicyKind, ReplyTo};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

// ---------------------------------------------------------------- FIFO per sender → receiver

struct Receiver {
    next: Vec<u64>,
    violations: Arc<AtomicUsize>,
    done: Option<ReplyTo<Vec<u64>>>,
    expected_total: u64,
    received: u64,
}

enum RecvMsg {
    Item { sender: usize, seq: u64 },
    WhenDone(ReplyTo<Vec<u64>>),
}

impl Actor for Receiver {
    type Msg = RecvMsg;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: RecvMsg) {
        match msg {
            RecvMsg::Item { sender, seq } => {
                if self.next[sender] != seq {
                    self.violations.fetch_add(1, SeqCst);
                }
                self.next[sender] = seq + 1;
                self.received += 1;
            }
            RecvMsg::WhenDone(reply) => self.done = Some(reply),
        }
        if self.received == self.expected_total {
            if let Some(reply) = self.done.take() {
                reply.send(self.next.clone());
            }
        }
    }
}

struct Sender {
    index: usize,
    count: u64,
    to: ActorRef<RecvMsg>,
}

impl Actor for Sender {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _: ()) {
        // Send in slices so other actors interleave with us, then continue via our own mailbox.
        let start = self.count;
        let end = (start + 1000).min(100_000);
        for seq in start..end {
            self.to
                .send(RecvMsg::Item {
                    sender: self.index,
                    seq,
                })
                .unwrap();
        }
        self.count = end;
        if end < 100_000 {
            ctx.myself().send(()).unwrap();
        } else {
            ctx.stop();
        }
    }
}

#[test]
fn fifo_per_sender_receiver_pair_8_senders_100k_each() {
    for (label, config) in configurations() {
        let system = system(&config);
        let violations = Arc::new(AtomicUsize::new(0));
        let receiver = system.spawn(Receiver {
            next: vec![0; 8],
            violations: Arc::clone(&violations),
            done: None,
            expected_total: 8 * 100_000,
            received: 0,
        });
        for index in 0..8 {
            let sender = system.spawn(Sender {
                index,
                count: 0,
                to: receiver.clone(),
            });
            sender.send(()).unwrap();
        }
        let next = receiver.ask(RecvMsg::WhenDone).unwrap().wait().unwrap();
        assert_eq!(
            next,
            vec![100_000; 8],
            "{label}: every sender's messages arrived"
        );
        assert_eq!(violations.load(SeqCst), 0, "{label}: FIFO violated");
        system.shutdown();
    }
}

#[test]
fn fifo_from_plain_threads() {
    for (label, config) in configurations() {
        let system = system(&config);
        let violations = Arc::new(AtomicUsize::new(0));
        let receiver = system.spawn(Receiver {
            next: vec![0; 4],
            violations: Arc::clone(&violations),
            done: None,
            expected_total: 4 * 20_000,
            received: 0,
        });
        std::thread::scope(|s| {
            for sender in 0..4 {
                let to = receiver.clone();
                s.spawn(move || {
                    for seq in 0..20_000 {
                        to.send(RecvMsg::Item { sender, seq }).unwrap();
                    }
                });
            }
        });
        let next = receiver.ask(RecvMsg::WhenDone).unwrap().wait().unwrap();
        assert_eq!(next, vec![20_000; 4], "{label}");
        assert_eq!(violations.load(SeqCst), 0, "{label}: FIFO violated");
    }
}

// ----------------------------------------------------------------- the configuration matrix

#[test]
fn the_matrix_covers_every_engine_and_every_policy_it_supports() {
    let all = configurations();
    let heavy = heavy_configurations();
    for &engine in EngineKind::ALL {
        for &policy in PolicyKind::ALL {
            let pair = format!("{engine}/{policy} ");
            for (set, configs) in [("configurations", &all), ("heavy_configurations", &heavy)] {
                let covered = configs.iter().any(|(label, c)| {
                    c.engine == engine && c.policy == policy && label.starts_with(&pair)
                });
                assert_eq!(
                    covered,
                    engine.supports(policy),
                    "{set}: {engine}/{policy} covered = {covered}, supported = {}",
                    engine.supports(policy)
                );
            }
        }
    }
    for (label, c) in &all {
        assert!(
            label.starts_with(&format!("{}/{} ", c.engine, c.policy)),
            "{label}: the label names the engine and policy"
        );
        assert!(c.engine.supports(c.policy), "{label}: an unsupported pair");
        c.validate(label).unwrap_or_else(|e| panic!("{label}: {e}"));
    }
    // Every execution mode, and both modes of `places`, in both sets.
    for configs in [&all, &heavy] {
        for mode in loka::ExecMode::ALL {
            assert!(
                configs.iter().any(|(_, c)| c.exec == mode),
                "execution mode {mode} is not covered"
            );
        }
        for mode in [
            loka::policy::PlacesMode::Shared,
            loka::policy::PlacesMode::PerWorker,
        ] {
            assert!(
                configs
                    .iter()
                    .any(|(_, c)| c.policy == PolicyKind::Places(mode)),
                "places {mode:?} is not covered"
            );
        }
    }
}
