//! What timers cost (figures in docs/results/timers.md):
//!
//! * **lateness** on an idle system: `--timers` timers (default 500) with delays spread over
//!   1–100 ms, armed from inside an actor; how late each fired (p50, p99, max), never early;
//! * **idle CPU** with `--pending` timers (default 10,000) armed an hour ahead, over
//!   `--idle-secs` (default 3): a parked worker sleeps until its next deadline, so ≈ 0 %;
//! * **one million pending timers**: arm them from a plain thread (`ActorRef::send_after`, ns per
//!   insert), the memory they hold (RSS delta per timer), and cancel them (ns per cancel);
//! * **arm + cancel**, one timer pending at a time, `--pairs` times (default 1,000,000): a timeout
//!   armed and cancelled per request. From a plain thread (`ActorRef::send_after`, then
//!   `TimerHandle::cancel`), and inside an actor (`Context::run_after`, then `cancel`, the way
//!   BenchErl's timer_wheel arms its waits); ns per pair;
//! * **a message to an actor with a receive timeout set** (60 s, never reached), against one
//!   without: an actor sends `--messages` messages (default 2,000,000) to each, the one with the
//!   timeout and the one without in turns, three times; ns per message, the lowest of the three.
//!
//! ```sh
//! cargo run --release -p loka --example timer_costs -- --workers 2
//! ```
//! Prints one JSON object per measurement.

use loka::{Actor, ActorRef, Context, ReplyTo, System};
use std::time::{Duration, Instant};

/// Arms `n` self-timers with spread delays; records how late each fired (µs on the system's clock).
struct Late {
    left: usize,
    lateness_us: Vec<u64>,
    done: Option<ReplyTo<Vec<u64>>>,
}

enum LateMsg {
    Go(usize, ReplyTo<Vec<u64>>),
    Fired(Duration),
}

impl Actor for Late {
    type Msg = LateMsg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: LateMsg) {
        match msg {
            LateMsg::Go(n, done) => {
                self.left = n;
                self.done = Some(done);
                let me = ctx.myself();
                let mut rng = fastrand::Rng::with_seed(7);
                for _ in 0..n {
                    let delay = Duration::from_micros(rng.u64(1_000..100_000));
                    let due = ctx.now() + delay;
                    ctx.send_after(&me, delay, LateMsg::Fired(due));
                }
            }
            LateMsg::Fired(due) => {
                let late = ctx.now().checked_sub(due).expect("a timer fired early");
                self.lateness_us.push(late.as_micros() as u64);
                self.left -= 1;
                if self.left == 0 {
                    self.done
                        .take()
                        .unwrap()
                        .send(std::mem::take(&mut self.lateness_us));
                }
            }
        }
    }
}

struct Sink;
impl Actor for Sink {
    type Msg = ();
    fn handle(&mut self, _ctx: &mut Context<Self>, _: ()) {}
}

/// Arms and cancels `n` timers one at a time inside its handler; replies with the ns it took.
struct Pairs;
impl Actor for Pairs {
    type Msg = (usize, ReplyTo<f64>);
    fn handle(&mut self, ctx: &mut Context<Self>, (n, done): (usize, ReplyTo<f64>)) {
        let start = Instant::now();
        for _ in 0..n {
            let h = ctx.run_after(Duration::from_secs(60), |_: &mut Pairs, _| {
                panic!("a cancelled timer fired")
            });
            assert!(h.cancel());
        }
        done.send(start.elapsed().as_nanos() as f64 / n as f64);
    }
}

/// Counts its ticks; with `timeout`, with a receive timeout of a minute set (never reached here).
struct Listener {
    count: u64,
    timeout: bool,
}

enum ListenMsg {
    Tick,
    Count(ReplyTo<u64>),
}

impl Actor for Listener {
    type Msg = ListenMsg;
    fn started(&mut self, ctx: &mut Context<Self>) {
        if self.timeout {
            ctx.set_receive_timeout(Duration::from_secs(60))
                .expect("a minute is a valid timeout");
        }
    }
    fn handle(&mut self, _ctx: &mut Context<Self>, msg: ListenMsg) {
        match msg {
            ListenMsg::Tick => self.count += 1,
            ListenMsg::Count(reply) => reply.send(self.count),
        }
    }
    fn timeout(&mut self, _ctx: &mut Context<Self>) {
        panic!("a minute of silence in a run of seconds");
    }
}

/// Sends `n` ticks to a listener, then its count request (after the ticks: FIFO per sender).
struct Feeder;
impl Actor for Feeder {
    type Msg = (ActorRef<ListenMsg>, u64, ReplyTo<u64>);
    fn handle(&mut self, _ctx: &mut Context<Self>, (to, n, reply): Self::Msg) {
        for _ in 0..n {
            to.send(ListenMsg::Tick).expect("the listener runs");
        }
        to.send(ListenMsg::Count(reply)).expect("the listener runs");
    }
}

/// ns per message from a feeder to a listener, with or without a receive timeout.
fn listen(
    system: &System,
    feeder: &ActorRef<(ActorRef<ListenMsg>, u64, ReplyTo<u64>)>,
    n: u64,
    timeout: bool,
) -> f64 {
    let listener = system.spawn(Listener { count: 0, timeout });
    let start = Instant::now();
    let count = feeder
        .ask(|r| (listener.clone(), n, r))
        .unwrap()
        .wait()
        .unwrap();
    let ns = start.elapsed().as_nanos() as f64 / n as f64;
    assert_eq!(count, n, "every tick counted once");
    ns
}

