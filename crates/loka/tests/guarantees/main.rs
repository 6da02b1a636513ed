//! The runtime's guarantees, one module per theme, each checked under every configuration of
//! `common::configurations()`: every engine in `loka::EngineKind::ALL` × every policy it supports ×
//! worker counts and variants. One test binary (linked once; its tests run in parallel); select a
//! theme with `cargo test -p loka --test guarantees fifo::`.

mod ask;
mod async_actors;
mod bounded;
mod common;
mod delivery;
mod fifo;
mod graceful;
mod hubs;
mod lifecycle;
mod names;
mod quiescence;
mod shutdown;
mod supervision;
mod timers;
mod watch;
