//! A flood for the tests that change how the engine runs while messages stream (the adaptive
//! `auto`'s policy, `adaptive.rs`; `auto`'s worker count, `gather.rs`): senders send numbered
//! messages to every receiver, a slice per activation, and call a change between slices;
//! receivers check that each sender's numbers arrive in order, once each.

use crate::sync::AtomicU64;
use crate::{Actor, ActorRef, Context, SpawnOptions, System};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// Messages a sender sends to each receiver per activation.
const SLICE: u64 = 20;

/// Checks that each sender's numbers arrive in order, once each.
struct Receiver {
    next: Vec<u64>,
    received: Arc<AtomicU64>,
}

impl Actor for Receiver {
    type Msg = (usize, u64);
    fn handle(&mut self, _ctx: &mut Context<Self>, (sender, n): (usize, u64)) {
        assert_eq!(self.next[sender], n, "sender {sender}: FIFO, once each");
        self.next[sender] += 1;
        self.received.fetch_add(1, Ordering::Relaxed);
    }
}

/// What a sender calls after each slice, with the number of slices sent before it by all.
pub(super) type Change = Arc<dyn Fn(u64) + Send + Sync>;

/// Sends its numbers to every receiver, a slice per activation, and calls the change after
/// each slice.
struct Sender {
    index: usize,
    receivers: Vec<ActorRef<(usize, u64)>>,
    sent: u64,
    total: u64,
    slices: Arc<AtomicU64>,
    change: Change,
}

impl Actor for Sender {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, (): ()) {
        for _ in 0..SLICE {
            if self.sent == self.total {
                return;
            }
            for r in &self.receivers {
                r.send((self.index, self.sent)).unwrap();
            }
            self.sent += 1;
        }
        (self.change)(self.slices.fetch_add(1, Ordering::Relaxed));
        ctx.myself().send(()).unwrap();
    }
}

/// Runs a flood on `system`: a receiver spawned with each of `receivers`' options, a sender
/// with each of `senders`', each sender sending `total` numbers to every receiver and calling
/// `change` after each slice. Asserts that the system goes quiet (every actor queued ran) and
/// that every message arrived, in order and once (the receivers' own check).
pub(super) fn flood(
    system: &System,
    receivers: Vec<SpawnOptions>,
    senders: Vec<SpawnOptions>,
    total: u64,
    change: Change,
) {
    let received = Arc::new(AtomicU64::new(0));
    let slices = Arc::new(AtomicU64::new(0));
    let sender_count = senders.len();
    let receivers: Vec<_> = receivers
        .into_iter()
        .map(|options| {
            let receiver = Receiver {
                next: vec![0; sender_count],
                received: Arc::clone(&received),
            };
            system.spawn_with(receiver, options)
        })
        .collect();
    let handles: Vec<_> = senders
        .into_iter()
        .enumerate()
        .map(|(index, options)| {
            let sender = Sender {
                index,
                receivers: receivers.clone(),
                sent: 0,
                total,
                slices: Arc::clone(&slices),
                change: Arc::clone(&change),
            };
            system.spawn_with(sender, options)
        })
        .collect();
    for h in &handles {
        h.send(()).unwrap();
    }
    let quiet = system.run_until_idle_timeout(Duration::from_secs(30));
    assert!(quiet, "every actor queued under every change ran");
    assert_eq!(
        received.load(Ordering::Relaxed),
        sender_count as u64 * total * receivers.len() as u64
    );
    assert_eq!(
        slices.load(Ordering::Relaxed),
        sender_count as u64 * total / SLICE
    );
}
