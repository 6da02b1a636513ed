//! Two processes over 127.0.0.1: the server is a child process (this binary running its
//! ignored `child_server` test), the client this test. What it shows: FIFO without loss under
//! load, ask and references across, watch on a stop and on `kill -9`, asks failing within the
//! lease, a restarted node's new incarnation, a lookup of the wrong type refused, large
//! messages (sent in pieces) whole and in order beside small ones.

mod common;

use common::{blob, client, free_port, Event, Kv, Other, Server, LEASE};
use loka::{Actor, AskError, Context, SendErrorReason, StopReason, System};
use loka_remote::RemoteError;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Run by the parent tests as a child process.
#[test]
#[ignore = "the server side of the other tests, started by them as a child process"]
fn child_server() {
    let port = std::env::var("LOKA_REMOTE_CHILD_PORT")
        .expect("run by the other tests")
        .parse()
        .unwrap();
    common::serve(port);
}

/// Collects events into a channel.
struct Sink(mpsc::Sender<Event>);

impl Actor for Sink {
    type Msg = Event;
    fn handle(&mut self, _: &mut Context<Self>, event: Event) {
        self.0.send(event).unwrap();
    }
}

#[test]
fn fifo_without_loss_under_load_and_ask_and_references_across() {
    let server = Server::start(free_port());
    let system = System::builder().workers(2).build().unwrap();
    let node = client(&system, server.port);
    let kv = node.lookup::<Kv>("kv").unwrap();

    // Two senders, 50,000 messages each: every one arrives, in each sender's order, once.
    // `send_blocking` waits for room when the queue toward the server is full.
    const EACH: u64 = 50_000;
    std::thread::scope(|s| {
        for from in 0..2u32 {
            let kv = kv.clone();
            s.spawn(move || {
                for n in 0..EACH {
                    kv.send_blocking(Kv::Seq { from, n }).unwrap();
                }
            });
        }
    });
    let (seen, wrong) = kv.ask(Kv::Check).unwrap().wait().unwrap();
    assert_eq!(
        (seen, wrong),
        (2 * EACH, 0),
        "seen, out of order or repeated"
    );

    kv.send(Kv::Put("answer".to_owned(), 42)).unwrap();
    let got = kv
        .ask(|reply| Kv::Get("answer".to_owned(), reply))
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(got, Some(42));

    // A local actor's reference travels to the server, which sends to it.
    let (events, received) = mpsc::channel();
    let sink = system.spawn(Sink(events));
    let sent = kv
        .ask(|done| Kv::Publish {
            to: sink,
            count: 100,
            done,
        })
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(sent, 100);
    let got: Vec<Event> = (0..100)
        .map(|_| received.recv_timeout(Duration::from_secs(5)).unwrap())
        .collect();
    assert_eq!(got, (0..100).map(Event).collect::<Vec<_>>());
    assert_eq!(node.stats().gaps, 0);
}

#[test]
fn a_lookup_of_the_wrong_type_or_an_unknown_name_is_refused() {
    let server = Server::start(free_port());
    let system = System::builder().workers(1).build().unwrap();
    let node = client(&system, server.port);
    node.lookup::<Kv>("kv").unwrap();
    match node.lookup::<Other>("kv") {
        Err(RemoteError::TypeMismatch { name, expected, .. }) => {
            assert_eq!(name, "kv");
            assert!(expected.ends_with("Other"), "{expected}");
        }
        other => panic!("expected a type mismatch, got {other:?}"),
    }
    let quick = loka_remote::Node::open(
        &system,
        loka_remote::NodeConfig::default()
            .connect(format!("tcp/127.0.0.1:{}", server.port))
            .lookup_timeout(Duration::from_millis(300)),
    )
    .unwrap();
    assert!(matches!(
        quick.lookup::<Kv>("nobody"),
        Err(RemoteError::NotFound { name }) if name == "nobody"
    ));
    assert!(matches!(
        quick.lookup::<Kv>("no/slash"),
        Err(RemoteError::BadName { .. })
    ));
}

