//! The topology argument: `host`, `preset:NAME`, `synthetic:DESC`, `xml:FILE`.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use crate::error::TopologyError;

/// Where a [`Topology`](crate::Topology) comes from. One syntax everywhere
/// (`loka topo --topology`, `loka bench run --topology`, the config file):
///
/// | string | meaning |
/// |---|---|
/// | `host` (default) | the machine we run on, discovered by hwloc; workers are pinned |
/// | `preset:NAME` | a machine from the research works (`docs/references.md`) shipped with loka (see [`presets`](crate::presets)) |
/// | `synthetic:DESC` | an hwloc synthetic description, e.g. `synthetic:package:2 numa:1 core:4 pu:1`, optionally followed by `;distances=ROWS` (rows separated by `/`, entries by spaces or commas) or `;distances=@FILE` |
/// | `xml:FILE` | an hwloc XML export (`lstopo foo.xml`, `hwloc-gather-topology`), distances included |
///
/// `Display` writes the same string back, so `s.parse::<TopologySpec>()?.to_string() == s`
/// for every accepted `s` (after trimming surrounding whitespace).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum TopologySpec {
    /// The real machine, through hwloc.
    #[default]
    Host,
    /// A named preset (see [`presets::names`](crate::presets::names)).
    Preset(String),
    /// An hwloc synthetic description, optionally with `;distances=…`.
    Synthetic(String),
    /// An hwloc XML file.
    Xml(PathBuf),
}

impl TopologySpec {
    /// Whether this spec names the real machine (the only source whose workers are pinned).
    pub fn is_host(&self) -> bool {
        matches!(self, TopologySpec::Host)
    }
}

impl FromStr for TopologySpec {
    type Err = TopologyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let spec = s.trim();
        let bad = |reason: &str| TopologyError::BadSpec {
            spec: s.to_owned(),
            reason: reason.to_owned(),
        };
        if spec.is_empty() {
            return Err(bad(
                "empty (expected `host`, `preset:NAME`, `synthetic:DESC` or `xml:FILE`)",
            ));
        }
        if spec == "host" {
            return Ok(TopologySpec::Host);
        }
        let Some((kind, rest)) = spec.split_once(':') else {
            return Err(bad(
                "expected `host`, `preset:NAME`, `synthetic:DESC` or `xml:FILE`",
            ));
        };
        let rest = rest.trim();
        match kind {
            "preset" => {
                if rest.is_empty() {
                    Err(bad("`preset:` needs a name"))
                } else {
                    Ok(TopologySpec::Preset(rest.to_owned()))
                }
            }
            "synthetic" => {
                if rest.is_empty() {
                    Err(bad("`synthetic:` needs an hwloc synthetic description"))
                } else {
                    Ok(TopologySpec::Synthetic(rest.to_owned()))
                }
            }
            "xml" => {
                if rest.is_empty() {
                    Err(bad("`xml:` needs a file name"))
                } else {
                    Ok(TopologySpec::Xml(PathBuf::from(rest)))
                }
            }
            other => Err(bad(&format!(
                "unknown source `{other}` (expected `host`, `preset:NAME`, `synthetic:DESC` or `xml:FILE`)"
            ))),
        }
    }
}

impl fmt::Display for TopologySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TopologySpec::Host => f.write_str("host"),
            TopologySpec::Preset(name) => write!(f, "preset:{name}"),
            TopologySpec::Synthetic(desc) => write!(f, "synthetic:{desc}"),
            TopologySpec::Xml(path) => write!(f, "xml:{}", path.display()),
        }
    }
}

