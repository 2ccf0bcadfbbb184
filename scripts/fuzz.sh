#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-14 (ASan + UBSan) and runs each one.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]          time-boxed run (CI uses 60)
#   FUZZ_RUNS=1000000 scripts/fuzz.sh              a fixed number of executions per target
#   FUZZ_PARALLEL=1 ...                            run the targets at the same time (one process each)
#   FUZZ_JOBS=N ...                                at most N targets at a time (CI: one per core)
#   FUZZ_TARGETS="graph_spec" ...                  only these targets
#   FUZZ_TIMEOUT=10                                seconds of wall time one input may take (a hang is a finding)
# The seed corpus in fuzz/corpus/ is copied to a scratch directory, so runs never modify the repository.
# Any crash, leak, sanitizer report or timeout makes this script fail; its input is kept in fuzz-artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=${DUALGIBBS_FUZZ_BUILD_DIR:-build-fuzz}
mkdir -p "$build"
CXX=clang++-14 CC=clang-14 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDUALGIBBS_BUILD_FUZZERS=ON \
  -DDUALGIBBS_BUILD_TESTS=OFF -DDUALGIBBS_BUILD_APPS=OFF -DDUALGIBBS_BUILD_BENCH=OFF > "$build/configure.log"
read -r -a targets <<< "${FUZZ_TARGETS:-edge_list node_file matrix_market graph_spec}"
cmake --build "$build" -j "$(nproc)" --target dualgibbs_fuzzers  # one target: its parts compile in parallel
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "${FUZZ_RUNS:-}" ]; then limit=(-runs="$FUZZ_RUNS"); else limit=(-max_total_time="$seconds"); fi

run_target() {  # run_target NAME: one fuzzing run; its exit status, wall time and closing lines in $work/NAME.*
  local t=$1 t0=$SECONDS rc=0
  mkdir -p "$work/$t"
  cp fuzz/corpus/"$t"/* "$work/$t"/
  "$build/fuzz/fuzz_$t" "${limit[@]}" -rss_limit_mb=2048 -timeout="${FUZZ_TIMEOUT:-10}" -max_len=4096 -print_final_stats=1 \
    -artifact_prefix="$work/$t-" "$work/$t" 2> "$work/$t.log" || rc=$?
  echo "$rc $((SECONDS - t0))" > "$work/$t.status"
}

report() {  # report NAME: prints the outcome; returns non-zero on a finding
  local t=$1 rc wall
  read -r rc wall < "$work/$t.status"
  if [ "$rc" -ne 0 ]; then
    echo "fuzz_$t FAILED (exit $rc):"; tail -40 "$work/$t.log"
    mkdir -p fuzz-artifacts && cp "$work/$t"-* fuzz-artifacts/ 2>/dev/null || true
    return 1
  fi
  # the last status line (executions, coverage counters cov/ft, corpus size), libFuzzer's closing line and stats
  grep -E '^#[0-9]+' "$work/$t.log" | tail -1
  grep -E '^(Done|stat::number_of_executed_units|stat::slowest_unit_time_sec|stat::peak_rss_mb)' "$work/$t.log" || true
  echo "fuzz_$t clean: $wall s wall"
}

status=0
jobs=${FUZZ_JOBS:-1}
if [ -n "${FUZZ_PARALLEL:-}" ]; then jobs=${#targets[@]}; fi
if [ "$jobs" -gt 1 ]; then
  echo "== ${targets[*]}, $jobs at a time (${limit[*]})"
  running=0
  for t in "${targets[@]}"; do
    if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
    run_target "$t" &
    running=$((running + 1))
  done
  wait
  for t in "${targets[@]}"; do echo "== fuzz_$t"; report "$t" || status=1; done
else
  for t in "${targets[@]}"; do
    echo "== fuzz_$t (${limit[*]})"
    run_target "$t"
    report "$t" || status=1
  done
fi
exit $status
