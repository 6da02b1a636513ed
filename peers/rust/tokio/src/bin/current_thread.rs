//! `peer-tokio-current-thread`: the workloads of `peer_tokio` on tokio's current-thread runtime:
//! every actor task and the driver on the main thread. It has one thread by construction, so
//! `--threads` may only be 1 (its default).

use peer_common::{Args, Identity};

fn main() -> std::process::ExitCode {
    let program = "peer-tokio-current-thread";
    let args = Args::from_env(program, 1);
    if args.threads != 1 {
        eprintln!(
            "{program}: the current-thread runtime has one thread; --threads must be 1, got {}",
            args.threads
        );
        return std::process::ExitCode::from(2);
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let id = Identity {
        runtime: "tokio-current-thread",
        engine: "tokio-current-thread",
    };
    peer_common::run_all(id, &args, |w| rt.block_on(peer_tokio::run(*w)))
}
