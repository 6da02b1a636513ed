# loka — the two commands a newcomer needs:
#   make bench   build, run the quick benchmark suite, write report/
#   make test    everything CI checks
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
CARGO ?= cargo
# Honour CARGO_TARGET_DIR when the caller sets one (shared caches, CI runners).
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
LOKA := $(TARGET_DIR)/release/loka
RESULTS := report/results.jsonl
# Debian packages the build needs: hwloc (topology), udev link for hwloc's static flags,
# CAF + cmake for the C++ peer, hyperfine for whole-command timings, tmux for the test that
# drives `loka top` (crates/loka-cli/tests/top.rs; it is skipped without tmux).
DEB_PACKAGES := pkg-config libhwloc-dev libudev-dev libcaf-dev cmake g++ hyperfine tmux

.PHONY: all deps build bench bench-remote peers test fmt clippy unit loom smoke smoke-build quick-check miri doc clean

all: build

# Install missing Debian packages (needs root or sudo; skipped when all are present).
deps:
	@missing=$$(for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing: $$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi
	@command -v $(CARGO) >/dev/null || { echo "cargo not found: install Rust from https://rustup.rs"; exit 1; }

build: deps
	$(CARGO) build --release -p loka-cli

# The main job: the quick suite under the default policy, loka against the peers, the worker
# sweep and every policy, each written to report/*.jsonl as runs finish, then report/index.md.
# A failing step does not stop the others (the report shows what finished); make still fails.
# Budget: under 15 minutes from a fresh clone on a 2-core machine: 13 min 22 s on 2026-12-03 (the
# builds 6.1 min, the runs 7.2; every quick run at least 50 ms, see quick-check).
# The report opens with a one-screen summary (docs/results/README.md). PEER_CAP bounds each peer's
# time per benchmark: a run still going after it is shown as `too slow (> N s)`, not waited for
# (actix's two-arbiter pingpong and threadring take 40-70 s per run on an idle machine, every
# other peer run under 4 s at quick size; docs/guide.md, "Command line").
PEER_CAP ?= 15
# The benchmarks the peers implement (the others' loka runs are the quick suite's already).
PEER_BENCHES := pingpong counting threadring fjthrput fjcreate fib chameneos big async-pingpong async-counting
# The worker sweep and the policy sweep run on the eight micro benchmarks and the workloads each
# source text measured its mechanism with (Wölke's Matrix Search, Francesquini's ehb and
# orbit_int, Cforall's executor, Panini's serialmsg and mbrot, LASSI's matmul placed best and
# ignorant): every benchmark under 13 engine/policy pairs was 861 runs and 3.8 minutes, and with
# every benchmark three times at each worker count it took make bench past its 15 minutes
# (docs/results/README.md). `loka bench policies all` and `loka bench scale all` run them all.
SWEEP_BENCHES := pingpong counting threadring fjthrput fjcreate fib chameneos big matrix-search bencherl-ehb bencherl-orbit_int cforall-executor panini-serialmsg panini-mbrot lassi-matmul-best lassi-matmul-ignorant
# loka's build and the peers' build side by side: each leaves a core idle part of the time (a
# crate's last codegen and link, CAF's compile). Then the peers are prebuilt for compare's runs.
bench: deps
	@$(MAKE) --no-print-directory -j2 --output-sync=line build peers
	@mkdir -p report
	@rm -f $(RESULTS) report/compare.jsonl report/scale.jsonl report/policies.jsonl report/.failed
	$(LOKA) bench run all --size quick --repeat 3 --out $(RESULTS) || touch report/.failed
	PEERS_PREBUILT=1 $(LOKA) bench compare $(PEER_BENCHES) --size quick --repeat 3 --peer-cap $(PEER_CAP) --out report/compare.jsonl || touch report/.failed
	$(LOKA) bench scale $(SWEEP_BENCHES) --size quick --repeat 3 --out report/scale.jsonl || touch report/.failed
	$(LOKA) bench policies $(SWEEP_BENCHES) --size quick --out report/policies.jsonl || touch report/.failed
	$(LOKA) report || touch report/.failed
	@if [ -e report/.failed ]; then rm -f report/.failed; \
	  echo "make bench: a step failed (see above); report/ has everything that finished"; exit 1; fi

# The peer runtimes for `loka bench compare` (peers/README.md). A missing toolchain is reported
# with how to install it and skipped: compare then runs without that peer.
peers: deps
	@if command -v $(CARGO) >/dev/null; then \
	  (cd peers/rust && $(CARGO) build --release) || echo "peers: building the Rust peers failed; compare skips them"; \
	else echo "peers: cargo not found (install Rust from https://rustup.rs); compare skips the Rust peers"; fi
	@if command -v cmake >/dev/null && echo '#include <caf/all.hpp>' | c++ -std=c++17 -E -x c++ - >/dev/null 2>&1; then \
	  { cmake -S peers/caf -B peers/caf/build -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build peers/caf/build -j2; } \
	    || echo "peers: building peer-caf failed; compare skips it"; \
	else echo "peers: cmake, g++ or libcaf-dev missing (apt-get install libcaf-dev cmake g++); compare skips caf"; fi

# loom and smoke run side by side: the loom models explore every interleaving whatever the
# timing, and the smoke runs check results, not speed (their only time check is a floor, which a
# busier machine cannot break); each leaves the other's CPU idle part of the time. The output of
# each comes in one piece when it ends. clippy and the test build side by side (own target dirs)
# made a clean CI run slower, not faster (1,186 s against 1,160 s, 2026-12-03): the 2 cores are
# busy throughout, and each target dir built the proc-macro crates again.
test: deps fmt clippy unit
	@$(MAKE) --no-print-directory -j2 --output-sync=target loom smoke

# A clean CI clone builds everything once: incremental caches (~4 GB) would only fill its disk.
ifeq ($(CI),true)
export CARGO_INCREMENTAL := 0
endif

fmt:
	$(CARGO) fmt --all -- --check

# The `tokio`, `metrics` and `trace-activations` features of loka (docs/futures.md,
# docs/observability.md) and loka-cli's `remote` (`loka bench remote`, docs/remote.md) are off in
# the workspace runs: one more clippy run with them on (their code, the `prometheus` example and
# their test files), and their test files in `unit`.
clippy:
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy -p loka -p loka-cli --all-targets --features $(TEST_FEATURES) -- -D warnings

# `make test` builds everything once, in one profile (`test`: opt-level 2 with debug
# assertions, Cargo.toml) and one feature set: loka's optional features (`tokio`, `metrics`,
# `trace-activations`, docs/futures.md, docs/observability.md) each only add code, so the tests
# of the default build all run in it, and the features' own test files and doc examples with
# them. The default build itself is compiled and linted by `clippy` (and `make bench` builds it).
# The smoke run uses the `loka` binary and the examples this same cargo invocation builds, not a
# second (release) build: that second build of every crate, with examples and the criterion
# bench in yet other profiles, took CI past 20 minutes (32 min). The binary runs the quick suite
# about 1.2x slower than the release one (16.6 s against 13.9 s, 2026-12-02, 2-core VM).
TEST_FEATURES := loka/tokio,loka/metrics,loka/trace-activations,loka-cli/remote
CARGO_TEST := $(CARGO) test --workspace --features $(TEST_FEATURES)
TEST_BIN := $(TARGET_DIR)/debug

# `cargo test --workspace` includes crates/loka/tests/doc_paths.rs: every repository path the docs
# and the code comments cite exists, and docs/decisions/README.md indexes every decision file.
# The examples are not built here (`clippy --all-targets` compiles every one; smoke builds and
# runs those it needs).
unit:
	$(CARGO_TEST) --tests
	$(CARGO_TEST) --doc

# loom model tests of the lock-free protocols (own target dir: different cfg; own profile,
# Cargo.toml).
loom:
	RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=$(TARGET_DIR)/loom $(CARGO) test --profile loom -p loka --lib loom

# Every benchmark once at its smallest size, on 2 workers, verified; the report written from a
# tiny fixture (no peers); plus the criterion bench run once as a test, and the latency example
# on a few probes (it exits 1 unless every probe comes back and every load actor ran); the
# two-process key-value service through a kill -9 of its server (docs/remote.md) and the
# remote benchmark at its smallest (its checks count every message and reply); two nodes over
# mutual TLS and two intruders turned away (it exits 1 unless exactly that happens).
# Panini's set runs under `--exec auto` (every mode is its unit tests'), LASSI's under `places:a`
# (two places needed).
# Every benchmark under the simulation engine at 8 workers on `preset:opteron6376` is
# crates/loka-bench/tests/sim.rs, a workspace test: under `cls` twice (the trace must repeat)
# and, the sweeps' sixteen (SWEEP_BENCHES), under `hierarchical:auto`, the policy `auto` picks
# there (a smoke step running that last one again through the CLI took 77 s of CI).
PANINI = panini-bang panini-serialmsg panini-mbrot panini-fasta panini-knucleotide panini-histogram panini-polynomial panini-raytracer
LASSI = $(foreach w,cachestress mergesort matmul,$(foreach v,best worst ignorant random,lassi-$(w)-$(v)))
TEST_LOKA := $(TEST_BIN)/loka
# The examples through `cargo build` in the same profile and features (as `cargo test` targets
# they would be built with the test harness instead of their main); it reuses every unit above.
smoke-build:
	$(CARGO_TEST) --no-run --tests --bench send_latency
	$(CARGO) build --workspace --features $(TEST_FEATURES) --profile test --example latency --example async_kv --example remote_kv --example remote_tls
smoke: smoke-build
	$(call quick_check,$(TEST_LOKA),$(QUICK_MIN_S_TEST))
	$(TEST_LOKA) bench run all --size quick --workers 2 --engine message-centric
	$(TEST_LOKA) bench run $(PANINI) --size quick --workers 2 --exec auto
	$(TEST_LOKA) bench run $(LASSI) --size quick --workers 2 --policy places:a --topology "synthetic:package:2 core:1 pu:1"
	$(TEST_LOKA) bench run $(LASSI) --size quick --workers 8 --policy places:a --engine sim --topology preset:nehalem-2x4
	$(TEST_LOKA) report --input crates/loka-cli/tests/fixtures/tiny.jsonl --out $(TARGET_DIR)/smoke-report
	$(CARGO_TEST) --bench send_latency
	$(TEST_BIN)/examples/latency --samples 200 >/dev/null
	$(TEST_BIN)/examples/async_kv --selftest
	$(TEST_BIN)/examples/remote_kv --selftest
	$(TEST_LOKA) bench remote --quick >/dev/null
	$(TEST_BIN)/examples/remote_tls >/dev/null

# loka-remote against raw Zenoh, two processes over 127.0.0.1, A B A B, medians of 5
# (docs/results/remote.md). Not part of `make bench`: it would build Zenoh's 135 crates in release.
bench-remote: deps
	$(CARGO) run --release -p loka-cli --features remote -- bench remote --rounds 3

# Every benchmark once at its quick size on 2 workers, verified, and timed: fails naming every
# benchmark that ran under QUICK_MIN_S seconds (start-up and scheduling noise would be most of its
# time; docs/internals/benchmarks.md, "Sizes"). Sizing every quick run to this floor made make
# test about 2.5 minutes longer on the 2-core machine (smoke +30 s, the loka-bench unit and
# simulation tests +2 min). `make quick-check` times the release binary; smoke, which runs it
# first, times the test build's, with the floor raised by the 1.2x that binary is slower.
QUICK_MIN_S ?= 0.050
QUICK_MIN_S_TEST ?= 0.060
QUICK_CHECK := $(TARGET_DIR)/quick-check.jsonl
# $(call quick_check,LOKA-BINARY,MIN-SECONDS)
define quick_check
	@rm -f $(QUICK_CHECK)
	$(1) bench run all --size quick --workers 2 --repeat 1 --out $(QUICK_CHECK)
	@awk -v min=$(2) ' \
	  match($$0, /"bench":"[^"]*"/) { b = substr($$0, RSTART + 9, RLENGTH - 10) } \
	  match($$0, /"seconds":[-0-9.eE+]*/) { s = substr($$0, RSTART + 10, RLENGTH - 10) + 0; n++; \
	    if (s < min) { printf "quick-check: %s ran %.1f ms, under %.0f ms\n", b, s * 1000, min * 1000; bad++ } } \
	  END { if (n == 0) { print "quick-check: no record in $(QUICK_CHECK)"; exit 1 } \
	    if (bad) { printf "quick-check: %d of %d quick runs too short: raise those sizes (docs/internals/benchmarks.md, \"Sizes\")\n", bad, n; exit 1 } \
	    printf "quick-check: all %d quick sizes ran at least %.0f ms\n", n, min * 1000 }' $(QUICK_CHECK)
endef
quick-check: build
	$(call quick_check,$(LOKA),$(QUICK_MIN_S))

# The lock-free pieces' unit tests under Miri (needs: rustup component add miri rust-src --toolchain
# nightly). Topology and policy tests call hwloc through FFI, which Miri cannot run.
miri:
	$(CARGO) +nightly miri test -p loka --lib -- mailbox:: engine::sleepers:: engine::actor_centric::stall:: engine::message_centric:: runtime::letter:: runtime::exec_policy:: runtime::timer:: runtime::cell::bound:: exec_policy:: actor::ask:: actor::async_actor:: telemetry::

doc:
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps --features loka/metrics

clean:
	$(CARGO) clean
	rm -rf report
