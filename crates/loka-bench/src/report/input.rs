//! Reading result files: JSON lines of [`Record`]s, with the command that wrote them.

use crate::record::{implied_exec, Record};
use crate::BenchError;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// The extra key `loka bench … --out FILE` adds to each line of FILE: the command that wrote it.
pub const COMMAND_KEY: &str = "command";

/// The record's key for the execution mode ([`Record::exec`]); a line without it gets
/// [`implied_exec`] of its runtime.
const EXEC_KEY: &str = "exec";

/// Which kind of run produced a record; decides the report section it feeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// `loka bench run`: one configuration.
    Run,
    /// `loka bench compare`: loka and the peers side by side.
    Compare,
    /// `loka bench scale`: a sweep over worker counts.
    Scale,
    /// `loka bench policies`: every policy and engine.
    Policies,
}

impl Kind {
    /// The kind named by a command line such as `loka bench compare all --repeat 3`.
    pub fn from_command(command: &str) -> Option<Kind> {
        let mut words = command.split_whitespace().skip_while(|w| *w != "bench");
        words.next()?;
        match words.next()? {
            "run" => Some(Kind::Run),
            "compare" => Some(Kind::Compare),
            "scale" => Some(Kind::Scale),
            "policies" => Some(Kind::Policies),
            _ => None,
        }
    }
}

/// One record read from a results file.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The record.
    pub record: Record,
    /// The file it came from.
    pub file: PathBuf,
    /// Its 1-based line number.
    pub line: usize,
    /// The command that wrote it, when the line says so ([`COMMAND_KEY`]).
    pub command: Option<String>,
    /// The kind of run: from the command, or inferred from the file's contents.
    pub kind: Kind,
}

/// A line that is not a valid record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    /// The file.
    pub file: PathBuf,
    /// The 1-based line number.
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.message)
    }
}

/// Everything read from the input files.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// The valid records, in file and line order (less the stopped runs).
    pub entries: Vec<Entry>,
    /// The records of peer runs `loka bench compare --peer-cap` stopped before their result
    /// ([`Record::stopped_after`]): no measurement, kept apart so that no median takes their
    /// zeros; the runtimes section counts them as slower than every finished run.
    pub stopped: Vec<Entry>,
    /// The lines that were not valid records.
    pub errors: Vec<LineError>,
    /// Each input file with its number of valid records.
    pub files: Vec<(PathBuf, usize)>,
}

/// One record as a JSON line, with the command that produced it under [`COMMAND_KEY`].
pub fn record_line(record: &Record, command: Option<&str>) -> String {
    let mut value = serde_json::to_value(record).unwrap_or_default();
    if let (Some(command), serde_json::Value::Object(map)) = (command, &mut value) {
        map.insert(COMMAND_KEY.to_owned(), command.into());
    }
    value.to_string()
}

/// Reads the result files. A file that cannot be read is an error; a line that is not a
/// record is collected in [`Loaded::errors`] and the other lines are still used; the records of
/// stopped runs go to [`Loaded::stopped`].
pub fn load(paths: &[PathBuf]) -> Result<Loaded, BenchError> {
    let mut loaded = Loaded::default();
    for path in paths {
        let text = std::fs::read_to_string(path).map_err(|e| BenchError::Results {
            path: path.display().to_string(),
            message: format!("cannot read: {e}"),
        })?;
        let (entries, errors) = parse(&text, path);
        loaded.files.push((path.clone(), entries.len()));
        let (stopped, entries): (Vec<Entry>, Vec<Entry>) = entries
            .into_iter()
            .partition(|e| e.record.stopped_after.is_some());
        loaded.entries.extend(entries);
        loaded.stopped.extend(stopped);
        loaded.errors.extend(errors);
    }
    Ok(loaded)
}

