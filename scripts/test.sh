#!/usr/bin/env bash
# Installs what is needed, builds dualgibbs (Release) and runs the default test suite.
# Long statistical and scale runs are labelled "long" and skipped here: run them with
#   ctest --test-dir build -L long
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
build=${DUALGIBBS_BUILD_DIR:-build}
# Everything on, also where the demo (scripts/demo.sh) configured the same build directory with the command alone.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DDUALGIBBS_BUILD_TESTS=ON -DDUALGIBBS_BUILD_BENCH=ON \
  -DDUALGIBBS_BUILD_PYTHON=ON -DDUALGIBBS_BUILD_APPS=ON ${DUALGIBBS_CMAKE_ARGS:-}
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" -LE long --output-on-failure -j "$(nproc)" --timeout 900
