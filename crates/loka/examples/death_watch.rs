//! Fault tolerance in a few lines (docs/fault-tolerance.md): an overseer watches the workers it
//! hires and hears why each one stopped; workers are found by registered name; two linked actors
//! fail together, unless one traps exits; `System::actors` lists who is alive, and a plain thread
//! waits for a stop with `ActorRef::watch`.
//!
//! ```sh
//! cargo run -p loka --example death_watch
//! ```

use loka::{Actor, ActorId, ActorRef, Context, ReplyTo, SpawnOptions, StopReason, System};

/// Runs jobs; job 0 is poison.
struct Worker;

enum Job {
    Run(u32),
    Quit,
    /// Links this worker to another one.
    Link(ActorRef<Job>),
    /// From now on, a linked worker's stop is a message, not this worker's end.
    Trap,
    Exited(ActorId, StopReason),
}

impl Actor for Worker {
    type Msg = Job;
    fn handle(&mut self, ctx: &mut Context<Self>, job: Job) {
        match job {
            Job::Run(0) => panic!("job 0 is poison"),
            Job::Run(n) => println!("  {} ran job {n}", ctx.id()),
            Job::Quit => ctx.stop(),
            Job::Link(other) => ctx.link(&other),
            Job::Trap => ctx.trap_exits(Job::Exited),
            Job::Exited(who, why) => println!("  {} trapped: {who} {why}", ctx.id()),
        }
    }
}

/// Hires workers under a name and watches them.
struct Overseer {
    log: Vec<String>,
}

enum Msg {
    Hire(&'static str),
    Died(&'static str, StopReason),
    Log(ReplyTo<Vec<String>>),
}

impl Actor for Overseer {
    type Msg = Msg;
    fn handle(&mut self, ctx: &mut Context<Self>, msg: Msg) {
        match msg {
            Msg::Hire(name) => {
                let worker = ctx.spawn_with(Worker, SpawnOptions::new().name(name));
                ctx.register(name, &worker).expect("a free name");
                ctx.watch_with(&worker, move |reason| Msg::Died(name, reason));
            }
            // A watch message is handled like any other, in the overseer's mailbox order.
            Msg::Died(name, reason) => self.log.push(format!("{name} {reason}")),
            Msg::Log(reply) => reply.send(std::mem::take(&mut self.log)),
        }
    }
}

fn main() {
    let system = System::builder()
        .workers(2)
        .build()
        .expect("a valid configuration");
    let overseer = system.spawn(Overseer { log: Vec::new() });
    for name in ["alice", "bob", "carol", "dave"] {
        overseer.send(Msg::Hire(name)).unwrap();
    }
    system.run_until_idle();

    println!("alive:");
    let mut actors = system.actors();
    actors.sort_by_key(|actor| actor.id);
    for actor in actors {
        let name = actor.registered.as_deref().unwrap_or("-");
        println!(
            "  {} {name:5} {:?} parent {:?}",
            actor.id, actor.state, actor.parent
        );
    }

    // Workers are found by name, typed by their message type.
    let worker = |name| system.lookup::<Job>(name).expect("registered");
    worker("alice").send(Job::Run(1)).unwrap();
    worker("alice").send(Job::Quit).unwrap(); // stops itself: Normal
    worker("bob").send(Job::Run(0)).unwrap(); // panics: Panicked (the panic hook prints it)
    worker("carol").stop(); // stopped from outside: Stopped
    system.run_until_idle();
    assert!(
        system.lookup::<Job>("bob").is_none(),
        "a stopped worker's name is free"
    );
    for line in overseer.ask(Msg::Log).unwrap().wait().unwrap() {
        println!("overseer heard: {line}");
    }

    // Links: a failure stops the linked actor too, unless it traps exits.
    let (left, right, trapper) = (system.spawn(Worker), system.spawn(Worker), worker("dave"));
    left.send(Job::Link(right.clone())).unwrap();
    trapper.send(Job::Trap).unwrap();
    trapper.send(Job::Link(right.clone())).unwrap();
    system.run_until_idle();
    let left_stops = left.watch();
    right.send(Job::Run(0)).unwrap();
    println!("left: {}", left_stops.wait().unwrap());
    system.run_until_idle();
    println!("dave still runs: {}", !trapper.is_stopped());

    // Shutdown kills whoever is left; their watchers hear it.
    let dave_stops = trapper.watch();
    system.shutdown();
    println!("dave: {}", dave_stops.wait().unwrap());
}
