//! Futures inside an actor (docs/futures.md): an actor pipes timers — a small future completed by
//! a timer thread through its waker, no async runtime involved — and handles each one's end like a
//! message, while it keeps answering other messages.
//!
//! ```sh
//! cargo run -p loka --example pipe
//! ```

use loka::{Actor, Context, ReplyTo, System};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::{Duration, Instant};

/// A future that completes after `after`, completed by a thread of its own: the smallest
/// future that is woken from elsewhere (what a socket or a channel does too).
struct Delay {
    shared: Arc<Mutex<(bool, Option<Waker>)>>,
}

impl Delay {
    fn new(after: Duration) -> Self {
        let shared = Arc::new(Mutex::new((false, None::<Waker>)));
        let timer = Arc::clone(&shared);
        std::thread::spawn(move || {
            std::thread::sleep(after);
            let waker = {
                let mut state = timer.lock().unwrap();
                state.0 = true;
                state.1.take()
            };
            if let Some(waker) = waker {
                waker.wake();
            }
        });
        Delay { shared }
    }
}

impl Future for Delay {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        let mut state = self.shared.lock().unwrap();
        if state.0 {
            Poll::Ready(())
        } else {
            state.1 = Some(cx.waker().clone());
            Poll::Pending
        }
    }
}

enum Msg {
    /// Say `text` after `ms` milliseconds.
    Remind(&'static str, u64),
    /// How many messages were handled while reminders were pending.
    Ping,
    /// Answer with every reminder once none is pending.
    Flush(ReplyTo<Vec<String>>),
}

struct Reminders {
    start: Instant,
    pending: usize,
    pings: usize,
    said: Vec<String>,
    flush: Option<ReplyTo<Vec<String>>>,
}

impl Reminders {
    fn answer_if_done(&mut self) {
        if self.pending == 0 {
            if let Some(reply) = self.flush.take() {
                reply.send(std::mem::take(&mut self.said));
            }
        }
    }
}

impl Actor for Reminders {
    type Msg = Msg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: Msg) {
        match msg {
            Msg::Remind(text, ms) => {
                self.pending += 1;
                // The continuation runs with the actor's state, like a message: no lock needed.
                ctx.pipe(
                    Delay::new(Duration::from_millis(ms)),
                    move |me, _ctx, ()| {
                        let at = me.start.elapsed().as_millis();
                        me.said
                            .push(format!("{text} (after {at} ms, {} pings so far)", me.pings));
                        me.pending -= 1;
                        me.answer_if_done();
                    },
                );
            }
            Msg::Ping => self.pings += 1,
            Msg::Flush(reply) => {
                self.flush = Some(reply);
                self.answer_if_done();
            }
        }
    }
}

fn main() {
    let system = System::builder().workers(2).build().unwrap();
    let actor = system.spawn(Reminders {
        start: Instant::now(),
        pending: 0,
        pings: 0,
        said: Vec::new(),
        flush: None,
    });
    for (text, ms) in [("third", 60), ("first", 20), ("second", 40)] {
        actor.send(Msg::Remind(text, ms)).unwrap();
    }
    // The actor is not blocked while its timers run: these are handled at once.
    for _ in 0..1000 {
        actor.send(Msg::Ping).unwrap();
    }
    for line in actor.ask(Msg::Flush).unwrap().wait().unwrap() {
        println!("{line}");
    }
    system.shutdown();
}
