//! `loka topo`: show the machine model — tree, NUMA distances, each worker's
//! victim groups and `dist` order, the node order and the places.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use loka_topology::{
    CostMatrix, GroupLevel, LayoutOptions, Level, PlaceLevel, Topology, TopologySpec, WorkerLayout,
};
use serde_json::{json, Value};

/// Arguments of `loka topo`.
#[derive(clap::Args, Debug)]
pub struct TopoArgs {
    /// Topology: `host`, `preset:NAME`, `synthetic:DESC[;distances=ROWS]`, `xml:FILE`.
    #[arg(long, value_name = "SPEC", default_value = "host")]
    pub topology: String,
    /// Cost matrix file (one row per PU, logical order); default: hierarchical.
    #[arg(long, value_name = "FILE")]
    pub cost: Option<PathBuf>,
    /// Invert every entry of the cost file (for bandwidth figures: larger = cheaper).
    #[arg(long, requires = "cost")]
    pub invert_cost: bool,
    /// Number of workers (default: one per PU; worker i runs on PU i).
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
    /// Innermost victim group g0: `numa` (LGS), `l2` (LGS-CO), `l3`, `package`.
    #[arg(long, value_name = "LEVEL", default_value = "numa")]
    pub group_level: String,
    /// What a place is: `package`, `l3`, `numa`.
    #[arg(long, value_name = "LEVEL", default_value = "package")]
    pub place_level: String,
    /// Print everything as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Also write the topology as hwloc XML (distances included) to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_xml: Option<PathBuf>,
    /// List the shipped presets and exit.
    #[arg(long)]
    pub list_presets: bool,
}

/// Everything `loka topo` shows.
struct Model {
    topo: Topology,
    cost: CostMatrix,
    layout: WorkerLayout,
}

fn build(args: &TopoArgs) -> anyhow::Result<Model> {
    let spec: TopologySpec = args.topology.parse()?;
    let group_level: GroupLevel = args.group_level.parse()?;
    let place_level: PlaceLevel = args.place_level.parse()?;
    if args.workers == Some(0) {
        anyhow::bail!("--workers must be at least 1");
    }
    let topo = Topology::load(&spec)?;
    let cost = CostMatrix::load(&topo, args.cost.as_deref(), args.invert_cost)?;
    let opts = LayoutOptions {
        workers: args.workers.unwrap_or(0),
        group_level,
        place_level,
    };
    let layout = WorkerLayout::new(&topo, &cost, &opts)?;
    Ok(Model { topo, cost, layout })
}

/// Runs `loka topo`.
pub fn run(args: TopoArgs) -> anyhow::Result<()> {
    if args.list_presets {
        let mut text = String::new();
        for name in loka_topology::presets::names() {
            let topo = Topology::load(&TopologySpec::Preset(name.to_owned()))?;
            let _ = writeln!(text, "preset:{name:<14} {}", topo.description());
        }
        return write_stdout(&text);
    }
    let model = build(&args)?;
    if let Some(path) = &args.export_xml {
        let xml = model.topo.export_xml()?;
        std::fs::write(path, xml)
            .with_context(|| format!("cannot write hwloc XML to `{}`", path.display()))?;
    }
    let text = if args.json {
        let mut s = serde_json::to_string(&to_json(&model))?;
        s.push('\n');
        s
    } else {
        to_text(&model)
    };
    write_stdout(&text)
}

/// Writes to stdout; a closed pipe (`loka topo | head`) is not an error.
fn write_stdout(text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("cannot write to stdout")
        }
        _ => Ok(()),
    }
}

/// `0-3,5,7-8`: a list of ids with consecutive runs collapsed (order kept).
fn ranges(ids: &[usize]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        if !out.is_empty() {
            out.push(',');
        }
        if j > i {
            let _ = write!(out, "{}-{}", ids[i], ids[j]);
        } else {
            let _ = write!(out, "{}", ids[i]);
        }
        i = j + 1;
    }
    if out.is_empty() {
        out.push('-');
    }
    out
}

fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if (v - v.round()).abs() < 0.05 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

