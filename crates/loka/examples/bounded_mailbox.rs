//! Bounded mailboxes (docs/bounded-mailboxes.md): a slow consumer with room for 100 messages, fed
//! first by a fast producer actor that backs off when `try_send` answers `Full`, then by a plain
//! thread that waits for room with `send_async`.
//!
//! `cargo run --example bounded_mailbox`

use loka::{Actor, ActorRef, Context, ReplyTo, SpawnOptions, System, TrySendError};
use std::time::Duration;

const CAPACITY: usize = 100;

/// Handles one item every ~50 µs: far slower than anyone can send.
struct Consumer {
    handled: u64,
}

enum Work {
    Item(u64),
    Handled(ReplyTo<u64>),
}

impl Actor for Consumer {
    type Msg = Work;
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: Work) {
        match msg {
            Work::Item(n) => {
                std::thread::sleep(Duration::from_micros(50));
                std::hint::black_box(n);
                self.handled += 1;
            }
            Work::Handled(reply) => reply.send(self.handled),
        }
    }
}

/// Sends `left` items as fast as it can; on `Full` it keeps the item and yields its worker (a
/// message to itself), so the consumer and everyone else run before it tries again.
struct Producer {
    to: ActorRef<Work>,
    left: u64,
    held: Option<Work>,
    full_answers: u64,
    done: Option<ReplyTo<u64>>,
}

enum Go {
    Start(ReplyTo<u64>),
    Retry,
}

impl Actor for Producer {
    type Msg = Go;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: Go) {
        if let Go::Start(done) = msg {
            self.done = Some(done);
        }
        while self.left > 0 {
            let item = self.held.take().unwrap_or(Work::Item(self.left));
            match self.to.try_send(item) {
                Ok(()) => self.left -= 1,
                Err(TrySendError::Full(item)) => {
                    self.held = Some(item);
                    self.full_answers += 1;
                    ctx.myself().send(Go::Retry).expect("producer alive");
                    return;
                }
                Err(TrySendError::Stopped(_)) => unreachable!("the consumer outlives the producer"),
            }
        }
        if let Some(done) = self.done.take() {
            done.send(self.full_answers);
        }
        ctx.stop();
    }
}

use futures_executor::block_on;

fn main() {
    let system = System::builder().workers(2).build().expect("system");
    let consumer = system.spawn_with(
        Consumer { handled: 0 },
        SpawnOptions::new().capacity(CAPACITY),
    );

    let producer = system.spawn(Producer {
        to: consumer.clone(),
        left: 2_000,
        held: None,
        full_answers: 0,
        done: None,
    });
    let full_answers = producer.ask(Go::Start).unwrap().wait().unwrap();
    println!("producer actor: 2000 items with try_send, {full_answers} Full answers (each retried after yielding)");

    let mut most = 0;
    for n in 0..1_000 {
        block_on(consumer.send_async(Work::Item(n))).expect("consumer alive");
        most = most.max(consumer.mailbox_len());
    }
    println!("thread: 1000 items with send_async, mailbox at most {most} of {CAPACITY}");

    // `ask` is a send too: with room again (the consumer caught up) it is not refused.
    system.run_until_idle();
    let handled = consumer.ask(Work::Handled).unwrap().wait().unwrap();
    let stats = system.stats();
    println!(
        "consumer handled {handled}; stats: mailbox_full {}, overflow_dropped {}",
        stats.mailbox_full, stats.overflow_dropped
    );
    system.shutdown();
}
