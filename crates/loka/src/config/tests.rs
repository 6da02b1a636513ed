use super::*;

#[test]
fn toml_round_trip_and_defaults() {
    let c = Config::from_toml_str("workers = 3\n[idle]\nspin_us = 7\n", "test.toml").unwrap();
    assert_eq!(c.workers, 3);
    assert_eq!(c.idle.spin_us, 7);
    assert_eq!(c.idle.yield_us, IdleStrategy::default().yield_us);
    assert_eq!(c.policy, PolicyKind::Auto);
}

#[test]
fn malformed_toml_names_file_and_line() {
    let err = Config::from_toml_str("workers = = 2\n", "bad.toml").unwrap_err();
    let text = err.to_string();
    assert!(text.contains("bad.toml"), "{text}");
    assert!(text.contains("line 1"), "{text}");
}

#[test]
fn unknown_key_and_unknown_policy_are_rejected() {
    let err = Config::from_toml_str("wrokers = 2\n", "a.toml").unwrap_err();
    assert!(err.to_string().contains("wrokers"), "{err}");
    let err = Config::from_toml_str("policy = \"fifo\"\n", "a.toml").unwrap_err();
    assert!(err.to_string().contains("fifo"), "{err}");
}

#[test]
fn zero_workers_is_an_error_naming_the_key() {
    let err = Config::from_toml_str("workers = 0\n", "z.toml").unwrap_err();
    assert!(
        matches!(err, ConfigError::Invalid { key: "workers", .. }),
        "{err}"
    );
}

#[test]
fn message_centric_bad_input_names_the_key_and_the_file() {
    let err = Config::from_toml_str("[message_centric]\nqueues = 0\n", "mc.toml").unwrap_err();
    assert!(
        matches!(
            err,
            ConfigError::Invalid {
                key: "message_centric.queues",
                ..
            }
        ),
        "{err}"
    );
    let err = Config::from_toml_str("workers = 4\n[message_centric]\nqueues = 3\n", "mc.toml")
        .unwrap_err();
    assert!(
        err.to_string().contains("fewer queues than the 4 workers"),
        "{err}"
    );
    assert!(err.to_string().contains("mc.toml"), "{err}");
    let err =
        Config::from_toml_str("[message_centric]\nqueues_per_worker = 0\n", "mc.toml").unwrap_err();
    assert!(err.to_string().contains("queues_per_worker"), "{err}");
    let err =
        Config::from_toml_str("[message_centric]\nvictims = \"oldest\"\n", "mc.toml").unwrap_err();
    assert!(
        err.to_string()
            .contains("unknown victim selection `oldest`"),
        "{err}"
    );
    let err =
        Config::from_toml_str("[message_centric]\nqueue = \"tree\"\n", "mc.toml").unwrap_err();
    assert!(err.to_string().contains("mc.toml"), "{err}");
    // Bad environment input changes nothing.
    let mut c = Config::default();
    let before = c.clone();
    assert!(c
        .apply_vars(|k| (k == "LOKA_MC_VICTIMS").then(|| "bogus".to_owned()))
        .is_err());
    assert_eq!(c, before);
    let ok = Config::from_toml_str(
        "workers = 2\nengine = \"message-centric\"\n[message_centric]\nqueues = 5\nvictims = \"nearest\"\nqueue = \"list\"\n",
        "mc.toml",
    )
    .unwrap();
    assert_eq!(ok.message_centric.total_queues(2), 5);
    assert_eq!(ok.message_centric.victims, VictimSelection::Nearest);
    assert_eq!(ok.message_centric.queue, QueueKind::List);
    assert!(
        Config::from_toml_str(
            "engine = \"message-centric\"\npolicy = \"lgs\"\n",
            "mc.toml"
        )
        .is_err(),
        "the engine runs only cls and auto"
    );
}

/// The refusal of a message-centric queue count: names the key, the value, the source and the
/// allowed range.
fn assert_queue_count_refused(err: ConfigError, key: &str, value: &str, range: &str, source: &str) {
    let text = err.to_string();
    assert!(
        matches!(&err, ConfigError::Invalid { key: k, value: v, .. } if *k == key && v == value),
        "{key} = {value}: {text}"
    );
    assert!(
        text.starts_with(&format!("invalid {key} = `{value}` in {source}: "))
            && text.contains(&format!("(allowed: {range})")),
        "{key} = {value}: {text}"
    );
}

