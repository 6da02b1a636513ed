//! A small key-value service: a front actor registered as `"kv"` routes each request, by key, to
//! one of four workers in a supervised pool. One request is poisoned: the worker handling it
//! panics. Its supervisor restarts it in place — the front's references to it stay valid — and
//! every other request, those queued behind the poisoned one included, is answered. The data
//! survives the restart because it lives in the shard the worker's factory hands to each new
//! instance, not in the instance.
//!
//! `cargo run -p loka --example kv_service` (docs/supervision.md). Exits non-zero if a request
//! other than the poisoned one goes unanswered or a value is wrong.

use loka::supervisor::{Restart, Strategy, SupervisorSpec};
use loka::{Actor, ActorRef, AskError, Context, ReplyTo, System};
use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The service's requests.
enum Kv {
    Put {
        key: String,
        value: String,
        reply: ReplyTo<Option<String>>,
    },
    Get {
        key: String,
        reply: ReplyTo<Option<String>>,
    },
}

impl Kv {
    fn key(&self) -> &str {
        match self {
            Kv::Put { key, .. } | Kv::Get { key, .. } => key,
        }
    }
}

/// One shard's data: kept outside the worker, so that a restarted worker finds it.
type Shard = Arc<Mutex<HashMap<String, String>>>;

/// A worker: serves the requests for its shard.
struct KvWorker {
    shard: Shard,
    served: u64,
}

impl Actor for KvWorker {
    type Msg = Kv;
    fn started(&mut self, ctx: &mut Context<Self>) {
        println!(
            "worker {} started (shard of {} keys)",
            ctx.id(),
            self.shard.lock().unwrap().len()
        );
    }
    fn handle(&mut self, _ctx: &mut Context<Self>, request: Kv) {
        self.served += 1;
        match request {
            Kv::Put { key, value, reply } => {
                if value == "poison" {
                    // The request's reply handle is dropped as the panic unwinds: its asker
                    // hears `NoReply` at once instead of waiting forever.
                    panic!("poisoned value for key {key}");
                }
                reply.send(self.shard.lock().unwrap().insert(key, value));
            }
            Kv::Get { key, reply } => reply.send(self.shard.lock().unwrap().get(&key).cloned()),
        }
    }
    fn stopped(&mut self, ctx: &mut Context<Self>) {
        println!("worker {} stopped after {} requests", ctx.id(), self.served);
    }
}

/// The front: routes each request to the worker of its key's shard.
struct Front {
    workers: Vec<ActorRef<Kv>>,
}

impl Actor for Front {
    type Msg = Kv;
    fn handle(&mut self, _ctx: &mut Context<Self>, request: Kv) {
        let hash = request
            .key()
            .bytes()
            .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b.into()));
        let worker = &self.workers[(hash % self.workers.len() as u64) as usize];
        // A restarting worker keeps its mailbox: the request waits for the new instance.
        if let Err(refused) = worker.send(request) {
            eprintln!("worker stopped: {refused}");
        }
    }
}

fn main() -> ExitCode {
    // One line per crash instead of the default report (and backtrace).
    std::panic::set_hook(Box::new(|info| eprintln!("crash: {info}")));
    let system = System::builder().workers(2).build().expect("a system");

    // The pool: four workers, one shard each, restarted one at a time (OneForOne), at most
    // 5 restarts in any 10 seconds.
    let shards: Vec<Shard> = (0..4).map(|_| Shard::default()).collect();
    let mut spec = SupervisorSpec::new(Strategy::OneForOne)
        .max_restarts(5, Duration::from_secs(10))
        .expect("a valid intensity");
    for (i, shard) in shards.iter().enumerate() {
        let shard = Arc::clone(shard);
        let child = loka::supervisor::ChildSpec::new(format!("kv-worker-{i}"), move || KvWorker {
            shard: Arc::clone(&shard),
            served: 0,
        })
        .restart(Restart::Permanent);
        spec = spec.child(child).expect("unique ids");
    }
    let pool = system.spawn_supervisor(spec).expect("the pool");
    let workers = pool.children::<Kv>().expect("the pool runs");
    let front = system.spawn(Front { workers });
    system.register("kv", &front).expect("the name is free");
    drop(front);

    // A client finds the service by name.
    let kv: ActorRef<Kv> = system.lookup("kv").expect("registered");
    let mut puts = Vec::new();
    for i in 0..200 {
        let (key, value) = (format!("key-{i}"), format!("value-{i}"));
        puts.push(kv.ask(|reply| Kv::Put { key, value, reply }).unwrap());
        if i == 100 {
            let (key, value) = ("key-7".to_owned(), "poison".to_owned());
            puts.push(kv.ask(|reply| Kv::Put { key, value, reply }).unwrap());
        }
    }
    let mut answered = 0;
    let mut no_reply = 0;
    for put in puts {
        match put.wait_timeout(Duration::from_secs(10)) {
            Ok(_) => answered += 1,
            Err(AskError::NoReply) => no_reply += 1,
            Err(e) => eprintln!("a put failed: {e}"),
        }
    }
    let mut wrong = 0;
    for i in 0..200 {
        let key = format!("key-{i}");
        let got = kv
            .ask(|reply| Kv::Get { key, reply })
            .unwrap()
            .wait_timeout(Duration::from_secs(10));
        if got != Ok(Some(format!("value-{i}"))) {
            wrong += 1;
            eprintln!("key-{i}: {got:?}");
        }
    }
    let stats = pool.stats().expect("the pool runs");
    println!(
        "puts answered: {answered}, unanswered (the poisoned one): {no_reply}, wrong gets: {wrong}; \
         pool: {} restart(s), {} request(s) lost to the panic",
        stats.restarts, stats.lost
    );
    let ok =
        answered == 200 && no_reply == 1 && wrong == 0 && stats.restarts == 1 && stats.lost == 1;
    system.shutdown();
    if ok {
        println!("ok: the worker crashed, was restarted in place, and no other request was lost");
        ExitCode::SUCCESS
    } else {
        eprintln!("FAILED");
        ExitCode::FAILURE
    }
}
