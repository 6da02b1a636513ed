//! `loka bench scale` (worker counts) and `loka bench policies` (policies and engines).

use crate::args::{check_repeat, CommonArgs, SystemArgs};
use crate::compare;
use crate::output::Output;
use anyhow::Result;
use loka::{Config, EngineKind, ExecMode, PolicyKind};
use loka_bench::format::human;
use loka_bench::record::Record;
use loka_bench::report::{ratio, Summary, NOISY_NOTE};
use loka_bench::{runner, Bench, Size};
use std::path::PathBuf;
use std::time::Duration;

/// `loka bench scale` arguments.
#[derive(clap::Args)]
pub struct ScaleArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Runs per benchmark and worker count.
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
    /// The largest worker count (default: the processing units the configuration has: the
    /// machine's, or the topology's).
    #[arg(long, conflicts_with = "worker_counts")]
    pub max_workers: Option<usize>,
    /// The worker counts to run, comma-separated (e.g. `1,2,4,8,16`), instead of every count
    /// from 1 to `--max-workers`: on a large machine the full sweep takes too long. The table's
    /// speed-up is over the smallest count listed.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub worker_counts: Option<Vec<usize>>,
    /// Peer runtimes (`peers/`) to run beside loka at every worker count, each on as many
    /// threads as loka has workers: comma-separated names, or `all` (default: none). `actix`
    /// runs from 2 threads, `actix-1thread` and `tokio-current-thread` at 1 only.
    #[arg(long, value_delimiter = ',')]
    pub peers: Option<Vec<String>>,
    /// The directory with run-peers.sh and the peers' builds (as for `compare`).
    #[arg(long)]
    pub peers_dir: Option<PathBuf>,
    /// Seconds after which a peer run still going fails (as for `compare`).
    #[arg(long, default_value_t = 300)]
    pub timeout: u64,
    /// Seconds after which a peer run still going is stopped as too slow (as for `compare`).
    #[arg(long, value_name = "SECS")]
    pub peer_cap: Option<u64>,
    #[command(flatten)]
    pub system: SystemArgs,
}

/// `loka bench policies` arguments.
#[derive(clap::Args)]
pub struct PoliciesArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Runs per benchmark, engine and policy.
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
    #[command(flatten)]
    pub system: SystemArgs,
}

/// The configurations `scale` sweeps: `base` with 1..=max workers, each validated.
pub fn scale_configs(base: &Config, max: usize) -> Result<Vec<Config>> {
    anyhow::ensure!(max >= 1, "--max-workers must be at least 1, got {max}");
    with_workers(base, 1..=max, "--max-workers")
}

/// The configurations `scale --worker-counts` sweeps: `base` with each count of `counts`, in
/// increasing order, each validated; a zero or a repeated count is refused.
pub fn listed_configs(base: &Config, counts: &[usize]) -> Result<Vec<Config>> {
    let mut sorted = counts.to_vec();
    sorted.sort_unstable();
    anyhow::ensure!(
        !sorted.is_empty() && sorted[0] >= 1,
        "--worker-counts: every count must be at least 1, got {counts:?}"
    );
    if let Some(pair) = sorted.windows(2).find(|pair| pair[0] == pair[1]) {
        anyhow::bail!("--worker-counts: {} is listed twice", pair[0]);
    }
    with_workers(base, sorted, "--worker-counts")
}

fn with_workers(
    base: &Config,
    counts: impl IntoIterator<Item = usize>,
    flag: &str,
) -> Result<Vec<Config>> {
    counts
        .into_iter()
        .map(|workers| {
            let config = Config {
                workers,
                ..base.clone()
            };
            config.validate(flag)?;
            Ok(config)
        })
        .collect()
}

/// A configuration `policies` leaves out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// `engine/policy`, with ` exec=MODE` when the mode is not all-task.
    pub what: String,
    /// Why it is left out.
    pub why: String,
}