#[test]
fn message_centric_queue_counts_in_a_file_have_a_maximum() {
    let max = MessageCentricConfig::MAX_QUEUES_PER_WORKER;
    // At the bound: accepted.
    let ok = Config::from_toml_str(
        &format!("workers = 2\n[message_centric]\nqueues = {}\n", 2 * max),
        "q.toml",
    )
    .unwrap();
    assert_eq!(ok.message_centric.total_queues(2), 2 * max);
    Config::from_toml_str(
        &format!("[message_centric]\nqueues_per_worker = {max}\n"),
        "q.toml",
    )
    .unwrap();
    // Past it (TOML integers end at i64::MAX): each value the outside check ran.
    for value in [
        i64::MAX as u64,
        1_000_000_000,
        1_000_000,
        2 * max as u64 + 1,
    ] {
        let err = Config::from_toml_str(
            &format!("workers = 2\n[message_centric]\nqueues = {value}\n"),
            "q.toml",
        )
        .unwrap_err();
        let range = format!("2..={}", 2 * max);
        assert_queue_count_refused(
            err,
            "message_centric.queues",
            &value.to_string(),
            &range,
            "q.toml",
        );
    }
    for value in [i64::MAX as u64, max as u64 + 1] {
        let err = Config::from_toml_str(
            &format!("[message_centric]\nqueues_per_worker = {value}\n"),
            "q.toml",
        )
        .unwrap_err();
        let range = format!("1..={max}");
        assert_queue_count_refused(
            err,
            "message_centric.queues_per_worker",
            &value.to_string(),
            &range,
            "q.toml",
        );
    }
}

#[test]
fn message_centric_queue_counts_in_the_environment_have_a_maximum() {
    let max = MessageCentricConfig::MAX_QUEUES_PER_WORKER;
    for (name, key, value, range) in [
        (
            "LOKA_MC_QUEUES",
            "message_centric.queues",
            u64::MAX,
            format!("1..={max}"),
        ),
        (
            "LOKA_MC_QUEUES",
            "message_centric.queues",
            1_000_000_000,
            format!("1..={max}"),
        ),
        (
            "LOKA_MC_QUEUES",
            "message_centric.queues",
            1_000_000,
            format!("1..={max}"),
        ),
        (
            "LOKA_MC_QUEUES_PER_WORKER",
            "message_centric.queues_per_worker",
            u64::MAX,
            format!("1..={max}"),
        ),
        (
            "LOKA_MC_QUEUES_PER_WORKER",
            "message_centric.queues_per_worker",
            max as u64 + 1,
            format!("1..={max}"),
        ),
    ] {
        let mut c = Config::default();
        let before = c.clone();
        let err = c
            .apply_vars(|k| match k {
                "LOKA_WORKERS" => Some("1".to_owned()),
                k if k == name => Some(value.to_string()),
                _ => None,
            })
            .unwrap_err();
        assert_queue_count_refused(err, key, &value.to_string(), &range, "the environment");
        assert_eq!(c, before, "{name}={value} changed the configuration");
    }
    // At the bound: accepted.
    let mut c = Config::default();
    c.apply_vars(|k| match k {
        "LOKA_WORKERS" => Some("1".to_owned()),
        "LOKA_MC_QUEUES" => Some(max.to_string()),
        _ => None,
    })
    .unwrap();
    assert_eq!(c.message_centric.queues, Some(max));
}

