#!/usr/bin/env bash
# Every `dualgibbs marginals` method on one model, to the same target (RMS relative standard error 1%) or a time
# budget, in one run: a CSV row per method with its CPU and wall seconds, whether it reached the target, and the RMS
# relative error of its estimates against the exact variances (the exact method's own output).
#   examples/models/marginals_table.sh DUALGIBBS MODEL.mtx OUT_DIR [SECONDS]
# SECONDS (default 600) is each sampling method's budget. Prints the table and writes OUT_DIR/table.csv.
set -euo pipefail
bin=$1 model=$2 out=$3 budget=${4:-600}
mkdir -p "$out"
py=${PYTHON:-/usr/bin/python3}
echo "method,cpu_seconds,wall_seconds,reached_target,rel_rmse_estimated,rel_rmse_vs_exact" > "$out/table.csv"
for method in exact cholesky dual-cv primal-cv dual primal; do
  /usr/bin/time -f "%U %S %e" -o "$out/$method.time" "$bin" --quiet --precision "$model" marginals --method "$method" \
    --rel-rmse 0.01 --seconds "$budget" --json -o "$out/$method.csv" > "$out/$method.json" || true
  "$py" - "$out" "$method" >> "$out/table.csv" <<'EOF'
import json, sys
import numpy as np
out, method = sys.argv[1], sys.argv[2]
user, system, wall = map(float, open(f"{out}/{method}.time").read().split()[-3:])
try:
    j = json.load(open(f"{out}/{method}.json"))
    est = np.loadtxt(f"{out}/{method}.csv", delimiter=",", skiprows=1, usecols=1)
    exact = np.loadtxt(f"{out}/exact.csv", delimiter=",", skiprows=1, usecols=1)
    vs_exact = float(np.sqrt(np.mean((est / exact - 1) ** 2)))
    print(f"{method},{user + system:.2f},{wall:.2f},{j.get('reached_target')},{j.get('rel_se_rms')},{vs_exact:.4g}")
except (ValueError, OSError) as e:
    print(f"{method},{user + system:.2f},{wall:.2f},failed,,")
EOF
done
column -s, -t "$out/table.csv"
