//! The report's first screen: the machine, loka against each peer, how many medians are noise,
//! quick runs too short to time, what ran, and links to the sections below.

use super::*;

/// Quick runs shorter than this are flagged: start-up and scheduling noise are a large part of
/// them, so their medians say little (every quick size is meant to run longer on 2 workers).
pub const MIN_QUICK_SECONDS: f64 = 0.050;

/// One peer's loka/peer ratio on one benchmark, as the runtimes section computed it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PeerRatio {
    /// The peer's series label (`tokio`, `actix-1thread`, …).
    pub peer: String,
    /// The benchmark.
    pub bench: String,
    /// loka's median msgs/s over the peer's; `None` when the peer was too slow to tell (stopped
    /// at the cap) or loka has no run of it.
    pub ratio: Option<f64>,
    /// The peer's runs were stopped at the cap (too slow).
    pub too_slow: bool,
}

/// A level-2 heading's anchor as GitHub writes it: lower case, spaces to `-`, everything but
/// letters, digits, `-` and `_` dropped.
pub(super) fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The geometric mean of positive values; `None` without one.
pub(super) fn geometric_mean(values: &[f64]) -> Option<f64> {
    let logs: Vec<f64> = values
        .iter()
        .filter(|v| v.is_finite() && **v > 0.0)
        .map(|v| v.ln())
        .collect();
    (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
}

/// `a, b, c` for up to `shown` items, then `and N more`.
fn list(items: &[String], shown: usize) -> String {
    if items.len() <= shown {
        items.join(", ")
    } else {
        format!(
            "{}, and {} more",
            items[..shown].join(", "),
            items.len() - shown
        )
    }
}

impl Report {
    /// The summary, written after the sections (it links to them and uses what they computed).
    pub(super) fn summary(&self, loaded: &Loaded, machine: &MachineInfo, body: &str) -> String {
        let mut out = String::from("## Summary\n\n");
        let mut line = |text: String| {
            out.push_str(&text);
            out.push('\n');
        };
        // Noisy medians: every configuration of every kind of run with repetitions.
        let (mut repeated, mut noisy) = (0, 0);
        for kind in [Kind::Run, Kind::Compare, Kind::Scale, Kind::Policies] {
            let of_kind: Vec<&Entry> = loaded.entries.iter().filter(|e| e.kind == kind).collect();
            for g in groups(&of_kind).iter().filter(|g| g.msgs.n > 1) {
                repeated += 1;
                noisy += usize::from(g.msgs.noisy());
            }
        }
        if noisy > 0 {
            line(format!(
                "> **Warning: {noisy} of {repeated} medians are noisy** (`±` in the tables): \
                 their repetitions spread over more than {:.0}% of the median. A difference \
                 smaller than that spread is not a result; rerun on an idle machine or with more \
                 `--repeat` before trusting it.",
                NOISY_SPREAD * 100.0
            ));
        } else if repeated > 0 {
            line(format!(
                "All {repeated} medians of repeated runs are steady: their repetitions spread \
                 over at most {:.0}% of the median.",
                NOISY_SPREAD * 100.0
            ));
        } else {
            line("No configuration was repeated: no median has a spread to judge.".into());
        }
        // Quick runs too short to time (measured ones only: simulated seconds are virtual).
        let mut short: Vec<String> = Vec::new();
        let mut short_runs = 0;
        for e in &loaded.entries {
            let r = &e.record;
            if r.size == "quick" && r.engine != "sim" && r.seconds < MIN_QUICK_SECONDS {
                short_runs += 1;
                let name = if r.runtime == "loka" {
                    r.bench.clone()
                } else {
                    format!("{} ({})", r.bench, r.runtime)
                };
                if !short.contains(&name) {
                    short.push(name);
                }
            }
        }
        if short_runs > 0 {
            line(format!(
                ">\n> **{short_runs} quick run(s) took under {:.0} ms**, too short to time \
                 (start-up and scheduling dominate): {}.",
                MIN_QUICK_SECONDS * 1e3,
                list(&short, 8)
            ));
        }
        line(String::new());
        // The machine and what ran.
        let numa = machine.numa_nodes.map_or_else(
            || "NUMA nodes unknown".to_owned(),
            |n| format!("{n} NUMA node{}", if n == 1 { "" } else { "s" }),
        );
        line(format!(
            "- **Machine**: {} PUs (`nproc`), {numa}, {}; {} (host `{}`).",
            machine.nproc, machine.cpu_model, machine.os, machine.hostname
        ));
        let loka: Vec<&Entry> = loaded
            .entries
            .iter()
            .filter(|e| e.record.runtime == "loka")
            .collect();
        let values = |f: fn(&Entry) -> String| -> Vec<String> {
            let mut v: Vec<String> = Vec::new();
            for e in &loka {
                let x = f(e);
                if !v.contains(&x) {
                    v.push(x);
                }
            }
            v
        };
        let quote = |v: Vec<String>| -> String {
            v.iter()
                .map(|x| format!("`{x}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let benches = values(|e| e.record.bench.clone());
        let mut workers = values(|e| e.record.workers.to_string());
        workers.sort_by_key(|w| w.parse::<usize>().unwrap_or(0));
        line(format!(
            "- **Ran**: {} records in {} file(s); loka on {} benchmarks, {} worker(s), size {}.",
            loaded.entries.len(),
            loaded.files.len(),
            benches.len(),
            workers.join(", "),
            quote(values(|e| e.record.size.clone()))
        ));
        line(format!(
            "- **Engines**: {}; **policies**: {}; **execution modes**: {}.",
            quote(values(|e| e.record.engine.clone())),
            quote(values(|e| e.record.policy.clone())),
            quote(values(|e| e.record.exec.clone()))
        ));
        // loka against each peer.
        let mut peers: Vec<String> = Vec::new();
        for p in &self.peers {
            if !peers.contains(&p.peer) {
                peers.push(p.peer.clone());
            }
        }
        line(String::new());
        if peers.is_empty() {
            line("No peer comparison in the input (`loka bench compare`).".into());
        } else {
            line(
                "loka against each peer: the geometric mean of loka/peer (median msgs/s; above \
                 1: loka is faster) over the benchmarks both finished, then the benchmark best \
                 and worst for loka:\n"
                    .into(),
            );
            let mut rows = Vec::new();
            for peer in &peers {
                let mine: Vec<&PeerRatio> = self.peers.iter().filter(|p| &p.peer == peer).collect();
                let rated: Vec<(&str, f64)> = mine
                    .iter()
                    .filter_map(|p| Some((p.bench.as_str(), p.ratio?)))
                    .collect();
                let slow = mine.iter().filter(|p| p.too_slow).count();
                let ratios: Vec<f64> = rated.iter().map(|&(_, r)| r).collect();
                let best = rated.iter().max_by(|a, b| a.1.total_cmp(&b.1));
                let worst = rated.iter().min_by(|a, b| a.1.total_cmp(&b.1));
                let at = |x: Option<&(&str, f64)>| {
                    x.map_or_else(|| "—".into(), |(b, r)| format!("{b} {r:.2}×"))
                };
                let mut count = rated.len().to_string();
                if slow > 0 {
                    count.push_str(&format!(" (+{slow} too slow)"));
                }
                rows.push(vec![
                    peer.clone(),
                    count,
                    times(geometric_mean(&ratios)),
                    at(best),
                    at(worst),
                ]);
            }
            line(table(
                &["peer", "benchmarks", "loka/peer", "best", "worst"],
                &rows,
            ));
        }
        // Links to the sections.
        let links: Vec<String> = body
            .lines()
            .filter_map(|l| l.strip_prefix("## "))
            .map(|h| format!("[{h}](#{})", anchor(h)))
            .collect();
        line(format!("**Details below**: {}.", links.join(" · ")));
        out
    }
}
