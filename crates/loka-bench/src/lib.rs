//! Benchmarks (filled in by the core issue).
