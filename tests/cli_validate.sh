#!/usr/bin/env bash
# dualgibbs validate on good input: sample's CSV and binary files, and .npy arrays written by numpy
# (float64/float32, little- and big-endian, C and Fortran order, 2-D and 3-D) give the same verdict and the same
# statistics as the CSV they were made from; exact draws pass (exit 0), an unconverged sampler does not (exit 3).
# The false-failure probability of each "passes" check is alpha = 1e-6 (the report's Bonferroni bound, exact draws
# or converged samplers); each "flagged" check is on a defect measured at |z| > 10.
# Usage: cli_validate.sh PATH/TO/dualgibbs [PYTHON]
set -u
exe="$1"
py="${2:-/usr/bin/python3}"
fail=0; pass=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass+1)); }
bad() { echo "FAIL: $1"; fail=$((fail+1)); }
m="--graph torus:6 --sigma 0.5 --quiet"

# expect_rc RC ARGS...: dualgibbs exits with RC (no crash) and prints the JSON report when --json is given.
expect_rc() {
  local want="$1"; shift
  timeout 120 "$exe" "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ $rc -ne "$want" ]; then bad "dualgibbs $* -> exit $rc (expected $want): $(head -c 400 "$tmp/err")"; else ok; fi
}
json() { "$py" -c "import json,sys; j=json.load(open('$tmp/out')); print($1)"; }

# Converged samplers (200 sweeps at sigma = 0.5 on a 6x6 torus: the primal error is at its noise floor by sweep ~60).
"$exe" sample $m --domain primal --chains 3000 --sweeps 200 --every 100 -o "$tmp/p.csv" || bad "sample p.csv"
"$exe" sample $m --domain primal --chains 3000 --sweeps 200 --every 100 -o "$tmp/p.bin" || bad "sample p.bin"
expect_rc 0 validate $m --draws "$tmp/p.csv" --domain primal --alpha 1e-6 --json
[ "$(json 'len(j["checkpoints"]), j["checkpoints"][1]["sweep"], j["tests"]')" = "2 200.0 290" ] && ok \
  || bad "p.csv: $(json 'len(j["checkpoints"]), j["checkpoints"][1]["sweep"], j["tests"]')"
cp "$tmp/out" "$tmp/csv.json"
expect_rc 0 validate $m --draws "$tmp/p.bin" --domain primal --alpha 1e-6 --json
# The binary file holds the same draws as the CSV (17 significant digits): the same statistics.
"$py" - "$tmp/csv.json" "$tmp/out" <<'EOF' && ok || bad "binary and CSV reports differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ca, cb = a["checkpoints"], b["checkpoints"]
assert len(ca) == len(cb) == 2
for x, y in zip(ca, cb):
    for k in ("global_z", "Eu", "Eu_se"):
        assert abs(x[k] - y[k]) <= 1e-9 * (1 + abs(x[k])), (k, x[k], y[k])
    assert x["mean_z"]["argmax"] == y["mean_z"]["argmax"]
EOF

# .npy from numpy: the CSV's draws of the last checkpoint (independent chains) in every supported encoding.
"$py" - "$tmp" <<'EOF' || bad "numpy could not write the .npy files"
import csv, sys
import numpy as np
d = sys.argv[1]
rows = list(csv.reader(open(f"{d}/p.csv")))
a = np.array([[float(v) for v in r[2:]] for r in rows[1:] if r[0] == "200"])
np.save(f"{d}/c8.npy", a)
np.save(f"{d}/c4.npy", a.astype(np.float32))
np.save(f"{d}/f8.npy", np.asfortranarray(a))
np.save(f"{d}/b8.npy", a.astype(">f8"))
b = np.array([[float(v) for v in r[2:]] for r in rows[1:]]).reshape(2, -1, a.shape[1])
np.save(f"{d}/c3.npy", b)
np.save(f"{d}/f3.npy", np.asfortranarray(b))
np.save(f"{d}/i4.npy", a.astype(np.int32))
with open(f"{d}/v2.npy", "wb") as f:
    np.lib.format.write_array(f, a, version=(2, 0))
