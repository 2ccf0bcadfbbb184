#!/usr/bin/env bash
# Installs what is needed, builds dualgibbs (Release) and runs the headline demo on its built-in default.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)"
./build/bin/dualgibbs "$@"
