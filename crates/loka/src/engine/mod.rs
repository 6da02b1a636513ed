//! Engines carry out scheduling decisions. One API, several engines (DESIGN principle 2).

pub(crate) mod actor_centric;
