//! Nodes over TLS with mutual authentication, with certificates made here at test time (an
//! authority, and a certificate per node naming `localhost` and `127.0.0.1`): nodes the
//! authority vouched for talk; a node with another authority's certificate, one whose name is
//! not allowed, and one speaking plain TCP get nothing: no lookup, and a raw Zenoh put on the
//! server's key space never reaches it.

use loka::{Actor, ActorRef, Context, ReplyTo, System};
use loka_remote::{Node, NodeConfig, RemoteError, TlsConfig};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};
use zenoh::Wait;

#[path = "common/authority.rs"]
mod authority;
use authority::Authority;

#[derive(Debug, Serialize, Deserialize)]
enum Counter {
    Add(u64),
    Get(ReplyTo<u64>),
}

#[derive(Default)]
struct Count(u64);

impl Actor for Count {
    type Msg = Counter;
    fn handle(&mut self, _: &mut Context<Self>, msg: Counter) {
        match msg {
            Counter::Add(n) => self.0 += n,
            Counter::Get(reply) => reply.send(self.0),
        }
    }
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// A node serving a counter as `count` over TLS on `port`, allowing the names `allowed`.
fn server(authority: &Authority, port: u16, allowed: &[&str]) -> (System, Node, ActorRef<Counter>) {
    let system = System::builder().workers(1).build().unwrap();
    let tls = allowed
        .iter()
        .fold(authority.node("server").unwrap(), |tls, name| {
            tls.allow_name(*name)
        });
    let config = NodeConfig::default()
        .listen(format!("tls/127.0.0.1:{port}"))
        .tls(tls);
    let node = Node::open(&system, config).unwrap();
    let count = system.spawn(Count::default());
    node.register("count", &count).unwrap();
    (system, node, count)
}

/// A node connecting to `port` over TLS with `tls`.
fn client_config(port: u16, tls: TlsConfig) -> NodeConfig {
    NodeConfig::default()
        .listen("tls/127.0.0.1:0")
        .connect(format!("tls/127.0.0.1:{port}"))
        .lookup_timeout(Duration::from_secs(2))
        .tls(tls)
}

/// Puts raw bytes on every node's key as a node with `config` would: whether they arrive is
/// the access list's business, not loka's.
fn raw_put(config: &NodeConfig, server: &Node) {
    let session = zenoh::open(config.zenoh_config().unwrap()).wait().unwrap();
    // Give the link a moment (if there is to be one).
    std::thread::sleep(Duration::from_millis(500));
    session
        .put(format!("loka/n/{}", server.id()), vec![0xffu8; 8])
        .wait()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    session.close().wait().unwrap();
}

/// What a counter has counted.
fn total(count: &ActorRef<Counter>) -> u64 {
    count.ask(Counter::Get).unwrap().wait().unwrap()
}

#[test]
fn nodes_the_authority_vouched_for_talk_over_mutual_tls() {
    let authority = Authority::new("loka test authority").unwrap();
    let port = free_port();
    let (_server_system, server_node, count) = server(&authority, port, &["client"]);
    let system = System::builder().workers(1).build().unwrap();
    let config = client_config(port, authority.node("client").unwrap().allow_name("server"));
    let node = Node::open(&system, config.clone()).unwrap();
    let counter = node.lookup::<Counter>("count").unwrap();
    for n in 1..=100 {
        counter.send(Counter::Add(n)).unwrap();
    }
    assert_eq!(total(&counter), 5050);
    // The control for the intruders below: a raw put from an allowed node arrives (and is
    // counted as not a frame).
    raw_put(&config, &server_node);
    let deadline = Instant::now() + Duration::from_secs(5);
    while server_node.stats().bad_frames == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(server_node.stats().bad_frames, 1);
    assert_eq!(total(&count), 5050);
}

#[test]
fn a_node_without_the_right_credentials_gets_nothing() {
    let authority = Authority::new("loka test authority").unwrap();
    let port = free_port();
    let (_server_system, server_node, count) = server(&authority, port, &["client"]);
    let other = Authority::new("another authority").unwrap();
    let intruders = [
        (
            "another authority's certificate",
            client_config(port, other.node("client").unwrap()),
        ),
        (
            "a name not allowed",
            client_config(port, authority.node("stranger").unwrap()),
        ),
        (
            "plain TCP",
            NodeConfig::default()
                .connect(format!("tcp/127.0.0.1:{port}"))
                .lookup_timeout(Duration::from_secs(2)),
        ),
    ];
    for (who, config) in intruders {
        let system = System::builder().workers(1).build().unwrap();
        let node = Node::open(&system, config.clone()).unwrap();
        match node.lookup::<Counter>("count") {
            Err(RemoteError::NotFound { name }) => assert_eq!(name, "count", "{who}"),
            other => panic!("{who}: the lookup gave {other:?}"),
        }
        // A certificate of the authority opens a link (Zenoh sees a peer); the access list
        // then lets nothing through it. Without one there is no link at all.
        let linked = !node.peers().is_empty();
        assert_eq!(linked, who == "a name not allowed", "{who}");
        drop(node);
        raw_put(&config, &server_node);
    }
    let stats = server_node.stats();
    assert_eq!(
        (stats.frames_in, stats.bad_frames),
        (0, 0),
        "nothing reached the server: {stats:?}"
    );
    assert_eq!(total(&count), 0);
}
