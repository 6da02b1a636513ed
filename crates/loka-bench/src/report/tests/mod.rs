//! Tests of the report: fixtures, charts, tables.

use super::*;
use crate::record::Record;

fn record(bench: &str, runtime: &str, policy: &str, workers: usize, msgs: f64) -> Record {
    Record {
        runtime: runtime.into(),
        bench: bench.into(),
        engine: if runtime == "loka" {
            "actor-centric".into()
        } else {
            "tokio".into()
        },
        policy: policy.into(),
        exec: if runtime == "loka" {
            "all-task".into()
        } else {
            "default".into()
        },
        topology: "host".into(),
        workers,
        size: "quick".into(),
        messages: 1_000_000,
        seconds: 1e6 / msgs,
        msgs_per_sec: msgs,
        verified: true,
        telemetry: if runtime == "loka" {
            serde_json::json!({"steals": 4, "steal_attempts": 40, "parks": 3, "unparks": 2,
                               "steals_by_level": [3, 1], "check": "ok",
                               "exec_home_pu": 6, "exec_home_node": 3,
                               "exec_remote_node": 1})
        } else {
            serde_json::json!({})
        },
        repeat: 0,
        virtual_seconds: None,
        host_seconds: None,
        stopped_after: None,
    }
}

/// A results file with every kind of run, its command on each line, and two bad lines.
fn fixture() -> String {
    let mut lines = Vec::new();
    let run = "loka bench run all --size quick --repeat 3";
    for (i, m) in [3e7, 2e7, 2.5e7].into_iter().enumerate() {
        let mut r = record("pingpong", "loka", "cls", 2, m);
        r.repeat = i;
        lines.push(record_line(&r, Some(run)));
    }
    let compare = "loka bench compare pingpong fib --repeat 3";
    for bench in ["pingpong", "fib"] {
        for rep in 0..3 {
            for (runtime, m) in [("loka", 2e7), ("caf", 1e7), ("actix-1thread", 4e6)] {
                let mut r = record(bench, runtime, "default", 2, m * (1.0 + rep as f64 / 10.0));
                if runtime == "loka" {
                    r.policy = "cls".into();
                }
                if runtime == "actix-1thread" {
                    r.workers = 1;
                }
                r.repeat = rep;
                lines.push(record_line(&r, Some(compare)));
            }
        }
    }
    lines.push("{\"bench\": \"pingpong\", \"runtime\": ".into()); // cut off mid-write
    let scale = "loka bench scale fib";
    for workers in [1, 2] {
        lines.push(record_line(
            &record("fib", "loka", "cls", workers, 5e6 * workers as f64),
            Some(scale),
        ));
    }
    lines.push("{\"bench\": \"fib\"}".into()); // valid JSON, not a record
    let policies = "loka bench policies all";
    for bench in ["pingpong", "fib"] {
        lines.push(record_line(
            &record(bench, "loka", "cls", 2, 2e7),
            Some(policies),
        ));
    }
    lines.join("\n") + "\n"
}

fn machine() -> MachineInfo {
    MachineInfo {
        hostname: "testhost".into(),
        nproc: 2,
        numa_nodes: Some(1),
        cpu_model: "Test CPU".into(),
        os: "Linux".into(),
    }
}

