//! Tests of the report's layout: at most six series a chart, the summary first.

use super::*;

/// Whether an SVG chart has a text element reading exactly `text` (on a line of its own).
fn has_text(svg: &str, text: &str) -> bool {
    svg.lines().any(|l| l.trim() == text)
}

/// The legend entries of a chart this report drew: one filled 16×14 square per series.
fn legend_entries(svg: &str) -> usize {
    svg.split("<rect")
        .skip(1)
        .filter(|rest| {
            let tag = &rest[..rest.find('>').unwrap_or(rest.len())];
            tag.contains("width=\"16\"") && tag.contains("height=\"14\"")
        })
        .count()
}

#[test]
fn no_chart_shows_more_than_six_series() {
    // 8 runtimes on 3 benchmarks (repeated, so there are whiskers) and 14 policies on 12.
    let mut entries = Vec::new();
    let peers = [
        "caf", "tokio", "actix", "ractor", "kameo", "tokio-ct", "actix-1t",
    ];
    for bench in ["pingpong", "fib", "big"] {
        for (k, runtime) in std::iter::once(&"loka").chain(&peers).enumerate() {
            for m in [1.0, 1.1, 1.3] {
                entries.push(entry(
                    record(bench, runtime, "auto", 2, m * 1e6 * (k + 1) as f64),
                    Kind::Compare,
                ));
            }
        }
    }
    let policies = [
        "auto",
        "cls",
        "lgs",
        "lgs:tp",
        "lgs:dfs",
        "lgs:alt",
        "lgs:auto",
        "hierarchical",
        "hierarchical:auto",
        "places",
        "p10",
        "p11",
        "p12",
        "p13",
    ];
    for b in 0..12 {
        for (k, policy) in policies.iter().enumerate() {
            let msgs = 1e7 * (1.0 + k as f64 / 10.0) * (b + 1) as f64;
            entries.push(entry(
                record(&format!("b{b}"), "loka", policy, 2, msgs),
                Kind::Policies,
            ));
        }
    }
    let loaded = Loaded {
        entries,
        ..Loaded::default()
    };
    let dir = std::env::temp_dir().join(format!("loka-report-series-{}", std::process::id()));
    let written = write(&loaded, &machine(), &dir).unwrap();
    let md = std::fs::read_to_string(&written.index).unwrap();
    // Runtimes: loka and 7 peers become two charts, loka in each; policies: the default and the
    // 5 best (p13 … p10 and places: the highest msgs/s), over 2 charts of 6 benchmarks each.
    for chart in [
        "runtimes-1.svg",
        "runtimes-2.svg",
        "policies-1.svg",
        "policies-2.svg",
    ] {
        assert!(written.charts.contains(&dir.join(chart)), "{chart}: {md}");
    }
    assert!(
        md.contains("and the 5 of the other 13 series with the best geometric mean over it"),
        "{md}"
    );
    for chart in &written.charts {
        let svg = std::fs::read_to_string(chart).unwrap();
        let n = legend_entries(&svg);
        assert!(n <= charts::MAX_SERIES, "{}: {n} series", chart.display());
        if chart
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("runtimes")
        {
            assert!(has_text(&svg, "loka"), "{}", chart.display());
        }
    }
    let policies_1 = std::fs::read_to_string(dir.join("policies-1.svg")).unwrap();
    assert_eq!(legend_entries(&policies_1), 6);
    assert!(
        has_text(&policies_1, "actor-centric/p13") && !has_text(&policies_1, "actor-centric/cls"),
        "{policies_1}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_summary_comes_first_and_counts_noise_peers_and_short_runs() {
    let mut entries = Vec::new();
    // fib: loka 2× caf, pingpong: loka 0.5× caf; caf's fib spreads 10–12 (noisy).
    for (bench, loka, caf) in [
        ("fib", 2e7, [1.0e7, 1.1e7, 1.2e7]),
        ("pingpong", 1e7, [2e7; 3]),
    ] {
        for c in caf {
            entries.push(entry(record(bench, "loka", "auto", 2, loka), Kind::Compare));
            entries.push(entry(record(bench, "caf", "auto", 2, c), Kind::Compare));
        }
    }
    // One quick run of 20 ms: flagged as too short.
    let mut short = record("counting", "loka", "auto", 2, 5e7);
    short.seconds = 0.020;
    entries.push(entry(short, Kind::Run));
    let md = report_of(entries, "summary");
    let summary = &md[..md.find("## About this report").unwrap()];
    assert!(
        md.starts_with("# loka benchmark report\n\n## Summary\n"),
        "{md}"
    );
    assert!(summary.lines().count() <= 40, "{summary}");
    assert!(
        summary.contains("**Warning: 1 of 4 medians are noisy**"),
        "{summary}"
    );
    assert!(
        summary.contains("**1 quick run(s) took under 50 ms**") && summary.contains("counting"),
        "{summary}"
    );
    // loka/caf: fib 2e7 / 1.1e7 (caf's median) = 1.82, pingpong 0.5; geometric mean 0.95.
    assert!(
        summary.contains("| caf | 2 | 0.95× | fib 1.82× | pingpong 0.50× |"),
        "{summary}"
    );
    assert!(
        summary.contains("1 NUMA node") && summary.contains("2 PUs"),
        "{summary}"
    );
    assert!(
        summary.contains("[Runtimes: msgs/s per benchmark](#runtimes-msgss-per-benchmark)"),
        "{summary}"
    );
}
