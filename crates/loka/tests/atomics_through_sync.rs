//! Every atomic of the library comes from `src/sync.rs`, so the loom models see it: a file under
//! `src/` other than `sync.rs` that names one of std's (or core's) atomic types fails this test,
//! unless the line, or the comment right above it, says why with `atomic outside sync.rs:
//! <reason>`.

use std::fs;
use std::path::{Path, PathBuf};

/// The comment that allows a std atomic where loom cannot stand in for it.
const ALLOW: &str = "atomic outside sync.rs:";

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text of the brace group that opens at `open` (`text[open] == '{'`), without the braces.
fn group(text: &str, open: usize) -> &str {
    let mut depth = 0usize;
    for (i, c) in text[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &text[open + 1..open + i];
                }
            }
            _ => {}
        }
    }
    &text[open + 1..]
}

/// Whether the path that continues with `rest` (what follows `std::sync::` or `core::sync::`)
/// names an atomic type: `atomic::AtomicX`, `atomic::{.., AtomicX, ..}`, `atomic::*`, the module
/// itself (`atomic`, `atomic as a`, through which any type can be named), or a group holding one
/// of these (`{atomic::AtomicX, Arc}`).
fn names_an_atomic(rest: &str) -> bool {
    if let Some(after) = rest.strip_prefix("atomic") {
        let after = after.trim_start();
        return match after.strip_prefix("::") {
            Some(path) => {
                let path = path.trim_start();
                path.starts_with("Atomic")
                    || path.starts_with('*')
                    || (path.starts_with('{') && group(path, 0).contains("Atomic"))
            }
            // The module itself: `atomic;`, `atomic as x`, `atomic,` or `atomic}` in a group.
            None => !after.starts_with(|c: char| c.is_alphanumeric() || c == '_'),
        };
    }
    if rest.starts_with('{') {
        let inner = group(rest, 0);
        return inner.match_indices("atomic").any(|(i, _)| {
            let before = inner[..i].chars().next_back();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
                && names_an_atomic(&inner[i..])
        });
    }
    false
}

/// `file:line` of every unallowed std or core atomic in `text`.
fn offences(name: &str, text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let line_of = |at: usize| text[..at].matches('\n').count();
    let mut found = Vec::new();
    for root in ["std::sync::", "core::sync::"] {
        for (at, _) in text.match_indices(root) {
            let line = line_of(at);
            if lines[line].trim_start().starts_with("//") {
                continue;
            }
            if !names_an_atomic(&text[at + root.len()..]) {
                continue;
            }
            // The line itself, or the comment right above it (a reason may take two lines).
            let allowed = lines[line].contains(ALLOW)
                || lines[..line]
                    .iter()
                    .rev()
                    .take_while(|l| l.trim_start().starts_with("//"))
                    .any(|l| l.contains(ALLOW));
            if !allowed {
                found.push(format!("{name}:{}: {}", line + 1, lines[line].trim()));
            }
        }
    }
    found
}

#[test]
fn every_atomic_comes_from_sync_rs() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(
        files.len() > 10,
        "found only {} files under src/",
        files.len()
    );
    let mut found = Vec::new();
    for path in &files {
        let name = path.strip_prefix(&src).unwrap().display().to_string();
        if name == "sync.rs" {
            continue;
        }
        let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {name}: {e}"));
        found.extend(offences(&name, &text));
    }
    assert!(
        found.is_empty(),
        "atomics not taken from crate::sync (use `crate::sync::AtomicX`, or say why loom cannot \
         stand in with `// {ALLOW} <reason>` on the line or the one before):\n{}",
        found.join("\n")
    );
}

/// The detector itself: each way of naming a std atomic is caught, `Ordering` is not, and the
/// allow comment works on the line and on the one before.
#[test]
fn the_check_sees_every_way_of_naming_a_std_atomic() {
    let caught = [
        "use std::sync::atomic::AtomicUsize;",
        "use std::sync::atomic::{AtomicBool, Ordering};",
        "use std::sync::atomic::{\n    AtomicU8,\n    Ordering,\n};",
        "use core::sync::atomic::AtomicU64;",
        "use std::sync::{atomic::AtomicBool, Arc};",
        "use std::sync::{atomic::{AtomicPtr, Ordering}, Arc};",
        "use std::sync::atomic;",
        "use std::sync::atomic::*;",
        "    x: std::sync::atomic::AtomicU32,",
    ];
    let caught_far = "// atomic outside sync.rs: a reason\n\nuse std::sync::atomic::AtomicU8;";
    assert_eq!(
        offences("f.rs", caught_far).len(),
        1,
        "a blank line ends the comment"
    );
    for text in caught {
        assert_eq!(offences("f.rs", text).len(), 1, "missed: {text}");
    }
    let fine = [
        "use std::sync::atomic::Ordering::Relaxed;",
        "use std::sync::atomic::{Ordering, Ordering::SeqCst};",
        "use std::sync::{Arc, Mutex};",
        "use crate::sync::AtomicUsize;",
        "// std::sync::atomic::AtomicUsize in a comment",
        "use std::sync::atomic::AtomicU8; // atomic outside sync.rs: a reason",
        "// atomic outside sync.rs: a reason\nuse std::sync::atomic::AtomicU8;",
        "// atomic outside sync.rs: a reason\n// on two lines\nuse std::sync::atomic::AtomicU8;",
        "fence(std::sync::atomic::Ordering::SeqCst);",
    ];
    for text in fine {
        assert!(offences("f.rs", text).is_empty(), "flagged: {text}");
    }
}
