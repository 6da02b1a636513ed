//! The machine model of loka (SPEC §2). Filled in by the topology issue.
