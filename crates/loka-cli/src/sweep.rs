//! `loka bench scale` (worker counts) and `loka bench policies` (policies and engines).

use crate::args::{check_repeat, CommonArgs, SystemArgs};
use crate::output::Output;
use anyhow::Result;
use loka::{Config, EngineKind, PolicyKind};
use loka_bench::record::Record;
use loka_bench::report::charts::human;
use loka_bench::report::{ratio, Summary, NOISY_NOTE};
use loka_bench::{runner, Bench, Size};

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
    #[arg(long)]
    pub max_workers: Option<usize>,
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
    (1..=max)
        .map(|workers| {
            let config = Config {
                workers,
                ..base.clone()
            };
            config.validate("--max-workers")?;
            Ok(config)
        })
        .collect()
}

/// The configurations `policies` runs: `base` under every pair of `engines` × policy that the
/// engine supports, each validated. The pairs an engine does not support are returned apart, as
/// `engine/policy` names.
pub fn policy_configs(base: &Config, engines: &[EngineKind]) -> Result<(Vec<Config>, Vec<String>)> {
    let mut ok = Vec::new();
    let mut skipped = Vec::new();
    for &engine in engines {
        for &policy in PolicyKind::ALL {
            if !engine.supports(policy) {
                skipped.push(format!("{engine}/{policy}"));
                continue;
            }
            let config = Config {
                engine,
                policy,
                ..base.clone()
            };
            config.validate("the policy sweep")?;
            ok.push(config);
        }
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

/// Runs every benchmark `repeat` times under each configuration, alternating configurations
/// within a repetition; returns the records per (benchmark, configuration).
fn sweep(
    out: &mut Output,
    benches: &[Bench],
    size: Size,
    configs: &[Config],
    repeat: usize,
    prefix: &'static str,
) -> Result<Vec<Vec<Vec<Record>>>> {
    out.start((benches.len() * configs.len() * repeat) as u64, prefix);
    let mut failed = Vec::new();
    let mut all = Vec::new();
    for bench in benches {
        let mut per_config = vec![Vec::new(); configs.len()];
        for r in 0..repeat {
            for (i, config) in configs.iter().enumerate() {
                out.progress_message(format!(
                    "{} {}/{} w={}",
                    bench.name, config.engine, config.policy, config.workers
                ));
                let record = runner::run_once(bench, size, config, r)?;
                if !record.verified {
                    failed.push(format!(
                        "{} ({}/{}, {} workers, run {r})",
                        bench.name, config.engine, config.policy, config.workers
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
        "`loka bench scale` sweeps the worker count itself: use --max-workers N instead of \
         --workers"
    );
    let base = args.system.resolve()?;
    let configs = scale_configs(&base, args.max_workers.unwrap_or(base.workers))?;
    let mut out = Output::open(&args.common, true)?;
    let results = sweep(&mut out, &benches, size, &configs, args.repeat, "scale")?;
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
        "\n{:<22} {:<32} {:>13} {:>21} {:>11}",
        "bench", "engine/policy", "median msgs/s", "min–max msgs/s", "vs default"
    )
}

/// One line of `policies`' table: `±` after a noisy median msgs/s; `vs default` is its median
/// over the default policy's (`base`).
pub fn policy_row(bench: &str, pair: &str, s: &Summary, base: Option<f64>) -> String {
    format!(
        "{:<22} {:<32} {:>13} {:>21} {:>11}",
        bench,
        pair,
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
    let (configs, skipped) = policy_configs(&base, &sweep_engines(&args.system, &base))?;
    anyhow::ensure!(
        !configs.is_empty(),
        "no engine/policy pair to run: the engine supports none of them (skipped: {})",
        skipped.join(", ")
    );
    let mut out = Output::open(&args.common, true)?;
    for pair in &skipped {
        out.note(&format!(
            "note: skipping {pair}: the engine does not support the policy"
        ));
    }
    let results = sweep(&mut out, &benches, size, &configs, args.repeat, "policies")?;
    if out.json() {
        return Ok(());
    }
    let default = Config::default();
    out.println(&policy_header())?;
    for (bench, per_config) in benches.iter().zip(&results) {
        let base = configs
            .iter()
            .position(|c| c.engine == default.engine && c.policy == default.policy)
            .map(|i| summary(&per_config[i], |r| r.msgs_per_sec).median);
        for (config, records) in configs.iter().zip(per_config) {
            out.println(&policy_row(
                bench.name,
                &format!("{}/{}", config.engine, config.policy),
                &summary(records, |r| r.msgs_per_sec),
                base,
            ))?;
        }
    }
    out.println(NOISY_NOTE)?;
    if !skipped.is_empty() {
        out.println(&format!(
            "\nskipped (the engine does not support the policy): {}",
            skipped.join(", ")
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_supported_engine_policy_pair_is_swept_and_the_rest_skipped() {
        let (configs, skipped) = policy_configs(&Config::default(), EngineKind::ALL).unwrap();
        for &engine in EngineKind::ALL {
            for &policy in PolicyKind::ALL {
                let swept = configs
                    .iter()
                    .any(|c| c.engine == engine && c.policy == policy);
                let named = skipped.contains(&format!("{engine}/{policy}"));
                assert_eq!(swept, engine.supports(policy), "{engine}/{policy} swept");
                assert_eq!(named, !engine.supports(policy), "{engine}/{policy} skipped");
            }
        }
        assert_eq!(
            configs.len() + skipped.len(),
            EngineKind::ALL.len() * PolicyKind::ALL.len()
        );
    }

    #[test]
    fn engine_flag_narrows_the_policy_sweep_to_that_engine() {
        let mut system = SystemArgs {
            workers: Some(1),
            policy: None,
            engine: None,
            topology: None,
            cost: None,
            config: None,
            victims: None,
            queues: None,
            queue_kind: None,
            exec: None,
            place_level: None,
        };
        let base = system.resolve().unwrap();
        // Without the flag: every real engine, never the simulation's predictions.
        let real: Vec<_> = EngineKind::ALL
            .iter()
            .copied()
            .filter(|e| e.is_real())
            .collect();
        assert_eq!(sweep_engines(&system, &base), real);
        assert!(!real.contains(&EngineKind::Sim));
        for engine in [EngineKind::ActorCentric, EngineKind::Sim] {
            system.engine = Some(engine.name().to_owned());
            let base = system.resolve().unwrap();
            let engines = sweep_engines(&system, &base);
            assert_eq!(engines, [engine]);
            let (configs, _) = policy_configs(&base, &engines).unwrap();
            assert!(configs.iter().all(|c| c.engine == engine));
        }
    }

    #[test]
    fn a_median_with_a_spread_over_ten_percent_is_flagged() {
        let of = |v: [f64; 3]| Summary::of(&v).unwrap();
        // Median 100M msgs/s: 95M–104M is a 9% spread, 94M–105M an 11% one.
        let calm = policy_row("fib", "actor-centric/cls", &of([95e6, 100e6, 104e6]), None);
        let noisy = policy_row("fib", "actor-centric/cls", &of([94e6, 100e6, 105e6]), None);
        assert!(!calm.contains('±'), "{calm}");
        assert!(noisy.contains("100M ±"), "{noisy}");
        assert_eq!(calm.chars().count(), noisy.chars().count());
        assert_eq!(
            policy_header().trim_start().chars().count(),
            noisy.chars().count()
        );
        // scale: 0.095–0.104 s around 0.1 s is a 9% spread, 0.094–0.105 s an 11% one.
        let msgs = of([1e7, 1e7, 1e7]);
        let calm = scale_row("fib", 2, &of([0.095, 0.1, 0.104]), &msgs, &msgs);
        let noisy = scale_row("fib", 2, &of([0.094, 0.1, 0.105]), &msgs, &msgs);
        assert!(!calm.contains('±'), "{calm}");
        assert!(noisy.contains("0.1000 ±"), "{noisy}");
        // A speed-up over a noisy 1-worker median carries the flag too.
        let row = scale_row(
            "fib",
            2,
            &of([0.1; 3]),
            &of([2e7; 3]),
            &of([9e6, 1e7, 1.2e7]),
        );
        assert!(row.contains("2.00× ±"), "{row}");
        assert_eq!(
            scale_header().trim_start().chars().count(),
            row.chars().count()
        );
    }

    #[test]
    fn scale_counts_from_one_worker() {
        let configs = scale_configs(&Config::default(), 3).unwrap();
        let workers: Vec<usize> = configs.iter().map(|c| c.workers).collect();
        assert_eq!(workers, [1, 2, 3]);
        assert!(scale_configs(&Config::default(), 0).is_err());
    }
}
