#!/usr/bin/env bash
# The plot step never writes through a link planted in the output directory: links at every temporary name a
# predictable scheme (.NAME.tmpPID.EXT) could use for the next few thousand process ids point at a victim file, and
# after `reproduce fig6 --quick` the victim is unchanged and the plots are regular files. And the plotter never
# outlives its run: a plot script still working when the command is ended by SIGTERM is killed with it.
# Usage: plot_links.sh PATH/TO/dualgibbs
set -u
exe=$1
/usr/bin/python3 -c "import matplotlib" 2>/dev/null || { echo "plot_links: matplotlib missing: skipped"; exit 0; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/out"
echo VICTIM > "$tmp/victim.txt"
/usr/bin/python3 - "$tmp/out" <<'PY'
import os, sys
d = sys.argv[1]
p = os.getpid()
for n in range(p, p + 3000):
    for e in ("png", "pdf"):
        os.symlink("../victim.txt", os.path.join(d, f".fig6.tmp{n}.{e}"))
PY
"$exe" --quiet reproduce fig6 --quick --out "$tmp/out" >"$tmp/log" 2>&1 || { echo "FAIL: reproduce exited $?: $(tail -3 "$tmp/log")"; exit 1; }
fail=0
[ "$(cat "$tmp/victim.txt")" = VICTIM ] || { echo "FAIL: the victim file was overwritten"; fail=1; }
for e in png pdf; do
  [ -f "$tmp/out/fig6.$e" ] && [ ! -L "$tmp/out/fig6.$e" ] || { echo "FAIL: fig6.$e is not a regular file"; fail=1; }
done
left=$(find "$tmp/out" -name '.fig6.*' ! -type l | wc -l)
[ "$left" -eq 0 ] || { echo "FAIL: $left temporary files left"; fail=1; }
mkdir "$tmp/slow"
cat >"$tmp/slow.py" <<'PY'
import os, sys, time
open(os.path.join(sys.argv[2], "started"), "w").close()
time.sleep(4)
open(os.path.join(sys.argv[2], "outlived"), "w").close()
PY
DUALGIBBS_PLOT_SCRIPT="$tmp/slow.py" "$exe" --quiet reproduce fig6 --quick --out "$tmp/slow" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 300); do [ -e "$tmp/slow/started" ] && break; sleep 0.1; done
kill -TERM $pid; wait $pid 2>/dev/null
sleep 5
[ -e "$tmp/slow/started" ] || { echo "FAIL: the slow plot script never started"; fail=1; }
[ ! -e "$tmp/slow/outlived" ] || { echo "FAIL: the plotter outlived the command ended by SIGTERM"; fail=1; }
[ $fail -eq 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit $fail
