#!/usr/bin/env bash
# Builds the real models of make_models.py and checks each against its exact truth with the dualgibbs command:
# `info` (factor width 2, the dual exists), `exact` (CHOLMOD marginal variances), then primal and dual Gibbs draws
# (`sample`) judged by `validate` (alpha = 1e-3 per call: a correct sampler fails a call with probability at most
# 1e-3, six calls). Exit 0 when every check passes.
#   examples/models/check_models.sh DUALGIBBS PYTHON OUT [--quick]
# --quick: the mesh about 100 times coarser (about 1300 vertices), for the test suite.
set -euo pipefail
bin=$1 py=$2 out=$3
quick=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
"$py" "$here/make_models.py" --out "$out" $quick
fail=0
check() {  # check MODEL SWEEPS CHAINS
  local model=$1 sweeps=$2 chains=$3 f="$out/$1.mtx"
  local has_dual
  has_dual=$("$bin" --quiet --precision "$f" info --json --no-spectra |
    "$py" -c "import json, sys; print(json.load(sys.stdin)['precision']['has_dual'])")
  if [ "$has_dual" != "True" ]; then echo "$model: no dual form"; fail=1; return; fi
  "$bin" --quiet --precision "$f" exact --marginals "$out/$model.exact.csv" > /dev/null
  for domain in primal dual; do
    local kind=primal
    [ "$domain" = dual ] && kind=dual-x
    "$bin" --quiet --precision "$f" --seed 5 sample --domain "$domain" --chains "$chains" --sweeps "$sweeps" \
      -o "$out/$model.$domain.bin"
    if "$bin" --quiet --precision "$f" validate --draws "$out/$model.$domain.bin" --domain "$kind" > /dev/null; then
      echo "$model $domain: consistent with the exact truth ($chains chains, $sweeps sweeps)"
    else
      echo "$model $domain: INCONSISTENT with the exact truth"
      fail=1
    fi
  done
}
check us_car 300 4000
check us_car_neg 300 4000
if [ -n "$quick" ]; then check spde_horse 300 2000; else check spde_horse 1500 64; fi
exit $fail
