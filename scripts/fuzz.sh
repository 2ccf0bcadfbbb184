#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-14 (ASan + UBSan) and runs each one.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]          time-boxed run (CI uses 60)
#   FUZZ_RUNS=1000000 scripts/fuzz.sh              a fixed number of executions per target
# The seed corpus in fuzz/corpus/ is copied to a scratch directory, so runs never modify the repository.
# Any crash, leak, sanitizer report or timeout makes this script fail.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=${DUALGIBBS_FUZZ_BUILD_DIR:-build-fuzz}
CXX=clang++-14 CC=clang-14 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDUALGIBBS_BUILD_FUZZERS=ON \
  -DDUALGIBBS_BUILD_TESTS=OFF -DDUALGIBBS_BUILD_APPS=OFF -DDUALGIBBS_BUILD_BENCH=OFF > "$build.configure.log"
targets=(edge_list node_file matrix_market graph_spec)
cmake --build "$build" -j "$(nproc)" --target "${targets[@]/#/fuzz_}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for t in "${targets[@]}"; do
  mkdir -p "$work/$t"
  cp fuzz/corpus/"$t"/* "$work/$t"/
  if [ -n "${FUZZ_RUNS:-}" ]; then limit=(-runs="$FUZZ_RUNS"); else limit=(-max_total_time="$seconds"); fi
  echo "== fuzz_$t (${limit[*]})"
  if ! "$build/fuzz/fuzz_$t" "${limit[@]}" -rss_limit_mb=2048 -timeout=10 -max_len=4096 \
       -artifact_prefix="$work/" "$work/$t" 2> "$work/$t.log"; then
    echo "fuzz_$t FAILED:"; tail -40 "$work/$t.log"; status=1
    mkdir -p fuzz-artifacts && cp "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* fuzz-artifacts/ 2>/dev/null || true
  else
    grep -E '^(#[0-9]+|Done)' "$work/$t.log" | tail -1
  fi
done
exit $status
