//! Async actors ([`loka::AsyncActor`]) keep an actor's guarantees while their handlers await:
//! FIFO per sender→receiver pair, no loss, no duplicate, and never a second handler while one
//! awaits. Checked under every configuration of `common::configurations()` (every engine ×
//! policy × variant), with handlers that complete at once, yield (wake themselves) and await a
//! reply from another actor.

use crate::common::{configurations, system};
use loka::{Actor, ActorRef, Async, AsyncActor, AsyncContext, Context, ReplyTo};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

const SENDERS: usize = 3;
const PER_SENDER: u64 = 600;

/// Pending once, waking itself: the handler gives its worker back and is polled again later.
pub struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// Answers `n` with `n`.
struct Echo;
impl Actor for Echo {
    type Msg = (u64, ReplyTo<u64>);
    fn handle(&mut self, _ctx: &mut Context<Self>, (n, reply): Self::Msg) {
        reply.send(n);
    }
}

struct Receiver {
    next: Vec<u64>,
    /// A handler is running: set at its start, cleared at its end (after its awaits).
    busy: bool,
    violations: Arc<AtomicUsize>,
    received: u64,
    done: Option<ReplyTo<(Vec<u64>, u64)>>,
    echo: ActorRef<(u64, ReplyTo<u64>)>,
}

enum Msg {
    Item { sender: usize, seq: u64 },
    WhenDone(ReplyTo<(Vec<u64>, u64)>),
}

impl AsyncActor for Receiver {
    type Msg = Msg;
    async fn handle(&mut self, ctx: &mut AsyncContext<Self>, msg: Msg) {
        if self.busy {
            self.violations.fetch_add(1, SeqCst);
        }
        self.busy = true;
        match msg {
            Msg::Item { sender, seq } => {
                if self.next[sender] != seq {
                    self.violations.fetch_add(1, SeqCst);
                }
                match seq % 3 {
                    0 => {}
                    1 => YieldNow(false).await,
                    _ => {
                        let echoed = ctx.ask(&self.echo, |reply| (seq, reply)).await;
                        if echoed != Ok(seq) {
                            self.violations.fetch_add(1, SeqCst);
                        }
                    }
                }
                // After the awaits: a handler run meanwhile would have seen the old value.
                self.next[sender] = seq + 1;
                self.received += 1;
            }
            Msg::WhenDone(reply) => self.done = Some(reply),
        }
        if self.received == SENDERS as u64 * PER_SENDER {
            if let Some(reply) = self.done.take() {
                reply.send((self.next.clone(), self.received));
            }
        }
        self.busy = false;
    }
}

#[test]
fn async_handlers_keep_fifo_and_run_one_at_a_time() {
    for (label, config) in configurations() {
        let system = system(&config);
        let violations = Arc::new(AtomicUsize::new(0));
        let echo = system.spawn(Echo);
        let receiver = system.spawn(Async::new(Receiver {
            next: vec![0; SENDERS],
            busy: false,
            violations: Arc::clone(&violations),
            received: 0,
            done: None,
            echo,
        }));
        let threads: Vec<_> = (0..SENDERS)
            .map(|sender| {
                let to = receiver.clone();
                std::thread::spawn(move || {
                    for seq in 0..PER_SENDER {
                        to.send(Msg::Item { sender, seq }).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let (next, received) = receiver.ask(Msg::WhenDone).unwrap().wait().unwrap();
        assert_eq!(
            violations.load(SeqCst),
            0,
            "{label}: order or exclusivity broken"
        );
        assert_eq!(next, vec![PER_SENDER; SENDERS], "{label}: lost messages");
        assert_eq!(received, SENDERS as u64 * PER_SENDER, "{label}: duplicates");
        system.shutdown();
    }
}
