#!/usr/bin/env bash
# Fails (exit 1) if any tracked C++ file differs from what clang-format-14 makes of it with the committed
# .clang-format, and lists those files. Fix with: git ls-files '*.cpp' '*.hpp' | xargs clang-format-14 -i
set -euo pipefail
cd "$(dirname "$0")/.."
fmt=${CLANG_FORMAT:-clang-format-14}
command -v "$fmt" >/dev/null || { echo "check-format.sh: $fmt not found (scripts/install-deps.sh installs it)" >&2; exit 2; }
bad=0
checked=0
while IFS= read -r f; do
  checked=$((checked + 1))
  if ! "$fmt" --style=file "$f" | cmp -s "$f" -; then
    echo "not clang-formatted: $f"
    bad=1
  fi
done < <(git ls-files '*.cpp' '*.hpp')
echo "check-format.sh: $checked files checked"
exit $bad
