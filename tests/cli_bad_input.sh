#!/usr/bin/env bash
# Every bad input to the dualgibbs command gives a one-line error naming the problem and a non-zero exit.
set -u
exe="$1"
fail=0; pass=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
expect_error() {  # expect_error PATTERN ARGS...: non-zero exit, no crash (exit < 128), stderr matches PATTERN
  local pattern="$1"; shift
  "$exe" "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ $rc -eq 0 ] || [ $rc -ge 128 ] || ! grep -qiE -- "$pattern" "$tmp/err"; then
    echo "FAIL: dualgibbs $* -> exit $rc, stderr: $(head -c 300 "$tmp/err")"; fail=$((fail+1))
  else pass=$((pass+1)); fi
}
expect_ok() {
  "$exe" "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ $rc -ne 0 ]; then echo "FAIL: dualgibbs $* -> exit $rc: $(head -c 300 "$tmp/err")"; fail=$((fail+1)); else pass=$((pass+1)); fi
}
expect_ok info --graph torus:4
expect_error "unknown graph family" info --graph moebius:5
expect_error "sigma" info --graph torus:4 --sigma -1
expect_error "sigma" info --graph torus:4 --sigma nan
expect_error "s " info --graph torus:4 --s inf
printf '0 1\n1 2\n2 0\n0 1\n' > "$tmp/dup.txt"
expect_error "dup.txt:4: duplicate edge" info --graph "file:$tmp/dup.txt"
printf '0 1\n1 1\n' > "$tmp/loop.txt"
expect_error "loop.txt:2: self-loop" info --graph "file:$tmp/loop.txt"
expect_error "overflow|over the limit" info --graph torus:100000
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