fn process_cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("Linux /proc/self/stat");
    let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("Linux /proc/self/statm");
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut workers, mut timers, mut pending, mut idle_secs) =
        (2usize, 500usize, 10_000usize, 3.0f64);
    let mut million = 1_000_000usize;
    let mut pairs = 1_000_000usize;
    let mut messages = 2_000_000u64;
    while let Some(flag) = args.next() {
        let value = args.next().unwrap_or_default();
        let parsed = value.parse::<f64>();
        let Ok(number) = parsed else {
            eprintln!("error: {flag} needs a number, got `{value}`");
            std::process::exit(2);
        };
        match flag.as_str() {
            "--workers" => workers = number as usize,
            "--timers" => timers = number as usize,
            "--pending" => pending = number as usize,
            "--idle-secs" => idle_secs = number,
            "--million" => million = number as usize,
            "--pairs" => pairs = number as usize,
            "--messages" => messages = number as u64,
            other => {
                eprintln!("error: unknown flag `{other}` (known: --workers, --timers, --pending, --idle-secs, --million, --pairs, --messages)");
                std::process::exit(2);
            }
        }
    }
    let system = System::builder()
        .workers(workers)
        .build()
        .unwrap_or_else(|e| {
            eprintln!("error: {e}");
            std::process::exit(1)
        });

    // Lateness.
    let late = system.spawn(Late {
        left: 0,
        lateness_us: Vec::new(),
        done: None,
    });
    let mut lateness = late
        .ask(|r| LateMsg::Go(timers, r))
        .unwrap()
        .wait()
        .unwrap();
    lateness.sort_unstable();
    println!(
        "{{\"measure\":\"lateness\",\"workers\":{workers},\"timers\":{timers},\"p50_us\":{},\"p99_us\":{},\"max_us\":{}}}",
        percentile(&lateness, 0.5),
        percentile(&lateness, 0.99),
        lateness.last().unwrap()
    );

    // Idle CPU with pending timers.
    let sink = system.spawn(Sink);
    let hour = Duration::from_secs(3600);
    let handles: Vec<_> = (0..pending).map(|_| sink.send_after(hour, ())).collect();
    std::thread::sleep(Duration::from_millis(100));
    let parks = system.stats().total.parks;
    let cpu = process_cpu_secs();
    let start = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(idle_secs));
    let cpu = process_cpu_secs() - cpu;
    let wall = start.elapsed().as_secs_f64();
    println!(
        "{{\"measure\":\"idle_cpu\",\"workers\":{workers},\"pending_timers\":{},\"idle_secs\":{wall:.2},\"cpu_percent\":{:.2},\"parks_during_idle\":{}}}",
        system.pending_timers(),
        100.0 * cpu / wall,
        system.stats().total.parks - parks
    );
    for h in handles {
        h.cancel();
    }

    // A million pending timers.
    let rss = rss_bytes();
    let start = Instant::now();
    let handles: Vec<_> = (0..million)
        .map(|i| sink.send_after(Duration::from_millis(1_000 + (i % 59_000) as u64), ()))
        .collect();
    let insert_ns = start.elapsed().as_nanos() as f64 / million as f64;
    let bytes = (rss_bytes().saturating_sub(rss)) as f64 / million as f64;
    let held = system.pending_timers();
    let start = Instant::now();
    let cancelled = handles.iter().filter(|h| h.cancel()).count();
    let cancel_ns = start.elapsed().as_nanos() as f64 / million as f64;
    println!(
        "{{\"measure\":\"million\",\"timers\":{million},\"pending\":{held},\"insert_ns\":{insert_ns:.0},\"rss_bytes_per_timer\":{bytes:.0},\"cancel_ns\":{cancel_ns:.0},\"cancelled\":{cancelled},\"pending_after\":{}}}",
        system.pending_timers()
    );
    assert_eq!(cancelled, million, "every pending timer cancels");
    drop(handles);

    // Arm + cancel, one pending at a time: from a plain thread, then inside an actor.
    let start = Instant::now();
    for _ in 0..pairs {
        let h = sink.send_after(Duration::from_secs(60), ());
        assert!(h.cancel());
    }
    let thread_ns = start.elapsed().as_nanos() as f64 / pairs as f64;
    let actor = system.spawn(Pairs);
    let actor_ns = actor.ask(|r| (pairs, r)).unwrap().wait().unwrap();
    println!(
        "{{\"measure\":\"arm_cancel\",\"pairs\":{pairs},\"thread_ns\":{thread_ns:.0},\"actor_ns\":{actor_ns:.0},\"pending_after\":{}}}",
        system.pending_timers()
    );

    // A message to an actor with a receive timeout set, against one without.
    let feeder = system.spawn(Feeder);
    let (mut plain_ns, mut timeout_ns) = (f64::MAX, f64::MAX);
    for _ in 0..3 {
        plain_ns = plain_ns.min(listen(&system, &feeder, messages, false));
        timeout_ns = timeout_ns.min(listen(&system, &feeder, messages, true));
    }
    println!(
        "{{\"measure\":\"receive_timeout\",\"messages\":{messages},\"plain_ns\":{plain_ns:.1},\"timeout_ns\":{timeout_ns:.1}}}"
    );
    system.shutdown();
}
