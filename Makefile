# loka — the two commands a newcomer needs:
#   make bench   build, run the quick benchmark suite, write report/
#   make test    everything CI checks
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
CARGO ?= cargo
LOKA := target/release/loka
RESULTS := report/results.jsonl
# Debian packages the build needs: hwloc (topology), udev link for hwloc's static flags,
# CAF + cmake for the C++ peer, hyperfine for whole-command timings.
DEB_PACKAGES := pkg-config libhwloc-dev libudev-dev libcaf-dev cmake g++ hyperfine

.PHONY: all deps build bench bench-quick test fmt clippy unit loom smoke doc clean

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

# The main job: the quick suite under the default policy, written to report/.
bench: build
	@mkdir -p report
	@rm -f $(RESULTS)
	$(LOKA) bench run all --size quick --repeat 3 --out $(RESULTS)
	@echo "results: $(RESULTS)"

test: deps fmt clippy unit loom smoke

fmt:
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --workspace --all-targets -- -D warnings

unit:
	$(CARGO) test --workspace

# loom model tests of the lock-free protocols (own target dir: different cfg).
loom:
	RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom $(CARGO) test -p loka --lib loom

# Every benchmark once at its smallest size, on 2 workers, verified; plus the criterion bench
# compiled and run once.
smoke: build
	$(LOKA) bench run all --size quick --workers 2
	$(CARGO) bench -p loka --bench send_latency -- --test

doc:
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps

clean:
	$(CARGO) clean
	rm -rf report
