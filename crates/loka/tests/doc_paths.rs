//! Every repository path the documentation cites exists, and the decision index is complete.
//!
//! Scanned: `README.md`, `docs/**/*.md` and the comments of `crates/**/*.rs`. Recognised: markdown
//! links (`[text](path#anchor)`, resolved from the citing file's folder; URLs and in-page anchors
//! are skipped), and repository paths written out, in backticks or in prose (`docs/...`,
//! `crates/...`, `examples/...`, `peers/...`; in Rust files only `docs/...`). An anchor after a
//! path is ignored. Every `docs/decisions/NNNN-*.md` must be a row of the index table in
//! `docs/decisions/README.md`, and every row must point at an existing file.

use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Files under `dir` (relative to the root) whose name ends with `ext`, skipping build output.
fn walk(root: &Path, dir: &str, ext: &str, out: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(root.join(dir)) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = format!("{dir}/{name}");
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if name != "target" && !name.starts_with('.') {
                walk(root, &rel, ext, out);
            }
        } else if name.ends_with(ext) {
            out.push(rel);
        }
    }
}

/// `a/b/../c` -> `a/c`; `./x` -> `x`. `None` when the path climbs above the root.
fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')
}

/// Drops an anchor and the punctuation a sentence puts after a path.
fn clean(path: &str) -> &str {
    let path = path.split('#').next().unwrap_or("");
    path.trim_end_matches(['.', ',', ':', ';'])
}

/// Placeholders and patterns (`crates/*/src`, `docs/decisions/NNNN-...md`) are not paths, and
/// build outputs (`peers/rust/target/release/...`, `peers/caf/build/...`) exist only once built.
fn is_pattern(path: &str) -> bool {
    path.split('/').any(|c| c == "target" || c == "build")
        || path.contains("...")
        || path.contains('*')
        || path.contains("NNNN")
        || path.contains('<')
        || path.contains('{')
}

/// Repository paths written out in `line`, starting with one of `prefixes`.
fn written_paths<'a>(line: &'a str, prefixes: &[&str]) -> Vec<&'a str> {
    let mut found = Vec::new();
    let bytes = line.as_bytes();
    for prefix in prefixes {
        let mut from = 0;
        while let Some(at) = line[from..].find(prefix) {
            let start = from + at;
            from = start + prefix.len();
            // Only where a path starts: not inside a longer path or word (`target/release/examples`).
            if start > 0 && is_path_char(bytes[start - 1] as char) {
                continue;
            }
            let end = line[start..]
                .find(|c: char| !is_path_char(c))
                .map_or(line.len(), |e| start + e);
            let path = clean(&line[start..end]);
            // A `#` directly after the path is an anchor: the path ends before it.
            if path.len() > prefix.len() && !is_pattern(&line[start..end]) {
                found.push(path);
            }
        }
    }
    found
}

/// Targets of markdown links `[text](target)` in `line`.
fn link_targets(line: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = line[from..].find("](") {
        let start = from + at + 2;
        from = start;
        let Some(len) = line[start..].find(')') else {
            break;
        };
        let target = line[start..start + len]
            .split_whitespace()
            .next()
            .unwrap_or("");
        found.push(target);
    }
    found
}

fn exists(root: &Path, path: &str) -> bool {
    if root.join(path).exists() {
        return true;
    }
    // `examples/x.rs` names a crate's example.
    if let Some(rest) = path.strip_prefix("examples/") {
        let mut crates = Vec::new();
        if let Ok(entries) = fs::read_dir(root.join("crates")) {
            crates.extend(entries.flatten().map(|e| e.path()));
        }
        return crates
            .iter()
            .any(|c| c.join("examples").join(rest).exists());
    }
    false
}

/// Every missing path cited by `file`, as `file:line: ...`.
fn check_file(root: &Path, file: &str, missing: &mut Vec<String>) {
    let text = fs::read_to_string(root.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    let markdown = file.ends_with(".md");
    let dir = file.rsplit_once('/').map_or("", |(d, _)| d);
    for (n, line) in text.lines().enumerate() {
        let mut report = |path: &str, how: &str| {
            missing.push(format!("{file}:{}: {how} `{path}` does not exist", n + 1));
        };
        if markdown {
            for target in link_targets(line) {
                if target.is_empty()
                    || target.starts_with('#')
                    || target.contains("://")
                    || target.starts_with("mailto:")
                {
                    continue;
                }
                let path = clean(target);
                if path.is_empty() || is_pattern(path) {
                    continue;
                }
                match normalize(&format!("{dir}/{path}")) {
                    Some(p) if exists(root, &p) => {}
                    _ => report(target, "link"),
                }
            }
        } else {
            // Rust: only the comments cite documentation.
            let trimmed = line.trim_start();
            if !(trimmed.starts_with("//") || line.contains(" // ")) {
                continue;
            }
        }
        let prefixes: &[&str] = if markdown {
            &["docs/", "crates/", "examples/", "peers/"]
        } else {
            &["docs/"]
        };
        for path in written_paths(line, prefixes) {
            // Inside a markdown link the target was checked above, relative to the file.
            if markdown && line.contains(&format!("]({path}")) {
                continue;
            }
            if !exists(root, path) {
                report(path, "path");
            }
        }
    }
}

#[test]
fn every_path_the_docs_cite_exists() {
    let root = root();
    let mut files = vec!["README.md".to_owned()];
    walk(&root, "docs", ".md", &mut files);
    walk(&root, "crates", ".rs", &mut files);
    assert!(
        files.len() > 50,
        "found only {} files under {}",
        files.len(),
        root.display()
    );
    let mut missing = Vec::new();
    for file in &files {
        check_file(&root, file, &mut missing);
    }
    assert!(
        missing.is_empty(),
        "{} cited paths do not exist:\n{}",
        missing.len(),
        missing.join("\n")
    );
}

#[test]
fn every_decision_is_in_the_index_and_every_row_has_its_file() {
    let root = root();
    let index = fs::read_to_string(root.join("docs/decisions/README.md")).unwrap();
    let mut listed = Vec::new();
    let mut problems = Vec::new();
    for (n, line) in index.lines().enumerate() {
        // | 0049 | [title](0049-stall-guard.md) | status | summary |
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 || cells[1].len() != 4 || !cells[1].bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Some(file) = link_targets(cells[2]).first().copied() else {
            problems.push(format!(
                "docs/decisions/README.md:{}: row without a link",
                n + 1
            ));
            continue;
        };
        if !file.starts_with(cells[1]) {
            problems.push(format!(
                "docs/decisions/README.md:{}: row {} links `{file}`",
                n + 1,
                cells[1]
            ));
        }
        if !root.join("docs/decisions").join(file).is_file() {
            problems.push(format!(
                "docs/decisions/README.md:{}: `{file}` does not exist",
                n + 1
            ));
        }
        listed.push(file.to_owned());
    }
    let mut files = Vec::new();
    walk(&root, "docs/decisions", ".md", &mut files);
    let mut decisions = 0;
    for file in files {
        let name = file.rsplit('/').next().unwrap();
        let numbered = name.len() > 5
            && name.as_bytes()[4] == b'-'
            && name.bytes().take(4).all(|b| b.is_ascii_digit());
        if !numbered {
            continue;
        }
        decisions += 1;
        if !listed.iter().any(|l| l == name) {
            problems.push(format!(
                "{file} is not in the index of docs/decisions/README.md"
            ));
        }
    }
    assert!(decisions > 0, "no decision files found");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
