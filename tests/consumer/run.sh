#!/usr/bin/env bash
# Packaging test (ctest: consumer_find_package). Installs the current build to a temporary prefix, then:
#  1. the installed public headers include neither CHOLMOD nor Spectra (both are private dependencies);
#  2. the installed libdualgibbs.so exports only the public interface: every strong symbol it defines is in
#     namespace dualgibbs, and the library's other external symbols (present in the static twin) are hidden;
#  3. tests/consumer configures with find_package(dualgibbs CONFIG) from that prefix, builds and runs (a program on
#     dualgibbs::dualgibbs, one on dualgibbs::paper, the paper's figures, and where the CPU has AVX2 one compiled with
#     -mavx2 that frees the library's Eigen blocks);
#  4. pkg-config --cflags --libs dualgibbs (PKG_CONFIG_PATH = the prefix) compiles and links the same program, and
#     dualgibbs-paper the program on the paper's figures.
# Usage: run.sh CMAKE BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR CXX
set -euo pipefail
cmake_exe="$1"; build="$2"; src="$3"; work="$4"; cxx="$5"
prefix="$work/prefix"
rm -rf "$work"; mkdir -p "$work"
fail() { echo "consumer test FAILED: $*" >&2; exit 1; }

"$cmake_exe" --install "$build" --prefix "$prefix" >"$work/install.log" || fail "cmake --install (see $work/install.log)"
lib=$(find "$prefix" -name 'libdualgibbs.so' | head -n 1)
pc=$(find "$prefix" -name 'dualgibbs.pc' | head -n 1)
[ -n "$lib" ] || fail "no libdualgibbs.so installed under $prefix"
[ -n "$pc" ] || fail "no dualgibbs.pc installed under $prefix"
[ -f "$prefix/include/dualgibbs/export.hpp" ] || fail "the generated export.hpp is not installed"
[ -f "$prefix/include/dualgibbs/version.hpp" ] || fail "the generated version.hpp is not installed"

# 1. Private dependencies stay private.
if grep -rnE '#[[:space:]]*include[[:space:]]*[<"]((suitesparse/)?cholmod|Spectra/)' "$prefix/include"; then
  fail "an installed header includes CHOLMOD or Spectra (lines above)"
fi
echo "headers: no CHOLMOD or Spectra include in $prefix/include"

# 2. Symbols. Strong (T, D, B, R) dynamic symbols must be ours; weak ones (W, V, u) are template and inline
#    instantiations with vague linkage (std::vector<int>::..., and so on), which any C++ library carries.
nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBR]$/ { print $3 }' | sort -u >"$work/exported.txt"
[ -s "$work/exported.txt" ] || fail "libdualgibbs.so exports no symbol"
grep -q '^_ZN9dualgibbs10make_torus' "$work/exported.txt" || fail "dualgibbs::make_torus is not exported"
# Mangled names of namespace dualgibbs: _ZN9dualgibbs / _ZNK9dualgibbs (members), _ZT[ISV]N9dualgibbs (type info, vtables).
foreign=$(grep -vE '^_Z(N|NK|T[ISV]N)9dualgibbs' "$work/exported.txt" || true)
[ -z "$foreign" ] || fail "libdualgibbs.so exports strong symbols outside namespace dualgibbs: $(echo "$foreign" | c++filt | head -n 20)"
if grep -q '12_GLOBAL__N_' "$work/exported.txt"; then fail "an anonymous-namespace symbol is exported"; fi
# Hidden visibility works: the static twin has external symbols that the shared library does not export.
static=$(find "$build" -name 'libdualgibbs_static.a' | head -n 1)
if [ -n "$static" ]; then
  nm --defined-only "$static" 2>/dev/null | awk '$2 ~ /^[TDBR]$/ { print $3 }' | grep -E '^_Z(N|NK)9dualgibbs' | sort -u >"$work/static.txt"
  hidden=$(comm -23 "$work/static.txt" "$work/exported.txt" | wc -l)
  [ "$hidden" -gt 0 ] || fail "every external symbol of the static library is exported: is -fvisibility=hidden in effect?"
  echo "symbols: $(wc -l <"$work/exported.txt") exported, all in namespace dualgibbs; $hidden internal ones hidden"
fi

# 3. find_package consumer.
"$cmake_exe" -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON >"$work/configure.log" 2>&1 \
  || { cat "$work/configure.log"; fail "the consumer does not configure against $prefix"; }
grep -q "dualgibbs .* from $prefix/" "$work/configure.log" || { cat "$work/configure.log"; fail "find_package did not take dualgibbs from $prefix"; }
"$cmake_exe" --build "$work/build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "the consumer does not build"; }
"$work/build/consumer" || fail "the consumer built with find_package does not run correctly"
"$work/build/consumer_paper" || fail "the consumer of dualgibbs::paper built with find_package does not run correctly"
# Code compiled for AVX2 (Eigen's heap alignment then differs from the library's) frees the library's Eigen blocks.
avx2=0
if grep -qw avx2 /proc/cpuinfo 2>/dev/null && [ -x "$work/build/consumer_vectorised" ]; then avx2=1; fi
if [ "$avx2" = 1 ]; then
  "$work/build/consumer_vectorised" || fail "a consumer compiled with -mavx2 does not run with the library's Eigen blocks"
else
  echo "consumer_vectorised: skipped (no AVX2 on this CPU or compiler)"
fi

# 4. pkg-config consumer.
flags=$(PKG_CONFIG_PATH="$(dirname "$pc")" pkg-config --cflags --libs dualgibbs) || fail "pkg-config --cflags --libs dualgibbs"
echo "pkg-config: $flags"
case "$flags" in *"-I$prefix/"*) ;; *) fail "pkg-config --cflags does not point into $prefix" ;; esac
libdir=$(PKG_CONFIG_PATH="$(dirname "$pc")" pkg-config --variable=libdir dualgibbs)
[ -f "$libdir/libdualgibbs.so" ] || fail "pkg-config libdir $libdir does not hold libdualgibbs.so"
# shellcheck disable=SC2086
"$cxx" -std=c++17 -O1 "$src/main.cpp" -o "$work/consumer_pc" $flags -Wl,-rpath,"$libdir" >"$work/pc_build.log" 2>&1 \
  || { cat "$work/pc_build.log"; fail "the consumer does not build with pkg-config flags"; }
"$work/consumer_pc" >/dev/null || fail "the consumer built with pkg-config flags does not run correctly"
if [ "$avx2" = 1 ]; then
  "$cxx" -std=c++17 -O1 -mavx2 -mfma "$src/vectorised.cpp" -o "$work/consumer_vectorised_pc" $flags -Wl,-rpath,"$libdir" \
    >"$work/pc_build.log" 2>&1 || { cat "$work/pc_build.log"; fail "the AVX2 consumer does not build with pkg-config flags"; }
  "$work/consumer_vectorised_pc" >/dev/null || fail "the AVX2 consumer built with pkg-config flags does not run"
fi
flags=$(PKG_CONFIG_PATH="$(dirname "$pc")" pkg-config --cflags --libs dualgibbs-paper) || fail "pkg-config dualgibbs-paper"
# shellcheck disable=SC2086
"$cxx" -std=c++17 -O1 "$src/paper.cpp" -o "$work/consumer_paper_pc" $flags -Wl,-rpath,"$libdir" >"$work/pc_build.log" 2>&1 \
  || { cat "$work/pc_build.log"; fail "the consumer of dualgibbs::paper does not build with pkg-config flags"; }
"$work/consumer_paper_pc" >/dev/null || fail "the consumer of dualgibbs::paper built with pkg-config flags does not run"
echo "consumer test passed"