/// Parses the JSON lines of one file (named `file` in entries and errors). Blank lines are
/// skipped.
pub fn parse(text: &str, file: &Path) -> (Vec<Entry>, Vec<LineError>) {
    let mut entries = Vec::new();
    let mut errors = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let raw = raw.trim();
        if raw.is_empty() {
            continue;
        }
        let error = |message: String| LineError {
            file: file.to_owned(),
            line,
            message,
        };
        let value: serde_json::Value = match serde_json::from_str(raw) {
            Ok(value) => value,
            Err(e) => {
                errors.push(error(format!("not valid JSON: {e}")));
                continue;
            }
        };
        let command = value
            .get(COMMAND_KEY)
            .and_then(|c| c.as_str())
            .map(str::to_owned);
        // Lines written before the execution mode was recorded: what they ran under.
        let mut value = value;
        if let serde_json::Value::Object(map) = &mut value {
            if !map.contains_key(EXEC_KEY) {
                let runtime = map.get("runtime").and_then(|r| r.as_str()).unwrap_or("");
                map.insert(EXEC_KEY.to_owned(), implied_exec(runtime).into());
            }
        }
        match serde_json::from_value::<Record>(value) {
            Ok(record) if !record.msgs_per_sec.is_finite() || !record.seconds.is_finite() => errors
                .push(error(
                    "msgs_per_sec or seconds is not a finite number".into(),
                )),
            Ok(record) => {
                let kind = command.as_deref().and_then(Kind::from_command);
                entries.push((record, line, command, kind));
            }
            Err(e) => errors.push(error(format!("not a result record: {e}"))),
        }
    }
    let inferred = infer_kind(entries.iter().map(|(record, ..)| record));
    let entries = entries
        .into_iter()
        .map(|(record, line, command, kind)| Entry {
            record,
            file: file.to_owned(),
            line,
            command,
            kind: kind.unwrap_or(inferred),
        })
        .collect();
    (entries, errors)
}