#[test]
fn message_centric_queue_counts_from_code_have_a_maximum() {
    let max = MessageCentricConfig::MAX_QUEUES_PER_WORKER;
    let base = Config {
        workers: 1,
        engine: EngineKind::MessageCentric,
        ..Config::default()
    };
    for queues in [usize::MAX, 1_000_000_000, 1_000_000, max + 1] {
        let mut c = base.clone();
        c.message_centric.queues = Some(queues);
        let err = c.validate("the builder").unwrap_err();
        let range = format!("1..={max}");
        let value = queues.to_string();
        assert_queue_count_refused(err, "message_centric.queues", &value, &range, "the builder");
    }
    let mut c = base.clone();
    c.message_centric.queues_per_worker = usize::MAX;
    let err = c.validate("the builder").unwrap_err();
    let value = usize::MAX.to_string();
    let range = format!("1..={max}");
    assert_queue_count_refused(
        err,
        "message_centric.queues_per_worker",
        &value,
        &range,
        "the builder",
    );
    // Starting a system validates the same way, before anything is allocated (this one was a
    // "capacity overflow" panic).
    let mut c = base;
    c.message_centric.queues = Some(usize::MAX);
    let err = crate::System::builder().config(c).build().unwrap_err();
    let value = usize::MAX.to_string();
    assert_queue_count_refused(
        err,
        "message_centric.queues",
        &value,
        &range,
        "the configuration",
    );
}

#[test]
fn env_overrides_and_bad_env_changes_nothing() {
    let mut c = Config::default();
    c.apply_vars(|k| (k == "LOKA_WORKERS").then(|| "5".to_owned()))
        .unwrap();
    assert_eq!(c.workers, 5);
    let before = c.clone();
    let err = c
        .apply_vars(|k| match k {
            "LOKA_THROUGHPUT" => Some("9".to_owned()),
            "LOKA_WORKERS" => Some("many".to_owned()),
            _ => None,
        })
        .unwrap_err();
    assert!(err.to_string().contains("LOKA_WORKERS"), "{err}");
    assert_eq!(
        c, before,
        "a bad variable leaves the configuration unchanged"
    );
}

#[test]
fn non_positive_balance_threshold_is_rejected() {
    for bad in ["0", "-1.5", "0.0"] {
        let err =
            Config::from_toml_str(&format!("balance_threshold = {bad}\n"), "b.toml").unwrap_err();
        assert!(
            matches!(
                err,
                ConfigError::Invalid {
                    key: "balance_threshold",
                    ..
                }
            ),
            "{bad}: {err}"
        );
    }
}

#[test]
fn engine_names_round_trip_and_unknown_engine_is_named() {
    for &engine in EngineKind::ALL {
        assert_eq!(engine.name().parse::<EngineKind>().unwrap(), engine);
        let c = Config::from_toml_str(&format!("engine = \"{engine}\"\n"), "e.toml").unwrap();
        assert_eq!(c.engine, engine);
    }
    let err = Config::from_toml_str("engine = \"warp-drive\"\n", "e.toml").unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("warp-drive") && text.contains("actor-centric"),
        "{text}"
    );
    let mut c = Config::default();
    let before = c.clone();
    let err = c
        .apply_vars(|k| (k == "LOKA_ENGINE").then(|| "warp-drive".to_owned()))
        .unwrap_err();
    assert!(err.to_string().contains("LOKA_ENGINE"), "{err}");
    assert_eq!(c, before);
}

#[test]
fn unsupported_pair_names_engine_and_policy() {
    let err = ConfigError::Unsupported {
        engine: EngineKind::ActorCentric,
        policy: PolicyKind::Cls,
        source_name: "x.toml".into(),
    };
    let text = err.to_string();
    assert!(
        text.contains("`actor-centric`") && text.contains("`cls`"),
        "{text}"
    );
    // Every engine that claims a policy must accept it in validation.
    for &engine in EngineKind::ALL {
        for &policy in PolicyKind::ALL {
            let c = Config {
                engine,
                policy,
                ..Config::default()
            };
            assert_eq!(
                c.validate("t").is_ok(),
                engine.supports(policy),
                "{engine}/{policy}"
            );
        }
    }
}

/// The error's message, then each cause of its source chain, as anyhow's `{:#}` (the `loka`
/// command's error line) prints them.
fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut next = err.source();
    while let Some(e) = next {
        text = format!("{text}: {e}");
        next = e.source();
    }
    text
}

