//! Timers in a few lines (docs/timers.md): a delayed send, a periodic tick, an ask with a
//! timeout, and a receive timeout that notices when messages stop coming.
//!
//! ```sh
//! cargo run -p loka --example timers
//! ```

use loka::{Actor, ActorRef, AskError, Context, ReplyTo, System, TimerHandle};
use std::time::Duration;

/// Never answers (a stuck service).
struct Stuck(Vec<ReplyTo<String>>);

impl Actor for Stuck {
    type Msg = ReplyTo<String>;
    fn handle(&mut self, _ctx: &mut Context<Self>, reply: ReplyTo<String>) {
        self.0.push(reply); // kept, never answered
    }
}

/// Ticks, asks a stuck service with a timeout, and reports silence.
struct Watchman {
    stuck: ActorRef<ReplyTo<String>>,
    ticks: u32,
    tick: Option<TimerHandle>,
    done: Option<ReplyTo<Vec<String>>>,
    log: Vec<String>,
}

enum Msg {
    Start(ReplyTo<Vec<String>>),
    Hello(&'static str),
}

impl Actor for Watchman {
    type Msg = Msg;

    fn handle(&mut self, ctx: &mut Context<Self>, msg: Msg) {
        match msg {
            Msg::Start(done) => {
                self.done = Some(done);
                // A message to ourselves in 30 ms.
                let me = ctx.myself();
                ctx.send_after(&me, Duration::from_millis(30), Msg::Hello("delayed hello"));
                // A tick every 10 ms, five times.
                let tick = ctx
                    .run_interval(Duration::from_millis(10), |me: &mut Watchman, ctx| {
                        me.ticks += 1;
                        me.log.push(format!(
                            "{:>3} ms  tick {}",
                            ctx.now().as_millis(),
                            me.ticks
                        ));
                        if me.ticks == 5 {
                            me.tick.take().unwrap().cancel();
                        }
                    })
                    .expect("a period above zero");
                self.tick = Some(tick);
                // An ask that cannot succeed: the continuation gets a timeout after 20 ms.
                let stuck = self.stuck.clone();
                ctx.ask_timeout(
                    &stuck,
                    |r| r,
                    Duration::from_millis(20),
                    |me: &mut Watchman, ctx, got| {
                        assert_eq!(got, Err(AskError::Timeout(Duration::from_millis(20))));
                        me.log
                            .push(format!("{:>3} ms  ask timed out", ctx.now().as_millis()));
                    },
                );
                // Tell us when 80 ms pass with no message.
                ctx.set_receive_timeout(Duration::from_millis(80))
                    .expect("above zero");
            }
            Msg::Hello(text) => self
                .log
                .push(format!("{:>3} ms  {text}", ctx.now().as_millis())),
        }
    }

    fn timeout(&mut self, ctx: &mut Context<Self>) {
        self.log.push(format!(
            "{:>3} ms  no message for 80 ms",
            ctx.now().as_millis()
        ));
        ctx.clear_receive_timeout();
        if let Some(done) = self.done.take() {
            done.send(std::mem::take(&mut self.log));
        }
    }
}

fn main() {
    let system = System::builder()
        .workers(2)
        .build()
        .expect("a valid configuration");
    let stuck = system.spawn(Stuck(Vec::new()));
    let watchman = system.spawn(Watchman {
        stuck,
        ticks: 0,
        tick: None,
        done: None,
        log: Vec::new(),
    });
    let log = watchman.ask(Msg::Start).unwrap().wait().unwrap();
    for line in log {
        println!("{line}");
    }
    system.shutdown();
}
