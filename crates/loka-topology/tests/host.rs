//! The real machine through hwloc, and worker pinning.

use loka_topology::{
    pin_current_thread, CostMatrix, LayoutOptions, Level, Topology, TopologyError, TopologySpec,
    WorkerLayout,
};

/// The CPUs the calling thread may run on, by OS index.
fn affinity() -> Vec<usize> {
    // SAFETY: `set` is a plain bitmask owned by this frame; 0 = the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let rc = libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
        assert_eq!(rc, 0, "sched_getaffinity failed");
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&cpu| libc::CPU_ISSET(cpu, &set))
            .collect()
    }
}

#[test]
fn host_topology_comes_from_hwloc() {
    let t = Topology::load(&TopologySpec::Host).unwrap();
    assert!(t.is_real());
    assert!(t.pu_count() >= 1);
    assert!(t.numa_node_count() >= 1);
    assert_eq!(t.root().level, Level::Machine);
    assert_eq!(t.root().pus.len(), t.pu_count());
    // Every PU this process may use is in the model (hwloc shows the allowed PUs).
    let mut os: Vec<usize> = (0..t.pu_count()).map(|p| t.pu_os_index(p)).collect();
    os.sort_unstable();
    let allowed = affinity();
    assert!(os.iter().all(|cpu| allowed.contains(cpu)) || allowed.len() < os.len());
    // Default layout: one worker per PU, each a member of every group but its own.
    let l =
        WorkerLayout::new(&t, &CostMatrix::hierarchical(&t), &LayoutOptions::default()).unwrap();
    assert_eq!(l.workers(), t.pu_count());
    for w in 0..l.workers() {
        assert_eq!(l.groups(w).last().map(Vec::len), Some(l.workers() - 1));
        assert!(!l.groups(w).iter().flatten().any(|&x| x == w));
    }
    if t.numa_node_count() == 1 && t.numa_distances().is_none() {
        // UMA without distances: one group of everybody else (LGS = random stealing).
        for w in 0..l.workers() {
            assert_eq!(l.groups(w).len(), 1);
        }
    }
}

#[test]
fn pinning_binds_each_thread_to_its_pu() {
    let t = Topology::load(&TopologySpec::Host).unwrap();
    if t.pu_count() < 2 || affinity().len() < 2 {
        eprintln!("fewer than 2 PUs: pinning test skipped");
        return;
    }
    let handles: Vec<_> = (0..2)
        .map(|pu| {
            let t = t.clone();
            std::thread::spawn(move || {
                pin_current_thread(&t, pu).unwrap();
                (pu, affinity())
            })
        })
        .collect();
    for h in handles {
        let (pu, set) = h.join().unwrap();
        assert_eq!(set, vec![t.pu_os_index(pu)], "worker on PU {pu}");
    }
    let err = pin_current_thread(&t, t.pu_count()).unwrap_err();
    assert!(matches!(err, TopologyError::NoSuchPu { .. }), "{err:?}");
}

#[test]
fn synthetic_topologies_do_not_pin() {
    let t = Topology::load(&"preset:opteron6376".parse().unwrap()).unwrap();
    let before = std::thread::spawn(affinity).join().unwrap();
    let after = std::thread::spawn(move || {
        pin_current_thread(&t, 63).unwrap();
        affinity()
    })
    .join()
    .unwrap();
    assert_eq!(before, after);
}