#[test]
fn report_from_a_fixture_with_bad_lines() {
    let dir = std::env::temp_dir().join(format!("loka-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("results.jsonl");
    std::fs::write(&input, fixture()).unwrap();
    let loaded = load(std::slice::from_ref(&input)).unwrap();
    assert_eq!(loaded.entries.len(), 3 + 18 + 2 + 2);
    let errors: Vec<String> = loaded.errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    let file = input.display().to_string();
    assert!(errors[0].starts_with(&format!("{file}:22: ")), "{errors:?}");
    assert!(errors[1].starts_with(&format!("{file}:25: ")), "{errors:?}");

    let out = dir.join("report");
    let written = write(&loaded, &machine(), &out).unwrap();
    let md = std::fs::read_to_string(&written.index).unwrap();
    for needle in [
        "testhost",
        "Test CPU",
        "nproc: 2",
        "`loka bench compare pingpong fib --repeat 3`",
        "## Problems",
        &format!("{file}:22"),
        "## Runtimes",
        "runtimes.svg",
        "scale.svg",
        "policies.svg",
        "locality.svg",
        "`steals_by_level.0`",
    ] {
        assert!(md.contains(needle), "missing {needle:?} in\n{md}");
    }
    // Compare: loka's median 2.2e7 over caf's 1.1e7; caf's 10M–12M is an 18% spread.
    assert!(
        md.contains("| fib | caf | 2 | 3 | 11.0M ± | 10.0M – 12.0M | 0.0909 | 3/3 | 2.00× |"),
        "{md}"
    );
    assert!(md.contains(NOISY_NOTE), "{md}");
    // Scaling: fib 5M msgs/s on 1 worker, 10M on 2: speed-up 2, in the table and the chart.
    assert!(
        md.contains("| bench | 2 workers |\n|---|---|\n| fib | 2.00× |"),
        "{md}"
    );
    assert!(
        md.contains("| fib | 2 | 1 | 10.0M | 10.0M | 0.1000 | 2.00× | 1/1 |"),
        "{md}"
    );
    let scale_svg = std::fs::read_to_string(out.join("scale.svg")).unwrap();
    assert!(scale_svg.contains("2.00×") && scale_svg.contains("fib"));
    // Locality: 6 / 3 / 1 activations on the home PU / home node / remote node.
    assert!(
        md.contains("| bench | cls |\n|---|---|\n| pingpong | 60 / 30 / 10 |"),
        "{md}"
    );
    let locality_svg = std::fs::read_to_string(out.join("locality.svg")).unwrap();
    assert!(locality_svg.contains("remote node") && locality_svg.contains("60%"));
    // The command-less check string is not a counter; the numeric ones are.
    assert!(!md.contains("`check`") && md.contains("`steal_attempts`"));
    for chart in ["runtimes.svg", "scale.svg", "policies.svg", "locality.svg"] {
        assert!(written.charts.contains(&out.join(chart)), "{chart}");
        let svg = std::fs::read_to_string(out.join(chart)).unwrap();
        assert!(svg.starts_with("<svg"), "{chart}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

fn entry(record: Record, kind: Kind) -> Entry {
    Entry {
        record,
        file: "f".into(),
        line: 1,
        command: None,
        kind,
    }
}

#[test]
fn speedup_is_the_ratio_to_the_one_worker_median() {
    let mut entries = Vec::new();
    // fib: medians 12 (1 worker) and 24 (2 workers); means would give 17.3 and 22.7.
    for (workers, msgs) in [(1, [10.0, 12.0, 30.0]), (2, [18.0, 24.0, 26.0])] {
        for m in msgs {
            entries.push(entry(record("fib", "loka", "cls", workers, m), Kind::Scale));
        }
    }
    // pingpong: 4 workers only, no 1-worker base.
    entries.push(entry(
        record("pingpong", "loka", "cls", 4, 5.0),
        Kind::Scale,
    ));
    let refs: Vec<&Entry> = entries.iter().collect();
    let g = groups(&refs);
    let names: Vec<String> = g.iter().map(|g| g.config.bench.clone()).collect();
    let s = speedups(&g, &names);
    assert_eq!(s.len(), 3);
    assert_eq!(s[0].map(|s| s.value), Some(1.0));
    assert_eq!(s[1].map(|s| s.value), Some(2.0));
    assert_eq!(s[2], None);
    // 10–30 around 12 is noisy, so both fib speed-ups carry the flag.
    assert!(s[0].unwrap().noisy && s[1].unwrap().noisy);

    // With three worker counts the report draws one small chart per benchmark.
    for (workers, m) in [(1, 10.0), (2, 18.0), (3, 27.0)] {
        entries.push(entry(
            record("sieve", "loka", "cls", workers, m),
            Kind::Scale,
        ));
    }
    let loaded = Loaded {
        entries,
        ..Loaded::default()
    };
    let dir = std::env::temp_dir().join(format!("loka-report-scale-{}", std::process::id()));
    let written = write(&loaded, &machine(), &dir).unwrap();
    let md = std::fs::read_to_string(&written.index).unwrap();
    assert!(
        md.contains(
            "| bench | 2 workers | 3 workers | 4 workers |\n|---|---|---|---|\n\
                     | sieve | 1.80× | 2.70× | — |\n| fib | 2.00× ± | — | — |\n\
                     | pingpong | — | — | — |"
        ),
        "{md}"
    );
    let svg = std::fs::read_to_string(dir.join("scale.svg")).unwrap();
    assert!(svg.contains("sieve") && svg.contains("pingpong"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `crates/loka-cli/tests/fixtures/tiny.jsonl`: a few real records of every kind of run.
#[test]
fn charts_from_the_cli_fixture() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../loka-cli/tests/fixtures/tiny.jsonl");
    let loaded = load(std::slice::from_ref(&fixture)).unwrap();
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let dir = std::env::temp_dir().join(format!("loka-report-tiny-{}", std::process::id()));
    let written = write(&loaded, &machine(), &dir).unwrap();
    for chart in ["scale.svg", "locality.svg"] {
        let path = dir.join(chart);
        assert!(
            written.charts.contains(&path),
            "{chart}: {:?}",
            written.charts
        );
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("pingpong"),
            "{chart}"
        );
    }
    let locality = std::fs::read_to_string(dir.join("locality.svg")).unwrap();
    assert!(locality.contains("cls") && locality.contains("home PU"));
    // Every shares cell of the report's locality table adds up to 100.
    let md = std::fs::read_to_string(&written.index).unwrap();
    let section = &md[md.find("## Locality").unwrap()..];
    let cells: Vec<u32> = section
        .lines()
        .take_while(|l| !l.starts_with("### "))
        .filter(|l| l.starts_with("| ") && l.contains(" / "))
        .flat_map(|l| {
            l.split('|')
                .filter(|c| c.contains(" / "))
                .map(str::to_owned)
        })
        .map(|c| c.split('/').map(|p| p.trim().parse::<u32>().unwrap()).sum())
        .collect();
    assert!(!cells.is_empty(), "{section}");
    assert!(cells.iter().all(|&sum| sum == 100), "{cells:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn levels_are_not_added_up() {
    assert!(is_level_key("queue_wait_ns_p99") && is_level_key("queue_wait_ns_p50"));
    assert!(is_level_key("steal_ratio") && is_level_key("mean_batch"));
    assert!(!is_level_key("steals") && !is_level_key("parks") && !is_level_key("hpu_pushes"));
    assert!(!is_level_key("steals_by_level.0"));
}

#[test]
fn a_missing_file_is_an_error_naming_it() {
    let err = load(&[PathBuf::from("/nonexistent/r.jsonl")]).unwrap_err();
    assert!(err.to_string().contains("/nonexistent/r.jsonl"), "{err}");
}

#[test]
fn labels_show_only_what_differs() {
    let entries: Vec<Entry> = [
        record("fib", "loka", "cls", 2, 1.0),
        record("fib", "caf", "default", 2, 1.0),
        record("fib", "actix", "default", 1, 1.0),
        record("fib", "actix", "default", 2, 1.0),
    ]
    .into_iter()
    .map(|record| entry(record, Kind::Compare))
    .collect();
    let refs: Vec<&Entry> = entries.iter().collect();
    let g = groups(&refs);
    assert_eq!(
        labels(&g, &[Field::Runtime], &[Field::Workers, Field::Size]),
        ["loka", "caf", "actix (workers=1)", "actix (workers=2)"]
    );
}

/// A loka run of `bench` under `policy` and execution mode `exec` that took `secs`.
fn timed(bench: &str, policy: &str, exec: &str, secs: f64) -> Record {
    let mut r = record(bench, "loka", policy, 2, 1e6 / secs);
    r.exec = exec.into();
    r
}

fn report_of(entries: Vec<Entry>, name: &str) -> String {
    let loaded = Loaded {
        entries,
        ..Loaded::default()
    };
    let dir = std::env::temp_dir().join(format!("loka-report-{name}-{}", std::process::id()));
    let written = write(&loaded, &machine(), &dir).unwrap();
    let md = std::fs::read_to_string(&written.index).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    md
}

#[test]
fn panini_improvement_is_relative_to_the_baseline_time() {
    assert_eq!(suites::improvement(2.0, 1.0), Some(0.5));
    assert_eq!(suites::improvement(1.0, 2.0), Some(-1.0));
    assert_eq!(suites::improvement(0.0, 1.0), None);
    assert_eq!(suites::improvement(1.0, f64::NAN), None);
    // A loss that rounds to nothing shows no sign.
    assert_eq!(suites::signed_percent(-0.001), "0%");
    assert_eq!(suites::signed_percent(0.125), "+13%");
    assert_eq!(suites::signed_percent(-0.3), "-30%");
}

#[test]
fn panini_section_shows_the_three_modes_and_autos_improvement() {
    let mut entries = Vec::new();
    // bang: all-thread 0.4 s, all-task 0.2 s, auto 0.1 s (three runs each, medians exact).
    for (exec, t) in [("all-thread", 0.4), ("all-task", 0.2), ("auto", 0.1)] {
        for f in [0.99, 1.0, 1.01] {
            entries.push(entry(
                timed("panini-bang", "auto", exec, t * f),
                Kind::Policies,
            ));
        }
    }
    // mbrot: no all-thread run; auto slower than all-task.
    entries.push(entry(
        timed("panini-mbrot", "auto", "all-task", 0.1),
        Kind::Policies,
    ));
    entries.push(entry(
        timed("panini-mbrot", "auto", "auto", 0.13),
        Kind::Policies,
    ));
    // Another policy's all-task run is no baseline for auto on the default policy.
    entries.push(entry(
        timed("panini-mbrot", "cls", "all-task", 0.05),
        Kind::Policies,
    ));
    // And a savina benchmark under the policy sweep: not in this section.
    entries.push(entry(
        timed("pingpong", "auto", "all-task", 0.1),
        Kind::Policies,
    ));
    let md = report_of(entries, "panini");
    let section = &md[md.find("## Execution policies (Panini)").expect(&md)..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    assert!(
        section.contains(
            "| panini-bang | actor-centric/auto, 2 workers | 0.4000 | 0.2000 | 0.1000 | +75% | +50% |"
        ),
        "{section}"
    );
    assert!(
        section.contains(
            "| panini-mbrot | actor-centric/auto, 2 workers | — | 0.1000 | 0.1300 | — | -30% |"
        ),
        "{section}"
    );
    assert!(!section.contains("pingpong"), "{section}");
    // Averages: +75% over all-thread (bang alone), (50 − 30) / 2 = +10% over all-task.
    assert!(
        section.contains("**+75%** over `all-thread` (1 benchmark)")
            && section.contains("**+10%** over `all-task` (2 benchmarks)"),
        "{section}"
    );
    // The paper's figure is quoted as a reference, apart from ours.
    assert!(
        section.contains("Reference, not measured here") && section.contains("14 programs"),
        "{section}"
    );
    // The policies section tells the modes apart.
    assert!(md.contains("actor-centric/auto (exec=all-thread)"), "{md}");
}

#[test]
fn lassi_section_shows_each_hint_variant_relative_to_ignorant() {
    let mut entries = Vec::new();
    let runs: [(&str, [f64; 4]); 3] = [
        // ignorant, best, worst, random (seconds)
        ("places", [0.2, 0.1, 0.3, 0.2]),
        ("places:a", [0.4, 0.2, 0.8, 0.5]),
        ("auto", [0.1, 0.1, 0.1, 0.1]),
    ];
    for (policy, times) in runs {
        for (variant, t) in ["ignorant", "best", "worst", "random"].iter().zip(times) {
            let mut r = timed(&format!("lassi-mergesort-{variant}"), policy, "all-task", t);
            if policy.starts_with("places") {
                r.telemetry["cross_place_steals"] =
                    serde_json::json!(if *variant == "best" { 0 } else { 7 });
            }
            entries.push(entry(r, Kind::Policies));
        }
    }
    // A policy that is neither `places` nor the default: not a row.
    entries.push(entry(
        timed("lassi-mergesort-best", "cls", "all-task", 0.3),
        Kind::Policies,
    ));
    let md = report_of(entries, "lassi");
    let section = &md[md.find("## Places (LASSI)").expect(&md)..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    for row in [
        "| lassi-mergesort | actor-centric/places, 2 workers | 0.2000 | 0.50× | 1.50× | 1.00× |",
        "| lassi-mergesort | actor-centric/places:a, 2 workers | 0.4000 | 0.50× | 2.00× | 1.25× |",
        "| lassi-mergesort | actor-centric/auto, 2 workers (hints ignored) | 0.1000 | 1.00× | 1.00× | 1.00× |",
        "| lassi-mergesort | actor-centric/places, 2 workers | 7 | 0 | 7 | 7 |",
    ] {
        assert!(section.contains(row), "missing {row:?} in\n{section}");
    }
    assert!(!section.contains("/cls"), "{section}");
    assert!(section.contains("`cross_place_steals`"), "{section}");
    // Rows in order: places, places:a, then the control.
    let (b, a, c) = (
        section.find("/places, 2").unwrap(),
        section.find("/places:a, 2").unwrap(),
        section.find("(hints ignored)").unwrap(),
    );
    assert!(b < a && a < c, "{section}");
}

#[test]
fn suite_sections_render_only_with_their_runs() {
    // The main fixture and the CLI's have neither Panini nor LASSI runs.
    let md = report_of(input::parse(&fixture(), Path::new("f")).0, "no-suites");
    assert!(!md.contains("## Execution policies (Panini)"), "{md}");
    assert!(!md.contains("## Places (LASSI)"), "{md}");
    // Panini runs in one mode only, LASSI runs under a policy without places: nothing to
    // compare, no section.
    let md = report_of(
        vec![
            entry(timed("panini-bang", "auto", "all-task", 0.1), Kind::Run),
            entry(
                timed("lassi-matmul-best", "cls", "all-task", 0.1),
                Kind::Run,
            ),
            entry(
                timed("lassi-matmul-ignorant", "cls", "all-task", 0.1),
                Kind::Run,
            ),
        ],
        "one-mode",
    );
    assert!(!md.contains("## Execution policies (Panini)"), "{md}");
    assert!(!md.contains("## Places (LASSI)"), "{md}");
    // LASSI runs without the counter (older records): the ratios, and a line saying so.
    let md = report_of(
        vec![
            entry(
                timed("lassi-matmul-ignorant", "places", "all-task", 0.2),
                Kind::Run,
            ),
            entry(
                timed("lassi-matmul-best", "places", "all-task", 0.1),
                Kind::Run,
            ),
        ],
        "no-steals",
    );
    assert!(md.contains("## Places (LASSI)"), "{md}");
    assert!(
        md.contains("| lassi-matmul | actor-centric/places, 2 workers | 0.2000 | 0.50× | — | — |"),
        "{md}"
    );
    assert!(md.contains("No run counts `cross_place_steals`"), "{md}");
    assert!(md.contains("has no runs here"), "{md}");
}

#[test]
fn runtimes_show_a_peer_stopped_at_the_cap_as_too_slow() {
    let compare = |r: Record| Entry {
        command: Some("loka bench compare all --peer-cap 20".into()),
        ..entry(r, Kind::Compare)
    };
    let stopped = |bench: &str| {
        let mut r = record(bench, "actix", "default", 2, 1.0);
        r.msgs_per_sec = 0.0;
        r.seconds = 0.0;
        r.verified = false;
        r.stopped_after = Some(20.0);
        compare(r)
    };
    let mut entries = Vec::new();
    let mut stops = Vec::new();
    for bench in ["pingpong", "fib"] {
        for _ in 0..3 {
            entries.push(compare(record(bench, "loka", "cls", 2, 2e7)));
        }
    }
    // fib: two actix runs finished (10M, 5M), the third stopped: the median is the slower.
    entries.push(compare(record("fib", "actix", "default", 2, 1e7)));
    entries.push(compare(record("fib", "actix", "default", 2, 5e6)));
    stops.push(stopped("fib"));
    // pingpong: the first actix run stopped, the others skipped.
    stops.push(stopped("pingpong"));
    let loaded = Loaded {
        entries,
        stopped: stops,
        ..Loaded::default()
    };
    let dir = std::env::temp_dir().join(format!("loka-report-cap-{}", std::process::id()));
    let written = write(&loaded, &machine(), &dir).unwrap();
    let md = std::fs::read_to_string(&written.index).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        md.contains("| bench | loka | actix |\n|---|---|---|\n| pingpong | 20.0M | too slow (> 20 s) |\n| fib | 20.0M | 5.00M ± (4.00×) |"),
        "{md}"
    );
    assert!(
        md.contains("| fib | actix | 2 | 3 (1 stopped) | 5.00M ± | 5.00M – 10.0M |"),
        "{md}"
    );
    assert!(
        md.contains(
            "| pingpong | actix | 2 | 1 (1 stopped) | too slow (> 20 s) | — | — | 0/0 | — |"
        ),
        "{md}"
    );
    assert!(md.contains("--peer-cap"), "{md}");
    // Nothing else takes the stopped runs' zeros: no problem is reported.
    assert!(!md.contains("## Problems"), "{md}");
}

mod layout;
