#!/usr/bin/env bash
# Installs every Debian 12 package that dualgibbs needs to build, test, run its demo and draw its plots.
# Idempotent and non-interactive; run as root. Nothing else in the project relies on hand-installed packages.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
packages=(
  build-essential cmake g++ pkg-config git
  libeigen3-dev libsuitesparse-dev libspectra-dev libmetis-dev
  libboost-test-dev libboost-random-dev libboost-math-dev
  libcli11-dev nlohmann-json3-dev
  libopenblas0-pthread
  python3 python3-dev python3-matplotlib python3-numpy python3-scipy python3-pytest
  python3-venv python3-pip python3-setuptools python3-wheel
  python3-networkx python3-skimage pybind11-dev python3-pybind11
  libopenmpi-dev openmpi-bin
  doxygen
  clang-14 libclang-rt-14-dev clang-format-14
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "install-deps.sh: missing packages (${missing[*]}); run this script as root" >&2
    exit 1
  fi
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "install-deps.sh: all ${#packages[@]} packages present"
