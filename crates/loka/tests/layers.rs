//! The layer check: no module of `crates/loka/src` names a module of a higher layer, and no two
//! modules of one layer name each other. Together these rule out every import circle between
//! modules and every upward arrow.
//!
//! The order is written once, in [`LAYERS`] below; `docs/internals/architecture.md` explains it.
//! The check reads the sources as text: every `crate::…` and `super::…` path in code (comments,
//! doc comments and string literals are skipped) is resolved to the module it names, through
//! the crate root's re-exports where it names one (`crate::System` is `system`), and the
//! module is looked up in the table by its longest listed prefix. Test-only code (files named
//! `tests.rs` or `*_tests.rs`, and everything after a `#[cfg(test)]` or `#[cfg(all(test, …))]`
//! module declaration that opens a block) may name anything.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The layers, lowest first. A module may name modules of lower layers and its own entry (and
/// that entry's submodules); entries listed together are siblings that know nothing of each
/// other. A module is placed by the longest entry that is a prefix of its path.
const LAYERS: &[&[&str]] = &[
    // Primitives: atomics and cells that loom can swap.
    &["sync"],
    // Pure rules: scheduling policies and execution policies.
    &["policy", "exec_policy"],
    // The catalogue of engines (their names, what each can run, how many timer shards each
    // keeps) and what each reports; the adaptive `auto`'s shared state (which policy runs now),
    // built on the policies alone.
    &["engine::kind", "engine::stats", "engine::adapt"],
    // `auto`'s count of working workers, run by the adaptive `auto`'s meter.
    &["engine::gather"],
    // Settings and measurements, no behaviour.
    &["config", "telemetry", "mailbox"],
    // The machine a system runs on (topology, pinning).
    &["machine"],
    // What every engine shares: actor cells, tasks, timers, the engine boundary.
    &["runtime"],
    // Pieces several engines share (no engine is named in them): an actor's placement state,
    // parked workers, balancing rounds, starting worker threads; then the routing and stealing
    // decisions built on placements.
    &[
        "engine::placement",
        "engine::sleepers",
        "engine::balance_round",
        "engine::workers",
    ],
    &["engine::choices"],
    // The two sides of the boundary: the actor API, and the engines behind the boundary.
    &[
        "actor",
        "engine::actor_centric",
        "engine::message_centric",
        "engine::sim",
    ],
    // Built on actors.
    &["supervisor"],
    // A running engine, whichever it is: the one place that names every engine.
    &["engine::dispatch"],
    // The system: starting one, spawning, names, supervisors, introspection, shutdown.
    &["system"],
    // The simulation's front door (seed searches over whole systems); the seam for actors on
    // other nodes (feature `remote`).
    &["sim", "remote"],
    // The crate root only declares modules and re-exports.
    &["", "engine"],
];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The module path of a source file: `engine/sim/mod.rs` is `engine::sim`, `lib.rs` is ``.
fn module_of(file: &Path) -> String {
    let rel = file.strip_prefix(src_dir()).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_owned());
    }
    parts.join("::")
}

/// The entry a module belongs to, and its layer: the longest listed prefix.
fn place(module: &str) -> Option<(usize, &'static str)> {
    let mut best: Option<(usize, &'static str)> = None;
    for (layer, entries) in LAYERS.iter().enumerate() {
        for &entry in entries.iter() {
            // The root layer's entries only declare modules: they hold no submodule.
            let root = layer == LAYERS.len() - 1;
            let fits = module == entry
                || !root
                    && module
                        .strip_prefix(entry)
                        .is_some_and(|rest| rest.starts_with("::"));
            if fits && best.is_none_or(|(_, b)| entry.len() > b.len()) {
                best = Some((layer, entry));
            }
        }
    }
    best
}

/// The code of a file with comments, string and char literals blanked, and test-only code
/// removed.
fn code_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            i += end;
        } else if rest.starts_with("/*") {
            let end = rest.find("*/").map_or(rest.len(), |e| e + 2);
            i += end;
        } else if rest.starts_with("r#\"") || rest.starts_with("r\"") {
            let hashes = rest[1..].chars().take_while(|&c| c == '#').count();
            let close = format!("\"{}", "#".repeat(hashes));
            let body = 2 + hashes;
            let end = rest[body..]
                .find(&close)
                .map_or(rest.len(), |e| body + e + close.len());
            out.push_str("\"\"");
            i += end;
        } else if bytes[i] == b'"' {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != b'"' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            i = j + 1;
        } else if bytes[i] == b'\''
            && (rest[1..].starts_with("\\") || rest[1..].chars().nth(1) == Some('\''))
        {
            // A char literal (a lifetime has no closing quote after one character).
            let end = rest[1..].find('\'').map_or(rest.len(), |e| e + 2);
            let end = if rest[1..].starts_with("\\'") { 4 } else { end };
            out.push_str("' '");
            i += end;
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    // Test-only code: an inline test module runs to the end of the file by convention.
    for marker in ["#[cfg(test)]", "#[cfg(all(test"] {
        let mut from = 0;
        while let Some(at) = out[from..].find(marker) {
            let at = from + at;
            let after = &out[at..];
            let line_end = after.find('\n').unwrap_or(after.len());
            let next = after[line_end..].trim_start();
            if next.starts_with("mod ") && next.split('\n').next().unwrap_or("").contains('{') {
                out.truncate(at);
                break;
            }
            from = at + marker.len();
        }
    }
    out
}