/// What `policies` sweeps besides the policies ([`policy_sweep`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PolicySweep {
    /// The engines ([`sweep_engines`]).
    pub engines: Vec<EngineKind>,
    /// The execution mode every engine × policy pair runs under: `--exec`'s, else all-task.
    pub exec: ExecMode,
    /// The modes the Panini benchmarks run under besides, on the default policy of each engine
    /// that carries out execution policies: [`ExecMode::PANINI`], or `--exec`'s alone.
    pub panini_execs: Vec<ExecMode>,
    /// The places the workers form ([`loka::Machine::places`]); the LASSI benchmarks also run
    /// under `places:a` (mode A) from two places on.
    pub places: usize,
}

/// The name of a swept configuration: `engine/policy`, with ` exec=MODE` when the mode is not
/// all-task.
pub fn config_name(config: &Config) -> String {
    if config.exec == ExecMode::AllTask {
        format!("{}/{}", config.engine, config.policy)
    } else {
        format!("{}/{} exec={}", config.engine, config.policy, config.exec)
    }
}

/// `base` with `engine`, `policy` and `exec`, validated; `None` (with the reason in `skipped`)
/// when the engine cannot run the policy or the mode.
fn swept(
    base: &Config,
    engine: EngineKind,
    policy: PolicyKind,
    exec: ExecMode,
    skipped: &mut Vec<Skipped>,
) -> Result<Option<Config>> {
    let config = Config {
        engine,
        policy,
        exec,
        ..base.clone()
    };
    let why = if !engine.supports(policy) {
        "the engine does not support the policy"
    } else if exec != ExecMode::AllTask && !engine.runs_exec_policies() {
        "the engine runs every actor as a task, in no other execution mode"
    } else {
        config.validate("the policy sweep")?;
        return Ok(Some(config));
    };
    skipped.push(Skipped {
        what: config_name(&config),
        why: why.to_owned(),
    });
    Ok(None)
}

/// The configurations `policies` runs for every benchmark: `base` under every pair of `engines`
/// × policy ([`PolicyKind::ALL`]) that the engine supports, in `base`'s execution mode, each
/// validated. The pairs an engine cannot run are returned apart.
pub fn policy_configs(
    base: &Config,
    engines: &[EngineKind],
) -> Result<(Vec<Config>, Vec<Skipped>)> {
    let mut ok = Vec::new();
    let mut skipped = Vec::new();
    for &engine in engines {
        for &policy in PolicyKind::ALL {
            ok.extend(swept(base, engine, policy, base.exec, &mut skipped)?);
        }
    }
    Ok((ok, skipped))
}

/// The configurations `policies` runs for a benchmark of `suite`: those of [`policy_configs`]
/// (in `sweep.exec`), and besides
/// - `panini`: the default policy under each of `sweep.panini_execs` (Panini's comparison of
///   all-thread, all-task and auto; docs/exec-policies.md), on each engine that carries out
///   execution policies;
/// - `lassi`: `places:a` (mode A, a shared queue per place; docs/places.md) when the workers
///   form at least two places (with one, mode A is refused and left out, saying so).
pub fn bench_configs(
    base: &Config,
    sweep: &PolicySweep,
    suite: &str,
) -> Result<(Vec<Config>, Vec<Skipped>)> {
    let base = Config {
        exec: sweep.exec,
        ..base.clone()
    };
    let (mut ok, mut skipped) = policy_configs(&base, &sweep.engines)?;
    match suite {
        "panini" => {
            for &engine in &sweep.engines {
                for &exec in &sweep.panini_execs {
                    let policy = PolicyKind::default();
                    if exec == sweep.exec {
                        continue; // in the matrix already
                    }
                    ok.extend(swept(&base, engine, policy, exec, &mut skipped)?);
                }
            }
        }
        "lassi" => {
            let mode_a = PolicyKind::Places(loka::policy::PlacesMode::Shared);
            for &engine in &sweep.engines {
                if sweep.places < 2 && engine.supports(mode_a) {
                    skipped.push(Skipped {
                        what: config_name(&Config {
                            engine,
                            policy: mode_a,
                            ..base.clone()
                        }),
                        why: format!(
                            "mode A needs at least two places, and the workers form {} at place \
                             level `{}`",
                            sweep.places, base.place_level
                        ),
                    });
                    continue;
                }
                ok.extend(swept(&base, engine, mode_a, sweep.exec, &mut skipped)?);
            }
        }
        _ => {}
    }
    Ok((ok, skipped))
}

