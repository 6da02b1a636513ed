#!/usr/bin/env bash
# Builds (where missing or stale) and runs the peer benchmarks, printing their JSON result lines
# on stdout; build output and notes go to stderr.
#
#   peers/run-peers.sh [--size quick|full] [--threads N] [--repeat K] [--bench LIST] [RUNTIME...]
#
# RUNTIME: actix actix-1thread ractor kameo tokio tokio-current-thread caf (default: all of
# them). LIST: comma-separated workload names or `all` (default). A runtime whose toolchain is
# missing is skipped with a note on how to install it. Exit status: 0 if every runtime that ran
# verified all its runs, 1 if one did not (or failed to build or crashed), 2 on a bad argument.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
all_runtimes=(actix actix-1thread ractor kameo tokio tokio-current-thread caf)
all_benches=(pingpong counting threadring fjthrput fjcreate fib chameneos big)

usage() {
    echo "usage: peers/run-peers.sh [--size quick|full] [--threads N] [--repeat K]" \
        "[--bench LIST] [RUNTIME...]"
    echo "  RUNTIME: ${all_runtimes[*]}"
    echo "  LIST: all, or a comma-separated list of: ${all_benches[*]}"
}

die_usage() {
    echo "run-peers.sh: $1" >&2
    usage >&2
    exit 2
}

is_positive() { [[ "$1" =~ ^[0-9]+$ && "$1" -gt 0 ]]; }

contains() {
    local needle="$1"
    shift
    local x
    for x in "$@"; do [[ "$x" == "$needle" ]] && return 0; done
    return 1
}

size=quick
threads=2
repeat=1
bench=all
runtimes=()
while (($#)); do
    case "$1" in
        --size | --threads | --repeat | --bench)
            (($# >= 2)) || die_usage "$1 needs a value"
            case "$1" in
                --size) size="$2" ;;
                --threads) threads="$2" ;;
                --repeat) repeat="$2" ;;
                --bench) bench="$2" ;;
            esac
            shift 2
            ;;
        -h | --help)
            usage
            exit 0
            ;;
        -*) die_usage "unknown option '$1'" ;;
        *)
            contains "$1" "${all_runtimes[@]}" || die_usage "unknown runtime '$1'"
            runtimes+=("$1")
            shift
            ;;
    esac
done
[[ "$size" == quick || "$size" == full ]] || die_usage "unknown size '$size' (expected quick or full)"
is_positive "$threads" || die_usage "--threads expects a positive integer, got '$threads'"
is_positive "$repeat" || die_usage "--repeat expects a positive integer, got '$repeat'"
if [[ "$bench" != all ]]; then
    IFS=, read -r -a names <<<"$bench"
    for name in "${names[@]}"; do
        contains "$name" "${all_benches[@]}" || die_usage "unknown bench '$name'"
    done
fi
((${#runtimes[@]})) || runtimes=("${all_runtimes[@]}")

rust_dir="$here/rust"
caf_dir="$here/caf"

# Prints the path of the runtime's binary after building it; returns 1 (with a note on stderr)
# when it cannot be had. Build output goes to stderr so stdout stays pure JSON.
binary_for() {
    local runtime="$1"
    # PEERS_PREBUILT=1 (set by `make bench`, after `make peers`): trust the existing binaries
    # instead of asking cargo and cmake again before every run (0.4 s a Rust run, 2 s a CAF run).
    if [[ "${PEERS_PREBUILT:-}" == 1 ]]; then
        local prebuilt
        case "$runtime" in
            caf) prebuilt="$caf_dir/build/peer-caf" ;;
            *) prebuilt="${CARGO_TARGET_DIR:-$rust_dir/target}/release/peer-${runtime%-1thread}" ;;
        esac
        if [[ -x "$prebuilt" ]]; then
            echo "$prebuilt"
            return 0
        fi
    fi
    case "$runtime" in
        actix | actix-1thread | ractor | kameo | tokio | tokio-current-thread)
            # actix-1thread is peer-actix on one thread; tokio-current-thread is a binary of its own.
            local package="peer-${runtime%-1thread}"
            local bin="${CARGO_TARGET_DIR:-$rust_dir/target}/release/$package"
            if command -v cargo >/dev/null; then
                # The whole workspace at once: building one package alone resolves tokio's
                # features differently and would rebuild the dependencies every time.
                (cd "$rust_dir" && cargo build --release >&2) || {
                    echo "run-peers.sh: building the Rust peers failed" >&2
                    return 1
                }
            elif [[ -x "$bin" ]]; then
                echo "run-peers.sh: cargo not found, running the existing $bin" >&2
            else
                echo "run-peers.sh: skipping $runtime: cargo not found; install Rust with" \
                    "'curl https://sh.rustup.rs -sSf | sh' (or 'apt-get install cargo')" >&2
                return 2
            fi
            echo "$bin"
            ;;
        caf)
            local bin="$caf_dir/build/peer-caf"
            local missing=()
            command -v cmake >/dev/null || missing+=(cmake)
            command -v c++ >/dev/null || missing+=(g++)
            if command -v c++ >/dev/null &&
                ! echo '#include <caf/all.hpp>' | c++ -std=c++17 -E -x c++ - >/dev/null 2>&1; then
                missing+=(libcaf-dev)
            fi
            if ((${#missing[@]})); then
                if [[ -x "$bin" ]]; then
                    echo "run-peers.sh: ${missing[*]} not found, running the existing $bin" >&2
                else
                    echo "run-peers.sh: skipping caf: ${missing[*]} not found; install with" \
                        "'apt-get install ${missing[*]}'" >&2
                    return 2
                fi
            else
                {
                    cmake -S "$caf_dir" -B "$caf_dir/build" -DCMAKE_BUILD_TYPE=Release &&
                        cmake --build "$caf_dir/build" -j2
                } >&2 || {
                    echo "run-peers.sh: building peer-caf failed" >&2
                    return 1
                }
            fi
            echo "$bin"
            ;;
    esac
}

status=0
for runtime in "${runtimes[@]}"; do
    rc=0
    bin="$(binary_for "$runtime")" || rc=$?
    if ((rc == 2)); then
        continue # toolchain missing: skipped, not a failure
    elif ((rc != 0)); then
        status=1
        continue
    fi
    runtime_threads="$threads"
    [[ "$runtime" == actix-1thread || "$runtime" == tokio-current-thread ]] && runtime_threads=1
    if [[ "$runtime" == actix && "$threads" == 1 ]]; then
        echo "run-peers.sh: actix with --threads 1 is the actix-1thread configuration" >&2
    fi
    "$bin" --bench "$bench" --size "$size" --threads "$runtime_threads" --repeat "$repeat" || {
        echo "run-peers.sh: $runtime exited with status $? (unverified run or crash)" >&2
        status=1
    }
done
exit "$status"