#[test]
fn missing_file_names_the_path_and_the_reason_once() {
    let err = Config::from_file("/nonexistent/loka.toml").unwrap_err();
    let cause = std::fs::read_to_string("/nonexistent/loka.toml")
        .unwrap_err()
        .to_string();
    let text = err.to_string();
    assert!(
        text.contains("/nonexistent/loka.toml") && text.contains(&cause),
        "{text}"
    );
    assert_eq!(chain(&err).matches(&cause).count(), 1, "{}", chain(&err));
}

#[test]
fn topology_errors_say_why() {
    for (topology, workers, reason) in [
        ("preset:nope", 1, "unknown preset `nope`"),
        (
            "synthetic:core:2 pu:1",
            3,
            "3 workers requested but topology `synthetic:core:2 pu:1` has only 2 PUs",
        ),
    ] {
        let config = Config {
            workers,
            topology: topology.to_owned(),
            ..Config::default()
        };
        let err = crate::Machine::load(&config).unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(err, ConfigError::Topology { .. })
                && text.starts_with(&format!("topology `{topology}`: "))
                && text.contains(reason),
            "{text}"
        );
        assert_eq!(chain(&err).matches(reason).count(), 1, "{}", chain(&err));
    }
}

#[test]
fn idle_phases_are_capped_at_one_second() {
    let limit = IdleStrategy::MAX_US;
    assert_eq!(limit, 1_000_000);
    for key in ["spin_us", "yield_us"] {
        let ok = Config::from_toml_str(&format!("[idle]\n{key} = {limit}\n"), "i.toml");
        assert!(ok.is_ok(), "{key} = {limit}: {ok:?}");
        let err = Config::from_toml_str(&format!("[idle]\n{key} = {}\n", limit + 1), "i.toml")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "invalid idle.{key} = `1000001` in i.toml: at most 1000000 µs (1 s): an idle \
                 worker that long without work should sleep"
            )
        );
    }
    // The value that made idle workers never sleep, from code.
    let mut c = Config::default();
    c.idle.yield_us = u64::MAX;
    let err = c.validate("the builder").unwrap_err();
    assert!(
        err.to_string().starts_with(&format!(
            "invalid idle.yield_us = `{}` in the builder",
            u64::MAX
        )),
        "{err}"
    );
    // From the environment: refused, naming the key, and nothing changes.
    let mut c = Config::default();
    let before = c.clone();
    let err = c
        .apply_vars(|k| (k == "LOKA_IDLE_SPIN_US").then(|| u64::MAX.to_string()))
        .unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(
            err,
            ConfigError::Invalid {
                key: "idle.spin_us",
                ..
            }
        ) && text.contains("in the environment")
            && text.contains("1000000 µs"),
        "{text}"
    );
    assert_eq!(c, before);
}

#[test]
fn stall_guard_bounds_name_the_key_and_its_range_from_every_source() {
    // The defaults and the edges of each range are accepted.
    let ok = Config::from_toml_str(
        "[stall]\nguard = false\nslot_us = 1\ntick_us = 100\npromote = false\n",
        "s.toml",
    )
    .unwrap();
    assert_eq!(
        (ok.stall.guard, ok.stall.slot_us, ok.stall.tick_us),
        (false, 1, 100)
    );
    assert!(Config::from_toml_str("[stall]\nslot_us = 1000000\ntick_us = 1000000\n", "s").is_ok());
    // Zero and absurd values, in a file: one line naming the key and its range.
    for (toml, key, range) in [
        ("slot_us = 0", "stall.slot_us", "between 1 and 1000000 µs"),
        (
            "slot_us = 1000001",
            "stall.slot_us",
            "between 1 and 1000000 µs",
        ),
        ("tick_us = 0", "stall.tick_us", "between 100 and 1000000 µs"),
        (
            "tick_us = 99",
            "stall.tick_us",
            "between 100 and 1000000 µs",
        ),
        (
            "tick_us = 9223372036854775807",
            "stall.tick_us",
            "between 100 and 1000000 µs",
        ),
    ] {
        let err = Config::from_toml_str(&format!("[stall]\n{toml}\n"), "s.toml").unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with(&format!("invalid {key} = `"))
                && text.contains("in s.toml")
                && text.contains(range)
                && !text.contains('\n'),
            "{toml}: {text}"
        );
    }
    // From code.
    let mut c = Config::default();
    c.stall.slot_us = 0;
    let err = c.validate("the builder").unwrap_err();
    assert!(
        matches!(
            err,
            ConfigError::Invalid {
                key: "stall.slot_us",
                ..
            }
        ),
        "{err}"
    );
    // From the environment: refused, naming the key, and nothing changes.
    let mut c = Config::default();
    let before = c.clone();
    let err = c
        .apply_vars(|k| (k == "LOKA_STALL_TICK_US").then(|| "0".to_owned()))
        .unwrap_err();
    assert!(
        matches!(
            err,
            ConfigError::Invalid {
                key: "stall.tick_us",
                ..
            }
        ) && err.to_string().contains("in the environment"),
        "{err}"
    );
    assert_eq!(c, before);
    let mut c = Config::default();
    c.apply_vars(|k| (k == "LOKA_STALL_GUARD").then(|| "false".to_owned()))
        .unwrap();
    assert!(!c.stall.guard);
}