/// The crate root's re-exports: name → the module path it comes from.
fn root_exports() -> BTreeMap<String, String> {
    let lib = code_of(&std::fs::read_to_string(src_dir().join("lib.rs")).unwrap());
    let mut map = BTreeMap::new();
    for item in lib.split(';') {
        let Some(at) = item.find("pub use ") else {
            continue;
        };
        let path = item[at + "pub use ".len()..].trim();
        let (prefix, names) = match path.find("::{") {
            Some(b) => (&path[..b], path[b + 3..].trim_end_matches('}').to_owned()),
            None => match path.rfind("::") {
                Some(b) => (&path[..b], path[b + 2..].to_owned()),
                None => continue,
            },
        };
        for name in names.split(',') {
            let name = name.trim();
            if !name.is_empty() {
                map.insert(name.to_owned(), prefix.to_owned());
            }
        }
    }
    map
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The leading identifiers of each path in `text` right after `prefix::` (a `{…}` group gives
/// one path per item).
fn paths_after(text: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let pat = format!("{prefix}::");
    let mut from = 0;
    while let Some(at) = text[from..].find(&pat) {
        let at = from + at;
        from = at + pat.len();
        if text[..at].chars().next_back().is_some_and(is_ident) {
            continue;
        }
        found.extend(path_items(&text[from..]));
    }
    found
}

/// The module segments at the start of `text`: `a::b::C` gives `[a, b, C]`; `{a::X, b}` gives
/// one path per item.
fn path_items(text: &str) -> Vec<Vec<String>> {
    let text = text.trim_start();
    if let Some(group) = text.strip_prefix('{') {
        let mut depth = 0;
        let mut items = Vec::new();
        let mut start = 0;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    items.push(&group[start..i]);
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(&group[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        return items.into_iter().flat_map(path_items).collect();
    }
    let mut segments = Vec::new();
    let mut rest = text;
    loop {
        let ident: String = rest.chars().take_while(|&c| is_ident(c)).collect();
        if ident.is_empty() {
            if rest.starts_with('{') && !segments.is_empty() {
                let inner = path_items(rest);
                return inner
                    .into_iter()
                    .map(|tail| segments.iter().cloned().chain(tail).collect())
                    .collect();
            }
            break;
        }
        rest = &rest[ident.len()..];
        segments.push(ident);
        match rest.strip_prefix("::") {
            Some(r) => rest = r,
            None => break,
        }
    }
    if segments.is_empty() {
        Vec::new()
    } else {
        vec![segments]
    }
}

/// Every source file, with its module path.
fn sources() -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    let mut stack = vec![src_dir()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let module = module_of(&path);
                files.push((path, module));
            }
        }
    }
    files.sort();
    files
}

/// The module a path names, as far as the module tree goes: the longest prefix of `segments`
/// that is a known module, or the re-exporting module for a root re-export.
fn resolve(
    segments: &[String],
    modules: &std::collections::BTreeSet<String>,
    exports: &BTreeMap<String, String>,
) -> Option<String> {
    let first = segments.first()?;
    let segments: Vec<String> = match exports.get(first) {
        Some(from) if !modules.contains(first) => from
            .split("::")
            .map(str::to_owned)
            .chain(segments[1..].iter().cloned())
            .collect(),
        _ => segments.to_vec(),
    };
    let mut best = None;
    for n in 1..=segments.len() {
        let candidate = segments[..n].join("::");
        if modules.contains(&candidate) {
            best = Some(candidate);
        }
    }
    best
}

/// Every arrow that breaks the layer order: `(file, line, from module, to module)`.
fn violations() -> Vec<String> {
    let files = sources();
    let modules: std::collections::BTreeSet<String> =
        files.iter().map(|(_, m)| m.clone()).collect();
    let exports = root_exports();
    let mut bad = Vec::new();
    for (path, module) in &files {
        let name = path.file_name().unwrap().to_string_lossy();
        if name == "tests.rs" || name.ends_with("_tests.rs") || module.is_empty() {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        let code = code_of(&text);
        let Some((from_layer, from_entry)) = place(module) else {
            bad.push(format!(
                "{}: module `{module}` is in no layer",
                path.display()
            ));
            continue;
        };
        let parent = |m: &str| {
            m.rsplit_once("::")
                .map_or(String::new(), |(p, _)| p.to_owned())
        };
        // `super` from a file `a/b.rs` (module a::b) is `a`; from `a/mod.rs` (module a) it is
        // the parent of `a`.
        let mut targets: Vec<(Vec<String>, String)> = paths_after(&code, "crate")
            .into_iter()
            .map(|s| (s, "crate".to_owned()))
            .collect();
        let mut base = parent(module);
        let mut prefix = "super".to_owned();
        loop {
            for segs in paths_after(&code, &prefix) {
                let full: Vec<String> = base
                    .split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .chain(segs)
                    .collect();
                targets.push((full, prefix.clone()));
            }
            if base.is_empty() {
                break;
            }
            base = parent(&base);
            prefix.push_str("::super");
        }
        for (segments, how) in targets {
            let Some(target) = resolve(&segments, &modules, &exports) else {
                continue;
            };
            let Some((to_layer, to_entry)) = place(&target) else {
                continue;
            };
            let ok = to_entry == from_entry || to_layer < from_layer;
            if !ok {
                let line = text
                    .lines()
                    .position(|l| {
                        let l = l.trim_start();
                        !l.starts_with("//") && l.contains(&format!("{how}::")) && {
                            let last = segments.last().unwrap();
                            l.contains(last.as_str())
                        }
                    })
                    .map_or(0, |n| n + 1);
                bad.push(format!(
                    "{}:{line}: `{module}` (layer {from_layer}, `{from_entry}`) names `{target}` \
                     (layer {to_layer}, `{to_entry}`) via `{how}::{}`",
                    path.strip_prefix(src_dir()).unwrap().display(),
                    segments.join("::"),
                ));
            }
        }
    }
    bad.sort();
    bad.dedup();
    bad
}

#[test]
fn no_module_names_a_higher_layer_or_a_sibling() {
    let bad = violations();
    assert!(
        bad.is_empty(),
        "{} arrow(s) break the layer order written in crates/loka/tests/layers.rs \
         (docs/internals/architecture.md):\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn every_module_has_a_layer() {
    for (path, module) in sources() {
        assert!(
            place(&module).is_some(),
            "{}: module `{module}` is in no layer",
            path.display()
        );
    }
}

#[test]
fn the_check_sees_an_upward_arrow() {
    // The parser itself, on a made-up file: a grouped import, a nested group, a `super` path.
    let code = code_of(
        "use crate::{actor::ActorRef, runtime::{cell::X, Shared}};\n// crate::system::System\n\
         fn f() { let s = \"crate::system\"; super::worker::go(); }\n#[cfg(test)]\nmod tests {\n\
         use crate::system::System;\n}\n",
    );
    let crate_paths = paths_after(&code, "crate");
    assert_eq!(
        crate_paths,
        vec![
            vec!["actor".to_owned(), "ActorRef".to_owned()],
            vec!["runtime".to_owned(), "cell".to_owned(), "X".to_owned()],
            vec!["runtime".to_owned(), "Shared".to_owned()],
        ]
    );
    assert_eq!(
        paths_after(&code, "super"),
        vec![vec!["worker".to_owned(), "go".to_owned()]]
    );
    assert_eq!(place("runtime::cell::watch"), Some((6, "runtime")));
    assert_eq!(place("engine::kind"), Some((2, "engine::kind")));
    assert_eq!(place("engine::sim::driver"), Some((9, "engine::sim")));
    assert_eq!(place("engine::brand_new"), None);
}