#[test]
fn watch_fires_on_a_stop_and_on_kill_9_and_asks_fail_within_the_lease() {
    let mut server = Server::start(free_port());
    let system = System::builder().workers(2).build().unwrap();
    let node = client(&system, server.port);

    let victim = node.lookup::<Kv>("victim").unwrap();
    let stopped = victim.watch();
    victim.send(Kv::Quit).unwrap();
    assert_eq!(
        stopped.wait_timeout(Duration::from_secs(5)).unwrap(),
        StopReason::Normal
    );
    assert!(victim.is_stopped());
    assert!(matches!(
        victim.send(Kv::Quit).map_err(|e| e.reason),
        Err(SendErrorReason::Stopped)
    ));

    let kv = node.lookup::<Kv>("kv").unwrap();
    let lost = kv.watch();
    let held = kv.ask(Kv::Hold).unwrap();
    // The hold has arrived when a later ask is answered (FIFO).
    kv.ask(Kv::Check).unwrap().wait().unwrap();
    let killed = Instant::now();
    server.kill();
    assert_eq!(lost.wait_timeout(LEASE * 3).unwrap(), StopReason::NodeDown);
    assert_eq!(held.wait_timeout(LEASE * 3), Err(AskError::NoReply));
    let noticed = killed.elapsed();
    assert!(noticed < LEASE * 3, "node loss noticed after {noticed:?}");
    assert!(kv.is_stopped());
    assert!(kv.send(Kv::Quit).is_err());
    assert_eq!(node.stats().nodes_down, 1);
}

#[test]
fn a_restarted_node_gets_nothing_meant_for_its_old_incarnation() {
    let port = free_port();
    let mut first = Server::start(port);
    let system = System::builder().workers(2).build().unwrap();
    let node = client(&system, port);
    let old = node.lookup::<Kv>("kv").unwrap();
    old.send(Kv::Seq { from: 0, n: 0 }).unwrap();
    assert_eq!(old.ask(Kv::Check).unwrap().wait().unwrap(), (1, 0));
    let lost = old.watch();
    first.kill();
    assert_eq!(lost.wait_timeout(LEASE * 3).unwrap(), StopReason::NodeDown);

    let _second = Server::start(port);
    // The old reference stays dead: its sends fail here, none reaches the new incarnation.
    for n in 1..100 {
        assert!(old.send(Kv::Seq { from: 0, n }).is_err());
    }
    let fresh = node.lookup::<Kv>("kv").unwrap();
    assert_ne!(fresh.id(), old.id());
    assert_eq!(fresh.ask(Kv::Check).unwrap().wait().unwrap(), (0, 0));
}

#[test]
fn large_messages_arrive_whole_and_in_order_beside_small_ones() {
    let server = Server::start(free_port());
    let system = System::builder().workers(2).build().unwrap();
    let node = client(&system, server.port);
    let kv = node.lookup::<Kv>("kv").unwrap();
    let victim = node.lookup::<Kv>("victim").unwrap();
    // Around the bound (120 KiB: larger goes in 60 KiB pieces) and well over it: each blob to
    // `kv` is followed by a small message to `kv` (it must wait for the blob) and one to
    // `victim` (it may pass it).
    let sizes = [1, 65_537, 122_880, 122_881, 1 << 20, (3 << 20) + 7, 10];
    for (n, len) in sizes.into_iter().enumerate() {
        let n = n as u64;
        kv.send_blocking(Kv::Blob {
            from: 7,
            n: 2 * n,
            bytes: blob(2 * n, len),
        })
        .unwrap();
        kv.send(Kv::Seq {
            from: 7,
            n: 2 * n + 1,
        })
        .unwrap();
        victim.send(Kv::Seq { from: 0, n }).unwrap();
    }
    let blobs = sizes.len() as u64;
    assert_eq!(kv.ask(Kv::Check).unwrap().wait().unwrap(), (2 * blobs, 0));
    assert_eq!(victim.ask(Kv::Check).unwrap().wait().unwrap(), (blobs, 0));
    let stats = node.stats();
    assert_eq!((stats.gaps, stats.lost, stats.refused), (0, 0, 0));
    assert!(
        stats.items_out > 4 * blobs,
        "the large ones went in pieces: {stats:?}"
    );
}