/// The engines `policies` sweeps: the one `--engine` names, else every engine that runs on the
/// real machine. The simulation engine's figures are predictions in virtual time: they are swept
/// only when asked for (`--engine sim`), never mixed into a table of measured ones.
pub fn sweep_engines(system: &SystemArgs, base: &Config) -> Vec<EngineKind> {
    if system.engine.is_some() {
        vec![base.engine]
    } else {
        EngineKind::ALL
            .iter()
            .copied()
            .filter(|e| e.is_real())
            .collect()
    }
}

/// What `policies` sweeps: the engines ([`sweep_engines`]); the execution modes, which it sweeps
/// itself as it does the engines (all-task for every pair, and [`ExecMode::PANINI`] for the
/// Panini benchmarks) unless `--exec` names one, which then runs alone; and the places `base`'s
/// workers form.
pub fn policy_sweep(system: &SystemArgs, base: &Config) -> Result<PolicySweep> {
    let (exec, panini_execs) = if system.exec.is_some() {
        (base.exec, vec![base.exec])
    } else {
        (ExecMode::AllTask, ExecMode::PANINI.to_vec())
    };
    Ok(PolicySweep {
        engines: sweep_engines(system, base),
        exec,
        panini_execs,
        places: loka::Machine::load(base)?.places(),
    })
}

/// Runs every benchmark `repeat` times under each of its configurations (`configs[i]` for
/// `benches[i]`), alternating configurations within a repetition; returns the records per
/// (benchmark, configuration).
fn sweep(
    out: &mut Output,
    benches: &[Bench],
    size: Size,
    configs: &[Vec<Config>],
    repeat: usize,
    prefix: &'static str,
) -> Result<Vec<Vec<Vec<Record>>>> {
    let runs: usize = configs.iter().map(Vec::len).sum::<usize>() * repeat;
    out.start(runs as u64, prefix);
    let mut failed = Vec::new();
    let mut all = Vec::new();
    for (bench, configs) in benches.iter().zip(configs) {
        let mut per_config = vec![Vec::new(); configs.len()];
        for r in 0..repeat {
            for (i, config) in configs.iter().enumerate() {
                out.progress_message(format!(
                    "{} {} w={}",
                    bench.name,
                    config_name(config),
                    config.workers
                ));
                let record = runner::run_once(bench, size, config, r)?;
                if !record.verified {
                    failed.push(format!(
                        "{} ({}, {} workers, run {r})",
                        bench.name,
                        config_name(config),
                        config.workers
                    ));
                }
                out.record(&record)?;
                per_config[i].push(record);
            }
        }
        all.push(per_config);
    }
    out.finish();
    anyhow::ensure!(
        failed.is_empty(),
        "verification failed: {}",
        failed.join(", ")
    );
    Ok(all)
}

fn summary(records: &[Record], key: fn(&Record) -> f64) -> Summary {
    let values: Vec<f64> = records.iter().map(key).collect();
    Summary::of(&values).unwrap_or(Summary {
        n: 0,
        median: f64::NAN,
        min: f64::NAN,
        max: f64::NAN,
    })
}

