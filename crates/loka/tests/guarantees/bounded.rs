//! The guarantees with bounded mailboxes (docs/bounded-mailboxes.md): FIFO per sender→receiver,
//! no loss, no duplicate and no concurrent handler for a small bounded receiver fed by plain
//! threads waiting with `send_async` and by actors retrying `try_send` or `send` (each its own
//! path through the places an activation reserves ahead); and, under the dropping
//! overflow rules, every message either handled or counted as dropped, the survivors still in
//! order. Runs under every configuration of `common::configurations()` (every engine in
//! `loka::EngineKind::ALL` × every policy it supports × worker counts and variants); the
//! overflow-rule test under `common::heavy_configurations()`.

use crate::common::{configurations, heavy_configurations, mix, system, watchdog};
use loka::{Actor, ActorRef, Context, Overflow, SendErrorReason, SpawnOptions, TrySendError};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

/// Released one place at a time (under 16: docs/bounded-mailboxes.md, `mailbox_len`).
const CAPACITY: usize = 8;
/// Released in batches of 4 places while the receiver runs: every other configuration.
const BATCHED_CAPACITY: usize = 32;
const THREADS: usize = 3;
const ACTORS: usize = 3;
const EACH: u64 = 3_000;

use futures_executor::block_on;

/// What the receiver saw, shared with the test.
#[derive(Default)]
struct Seen {
    /// Per sender: the next sequence number expected.
    next: std::sync::Mutex<Vec<u64>>,
    /// Items not the next of their sender when the rule is "no gap" (lossless), or not after
    /// the previous one when gaps are allowed (dropping rules).
    out_of_order: AtomicUsize,
    handled: AtomicU64,
    checksum: AtomicU64,
    overlaps: AtomicUsize,
    in_handler: AtomicBool,
}

struct Receiver {
    seen: Arc<Seen>,
    next: Vec<u64>,
    /// Gaps are expected (messages dropped by the overflow rule).
    gaps: bool,
}

struct Item {
    sender: usize,
    seq: u64,
}

impl Actor for Receiver {
    type Msg = Item;
    fn handle(&mut self, _ctx: &mut Context<Self>, Item { sender, seq }: Item) {
        let seen = &self.seen;
        // The flag lives outside the actor: two overlapping activations would both see it.
        if seen.in_handler.swap(true, SeqCst) {
            seen.overlaps.fetch_add(1, SeqCst);
        }
        let in_order = if self.gaps {
            seq >= self.next[sender]
        } else {
            seq == self.next[sender]
        };
        if !in_order {
            seen.out_of_order.fetch_add(1, SeqCst);
        }
        self.next[sender] = seq + 1;
        seen.handled.fetch_add(1, SeqCst);
        seen.checksum
            .fetch_add(mix(sender as u64 * 1_000_003 + seq), SeqCst);
        *seen.next.lock().unwrap() = self.next.clone();
        seen.in_handler.store(false, SeqCst);
    }
}

/// Sends `EACH` items with `try_send` (or, with `plain`, `send`, refused as full under the
/// default `Reject` rule); on `Full` it yields (a message to itself) and retries.
struct Retrier {
    index: usize,
    next: u64,
    to: ActorRef<Item>,
    plain: bool,
}

impl Actor for Retrier {
    type Msg = ();
    fn handle(&mut self, ctx: &mut Context<Self>, _: ()) {
        // A slice per activation, so other actors (the receiver) run in between.
        for _ in 0..64 {
            if self.next == EACH {
                ctx.stop();
                return;
            }
            let item = Item {
                sender: self.index,
                seq: self.next,
            };
            let full = if self.plain {
                match self.to.send(item) {
                    Ok(()) => false,
                    Err(e) if matches!(e.reason, SendErrorReason::Full { .. }) => true,
                    Err(e) => panic!("{e}"),
                }
            } else {
                match self.to.try_send(item) {
                    Ok(()) => false,
                    Err(TrySendError::Full(_)) => true,
                    Err(TrySendError::Stopped(_)) => panic!("receiver stopped"),
                }
            };
            if full {
                break;
            }
            self.next += 1;
        }
        ctx.myself().send(()).unwrap();
    }
}

