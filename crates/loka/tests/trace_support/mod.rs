//! A `tracing` subscriber that keeps what it is given, for the tests of activation spans and
//! panic reports (docs/observability.md): every span with its fields (recorded ones included)
//! and every event with its level and fields, as strings.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// Field name → value, as `Debug` shows it (strings without quotes).
pub type Fields = BTreeMap<String, String>;

/// A span or an event as it was captured.
#[derive(Debug, Clone)]
pub struct Captured {
    /// The span's name, or the event's message.
    pub name: String,
    pub target: String,
    pub level: Level,
    pub fields: Fields,
}

/// What the subscriber captured so far.
#[derive(Default)]
pub struct Store {
    /// Spans in order of creation (id − 1 is the index).
    pub spans: Vec<Captured>,
    pub events: Vec<Captured>,
}

/// Captures every span and event of a target starting with `loka`.
#[derive(Clone, Default)]
pub struct Capture {
    pub store: Arc<Mutex<Store>>,
    next: Arc<AtomicU64>,
}

impl Capture {
    /// The store, locked (a test that failed holding it does not take the workers down too).
    pub fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

struct Collect<'a>(&'a mut Fields);

impl Visit for Collect<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl Subscriber for Capture {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target().starts_with("loka")
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut fields = Fields::new();
        span.record(&mut Collect(&mut fields));
        let metadata = span.metadata();
        let mut store = self.store();
        store.spans.push(Captured {
            name: metadata.name().to_owned(),
            target: metadata.target().to_owned(),
            level: *metadata.level(),
            fields,
        });
        self.next.fetch_add(1, Relaxed);
        Id::from_u64(store.spans.len() as u64)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut store = self.store();
        let captured = &mut store.spans[span.into_u64() as usize - 1];
        values.record(&mut Collect(&mut captured.fields));
    }

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields::new();
        event.record(&mut Collect(&mut fields));
        let metadata = event.metadata();
        self.store().events.push(Captured {
            name: fields.get("message").cloned().unwrap_or_default(),
            target: metadata.target().to_owned(),
            level: *metadata.level(),
            fields,
        });
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}

/// The capturing subscriber, installed as the process's global one on first use (the workers'
/// threads only see a global subscriber).
pub fn capture() -> &'static Capture {
    static CAPTURE: std::sync::OnceLock<Capture> = std::sync::OnceLock::new();
    CAPTURE.get_or_init(|| {
        let capture = Capture::default();
        tracing::subscriber::set_global_default(capture.clone())
            .expect("no other global subscriber in this test binary");
        capture
    })
}
