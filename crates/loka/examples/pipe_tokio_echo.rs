//! An actor doing Tokio I/O (docs/futures.md): a Tokio multi-thread runtime serves a TCP echo
//! server on loopback; a loka actor, for each `Echo` message, pipes a connect + write + read
//! against it and records the reply in the continuation, with its state at hand. The system is
//! given the Tokio handle (`SystemBuilder::tokio_handle`), so the sockets the actor's futures
//! create register with that runtime's reactor, which Tokio's own threads drive.
//!
//! ```sh
//! cargo run -p loka --example pipe_tokio_echo --features tokio
//! ```

use loka::{Actor, Context, ReplyTo, System};
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

enum Msg {
    /// Send `text` to the echo server; record what comes back.
    Echo(String),
    /// Answer with the replies once `n` have arrived.
    Replies(usize, ReplyTo<Vec<String>>),
}

struct EchoClient {
    server: SocketAddr,
    replies: Vec<String>,
    waiting: Option<(usize, ReplyTo<Vec<String>>)>,
}

impl EchoClient {
    fn answer_if_ready(&mut self) {
        if let Some((n, _)) = &self.waiting {
            if self.replies.len() >= *n {
                let (_, reply) = self.waiting.take().expect("checked above");
                reply.send(self.replies.clone());
            }
        }
    }
}

/// One round trip: connect, send, close the sending half, read the echo to the end.
async fn echo(server: SocketAddr, text: String) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(server).await?;
    stream.write_all(text.as_bytes()).await?;
    stream.shutdown().await?;
    let mut back = String::new();
    stream.read_to_string(&mut back).await?;
    Ok(back)
}

impl Actor for EchoClient {
    type Msg = Msg;

    // Its piped futures use `tokio::net`: a system without a Tokio handle refuses to spawn it.
    fn requires() -> &'static [loka::Requirement] {
        &[loka::Requirement::Tokio]
    }
    fn handle(&mut self, ctx: &mut Context<Self>, msg: Msg) {
        match msg {
            Msg::Echo(text) => {
                ctx.pipe(echo(self.server, text.clone()), move |me, _ctx, result| {
                    let line = match result {
                        Ok(back) => format!("sent {text:?}, got back {back:?}"),
                        Err(e) => format!("sent {text:?}, failed: {e}"),
                    };
                    println!("actor: {line}");
                    me.replies.push(line);
                    me.answer_if_ready();
                });
            }
            Msg::Replies(n, reply) => {
                self.waiting = Some((n, reply));
                self.answer_if_ready();
            }
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Tokio's threads drive its reactor; loka's workers only poll the actor's futures.
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_io()
        .build()?;
    let listener = tokio.block_on(TcpListener::bind("127.0.0.1:0"))?;
    let server = listener.local_addr()?;
    tokio.spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let (mut from, mut to) = socket.split();
                let _ = tokio::io::copy(&mut from, &mut to).await;
            });
        }
    });
    println!("echo server on {server}");

    let system = System::builder()
        .workers(2)
        .tokio_handle(tokio.handle().clone())
        .build()?;
    let client = system.spawn(EchoClient {
        server,
        replies: Vec::new(),
        waiting: None,
    });
    let texts = ["hello", "from", "a loka actor"];
    for text in texts {
        client.send(Msg::Echo(text.to_owned()))?;
    }
    let replies = client
        .ask(|reply| Msg::Replies(texts.len(), reply))?
        .wait()?;
    println!("main: {} echoes:", replies.len());
    for line in replies {
        println!("  {line}");
    }
    system.shutdown();
    tokio.shutdown_timeout(std::time::Duration::from_secs(1));
    Ok(())
}