fn expected_checksum(senders: usize) -> u64 {
    let mut sum = 0u64;
    for sender in 0..senders {
        for seq in 0..EACH {
            sum = sum.wrapping_add(mix(sender as u64 * 1_000_003 + seq));
        }
    }
    sum
}

#[test]
fn bounded_fifo_no_loss_no_duplicate_no_concurrent_handler_with_waiting_senders() {
    let senders = THREADS + ACTORS;
    let expected = expected_checksum(senders);
    for (i, (label, config)) in configurations().into_iter().enumerate() {
        let capacity = [CAPACITY, BATCHED_CAPACITY][i % 2];
        let label = format!("{label} capacity={capacity}");
        // A count gone wrong leaves every sender waiting for room: fail, do not hang.
        let _watchdog = watchdog(label.clone(), 120);
        let system = system(&config);
        let seen = Arc::new(Seen::default());
        let receiver = system.spawn_with(
            Receiver {
                seen: Arc::clone(&seen),
                next: vec![0; senders],
                gaps: false,
            },
            SpawnOptions::new().capacity(capacity),
        );
        let over_capacity = AtomicUsize::new(0);
        for index in THREADS..senders {
            let retrier = system.spawn(Retrier {
                index,
                next: 0,
                to: receiver.clone(),
                plain: index % 2 == 0,
            });
            retrier.send(()).unwrap();
        }
        std::thread::scope(|s| {
            for sender in 0..THREADS {
                let (to, over_capacity) = (&receiver, &over_capacity);
                s.spawn(move || {
                    for seq in 0..EACH {
                        block_on(to.send_async(Item { sender, seq })).unwrap();
                        // Exact for a bounded mailbox: never above the capacity.
                        if to.mailbox_len() > capacity {
                            over_capacity.fetch_add(1, SeqCst);
                        }
                    }
                });
            }
        });
        system.run_until_idle();
        let next = seen.next.lock().unwrap().clone();
        assert_eq!(
            next,
            vec![EACH; senders],
            "{label}: every sender's items arrived"
        );
        assert_eq!(
            seen.handled.load(SeqCst),
            EACH * senders as u64,
            "{label}: lost or duplicated"
        );
        assert_eq!(seen.checksum.load(SeqCst), expected, "{label}: wrong set");
        assert_eq!(seen.out_of_order.load(SeqCst), 0, "{label}: FIFO violated");
        assert_eq!(seen.overlaps.load(SeqCst), 0, "{label}: concurrent handler");
        assert_eq!(over_capacity.load(SeqCst), 0, "{label}: above capacity");
        let stats = system.stats();
        assert_eq!(
            (stats.dead_letters, stats.overflow_dropped),
            (0, 0),
            "{label}"
        );
        assert_eq!(receiver.mailbox_len(), 0, "{label}");
    }
}

#[test]
fn dropping_overflow_rules_lose_only_what_they_count_and_keep_order() {
    const SENDERS: usize = 4;
    for (label, config) in heavy_configurations() {
        for overflow in [Overflow::DropNewest, Overflow::DropOldest] {
            let system = system(&config);
            let seen = Arc::new(Seen::default());
            let receiver = system.spawn_with(
                Receiver {
                    seen: Arc::clone(&seen),
                    next: vec![0; SENDERS],
                    gaps: true,
                },
                SpawnOptions::new().capacity(4).overflow(overflow),
            );
            std::thread::scope(|s| {
                for sender in 0..SENDERS {
                    let to = &receiver;
                    s.spawn(move || {
                        for seq in 0..EACH {
                            to.send(Item { sender, seq }).unwrap();
                        }
                    });
                }
            });
            system.run_until_idle();
            let stats = system.stats();
            let handled = seen.handled.load(SeqCst);
            assert_eq!(
                handled + stats.overflow_dropped,
                EACH * SENDERS as u64,
                "{label} {overflow:?}: every message handled or counted as dropped"
            );
            assert_eq!(seen.out_of_order.load(SeqCst), 0, "{label} {overflow:?}");
            assert_eq!(seen.overlaps.load(SeqCst), 0, "{label} {overflow:?}");
            assert_eq!(
                (stats.dead_letters, stats.mailbox_full),
                (0, 0),
                "{label} {overflow:?}"
            );
            assert_eq!(receiver.mailbox_len(), 0, "{label} {overflow:?}");
        }
    }
}