EOF
for f in c8 f8 b8 v2; do
  expect_rc 0 validate $m --draws "$tmp/$f.npy" --domain primal --layout independent --alpha 1e-6 --json
  "$py" -c "
import json; a = json.load(open('$tmp/csv.json'))['checkpoints'][1]; b = json.load(open('$tmp/out'))['checkpoints'][0]
assert abs(a['global_z'] - b['global_z']) < 1e-9 and abs(a['Eu'] - b['Eu']) < 1e-12, (a['global_z'], b['global_z'])" \
    && ok || bad "$f.npy differs from the CSV's last checkpoint"
done
expect_rc 0 validate $m --draws "$tmp/c4.npy" --domain primal --layout independent --alpha 1e-6 --json
for f in c3 f3; do
  expect_rc 0 validate $m --draws "$tmp/$f.npy" --domain primal --alpha 1e-6 --json
  "$py" -c "
import json; a = json.load(open('$tmp/csv.json'))['checkpoints']; b = json.load(open('$tmp/out'))['checkpoints']
assert len(b) == 2 and all(abs(x['global_z'] - y['global_z']) < 1e-9 for x, y in zip(a, b))" \
    && ok || bad "$f.npy (3-D) differs from the CSV"
done
# A 2-D array without chain ids is one chain by default: batch means, stated.
expect_rc 0 validate $m --draws "$tmp/c8.npy" --domain primal --alpha 1e-6 --json
[ "$(json 'j["checkpoints"][0]["sequential"], j["checkpoints"][0]["batches"]')" = "True 54" ] && ok \
  || bad "2-D .npy is not treated as one chain: $(json 'j["layout"]')"

# One long chain written by sample (1 chain, every sweep): pooled, batch means, passes.
"$exe" sample $m --domain dual --chains 1 --sweeps 20000 --every 1 -o "$tmp/chain.bin" || bad "sample chain.bin"
expect_rc 0 validate $m --draws "$tmp/chain.bin" --domain dual-x --alpha 1e-6 --json
[ "$(json 'j["checkpoints"][0]["sequential"], j["checkpoints"][0]["draws"]')" = "True 20000" ] && ok \
  || bad "chain.bin: $(json 'j["layout"]')"

# An unconverged sampler (dual, 2 sweeps from the constant start, 10x10 torus at sigma = 0.1): exit 3, the report
# names the global test (measured z ~ -20 with 10^4 chains).
"$exe" sample --graph torus:10 --sigma 0.1 --quiet --domain dual --chains 10000 --sweeps 2 -o "$tmp/early.bin" \
  || bad "sample early.bin"
expect_rc 3 validate --graph torus:10 --sigma 0.1 --draws "$tmp/early.bin" --domain dual-x --json
[ "$(json 'j["consistent"], j["worst"][0]["p"] < j["p_threshold"]')" = "False True" ] && ok || bad "early.bin not flagged"
expect_rc 3 validate --graph torus:10 --sigma 0.1 --draws "$tmp/early.bin" --domain dual-x
grep -q "verdict: NOT CONSISTENT" "$tmp/out" && ok || bad "text report without the verdict: $(tail -2 "$tmp/out")"
# --out: the per-checkpoint CSVs, the JSON and (with matplotlib) the plot.
expect_rc 0 validate $m --draws "$tmp/p.bin" --domain primal --alpha 1e-6 --out "$tmp/o"
for f in validate.csv validate.json validate_cp0.csv validate_cp1.csv validate_cp1_edges.csv; do
  [ -s "$tmp/o/$f" ] && ok || bad "--out did not write $f"
done
if "$py" -c "import matplotlib" 2>/dev/null; then [ -s "$tmp/o/validate.png" ] && ok || bad "no validate.png"; fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