#[test]
fn execution_mode_and_places_bad_input_names_the_value() {
    // An unknown mode, in a file and in the environment (which then changes nothing).
    let err = Config::from_toml_str("exec = \"all-fibers\"\n", "x.toml").unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("all-fibers") && text.contains("x.toml"),
        "{text}"
    );
    let mut c = Config::default();
    let before = c.clone();
    let err = c
        .apply_vars(|k| (k == "LOKA_EXEC").then(|| "fibers".to_owned()))
        .unwrap_err();
    assert!(err.to_string().contains("LOKA_EXEC"), "{err}");
    assert_eq!(c, before);
    // A mode other than all-task under an engine that runs every actor as a task.
    for engine in ["sim", "message-centric"] {
        let err = Config::from_toml_str(
            &format!("engine = \"{engine}\"\nexec = \"auto\"\npolicy = \"cls\"\n"),
            "e.toml",
        )
        .unwrap_err();
        assert!(
            matches!(err, ConfigError::Invalid { key: "exec", .. })
                && err.to_string().contains(engine),
            "{err}"
        );
    }
    // An unknown place level and an unknown places mode.
    let err = Config::from_toml_str("place_level = \"rack\"\n", "p.toml").unwrap_err();
    assert!(err.to_string().contains("rack"), "{err}");
    let err = Config::from_toml_str("policy = \"places:c\"\n", "p.toml").unwrap_err();
    assert!(err.to_string().contains("places:c"), "{err}");
    // Good values.
    let c = Config::from_toml_str(
        "exec = \"auto\"\nplace_level = \"numa\"\npolicy = \"places\"\n",
        "ok.toml",
    )
    .unwrap();
    assert_eq!(c.exec, crate::ExecMode::Auto);
    assert_eq!(c.place_level, loka_topology::PlaceLevel::Numa);
}

#[test]
fn handler_sampling_outside_its_range_names_the_key_from_every_source() {
    let ok = Config::from_toml_str("handler_sample_us = 250\n", "h.toml").unwrap();
    assert_eq!(ok.handler_sample_us, 250);
    assert_eq!(Config::default().handler_sample_us, 0, "off by default");
    let err = Config::from_toml_str("handler_sample_us = 10\n", "h.toml").unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid handler_sample_us = `10` in h.toml: 0 (off) or 100..=1000000 µs: more often, the \
         sampling thread itself becomes a load; less often than once a second, it learns nothing"
    );
    let mut c = Config::default();
    let before = c.clone();
    for bad in ["2000000", "often"] {
        let err = c
            .apply_vars(|k| (k == "LOKA_HANDLER_SAMPLE_US").then(|| bad.to_owned()))
            .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("handler_sample_us") && text.contains(bad),
            "{text}"
        );
        assert_eq!(c, before, "a refused value changes nothing");
    }
    c.apply_vars(|k| (k == "LOKA_HANDLER_SAMPLE_US").then(|| "1000".to_owned()))
        .unwrap();
    assert_eq!(c.handler_sample_us, 1000);
}
