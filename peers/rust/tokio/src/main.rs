//! `peer-tokio`: the workloads of `peer_tokio` on tokio's multi-thread runtime with `--threads`
//! workers (default 2); the driver runs on the main thread (`Runtime::block_on`), as for the
//! ractor and kameo peers.

use peer_common::{Args, Identity};

fn main() -> std::process::ExitCode {
    let args = Args::from_env("peer-tokio", 2);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let id = Identity {
        runtime: "tokio",
        engine: "tokio-multi-thread",
    };
    peer_common::run_all(id, &args, |w| rt.block_on(peer_tokio::run(*w)))
}
