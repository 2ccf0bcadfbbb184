#!/usr/bin/env bash
# `--obs-file` end to end: the posterior mean of `exact`, `marginals` and `sample` against an independent dense
# numpy solve, primal posterior draws accepted by `validate`, dual draws recorded as the zero-mean fluctuation.
# Usage: cli_observations.sh PATH/TO/dualgibbs
set -u
exe="$1"
fail=0; pass=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
check() {  # check DESCRIPTION COMMAND...: the command must succeed
  if "${@:2}" >"$tmp/out" 2>"$tmp/err"; then pass=$((pass+1)); else echo "FAIL: $1: $(head -c 400 "$tmp/err")"; fail=$((fail+1)); fi
}
py=/usr/bin/python3

# A 5x4 grid (node r*4+c) with per-node s (node file) and observations on all but node 7 (which observes 0).
printf '# v s_v\n0 0.5\n3 2.0\n11 0.8\n' >"$tmp/s.txt"
$py -c '
import math
with open("'"$tmp"'/z.txt", "w") as f:
    f.write("# v z_v\n")
    for v in range(20):
        if v != 7: f.write("%d %.17g\n" % (v, 3 * math.sin(1.3 * v) - 0.5))'
common=(--graph grid:5x4 --s 0.7 --sigma 0.4 --node-file "$tmp/s.txt" --obs-file "$tmp/z.txt" --quiet)

# The oracle: Q = D_s^-1 + L / sigma^2 from the grid's edges (numpy), mu = Q^-1 D_s^-1 z, dense solve.
cat >"$tmp/oracle.py" <<'PY'
import csv, json, math, sys
import numpy as np
rows, cols, s0, sigma = 5, 4, 0.7, 0.4
n = rows * cols
s = np.full(n, s0); s[0] = 0.5; s[3] = 2.0; s[11] = 0.8
z = np.array([0.0 if v == 7 else 3 * math.sin(1.3 * v) - 0.5 for v in range(n)])
Q = np.diag(1 / s**2)
for r in range(rows):
    for c in range(cols):
        v = r * cols + c
        for w in ([v + 1] if c + 1 < cols else []) + ([v + cols] if r + 1 < rows else []):
            Q[v, v] += 1 / sigma**2; Q[w, w] += 1 / sigma**2; Q[v, w] -= 1 / sigma**2; Q[w, v] -= 1 / sigma**2
mu = np.linalg.solve(Q, z / s**2)
var = np.diag(np.linalg.inv(Q))
PY

check "exact --obs-file" "$exe" "${common[@]}" exact --marginals "$tmp/exact.csv" --json
cp "$tmp/out" "$tmp/exact.json"
check "exact mean and variances against numpy (1e-10)" $py -c '
import csv, json, sys
exec(open(sys.argv[1]).read())
r = list(csv.DictReader(open(sys.argv[2])))
assert list(r[0].keys()) == ["node", "variance", "mean"], r[0].keys()
m = np.array([float(x["mean"]) for x in r]); va = np.array([float(x["variance"]) for x in r])
assert np.abs(m - mu).max() <= 1e-10 * np.abs(mu).max(), np.abs(m - mu).max()
assert np.abs(va - var).max() <= 1e-10 * var.max()
j = json.load(open(sys.argv[3]))
assert j["observed_nodes"] == 19, j["observed_nodes"]
assert j["mean_solver"] == "cholesky" and j["mean_relative_residual"] < 1e-12
assert abs(j["posterior_mean_max"] - mu.max()) <= 1e-10 * abs(mu).max()
assert json.load(open(sys.argv[2] + ".json"))["columns"] == ["node", "variance", "mean"]
' "$tmp/oracle.py" "$tmp/exact.csv" "$tmp/exact.json"

# marginals (exact method; cg for the mean): the mean column matches numpy to the cg tolerance's bound.
check "marginals --obs-file cg" "$exe" "${common[@]}" marginals --method exact --out "$tmp/marg.csv" --json \
  --mean-solver cg --mean-tolerance 1e-12
cp "$tmp/out" "$tmp/marg.json"
check "marginals mean column" $py -c '
import csv, json, sys
exec(open(sys.argv[1]).read())
r = list(csv.DictReader(open(sys.argv[2])))
assert list(r[0].keys()) == ["v", "estimate", "std_error", "lower", "upper", "mean"], r[0].keys()
m = np.array([float(x["mean"]) for x in r])
cond = np.linalg.cond(Q)
assert np.linalg.norm(m - mu) <= cond * 1e-11 * np.linalg.norm(mu), (np.linalg.norm(m - mu), cond)
va = np.array([float(x["estimate"]) for x in r])
assert np.abs(va - var).max() <= 1e-10 * var.max()
j = json.load(open(sys.argv[3]))
assert j["mean_solver"] == "cg" and j["mean_iterations"] > 0 and j["mean_relative_residual"] <= 1e-11
assert j["obs_file"].endswith("z.txt")
' "$tmp/oracle.py" "$tmp/marg.csv" "$tmp/marg.json"

# sample: primal posterior draws, mean file, sidecar keys; validate accepts them against mu, and refuses them
# without --obs-file (the sidecar says they are posterior draws).
check "sample primal --obs-file" "$exe" "${common[@]}" sample --domain primal --chains 400 --sweeps 300 \
  --output "$tmp/draws.csv" --mean-output "$tmp/mean.csv" --seed 5
check "sample mean file and sidecar" $py -c '
import csv, json, sys
exec(open(sys.argv[1]).read())
r = list(csv.DictReader(open(sys.argv[2])))
assert list(r[0].keys()) == ["node", "mean"]
m = np.array([float(x["mean"]) for x in r])
assert np.abs(m - mu).max() <= 1e-10 * np.abs(mu).max()
j = json.load(open(sys.argv[3]))
assert j["draws_mean"] == "posterior" and j["observed_nodes"] == 19 and j["mean_output"] == sys.argv[2]
' "$tmp/oracle.py" "$tmp/mean.csv" "$tmp/draws.csv.json"
check "validate posterior draws" "$exe" "${common[@]}" validate --draws "$tmp/draws.csv" --domain primal --no-plot
if "$exe" --graph grid:5x4 --s 0.7 --sigma 0.4 --node-file "$tmp/s.txt" --quiet validate --draws "$tmp/draws.csv" \
  --domain primal --no-plot >"$tmp/out" 2>"$tmp/err"; then
  echo "FAIL: validate accepted posterior draws without --obs-file"; fail=$((fail+1))
elif grep -q "draws are of a posterior" "$tmp/err"; then pass=$((pass+1))
else echo "FAIL: validate without --obs-file: $(head -c 300 "$tmp/err")"; fail=$((fail+1)); fi

# The dual draws are the zero-mean fluctuation: recorded as such, and validate tests them against zero.
check "sample dual --obs-file" "$exe" "${common[@]}" sample --domain dual --chains 400 --sweeps 300 \
  --output "$tmp/dual.csv" --seed 6
check "dual sidecar" $py -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["draws_mean"] == "zero" and j["draws"] == "x_tilde"
' "$tmp/dual.csv.json"
check "validate dual draws" "$exe" "${common[@]}" validate --draws "$tmp/dual.csv" --domain dual-x --no-plot

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
