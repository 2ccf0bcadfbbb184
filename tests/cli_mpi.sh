#!/usr/bin/env bash
# The command under mpirun (docs/mpi.md): sample, converge and a quick figure over 1, 2 and 3 ranks
# (3 oversubscribes a 2-core machine) write bit for bit the files of the plain command with the same seed
# (the wall-clock columns of the convergence tables aside); errors end every rank with one message and the exit
# code of the plain command: bad input (2) everywhere, a failure on rank 0 only, an out-of-memory failure on
# rank 1 only (1). `timeout` turns a hang into a failure. Also: ranks bound to one core each give the plain bits.
set -u
exe="$1"; shift
mpiexec=("$@")  # the launcher and its flags
fail=0; pass=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass+1)); }
bad() { echo "FAIL: $*"; fail=$((fail+1)); }
run_np() { local k=$1; shift; timeout 300 "${mpiexec[@]}" -np "$k" "$@"; }
# The convergence tables without their wall-clock columns 6 and 7 (time_primal, time_dual).
untimed() { cut -d, -f1-5,8- "$1"; }

# The plain runs (no launcher: one process, MPI not initialized).
sample_args=(--quiet --graph torus:5x4 --sigma 0.3 --seed 7 sample --domain dual --chains 37 --sweeps 6 --every 2
             --init random --lockstep 2 --threads 2)
"$exe" "${sample_args[@]}" --output "$tmp/plain.csv" 2>"$tmp/err" || bad "plain sample: $(head -c 300 "$tmp/err")"
converge_args=(--quiet --graph ws:24,4,0.3,5 --sigma 0.2 --seed 3 converge --chains 401 --sweeps 12 --every 2
               --init random --no-plot)
"$exe" "${converge_args[@]}" --threads 1 --out "$tmp/plain" >/dev/null 2>"$tmp/err" \
  || bad "plain converge: $(head -c 300 "$tmp/err")"
"$exe" --quiet --seed 5 reproduce fig6 --quick --no-plot --threads 1 --out "$tmp/plain" >/dev/null 2>"$tmp/err" \
  || bad "plain reproduce fig6: $(head -c 300 "$tmp/err")"
# marginals dual-cv: the pilot, the automatic degree and the control variate's precomputation, whose nodes the ranks
# split between them.
marginals_args=(--quiet --graph kregular:1500,8 --seed 2 marginals --method dual-cv --rel-rmse 0.02)
"$exe" "${marginals_args[@]}" --threads 2 --out "$tmp/m-plain.csv" >/dev/null 2>"$tmp/err" \
  || bad "plain marginals: $(head -c 300 "$tmp/err")"
[ "$(wc -l < "$tmp/plain.csv")" -eq 112 ] && ok || bad "plain sample wrote $(wc -l < "$tmp/plain.csv") lines, expected 112"

for k in 1 2 3; do
  threads=$(( k == 2 ? 2 : 1 ))
  run_np $k "$exe" "${sample_args[@]}" --output "$tmp/np$k.csv" >/dev/null 2>"$tmp/err" \
    || bad "sample -np $k exit $?: $(head -c 300 "$tmp/err")"
  cmp -s "$tmp/plain.csv" "$tmp/np$k.csv" && ok || bad "sample -np $k: draws differ from the plain run"
  run_np $k "$exe" "${converge_args[@]}" --threads $threads --out "$tmp/c$k" >/dev/null 2>"$tmp/err" \
    || bad "converge -np $k exit $?: $(head -c 300 "$tmp/err")"
  cmp -s <(untimed "$tmp/plain/converge.csv") <(untimed "$tmp/c$k/converge.csv") && ok \
    || bad "converge -np $k ($threads threads per rank): converge.csv differs from the plain run"
  run_np $k "$exe" --quiet --seed 5 reproduce fig6 --quick --no-plot --threads 1 --out "$tmp/f$k" >/dev/null \
    2>"$tmp/err" || bad "reproduce fig6 -np $k exit $?: $(head -c 300 "$tmp/err")"
  cmp -s <(untimed "$tmp/plain/fig6.csv") <(untimed "$tmp/f$k/fig6.csv") && ok \
    || bad "reproduce fig6 -np $k: fig6.csv differs from the plain run"
  run_np $k "$exe" "${marginals_args[@]}" --threads $threads --out "$tmp/m$k.csv" >/dev/null 2>"$tmp/err" \
    || bad "marginals -np $k exit $?: $(head -c 300 "$tmp/err")"
  cmp -s "$tmp/m-plain.csv" "$tmp/m$k.csv" && ok || bad "marginals dual-cv -np $k: the CSV differs from the plain run"
