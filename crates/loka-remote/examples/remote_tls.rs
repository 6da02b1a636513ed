//! Two nodes over TLS with mutual authentication, and a node with the wrong credentials turned
//! away (docs/remote.md, "Security"). The certificates are made here with rcgen: an authority
//! for the cluster, and for each node a certificate naming `localhost` and `127.0.0.1`, signed by
//! it. In a real cluster they come from files (`TlsConfig::from_files`).
//!
//! ```sh
//! cargo run -p loka-remote --example remote_tls
//! ```
//!
//! Prints what happens and exits 1 if the trusted client is not served or the intruder is.

use loka::{Actor, Context, ReplyTo, System};
use loka_remote::{Node, NodeConfig, RemoteError, TlsConfig};
use serde::{Deserialize, Serialize};
use std::process::ExitCode;
use std::time::Duration;

#[path = "../tests/common/authority.rs"]
mod authority;
use authority::Authority;

#[derive(Serialize, Deserialize)]
enum Greeter {
    Hello(String, ReplyTo<String>),
}

struct Greet;

impl Actor for Greet {
    type Msg = Greeter;
    fn handle(&mut self, _: &mut Context<Self>, Greeter::Hello(who, reply): Greeter) {
        reply.send(format!("hello, {who}"));
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("remote_tls: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<bool, Box<dyn std::error::Error>> {
    let authority = Authority::new("example cluster authority")?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();

    // The server allows one certificate name: "client".
    let server_system = System::builder().workers(1).build()?;
    let server = Node::open(
        &server_system,
        NodeConfig::default()
            .listen(format!("tls/127.0.0.1:{port}"))
            .tls(authority.node("server")?.allow_name("client")),
    )?;
    server.register("greeter", &server_system.spawn(Greet))?;

    let client = |tls: TlsConfig| -> Result<(System, Node), Box<dyn std::error::Error>> {
        let system = System::builder().workers(1).build()?;
        let config = NodeConfig::default()
            .listen("tls/127.0.0.1:0")
            .connect(format!("tls/127.0.0.1:{port}"))
            .lookup_timeout(Duration::from_secs(1))
            .tls(tls);
        let node = Node::open(&system, config)?;
        Ok((system, node))
    };

    let (_system, trusted) = client(authority.node("client")?)?;
    let greeter = trusted.lookup::<Greeter>("greeter")?;
    let answer = greeter
        .ask(|reply| Greeter::Hello("client".to_owned(), reply))?
        .wait()?;
    println!("trusted client, certificate \"client\" from the authority: {answer}");

    let mut ok = answer == "hello, client";
    let stranger = Authority::new("some other authority")?;
    for (who, tls) in [
        ("another authority's certificate", stranger.node("client")?),
        (
            "the authority's certificate for \"mallory\"",
            authority.node("mallory")?,
        ),
    ] {
        let (_system, intruder) = client(tls)?;
        match intruder.lookup::<Greeter>("greeter") {
            Err(RemoteError::NotFound { .. }) => {
                println!("intruder with {who}: the name is not found (nothing gets through)");
            }
            other => {
                println!("intruder with {who}: got {other:?}, which it must not");
                ok = false;
            }
        }
    }
    Ok(ok)
}
