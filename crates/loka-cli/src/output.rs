//! Where `loka bench` records go: stdout (a table line or JSON), the `--out` file, and a progress
//! bar on stderr.

use crate::args::CommonArgs;
use crate::progress;
use anyhow::{Context as _, Result};
use indicatif::ProgressBar;
use loka_bench::format::human;
use loka_bench::record::Record;
use loka_bench::report::record_line;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where records go: stdout (a table line or JSON) and the `--out` file, with a progress bar on
/// stderr.
pub struct Output {
    json: bool,
    echo: bool,
    file: Option<(PathBuf, std::fs::File)>,
    command: String,
    bar: ProgressBar,
}

impl Output {
    /// Opens (creates or appends to) the `--out` file. `echo`: print every record on stdout.
    pub fn open(args: &CommonArgs, echo: bool) -> Result<Output> {
        let file = match &args.out {
            Some(path) => Some((path.clone(), open_results(path)?)),
            None => None,
        };
        Ok(Output {
            json: args.json,
            echo,
            file,
            command: invocation(),
            bar: ProgressBar::hidden(),
        })
    }

    /// Whether stdout gets JSON.
    pub fn json(&self) -> bool {
        self.json
    }

    /// Starts the progress bar for `total` runs.
    pub fn start(&mut self, total: u64, prefix: &'static str) {
        self.bar = progress::bar(total, prefix);
    }

    /// Says what runs now, next to the bar.
    pub fn progress_message(&self, message: impl Into<String>) {
        self.bar.set_message(message.into());
    }

    /// Counts `n` steps that ran nothing (skipped or failed runs).
    pub fn advance(&self, n: u64) {
        self.bar.inc(n);
    }

    /// Removes the progress bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    /// One run finished: appends it to the results file, prints it (when echoing) and advances
    /// the bar.
    pub fn record(&mut self, record: &Record) -> Result<()> {
        if let Some((path, file)) = &mut self.file {
            writeln!(file, "{}", record_line(record, Some(&self.command)))
                .and_then(|()| file.flush())
                .with_context(|| format!("writing the results file {}", path.display()))?;
        }
        if self.echo {
            self.print(record)?;
        }
        self.bar.inc(1);
        Ok(())
    }

    /// Prints a record on stdout as a table line or JSON (the results file is not written).
    pub fn print(&self, record: &Record) -> Result<()> {
        let line = if self.json {
            serde_json::to_string(record)?
        } else {
            table_line(record)
        };
        self.println(&line)
    }

    /// Whether [`record`](Self::record) prints records on stdout.
    pub fn set_echo(&mut self, echo: bool) {
        self.echo = echo;
    }

    /// Prints a line on stdout without tearing the progress bar.
    pub fn println(&self, line: &str) -> Result<()> {
        self.bar
            .suspend(|| {
                let mut out = std::io::stdout().lock();
                writeln!(out, "{line}").and_then(|()| out.flush())
            })
            .context("writing to stdout")
    }

    /// Prints a note on stderr without tearing the progress bar.
    pub fn note(&self, line: &str) {
        self.bar.suspend(|| eprintln!("{line}"));
    }
}

/// Opens a results file for appending (creating it and its directory).
pub fn open_results(path: &Path) -> Result<std::fs::File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the directory of {}", path.display()))?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("cannot open results file {}", path.display()))
}

/// One run as a table line (msgs/s as [`human`] writes it: `15.4M`); the execution mode is named after it when it is not `all-task`.
pub fn table_line(record: &Record) -> String {
    let mut line = format!(
        "{:<22} {:<8} {:<10} workers={:<3} {:>7} msgs/s {:>9.4} s  {}",
        record.bench,
        record.runtime,
        record.policy,
        record.workers,
        human(record.msgs_per_sec),
        record.seconds,
        if record.verified {
            "verified"
        } else {
            "NOT VERIFIED"
        }
    );
    if record.exec != loka::ExecMode::AllTask.name() {
        line.push_str(&format!("  exec={}", record.exec));
    }
    line
}

/// This command line, as recorded next to its results: `loka` and the arguments, quoted
/// where a shell would need it.
pub fn invocation() -> String {
    let quote = |a: String| {
        if !a.is_empty()
            && a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c))
        {
            a
        } else {
            format!("'{}'", a.replace('\'', r"'\''"))
        }
    };
    std::iter::once("loka".to_owned())
        .chain(std::env::args().skip(1).map(quote))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_line_writes_the_rate_as_the_report_does() {
        let record = Record {
            runtime: "loka".into(),
            bench: "pingpong".into(),
            engine: "actor-centric".into(),
            policy: "auto".into(),
            exec: loka::ExecMode::AllTask.name().into(),
            topology: "host".into(),
            workers: 2,
            size: "quick".into(),
            messages: 2_000_000,
            seconds: 0.130_232,
            msgs_per_sec: 15_357_161.0,
            verified: true,
            telemetry: serde_json::json!({}),
            repeat: 0,
            virtual_seconds: None,
            host_seconds: None,
            stopped_after: None,
        };
        let line = table_line(&record);
        assert!(line.contains("  15.4M msgs/s"), "{line}");
        assert!(!line.contains("15357161"), "{line}");
    }
}