done
# Every chain's graph cut over the ranks (--distribute graph): the draws of the plain colour-ordered sweep, bitwise,
# on a 3-D lattice (two node colours, six edge colours) and a random 5-regular graph (several), for 1, 2 and 3 ranks,
# in the primal domain, the dual's tallies x~ and the dual's edges y~.
for graph in torus3:9x8x7 kregular:300,5,4; do
  for run in "primal" "dual" "dual --draws y"; do
    # shellcheck disable=SC2206  # the domain and its options, split on purpose
    split_args=(--quiet --graph "$graph" --sigma 0.4 --seed 11 sample --domain $run --scan colored --chains 5
                --sweeps 7 --every 3 --lockstep 2)
    "$exe" "${split_args[@]}" --output "$tmp/split-plain.csv" 2>"$tmp/err" \
      || bad "plain colored sample: $(head -c 300 "$tmp/err")"
    for k in 1 2 3; do
      for cut in ranges metis; do
        run_np $k "$exe" "${split_args[@]}" --distribute graph --partition $cut --output "$tmp/split$k.csv" >/dev/null \
          2>"$tmp/err" || bad "sample --domain $run --distribute graph --partition $cut $graph -np $k exit $?: $(head -c 300 "$tmp/err")"
        cmp -s "$tmp/split-plain.csv" "$tmp/split$k.csv" && ok \
          || bad "sample --domain $run --distribute graph --partition $cut $graph -np $k: draws differ from the plain colored run"
      done
    done
    grep -q '"parts": 3' "$tmp/split3.csv.json" && ok || bad "sample --distribute graph: no parts in the sidecar"
  done
done

# SSOR and Chebyshev-SSOR in colour order over split graphs (one exchange per class and half-sweep; in the dual the
# Chebyshev tally rebuild's exchanges too): the plain colour-ordered run's draws, byte for byte.
for graph in torus3:9x8x7 kregular:300,5,4; do
  for scheme in ssor cheby-ssor; do
    for domain in primal dual; do
      ssor_args=(--quiet --graph "$graph" --sigma 0.4 --seed 12 sample --domain $domain --scheme $scheme --omega 1.2
                 --scan colored --chains 3 --sweeps 5 --every 2 --lockstep 2)
      "$exe" "${ssor_args[@]}" --output "$tmp/ssor-plain.csv" 2>"$tmp/err" \
        || bad "plain colour-ordered $scheme: $(head -c 300 "$tmp/err")"
      for run in "2 ranges" "3 ranges" "3 metis"; do
        set -- $run
        run_np "$1" "$exe" "${ssor_args[@]}" --distribute graph --partition "$2" --output "$tmp/ssor-split.csv" \
          >/dev/null 2>"$tmp/err" || bad "sample --scheme $scheme --domain $domain --distribute graph -np $1 ($2) exit $?: $(head -c 300 "$tmp/err")"
        cmp -s "$tmp/ssor-plain.csv" "$tmp/ssor-split.csv" && ok \
          || bad "sample --scheme $scheme --domain $domain $graph --distribute graph -np $1 ($2): draws differ"
      done
    done
  done
done

# converge with every chain's graph cut over the ranks: each rank scores all chains, so converge.csv is the plain
# colour-ordered run's (the timed columns aside), for Gibbs and Chebyshev-SSOR in colour order, with both cuts.
for scheme in gibbs cheby-ssor; do
  split_converge=(--quiet --graph ws:24,4,0.3,5 --sigma 0.2 --seed 3 converge --chains 101 --sweeps 6 --every 2
                  --scan colored --scheme $scheme --no-plot)
  "$exe" "${split_converge[@]}" --threads 1 --out "$tmp/sc-plain" >/dev/null 2>"$tmp/err" \
    || bad "plain colored converge: $(head -c 300 "$tmp/err")"
  for run in "2 ranges" "3 metis"; do
    set -- $run
    run_np "$1" "$exe" "${split_converge[@]}" --distribute graph --partition "$2" --out "$tmp/sc$1" >/dev/null \
      2>"$tmp/err" || bad "converge --scheme $scheme --distribute graph -np $1 exit $?: $(head -c 300 "$tmp/err")"
    cmp -s <(untimed "$tmp/sc-plain/converge.csv") <(untimed "$tmp/sc$1/converge.csv") && ok \
      || bad "converge --scheme $scheme --distribute graph -np $1 ($2): converge.csv differs from the plain run"
  done
