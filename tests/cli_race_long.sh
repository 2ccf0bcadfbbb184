#!/usr/bin/env bash
# Runs that write the same names at once: six `sample --seed i -o race.csv` in parallel, 30 rounds. Whatever pair of
# draws and sidecar a round leaves, a reader never takes one run's draws for another's: either the sidecar's
# data_digest is the draws' own digest (and validate accepts the pair), or validate refuses the pair.
# Usage: cli_race_long.sh PATH/TO/dualgibbs
set -u
exe=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0; mixed=0
for round in $(seq 1 30); do
  for i in 1 2 3 4 5 6; do
    "$exe" --quiet --graph cycle:30 sample --chains 200 --sweeps 20 --seed "$i" -o "$tmp/race.csv" 2>/dev/null &
  done
  wait
  own=$(python3 - "$tmp/race.csv" <<'PY'
import json, sys
h = 0xcbf29ce484222325
for b in open(sys.argv[1], "rb").read():
    h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
side = json.load(open(sys.argv[1] + ".json"))
print("same" if side.get("data_digest") == f"fnv1a64:{h:016x}" else "mixed")
PY
)
  "$exe" --quiet validate --graph cycle:30 --draws "$tmp/race.csv" --domain dual-x >/dev/null 2>"$tmp/err"; rc=$?
  if [ "$own" = same ] && [ $rc -eq 0 ]; then pass=$((pass+1))
  elif [ "$own" = mixed ] && [ $rc -eq 2 ] && grep -q "digests differ" "$tmp/err"; then pass=$((pass+1)); mixed=$((mixed+1))
  else fail=$((fail+1)); echo "FAIL: round $round: pair $own, validate exit $rc: $(head -c 200 "$tmp/err")"; fi
done
echo "cli_race_long: $mixed of 30 rounds left a mixed pair, each refused"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
