//! `loka report`: result files → `DIR/index.md` with tables and SVG charts.

use anyhow::{Context as _, Result};
use loka_bench::report::{self, MachineInfo};
use std::path::{Path, PathBuf};

/// `loka report` arguments.
#[derive(clap::Args)]
pub struct ReportArgs {
    /// Result files (JSON lines); default: every `report/*.jsonl`.
    #[arg(long, num_args = 1..)]
    pub input: Vec<PathBuf>,
    /// The directory to write `index.md` and the charts to.
    #[arg(long, default_value = "report")]
    pub out: PathBuf,
}

/// The `*.jsonl` files of a directory, sorted by name.
pub fn jsonl_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir).with_context(|| {
        format!(
            "no input: cannot read {} (write results with `loka bench run all --out {}/results.jsonl`, \
             or pass --input FILE)",
            dir.display(),
            dir.display()
        )
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
        .collect();
    files.sort();
    Ok(files)
}

/// Runs `loka report`.
pub fn run(args: &ReportArgs) -> Result<()> {
    let inputs = if args.input.is_empty() {
        let files = jsonl_files(Path::new("report"))?;
        anyhow::ensure!(
            !files.is_empty(),
            "no input: report/*.jsonl matches nothing (write results with `loka bench run all \
             --out report/results.jsonl`, or pass --input FILE)"
        );
        files
    } else {
        args.input.clone()
    };
    for path in &inputs {
        anyhow::ensure!(path.is_file(), "{}: no such results file", path.display());
    }
    let loaded = report::load(&inputs)?;
    let written = report::write(&loaded, &MachineInfo::detect(), &args.out)?;
    println!(
        "wrote {} and {} chart(s) from {} record(s) in {} file(s)",
        written.index.display(),
        written.charts.len(),
        written.records,
        inputs.len()
    );
    if !loaded.errors.is_empty() {
        const SHOWN: usize = 10;
        let mut lines: Vec<String> = loaded
            .errors
            .iter()
            .take(SHOWN)
            .map(|e| e.to_string())
            .collect();
        if loaded.errors.len() > SHOWN {
            lines.push(format!("… and {} more", loaded.errors.len() - SHOWN));
        }
        anyhow::bail!(
            "{} line(s) are not valid result records and were left out (the report was written \
             from the {} valid ones):\n  {}",
            loaded.errors.len(),
            written.records,
            lines.join("\n  ")
        );
    }
    Ok(())
}
