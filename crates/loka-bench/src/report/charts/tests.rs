//! Tests of the chart drawing.

use super::*;

#[test]
fn human_numbers() {
    assert_eq!(human(32_472_304.0), "32.5M");
    assert_eq!(human(1_520.0), "1.52k");
    assert_eq!(human(0.0291), "0.029");
    assert_eq!(human(250.0), "250");
    assert_eq!(human(2.5e9), "2.50G");
}

#[test]
fn charts_are_svg_files_and_empty_data_draws_nothing() {
    let dir = std::env::temp_dir().join(format!("loka-charts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bars = Bars {
        title: "t".into(),
        y_label: "msgs/s".into(),
        groups: vec!["pingpong".into(), "fib".into()],
        series: vec!["loka".into(), "caf".into()],
        values: vec![vec![Some(3e7), Some(5e6)], vec![Some(1e7), None]],
        ranges: vec![
            vec![Some((2.5e7, 3.5e7)), Some((5e6, 5e6))],
            vec![Some((0.9e7, 1.2e7)), None],
        ],
    };
    assert!(bar_chart(&dir.join("b.svg"), &bars).unwrap());
    let svg = std::fs::read_to_string(dir.join("b.svg")).unwrap();
    // One whisker (a black polyline of 6 points) per bar with a range: 3 here.
    assert_eq!(whiskers(&svg), 3, "{svg}");
    assert!(svg.starts_with("<svg") && svg.contains("pingpong") && svg.contains("caf"));
    let empty = Bars {
        values: vec![vec![None, Some(0.0)]],
        ranges: Vec::new(),
        ..bars.clone()
    };
    assert!(!bar_chart(&dir.join("e.svg"), &empty).unwrap());
    assert!(!dir.join("e.svg").exists());
    let hbars = HBars {
        title: "speed-up".into(),
        x_label: "×".into(),
        rows: vec!["fib".into(), "pingpong".into()],
        series: vec!["2 workers".into()],
        values: vec![vec![Some(1.8), Some(0.6)]],
        ranges: vec![vec![Some((1.6, 2.0)), None]],
        labels: vec![vec!["1.80×".into(), "0.60× ±".into()]],
        reference: Some(1.0),
    };
    assert!(hbar_chart(&dir.join("h.svg"), &hbars).unwrap());
    let svg = std::fs::read_to_string(dir.join("h.svg")).unwrap();
    assert!(svg.contains("pingpong") && svg.contains("0.60× ±"), "{svg}");
    let panels = Panels {
        title: "speed-up".into(),
        subtitle: "against workers".into(),
        panels: vec![(
            "fib".into(),
            vec![(1.0, 1.0, false), (2.0, 1.9, true), (3.0, 2.7, false)],
        )],
        diagonal: true,
    };
    assert!(panel_chart(&dir.join("p.svg"), &panels).unwrap());
    assert!(std::fs::read_to_string(dir.join("p.svg"))
        .unwrap()
        .contains("fib"));
    let shares = Shares {
        title: "where".into(),
        rows: vec!["fib".into()],
        columns: vec!["cls".into(), "lgs".into()],
        parts: vec!["home PU".into(), "home node".into(), "remote node".into()],
        values: vec![vec![Some(vec![0.5, 0.3, 0.2]), None]],
    };
    assert!(share_chart(&dir.join("s.svg"), &shares).unwrap());
    let svg = std::fs::read_to_string(dir.join("s.svg")).unwrap();
    assert!(svg.contains("remote node") && svg.contains("50%"), "{svg}");
    let nothing = Shares {
        values: vec![vec![None, None]],
        ..shares
    };
    assert!(!share_chart(&dir.join("n.svg"), &nothing).unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The whiskers in an SVG chart: polylines of 6 points (axes and ticks have 2).
fn whiskers(svg: &str) -> usize {
    svg.split("<polyline")
        .skip(1)
        .filter(|rest| {
            let points = rest
                .split("points=\"")
                .nth(1)
                .and_then(|p| p.split('"').next())
                .unwrap_or("");
            points.split_whitespace().count() == 6
        })
        .count()
}

#[test]
fn more_series_than_can_be_told_apart_is_an_error() {
    let dir = std::env::temp_dir().join(format!("loka-charts-max-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let n = MAX_SERIES + 1;
    let bars = Bars {
        title: "t".into(),
        y_label: "msgs/s".into(),
        groups: vec!["fib".into()],
        series: (0..n).map(|i| format!("s{i}")).collect(),
        values: vec![vec![Some(1.0)]; n],
        ranges: Vec::new(),
    };
    let err = bar_chart(&dir.join("b.svg"), &bars).unwrap_err();
    assert!(err.contains("7 series"), "{err}");
    let fits = Bars {
        series: bars.series[..MAX_SERIES].to_vec(),
        values: bars.values[..MAX_SERIES].to_vec(),
        ..bars
    };
    assert!(bar_chart(&dir.join("b.svg"), &fits).unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}
