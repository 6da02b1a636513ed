//! loka runtime.
