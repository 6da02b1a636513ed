//! The one error type of the crate.

use std::path::PathBuf;

/// Everything that can go wrong while loading a topology, reading a cost matrix,
/// building a worker layout or pinning a thread.
///
/// Every variant names the offending input: the topology spec string, the file
/// path, the line and column of a matrix entry, or the value that was rejected.
/// Its message is complete in itself (an I/O failure's cause included), and no
/// variant repeats that cause as its [`source`](std::error::Error::source): a
/// printer that walks the chain (`anyhow`'s `{:#}`) shows each cause once.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TopologyError {
    /// A topology spec string is not one of `host`, `preset:NAME`,
    /// `synthetic:DESC`, `xml:FILE`.
    #[error("invalid topology spec `{spec}`: {reason}")]
    BadSpec {
        /// The spec string as given.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `preset:NAME` names no shipped preset.
    #[error("unknown preset `{name}` (known presets: {known})")]
    UnknownPreset {
        /// The name as given.
        name: String,
        /// The names of the shipped presets, comma separated.
        known: String,
    },
    /// A shipped preset data file is broken (a bug in this crate, caught by its tests).
    #[error("preset `{name}` is broken: {reason}")]
    BrokenPreset {
        /// The preset's name.
        name: String,
        /// What is wrong with its data file.
        reason: String,
    },
    /// hwloc rejected a synthetic description.
    #[error("invalid synthetic topology `{desc}`: {reason}")]
    Synthetic {
        /// The synthetic description as given.
        desc: String,
        /// What hwloc (or loka) rejected.
        reason: String,
    },
    /// An hwloc XML file could not be read or parsed.
    #[error("cannot load hwloc XML file `{}`: {reason}", path.display())]
    Xml {
        /// The XML file.
        path: PathBuf,
        /// Why it failed.
        reason: String,
    },
    /// hwloc failed to discover the host machine.
    #[error("cannot discover the host topology through hwloc: {reason}")]
    Host {
        /// Why it failed.
        reason: String,
    },
    /// A NUMA distance matrix (synthetic `;distances=` option, distance file,
    /// or the matrix hwloc reported) is unusable.
    #[error("invalid NUMA distances in {input}: {reason}")]
    BadDistances {
        /// The input that held the matrix (spec string or file).
        input: String,
        /// What is wrong, with row/line and column where it applies.
        reason: String,
    },
    /// A matrix file (cost or distances) could not be read.
    #[error("cannot read `{}`: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error (in the message; not the error's `source`, which would
        /// print it twice).
        error: std::io::Error,
    },
    /// A matrix entry is not a usable number, or the matrix is malformed at a
    /// given place. `line` and `column` are 1-based; `column` counts entries
    /// in the row (the first number on the line is column 1).
    #[error("{input}: line {line}, column {column}: {reason}")]
    Matrix {
        /// The file (or other input) holding the matrix.
        input: String,
        /// 1-based line in the input.
        line: usize,
        /// 1-based entry number on that line.
        column: usize,
        /// What is wrong.
        reason: String,
    },
    /// A matrix has no entries, or is not square.
    #[error("{input}: {reason}")]
    MatrixShape {
        /// The file (or other input) holding the matrix.
        input: String,
        /// What is wrong.
        reason: String,
    },
    /// A cost matrix does not have one row and column per PU of the topology.
    #[error("cost matrix {input} is {size}×{size} but topology `{topology}` has {pus} PUs")]
    CostSize {
        /// The cost matrix's source.
        input: String,
        /// Its size.
        size: usize,
        /// The topology's spec string.
        topology: String,
        /// The topology's PU count.
        pus: usize,
    },
    /// The topology has more PUs than loka supports ([`Topology::MAX_PUS`]).
    ///
    /// [`Topology::MAX_PUS`]: crate::Topology::MAX_PUS
    #[error("topology `{topology}` has {pus} PUs; at most {max} are supported")]
    TooManyPus {
        /// The topology's spec string.
        topology: String,
        /// Its PU count (saturated at `usize::MAX` for a synthetic description
        /// whose arities multiply to more).
        pus: usize,
        /// The limit, [`Topology::MAX_PUS`](crate::Topology::MAX_PUS).
        max: usize,
    },
    /// More workers were requested than the topology has PUs.
    #[error("{workers} workers requested but topology `{topology}` has only {pus} PUs")]
    TooManyWorkers {
        /// The requested worker count.
        workers: usize,
        /// The topology's PU count.
        pus: usize,
        /// The topology's spec string.
        topology: String,
    },
    /// A level name (`--group-level`, `--place-level`, …) is unknown.
    #[error("unknown {what} `{input}` (expected one of: {expected})")]
    BadLevel {
        /// Which option it was for.
        what: &'static str,
        /// The name as given.
        input: String,
        /// The accepted names.
        expected: &'static str,
    },
    /// A PU index is out of range.
    #[error("PU {pu} does not exist in topology `{topology}` ({pus} PUs)")]
    NoSuchPu {
        /// The PU index (logical order).
        pu: usize,
        /// The topology's PU count.
        pus: usize,
        /// The topology's spec string.
        topology: String,
    },
    /// hwloc could not bind the calling thread.
    #[error("cannot pin the current thread to PU {pu} (OS index {os_index}): {reason}")]
    Pin {
        /// The PU index (logical order).
        pu: usize,
        /// The PU's OS index.
        os_index: usize,
        /// hwloc's error.
        reason: String,
    },
    /// Exporting a topology as hwloc XML failed.
    #[error("cannot export topology `{topology}` as hwloc XML: {reason}")]
    Export {
        /// The topology's spec string.
        topology: String,
        /// Why it failed.
        reason: String,
    },
}
