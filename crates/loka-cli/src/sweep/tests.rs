use super::*;

fn system_args() -> SystemArgs {
    SystemArgs {
        workers: Some(1),
        policy: None,
        engine: None,
        topology: None,
        cost: None,
        config: None,
        victims: None,
        queues: None,
        queue_kind: None,
        follow: None,
        exec: None,
        place_level: None,
        observe: None,
        handler_sample_us: None,
    }
}

/// The names of configurations, as the table and the notes give them.
fn names(configs: &[Config]) -> Vec<String> {
    configs.iter().map(config_name).collect()
}

#[test]
fn every_supported_engine_policy_pair_is_swept_and_the_rest_skipped() {
    let (configs, skipped) = policy_configs(&Config::default(), EngineKind::ALL).unwrap();
    for &engine in EngineKind::ALL {
        for &policy in PolicyKind::ALL {
            let swept = configs
                .iter()
                .any(|c| c.engine == engine && c.policy == policy);
            let named = skipped
                .iter()
                .any(|s| s.what == format!("{engine}/{policy}"));
            assert_eq!(swept, engine.supports(policy), "{engine}/{policy} swept");
            assert_eq!(named, !engine.supports(policy), "{engine}/{policy} skipped");
        }
    }
    assert_eq!(
        configs.len() + skipped.len(),
        EngineKind::ALL.len() * PolicyKind::ALL.len()
    );
    assert!(configs.iter().all(|c| c.exec == ExecMode::AllTask));
}

#[test]
fn engine_flag_narrows_the_policy_sweep_to_that_engine() {
    let mut system = system_args();
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
fn panini_benchmarks_also_run_the_three_execution_modes_on_the_actor_centric_engine() {
    let system = system_args();
    let base = system.resolve().unwrap();
    let plan = policy_sweep(&system, &base).unwrap();
    assert_eq!(plan.exec, ExecMode::AllTask);
    assert_eq!(plan.panini_execs, ExecMode::PANINI);
    let (matrix, _) = bench_configs(&base, &plan, "savina").unwrap();
    assert!(matrix.iter().all(|c| c.exec == ExecMode::AllTask));
    let (panini, skipped) = bench_configs(&base, &plan, "panini").unwrap();
    // The policy matrix, plus all-thread and auto on the default policy (all-task's run of
    // it is the matrix's own).
    assert_eq!(&panini[..matrix.len()], &matrix[..]);
    let extra = &panini[matrix.len()..];
    assert_eq!(
        names(extra),
        [
            "actor-centric/auto exec=all-thread",
            "actor-centric/auto exec=auto"
        ]
    );
    for mode in ExecMode::PANINI {
        let runs: Vec<_> = panini
            .iter()
            .filter(|c| {
                c.exec == mode
                    && c.engine == EngineKind::ActorCentric
                    && c.policy == PolicyKind::default()
            })
            .collect();
        assert_eq!(runs.len(), 1, "{mode}");
    }
    // The engines that run every actor as a task are named with the reason.
    for skip in skipped
        .iter()
        .filter(|s| s.what.starts_with("message-centric/") && s.what.contains("exec="))
    {
        assert!(skip.why.contains("as a task"), "{skip:?}");
    }
    assert!(skipped
        .iter()
        .any(|s| s.what == "message-centric/auto exec=all-thread"));
}

#[test]
fn exec_flag_runs_that_mode_alone_where_an_engine_can() {
    let mut system = system_args();
    system.exec = Some("auto".into());
    let base = system.resolve().unwrap();
    let plan = policy_sweep(&system, &base).unwrap();
    assert_eq!(
        (plan.exec, plan.panini_execs.clone()),
        (ExecMode::Auto, vec![ExecMode::Auto])
    );
    let (configs, skipped) = bench_configs(&base, &plan, "panini").unwrap();
    assert!(!configs.is_empty());
    assert!(configs
        .iter()
        .all(|c| c.exec == ExecMode::Auto && c.engine == EngineKind::ActorCentric));
    // The message-centric engine cannot: skipped, not an error.
    assert!(skipped
        .iter()
        .any(|s| s.what == "message-centric/cls exec=auto" && s.why.contains("as a task")));
    // Under the simulation engine alone, nothing can run in that mode.
    system.engine = Some("sim".into());
    let base = system.resolve();
    assert!(base.is_err(), "sim refuses exec=auto at resolve time");
}

#[test]
fn lassi_benchmarks_add_places_mode_a_from_two_places() {
    let system = system_args();
    let base = system.resolve().unwrap();
    let mode_a = PolicyKind::Places(loka::policy::PlacesMode::Shared);
    assert!(!PolicyKind::ALL.contains(&mode_a));
    let mut plan = policy_sweep(&system, &base).unwrap();
    // One place (a one-package machine): left out, saying why.
    plan.places = 1;
    let (configs, skipped) = bench_configs(&base, &plan, "lassi").unwrap();
    assert!(configs.iter().all(|c| c.policy != mode_a));
    let skip = skipped
        .iter()
        .find(|s| s.what == "actor-centric/places:a")
        .expect("places:a named");
    assert!(
        skip.why.contains("two places") && skip.why.contains("form 1"),
        "{skip:?}"
    );
    // Two places: on every engine that supports it (the actor-centric one).
    plan.places = 2;
    let (configs, skipped) = bench_configs(&base, &plan, "lassi").unwrap();
    let a: Vec<_> = configs.iter().filter(|c| c.policy == mode_a).collect();
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].engine, EngineKind::ActorCentric);
    assert!(skipped
        .iter()
        .any(|s| s.what == "message-centric/places:a" && s.why.contains("policy")));
    // Other suites never get it; mode B (`places`) is in every suite's matrix.
    let (savina, _) = bench_configs(&base, &plan, "savina").unwrap();
    assert!(savina.iter().all(|c| c.policy != mode_a));
    assert!(savina
        .iter()
        .any(|c| c.policy == PolicyKind::Places(loka::policy::PlacesMode::PerWorker)));
    // A machine of two packages, as the `places` policies see it.
    let mut system = system_args();
    system.topology = Some("synthetic:package:2 core:1 pu:1".into());
    system.workers = Some(2);
    match system.resolve() {
        Ok(base) => {
            let plan = policy_sweep(&system, &base).unwrap();
            assert_eq!(plan.places, 2);
            let (configs, _) = bench_configs(&base, &plan, "lassi").unwrap();
            assert!(configs.iter().any(|c| c.policy == mode_a));
        }
        Err(e) => panic!("synthetic topology: {e}"),
    }
}

