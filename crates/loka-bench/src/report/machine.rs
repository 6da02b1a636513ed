//! The machine a report is written on.

/// The machine a report is written on (named at the top of the report).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineInfo {
    /// The host name.
    pub hostname: String,
    /// The processing units this process may use (`nproc`).
    pub nproc: usize,
    /// The CPU model from `/proc/cpuinfo`.
    pub cpu_model: String,
    /// Operating system and kernel.
    pub os: String,
}

impl MachineInfo {
    /// Reads the host name, `nproc`, the CPU model and the OS of this machine (`unknown` for
    /// what cannot be read).
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
        MachineInfo {
            hostname,
            nproc: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cpu_model,
            os,
        }
    }
}