done

# marginals with every chain's graph cut over the ranks: each rank estimates alone from every chain's states, and the
# stopping rule (the same on every rank) ends all ranks at the same sweep, so the CSV is the one-process run's.
for method in dual-cv primal; do
  split_marginals=(--quiet --graph torus:12 --sigma 0.3 --seed 4 marginals --method $method --rel-rmse 0.05
                   --chains 16 --threads 1 --distribute graph)
  "$exe" "${split_marginals[@]}" --out "$tmp/sm-plain.csv" >/dev/null 2>"$tmp/err" \
    || bad "one-process marginals --distribute graph: $(head -c 300 "$tmp/err")"
  for run in "2 ranges" "3 metis"; do
    set -- $run
    run_np "$1" "$exe" "${split_marginals[@]}" --partition "$2" --out "$tmp/sm$1.csv" >/dev/null 2>"$tmp/err" \
      || bad "marginals --method $method --distribute graph -np $1 exit $?: $(head -c 300 "$tmp/err")"
    cmp -s "$tmp/sm-plain.csv" "$tmp/sm$1.csv" && ok \
      || bad "marginals --method $method --distribute graph -np $1 ($2): the CSV differs from one process's"
  done
done

# A general precision (signed off-diagonal entries: a ring of 40 nodes with chords, diagonally dominant) split the
# same way: the plain colored draws, byte for byte.
{
  echo "%%MatrixMarket matrix coordinate real general"
  echo "40 40 200"
  for i in $(seq 0 39); do
    echo "$((i + 1)) $((i + 1)) 3.25"
    for d in 1 39 7 33; do
      j=$(( (i + d) % 40 )); v=-0.5; [ $(( (i + j) % 3 )) -eq 0 ] && v=0.625
      echo "$((i + 1)) $((j + 1)) $v"
    done
  done
} >"$tmp/general.mtx"
for domain in primal dual; do
  general_args=(--quiet --precision "$tmp/general.mtx" --seed 4 sample --domain $domain --scan colored --chains 3
                --sweeps 5)
  "$exe" "${general_args[@]}" --output "$tmp/g-plain.csv" 2>"$tmp/err" \
    || bad "plain general colored: $(head -c 300 "$tmp/err")"
  for k in 2 3; do
    run_np $k "$exe" "${general_args[@]}" --distribute graph --output "$tmp/g$k.csv" >/dev/null 2>"$tmp/err" \
      || bad "sample --precision --domain $domain --distribute graph -np $k exit $?: $(head -c 300 "$tmp/err")"
    cmp -s "$tmp/g-plain.csv" "$tmp/g$k.csv" && ok || bad "sample --precision --domain $domain --distribute graph -np $k: draws differ"
  done
done

# Each rank bound to one core (Open MPI's default with no more ranks than cores): the exact target's dense solve
# (a 576-node torus: CHOLMOD's BLAS-3 blocks) must not depend on the cores a process may use (it did before the
# solves ran with one BLAS thread: sweep 0's standard errors differed).
bind=()
"${mpiexec[0]}" --version 2>/dev/null | grep -q 'Open MPI' && bind=(--bind-to core:overload-allowed)
target_args=(--quiet --graph torus:24 --sigma 0.1 converge --chains 60 --sweeps 1 --no-plot --threads 1)
"$exe" "${target_args[@]}" --out "$tmp/t-plain" >/dev/null 2>"$tmp/err" || bad "plain torus:24: $(head -c 300 "$tmp/err")"
run_np 2 "${bind[@]}" "$exe" "${target_args[@]}" --out "$tmp/t2" >/dev/null 2>"$tmp/err" \
  || bad "torus:24 -np 2 ${bind[*]} exit $?: $(head -c 300 "$tmp/err")"
cmp -s <(untimed "$tmp/t-plain/converge.csv") <(untimed "$tmp/t2/converge.csv") && ok \
  || bad "converge torus:24 -np 2 ${bind[*]}: converge.csv differs from the plain run"