#[test]
fn a_median_with_a_spread_over_ten_percent_is_flagged() {
    let of = |v: [f64; 3]| Summary::of(&v).unwrap();
    let cls = Config {
        policy: PolicyKind::Cls,
        ..Config::default()
    };
    // Median 100M msgs/s: 95M–104M is a 9% spread, 94M–105M an 11% one.
    let calm = policy_row("fib", &cls, &of([95e6, 100e6, 104e6]), None);
    let noisy = policy_row("fib", &cls, &of([94e6, 100e6, 105e6]), None);
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
fn the_policy_table_shows_the_execution_mode() {
    let s = Summary::of(&[2e6]).unwrap();
    let thread = Config {
        exec: ExecMode::AllThread,
        ..Config::default()
    };
    let row = policy_row("panini-bang", &thread, &s, Some(4e6));
    assert!(
        row.contains("actor-centric/auto") && row.contains(" all-thread ") && row.contains("0.50×"),
        "{row}"
    );
    let row = policy_row("panini-bang", &Config::default(), &s, Some(2e6));
    assert!(row.contains(" all-task ") && row.contains("1.00×"), "{row}");
    assert!(policy_header().contains(" exec "));
    assert_eq!(config_name(&thread), "actor-centric/auto exec=all-thread");
    assert_eq!(config_name(&Config::default()), "actor-centric/auto");
}

#[test]
fn scale_counts_from_one_worker() {
    let configs = scale_configs(&Config::default(), 3).unwrap();
    let workers: Vec<usize> = configs.iter().map(|c| c.workers).collect();
    assert_eq!(workers, [1, 2, 3]);
    assert!(scale_configs(&Config::default(), 0).is_err());
}

#[test]
fn scale_runs_listed_counts_in_order_and_refuses_zero_or_repeats() {
    let configs = listed_configs(&Config::default(), &[4, 1, 2]).unwrap();
    let workers: Vec<usize> = configs.iter().map(|c| c.workers).collect();
    assert_eq!(workers, [1, 2, 4]);
    let zero = listed_configs(&Config::default(), &[0, 2]).unwrap_err();
    assert!(zero.to_string().contains("--worker-counts"), "{zero}");
    let twice = listed_configs(&Config::default(), &[2, 4, 2]).unwrap_err();
    assert!(twice.to_string().contains("2 is listed twice"), "{twice}");
}
