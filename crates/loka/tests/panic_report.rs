//! `panic_report` (docs/observability.md, "Panic reports"): under `"tracing"` a supervised
//! child's panic is one `tracing::error!` event with its id, name, type and message, and the
//! panic hook that was in place hears nothing of it; a panic elsewhere in the process, and a
//! panic of a system left at `"hook"`, still go to that hook. A bad value is a typed error.

mod trace_support;

use loka::supervisor::{ChildSpec, Strategy, SupervisorSpec};
use loka::{Actor, Config, ConfigError, Context, PanicReport, System};
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};

/// Calls of the hook the test installs before any system: what stderr would have shown.
static HOOK_CALLS: AtomicU64 = AtomicU64::new(0);

/// Panics when told to.
struct Fragile;

impl Actor for Fragile {
    type Msg = bool;
    fn handle(&mut self, _ctx: &mut Context<Self>, panic: bool) {
        assert!(!panic, "asked to panic");
    }
}

/// A system with one supervised `Fragile` child, named `name`, told to panic once; then the
/// restarted child handles a message.
fn panic_once(report: PanicReport, name: &str) {
    let system = System::builder()
        .workers(2)
        .panic_report(report)
        .build()
        .unwrap();
    let spec = SupervisorSpec::new(Strategy::OneForOne)
        .child(ChildSpec::new(name, || Fragile))
        .unwrap();
    let supervisor = system.spawn_supervisor(spec).unwrap();
    let fragile = supervisor.child::<bool>(name).unwrap();
    fragile.send(true).unwrap();
    system.run_until_idle();
    fragile.send(false).unwrap();
    system.run_until_idle();
    assert_eq!(system.stats().panics, 1);
    assert_eq!(system.stats().restarts, 1);
    system.shutdown();
}

fn panic_events(capture: &trace_support::Capture) -> Vec<trace_support::Captured> {
    capture
        .store()
        .events
        .iter()
        .filter(|e| e.name == "actor panicked")
        .cloned()
        .collect()
}

// One test: the panic hook and the global subscriber are the process's, set up in this order.
#[test]
fn tracing_reports_a_supervised_panic_as_one_event_and_the_hook_gets_the_rest() {
    std::panic::set_hook(Box::new(|_| {
        HOOK_CALLS.fetch_add(1, SeqCst);
    }));
    let capture = trace_support::capture();

    // "tracing": one event, nothing for the hook.
    panic_once(PanicReport::Tracing, "fragile");
    let events = panic_events(capture);
    assert_eq!(events.len(), 1, "{events:?}");
    let event = &events[0];
    assert_eq!(event.level, tracing::Level::ERROR);
    assert_eq!(event.target, "loka::panic");
    let f = &event.fields;
    assert_eq!(f.get("name").map(String::as_str), Some("fragile"), "{f:?}");
    assert_eq!(f["message"], "actor panicked", "{f:?}");
    assert!(f["actor"].starts_with('<'), "{f:?}");
    assert!(f["actor_type"].ends_with("panic_report::Fragile"), "{f:?}");
    assert!(f["location"].contains("panic_report.rs"), "{f:?}");
    assert_eq!(
        f.get("panic").map(String::as_str),
        Some("asked to panic"),
        "{f:?}"
    );
    assert_eq!(
        HOOK_CALLS.load(SeqCst),
        0,
        "the previous hook saw the actor's panic"
    );

    // A panic outside any activation goes to the hook it replaced, and is no event.
    let _ = std::thread::spawn(|| panic!("not an actor")).join();
    assert_eq!(HOOK_CALLS.load(SeqCst), 1);
    assert_eq!(panic_events(capture).len(), 1);

    // "hook" (the default): the hook, as before, even with the reporting hook installed.
    panic_once(PanicReport::default(), "fragile-hook");
    assert_eq!(HOOK_CALLS.load(SeqCst), 2);
    assert_eq!(panic_events(capture).len(), 1);
}

#[test]
fn a_bad_panic_report_is_a_typed_error_naming_the_key_and_the_values() {
    let err =
        Config::from_toml_str("workers = 1\npanic_report = \"stderr\"\n", "x.toml").unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, ConfigError::Toml { .. }), "{err:?}");
    // One line, naming the file, the line, the key and the value, and the accepted values.
    assert_eq!(
        text,
        "invalid configuration in x.toml: line 2, column 16 (`panic_report = \"stderr\"`): \
         unknown panic_report `stderr` (known: hook, tracing)"
    );
    let mut config = Config::default();
    let err = config
        .apply_vars(|k| (k == "LOKA_PANIC_REPORT").then(|| "stderr".to_owned()))
        .unwrap_err();
    assert!(
        matches!(
            err,
            ConfigError::Invalid {
                key: "panic_report",
                ..
            }
        ),
        "{err:?}"
    );
    let text = err.to_string();
    assert_eq!(
        text,
        "invalid panic_report = `stderr` in environment variable LOKA_PANIC_REPORT: unknown \
         panic_report `stderr` (known: hook, tracing)"
    );
    assert_eq!(config.panic_report, PanicReport::Hook, "unchanged");
    for report in PanicReport::ALL {
        let config =
            Config::from_toml_str(&format!("panic_report = \"{report}\"\n"), "x.toml").unwrap();
        assert_eq!(config.panic_report, report);
    }
}
