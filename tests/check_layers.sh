#!/usr/bin/env bash
# The layer rules of docs/design.md section 1, checked on every #include of the libraries and the benchmarks:
#   core/ <- model/ <- sampling/, truth/, estimation/ <- experiments/ <- api/ <- paper/
# (sampling/, truth/ and estimation/ never include one another; truth/ never reaches sampling/; paper/ is the library
# dualgibbs::paper on top of libdualgibbs, which never includes it), the libraries know no command line, and the
# benchmarks use public headers only (and the header-only harness and test support,
# which use public headers only). Prints every violation; exit 1 if any.
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2
allowed() {  # allowed LAYER: the layers a file in LAYER may include
  case $1 in
    core) echo "core" ;;
    model) echo "core model" ;;
    sampling) echo "core model sampling" ;;
    truth) echo "core model truth" ;;
    estimation) echo "core model estimation" ;;
    experiments) echo "core model sampling truth estimation experiments" ;;
    api) echo "core model sampling truth estimation experiments api" ;;
    paper) echo "core model sampling truth estimation experiments api paper" ;;
  esac
}
bad=0
checked=0
for f in $(find include/dualgibbs lib -mindepth 2 -name '*.[ch]pp' | sort); do
  layer=$(echo "$f" | sed -E 's#^(include/dualgibbs|lib)/([a-z]+)/.*#\2#')
  ok=$(allowed "$layer")
  if [ -z "$ok" ]; then echo "$f: not in a known layer folder"; bad=1; continue; fi
  checked=$((checked + 1))
  while IFS= read -r inc; do
    target=$(echo "$inc" | sed -E 's#.*[<"](dualgibbs/)?([a-z]+)/[a-z_]+\.hpp[>"].*#\2#')
    case " $ok " in *" $target "*) ;; *) echo "$f: layer '$layer' includes '$target': $inc"; bad=1 ;; esac
  done < <(grep -E '^#include [<"](dualgibbs/)?(core|model|sampling|truth|estimation|experiments|api|paper)/' "$f")
  if grep -qE '^#include [<"](CLI/|apps/|cli\.hpp|output\.hpp)' "$f"; then
    echo "$f: a library includes command-line code"; bad=1
  fi
done
# Benchmarks: public headers, plus exactly the harness and the support headers shared with the tests (header-only,
# themselves on public headers only); never a private header of lib/.
for f in bench/*.cpp; do
  checked=$((checked + 1))
  if grep -nE '^#include "' "$f" | grep -vE '^[0-9]+:#include "(harness\.hpp|support/[a-z_]+\.hpp)"$'; then
    echo "$f: a benchmark includes a private header (public headers, harness.hpp and support/*.hpp only)"
    bad=1
  fi
done
for f in bench/harness.hpp tests/support/*.hpp; do
  checked=$((checked + 1))
  if grep -nE '^#include "' "$f"; then echo "$f: the bench harness and test support use public headers only"; bad=1; fi
done
stray=$(find lib include/dualgibbs -maxdepth 1 -name '*.[ch]pp' ! -name dualgibbs.hpp)
[ -n "$stray" ] && { echo "files outside the layer folders: $stray"; bad=1; }
echo "check_layers: $checked files checked"
[ "$checked" -gt 40 ] || { echo "check_layers: too few files found under $root"; exit 2; }
exit $bad
