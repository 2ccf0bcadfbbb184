#!/usr/bin/env bash
# `dualgibbs marginals` end to end: the CSV and JSON it writes, its exit codes and its bad-input messages.
# Usage: cli_marginals.sh PATH/TO/dualgibbs
set -u
exe="$1"
fail=0; pass=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
check() {  # check DESCRIPTION COMMAND...: the command must succeed
  if "${@:2}" >"$tmp/out" 2>"$tmp/err"; then pass=$((pass+1)); else echo "FAIL: $1: $(head -c 400 "$tmp/err")"; fail=$((fail+1)); fi
}
expect_exit() {  # expect_exit CODE PATTERN ARGS...: exit CODE, one stderr line matching PATTERN
  local code=$1 pattern=$2; shift 2
  timeout 60 "$exe" "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ $rc -ne "$code" ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] || ! grep -qiE -- "$pattern" "$tmp/err"; then
    echo "FAIL: dualgibbs $* -> exit $rc (expected $code): $(head -c 300 "$tmp/err")"; fail=$((fail+1))
  else pass=$((pass+1)); fi
}
py=/usr/bin/python3

# dual-cv to 2% on the 10x10 torus: CSV columns, bracket around the estimate, JSON keys of the issue.
check "dual-cv run" "$exe" marginals --graph torus:10 --s 1 --sigma 0.1 --method dual-cv --rel-rmse 0.02 \
  --out "$tmp/m.csv" --json --quiet
cp "$tmp/out" "$tmp/j.json"
check "dual-cv JSON" $py -c '
import json, sys
j = json.load(open(sys.argv[1]))
keys = ["method", "nodes", "edges", "estimate_mean", "rel_se_rms", "seconds", "sweeps", "chains", "samples",
        "degree", "bracket_rel_width_rms"]
missing = [k for k in keys if k not in j]
assert not missing, missing
assert j["method"] == "dual-cv" and j["nodes"] == 100 and j["rel_se_rms"] <= 0.02 and j["degree"] >= 1, j
' "$tmp/j.json"
check "dual-cv CSV" $py -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert list(rows[0].keys()) == ["v", "estimate", "std_error", "lower", "upper"], rows[0].keys()
assert len(rows) == 100
for r in rows:
    lo, est, hi = float(r["lower"]), float(r["estimate"]), float(r["upper"])
    assert lo <= hi and lo < est * 1.2 and est < hi * 1.2, r
' "$tmp/m.csv"
check "sidecar" test -s "$tmp/m.csv.json"
# exact: lower = upper = estimate; plain primal: empty bracket columns.
check "exact run" "$exe" marginals --graph cycle:20 --method exact --out "$tmp/e.csv" --quiet
check "exact CSV" $py -c '
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    assert r["lower"] == r["estimate"] == r["upper"] and float(r["std_error"]) == 0, r
' "$tmp/e.csv"
check "primal run" "$exe" marginals --graph cycle:20 --sigma 0.5 --method primal --rel-rmse 0.05 --out "$tmp/p.csv" --quiet
check "primal CSV" $py -c '
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    assert r["lower"] == "" and r["upper"] == "" and float(r["std_error"]) > 0, r
' "$tmp/p.csv"
# primal with --scheme cheby-ssor: the scheme and its spectrum in the JSON, the target reached.
check "cheby-ssor run" "$exe" marginals --graph torus:10 --sigma 0.25 --method primal --scheme cheby-ssor --rel-rmse 0.05 \
  --json --quiet
cp "$tmp/out" "$tmp/c.json"
check "cheby-ssor JSON" $py -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["scheme"] == "cheby-ssor" and 0 < j["lambda_min"] <= j["lambda_max"] <= 1 + 1e-9 and 1 <= j["omega"] < 2, j
assert j["reached_target"] and j["rel_se_rms"] <= 0.05 and j["burn_in"] >= 4, j
' "$tmp/c.json"

# The default method, auto: it says what it chose and why, in the text and in the JSON (a lattice: exact; an
# expander: dual-cv).
check "auto text" "$exe" marginals --graph torus:20 --sigma 0.25
cp "$tmp/out" "$tmp/a.txt"
check "auto says why" grep -q "^auto chose exact: predicted" "$tmp/a.txt"
check "auto JSON" "$exe" marginals --graph kregular:5000,4 --sigma 0.25 --json --quiet
cp "$tmp/out" "$tmp/a.json"
check "auto JSON fields" $py -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["method"] == "dual-cv" and j["auto_reason"].startswith("dual-cv: predicted"), j
assert j["auto_sampling_seconds"] < j["auto_exact_seconds"] and j["auto_probing_seconds"] is None, j
' "$tmp/a.json"

# Bad input: one line on stderr, exit 2.
expect_exit 2 "rel-rmse.*must be > 0" marginals --graph torus:5 --rel-rmse 0
expect_exit 2 "rel-rmse.*must be > 0" marginals --graph torus:5 --rel-rmse -0.5
expect_exit 2 "seconds.*must be > 0" marginals --graph torus:5 --seconds 0
expect_exit 2 "unknown marginals method 'gibbs'" marginals --graph torus:5 --method gibbs
expect_exit 2 "chains = 1" marginals --graph torus:5 --method dual-cv --chains 1
expect_exit 2 "lockstep = 5" marginals --graph torus:5 --method dual-cv --lockstep 5
expect_exit 2 "no edges" marginals --graph path:1 --method dual
expect_exit 2 "apply to --method primal, primal-cv and rbmc-gibbs, not dual-cv" marginals --graph torus:5 --method dual-cv --scheme cheby-ssor
expect_exit 2 "apply to --method primal, primal-cv and rbmc-gibbs, not auto" marginals --graph torus:5 --omega 1.2
expect_exit 2 "unknown scheme 'fast'" marginals --graph torus:5 --method primal --scheme fast
expect_exit 2 "budget ran out" marginals --graph torus:40 --sigma 0.05 --method primal --seconds 0.000001
# A target not reached within --max-sweeps is a failure (exit 1), with the estimate still printed.
timeout 60 "$exe" marginals --graph torus:10 --sigma 0.1 --method dual --rel-rmse 0.001 --max-sweeps 40 --quiet \
  >"$tmp/out" 2>"$tmp/err"; rc=$?
if [ $rc -eq 1 ]; then pass=$((pass+1)); else echo "FAIL: unreached target -> exit $rc"; fail=$((fail+1)); fi

# A factor larger than the process's address-space limit (ulimit -v, e.g. a per-process budget on a shared machine)
# is refused before it is allocated, naming both sizes (exit 1: out of memory, not bad input). kregular:20000,16
# needs 1.5 GiB of factor values; the analysis alone takes a fraction of a second.
# Not under AddressSanitizer: its shadow memory alone needs terabytes of address space.
if ldd "$exe" 2>/dev/null | grep -q libasan || nm -C "$exe" 2>/dev/null | grep -q __asan_init; then
  echo "cli_marginals: address-space limit check skipped (AddressSanitizer build)"
else
  (ulimit -v 1500000; timeout 60 "$exe" marginals --graph kregular:20000,16 --sigma 0.25 --method exact --quiet) \
    >"$tmp/out" 2>"$tmp/err"; rc=$?
  if [ $rc -eq 1 ] && grep -q "GiB are available.*ulimit -v" "$tmp/err"; then pass=$((pass+1)); else
    echo "FAIL: factor over the address-space limit -> exit $rc: $(cat "$tmp/err")"; fail=$((fail+1)); fi
fi

echo "cli_marginals: $pass passed, $fail failed"
[ $fail -eq 0 ]
