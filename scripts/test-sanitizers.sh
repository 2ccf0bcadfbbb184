#!/usr/bin/env bash
# Builds the library, the command and the tests with AddressSanitizer + UndefinedBehaviorSanitizer
# (Debug build type, -O1 so that Eigen-heavy statistical tests finish, frame pointers kept) in a separate
# build directory, and runs the default test suite under them. Any sanitizer report fails the run.
# Extra CMake arguments come from $DUALGIBBS_CMAKE_ARGS (.ci/run passes -DDUALGIBBS_WERROR=ON), as in test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${DUALGIBBS_ASAN_BUILD_DIR:-build-asan}
# The Python package is not built here: an ASan-instrumented extension module only loads into an interpreter started
# with libasan preloaded (LD_PRELOAD), which this suite does not do. Its C++ is the library's, which runs here.
# Nor MPI: LeakSanitizer reports Open MPI's own allocations at MPI_Init (version-specific, in libopen-pal, PMIx and
# hwloc), which only a suppression list tied to Open MPI's internals would silence. The chain-group protocol the
# MPI build uses (gathers, error settlement) runs here over in-process members (test_chain_group).
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" -DDUALGIBBS_SANITIZE=ON \
  -DDUALGIBBS_BUILD_BENCH=OFF -DDUALGIBBS_BUILD_PYTHON=OFF -DDUALGIBBS_WITH_MPI=OFF ${DUALGIBBS_CMAKE_ARGS:-}
# Only what the default suite runs (the target dualgibbs_unit_suite): the long tests (tests/test_*_long.cpp, label
# "long") are not built here. One target, so that its parts compile in parallel.
cmake --build "$build" -j "$(nproc)" --target dualgibbs_unit_suite
# allocator_may_return_null: an allocation too large for the machine throws std::bad_alloc as in a normal build
# (ASan would otherwise abort), so the out-of-memory paths are tested as they run for users.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The packaging test builds an unsanitized consumer against the library: it runs in the Release suite only.
ctest --test-dir "$build" -LE 'long|packaging' --output-on-failure -j "$(nproc)" --timeout 1500
