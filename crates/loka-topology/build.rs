//! Link fix-up for the system hwloc.
//!
//! `hwlocality-sys` asks pkg-config for hwloc's *static* flags, which adds
//! `-ludev` (hwloc's `Libs.private`). Debian ships the `libudev.so` link only
//! in `libudev-dev`; without it the final link fails although the shared
//! `libhwloc.so` already pulls in `libudev.so.1` at run time. When the
//! unversioned link is missing but the runtime library exists, point the linker
//! at a private `libudev.so -> libudev.so.1` link in `OUT_DIR`.

use std::path::{Path, PathBuf};

const LIB_DIRS: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu",
    "/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/lib64",
    "/usr/lib",
    "/lib",
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let has_dev_link = LIB_DIRS
        .iter()
        .any(|dir| Path::new(dir).join("libudev.so").exists());
    if has_dev_link {
        return;
    }
    let Some(runtime) = LIB_DIRS
        .iter()
        .map(|dir| Path::new(dir).join("libudev.so.1"))
        .find(|path| path.exists())
    else {
        return;
    };
    let Some(out_dir) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return;
    };
    let link_dir = out_dir.join("udev-link");
    if std::fs::create_dir_all(&link_dir).is_err() {
        return;
    }
    let link = link_dir.join("libudev.so");
    let _ = std::fs::remove_file(&link);
    #[cfg(unix)]
    {
        if std::os::unix::fs::symlink(&runtime, &link).is_ok() {
            println!("cargo:rustc-link-search=native={}", link_dir.display());
        }
    }
}
