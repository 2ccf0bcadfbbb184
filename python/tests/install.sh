#!/usr/bin/env bash
# Packaging test of the Python package (ctest: python_install). Installs the build to a temporary prefix and imports
# dualgibbs from there with the given interpreter, from another directory and with the build tree out of sight:
# the package must come from PREFIX/PYDIR/dualgibbs and its extension must load PREFIX's libdualgibbs (the relative
# RPATH), then run a small model end to end.
# Usage: install.sh CMAKE BUILD_DIR WORK_DIR PYTHON PYDIR
set -euo pipefail
cmake_exe="$1"; build="$2"; work="$3"; python="$4"; pydir="$5"
prefix="$work/prefix"
rm -rf "$work"; mkdir -p "$work"
fail() { echo "python install test FAILED: $*" >&2; exit 1; }
"$cmake_exe" --install "$build" --prefix "$prefix" >"$work/install.log" || fail "cmake --install (see $work/install.log)"
[ -f "$prefix/$pydir/dualgibbs/__init__.py" ] || fail "no $pydir/dualgibbs/__init__.py under $prefix"
cd "$work"
env -u PYTHONPATH PYTHONPATH="$prefix/$pydir" PYTHONDONTWRITEBYTECODE=1 "$python" - "$prefix" <<'PY' || fail "import"
import os, sys
prefix = os.path.realpath(sys.argv[1])
import dualgibbs as dg
assert os.path.realpath(dg.__file__).startswith(prefix), dg.__file__
maps = open("/proc/self/maps").read().split()
libs = {os.path.realpath(p) for p in maps if "libdualgibbs.so" in p}
assert libs and all(p.startswith(prefix) for p in libs), libs
m = dg.Model("torus:5", 1.0, 0.3)
assert dg.sample(m, chains=4, sweeps=3).shape == (4, 25)
assert abs(dg.marginal_variances(m)[0] - dg.torus_marginal_variance(5, 5, 1.0, 0.3)) < 1e-12
print("installed package:", os.path.dirname(dg.__file__), "library:", sorted(libs)[0])
PY
