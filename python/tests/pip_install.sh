#!/usr/bin/env bash
# Packaging test of pip's build (ctest: python_pip; pyproject.toml, setup.py). Offline: a fresh virtual environment
# that sees the system's packages (--system-site-packages: numpy and scipy from Debian, setuptools and wheel for the
# build), then `pip install --no-build-isolation --no-index SOURCE` (no package index is contacted), an import from
# another directory with PYTHONPATH unset (the package and both of its libraries must come from the environment),
# a small sample; then `pip wheel` of the same tree, whose wheel must hold the extension and the libraries; and the
# source tree must be as it was (git status), since every build file goes under WORK_DIR/build.
# The CMake build runs DUALGIBBS_PIP_JOBS jobs (default 1 here) through ccache when it is on PATH: a second run of
# this test recompiles nothing. Usage: pip_install.sh SOURCE_DIR WORK_DIR PYTHON
set -euo pipefail
src="$1"; work="$2"; python="$3"
fail() { echo "pip install test FAILED: $*" >&2; exit 1; }
rm -rf "$work"; mkdir -p "$work"
export DUALGIBBS_PIP_BUILD_DIR="$work/build" DUALGIBBS_PIP_JOBS="${DUALGIBBS_PIP_JOBS:-1}"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
unset PYTHONPATH PIP_REQUIRE_VIRTUALENV
pipopts=(--no-build-isolation --no-index --no-cache-dir)
git_status() { git -C "$src" status --porcelain 2>/dev/null || echo "(not a git work tree)"; }
before=$(git_status)
start=$SECONDS

"$python" -m venv --system-site-packages "$work/venv" || fail "python3 -m venv (Debian: python3-venv)"
"$work/venv/bin/pip" install "${pipopts[@]}" "$src" >"$work/pip-install.log" 2>&1 ||
  fail "pip install (see $work/pip-install.log)"
echo "pip install: $((SECONDS - start)) s"
cd "$work"
"$work/venv/bin/python" - "$work/venv" <<'PY' || fail "import from the virtual environment"
import os, sys
venv = os.path.realpath(sys.argv[1])
import dualgibbs
assert os.path.realpath(dualgibbs.__file__).startswith(venv), dualgibbs.__file__
maps = open("/proc/self/maps").read().split()
libs = {os.path.realpath(p) for p in maps if "libdualgibbs" in p}
assert len({os.path.basename(p) for p in libs}) == 2 and all(p.startswith(venv) for p in libs), libs
m = dualgibbs.Model("torus:10", 1.0, 0.1)
x = dualgibbs.sample(m, chains=4)
assert x.shape == (4, 100), x.shape
print("installed:", os.path.dirname(dualgibbs.__file__), "version", dualgibbs.__version__, "sample", x.shape)
PY

"$work/venv/bin/pip" wheel "${pipopts[@]}" --no-deps -w "$work/wheel" "$src" >"$work/pip-wheel.log" 2>&1 ||
  fail "pip wheel (see $work/pip-wheel.log)"
"$work/venv/bin/python" - "$work/wheel" <<'PY' || fail "the wheel's contents"
import glob, re, sys, zipfile
wheels = glob.glob(sys.argv[1] + "/dualgibbs-*.whl")
assert len(wheels) == 1, wheels
names = zipfile.ZipFile(wheels[0]).namelist()
for pattern in (r"dualgibbs/__init__\.py", r"dualgibbs/_core\..*\.so", r"dualgibbs/libdualgibbs\.so\.\d+",
                r"dualgibbs/libdualgibbs_paper\.so\.\d+"):
    assert any(re.fullmatch(pattern, n) for n in names), (pattern, names)
print("wheel:", wheels[0].rsplit("/", 1)[-1], len(names), "files")
PY

[ "$(git_status)" = "$before" ] || fail "the source tree changed: $(git_status)"
echo "pip install and pip wheel: $((SECONDS - start)) s"
