#!/usr/bin/env bash
# Builds the real models of make_models.py and checks each against its exact truth with the dualgibbs command:
# `info` (whether the dual exists: factor width 2 for the first three, not for the SPDE alpha = 2 field), `exact`
# (CHOLMOD marginal variances), then Gibbs draws (`sample`, primal and, where the dual exists, dual) judged by
# `validate` (alpha = 1e-3 per call: a correct sampler fails a call with probability at most 1e-3, at most seven
# calls); a model without a dual must have its dual sampler refused. Exit 0 when every check passes.
#   examples/models/check_models.sh DUALGIBBS PYTHON OUT [--quick]
# --quick: the mesh about 100 times coarser (about 1300 vertices), for the test suite.
set -euo pipefail
bin=$1 py=$2 out=$3
quick=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
"$py" "$here/make_models.py" --out "$out" $quick
fail=0
check() {  # check MODEL SWEEPS CHAINS [no-dual]: SWEEPS 0 skips the Gibbs draws
  local model=$1 sweeps=$2 chains=$3 want=True f="$out/$1.mtx"
  [ "${4:-}" = no-dual ] && want=False
  local has_dual domains="primal dual"
  has_dual=$("$bin" --quiet --precision "$f" info --json --no-spectra |
    "$py" -c "import json, sys; print(json.load(sys.stdin)['precision']['has_dual'])")
  if [ "$has_dual" != "$want" ]; then echo "$model: has_dual $has_dual, expected $want"; fail=1; return; fi
  "$bin" --quiet --precision "$f" exact --marginals "$out/$model.exact.csv" > /dev/null
  if [ "$want" = False ]; then
    domains=primal
    if "$bin" --quiet --precision "$f" sample --domain dual --chains 2 --sweeps 1 -o /dev/null 2> "$out/$model.err"; then
      echo "$model: the dual sampler ran on a model without a dual"
      fail=1
    else
      echo "$model: no dual ($(cat "$out/$model.err"))"
    fi
  fi
  if [ "$sweeps" = 0 ]; then
    echo "$model: exact marginal variances only (Gibbs needs more sweeps than this check affords)"
    return
  fi
  for domain in $domains; do
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
# The alpha = 2 field's primal rate is 0.905 per sweep on the coarse mesh, 1 - 2.3e-5 on the full one (info).
if [ -n "$quick" ]; then check spde2_horse 300 2000 no-dual; else check spde2_horse 0 0 no-dual; fi
exit $fail