impl serde::Serialize for TopologySpec {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for TopologySpec {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Where the NUMA distances of a synthetic spec come from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum InlineDistances {
    /// Rows written in the spec, `/`-separated.
    Rows(String),
    /// A matrix file.
    File(PathBuf),
}

/// Splits `DESC[;distances=...]` into the hwloc description and the distance option.
pub(crate) fn split_synthetic(
    full: &str,
) -> Result<(String, Option<InlineDistances>), TopologyError> {
    let mut parts = full.split(';');
    let desc = parts.next().unwrap_or("").trim().to_owned();
    let mut distances = None;
    for opt in parts {
        let opt = opt.trim();
        if opt.is_empty() {
            continue;
        }
        let Some((key, value)) = opt.split_once('=') else {
            return Err(TopologyError::BadSpec {
                spec: format!("synthetic:{full}"),
                reason: format!("option `{opt}` is not of the form `distances=...`"),
            });
        };
        match key.trim() {
            "distances" | "dist" => {
                let value = value.trim();
                distances = Some(match value.strip_prefix('@') {
                    Some(path) => InlineDistances::File(PathBuf::from(path.trim())),
                    None => InlineDistances::Rows(value.to_owned()),
                });
            }
            other => {
                return Err(TopologyError::BadSpec {
                    spec: format!("synthetic:{full}"),
                    reason: format!("unknown option `{other}` (only `distances=` is known)"),
                })
            }
        }
    }
    Ok((desc, distances))
}

/// The PU count an hwloc synthetic description asks for: the product of its levels' arities
/// (`package:2 core:4 pu:2` → 16), attributes in parentheses and memory children in brackets
/// left out; saturated at `usize::MAX`. `None` where a level's arity is not a plain number (hwloc
/// judges the description then). Lets [`Topology::load`](crate::Topology::load) refuse a machine
/// too large before hwloc spends minutes and gigabytes building it.
pub(crate) fn synthetic_pus(desc: &str) -> Option<usize> {
    let mut levels = String::with_capacity(desc.len());
    let mut depth = 0usize;
    for c in desc.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.checked_sub(1)?,
            _ if depth == 0 => levels.push(c),
            _ => {}
        }
    }
    let mut pus: usize = 1;
    for level in levels.split_whitespace() {
        let arity = level.rsplit(':').next()?;
        pus = pus.saturating_mul(arity.parse().ok()?);
    }
    Some(pus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for s in [
            "host",
            "preset:opteron6376",
            "synthetic:package:2 core:2 pu:1",
            "synthetic:package:4 numa:1 core:2 pu:1;distances=0 1 2 1/1 0 1 2/2 1 0 1/1 2 1 0",
            "xml:/tmp/machine.xml",
        ] {
            let spec: TopologySpec = s.parse().unwrap();
            assert_eq!(spec.to_string(), s);
            assert_eq!(spec.to_string().parse::<TopologySpec>().unwrap(), spec);
        }
        assert_eq!(TopologySpec::default(), TopologySpec::Host);
        assert_eq!(
            "  preset:xeon-x7560 ".parse::<TopologySpec>().unwrap(),
            TopologySpec::Preset("xeon-x7560".into())
        );
    }

    #[test]
    fn rejects_bad_specs() {
        for s in ["", "hots", "preset:", "synthetic:", "xml:", "numa:2", "  "] {
            let err = s.parse::<TopologySpec>().unwrap_err();
            assert!(matches!(err, TopologyError::BadSpec { .. }), "{s}: {err}");
            assert!(err.to_string().contains(&format!("`{s}`")), "{err}");
        }
    }

    #[test]
    fn counts_synthetic_pus() {
        for (desc, pus) in [
            ("pu:4", Some(4)),
            ("package:2 numa:1 core:4 pu:2", Some(16)),
            ("Package:2 L3Cache:2(size=8MB) Core:3 PU:2", Some(24)),
            ("pack:2 [numa(memory=1GB)] core:2 pu:1", Some(4)),
            ("2 3 4", Some(24)),
            ("pack:1000 pu:1000", Some(1_000_000)),
            (
                "pack:100000 numa:100000 core:100000 pu:100000",
                Some(usize::MAX),
            ),
            ("package:two pu:1", None),
            ("pu:2)", None),
        ] {
            assert_eq!(synthetic_pus(desc), pus, "{desc}");
        }
    }

    #[test]
    fn splits_synthetic_options() {
        let (d, o) = split_synthetic("pu:2").unwrap();
        assert_eq!((d.as_str(), o), ("pu:2", None));
        let (d, o) = split_synthetic("numa:2 pu:1; distances=10 20/20 10").unwrap();
        assert_eq!(d, "numa:2 pu:1");
        assert_eq!(o, Some(InlineDistances::Rows("10 20/20 10".into())));
        let (_, o) = split_synthetic("numa:2 pu:1;distances=@/x/d.txt").unwrap();
        assert_eq!(o, Some(InlineDistances::File("/x/d.txt".into())));
        assert!(split_synthetic("pu:2;foo=1").is_err());
        assert!(split_synthetic("pu:2;foo").is_err());
    }
}