head -1 "$tmp/plain/fig6.csv" | cut -d, -f6,7 | grep -qx 'time_primal,time_dual' && ok || bad "fig6.csv: columns 6, 7"
head -1 "$tmp/plain/converge.csv" | cut -d, -f6,7 | grep -qx 'time_primal,time_dual' && ok || bad "converge.csv: columns 6, 7"
# Only rank 0 wrote: no stray temporary files next to the outputs.
[ "$(ls "$tmp/c2" | sort | tr '\n' ' ')" = "converge.csv converge.json " ] && ok || bad "converge -np 2 wrote: $(ls "$tmp/c2")"

# messages: the lines the command printed (the launcher adds its own notes about the exit status).
messages() { grep -c '^dualgibbs: ' "$tmp/out"; }
# Bad input on every rank: exit 2, one message.
run_np 2 "$exe" converge --chains 4 >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ] && [ "$(messages)" -eq 1 ] && grep -q 'at least 6 chains' "$tmp/out" && ok \
  || bad "converge --chains 4 -np 2: exit $rc, $(messages) messages: $(head -c 400 "$tmp/out")"
# A failure on rank 0 only (its output file), while rank 1 samples: exit 2, one message.
run_np 2 "$exe" --quiet sample --chains 64 --sweeps 400 --output "$tmp/no/such/dir/x.csv" >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ] && [ "$(messages)" -eq 1 ] && grep -q 'no/such/dir/x.csv' "$tmp/out" && ok \
  || bad "sample to a missing directory -np 2: exit $rc, $(messages) messages: $(head -c 400 "$tmp/out")"
# A failure on rank 1 only: its address space is too small for the chains' states (std::bad_alloc there), rank 0
# samples on: exit 1, one message naming rank 1.
cat >"$tmp/limit1.sh" <<'EOS'
#!/bin/bash
if [ "${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-0}}" = 1 ]; then ulimit -v 800000; fi
exec "$@"
EOS
chmod +x "$tmp/limit1.sh"
run_np 2 "$tmp/limit1.sh" "$exe" --quiet converge --graph torus:30 --chains 150000 --sweeps 3 --threads 1 \
  >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ] && [ "$(messages)" -eq 1 ] && grep -q 'out of memory.*(on rank 1)' "$tmp/out" && ok \
  || bad "out of memory on rank 1 only: exit $rc, $(messages) messages: $(head -c 400 "$tmp/out")"
# --distribute graph with another scan: exit 2, one message.
run_np 2 "$exe" sample --domain dual --scan random --distribute graph -o "$tmp/x.csv" >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ] && [ "$(messages)" -eq 1 ] && grep -q 'add --scan colored' "$tmp/out" && ok \
  || bad "sample --distribute graph --scan random -np 2: exit $rc: $(head -c 400 "$tmp/out")"
# marginals --seconds would stop the ranks at different sweeps: refused under mpirun.
run_np 2 "$exe" marginals --graph torus:4 --method dual --seconds 1 >"$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ] && [ "$(messages)" -eq 1 ] && grep -q 'not available under mpirun' "$tmp/out" && ok \
  || bad "marginals --seconds -np 2: exit $rc: $(head -c 400 "$tmp/out")"

# Ranks that read different files (node-local or stale inputs) are stopped before they share anything: exit 2 and
# one message, whether the models differ in shape (an extra edge) or only in a value (an edge's sigma); no file.
printf '0 1\n1 2\n2 0\n2 3\n' >"$tmp/g0.txt"
printf '0 1\n1 2\n2 0\n2 3\n3 0\n' >"$tmp/g1.txt"
printf '0 1\n1 2\n2 0\n2 3\n' >"$tmp/h0.txt"
printf '0 1\n1 2\n2 0\n2 3 0.3\n' >"$tmp/h1.txt"
cat >"$tmp/per_rank.sh" <<'EOS'
#!/bin/bash
exe=$1; prefix=$2; shift 2
exec "$exe" --graph "file:$prefix${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-0}}.txt" "$@"
EOS
chmod +x "$tmp/per_rank.sh"
for p in g h; do
  run_np 2 "$tmp/per_rank.sh" "$exe" "$tmp/$p" --quiet sample --chains 8 --sweeps 5 -o "$tmp/mix_$p.csv" >"$tmp/out" 2>&1; rc=$?
  [ $rc -eq 2 ] && [ "$(messages)" -eq 1 ] && grep -q 'ranks loaded different models' "$tmp/out" && [ ! -e "$tmp/mix_$p.csv" ] && ok \
    || bad "ranks with different models ($p): exit $rc, $(messages) messages: $(head -c 400 "$tmp/out")"
done

echo "cli_mpi: $pass passed, $fail failed"
[ $fail -eq 0 ]
