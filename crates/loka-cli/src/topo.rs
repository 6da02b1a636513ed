//! `loka topo` (owned by the topology issue).

/// Arguments of `loka topo`.
#[derive(clap::Args)]
pub struct TopoArgs {}

/// Runs `loka topo`.
pub fn run(_args: TopoArgs) -> anyhow::Result<()> {
    anyhow::bail!("loka topo is not implemented yet")
}
