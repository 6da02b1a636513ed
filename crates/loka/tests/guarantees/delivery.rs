//! No loss, no duplicate, no concurrent handler: 10 M deliveries among 1,000 actors arrive exactly
//! once each (count and checksum), and no actor's handler ever overlaps itself. Runs under
//! every configuration of `common::heavy_configurations()` (the heavy subset of
//! `common::configurations()`: every engine in `loka::EngineKind::ALL` × every policy it supports ×
//! variants, at 2 and 4 workers).

use crate::common::{heavy_configurations, mix, system};
use loka::{Actor, ActorRef, Context};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

// ------------------------------------- no loss, no duplicate, no concurrent handler (10 M msgs)

const RELAYS: usize = 1_000;
const MESSAGES: u64 = 100_000;
const HOPS: u32 = 100; // MESSAGES × HOPS = 10,000,000 deliveries

struct Relay {
    peers: Arc<Vec<ActorRef<Hop>>>,
    in_handler: Arc<AtomicBool>,
    overlaps: Arc<AtomicUsize>,
    count: Arc<AtomicU64>,
    checksum: Arc<AtomicU64>,
    local_count: u64,
    local_sum: u64,
}

enum Hop {
    Peers(Arc<Vec<ActorRef<Hop>>>),
    Msg { id: u64, ttl: u32 },
    Flush,
}

impl Actor for Relay {
    type Msg = Hop;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: Hop) {
        // The flag lives outside the actor: two overlapping activations would both see it.
        if self.in_handler.swap(true, SeqCst) {
            self.overlaps.fetch_add(1, SeqCst);
        }
        match msg {
            Hop::Peers(peers) => self.peers = peers,
            Hop::Msg { id, ttl } => {
                self.local_count += 1;
                self.local_sum = self
                    .local_sum
                    .wrapping_add(mix(id.wrapping_mul(1_000) + u64::from(ttl)));
                if ttl > 0 {
                    let next = (id.wrapping_mul(31) + u64::from(ttl)) as usize % RELAYS;
                    self.peers[next]
                        .send(Hop::Msg { id, ttl: ttl - 1 })
                        .unwrap();
                }
            }
            Hop::Flush => {
                self.count.fetch_add(self.local_count, SeqCst);
                self.checksum.fetch_add(self.local_sum, SeqCst);
                self.peers = Arc::new(Vec::new());
                ctx.stop();
            }
        }
        self.in_handler.store(false, SeqCst);
    }
}

#[test]
fn no_loss_no_duplicate_no_concurrent_handler_10m_messages_1000_actors() {
    let mut expected_sum = 0u64;
    for id in 0..MESSAGES {
        for ttl in 0..HOPS {
            expected_sum = expected_sum.wrapping_add(mix(id * 1_000 + u64::from(ttl)));
        }
    }
    for (label, config) in heavy_configurations() {
        let system = system(&config);
        let overlaps = Arc::new(AtomicUsize::new(0));
        let count = Arc::new(AtomicU64::new(0));
        let checksum = Arc::new(AtomicU64::new(0));
        let relays: Vec<_> = (0..RELAYS)
            .map(|_| {
                system.spawn(Relay {
                    peers: Arc::new(Vec::new()),
                    in_handler: Arc::new(AtomicBool::new(false)),
                    overlaps: Arc::clone(&overlaps),
                    count: Arc::clone(&count),
                    checksum: Arc::clone(&checksum),
                    local_count: 0,
                    local_sum: 0,
                })
            })
            .collect();
        let peers = Arc::new(relays.clone());
        for r in &relays {
            r.send(Hop::Peers(Arc::clone(&peers))).unwrap();
        }
        for id in 0..MESSAGES {
            relays[id as usize % RELAYS]
                .send(Hop::Msg { id, ttl: HOPS - 1 })
                .unwrap();
        }
        system.run_until_idle();
        drop(peers);
        for r in &relays {
            r.send(Hop::Flush).unwrap();
        }
        system.run_until_idle();
        assert_eq!(
            count.load(SeqCst),
            MESSAGES * u64::from(HOPS),
            "{label}: lost or duplicated"
        );
        assert_eq!(
            checksum.load(SeqCst),
            expected_sum,
            "{label}: wrong set of deliveries"
        );
        assert_eq!(
            overlaps.load(SeqCst),
            0,
            "{label}: a handler ran concurrently with itself"
        );
        let stats = system.stats();
        assert_eq!(stats.dead_letters, 0, "{label}");
        assert!(
            stats.total.messages >= MESSAGES * u64::from(HOPS),
            "{label}"
        );
    }
}
