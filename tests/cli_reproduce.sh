#!/usr/bin/env bash
# `dualgibbs reproduce` and `dualgibbs converge` write what they promise: CSV with the documented columns and
# finite values, a JSON sidecar with the seed, version and parameters, plots when matplotlib is there; bad
# input gives a one-line error and exit 2.
set -u
exe="$1"
fail=0; pass=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass+1)); }
bad() { echo "FAIL: $*"; fail=$((fail+1)); }
py=/usr/bin/python3

# fig10 --quick, no plot: CSV header and finite theory columns, JSON keys.
if "$exe" --quiet reproduce fig10 --quick --no-plot --out "$tmp/a" >"$tmp/out" 2>"$tmp/err"; then ok; else bad "reproduce fig10 exit $?: $(head -c 300 "$tmp/err")"; fi
head -1 "$tmp/a/fig10.csv" | grep -q '^ratio,s,sigma,rate_primal,rate_dual,' && ok || bad "fig10.csv header: $(head -1 "$tmp/a/fig10.csv")"
[ "$(wc -l < "$tmp/a/fig10.csv")" -eq 6 ] && ok || bad "fig10.csv has $(wc -l < "$tmp/a/fig10.csv") lines, expected 6"
for key in '"seed"' '"version"' '"parameters"' '"timings_seconds"' '"rates"' '"threads"'; do
  grep -q "$key" "$tmp/a/fig10.json" && ok || bad "fig10.json lacks $key"
done
grep -q "predicted vs fitted" "$tmp/out" && ok || bad "no rate table printed"
[ ! -e "$tmp/a/fig10.png" ] && ok || bad "--no-plot drew a plot"
ls "$tmp/a" | grep -q tmp && bad "temporary files left behind" || ok

# fig6 --quick with plots (if matplotlib is present): every value of the CSV finite.
"$exe" --quiet reproduce fig6 --quick --out "$tmp/b" >"$tmp/out" 2>"$tmp/err" && ok || bad "reproduce fig6 exit: $(head -c 300 "$tmp/err")"
head -1 "$tmp/b/fig6.csv" | grep -q '^sweep,Eb_primal,Eu_primal,Eb_dual,Eu_dual,time_primal,time_dual' && ok || bad "fig6.csv header"
if grep -qiE 'nan|inf' "$tmp/b/fig6.csv"; then bad "fig6.csv has non-finite values"; else ok; fi
if [ -x "$py" ] && "$py" -c 'import matplotlib' 2>/dev/null; then
  [ -s "$tmp/b/fig6.png" ] && [ -s "$tmp/b/fig6.pdf" ] && ok || bad "fig6.png/pdf missing although matplotlib is present"
else
  grep -qi matplotlib "$tmp/err" && ok || bad "missing matplotlib not reported"
fi

# converge on another graph, JSON on stdout.
"$exe" converge --graph complete:5 --sigma 0.5 --chains 400 --sweeps 10 --json >"$tmp/out" 2>"$tmp/err" && ok || bad "converge exit: $(head -c 300 "$tmp/err")"
grep -q '"fitted_neg_log_rate"' "$tmp/out" && ok || bad "converge --json lacks the rate table"

# Same seed, same files for --threads 1 and 2: fig5's CSVs byte for byte; fig6.csv byte for byte once
# its two wall-clock columns (6 time_primal, 7 time_dual) are cut out.
for n in 1 2; do
  "$exe" --quiet --seed 5 reproduce fig5 --quick --no-plot --threads $n --out "$tmp/t$n" >/dev/null 2>&1 || bad "reproduce fig5 --threads $n"
  "$exe" --quiet --seed 5 reproduce fig6 --quick --no-plot --threads $n --out "$tmp/t$n" >/dev/null 2>&1 || bad "reproduce fig6 --threads $n"
done
for f in fig5.csv fig5_matrices.csv; do cmp -s "$tmp/t1/$f" "$tmp/t2/$f" && ok || bad "$f differs between --threads 1 and 2"; done
head -1 "$tmp/t1/fig6.csv" | cut -d, -f6,7 | grep -qx 'time_primal,time_dual' && ok || bad "fig6.csv: columns 6, 7 are not the timings"
if cmp -s <(cut -d, -f1-5,8- "$tmp/t1/fig6.csv") <(cut -d, -f1-5,8- "$tmp/t2/fig6.csv") && [ "$(wc -l < "$tmp/t1/fig6.csv")" -eq 42 ]; then ok
else bad "fig6.csv differs between --threads 1 and 2 (timings excluded)"; fi
grep -q '"used": 2' "$tmp/t2/fig6.json" && ok || bad "fig6.json does not record 2 threads used"

