//! Places (docs/places.md): actors hinted to the two places of a synthetic two-package machine,
//! under `places` (per-worker queues) and `places:a` (a shared queue per place), with the count of
//! steals that crossed places; and the error for a place the machine does not have.
//!
//! ```sh
//! cargo run --release -p loka --example places
//! ```

use loka::{Actor, Config, Context, PolicyKind, ReplyTo, SpawnOptions, System};

/// Does a little work and says which worker ran it.
struct Work;
impl Actor for Work {
    type Msg = ReplyTo<usize>;
    fn handle(&mut self, ctx: &mut Context<Self>, reply: ReplyTo<usize>) {
        let mut x = 1u64;
        for i in 0..20_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
        std::hint::black_box(x);
        reply.send(ctx.worker_index().unwrap_or(usize::MAX));
    }
}

fn main() {
    for policy in ["places", "places:a", "cls"] {
        let system = System::from_config(Config {
            workers: 2,
            policy: policy.parse::<PolicyKind>().unwrap(),
            topology: "synthetic:package:2 core:1 pu:1".to_owned(),
            ..Config::default()
        })
        .unwrap();
        let layout = &system.machine().layout;
        let actors: Vec<_> = (0..16)
            .map(|i| {
                (
                    i % 2,
                    system.spawn_with(Work, SpawnOptions::new().place(i % 2)),
                )
            })
            .collect();
        let mut in_place = 0;
        let mut all = 0;
        for _ in 0..50 {
            let pending: Vec<_> = actors
                .iter()
                .map(|(place, a)| (*place, a.ask(|r| r).unwrap()))
                .collect();
            for (place, p) in pending {
                let worker = p.wait().unwrap();
                all += 1;
                in_place += usize::from(layout.place_of(worker) == place);
            }
        }
        system.run_until_idle();
        let stats = system.stats();
        println!(
            "{policy:<9} {in_place}/{all} messages handled in their hinted place, {} steals, {} across places",
            stats.total.steals, stats.total.cross_place_steals
        );
    }
    let system = System::builder().workers(1).build().unwrap();
    let err = system
        .try_spawn_with(Work, SpawnOptions::new().place(7))
        .map(|_| ())
        .unwrap_err();
    println!("a bad hint: {err}");
}
