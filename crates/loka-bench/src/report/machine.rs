//! The machine a report is written on.

/// The machine a report is written on (named at the top of the report).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineInfo {
    /// The host name.
    pub hostname: String,
    /// The processing units this process may use (`nproc`).
    pub nproc: usize,
    /// The NUMA nodes Linux shows (`/sys/devices/system/node/node*`); `None` where unknown.
    pub numa_nodes: Option<usize>,
    /// The CPU model from `/proc/cpuinfo`.
    pub cpu_model: String,
    /// Operating system and kernel.
    pub os: String,
}

impl MachineInfo {
    /// Reads the host name, `nproc`, the NUMA nodes, the CPU model and the OS of this machine
    /// (`unknown` for what cannot be read).
    pub fn detect() -> MachineInfo {
        let read = |path: &str| std::fs::read_to_string(path).ok();
        let hostname = read("/proc/sys/kernel/hostname")
            .or_else(|| read("/etc/hostname"))
            .map(|h| h.trim().to_owned())
            .filter(|h| !h.is_empty())
            .or_else(|| std::env::var("HOSTNAME").ok())
            .unwrap_or_else(|| "unknown".into());
        let cpu_model = read("/proc/cpuinfo")
            .and_then(|text| {
                text.lines()
                    .filter_map(|l| l.split_once(':'))
                    .find(|(k, _)| {
                        let k = k.trim();
                        k == "model name" || k == "Model" || k == "cpu model"
                    })
                    .map(|(_, v)| v.trim().to_owned())
            })
            .unwrap_or_else(|| "unknown".into());
        let distro = read("/etc/os-release").and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_owned())
        });
        let kernel = read("/proc/sys/kernel/osrelease").map(|k| format!("Linux {}", k.trim()));
        let os = match (distro, kernel) {
            (Some(d), Some(k)) => format!("{d}, {k}"),
            (Some(x), None) | (None, Some(x)) => x,
            (None, None) => std::env::consts::OS.to_owned(),
        };
        let numa_nodes = std::fs::read_dir("/sys/devices/system/node")
            .ok()
            .map(|dir| {
                dir.filter_map(Result::ok)
                    .filter(|e| {
                        e.file_name().to_str().is_some_and(|n| {
                            n.strip_prefix("node").is_some_and(|k| {
                                !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit())
                            })
                        })
                    })
                    .count()
            })
            .filter(|&n| n > 0);
        MachineInfo {
            hostname,
            nproc: std::thread::available_parallelism().map_or(1, |n| n.get()),
            numa_nodes,
            cpu_model,
            os,
        }
    }
}
