#!/usr/bin/env bash
# The regression guard: builds two commits side by side (Release, the command and the Python module only) and runs the
# headline measurements on both, alternating base and head, then prints each measurement's ratio base / head (above 1:
# the head is faster) with the spread of the pairs. Run it on an idle machine before a change to a hot path lands,
# against the previous main:
#   bash scripts/bench-compare.sh BASE [HEAD] [--pairs N] [--quick]
# BASE and HEAD are commits (HEAD defaults to the working tree's HEAD). --pairs: alternating pairs per measurement
# (default 3). --quick: the fast measurements only (no fig6 at paper scale, no 10^6-node exact, no 10^5-node expander).
# The builds go to ${DUALGIBBS_COMPARE_DIR:-/tmp/dualgibbs-compare}/{base,head} (reused when the commit is the same).
# A measurement a build cannot run (an older command without the subcommand) is reported as such.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: bench-compare.sh BASE [HEAD] [--pairs N] [--quick]}
shift
head=HEAD
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then head=$1; shift; fi
pairs=3
quick=0
while [ $# -gt 0 ]; do
  case $1 in
    --pairs) pairs=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    *) echo "bench-compare.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
root=${DUALGIBBS_COMPARE_DIR:-/tmp/dualgibbs-compare}
mkdir -p "$root"

build() {  # build NAME COMMIT: a worktree of COMMIT at $root/NAME, built in $root/NAME/build
  local name=$1 commit dir=$root/$1
  commit=$(git rev-parse "$2^{commit}")
  if [ ! -d "$dir" ] || [ "$(git -C "$dir" rev-parse HEAD 2>/dev/null)" != "$commit" ]; then
    rm -rf "$dir"
    git worktree prune
    git worktree add -q --detach "$dir" "$commit"
  fi
  cmake -S "$dir" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release -DDUALGIBBS_BUILD_TESTS=OFF -DDUALGIBBS_BUILD_BENCH=OFF \
    -DDUALGIBBS_BUILD_APPS=ON >/dev/null
  cmake --build "$dir/build" -j "$(nproc)" --target dualgibbs_cli >/dev/null
  cmake --build "$dir/build" -j "$(nproc)" --target dualgibbs_python >/dev/null 2>&1 || true
  echo "$name: $(git -C "$dir" log --oneline -1)"
}
build base "$base"
build head "$head"
echo "CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1); load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# measure NAME BUILD: prints one number (smaller is better) for measurement NAME with the build at BUILD, or nothing.
measure() {
  local name=$1 dir=$2 exe=$2/build/bin/dualgibbs t0
  case $name in
    sampler_torus100_lockstep1 | sampler_torus100_lockstep8 | sampler_torus1000_lockstep1 | sampler_torus1000_lockstep8)
      local g=${name#sampler_}; g=${g%_lockstep*}; local l=${name##*lockstep}
      "$exe" --quiet bench --graph "torus:${g#torus}" --domain dual --lockstep "$l" --threads 1 --repeat 3 --json 2>/dev/null |
        python3 -c "import json,sys; print(json.loads(sys.stdin.read())['ns_per_update'])" ;;
    fig6)
      local out; out=$(mktemp -d)
      t0=$(date +%s.%N)
      "$exe" --quiet reproduce fig6 --no-plot --out "$out" >/dev/null 2>&1 && awk "BEGIN { print $(date +%s.%N) - $t0 }"
      rm -rf "$out" ;;
    exact_torus1000)
      "$exe" --quiet exact --graph torus:1000 --s 1 --sigma 0.25 --json 2>/dev/null |
        python3 -c "import json,sys; print(json.loads(sys.stdin.read())['seconds'])" ;;
    marginals_dualcv_kregular10000)
      "$exe" --quiet marginals --graph kregular:10000,4 --s 1 --sigma 0.25 --method dual-cv --rel-rmse 0.01 --json \
        2>/dev/null | python3 -c "import json,sys; print(json.loads(sys.stdin.read())['seconds'])" ;;
    marginals_dualcv_kregular100000_32)  # the expander target: wall time of the whole command
      t0=$(date +%s.%N)
      "$exe" --quiet marginals --graph kregular:100000,32 --s 1 --sigma 0.25 --method dual-cv --rel-rmse 0.01 \
        --out /dev/null >/dev/null 2>&1 && awk "BEGIN { print $(date +%s.%N) - $t0 }" ;;
    python_sample_overhead)
      [ -d "$dir/build/python/dualgibbs" ] || return 0
      PYTHONPATH=$dir/build/python /usr/bin/python3 "$dir/python/bench/bench_overhead.py" --cli "$exe" --repeats 3 \
        2>/dev/null | python3 -c "
import json, sys
print(json.loads(sys.stdin.read())['sample']['python_call_seconds_median'])" 2>/dev/null || true ;;
  esac
}

names=(sampler_torus100_lockstep1 sampler_torus100_lockstep8 sampler_torus1000_lockstep1 sampler_torus1000_lockstep8
       marginals_dualcv_kregular10000 python_sample_overhead)
[ $quick = 1 ] || names+=(fig6 exact_torus1000 marginals_dualcv_kregular100000_32)
printf '%-34s %12s %12s %8s %s\n' measurement base head ratio "ratios of the pairs (base/head)"
for name in "${names[@]}"; do
  b=() h=()
  for _ in $(seq 1 "$pairs"); do
    b+=("$(measure "$name" "$root/base")")
    h+=("$(measure "$name" "$root/head")")
  done
  python3 - "$name" "${b[*]}" "${h[*]}" <<'PY'
import statistics, sys
name, b, h = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
if not b or not h or len(b) != len(h):
    print(f"{name:34s} {'n/a':>12s} {'n/a':>12s} {'':>8s} (a build cannot run it)")
    sys.exit()
b, h = [float(x) for x in b], [float(x) for x in h]
ratios = [x / y for x, y in zip(b, h)]
print(f"{name:34s} {statistics.median(b):12.4g} {statistics.median(h):12.4g} {statistics.median(ratios):8.3f} "
      + " ".join(f"{r:.3f}" for r in ratios))
PY
done