/// Runs `loka bench scale`.
pub fn scale(args: &ScaleArgs) -> Result<()> {
    let (benches, size) = args.common.resolve()?;
    check_repeat(args.repeat)?;
    anyhow::ensure!(
        args.system.workers.is_none(),
        "`loka bench scale` sweeps the worker count itself: use --max-workers N or \
         --worker-counts LIST instead of --workers"
    );
    let names = match &args.peers {
        Some(names) => compare::validate_peers(Some(names))?,
        None => Vec::new(),
    };
    anyhow::ensure!(args.timeout >= 1, "--timeout must be at least 1 second");
    anyhow::ensure!(
        args.peer_cap != Some(0),
        "--peer-cap must be at least 1 second"
    );
    let base = args.system.resolve()?;
    let configs = match &args.worker_counts {
        Some(counts) => listed_configs(&base, counts)?,
        None => scale_configs(&base, args.max_workers.unwrap_or(base.workers))?,
    };
    let results = if names.is_empty() {
        let mut out = Output::open(&args.common, true)?;
        let per_bench = vec![configs.clone(); benches.len()];
        let results = sweep(&mut out, &benches, size, &per_bench, args.repeat, "scale")?;
        (out, results)
    } else {
        scale_with_peers(args, &names, &benches, size, &configs)?
    };
    let (out, results) = results;
    if out.json() {
        return Ok(());
    }
    out.println(&scale_header())?;
    for (bench, per_config) in benches.iter().zip(&results) {
        let base = summary(&per_config[0], |r| r.msgs_per_sec);
        for (config, records) in configs.iter().zip(per_config) {
            out.println(&scale_row(
                bench.name,
                config.workers,
                &summary(records, |r| r.seconds),
                &summary(records, |r| r.msgs_per_sec),
                &base,
            ))?;
        }
    }
    out.println(NOISY_NOTE)?;
    Ok(())
}

