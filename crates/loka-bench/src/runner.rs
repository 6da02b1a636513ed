//! Runs workloads under a configuration and turns them into [`Record`]s.

use crate::record::Record;
use crate::{Bench, Size};
use loka::{Config, System};

/// How long a simulated run may take to settle after its result (host time).
fn run_quiescence_limit() -> std::time::Duration {
    std::time::Duration::from_secs(30)
}

/// Runs `bench` once on a fresh system built from `config`.
pub fn run_once(
    bench: &Bench,
    size: Size,
    config: &Config,
    repeat: usize,
) -> Result<Record, crate::BenchError> {
    run_once_as(bench, crate::Run::new(size), config, repeat)
}

/// [`run_once`] with the run spelled out: a timeout other than the size's default (a
/// simulation of a full size can need more than 600 s of CPU).
pub fn run_once_as(
    bench: &Bench,
    run: crate::Run,
    config: &Config,
    repeat: usize,
) -> Result<Record, crate::BenchError> {
    let size = run.size;
    let mut config = config.clone();
    if !config.engine.is_real() {
        // Every benchmark waits on the system (`await_result`, `run_until_idle`): only those
        // waits fold its setup into the simulation, so a slow setup is never split in two.
        config.sim.quiet_ms = 0;
    }
    let config = &config;
    let system = System::from_config(config.clone())?;
    let measured = (bench.run)(&system, &run);
    if !config.engine.is_real() {
        // The simulation's figures are those of the whole run: let it reach quiescence (actors
        // stopping after the result was sent) so that virtual time and trace hash do not depend
        // on when this thread woke up.
        system.run_until_idle_timeout(run_quiescence_limit());
    }
    // Counters as the run left them (the system is shut down right after).
    let stats = system.stats();
    system.shutdown();
    let host_seconds = measured.elapsed.as_secs_f64();
    let virtual_seconds = stats.sim.map(|s| s.virtual_ns as f64 * 1e-9);
    let seconds = virtual_seconds.unwrap_or(host_seconds);
    let mut telemetry = serde_json::to_value(&stats.total).unwrap_or_default();
    if let serde_json::Value::Object(map) = &mut telemetry {
        for (key, value) in [
            ("actors_spawned", stats.actors_spawned),
            ("dead_letters", stats.dead_letters),
            // Bounded mailboxes (docs/bounded-mailboxes.md).
            ("mailbox_full", stats.mailbox_full),
            ("overflow_dropped", stats.overflow_dropped),
            ("panics", stats.panics),
            ("unparks", stats.unparks),
            ("external_sends", stats.external_sends),
            // Hubs marked anywhere, plain-thread spawns included.
            ("hubs", stats.hubs),
            // Francesquini's name: activations outside the actor's home node.
            ("foreign_exec", stats.total.exec_remote_node),
            // Execution policies (docs/exec-policies.md).
            ("dedicated_threads", stats.dedicated_threads),
            ("promoted_to_thread", stats.promoted_to_thread),
            ("monitor_cycles", stats.monitor_cycles),
            ("mapped_online", stats.mapped_online),
            ("seq_demotions", stats.seq_demotions),
        ] {
            map.insert(key.to_owned(), value.into());
        }
        map.insert("check".to_owned(), measured.check.clone().into());
        if let Some(sim) = stats.sim {
            map.insert("sim_events".to_owned(), sim.events.into());
            map.insert(
                "sim_trace_hash".to_owned(),
                format!("{:016x}", sim.trace_hash).into(),
            );
            for (key, value) in [
                ("sim_footprint_ns", sim.footprint_ns),
                ("sim_footprint_in_cache", sim.footprint_in_cache),
                ("sim_footprint_in_peer", sim.footprint_in_peer),
                (
                    "sim_footprint_in_local_memory",
                    sim.footprint_in_local_memory,
                ),
                (
                    "sim_footprint_in_remote_memory",
                    sim.footprint_in_remote_memory,
                ),
                ("sim_memory_queue_ns", sim.memory_queue_ns),
                ("sim_mailbox_tail_ns", sim.mailbox_tail_ns),
                ("sim_waking_ns", sim.waking_ns),
                ("sim_busy_ns", sim.busy_ns),
            ] {
                map.insert(key.to_owned(), value.into());
            }
        }
        if let Some(mc) = &stats.message_centric {
            // Cforall's statistics, and the engine's settings that shaped them.
            let c = &config.message_centric;
            map.insert(
                "message_centric".to_owned(),
                serde_json::to_value(mc).unwrap_or_default(),
            );
            map.insert("mc_victims".to_owned(), c.victims.name().into());
            map.insert(
                "mc_queue".to_owned(),
                format!("{:?}", c.queue).to_lowercase().into(),
            );
        }
        if let Some(adaptive) = &stats.adaptive {
            // What an adaptive `auto` ran and decided.
            map.insert(
                "adaptive".to_owned(),
                serde_json::to_value(adaptive).unwrap_or_default(),
            );
        }
        if let Some(gather) = &stats.gather {
            // What `auto`'s gathering on fewer workers did.
            map.insert(
                "gather".to_owned(),
                serde_json::to_value(gather).unwrap_or_default(),
            );
        }
        // The policy that ran (what `auto` chose) and why.
        map.insert("policy_chosen".to_owned(), stats.policy.clone().into());
        map.insert(
            "policy_reason".to_owned(),
            stats.policy_reason.clone().into(),
        );
    }
    Ok(Record {
        runtime: "loka".to_owned(),
        bench: bench.name.to_owned(),
        engine: config.engine.to_string(),
        policy: config.policy.to_string(),
        exec: config.exec.name().to_owned(),
        topology: config.topology.clone(),
        workers: config.workers,
        size: size.to_string(),
        messages: measured.messages,
        seconds,
        msgs_per_sec: if seconds > 0.0 {
            measured.messages as f64 / seconds
        } else {
            0.0
        },
        verified: measured.verified,
        telemetry,
        repeat,
        virtual_seconds,
        host_seconds: virtual_seconds.map(|_| host_seconds),
        stopped_after: None,
    })
}
