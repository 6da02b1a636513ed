//! The simulation engine's predictions: per machine the simulation modelled (a topology, mostly a
//! seed's `preset:NAME`), the predicted (virtual) time of every benchmark under every policy,
//! from the records' `virtual_seconds` (docs/simulation.md).
//!
//! Why a section of its own: a prediction is virtual time on a machine this host is not, so it
//! never shares a table with measured wall time, and the policies' speed-ups are what a reader
//! compares with the seeds' published figures. The section is left out when no record carries
//! `virtual_seconds` (a report of real runs says nothing about the simulation).

use super::charts::Bars;
use super::{
    distinct, groups, labels, min_max, pivot, Entry, Field, Fit, Group, Loaded, Report, Summary,
};
use crate::BenchError;

/// A name for file names: the topology without its `preset:` prefix, every character that is not
/// alphanumeric, `-` or `_` replaced (a topology may be a path).
fn slug(topology: &str) -> String {
    topology
        .strip_prefix("preset:")
        .unwrap_or(topology)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The policy every prediction is compared with: classic work stealing, the stock scheduler the
/// seeds set their own policies against (their speed-ups are over it; docs/results/simulation.md).
const BASELINE: &str = "cls";

/// Virtual seconds as the tables show them: milliseconds, 3 decimals.
fn millis(v: f64) -> String {
    if v.is_nan() {
        "—".into()
    } else {
        format!("{:.3} ms", v * 1e3)
    }
}

/// The median virtual time of a group's runs (`NaN` without any).
fn virtual_time(g: &Group<'_>) -> Summary {
    let values: Vec<f64> = g
        .runs
        .iter()
        .filter_map(|e| e.record.virtual_seconds)
        .collect();
    Summary::of(&values).unwrap_or(super::EMPTY)
}

impl Report {
    /// `## Predicted time (simulation)`: one table and one chart per simulated machine (topology,
    /// workers, size), a row per benchmark and a column per policy. Nothing at all when there is
    /// no simulated run.
    pub(super) fn predicted(&mut self, loaded: &Loaded) -> Result<(), BenchError> {
        let simulated: Vec<&Entry> = loaded
            .entries
            .iter()
            .filter(|e| e.record.virtual_seconds.is_some())
            .collect();
        if simulated.is_empty() {
            return Ok(());
        }
        let default = BASELINE;
        self.line("\n## Predicted time (simulation)\n");
        self.line(format!(
            "From runs under `--engine sim` (`loka bench policies … --engine sim --topology \
             preset:NAME`, or `loka bench run`): the simulation's *predicted* time on the machine \
             it modelled, in virtual milliseconds (the records' `virtual_seconds`; \
             docs/simulation.md), median over repetitions. These are predictions, never \
             measurements of this host. In brackets: the predicted speed-up over `{default}` on \
             the same machine ({default}'s time / the policy's; above 1 the policy is faster).\n"
        ));
        let machines = distinct(simulated.iter().map(|e| e.record.topology.as_str()));
        for topology in machines {
            let on_topology: Vec<&Entry> = simulated
                .iter()
                .copied()
                .filter(|e| e.record.topology == topology)
                .collect();
            // Worker counts and sizes split a machine into separate tables: a prediction at 8
            // workers is not a column beside one at 64.
            let mut shapes: Vec<(usize, String)> = Vec::new();
            for e in &on_topology {
                let shape = (e.record.workers, e.record.size.clone());
                if !shapes.contains(&shape) {
                    shapes.push(shape);
                }
            }
            for (workers, size) in shapes {
                let data: Vec<&Entry> = on_topology
                    .iter()
                    .copied()
                    .filter(|e| e.record.workers == workers && e.record.size == size)
                    .collect();
                self.predicted_table(&topology, workers, &size, &data, default)?;
            }
        }
        Ok(())
    }

    fn predicted_table(
        &mut self,
        topology: &str,
        workers: usize,
        size: &str,
        data: &[&Entry],
        default: &str,
    ) -> Result<(), BenchError> {
        self.line(format!(
            "\n### `{topology}`, {workers} workers, size `{size}`\n"
        ));
        let groups = groups(data);
        let labels = labels(&groups, &[Field::Policy], &[Field::Exec, Field::Runtime]);
        let times: Vec<Summary> = groups.iter().map(virtual_time).collect();
        let benches = distinct(groups.iter().map(|g| g.config.bench.as_str()));
        let series = distinct(labels.iter().map(String::as_str));
        let find = |b: &str, s: &str| {
            groups
                .iter()
                .zip(&labels)
                .position(|(g, l)| l == s && g.config.bench == b)
        };
        let base = |b: &str| {
            groups
                .iter()
                .position(|g| g.config.bench == b && g.config.policy == default)
                .map(|i| times[i].median)
        };
        self.line(pivot(&benches, &series, |b, s| {
            let t = &times[find(b, s)?];
            let speedup = base(b)
                .filter(|base| base.is_finite() && t.median > 0.0)
                .map(|base| format!(" ({:.2}×)", base / t.median))
                .unwrap_or_default();
            Some(format!("{}{}{speedup}", millis(t.median), t.flag()))
        }));
        self.noisy_note(times.iter());
        let values = series
            .iter()
            .map(|s| {
                benches
                    .iter()
                    .map(|b| find(b, s).map(|i| times[i].median * 1e3))
                    .collect()
            })
            .collect();
        let ranges = series
            .iter()
            .map(|s| {
                benches
                    .iter()
                    .map(|b| {
                        let t = &times[find(b, s)?];
                        min_max(t).map(|(lo, hi)| (lo * 1e3, hi * 1e3))
                    })
                    .collect()
            })
            .collect();
        self.bar_chart(
            &format!("predicted-{}-w{workers}-{}", slug(topology), slug(size)),
            &Bars {
                title: format!("predicted time per policy, {topology}, {workers} workers"),
                y_label: "virtual ms (lower is faster; whiskers: min–max)".into(),
                groups: benches,
                series,
                values,
                ranges,
            },
            Fit::Best { higher: false },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::{load, record_line, write, MachineInfo};
    use crate::record::Record;

    fn sim(bench: &str, policy: &str, topology: &str, virtual_ms: f64) -> Record {
        let seconds = virtual_ms * 1e-3;
        Record {
            runtime: "loka".into(),
            bench: bench.into(),
            engine: "sim".into(),
            policy: policy.into(),
            exec: "all-task".into(),
            topology: topology.into(),
            workers: 64,
            size: "quick".into(),
            messages: 1000,
            seconds,
            msgs_per_sec: 1000.0 / seconds,
            verified: true,
            telemetry: serde_json::json!({}),
            repeat: 0,
            virtual_seconds: Some(seconds),
            host_seconds: Some(2.0),
            stopped_after: None,
        }
    }

    fn report_of(lines: &[String], name: &str) -> (String, Vec<std::path::PathBuf>) {
        let dir =
            std::env::temp_dir().join(format!("loka-predicted-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let input = dir.join("results.jsonl");
        std::fs::write(&input, lines.join("\n") + "\n").unwrap();
        let loaded = load(std::slice::from_ref(&input)).unwrap();
        let machine = MachineInfo {
            hostname: "h".into(),
            nproc: 2,
            numa_nodes: Some(1),
            cpu_model: "c".into(),
            os: "o".into(),
        };
        let written = write(&loaded, &machine, &dir.join("report")).unwrap();
        let md = std::fs::read_to_string(&written.index).unwrap();
        let charts = written
            .charts
            .iter()
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("predicted")
            })
            .cloned()
            .collect();
        (md, charts)
    }

    #[test]
    fn predicted_time_per_policy_per_preset() {
        let command = "loka bench policies fib big --engine sim --topology preset:opteron6376";
        let mut lines = Vec::new();
        for (bench, cls, lgs) in [("fib", 6.0, 4.0), ("big", 10.0, 12.5)] {
            lines.push(record_line(
                &sim(bench, "cls", "preset:opteron6376", cls),
                Some(command),
            ));
            lines.push(record_line(
                &sim(bench, "lgs", "preset:opteron6376", lgs),
                Some(command),
            ));
        }
        // Another preset gets its own table and chart.
        lines.push(record_line(
            &sim("fib", "hierarchical", "preset:xeon-x7560", 3.0),
            Some("loka bench policies fib --engine sim --topology preset:xeon-x7560"),
        ));
        let (md, charts) = report_of(&lines, "some");
        assert!(md.contains("## Predicted time (simulation)"), "{md}");
        assert!(
            md.contains("### `preset:opteron6376`, 64 workers, size `quick`"),
            "{md}"
        );
        // cls 6 ms / lgs 4 ms: lgs predicted 1.5× faster; on big 10 / 12.5 = 0.8×.
        assert!(
            md.contains(
                "| bench | cls | lgs |\n|---|---|---|\n\
                 | fib | 6.000 ms (1.00×) | 4.000 ms (1.50×) |\n\
                 | big | 10.000 ms (1.00×) | 12.500 ms (0.80×) |"
            ),
            "{md}"
        );
        // No cls run on the Xeon: the time without a speed-up.
        assert!(
            md.contains("| bench | hierarchical |\n|---|---|\n| fib | 3.000 ms |"),
            "{md}"
        );
        assert_eq!(charts.len(), 2, "{charts:?}");
        let svg = std::fs::read_to_string(
            charts
                .iter()
                .find(|p| p.to_string_lossy().contains("opteron6376"))
                .unwrap(),
        )
        .unwrap();
        assert!(svg.contains("virtual ms") && svg.contains("lgs") && svg.contains("big"));
    }

    #[test]
    fn no_simulated_run_no_section() {
        let mut real = sim("fib", "cls", "host", 1.0);
        real.engine = "actor-centric".into();
        real.virtual_seconds = None;
        real.host_seconds = None;
        let (md, charts) = report_of(&[record_line(&real, Some("loka bench run fib"))], "none");
        assert!(!md.contains("Predicted time"), "{md}");
        assert!(charts.is_empty(), "{charts:?}");
    }
}