/// `scale --peers`: at each worker count, loka and the peers that run there side by side, as
/// `compare` runs them (alternating within each repetition), with a `compare` table per count;
/// returns loka's records per benchmark and worker count for the speed-up table. Fails after
/// the whole sweep when a run failed, the other results kept.
fn scale_with_peers(
    args: &ScaleArgs,
    names: &[String],
    benches: &[Bench],
    size: Size,
    configs: &[Config],
) -> Result<(Output, Vec<Vec<Vec<Record>>>)> {
    let mut out = Output::open(&args.common, false)?;
    let mut results = vec![Vec::new(); benches.len()];
    let mut failures = Vec::new();
    for config in configs {
        let here: Vec<String> = names
            .iter()
            .filter(|n| compare::runs_at(n, config.workers))
            .cloned()
            .collect();
        let peers = compare::find_peers(&here, args.peers_dir.as_deref(), config.workers, &out);
        if !out.json() {
            out.println(&format!("\n{} worker(s)", config.workers))?;
        }
        let side_by_side = compare::SideBySide {
            size,
            config,
            peers: &peers,
            repeat: args.repeat,
            timeout: Duration::from_secs(args.timeout),
            cap: args.peer_cap.map(Duration::from_secs),
        };
        let (loka, failed) = side_by_side.run(&mut out, benches)?;
        for (per_bench, records) in results.iter_mut().zip(loka) {
            per_bench.push(records);
        }
        failures.extend(
            failed
                .into_iter()
                .map(|f| format!("{} worker(s): {f}", config.workers)),
        );
    }
    anyhow::ensure!(
        failures.is_empty(),
        "{} run(s) failed (the other results are kept):\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
    Ok((out, results))
}

/// The header of `scale`'s table.
pub fn scale_header() -> String {
    format!(
        "\n{:<22} {:>7} {:>10} {:>21} {:>13} {:>10}",
        "bench", "workers", "median s", "min–max s", "median msgs/s", "speed-up"
    )
}

/// One line of `scale`'s table: seconds, msgs/s and the speed-up (median msgs/s over that of
/// `base`, the 1-worker runs); `±` after a noisy median, and after a speed-up when either of
/// its medians is noisy.
pub fn scale_row(
    bench: &str,
    workers: usize,
    secs: &Summary,
    msgs: &Summary,
    base: &Summary,
) -> String {
    format!(
        "{:<22} {:>7} {:>10} {:>21} {:>13} {:>10}",
        bench,
        workers,
        format!("{:.4}{}", secs.median, secs.flag_aligned()),
        if secs.n > 1 {
            format!("{:.4} – {:.4}", secs.min, secs.max)
        } else {
            format!("{:.4}", secs.min)
        },
        format!("{}{}", human(msgs.median), msgs.flag_aligned()),
        ratio(msgs.median, base.median).map_or("n/a".into(), |r| format!(
            "{r:.2}×{}",
            if msgs.noisy() || base.noisy() {
                " ±"
            } else {
                "  "
            }
        ))
    )
}

/// The header of `policies`' table.
pub fn policy_header() -> String {
    format!(
        "\n{:<26} {:<32} {:<11} {:>13} {:>21} {:>11}",
        "bench", "engine/policy", "exec", "median msgs/s", "min–max msgs/s", "vs default"
    )
}

/// One line of `policies`' table: `±` after a noisy median msgs/s; `vs default` is its median
/// over that of the default configuration (`base`: the default engine, policy and execution
/// mode; under `--exec M`, the default engine and policy in mode M).
pub fn policy_row(bench: &str, config: &Config, s: &Summary, base: Option<f64>) -> String {
    format!(
        "{:<26} {:<32} {:<11} {:>13} {:>21} {:>11}",
        bench,
        format!("{}/{}", config.engine, config.policy),
        config.exec.name(),
        format!("{}{}", human(s.median), s.flag_aligned()),
        if s.n > 1 {
            format!("{} – {}", human(s.min), human(s.max))
        } else {
            human(s.min)
        },
        base.and_then(|b| ratio(s.median, b))
            .map_or("n/a".into(), |r| format!("{r:.2}×"))
    )
}

/// Runs `loka bench policies`.
pub fn policies(args: &PoliciesArgs) -> Result<()> {
    let (benches, size) = args.common.resolve()?;
    check_repeat(args.repeat)?;
    anyhow::ensure!(
        args.system.policy.is_none(),
        "`loka bench policies` runs every policy ({}): drop --policy (`loka bench run --policy \
         P` runs one)",
        PolicyKind::NAMES.join(", ")
    );
    let base = args.system.resolve()?;
    let plan = policy_sweep(&args.system, &base)?;
    let mut configs = Vec::new();
    let mut skipped: Vec<Skipped> = Vec::new();
    for bench in &benches {
        let (ok, left_out) = bench_configs(&base, &plan, bench.suite)?;
        anyhow::ensure!(
            !ok.is_empty(),
            "no configuration of {} to run: the engine runs none of them (skipped: {})",
            bench.name,
            left_out
                .iter()
                .map(|s| format!("{}: {}", s.what, s.why))
                .collect::<Vec<_>>()
                .join("; ")
        );
        for s in left_out {
            if !skipped.contains(&s) {
                skipped.push(s);
            }
        }
        configs.push(ok);
    }
    let mut out = Output::open(&args.common, true)?;
    let skipped = by_reason(&skipped);
    for (why, what) in &skipped {
        out.note(&format!("note: skipping {} ({why})", what.join(", ")));
    }
    let results = sweep(&mut out, &benches, size, &configs, args.repeat, "policies")?;
    if out.json() {
        return Ok(());
    }
    let default = Config::default();
    out.println(&policy_header())?;
    for ((bench, configs), per_config) in benches.iter().zip(&configs).zip(&results) {
        // The default configuration; under `--exec M`, the default engine and policy in M.
        let at = |exec: ExecMode| {
            configs.iter().position(|c| {
                c.engine == default.engine && c.policy == default.policy && c.exec == exec
            })
        };
        let base = at(default.exec)
            .or_else(|| at(plan.exec))
            .map(|i| summary(&per_config[i], |r| r.msgs_per_sec).median);
        for (config, records) in configs.iter().zip(per_config) {
            out.println(&policy_row(
                bench.name,
                config,
                &summary(records, |r| r.msgs_per_sec),
                base,
            ))?;
        }
    }
    out.println(NOISY_NOTE)?;
    for (why, what) in &skipped {
        out.println(&format!("\nskipped ({why}): {}", what.join(", ")))?;
    }
    Ok(())
}

/// The skipped configurations grouped by reason, in order of first appearance.
fn by_reason(skipped: &[Skipped]) -> Vec<(&str, Vec<&str>)> {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for s in skipped {
        match groups.iter_mut().find(|(why, _)| *why == s.why) {
            Some((_, what)) => what.push(&s.what),
            None => groups.push((&s.why, vec![&s.what])),
        }
    }
    groups
}

#[cfg(test)]
mod tests;
