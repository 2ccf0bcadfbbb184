#!/usr/bin/env bash
# Records the seeded outputs of one build of the dualgibbs command, so that a refactor can be checked to change no
# number: run it on the previous main's build and on the candidate's, then compare the two directories byte for
# byte (`diff -r A B`). Timing fields (seconds, ns_per_update, wall times, the command line with its paths, the
# version) are removed from JSON and from the CSV columns that hold them; everything else is kept as written.
#   scripts/record-outputs.sh BUILD_DIR OUT_DIR
set -euo pipefail
bin=$(cd "$1" && pwd)/bin/dualgibbs
out=$2
src=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$out"
mkdir -p "$out/raw"
cd "$out/raw"
export OPENBLAS_NUM_THREADS=1
run() { local name=$1; shift; "$bin" --quiet "$@" > "../$name.stdout" 2> "../$name.stderr" || echo "exit $?" >> "../$name.stdout"; }
printf '0 1.5\n3 -0.5\n7 2.0\n' > obs.txt
run sample_dual sample --graph torus:6 --chains 8 --sweeps 30 --seed 7 -o sample_dual.csv
run sample_primal_bin sample --graph cycle:20 --domain primal --chains 6 --sweeps 12 --every 4 --seed 3 -o sample_primal.bin
run sample_ssor sample --graph grid:5x6 --scheme ssor --chains 4 --sweeps 10 -o sample_ssor.csv
run sample_cheby sample --graph torus:5 --domain primal --scheme cheby-ssor --chains 4 --sweeps 10 -o sample_cheby.csv
run sample_colored sample --graph torus:6 --scan colored --threads 2 --chains 3 --sweeps 8 -o sample_colored.csv
run sample_obs sample --graph grid:5x5 --obs-file obs.txt --domain primal --chains 5 --sweeps 20 -o sample_obs.csv --mean-output mean_obs.csv
run sample_y sample --graph path:12 --draws y --chains 5 --sweeps 9 --init random --seed 11 -o sample_y.csv
run exact exact --graph torus:8 --s 1 --sigma 0.3 --json --marginals exact_nodes.csv --edge-marginals exact_edges.csv
run exact_obs exact --graph grid:6x5 --obs-file obs.txt --json --marginals exact_obs.csv
run info info --graph torus:10 --json
run info_kreg info --graph kregular:200,4 --sigma 0.25 --json
run info_accel info --graph torus:8 --accel --json
run converge converge --graph torus:6 --chains 400 --sweeps 40 --json --out converge --no-plot
run marginals_dualcv marginals --graph torus:12 --sigma 0.25 --method dual-cv --rel-rmse 0.02 --json -o marg_dualcv.csv
run marginals_primalcv marginals --graph torus:12 --sigma 0.25 --method primal-cv --rel-rmse 0.02 --json -o marg_primalcv.csv
run marginals_exact marginals --graph cycle:30 --method exact --json -o marg_exact.csv
run validate_dual sample --graph cycle:30 --domain dual --chains 200 --sweeps 60 -o vd.csv
run validate_dual_v validate --graph cycle:30 --draws vd.csv --domain dual-x --json
run validate_primal sample --graph grid:4x5 --obs-file obs.txt --domain primal --chains 300 --sweeps 60 -o vp.bin
run validate_primal_v validate --graph grid:4x5 --obs-file obs.txt --draws vp.bin --domain primal --json --out validate_out --no-plot
run fig6 reproduce fig6 --quick --out figs --no-plot --threads 2
run fig11 reproduce fig11 --quick --out figs --no-plot --threads 2
DUALGIBBS_OUT_DIR=demo DUALGIBBS_PLOT_SCRIPT=/nonexistent run default_demo
# Strip timings: JSON keys that measure time, and CSV columns whose names say they are timings.
cd "$out"
python3 - "$out" <<'PY'
import json, os, re, sys, csv, io
root = sys.argv[1]
timing = re.compile(r"(seconds|ns_per_update|_per_second|cpu|wall|^time_|^command$|^version$|^hardware)", re.I)
text_timing = re.compile(r"(seconds| s\b| s,| s\)|ns per update|ns_per_update|wall time|sampling time|time: )")
def clean(x):
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items() if not timing.search(k)}
    if isinstance(x, list):
        return [clean(v) for v in x]
    return x
def clean_json_text(text):
    outl = []
    for line in text.splitlines():
        try:
            outl.append(json.dumps(clean(json.loads(line)), sort_keys=True))
        except Exception:
            if not text_timing.search(line):
                outl.append(line)
    return "\n".join(outl) + "\n"
for dirpath, _, files in os.walk(root):
    for f in files:
        p = os.path.join(dirpath, f)
        if f.endswith(".stderr"):
            os.remove(p); continue
        if f.endswith((".png", ".pdf")):
            os.remove(p); continue
        text = open(p, "rb").read()
        try:
            s = text.decode()
        except UnicodeDecodeError:
            continue
        if f.endswith(".json"):
            try:
                s = json.dumps(clean(json.loads(s)), sort_keys=True, indent=1) + "\n"
            except Exception:
                pass
        elif f.endswith(".stdout"):
            s = clean_json_text(s)
        elif f.endswith(".csv"):
            rows = list(csv.reader(io.StringIO(s)))
            if rows:
                keep = [i for i, h in enumerate(rows[0]) if not timing.search(h)]
                s = "".join(",".join(r[i] for i in keep if i < len(r)) + "\n" for r in rows)
        open(p, "w").write(s)
PY
echo "record-outputs: $(find "$out" -type f | wc -l) files in $out"