/// The kind of run a file without commands holds, from its contents: several runtimes is a
/// comparison, several worker counts for one configuration a sweep, several policies, engines or
/// execution modes a policy comparison.
fn infer_kind<'a>(records: impl Iterator<Item = &'a Record> + Clone) -> Kind {
    let runtimes: HashSet<&str> = records.clone().map(|r| r.runtime.as_str()).collect();
    if runtimes.len() > 1 || runtimes.iter().any(|r| *r != "loka") {
        return Kind::Compare;
    }
    let mut workers: HashMap<(&str, &str, &str, &str, &str), HashSet<usize>> = HashMap::new();
    let mut policies: HashSet<(&str, &str, &str)> = HashSet::new();
    for r in records {
        workers
            .entry((&r.bench, &r.engine, &r.policy, &r.exec, &r.size))
            .or_default()
            .insert(r.workers);
        policies.insert((&r.engine, &r.policy, &r.exec));
    }
    if workers.values().any(|w| w.len() > 1) {
        Kind::Scale
    } else if policies.len() > 1 {
        Kind::Policies
    } else {
        Kind::Run
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(runtime: &str, workers: usize, policy: &str) -> Record {
        Record {
            runtime: runtime.into(),
            bench: "pingpong".into(),
            engine: "actor-centric".into(),
            policy: policy.into(),
            exec: "all-task".into(),
            topology: "host".into(),
            workers,
            size: "quick".into(),
            messages: 10,
            seconds: 1.0,
            msgs_per_sec: 10.0,
            verified: true,
            telemetry: serde_json::json!({}),
            repeat: 0,
            virtual_seconds: None,
            host_seconds: None,
            stopped_after: None,
        }
    }

    #[test]
    fn commands_name_the_kind() {
        assert_eq!(
            Kind::from_command("loka bench compare all --repeat 3"),
            Some(Kind::Compare)
        );
        assert_eq!(
            Kind::from_command("target/release/loka bench scale fib"),
            Some(Kind::Scale)
        );
        assert_eq!(Kind::from_command("loka bench run all"), Some(Kind::Run));
        assert_eq!(
            Kind::from_command("loka bench policies all"),
            Some(Kind::Policies)
        );
        assert_eq!(Kind::from_command("loka topo"), None);
    }

    #[test]
    fn record_lines_round_trip_with_their_command() {
        let r = record("loka", 2, "cls");
        let line = record_line(&r, Some("loka bench run pingpong"));
        let (entries, errors) = parse(&line, Path::new("x.jsonl"));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(entries[0].record, r);
        assert_eq!(
            entries[0].command.as_deref(),
            Some("loka bench run pingpong")
        );
        assert_eq!(entries[0].kind, Kind::Run);
    }

    #[test]
    fn files_without_commands_get_an_inferred_kind() {
        let lines = |records: &[Record]| {
            records
                .iter()
                .map(|r| record_line(r, None))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let kind = |records: &[Record]| parse(&lines(records), Path::new("f")).0[0].kind;
        assert_eq!(kind(&[record("loka", 2, "cls")]), Kind::Run);
        assert_eq!(
            kind(&[record("loka", 2, "cls"), record("caf", 2, "default")]),
            Kind::Compare
        );
        assert_eq!(
            kind(&[record("loka", 1, "cls"), record("loka", 2, "cls")]),
            Kind::Scale
        );
        assert_eq!(
            kind(&[record("loka", 2, "cls"), record("loka", 2, "other")]),
            Kind::Policies
        );
    }

    #[test]
    fn lines_without_an_exec_mode_read_as_what_ran_before_modes_existed() {
        let without_exec = |r: &Record| {
            let mut value = serde_json::to_value(r).unwrap();
            value.as_object_mut().unwrap().remove("exec");
            value.to_string()
        };
        let mut peer = record("caf", 2, "default");
        peer.exec = "default".into();
        let text = [record("loka", 2, "cls"), peer]
            .iter()
            .map(without_exec)
            .collect::<Vec<_>>()
            .join("\n");
        assert!(!text.contains("exec"));
        let (entries, errors) = parse(&text, Path::new("old.jsonl"));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(entries[0].record.exec, "all-task");
        assert_eq!(entries[1].record.exec, "default");
        // A line that has the key keeps it.
        let mut auto = record("loka", 2, "auto");
        auto.exec = "auto".into();
        let (entries, _) = parse(&record_line(&auto, None), Path::new("new.jsonl"));
        assert_eq!(entries[0].record.exec, "auto");
        // The CLI's fixture, written before the key existed, reads whole.
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../loka-cli/tests/fixtures/tiny.jsonl");
        let text = std::fs::read_to_string(&fixture).unwrap();
        assert!(!text.contains("\"exec\""), "the fixture predates the key");
        let (entries, errors) = parse(&text, &fixture);
        assert!(errors.is_empty() && !entries.is_empty(), "{errors:?}");
        for e in &entries {
            let expected = if e.record.runtime == "loka" {
                "all-task"
            } else {
                "default"
            };
            assert_eq!(e.record.exec, expected, "{:?}", e.record);
        }
    }

    #[test]
    fn stopped_runs_are_kept_apart() {
        let mut stopped = record("actix", 2, "default");
        stopped.stopped_after = Some(20.0);
        stopped.msgs_per_sec = 0.0;
        let text = [record("actix", 2, "default"), stopped]
            .iter()
            .map(|r| record_line(r, Some("loka bench compare pingpong --peer-cap 20")))
            .collect::<Vec<_>>()
            .join("\n");
        let path = std::env::temp_dir().join(format!("loka-input-{}.jsonl", std::process::id()));
        std::fs::write(&path, text).unwrap();
        let loaded = load(std::slice::from_ref(&path)).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(loaded.entries.len(), 1);
        assert_eq!(loaded.stopped.len(), 1);
        assert_eq!(loaded.stopped[0].record.stopped_after, Some(20.0));
        assert_eq!(loaded.stopped[0].kind, Kind::Compare);
        assert_eq!(loaded.files[0].1, 2);
    }

    #[test]
    fn bad_lines_are_named_and_the_rest_is_kept() {
        let good = record_line(&record("loka", 2, "cls"), None);
        let text = format!("{good}\n{{\"bench\": \n\n{good}\n{{\"bench\":\"x\"}}\n");
        let (entries, errors) = parse(&text, Path::new("r.jsonl"));
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[1].line, 4);
        assert_eq!(errors.len(), 2);
        assert!(errors[0]
            .to_string()
            .starts_with("r.jsonl:2: not valid JSON"));
        assert!(
            errors[1]
                .to_string()
                .starts_with("r.jsonl:5: not a result record"),
            "{}",
            errors[1]
        );
    }
}
