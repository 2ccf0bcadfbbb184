#!/usr/bin/env bash
# Installs what is needed, builds the library and the dualgibbs command (Release; no tests, benchmarks or Python
# module: scripts/test.sh builds those) and runs the headline demo on its built-in default. The demo writes into
# ./dualgibbs-out (ignored by git). Arguments are passed to the command (e.g. --graph torus:20).
#   bash scripts/demo.sh --configure-only DIR   configures DIR as the demo does and stops (used by the test suite)
set -euo pipefail
cd "$(dirname "$0")/.."
configure() {
  cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=Release -DDUALGIBBS_BUILD_TESTS=OFF -DDUALGIBBS_BUILD_BENCH=OFF \
    -DDUALGIBBS_BUILD_PYTHON=OFF -DDUALGIBBS_BUILD_APPS=ON ${DUALGIBBS_CMAKE_ARGS:-}
}
if [ "${1:-}" = --configure-only ]; then
  configure "$2"
  exit 0
fi
bash scripts/install-deps.sh
configure build
cmake --build build -j "$(nproc)" --target dualgibbs_cli
./build/bin/dualgibbs "$@"
