//! Activation spans (feature `trace-activations`; docs/observability.md): messages to a named
//! actor run in TRACE spans carrying its id, name, type, the worker and the policy, and the
//! messages each activation handled add up to what was sent; an unnamed actor's spans have no
//! name. Under the actor-centric and the message-centric engine.

mod trace_support;

use loka::{Actor, Context, EngineKind, PolicyKind, SpawnOptions, System};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;

const WORKERS: usize = 2;
const MESSAGES: u64 = 1_000;

/// Counts what it is sent.
struct Counter(Arc<AtomicU64>);

impl Actor for Counter {
    type Msg = u64;
    fn handle(&mut self, _ctx: &mut Context<Self>, _msg: u64) {
        self.0.fetch_add(1, SeqCst);
    }
}

#[test]
fn activations_of_a_named_actor_run_in_spans_with_its_fields() {
    let capture = trace_support::capture();
    for engine in [EngineKind::ActorCentric, EngineKind::MessageCentric] {
        // Ids repeat from one system to the next: each engine's run starts afresh.
        *capture.store() = Default::default();
        let name = format!("counter-{engine}");
        let system = System::builder()
            .workers(WORKERS)
            .engine(engine)
            .policy(PolicyKind::Cls)
            .build()
            .unwrap();
        let count = Arc::new(AtomicU64::new(0));
        let named = system.spawn_with(
            Counter(Arc::clone(&count)),
            SpawnOptions::new().name(name.clone()),
        );
        let unnamed = system.spawn(Counter(Arc::clone(&count)));
        for i in 0..MESSAGES {
            named.send(i).unwrap();
        }
        unnamed.send(0).unwrap();
        system.run_until_idle();
        assert_eq!(count.load(SeqCst), MESSAGES + 1);

        let store = capture.store();
        let of = |id: loka::ActorId| {
            let id = id.to_string();
            store
                .spans
                .iter()
                .filter(move |s| s.name == "activation" && s.fields.get("actor") == Some(&id))
                .collect::<Vec<_>>()
        };
        let spans = of(named.id());
        assert!(!spans.is_empty(), "{engine}: no activation span of {name}");
        let mut messages = 0;
        for span in &spans {
            assert_eq!(span.level, tracing::Level::TRACE);
            assert_eq!(span.target, "loka::activation");
            let f = &span.fields;
            assert_eq!(f.get("name"), Some(&name), "{f:?}");
            assert!(
                f["actor_type"].ends_with("activation_spans::Counter"),
                "{f:?}"
            );
            let worker: usize = f["worker"].parse().unwrap();
            assert!(worker < WORKERS, "{f:?}");
            assert_eq!(f["policy"], "cls", "{f:?}");
            messages += f["messages"].parse::<u64>().unwrap();
        }
        // The actor-centric count includes the start envelope; the message-centric one counts
        // user messages only.
        let expected = match engine {
            EngineKind::ActorCentric => MESSAGES + 1,
            _ => MESSAGES,
        };
        assert_eq!(
            messages,
            expected,
            "{engine}: messages over {} spans",
            spans.len()
        );
        let spans = of(unnamed.id());
        assert!(
            !spans.is_empty(),
            "{engine}: no activation span of the unnamed actor"
        );
        assert!(
            spans.iter().all(|s| !s.fields.contains_key("name")),
            "{spans:?}"
        );
        drop(store);
        drop((named, unnamed));
        system.shutdown();
    }
}
