#!/usr/bin/env bash
# Fails when a C++ source under engine/, tests/ (or later source folders) differs from
# what clang-format makes of it with the committed .clang-format.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
command -v clang-format >/dev/null || { echo "check-format: clang-format is not installed" >&2; exit 1; }
mapfile -t files < <(find engine projections workers bpf scenarios ui tests \
  -type f \( -name '*.cc' -o -name '*.h' \) 2>/dev/null | sort)
bad=0
for f in "${files[@]}"; do
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "check-format: $f is not clang-formatted (run: clang-format -i $f)"
    bad=1
  fi
done
echo "check-format: ${#files[@]} files checked"
exit $bad