fn number(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

fn object_label(topo: &Topology, id: usize) -> String {
    let o = topo.object(id);
    let mut s = match o.level {
        Level::Machine => "Machine".to_owned(),
        level => format!("{} L#{}", level.display_name(), o.index),
    };
    if matches!(o.level, Level::Pu | Level::Numa | Level::Package) {
        if let Some(os) = o.os_index {
            let _ = write!(s, " P#{os}");
        }
    }
    if let Some(size) = o.size {
        let _ = write!(s, " ({})", bytes(size));
    }
    s
}

/// The tree, one object per line; a chain of single-PU objects is one line.
fn tree_lines(topo: &Topology, id: usize, indent: usize, out: &mut String) {
    let o = topo.object(id);
    if o.pus.len() == 1 && o.level != Level::Machine {
        let mut chain = vec![object_label(topo, id)];
        let mut cur = o;
        while let Some(&child) = cur.children.first() {
            chain.push(object_label(topo, child));
            cur = topo.object(child);
        }
        let _ = writeln!(out, "{:indent$}{}", "", chain.join(" › "));
        return;
    }
    let _ = writeln!(out, "{:indent$}{}", "", object_label(topo, id));
    for &c in &o.children {
        tree_lines(topo, c, indent + 2, out);
    }
}

fn matrix_text(n: usize, get: impl Fn(usize, usize) -> f64, out: &mut String) {
    let cells: Vec<Vec<String>> = (0..n)
        .map(|i| (0..n).map(|j| number(get(i, j))).collect())
        .collect();
    let width = cells
        .iter()
        .flatten()
        .map(String::len)
        .chain(std::iter::once(n.to_string().len()))
        .max()
        .unwrap_or(1);
    let _ = write!(out, "  {:>w$}", "", w = n.to_string().len());
    for j in 0..n {
        let _ = write!(out, " {j:>width$}");
    }
    out.push('\n');
    for (i, row) in cells.iter().enumerate() {
        let _ = write!(out, "  {i:>w$}", w = n.to_string().len());
        for c in row {
            let _ = write!(out, " {c:>width$}");
        }
        out.push('\n');
    }
}

fn to_text(m: &Model) -> String {
    let (topo, layout) = (&m.topo, &m.layout);
    let mut out = String::new();
    let _ = writeln!(out, "Topology {}", topo.spec());
    let _ = writeln!(out, "  {}", topo.description());
    let counts: Vec<String> = [Level::Package, Level::L3, Level::L2, Level::Core]
        .iter()
        .filter(|&&l| topo.count(l) > 0)
        .map(|&l| format!("{} {}", topo.count(l), l.display_name()))
        .collect();
    let _ = writeln!(
        out,
        "  {} PU(s), {} NUMA node(s), {}; {}",
        topo.pu_count(),
        topo.numa_node_count(),
        counts.join(", "),
        if topo.is_real() {
            "real machine: workers are pinned"
        } else {
            "not the host: workers run unpinned"
        }
    );
    let (chosen, why) = loka::policy::auto::choose(layout.node_count(), layout.workers());
    let _ = writeln!(out, "  policy auto → {chosen}: {why}");

    out.push_str("\nTree\n");
    tree_lines(topo, 0, 2, &mut out);

    match topo.numa_distances() {
        Some(d) => {
            let _ = writeln!(out, "\nNUMA distances ({})", d.source());
            matrix_text(d.size(), |i, j| d.get(i, j), &mut out);
        }
        None => {
            out.push_str("\nNUMA distances: none\n");
        }
    }

    let n = layout.workers();
    let _ = writeln!(out, "\nCost ({})", m.cost.source());
    if n <= 16 {
        matrix_text(n, |a, b| layout.cost(a, b), &mut out);
    } else {
        let _ = writeln!(out, "  {n}×{n} between workers; `--json` prints it");
    }

    let _ = writeln!(
        out,
        "\nWorkers: {n} (worker i on PU i), g0 = {}, places per {}{}",
        layout.group_level(),
        layout.place_level(),
        if layout.has_l2_sharing() {
            ", L2 shared"
        } else {
            ""
        }
    );
    for w in 0..n {
        let _ = writeln!(
            out,
            "  w{w:<4} PU {:<4} P#{:<4} node {:<3} place {}",
            layout.pu_of(w),
            topo.pu_os_index(layout.pu_of(w)),
            layout.node_of(w),
            layout.place_of(w)
        );
        let groups: Vec<String> = layout
            .groups(w)
            .iter()
            .enumerate()
            .map(|(i, g)| format!("g{i} [{}] ({})", ranges(g), g.len()))
            .collect();
        let _ = writeln!(out, "        groups: {}", groups.join("  "));
        let _ = writeln!(out, "        dist:   {}", ranges(layout.dist(w)));
    }

    out.push_str("\nNode order (numaNodesInDistanceOrder)\n");
    for node in 0..layout.node_count() {
        let order: Vec<String> = layout
            .node_order(node)
            .iter()
            .map(|&o| format!("{o} ({})", number(layout.numa_dist(node, o))))
            .collect();
        let _ = writeln!(
            out,
            "  node {node:<3} workers [{}]: {}",
            ranges(layout.workers_of_node(node)),
            if order.is_empty() {
                "-".to_owned()
            } else {
                order.join(", ")
            }
        );
    }

    let _ = writeln!(out, "\nPlaces (per {})", layout.place_level());
    for p in 0..layout.place_count() {
        let _ = writeln!(
            out,
            "  place {p:<3} workers [{}]",
            ranges(layout.workers_of_place(p))
        );
    }
    out
}

fn tree_json(topo: &Topology, id: usize) -> Value {
    let o = topo.object(id);
    let children: Vec<Value> = o.children.iter().map(|&c| tree_json(topo, c)).collect();
    json!({
        "type": o.level.name(),
        "index": o.index,
        "os_index": o.os_index,
        "size": o.size,
        "pus": o.pus,
        "children": children,
    })
}

fn to_json(m: &Model) -> Value {
    let (topo, layout) = (&m.topo, &m.layout);
    let n = layout.workers();
    let pus: Vec<Value> = (0..topo.pu_count())
        .map(|p| {
            let idx = |l: Level| topo.ancestor(p, l).map(|o| o.index);
            json!({
                "pu": p,
                "os_index": topo.pu_os_index(p),
                "numa": topo.numa_node_of(p),
                "package": idx(Level::Package),
                "l3": idx(Level::L3),
                "l2": idx(Level::L2),
                "l1": idx(Level::L1),
                "core": idx(Level::Core),
            })
        })
        .collect();
    let numa_nodes: Vec<Value> = (0..topo.numa_node_count())
        .map(|node| {
            let o = topo.numa_node(node);
            json!({
                "node": node,
                "os_index": o.os_index,
                "memory": o.size,
                "pus": o.pus,
                "workers": layout.workers_of_node(node),
                "order": layout.node_order(node),
                "numa_dist": (0..layout.node_count()).map(|j| layout.numa_dist(node, j)).collect::<Vec<_>>(),
            })
        })
        .collect();
    let distances = topo.numa_distances().map(|d| {
        json!({
            "source": d.source(),
            "matrix": (0..d.size()).map(|i| d.row(i).to_vec()).collect::<Vec<_>>(),
        })
    });
    let workers: Vec<Value> = (0..n)
        .map(|w| {
            json!({
                "worker": w,
                "pu": layout.pu_of(w),
                "os_index": topo.pu_os_index(layout.pu_of(w)),
                "node": layout.node_of(w),
                "place": layout.place_of(w),
                "groups": layout.groups(w),
                "dist": layout.dist(w),
            })
        })
        .collect();
    let places: Vec<Value> = (0..layout.place_count())
        .map(|p| json!({ "place": p, "workers": layout.workers_of_place(p) }))
        .collect();
    let levels: serde_json::Map<String, Value> = Level::ALL
        .iter()
        .map(|&l| (l.name().to_owned(), json!(topo.count(l))))
        .collect();
    let (auto_policy, auto_reason) = loka::policy::auto::choose(layout.node_count(), n);
    json!({
        "topology": topo.spec().to_string(),
        "description": topo.description(),
        "real": topo.is_real(),
        "pu_count": topo.pu_count(),
        "numa_node_count": topo.numa_node_count(),
        "worker_count": n,
        "levels": levels,
        "pus": pus,
        "numa_nodes": numa_nodes,
        "distances": distances,
        "tree": tree_json(topo, 0),
        "cost": {
            "source": m.cost.source(),
            "matrix": (0..n).map(|a| (0..n).map(|b| layout.cost(a, b)).collect::<Vec<_>>()).collect::<Vec<_>>(),
        },
        "group_level": layout.group_level().name(),
        "place_level": layout.place_level().name(),
        "has_l2_sharing": layout.has_l2_sharing(),
        "workers": workers,
        "node_order": (0..layout.node_count()).map(|i| layout.node_order(i).to_vec()).collect::<Vec<_>>(),
        "places": places,
        "auto_policy": { "chosen": auto_policy.to_string(), "reason": auto_reason },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(topology: &str) -> TopoArgs {
        TopoArgs {
            topology: topology.to_owned(),
            cost: None,
            invert_cost: false,
            workers: None,
            group_level: "numa".to_owned(),
            place_level: "package".to_owned(),
            json: false,
            export_xml: None,
            list_presets: false,
        }
    }

    #[test]
    fn ranges_collapse_runs() {
        assert_eq!(ranges(&[0, 1, 2, 3, 5, 7, 8]), "0-3,5,7-8");
        assert_eq!(ranges(&[2, 1, 0]), "2,1,0");
        assert_eq!(ranges(&[]), "-");
    }

    #[test]
    fn json_has_the_promised_fields() {
        let m = build(&args("preset:opteron6376")).unwrap();
        let v = to_json(&m);
        assert_eq!(v["pus"].as_array().unwrap().len(), 64);
        assert_eq!(v["numa_nodes"].as_array().unwrap().len(), 8);
        let w0 = &v["workers"][0];
        let sizes: Vec<usize> = w0["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g.as_array().unwrap().len())
            .collect();
        assert_eq!(sizes, vec![7, 39, 63]);
        assert_eq!(w0["dist"].as_array().unwrap().len(), 63);
    }

    #[test]
    fn text_shows_every_section() {
        let m = build(&args("preset:ring-4x2")).unwrap();
        let t = to_text(&m);
        for needle in [
            "Tree",
            "NUMA distances",
            "Workers: 8",
            "g2 [0-3,5-7] (7)",
            "Node order",
            "Places",
        ] {
            assert!(t.contains(needle), "missing {needle}:\n{t}");
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(build(&args("preset:nope")).is_err());
        assert!(build(&args("synthetic:pu:x")).is_err());
        assert!(build(&args("xml:/nonexistent.xml")).is_err());
        let mut a = args("preset:nehalem-2x4");
        a.workers = Some(9);
        assert!(build(&a).is_err());
        a.workers = Some(0);
        assert!(build(&a).is_err());
        let mut a = args("host");
        a.group_level = "core".to_owned();
        assert!(build(&a).is_err());
    }
}
