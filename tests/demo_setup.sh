#!/usr/bin/env bash
# The newcomer's demo (scripts/demo.sh): its configure builds the library and the command only (no test, benchmark or
# Python target), and a demo run from the source tree leaves git's view of the tracked files as it was (its output
# goes to ./dualgibbs-out, which git ignores).
# Usage: demo_setup.sh SOURCE_DIR PATH/TO/dualgibbs
set -u
src=$1; exe=$2
fail=0; pass=0
ok() { pass=$((pass+1)); }
bad() { echo "FAIL: $1"; fail=$((fail+1)); }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

bash "$src/scripts/demo.sh" --configure-only "$tmp/build" >"$tmp/cfg.log" 2>&1 || bad "demo configure failed: $(tail -5 "$tmp/cfg.log")"
cmake --build "$tmp/build" --target help >"$tmp/targets" 2>&1
grep -q "dualgibbs_cli" "$tmp/targets" && ok || bad "the demo's configure has no command target"
extra=$(grep -oE "\b(test_[a-z_]+|bench_[a-z_]+|dualgibbs_python|consumer[a-z_]*)\b" "$tmp/targets" | sort -u | tr '\n' ' ')
[ -z "$extra" ] && ok || bad "the demo's configure builds targets it does not run: $extra"

if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  before=$(git -C "$src" status --porcelain)
  (cd "$src" && "$exe" --quiet >"$tmp/demo.log" 2>&1) || bad "the demo run failed: $(tail -3 "$tmp/demo.log")"
  after=$(git -C "$src" status --porcelain)
  [ "$before" = "$after" ] && ok || bad "the demo run changed git's view of the tree: $(diff <(echo "$before") <(echo "$after") | head -5)"
  [ -s "$src/dualgibbs-out/demo.csv" ] && ok || bad "the demo wrote no dualgibbs-out/demo.csv"
else
  echo "demo_setup: $src is not a git work tree: the tracked-files check is skipped"
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