# The figure table: every figure `reproduce --help` lists runs (quick, no plot), and the list is the one of
# the error for an unknown figure.
listed=$("$exe" reproduce --help | sed -n '/^figures:/,$p' | awk 'NR > 1 && $1 != "all" {print $1}')
[ "$(echo $listed)" = "fig5 fig6 fig7 fig8 fig9 fig10 fig11 accuracy rates accel" ] && ok || bad "reproduce --help lists: $(echo $listed)"
for fig in $listed; do
  "$exe" --quiet reproduce "$fig" --quick --no-plot --out "$tmp/list" >/dev/null 2>"$tmp/err" && [ -s "$tmp/list/$fig.csv" ] \
    && ok || bad "reproduce $fig (listed by --help) failed: $(head -c 300 "$tmp/err")"
done
"$exe" reproduce fig12 --out "$tmp/c" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "(known: $(echo $listed | sed 's/ /, /g'))" "$tmp/err" && ok \
  || bad "reproduce fig12 -> exit $rc, stderr: $(head -c 300 "$tmp/err")"

# Bad input.
expect_error() {
  local pattern="$1"; shift
  "$exe" "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ $rc -eq 0 ] || [ $rc -ge 128 ] || ! grep -qiE -- "$pattern" "$tmp/err"; then
    bad "dualgibbs $* -> exit $rc, stderr: $(head -c 300 "$tmp/err")"
  else ok; fi
}
expect_error "unknown experiment 'fig99'" reproduce fig99 --quick --out "$tmp/c"
expect_error "at least 6" reproduce fig6 --quick --chains 2 --out "$tmp/c"
expect_error "--init-scale applies only with --init random" reproduce fig6 --quick --init-scale 2 --out "$tmp/c"
expect_error "--init-scale applies only with --init random" reproduce fig6 --quick --init constant --init-scale 2 --out "$tmp/c"
expect_error "--init-value applies only with --init constant" reproduce fig6 --quick --init-value 3 --out "$tmp/c"
expect_error "constant or random" reproduce fig6 --quick --init given --out "$tmp/c"
expect_error "init" reproduce fig6 --quick --init ones --out "$tmp/c"
expect_error "init_scale = (-2|0)" reproduce fig6 --quick --init random --init-scale -2 --out "$tmp/c"
expect_error "init_value = (nan|inf)" reproduce fig6 --quick --init constant --init-value nan --out "$tmp/c"

# --as-published and --init: the sidecar says which preset and start ran.
"$exe" --quiet reproduce fig8 --quick --as-published --no-plot --out "$tmp/p" >/dev/null 2>"$tmp/err" && ok || bad "reproduce fig8 --as-published: $(head -c 300 "$tmp/err")"
grep -q '"preset": "as-published (torus edges in the authors. networkx order' "$tmp/p/fig8.json" && ok || bad "fig8.json lacks preset as-published"
grep -q '"sigma": "0.3"' "$tmp/p/fig8.json" && ok || bad "fig8 --as-published did not run sigma 0.3"
grep -q '"init_scale": "2"' "$tmp/p/fig8.json" && ok || bad "fig8 --as-published did not start at scale 2"
"$exe" --quiet reproduce fig6 --quick --init random --init-scale 3 --no-plot --out "$tmp/q" >/dev/null 2>"$tmp/err" && ok || bad "reproduce fig6 --init random: $(head -c 300 "$tmp/err")"
grep -q '"preset": "paper-text"' "$tmp/q/fig6.json" && ok || bad "fig6.json lacks preset paper-text"
grep -q '"init": "random"' "$tmp/q/fig6.json" && grep -q '"init_scale": "3"' "$tmp/q/fig6.json" && ok || bad "fig6 --init random --init-scale 3 not recorded"
expect_error "scan" converge --scan sideways
expect_error "at least 6" converge --chains 5
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
